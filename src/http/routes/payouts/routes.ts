// Payouts API (SPEC 4.3). Thin: parse, authorize, call. Every POST honours Idempotency-Key (issue 29, over SPEC
// 4.3 rules 4 and 6); a payout's client_reference rules hold as well, with or without a key.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { exportPayouts, PAYOUT_CSV_COLUMNS } from '../../../payouts/exports.ts';
import { ownerOf } from '../../../books/service.ts';
import { principalOf, simulatorPrincipalOf } from '../../auth.ts';
import { listRoute } from '../../csv.ts';
import type { AppDeps } from '../../deps.ts';
import type { Queryable } from '../../../db/index.ts';
import { errors } from '../../../lib/errors.ts';
import { described, errorResponses, fileResponse, simulatorResponses } from '../../schemas.ts';
import { createPayout } from '../../../payouts/create.ts';
import { addEvidence, receiptPdf } from '../../../payouts/evidence.ts';
import { transactionWork, workAs, idempotentPost } from '../../idempotency.ts';
import { cancelPayoutIn, simulateTestPayout } from '../../../payouts/lifecycle.ts';
import { EVIDENCE_CONTENT_TYPES } from '../../../payouts/model.ts';
import { toRecipientResponse } from '../../../payouts/presenters.ts';
import * as queries from '../../../payouts/queries.ts';
import { capabilities, getBalance, quote } from '../../../payouts/quotes.ts';
import { createRecipientIn, deleteRecipient, getRecipient } from '../../../payouts/recipients.ts';
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

