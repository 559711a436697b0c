// Payouts API (SPEC 4.3). Thin: parse, authorize, call. Idempotency here is client_reference, not the header.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { exportPayouts, PAYOUT_COLUMNS as PAYOUT_CSV_COLUMNS } from '../books/exports.ts';
import { ExportRangeProperties } from '../books/schemas.ts';
import { ownerOf } from '../books/service.ts';
import { principalOf } from '../http/auth.ts';
import { jsonOrCsvResponse, sendCsv, wantsCsv } from '../http/csv.ts';
import type { AppDeps } from '../http/deps.ts';
import { errors } from '../lib/errors.ts';
import { DateTime, errorResponses, fileResponse } from '../http/schemas.ts';
import { createPayout } from './create.ts';
import { addEvidence, receiptPdf } from './evidence.ts';
import { cancelPayout } from './lifecycle.ts';
import {
  ACCOUNT_NAME_LENGTH_MAX,
  CANCEL_REASON_LENGTH_MAX,
  CLIENT_REFERENCE_LENGTH_MAX,
  NOTES_LENGTH_MAX,
  PAYOUT_AMOUNT_MAX_MINOR,
  PAYOUT_CURRENCY,
  PAYOUT_ID_LENGTH_MAX,
  PAYOUT_LIST_LIMIT_MAX,
} from './model.ts';
import { toPayoutResponse, toRecipientResponse } from './presenters.ts';
import * as queries from './queries.ts';
import { capabilities, getBalance, quote } from './quotes.ts';
import { createRecipient, deleteRecipient, getRecipient } from './recipients.ts';

const tags = ['Payouts'];
const security = [{ apiKey: [] }];
// Outer bounds, in characters, on fields the services check in full.
const CHOICE_LENGTH_MAX = 16; // account_type, network, environment
const UUID_FIELD_LENGTH_MAX = 64; // bank_id, merchant_id
const ACCOUNT_NUMBER_FIELD_LENGTH_MAX = 64;
const PHONE_FIELD_LENGTH_MAX = 32;
const CURRENCY_CODE_LENGTH_MAX = 3;

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const Recipient = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('recipient'),
    account_type: Type.String(),
    bank_id: Nullable(Type.String()),
    bank_name: Nullable(Type.String()),
    account_number: Nullable(Type.String()),
    network: Nullable(Type.String()),
    phone: Nullable(Type.String({ description: '+233XXXXXXXXX' })),
    account_name: Type.String(),
    verified: Type.Boolean(),
    verification_status: Type.String(),
    rejection_reason: Type.Optional(Type.String()),
    active: Type.Boolean(),
    previous_version_id: Nullable(Type.String()),
    created_at: DateTime,
  },
  { $id: 'Recipient', title: 'Recipient' },
);

const RecipientBody = Type.Object(
  {
    account_type: Type.Optional(Type.String({ maxLength: CHOICE_LENGTH_MAX, description: 'bank (default) or momo' })),
    bank_id: Type.Optional(Type.String({ maxLength: UUID_FIELD_LENGTH_MAX })),
    account_number: Type.Optional(Type.String({ maxLength: ACCOUNT_NUMBER_FIELD_LENGTH_MAX })),
    account_name: Type.Optional(Type.String({ maxLength: ACCOUNT_NAME_LENGTH_MAX })),
    network: Type.Optional(Type.String({ maxLength: CHOICE_LENGTH_MAX })),
    phone: Type.Optional(Type.String({ maxLength: PHONE_FIELD_LENGTH_MAX })),
    previous_version_id: Type.Optional(Type.String({ maxLength: PAYOUT_ID_LENGTH_MAX })),
    merchant_id: Type.Optional(Type.String({ maxLength: UUID_FIELD_LENGTH_MAX })),
    environment: Type.Optional(Type.String({ maxLength: CHOICE_LENGTH_MAX })),
  },
  { additionalProperties: false },
);

