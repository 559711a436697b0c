// POST /api/v1/test/payment-attempts/{reference}/simulate: Test keys decide an attempt's outcome.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../../auth.ts';
import type { AppDeps } from '../../deps.ts';
import { workAs, idempotentPost } from '../../idempotency.ts';
import { simulatorResponses } from '../../schemas.ts';
import { ID_PARAM_LENGTH_MAX } from '../../../checkout/model.ts';
import { AttemptStatusResponse, SimulateBody } from './payer-schemas.ts';
import { simulate } from '../../../checkout/simulation.ts';

export async function simulateRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  idempotentPost<{ Params: { reference: string }; Body: Static<typeof SimulateBody> }>(
    app,
    '/api/v1/test/payment-attempts/:reference/simulate',
    {
      operationId: 'simulatePaymentAttempt',
      tags: ['Test simulation'],
      summary: 'Simulate a payment outcome (Test keys only)',
      description:
        'Applies one of the eight outcomes to a Test attempt exactly as a provider report would. Live keys get 403.',
      params: Type.Object({
        reference: Type.String({
          minLength: 1,
          maxLength: ID_PARAM_LENGTH_MAX,
          description: 'The attempt_reference.',
        }),
      }),
      body: SimulateBody,
      response: simulatorResponses(AttemptStatusResponse, "The attempt after the outcome, with its session's status."),
    },
    async (request) =>
      workAs(principalOf(request), 200, (tx, principal) =>
        simulate(tx, principal, request.params.reference, request.body.outcome, deps.config.checkoutUrlHost),
      ),
  );
}
