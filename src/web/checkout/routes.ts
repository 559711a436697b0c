// The hosted payment page (SPEC 1.2, 4.2; DESIGN §3): GET /pay/{session_id}, its printable cash slip,
// its small client script, and the Test-mode outcome buttons' endpoint. Public like the payer API: the
// unguessable session id is the capability, and nothing of another session is ever read.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ID_PARAM_LENGTH_MAX, type AttemptRow } from '../../checkout/model.ts';
import { SIMULATION_OUTCOMES } from '../../http/routes/checkout/payer-schemas.ts';
import { cancelAttempt } from '../../checkout/attempt-cancel.ts';
import { toAttemptInitiation, toAttemptStatus, type AttemptStatusBody } from '../../checkout/attempts.ts';
import { toSlipResponse } from '../../checkout/cash-slips.ts';
import { getOptions, getPublicSession, quoteSession, type PayerContext } from '../../checkout/payer-view.ts';
import * as checkout from '../../checkout/service.ts';
import type { AppDeps } from '../../http/deps.ts';
import type { Rail } from '../../rails/registry.ts';
import { errors, SikaError } from '../../lib/errors.ts';
import { sendError } from '../../http/error-handler.ts';
import { sessionTakesPayments } from '../../http/auth.ts';
import { registerErrorPages } from '../error-pages.ts';
import type { AttemptFacts, Assets, PageModel, Screen } from './page-model.ts';
import { smsReceiptsOffered } from '../../checkout/receipts.ts';
import { problemPages } from './problem-pages.ts';
import { receiptRoutes } from './receipt-routes.ts';
import { renderPayPage, renderSlipPage } from './render.ts';
import { PrecompressedAsset, payerPageSender } from './send.ts';
import { CHECKOUT_CSS } from './styles.ts';

/** Session ids are `cs_` + a time-sortable token; anything else cannot be one and is a 404 without a lookup. */
const SESSION_ID_PATTERN = new RegExp(`^[A-Za-z0-9_-]{1,${ID_PARAM_LENGTH_MAX}}$`);
/** Attempt ids are `att_` + 26 lower-case letters and digits (lib/ids.ts); the shape is all the page checks itself. */
const ATTEMPT_ID_PATTERN = /^att_[0-9a-z]{26}$/;
const UNPAID_FINAL = new Set(['failed', 'cancelled', 'expired', 'reversed']);
const IN_PROGRESS = new Set(['pending', 'manual_review', 'amount_mismatch']);

const Params = Type.Object({ reference: Type.String() });
type Params = Static<typeof Params>;
const ChangeBody = Type.Object({ attempt_reference: Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX }) });
const TestOutcomeBody = Type.Object({
  attempt_reference: Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX }),
  outcome: Type.Union(SIMULATION_OUTCOMES.map((o) => Type.Literal(o))),
});

const wantsJson = (request: FastifyRequest) =>
  String(request.headers['content-type'] ?? '').includes('json') ||
  /^application\/json\b/.test(String(request.headers.accept ?? ''));

/**
 * pay.js as served: without its whole-line `//` comments, its one-line JSDoc comments (the types `npm run
 * typecheck` reads, tsconfig.pay.json) and its indentation; nothing else changes. test/web/pay-script.test.ts
 * checks that the result parses to the same program.
 */
export function servedScript(source: string): string {
  return source
    .replace(/\/\*\*\s[^\n]*?\*\/ ?/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('//'))
    .join('\n');
}

/** The fields of the attempt status response the page draws from, with the seconds since the attempt began. */
function factsOf(status: AttemptStatusBody, now: number): AttemptFacts {
  return {
    resendSupported: status.resend_supported,
    resendsLeft: status.resends_left,
    approveWithinS: status.approve_within_s,
    approvalHelp: status.approval_help,
    elapsedS: Math.max(0, Math.floor((now - Date.parse(status.created_at)) / 1000)),
    failureReason: status.failure_reason,
    failureMessage: status.failure_message,
    providerTransactionId: status.provider_transaction_id,
    card: status.card,
  };
}