const Payout = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('payout'),
    reference: Type.String(),
    client_reference: Type.String(),
    recipient: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    status: Type.String(),
    status_label: Type.String(),
    amount_minor: Type.Integer(),
    fee_minor: Type.Integer(),
    total_debit_minor: Type.Integer(),
    currency: Type.String(),
    notes: Type.String(),
    bank_reference: Type.String(),
    return_reference: Type.String(),
    reconciliation_status: Type.String(),
    can_cancel: Type.Boolean(),
    failure_reason: Nullable(Type.String()),
    livemode: Type.Boolean(),
    evidence: Type.Array(Type.Object({}, { additionalProperties: true })),
    created_at: DateTime,
    updated_at: DateTime,
    paid_at: Type.Union([DateTime, Type.Null()]),
  },
  { $id: 'Payout', title: 'Payout' },
);

const PayoutBody = Type.Object(
  {
    recipient_id: Type.String({ minLength: 1, maxLength: PAYOUT_ID_LENGTH_MAX }),
    amount_minor: Type.Integer({ minimum: 1, maximum: PAYOUT_AMOUNT_MAX_MINOR }),
    currency: Type.Optional(Type.String({ maxLength: CURRENCY_CODE_LENGTH_MAX, default: PAYOUT_CURRENCY })),
    max_fee_minor: Type.Optional(Type.Integer({ minimum: 0 })),
    client_reference: Type.String({ minLength: 1, maxLength: CLIENT_REFERENCE_LENGTH_MAX, description: 'Your unique reference: retries with the same key and fields return the same payout.' }),
    notes: Type.Optional(Type.String({ maxLength: NOTES_LENGTH_MAX })),
    merchant_id: Type.Optional(Type.String({ maxLength: UUID_FIELD_LENGTH_MAX })),
    environment: Type.Optional(Type.String({ maxLength: CHOICE_LENGTH_MAX })),
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ payout_id: Type.String({ minLength: 1, maxLength: PAYOUT_ID_LENGTH_MAX }) });
const RecipientParams = Type.Object({ recipient_id: Type.String({ minLength: 1, maxLength: PAYOUT_ID_LENGTH_MAX }) });

