// The refunds API: create (idempotent by Idempotency-Key), read, list; and the Test simulator's hook.
// Thin: parse, authorize, call.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf, simulatorPrincipalOf } from '../../auth.ts';
import type { AppDeps } from '../../deps.ts';
import { transactionWork, workAs, idempotentPost } from '../../idempotency.ts';
import { listRoute } from '../../csv.ts';
import { described, errorResponses, simulatorResponses } from '../../schemas.ts';
import { ExportRangeProperties } from '../books/schemas.ts';
import { createRefund, simulateTestRefund } from '../../../refunds/create.ts';
import { toRefundResponse, type TestRefundSimulation } from '../../../refunds/model.ts';
import { getRefund, listRefunds } from '../../../refunds/queries.ts';
import { exportRefunds, REFUND_CSV_COLUMNS } from '../../../refunds/exports.ts';
import {
  CreateRefundBody,
  ListRefundsQuery,
  RefundList,
  RefundParams,
  RefundResponse,
  SimulateRefundBody,
} from './schemas.ts';

export async function refundRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db, providers } = deps;

  idempotentPost<{ Body: CreateRefundBody }>(
    app,
    '/api/v1/refunds',
    {
      operationId: 'createRefund',
      tags: ['Refunds'],
      summary: 'Refund a paid session',
      description:
        "Gives back all or part of what the payer of a success session was charged. The amount is held from your available balance at once (409 INSUFFICIENT_FUNDS when it does not cover it); the fee of the original payment is not returned. Test refunds succeed at once; Live ones go through the provider that took the payment (or, for cash and bank transfers, to Sika's operators, who transfer it to the payer). Events refund.created, refund.succeeded, refund.failed.",
      body: CreateRefundBody,
      response: {
        201: described(
          RefundResponse,
          'The new refund: succeeded at once in Test, pending (or awaiting_approval) in Live.',
        ),
        ...errorResponses(400, 401, 404, 409, 413, 415, 422, 429, 503),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const who = {
        merchantId: principal.merchantId,
        environment: principal.environment,
        apiKeyId: principal.apiKeyId,
        userId: null,
      };
      return transactionWork(201, async (tx) => toRefundResponse(await createRefund(tx, who, request.body, providers)));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/refunds/:id',
    {
      schema: {
        operationId: 'retrieveRefund',
        tags: ['Refunds'],
        summary: 'Retrieve a refund',
        description: "A refund of the calling key's merchant and environment; other ids are 404.",
        params: RefundParams,
        response: { 200: described(RefundResponse, 'The refund.'), ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => toRefundResponse(await getRefund(db, principalOf(request), request.params.id)),
  );

  const ListRefundsExportQuery = Type.Object(
    { ...ListRefundsQuery.properties, ...ExportRangeProperties },
    { additionalProperties: false },
  );
  listRoute(app, '/api/v1/refunds', {
    schema: {
      operationId: 'listRefunds',
      tags: ['Refunds'],
      summary: 'List refunds',
      description:
        "The calling key's merchant and environment only, newest first. Filters: status, session_id, a created range. Page with limit and starting_after (the last id of the previous page) while has_more is true. " +
        'With `Accept: text/csv`: a CSV file of the refunds created on the Africa/Accra days `from` to `to` (both required), oldest first, streamed.',
      querystring: ListRefundsExportQuery,
    },
    list: RefundList,
    exportPath: '/api/v1/exports/refunds',
    json: (request) => listRefunds(db, principalOf(request), request.query),
    columns: REFUND_CSV_COLUMNS,
    csv: (request) => exportRefunds(db, principalOf(request), request.query),
  });

  idempotentPost<{ Params: { id: string }; Body: { outcome: TestRefundSimulation } }>(
    app,
    '/api/v1/test/refunds/:id/simulate',
    {
      operationId: 'simulateRefund',
      tags: ['Test simulation'],
      summary: 'Settle or decide a Test refund (Test keys only)',
      description:
        'A Test refund created with test_outcome "pending" succeeds or fails here, exactly as a provider report would settle a Live one. One created with test_outcome "awaiting_approval" is approved (-> pending, then succeeded or failed here) or cancelled (the hold released, refund.cancelled), as an approver would decide a Live one. Another status is 409 REFUND_NOT_PENDING. Live keys get 403.',
      params: RefundParams,
      body: SimulateRefundBody,
      response: simulatorResponses(RefundResponse, 'The refund, succeeded, failed, pending (approved) or cancelled.'),
    },
    async (request) =>
      workAs(simulatorPrincipalOf(request, 'Refunds'), 200, async (tx, principal) =>
        toRefundResponse(await simulateTestRefund(tx, principal, request.params.id, request.body.outcome)),
      ),
  );
}