export async function payerPageRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const ctx: PayerContext = { db: deps.db, checkoutUrlHost: deps.config.checkoutUrlHost, providers: deps.providers };
  const scriptSource = servedScript(readFileSync(new URL('./pay.js', import.meta.url), 'utf8'));
  const script = new PrecompressedAsset(scriptSource);
  const scriptUrl = `/pay/assets/pay.${createHash('sha256').update(scriptSource).digest('hex').slice(0, 12)}.js`;
  const assets: Assets = { scriptUrl, css: CHECKOUT_CSS };
  const styleHash = createHash('sha256').update(CHECKOUT_CSS).digest('base64');
  const csp = `default-src 'none'; script-src 'self'; style-src 'sha256-${styleHash}'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;
  const limited = [deps.limiters.perIp, deps.limiters.perSession];
  const smsReceipts = smsReceiptsOffered(deps.config);

  const sendHtml = payerPageSender(csp);

  const { problem, notFoundPage, errorPage } = problemPages(sendHtml, assets, {
    heading: 'We could not find this payment',
    text: 'The link may be mistyped or incomplete. Check the link you were given, or go back to the shop and start the payment again.',
  });

  // Pages answer errors with pages; the Test buttons' JSON calls get the API's error envelope.
  registerErrorPages(app, 'payer page', (reply, error, status, request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD' && wantsJson(request)) return sendError(reply, error);
    return errorPage(request, reply, error, status);
  });

  /**
   * Everything the page shows for the session as it is now, or null when there is no such session.
   * returnedFrom: the attempt a provider's hosted page sent the payer back with (?attempt=); it counts only
   * while it is this session's pending attempt, and then the page confirms it (asks with refresh).
   */
  async function loadPage(id: string, returnedFrom: string | null = null): Promise<PageModel | null> {
    if (!SESSION_ID_PATTERN.test(id)) return null;
    let found: Awaited<ReturnType<typeof getPublicSession>>;
    try {
      found = await getPublicSession(ctx, id);
    } catch (error) {
      if (error instanceof SikaError && error.code === 'NOT_FOUND') return null;
      throw error;
    }
    const { session, view } = found;
    const attempts = await checkout.sessionAttempts(deps.db, session.id);
    const lastWhere = (test: (a: AttemptRow) => boolean) => attempts.filter(test).at(-1) ?? null;
    let screen: Screen;
    let attempt: AttemptRow | null = null;
    let lastUnpaid: AttemptRow | null = null;
    switch (view.status) {
      case 'success':
        screen = 'success';
        attempt = lastWhere((a) => a.status === 'paid' || a.status === 'reversed');
        break;
      case 'failed':
        screen = 'failed';
        break;
      case 'expired':
        screen = 'expired';
        break;
      case 'pending':
        attempt = lastWhere((a) => IN_PROGRESS.has(a.status));
        if (attempt?.status !== 'pending') screen = 'review';
        else if (attempt.rail === 'cash') screen = 'cash';
        else screen = 'waiting';
        break;
      default: {
        screen = 'choose';
        const last = attempts.at(-1);
        lastUnpaid = last && UNPAID_FINAL.has(last.status) ? last : null;
      }
    }
    const instructions = attempt ? toAttemptInitiation(attempt, false).instructions : null;
    // The code step: instructions in mode 'verification_code' (momo's say so while a code is required).
    if (screen === 'waiting' && attempt?.verification_required && instructions?.mode === 'verification_code')
      screen = 'code';
    const slipRow = screen === 'cash' && attempt ? await checkout.slipOfAttempt(deps.db, attempt.id) : null;
    if (screen === 'cash' && !slipRow) screen = 'waiting';
    const needsQuotes = screen === 'choose' || screen === 'cash';
    const about = attempt ?? lastUnpaid;
    return {
      session: view,
      test: session.environment === 'test',
      screen,
      quotes: needsQuotes ? await quoteSession(deps.db, session, view.allowed_rails as Rail[]) : {},
      attempt,
      instructions,
      facts: about ? factsOf(await toAttemptStatus(deps.db, about, false), Date.now()) : null,
      returning: screen === 'waiting' && returnedFrom !== null && attempt?.id === returnedFrom,
      lastUnpaid,
      slip: slipRow ? await toSlipResponse(deps.db, slipRow, false) : null,
      banks: slipRow ? (await getOptions(deps.db)).banks : [],
      smsReceipts,
    };
  }

  app.get(scriptUrl, { schema: { hide: true }, preHandler: deps.limiters.perIp }, async (request, reply) => {
    reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff');
    return script.send(request, reply);
  });

  // A provider's hosted page (a Live card) sends the payer back to /pay/{id}?attempt={attempt id}, with
  // its own parameters (Paystack: trxref, reference) that are never read: the result shown is the one the
  // server verifies with the provider. A malformed or repeated attempt parameter is ignored, not an error.
  app.get<{ Params: Params }>(
    '/pay/:reference',
    { schema: { hide: true, params: Params }, preHandler: limited },
    async (request, reply) => {
      const returned = (request.query as Record<string, unknown> | undefined)?.attempt;
      const model = await loadPage(
        request.params.reference,
        typeof returned === 'string' && ATTEMPT_ID_PATTERN.test(returned) ? returned : null,
      );
      if (!model) return notFoundPage(request, reply);
      // A Live merchant not activated or suspended takes no new payment (issue 33): instead of the method
      // choice, the page says so. A payment already under way, or done, is still shown.
      if (
        model.screen === 'choose' &&
        !model.test &&
        !(await sessionTakesPayments(deps.liveAccess, deps.db, model.session.id))
      )
        return problem(
          request,
          reply,
          403,
          'This merchant cannot take payments right now',
          'Nothing was charged. Please contact the merchant, or try again later.',
        );
      return sendHtml(request, reply, renderPayPage(model, assets));
    },
  );

  app.get<{ Params: Params }>(
    '/pay/:reference/slip',
    { schema: { hide: true, params: Params }, preHandler: limited },
    async (request, reply) => {
      const model = await loadPage(request.params.reference);
      if (!model) return notFoundPage(request, reply);
      if (!model.slip) return reply.redirect(`/pay/${encodeURIComponent(model.session.id)}`, 303);
      return sendHtml(request, reply, renderSlipPage(model.session, model.test, model.slip, model.banks, assets));
    },
  );

  // Without JavaScript the payment form cannot start an attempt: its post lands back on the page (which
  // says so), instead of putting a phone number into a query string.
  app.post<{ Params: Params }>(
    '/pay/:reference',
    { schema: { hide: true, params: Params }, preHandler: limited },
    async (request, reply) => reply.redirect(`/pay/${encodeURIComponent(request.params.reference)}`, 303),
  );

  // "Use another number or method" without JavaScript: the same cancel as the payer API's, then the page
  // (the method choice, or the success of an attempt that had already been paid).
  app.post<{ Params: Params; Body: Static<typeof ChangeBody> }>(
    '/pay/:reference/change',
    { schema: { hide: true, params: Params, body: ChangeBody }, preHandler: limited },
    async (request, reply) => {
      const { reference } = request.params;
      if (!SESSION_ID_PATTERN.test(reference) || !ATTEMPT_ID_PATTERN.test(request.body.attempt_reference))
        throw errors.notFound('Payment attempt');
      await cancelAttempt(ctx, reference, request.body.attempt_reference);
      return reply.redirect(`/pay/${encodeURIComponent(reference)}`, 303);
    },
  );

  // Test mode only: the page's outcome buttons, through the same path as the simulate endpoint.
  app.post<{ Params: Params; Body: Static<typeof TestOutcomeBody> }>(
    '/pay/:reference/test-outcome',
    { schema: { hide: true, params: Params, body: TestOutcomeBody }, preHandler: limited },
    async (request, reply) => {
      const { reference } = request.params;
      if (!SESSION_ID_PATTERN.test(reference)) throw errors.notFound('Checkout session');
      const status = await checkout.simulateFromPage(
        deps.db,
        reference,
        request.body.attempt_reference,
        request.body.outcome,
        deps.config.checkoutUrlHost,
      );
      if (wantsJson(request)) return reply.header('cache-control', 'no-store').send(status);
      return reply.redirect(`/pay/${encodeURIComponent(reference)}`, 303);
    },
  );

  // The receipt of a paid session (issue 35): its page, PDF and the forms sending it.
  await receiptRoutes(app, deps, { sendHtml, notFoundPage, assets, limited });
}
