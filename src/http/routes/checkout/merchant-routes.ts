// Merchant checkout API (SPEC 4.1): create, read and search sessions. Thin: parse, authorize, call.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { exportSessions, SESSION_CSV_COLUMNS } from '../../../checkout/exports.ts';
import { ExportRangeProperties } from '../books/schemas.ts';
import { ownerOf } from '../../../books/service.ts';
import type { AppDeps } from '../../deps.ts';
import { principalOf } from '../../auth.ts';
import { listRoute } from '../../csv.ts';
import { idempotentPost } from '../../idempotency.ts';
import { described, errorResponses } from '../../schemas.ts';
import { toSessionResponse } from '../../../checkout/model.ts';
import {
  CheckoutSessionResponse,
  CreateSessionBody,
  ListSessionsQuery,
  SessionList,
  SessionParams,
} from './schemas.ts';
import * as service from '../../../checkout/service.ts';
import { getSessionWithPayment, listSessions } from '../../../checkout/session-list.ts';

/** The search, and the range of its CSV export (from and to, Accra days). */
const ListSessionsExportQuery = Type.Object(
  { ...ListSessionsQuery.properties, ...ExportRangeProperties },
  { additionalProperties: false },
);

export async function checkoutMerchantRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db, config } = deps;

  idempotentPost<{ Body: CreateSessionBody }>(
    app,
    '/api/v1/sessions',
    {
      operationId: 'createSession',
      tags: ['Checkout sessions'],
      summary: 'Create a hosted checkout session',
      description:
        'Creates a session for an amount and invoice_ref. Send the payer to checkout_url; confirm the outcome by webhook or GET.',
      body: CreateSessionBody,
      response: {
        201: described(CheckoutSessionResponse, 'The new session (status open, payment null).'),
        ...errorResponses(400, 401, 409, 413, 415, 422, 429),
      },
    },
    // One INSERT, the key's claim with it (one round trip); the app runs it at most once per key.
    async (request) => {
      const { session, insert: effect } = service.prepareSession(principalOf(request), request.body);
      return {
        insert: {
          outcome: { status: 201, body: { ...toSessionResponse(session, config.checkoutUrlHost), payment: null } },
          effect,
        },
      };
    },
  );

  app.get<{ Params: { reference: string } }>(
    '/api/v1/sessions/:reference',
    {
      schema: {
        operationId: 'retrieveSession',
        tags: ['Checkout sessions'],
        summary: 'Retrieve a checkout session',
        description: "The current state of a session of the calling key's merchant and environment; other ids are 404.",
        params: SessionParams,
        response: {
          200: described(CheckoutSessionResponse, 'The session, with its payment once paid.'),
          ...errorResponses(401, 404, 429),
        },
      },
    },
    async (request) =>
      getSessionWithPayment(db, principalOf(request), request.params.reference, config.checkoutUrlHost),
  );

  listRoute(app, '/api/v1/sessions', {
    schema: {
      operationId: 'listSessions',
      tags: ['Checkout sessions'],
      summary: 'Search checkout sessions',
      description:
        "The calling key's merchant and environment only, newest first, each with its payment once paid. Filters: status, invoice_ref, a created range, the rail that paid, the payment link (payment_link_id). Page with limit and starting_after (the last id of the previous page) while has_more is true: a page never skips or repeats a session, whatever is created meanwhile. " +
        'With `Accept: text/csv`: a CSV file of the sessions created on the Africa/Accra days `from` to `to` (both required), oldest first, streamed.',
      querystring: ListSessionsExportQuery,
    },
    list: SessionList,
    exportPath: '/api/v1/exports/sessions',
    // A payment_link_id that is not the key's.
    notFound: true,
    // Issue 17 exports: the same sessions as a CSV file of Accra days (src/checkout/exports.ts).
    json: (request) => listSessions(db, principalOf(request), request.query, config.checkoutUrlHost),
    columns: SESSION_CSV_COLUMNS,
    csv: (request) => exportSessions(db, ownerOf(principalOf(request)), request.query),
  });
}