export async function payoutRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const payoutDeps = { db, providers: deps.providers, decisions: deps.payouts.decisions, writer: deps.payouts.writer };

  app.get(
    '/api/v1/payouts/capabilities',
    {
      schema: {
        operationId: 'retrievePayoutCapabilities',
        tags,
        summary: 'Account types, banks, networks and payout settings',
        response: {
          200: described(Capabilities, 'What this key can pay and the payout settings.'),
          ...errorResponses(401, 429),
        },
      },
    },
    async (request) => capabilities(db, principalOf(request), deps.providers),
  );

  app.get(
    '/api/v1/payouts/balance',
    {
      schema: {
        operationId: 'retrievePayoutBalance',
        tags,
        summary: 'Balance: eligible = available + held',
        response: {
          200: described(PayoutBalance, "The balance of the key's merchant and environment."),
          ...errorResponses(401, 429),
        },
      },
    },
    async (request) => getBalance(db, principalOf(request)),
  );

  idempotentPost<{ Body: Static<typeof RecipientBody> }>(
    app,
    '/api/v1/payouts/recipients',
    {
      operationId: 'createRecipient',
      tags,
      summary: 'Create a recipient',
      description:
        'Honours Idempotency-Key: a retry with the same key and body answers the recipient made first (201, Idempotent-Replayed: true) and makes no second one; the same key with another body is 422 IDEMPOTENCY_KEY_REUSED. Without a key every request makes a recipient: list recipients before retrying one.',
      body: RecipientBody,
      response: {
        201: described(Recipient, 'The new recipient (Test: verified at once).'),
        ...errorResponses(400, 401, 404, 409, 422, 429),
      },
    },
    async (request) =>
      workAs(principalOf(request), 201, async (tx, principal) =>
        toRecipientResponse(await createRecipientIn(tx, principal, request.body)),
      ),
  );

  app.get(
    '/api/v1/payouts/recipients',
    {
      schema: {
        operationId: 'listRecipients',
        tags,
        summary: 'All recipients, inactive included',
        response: {
          200: described(RecipientList, "Every recipient of the key's merchant and environment."),
          ...errorResponses(401, 429),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return {
        object: 'list' as const,
        recipients: (await queries.listRecipients(db, principal.merchantId, principal.environment)).map(
          toRecipientResponse,
        ),
      };
    },
  );

  app.get<{ Params: Static<typeof RecipientParams> }>(
    '/api/v1/payouts/recipients/:recipient_id',
    {
      schema: {
        operationId: 'retrieveRecipient',
        tags,
        summary: 'One recipient',
        params: RecipientParams,
        response: { 200: described(Recipient, 'The recipient.'), ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => toRecipientResponse(await getRecipient(db, principalOf(request), request.params.recipient_id)),
  );

  app.delete<{ Params: Static<typeof RecipientParams> }>(
    '/api/v1/payouts/recipients/:recipient_id',
    {
      schema: {
        operationId: 'deleteRecipient',
        tags,
        summary: 'Deactivate a recipient',
        params: RecipientParams,
        response: { 204: Type.Null({ description: 'Deactivated: no body.' }), ...errorResponses(401, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await deleteRecipient(db, principalOf(request), request.params.recipient_id);
      return reply.code(204).send();
    },
  );

  idempotentPost<{ Body: { recipient_id: string; amount_minor: number } }>(
    app,
    '/api/v1/payouts/quote',
    {
      operationId: 'createPayoutQuote',
      tags,
      summary: 'Fee and total debit for an amount (reserves nothing)',
      description:
        'Honours Idempotency-Key: a retry with the same key and body answers the first quote (its quote_id and expires_at); the same key with another body is 422 IDEMPOTENCY_KEY_REUSED.',
      body: QuoteBody,
      response: {
        200: described(PayoutQuote, 'The fee and total debit, valid until expires_at.'),
        ...errorResponses(400, 401, 404, 422, 429),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const answer = async (on: Queryable) => ({ status: 200, body: await quote(on, principal, request.body) });
      return { run: answer, withoutKey: () => answer(db) };
    },
  );

  idempotentPost<{ Body: Static<typeof PayoutBody> }>(
    app,
    '/api/v1/payouts',
    {
      operationId: 'createPayout',
      tags,
      summary: 'Create a payout',
      description:
        'Test keys: paid at once (no money sent), unless test_outcome asks for requested or processing (the amount and fee held, then moved on by POST /api/v1/test/payouts/{payout_id}/simulate or cancelled). Live: processing, or requested when the account requires approval. ' +
        'client_reference, with or without Idempotency-Key: a request by the same API key with the client_reference and fields of a payout already made returns that payout with 200; a changed request, or another key, with that client_reference is 409 REFERENCE_CONFLICT. ' +
        'Idempotency-Key, on top of that: a retry with the same key and body answers exactly what the first request was answered (its status, 201 or 200, and body, with Idempotent-Replayed: true); the same key with another body is 422 IDEMPOTENCY_KEY_REUSED and makes nothing.',
      body: PayoutBody,
      response: {
        200: described(Payout, 'A retry with the same client_reference and fields: the payout made before.'),
        201: described(Payout, 'The new payout.'),
        ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const answer = async (
        { payout, existing, recipient }: Awaited<ReturnType<typeof createPayout>>,
        on: Queryable,
      ) => {
        const known = recipient ? { recipient, evidence: [] } : {};
        return { status: existing ? 200 : 201, body: await queries.payoutResponse(on, payout, known) };
      };
      return {
        // With a key: the same steps in the key's transaction, without the batch writer and the decision cache.
        run: async (tx) =>
          answer(
            await createPayout({ db: tx, inTransaction: true, providers: deps.providers }, principal, request.body),
            tx,
          ),
        // Without one: the fast path (no transaction, the batch writer), as before.
        withoutKey: async () => answer(await createPayout(payoutDeps, principal, request.body), db),
      };
    },
  );

  listRoute(app, '/api/v1/payouts', {
    schema: {
      operationId: 'listPayouts',
      tags,
      summary: 'List payouts (newest first)',
      querystring: ListPayoutsQuery,
    },
    list: PayoutList,
    exportPath: '/api/v1/exports/payouts',
    // Issue 17 exports: the payouts of Accra days as a CSV file (src/payouts/exports.ts).
    json: (request) => queries.listPayouts(db, principalOf(request), request.query),
    columns: PAYOUT_CSV_COLUMNS,
    csv: (request) => exportPayouts(db, ownerOf(principalOf(request)), request.query),
  });

  app.get<{ Params: Static<typeof IdParams> }>(
    '/api/v1/payouts/:payout_id',
    {
      schema: {
        operationId: 'retrievePayout',
        tags,
        summary: 'One payout',
        params: IdParams,
        response: { 200: described(Payout, 'The payout.'), ...errorResponses(401, 404, 429) },
      },
    },
    async (request) =>
      queries.payoutResponse(db, await queries.getPayout(db, principalOf(request), request.params.payout_id)),
  );

  app.post<{ Params: Static<typeof IdParams>; Body: { reason?: string } | undefined }>(
    '/api/v1/payouts/:payout_id/cancel',
    {
      schema: {
        operationId: 'cancelPayout',
        tags,
        summary: 'Cancel a payout while can_cancel is true',
        description:
          'Cancelling a cancelled payout returns it (200). Honours Idempotency-Key: a retry with the same key and body answers what the first request was answered; the same key with another body (or another payout) is 422 IDEMPOTENCY_KEY_REUSED.',
        params: IdParams,
        body: CancelBody,
        response: {
          200: described(Payout, 'The payout, cancelled (its hold released).'),
          ...errorResponses(400, 401, 404, 409, 422, 429),
        },
      },
      config: { idempotent: true },
      // The body is optional (SPEC 4.3): a cancel without one validates as {}.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) =>
      workAs(principalOf(request), 200, async (tx, principal) =>
        queries.payoutResponse(
          tx,
          await cancelPayoutIn(tx, principal, request.params.payout_id, request.body?.reason ?? null),
        ),
      ),
  );

  idempotentPost<{ Params: Static<typeof IdParams>; Body: Static<typeof SimulatePayoutBody> }>(
    app,
    '/api/v1/test/payouts/:payout_id/simulate',
    {
      operationId: 'simulateTestPayout',
      tags: ['Test simulation'],
      summary: 'Move a Test payout on (Test keys only)',
      description:
        "Moves a Test payout through the payout status table with the money and the event a Live payout gets: processing (payout.processing), paid (payout.paid: the hold is paid out), failed (payout.failed: amount and fee back to available), returned (payout.returned: a paid payout's amount and fee back to available). A move the table does not allow is 409 PAYOUT_TRANSITION_NOT_ALLOWED; a requested or processing Test payout is cancelled with POST /api/v1/payouts/{payout_id}/cancel. Live keys get 403.",
      params: IdParams,
      body: SimulatePayoutBody,
      response: simulatorResponses(Payout, 'The payout, moved on.'),
    },
    async (request) =>
      workAs(simulatorPrincipalOf(request, 'Payouts'), 200, async (tx, principal) =>
        queries.payoutResponse(
          tx,
          await simulateTestPayout(tx, principal, request.params.payout_id, request.body.outcome),
        ),
      ),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/api/v1/payouts/:payout_id/receipt',
    {
      schema: {
        operationId: 'retrievePayoutReceipt',
        tags,
        summary: 'Receipt PDF (paid or returned payouts)',
        params: IdParams,
        response: {
          200: fileResponse('application/pdf', 'The receipt as a PDF'),
          ...errorResponses(401, 404, 409, 429),
        },
      },
    },
    async (request, reply) => {
      const payout = await queries.getPayout(db, principalOf(request), request.params.payout_id);
      const pdf = await receiptPdf(db, payout);
      return reply
        .type('application/pdf')
        .header('content-disposition', `inline; filename="receipt-${payout.reference}.pdf"`)
        .send(pdf);
    },
  );

  app.post<{ Params: Static<typeof IdParams> }>(
    '/api/v1/payouts/:payout_id/evidence',
    {
      schema: {
        operationId: 'createPayoutEvidence',
        tags,
        summary: 'Attach an evidence file (multipart field "file"; PDF, PNG or JPEG by content; at most 5 MB)',
        description:
          "Honours Idempotency-Key: a retry with the same key and the same parts (text fields, and each file's name and bytes, compared by digest) answers the evidence attached first and attaches nothing more; the same key with another file is 422 IDEMPOTENCY_KEY_REUSED.",
        params: IdParams,
        // Documented only: the multipart parser reads the file (request.uploads), there is no body to validate.
        'x-request-body': { required: true, content: { 'multipart/form-data': { schema: EvidenceUploadBody } } },
        response: {
          201: described(EvidenceUploaded, 'The file, attached.'),
          ...errorResponses(400, 401, 404, 413, 415, 422, 429),
        },
      },
      config: { idempotent: true },
    },
    async (request) => {
      const principal = principalOf(request);
      // The request first, as a schema would (the document requires the file): a 400 whatever the id, then
      // another merchant's payout is a 404.
      const file = request.uploads?.[0];
      if (!file) throw errors.invalidArgument('Send the file as multipart/form-data in a field named "file".');
      const payout = await queries.getPayout(db, principal, request.params.payout_id);
      const upload = { data: file.data, filename: file.filename || null };
      return transactionWork(201, (tx) =>
        addEvidence(tx, principal, payout, upload, `api_key:${principal.apiKeyPrefix}`),
      );
    },
  );

  app.get<{ Params: { payout_id: string; evidence_id: string } }>(
    '/api/v1/payouts/:payout_id/evidence/:evidence_id',
    {
      schema: {
        operationId: 'retrievePayoutEvidence',
        tags,
        summary: 'Download an evidence file',
        params: EvidenceParams,
        response: {
          200: fileResponse(EVIDENCE_CONTENT_TYPES, 'The file, in its content type'),
          ...errorResponses(401, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const payout = await queries.getPayout(db, principalOf(request), request.params.payout_id);
      const evidence = await queries.findEvidence(db, payout.id, request.params.evidence_id);
      if (!evidence) throw errors.notFound('Evidence');
      return reply
        .type(evidence.content_type)
        .header('content-disposition', `inline; filename="${evidence.id}"`)
        .send(Buffer.from(evidence.data));
    },
  );
}
