// Invoice lines and revenue lines (SPEC 4.1). Thin: parse, authorize, call.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { INVOICE_REF_LENGTH_MAX } from '../checkout/model.ts';
import { principalOf } from '../http/auth.ts';
import type { AppDeps } from '../http/deps.ts';
import type { IdempotentWork } from '../http/idempotency.ts';
import { Currency, DateTime, errorResponses } from '../http/schemas.ts';
import { INVOICE_LINES_PER_REQUEST_MAX, InvoiceLineInput, parseInvoiceLine, REVENUE_LINES_PER_SYNC_MAX, RevenueLineInput, toRevenueLineResponse } from './model.ts';
import * as service from './service.ts';

const knownFieldsOf = (line: unknown): unknown => {
  const parsed = parseInvoiceLine(line);
  return parsed.ok ? parsed.line : line;
};

const InvoiceRef = Type.String({ minLength: 1, maxLength: INVOICE_REF_LENGTH_MAX });
const LineErrors = Type.Array(
  Type.Object({ index: Type.Integer({ description: 'Position of the line in the request.' }), code: Type.String(), message: Type.String() }),
);

/**
 * Lines are checked one by one (SPEC 4.1: 200, or 207 with per-line errors), not by the request's schema: a
 * line of the documented shape, or anything else, which is then reported for its index in errors.
 */
const checkedPerLine = <T extends TSchema>(line: T, what: string) =>
  Type.Union([line, Type.Unknown({ description: `Any other value is accepted here and reported in errors (index, INVALID_ARGUMENT${what}), while the good lines are stored.` })]);

const IngestBody = Type.Object(
  {
    invoice_ref: InvoiceRef,
    currency: Type.Optional(Currency),
    lines: Type.Array(checkedPerLine(InvoiceLineInput, ', or INVOICE_LINE_AMOUNT_INVALID for a bad amount_minor'), {
      minItems: 1,
      maxItems: INVOICE_LINES_PER_REQUEST_MAX,
    }),
  },
  { additionalProperties: false },
);

const IngestResponse = Type.Object({
  object: Type.Literal('invoice.line_items'),
  invoice_ref: Type.String(),
  ingested: Type.Integer(),
  billed_minor: Type.Integer({ description: 'Sum of the lines stored by this request.' }),
  errors: LineErrors,
});

const InvoiceLinesResponse = Type.Object({
  object: Type.Literal('invoice.line_items'),
  invoice_ref: Type.String(),
  lines: Type.Array(
    Type.Object({ code: Type.String(), name: Type.String(), amount_minor: Type.Integer(), currency: Type.String(), remitted: Type.Boolean() }),
  ),
  total_minor: Type.Integer(),
});

const RevenueLine = Type.Object({
  id: Type.String({ format: 'uuid' }),
  merchant_id: Type.String({ format: 'uuid' }),
  code: Type.String(),
  name: Type.String(),
  active: Type.Boolean(),
  source: Type.String(),
  last_synced_at: DateTime,
  created_at: DateTime,
  updated_at: DateTime,
});

const SyncBody = Type.Object(
  {
    lines: Type.Array(checkedPerLine(RevenueLineInput, ''), { maxItems: REVENUE_LINES_PER_SYNC_MAX }),
    deactivate_missing: Type.Optional(Type.Boolean({ default: false, description: 'Deactivate active codes that are not in this list.' })),
  },
  { additionalProperties: false },
);

const SyncResponse = Type.Object({
  object: Type.Literal('revenue_lines.sync'),
  created: Type.Integer(),
  updated: Type.Integer(),
  reactivated: Type.Integer(),
  deactivated: Type.Integer(),
  unchanged: Type.Integer(),
  total: Type.Integer({ description: 'Revenue lines of the merchant and environment after the sync, active and inactive.' }),
  errors: LineErrors,
});

export async function invoicingRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  app.post<{ Body: Static<typeof IngestBody> }>(
    '/api/v1/invoice-lines',
    {
      config: { idempotent: true },
      schema: {
        tags: ['Invoice lines'],
        summary: 'Record invoice lines for an invoice_ref',
        description: 'Upserts lines by code. 200 when every line is stored; 207 when some lines fail (see errors, by index).',
        security: [{ apiKey: [] }],
        body: IngestBody,
        response: { 200: IngestResponse, 207: IngestResponse, ...errorResponses(400, 401, 409, 413, 415, 422, 429) },
      },
    },
    async (request): Promise<IdempotentWork> => {
      const principal = principalOf(request);
      // Unknown fields of a good line are ignored (DESIGN §3), so they must not change the Idempotency-Key hash either
      // (the request is hashed as the handler leaves it).
      request.body = { ...request.body, lines: request.body.lines.map((line) => knownFieldsOf(line)) };
      return {
        run: async (tx) => {
          const result = await service.ingestInvoiceLines(tx, principal, request.body);
          return { status: result.errors.length > 0 ? 207 : 200, body: result };
        },
      };
    },
  );

  app.get<{ Querystring: { invoice_ref: string } }>(
    '/api/v1/invoice-lines',
    {
      schema: {
        tags: ['Invoice lines'],
        summary: 'List the lines of an invoice',
        security: [{ apiKey: [] }],
        querystring: Type.Object({ invoice_ref: InvoiceRef }),
        response: { 200: InvoiceLinesResponse, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => service.listInvoiceLines(db, principalOf(request), request.query.invoice_ref),
  );

  app.get<{ Querystring: { include_inactive?: boolean } }>(
    '/api/v1/revenue-lines',
    {
      schema: {
        tags: ['Revenue lines'],
        summary: 'List revenue lines (service codes)',
        security: [{ apiKey: [] }],
        querystring: Type.Object({ include_inactive: Type.Optional(Type.Boolean({ default: false })) }),
        response: {
          200: Type.Object({
            object: Type.Literal('list'),
            lines: Type.Array(RevenueLine),
            counts: Type.Object({ total: Type.Integer(), active: Type.Integer(), inactive: Type.Integer() }),
          }),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request) => {
      const { lines, counts } = await service.listRevenueLines(db, principalOf(request), request.query.include_inactive ?? false);
      return { object: 'list' as const, lines: lines.map(toRevenueLineResponse), counts };
    },
  );

  app.post<{ Body: Static<typeof SyncBody> }>(
    '/api/v1/revenue-lines',
    {
      schema: {
        tags: ['Revenue lines'],
        summary: 'Sync revenue lines (service codes)',
        description: 'Creates, renames and reactivates the listed codes; with deactivate_missing, deactivates the others. 207 when some lines fail.',
        security: [{ apiKey: [] }],
        body: SyncBody,
        response: { 200: SyncResponse, 207: SyncResponse, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const result = await service.applyRevenueLineSync(db, principal, request.body);
      return reply.code(result.errors.length > 0 ? 207 : 200).send(result);
    },
  );
}
