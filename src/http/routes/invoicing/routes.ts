// Invoice lines and revenue lines (SPEC 4.1). Thin: parse, authorize, call.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../../auth.ts';
import type { AppDeps } from '../../deps.ts';
import type { Queryable } from '../../../db/index.ts';
import { idempotentPost, type IdempotentWork } from '../../idempotency.ts';
import { described, errorResponses } from '../../schemas.ts';
import { parseInvoiceLine, toRevenueLineResponse } from '../../../invoicing/model.ts';
import {
  IngestBody,
  IngestResponse,
  InvoiceLinesResponse,
  InvoiceRef,
  RevenueLineList,
  SyncBody,
  SyncResponse,
} from './schemas.ts';
import * as service from '../../../invoicing/service.ts';

const knownFieldsOf = (line: unknown): unknown => {
  const parsed = parseInvoiceLine(line);
  return parsed.ok ? parsed.line : line;
};

/** A batch of lines in the key's transaction: 200 when every line was applied, 207 when some were refused (errors, by index). */
const batchWork = <Result extends { errors: unknown[] }>(
  apply: (tx: Queryable) => Promise<Result>,
): IdempotentWork => ({
  run: async (tx) => {
    const result = await apply(tx);
    return { status: result.errors.length > 0 ? 207 : 200, body: result };
  },
});

export async function invoicingRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  idempotentPost<{ Body: Static<typeof IngestBody> }>(
    app,
    '/api/v1/invoice-lines',
    {
      operationId: 'createInvoiceLines',
      tags: ['Invoice lines'],
      summary: 'Record invoice lines for an invoice_ref',
      description:
        'Upserts lines by code. 200 when every line is stored; 207 when some lines fail (see errors, by index).',
      body: IngestBody,
      response: {
        200: described(IngestResponse, 'Every line stored.'),
        207: described(IngestResponse, 'Some lines stored, the others refused (errors, by index).'),
        ...errorResponses(400, 401, 409, 413, 415, 422, 429),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      // Unknown fields of a good line are ignored (DESIGN §3), so they must not change the Idempotency-Key hash either
      // (the request is hashed as the handler leaves it).
      request.body = { ...request.body, lines: request.body.lines.map((line) => knownFieldsOf(line)) };
      return batchWork((tx) => service.ingestInvoiceLines(tx, principal, request.body));
    },
  );

  app.get<{ Querystring: { invoice_ref: string } }>(
    '/api/v1/invoice-lines',
    {
      schema: {
        operationId: 'listInvoiceLines',
        tags: ['Invoice lines'],
        summary: 'List the lines of an invoice',
        querystring: Type.Object({ invoice_ref: InvoiceRef }),
        response: {
          200: described(InvoiceLinesResponse, "The invoice's lines and their total."),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request) => service.listInvoiceLines(db, principalOf(request), request.query.invoice_ref),
  );

  app.get<{ Querystring: { include_inactive?: boolean } }>(
    '/api/v1/revenue-lines',
    {
      schema: {
        operationId: 'listRevenueLines',
        tags: ['Revenue lines'],
        summary: 'List revenue lines (service codes)',
        querystring: Type.Object({ include_inactive: Type.Optional(Type.Boolean({ default: false })) }),
        response: {
          200: described(RevenueLineList, 'The revenue lines and their counts.'),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request) => {
      const { lines, counts } = await service.listRevenueLines(
        db,
        principalOf(request),
        request.query.include_inactive ?? false,
      );
      return { object: 'list' as const, lines: lines.map(toRevenueLineResponse), counts };
    },
  );

  idempotentPost<{ Body: Static<typeof SyncBody> }>(
    app,
    '/api/v1/revenue-lines',
    {
      operationId: 'syncRevenueLines',
      tags: ['Revenue lines'],
      summary: 'Sync revenue lines (service codes)',
      description:
        'Creates, renames and reactivates the listed codes; with deactivate_missing, deactivates the others. 207 when some lines fail. Honours Idempotency-Key: a retry with the same key and body answers what the first request was answered and applies nothing again; the same key with another body is 422 IDEMPOTENCY_KEY_REUSED.',
      body: SyncBody,
      response: {
        200: described(SyncResponse, 'Every line applied.'),
        207: described(SyncResponse, 'Some lines applied, the others refused (errors, by index).'),
        ...errorResponses(400, 401, 413, 415, 422, 429),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return batchWork((tx) => service.syncRevenueLines(tx, principal, request.body));
    },
  );
}
