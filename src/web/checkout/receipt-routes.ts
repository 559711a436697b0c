// The payer's receipt (issue 35): GET /pay/{id}/receipt (HTML) and /pay/{id}/receipt.pdf, and the forms that
// send it by e-mail or SMS. Part of the payer page's plugin (its error pages, headers and rate limits); the
// page's 404 for an unknown session and for one that has not succeeded.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { ID_PARAM_LENGTH_MAX } from '../../checkout/model.ts';
import {
  findReceipt,
  RECEIPT_EMAIL_LENGTH_MAX,
  sendReceipt,
  smsReceiptsOffered,
  type ReceiptChannel,
} from '../../checkout/receipts.ts';
import type { AppDeps } from '../../http/deps.ts';
import { SikaError } from '../../lib/errors.ts';
import type { Assets } from './page-model.ts';
import { renderReceiptPage, type ReceiptNotice } from './receipt-page.ts';
import { receiptPdf } from './receipt-pdf.ts';

const SESSION_ID_PATTERN = new RegExp(`^[A-Za-z0-9_-]{1,${ID_PARAM_LENGTH_MAX}}$`);
const Params = Type.Object({ reference: Type.String() });
type Params = Static<typeof Params>;
/** Optional, so an empty form is the page's message beside the field rather than a bare 400. */
const EmailBody = Type.Object({ email: Type.Optional(Type.String({ maxLength: RECEIPT_EMAIL_LENGTH_MAX * 2 })) });
const SmsBody = Type.Object({ phone: Type.Optional(Type.String({ maxLength: 40 })) });
const Query = Type.Object({ sent: Type.Optional(Type.String({ maxLength: 10 })) });

/** What the payer page's plugin hands in: its page sender, its 404 page, its assets and rate limits. */
export interface PayerPageTools {
  sendHtml(request: FastifyRequest, reply: FastifyReply, body: string, status?: number): FastifyReply;
  notFoundPage(request: FastifyRequest, reply: FastifyReply): FastifyReply;
  assets: Assets;
  limited: preHandlerAsyncHookHandler[];
}

export async function receiptRoutes(app: FastifyInstance, deps: AppDeps, tools: PayerPageTools): Promise<void> {
  const sms = smsReceiptsOffered(deps.config);
  const { sendHtml, notFoundPage, assets, limited } = tools;
  const receiptOf = (id: string) => (SESSION_ID_PATTERN.test(id) ? findReceipt(deps.db, id) : Promise.resolve(null));

  async function page(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    notice: ReceiptNotice | null,
    status = 200,
  ) {
    const receipt = await receiptOf(id);
    if (!receipt) return notFoundPage(request, reply);
    return sendHtml(request, reply, renderReceiptPage(receipt, assets, { sms, notice }), status);
  }

  app.get<{ Params: Params; Querystring: Static<typeof Query> }>(
    '/pay/:reference/receipt',
    { schema: { hide: true, params: Params, querystring: Query }, preHandler: limited },
    async (request, reply) => {
      const sent = request.query.sent;
      const notice: ReceiptNotice | null =
        sent === 'email' || (sent === 'sms' && sms) ? { channel: sent, sent: true } : null;
      return page(request, reply, request.params.reference, notice);
    },
  );

  app.get<{ Params: Params }>(
    '/pay/:reference/receipt.pdf',
    { schema: { hide: true, params: Params }, preHandler: limited },
    async (request, reply) => {
      const receipt = await receiptOf(request.params.reference);
      if (!receipt) return notFoundPage(request, reply);
      return reply
        .type('application/pdf')
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff')
        .header('content-disposition', `attachment; filename="receipt-${receipt.receiptNumber}.pdf"`)
        .send(await receiptPdf(receipt));
    },
  );

  /** Sends the receipt and comes back to its page: with a notice, or with the refusal beside the field (422). */
  async function send(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    channel: ReceiptChannel,
    value: string,
  ) {
    if (!SESSION_ID_PATTERN.test(id)) return notFoundPage(request, reply);
    try {
      await sendReceipt(deps.db, deps.config.checkoutUrlHost, id, channel, value);
    } catch (error) {
      if (error instanceof SikaError && error.code === 'INVALID_ARGUMENT')
        return page(request, reply, id, { channel, error: error.message, value }, 422);
      // Unknown, or not paid yet: the page's 404, as for the receipt itself.
      if (error instanceof SikaError && error.code === 'NOT_FOUND') return notFoundPage(request, reply);
      throw error;
    }
    return reply.redirect(`/pay/${encodeURIComponent(id)}/receipt?sent=${channel}`, 303);
  }

  app.post<{ Params: Params; Body: Static<typeof EmailBody> }>(
    '/pay/:reference/receipt/email',
    { schema: { hide: true, params: Params, body: EmailBody }, preHandler: limited },
    (request, reply) => send(request, reply, request.params.reference, 'email', request.body.email ?? ''),
  );

  if (sms)
    app.post<{ Params: Params; Body: Static<typeof SmsBody> }>(
      '/pay/:reference/receipt/sms',
      { schema: { hide: true, params: Params, body: SmsBody }, preHandler: limited },
      (request, reply) => send(request, reply, request.params.reference, 'sms', request.body.phone ?? ''),
    );
}
