// Payouts API (SPEC 4.3). Thin: parse, authorize, call. Idempotency here is client_reference, not the header.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { exportPayouts, PAYOUT_COLUMNS as PAYOUT_CSV_COLUMNS } from '../books/exports.ts';
import { ownerOf } from '../books/service.ts';
import { principalOf } from '../http/auth.ts';
import { jsonOrCsvResponse, sendCsv, wantsCsv } from '../http/csv.ts';
import type { AppDeps } from '../http/deps.ts';
import { errors } from '../lib/errors.ts';
import { described, errorResponses, fileResponse } from '../http/schemas.ts';
import { createPayout } from './create.ts';
import { addEvidence, receiptPdf } from './evidence.ts';
import type { IdempotentWork } from '../http/idempotency.ts';
import { cancelPayout, simulateTestPayout } from './lifecycle.ts';
import { EVIDENCE_CONTENT_TYPES } from './model.ts';
import { toPayoutResponse, toRecipientResponse } from './presenters.ts';
import * as queries from './queries.ts';
import { capabilities, getBalance, quote } from './quotes.ts';
import { createRecipient, deleteRecipient, getRecipient } from './recipients.ts';
import {
  CancelBody,
  Capabilities,
  EvidenceParams,
  EvidenceUploadBody,
  EvidenceUploaded,
  IdParams,
  ListPayoutsQuery,
  Payout,
  PayoutBalance,
  PayoutBody,
  PayoutList,
  PayoutQuote,
  QuoteBody,
  Recipient,
  RecipientBody,
  RecipientList,
  RecipientParams,
  SimulatePayoutBody,
} from './schemas.ts';

const tags = ['Payouts'];
const security = [{ apiKey: [] }];