export async function payoutRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const payoutDeps = { db, providers: deps.providers, decisions: deps.payoutDecisions, writer: deps.payoutWriter };
  app.addSchema(Recipient);
  app.addSchema(Payout);
  const RecipientRef = Type.Ref('Recipient');
  const PayoutRef = Type.Ref('Payout');

  app.get('/api/v1/payouts/capabilities', { schema: { tags, security, summary: 'Account types, banks, networks and payout settings', response: { 200: Type.Object({}, { additionalProperties: true }), ...errorResponses(401, 429) } } }, async (request) =>
    capabilities(db, principalOf(request), deps.providers),
  );

  app.get(
    '/api/v1/payouts/balance',
    {
      schema: {
        tags,
        security,
        summary: 'Balance: eligible = available + held',
        response: { 200: Type.Object({ environment: Type.String(), currency: Type.String(), eligible_minor: Type.Integer(), held_minor: Type.Integer(), available_minor: Type.Integer() }), ...errorResponses(401, 429) },
      },
    },
    async (request) => getBalance(db, principalOf(request)),
  );

  app.post<{ Body: Static<typeof RecipientBody> }>(
    '/api/v1/payouts/recipients',
    { schema: { tags, security, summary: 'Create a recipient (not idempotent: list before retrying)', body: RecipientBody, response: { 201: RecipientRef, ...errorResponses(400, 401, 404, 409, 429) } } },
    async (request, reply) => reply.code(201).send(toRecipientResponse(await createRecipient(db, principalOf(request), request.body))),
  );

  app.get(
    '/api/v1/payouts/recipients',
    { schema: { tags, security, summary: 'All recipients, inactive included', response: { 200: Type.Object({ object: Type.Literal('list'), recipients: Type.Array(RecipientRef) }), ...errorResponses(401, 429) } } },
    async (request) => {
      const principal = principalOf(request);
      return { object: 'list' as const, recipients: (await queries.listRecipients(db, principal.merchantId, principal.environment)).map(toRecipientResponse) };
    },
  );

  app.get<{ Params: Static<typeof RecipientParams> }>(
    '/api/v1/payouts/recipients/:recipient_id',
    { schema: { tags, security, summary: 'One recipient', params: RecipientParams, response: { 200: RecipientRef, ...errorResponses(401, 404, 429) } } },
    async (request) => toRecipientResponse(await getRecipient(db, principalOf(request), request.params.recipient_id)),
  );

  app.delete<{ Params: Static<typeof RecipientParams> }>(
    '/api/v1/payouts/recipients/:recipient_id',
    { schema: { tags, security, summary: 'Deactivate a recipient', params: RecipientParams, response: { 204: Type.Null(), ...errorResponses(401, 404, 409, 429) } } },
    async (request, reply) => {
      await deleteRecipient(db, principalOf(request), request.params.recipient_id);
      return reply.code(204).send();
    },
  );

  app.post<{ Body: { recipient_id: string; amount_minor: number } }>(
    '/api/v1/payouts/quote',
    {
      schema: {
        tags,
        security,
        summary: 'Fee and total debit for an amount (reserves nothing)',
        body: Type.Object({ recipient_id: Type.String({ minLength: 1, maxLength: PAYOUT_ID_LENGTH_MAX }), amount_minor: Type.Integer({ minimum: 1, maximum: PAYOUT_AMOUNT_MAX_MINOR }) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ quote_id: Type.String(), recipient_id: Type.String(), amount_minor: Type.Integer(), fee_minor: Type.Integer(), total_debit_minor: Type.Integer(), currency: Type.String(), expires_at: DateTime }),
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
        tags,
        security,
        summary: 'Create a payout',
        description: 'Test keys: paid at once (no money sent). Live: processing, or requested when the account requires approval. Retries with the same key, client_reference and fields return the payout with 200.',
        body: PayoutBody,
        response: { 200: PayoutRef, 201: PayoutRef, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
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
        tags,
        security,
        summary: 'List payouts (newest first)',
        querystring: Type.Object({
          page: Type.Optional(Type.Integer({ description: 'From 1' })),
          limit: Type.Optional(Type.Integer({ description: `Clamped to 1..${PAYOUT_LIST_LIMIT_MAX}` })),
          reference: Type.Optional(Type.String({ maxLength: CLIENT_REFERENCE_LENGTH_MAX, description: 'Exact client_reference' })),
          ...ExportRangeProperties,
        }),
        response: {
          200: jsonOrCsvResponse(
            Type.Object({ payouts: Type.Array(PayoutRef), page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() }),
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
    { schema: { tags, security, summary: 'One payout', params: IdParams, response: { 200: PayoutRef, ...errorResponses(401, 404, 429) } } },
    async (request) => toPayoutResponse(db, await queries.getPayout(db, principalOf(request), request.params.payout_id)),
  );

  app.post<{ Params: Static<typeof IdParams>; Body: { reason?: string } | undefined }>(
    '/api/v1/payouts/:payout_id/cancel',
    {
      schema: {
        tags,
        security,
        summary: 'Cancel a payout while can_cancel is true',
        params: IdParams,
        body: Type.Object({ reason: Type.Optional(Type.String({ maxLength: CANCEL_REASON_LENGTH_MAX })) }, { additionalProperties: false }),
        response: { 200: PayoutRef, ...errorResponses(400, 401, 404, 409, 429) },
      },
      // The body is optional (SPEC 4.3): a cancel without one validates as {}.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => toPayoutResponse(db, await cancelPayout(db, principalOf(request), request.params.payout_id, request.body?.reason ?? null)),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/api/v1/payouts/:payout_id/receipt',
    { schema: { tags, security, summary: 'Receipt PDF (paid or returned payouts)', params: IdParams, produces: ['application/pdf'], response: { 200: fileResponse('application/pdf', 'The receipt as a PDF'), ...errorResponses(401, 404, 409, 429) } } },
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
        tags,
        security,
        summary: 'Attach an evidence file (multipart field "file"; PDF, PNG or JPEG by content; at most 5 MB)',
        params: IdParams,
        consumes: ['multipart/form-data'],
        response: { 201: Type.Object({}, { additionalProperties: true }), ...errorResponses(400, 401, 404, 413, 415, 429) },
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
        tags,
        security,
        summary: 'Download an evidence file',
        params: Type.Object({ payout_id: Type.String({ maxLength: PAYOUT_ID_LENGTH_MAX }), evidence_id: Type.String({ maxLength: PAYOUT_ID_LENGTH_MAX }) }),
        response: { 200: fileResponse('*/*', 'The file, with the content type it was uploaded with'), ...errorResponses(401, 404, 429) },
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