export async function payoutRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const payoutDeps = { db, providers: deps.providers, decisions: deps.payoutDecisions, writer: deps.payoutWriter };

  app.get('/api/v1/payouts/capabilities', { schema: { operationId: 'retrievePayoutCapabilities', tags, security, summary: 'Account types, banks, networks and payout settings', response: { 200: described(Capabilities, 'What this key can pay and the payout settings.'), ...errorResponses(401, 429) } } }, async (request) =>
    capabilities(db, principalOf(request), deps.providers),
  );

  app.get(
    '/api/v1/payouts/balance',
    {
      schema: {
        operationId: 'retrievePayoutBalance',
        tags,
        security,
        summary: 'Balance: eligible = available + held',
        response: { 200: described(PayoutBalance, 'The balance of the key\'s merchant and environment.'), ...errorResponses(401, 429) },
      },
    },
    async (request) => getBalance(db, principalOf(request)),
  );

  app.post<{ Body: Static<typeof RecipientBody> }>(
    '/api/v1/payouts/recipients',
    { schema: { operationId: 'createRecipient', tags, security, summary: 'Create a recipient (not idempotent: list before retrying)', body: RecipientBody, response: { 201: described(Recipient, 'The new recipient (Test: verified at once).'), ...errorResponses(400, 401, 404, 409, 429) } } },
    async (request, reply) => reply.code(201).send(toRecipientResponse(await createRecipient(db, principalOf(request), request.body))),
  );

  app.get(
    '/api/v1/payouts/recipients',
    { schema: { operationId: 'listRecipients', tags, security, summary: 'All recipients, inactive included', response: { 200: described(RecipientList, 'Every recipient of the key\'s merchant and environment.'), ...errorResponses(401, 429) } } },
    async (request) => {
      const principal = principalOf(request);
      return { object: 'list' as const, recipients: (await queries.listRecipients(db, principal.merchantId, principal.environment)).map(toRecipientResponse) };
    },
  );

  app.get<{ Params: Static<typeof RecipientParams> }>(
    '/api/v1/payouts/recipients/:recipient_id',
    { schema: { operationId: 'retrieveRecipient', tags, security, summary: 'One recipient', params: RecipientParams, response: { 200: described(Recipient, 'The recipient.'), ...errorResponses(401, 404, 429) } } },
    async (request) => toRecipientResponse(await getRecipient(db, principalOf(request), request.params.recipient_id)),
  );

  app.delete<{ Params: Static<typeof RecipientParams> }>(
    '/api/v1/payouts/recipients/:recipient_id',
    { schema: { operationId: 'deleteRecipient', tags, security, summary: 'Deactivate a recipient', params: RecipientParams, response: { 204: Type.Null({ description: 'Deactivated: no body.' }), ...errorResponses(401, 404, 409, 429) } } },
    async (request, reply) => {
      await deleteRecipient(db, principalOf(request), request.params.recipient_id);
      return reply.code(204).send();
    },
  );

  app.post<{ Body: { recipient_id: string; amount_minor: number } }>(
    '/api/v1/payouts/quote',
    {
      schema: {
        operationId: 'createPayoutQuote',
        tags,
        security,
        summary: 'Fee and total debit for an amount (reserves nothing)',
        body: QuoteBody,
        response: {
          200: described(PayoutQuote, 'The fee and total debit, valid until expires_at.'),
          ...errorResponses(400, 401, 404, 429),
        },
      },
    },
    async (request) => quote(db, principalOf(request), request.body),
  );

  app.post<{ Body: Static<typeof PayoutBody> }>(
    '/api/v1/payouts',
    {
      schema: {
        operationId: 'createPayout',
        tags,
        security,
        summary: 'Create a payout',
        description:
          'Test keys: paid at once (no money sent), unless test_outcome asks for requested or processing (the amount and fee held, then moved on by POST /api/v1/test/payouts/{payout_id}/simulate or cancelled). Live: processing, or requested when the account requires approval. Retries with the same key, client_reference and fields return the payout with 200.',
        body: PayoutBody,
        response: { 200: described(Payout, 'A retry with the same client_reference and fields: the payout made before.'), 201: described(Payout, 'The new payout.'), ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
      },
    },
    async (request, reply) => {
      const { payout, existing, recipient } = await createPayout(payoutDeps, principalOf(request), request.body);
      const known = recipient ? { recipient, evidence: [] } : {};
      return reply.code(existing ? 200 : 201).send(await toPayoutResponse(db, payout, known));
    },
  );

  app.get<{ Querystring: { page?: number; limit?: number; reference?: string; from?: string; to?: string } }>(
    '/api/v1/payouts',
    {
      schema: {
        operationId: 'listPayouts',
        tags,
        security,
        summary: 'List payouts (newest first)',
        querystring: ListPayoutsQuery,
        response: {
          200: jsonOrCsvResponse(
            Type.Ref(PayoutList.$id!),
            'With Accept: text/csv, the payouts created on the Africa/Accra days from..to, oldest first.',
          ),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      if (!wantsCsv(request)) return queries.listPayouts(db, principalOf(request), request.query);
      // Issue 17 exports: the payouts of Accra days as a CSV file (src/books/exports.ts).
      const file = exportPayouts(db, ownerOf(principalOf(request)), request.query);
      return sendCsv(reply, { filename: file.filename, columns: PAYOUT_CSV_COLUMNS, rows: file.rows });
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/api/v1/payouts/:payout_id',
    { schema: { operationId: 'retrievePayout', tags, security, summary: 'One payout', params: IdParams, response: { 200: described(Payout, 'The payout.'), ...errorResponses(401, 404, 429) } } },
    async (request) => toPayoutResponse(db, await queries.getPayout(db, principalOf(request), request.params.payout_id)),
  );

  app.post<{ Params: Static<typeof IdParams>; Body: { reason?: string } | undefined }>(
    '/api/v1/payouts/:payout_id/cancel',
    {
      schema: {
        operationId: 'cancelPayout',
        tags,
        security,
        summary: 'Cancel a payout while can_cancel is true',
        params: IdParams,
        body: CancelBody,
        response: { 200: described(Payout, 'The payout, cancelled (its hold released).'), ...errorResponses(400, 401, 404, 409, 429) },
      },
      // The body is optional (SPEC 4.3): a cancel without one validates as {}.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => toPayoutResponse(db, await cancelPayout(db, principalOf(request), request.params.payout_id, request.body?.reason ?? null)),
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof SimulatePayoutBody> }>(
    '/api/v1/test/payouts/:payout_id/simulate',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'simulateTestPayout',
        tags: ['Test simulation'],
        security,
        summary: 'Move a Test payout on (Test keys only)',
        description:
          'Moves a Test payout through the payout status table with the money and the event a Live payout gets: processing (payout.processing), paid (payout.paid: the hold is paid out), failed (payout.failed: amount and fee back to available), returned (payout.returned: a paid payout\'s amount and fee back to available). A move the table does not allow is 409 PAYOUT_TRANSITION_NOT_ALLOWED; a requested or processing Test payout is cancelled with POST /api/v1/payouts/{payout_id}/cancel. Live keys get 403.',
        params: IdParams,
        body: SimulatePayoutBody,
        response: { 200: described(Payout, 'The payout, moved on.'), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request): Promise<IdempotentWork> => {
      const principal = principalOf(request);
      // Before any lookup: a Live key gets the same answer whatever the id.
      if (principal.environment !== 'test') throw errors.forbidden('Payouts can be simulated with Test keys only.');
      return {
        run: async (tx) => ({ status: 200, body: await toPayoutResponse(tx, await simulateTestPayout(tx, principal, request.params.payout_id, request.body.outcome)) }),
      };
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/api/v1/payouts/:payout_id/receipt',
    { schema: { operationId: 'retrievePayoutReceipt', tags, security, summary: 'Receipt PDF (paid or returned payouts)', params: IdParams, response: { 200: fileResponse('application/pdf', 'The receipt as a PDF'), ...errorResponses(401, 404, 409, 429) } } },
    async (request, reply) => {
      const payout = await queries.getPayout(db, principalOf(request), request.params.payout_id);
      const pdf = await receiptPdf(db, payout);
      return reply.type('application/pdf').header('content-disposition', `inline; filename="receipt-${payout.reference}.pdf"`).send(pdf);
    },
  );

  app.post<{ Params: Static<typeof IdParams> }>(
    '/api/v1/payouts/:payout_id/evidence',
    {
      schema: {
        operationId: 'createPayoutEvidence',
        tags,
        security,
        summary: 'Attach an evidence file (multipart field "file"; PDF, PNG or JPEG by content; at most 5 MB)',
        params: IdParams,
        // Documented only: the multipart parser reads the file (request.uploads), there is no body to validate.
        'x-request-body': { required: true, content: { 'multipart/form-data': { schema: EvidenceUploadBody } } },
        response: { 201: described(EvidenceUploaded, 'The file, attached.'), ...errorResponses(400, 401, 404, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const payout = await queries.getPayout(db, principal, request.params.payout_id);
      const file = request.uploads?.[0];
      if (!file) throw errors.invalidArgument('Send the file as multipart/form-data in a field named "file".');
      return reply.code(201).send(await addEvidence(db, principal, payout, { data: file.data, filename: file.filename || null }, `api_key:${principal.apiKeyPrefix}`));
    },
  );

  app.get<{ Params: { payout_id: string; evidence_id: string } }>(
    '/api/v1/payouts/:payout_id/evidence/:evidence_id',
    {
      schema: {
        operationId: 'retrievePayoutEvidence',
        tags,
        security,
        summary: 'Download an evidence file',
        params: EvidenceParams,
        response: { 200: fileResponse(EVIDENCE_CONTENT_TYPES, 'The file, in its content type'), ...errorResponses(401, 404, 429) },
      },
    },
    async (request, reply) => {
      const payout = await queries.getPayout(db, principalOf(request), request.params.payout_id);
      const evidence = await queries.findEvidence(db, payout.id, request.params.evidence_id);
      if (!evidence) throw errors.notFound('Evidence');
      return reply.type(evidence.content_type).header('content-disposition', `inline; filename="${evidence.id}"`).send(Buffer.from(evidence.data));
    },
  );
}
