// POST /api/v1/test/settlements/run (issue 34): a Test merchant rehearses clearing and its settlement schedule
// as if it were as_of, so a month of settlements takes a minute. Thin: parse, authorize, call.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { simulatorPrincipalOf } from '../../auth.ts';
import type { AppDeps } from '../../deps.ts';
import { workAs, idempotentPost } from '../../idempotency.ts';
import { simulatorResponses } from '../../schemas.ts';
import * as queries from '../../../payouts/queries.ts';
import { rehearseSettlements } from '../../../payouts/settlement-run.ts';

const RunBody = Type.Object(
  {
    as_of: Type.String({
      format: 'date-time',
      description:
        'The instant to run at (RFC 3339). Clearing and every scheduled settlement due by then run as they would have; it may not be before the last as_of (the clock never moves backwards).',
    }),
  },
  { additionalProperties: false },
);

const RunAnswer = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(Type.Ref('Payout'), { description: 'The settlements made by this run, oldest period first.' }),
    has_more: Type.Boolean({ description: 'Always false: every settlement made is listed.' }),
  },
  { title: 'Test settlement run' },
);

export async function testSettlementRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  idempotentPost<{ Body: Static<typeof RunBody> }>(
    app,
    '/api/v1/test/settlements/run',
    {
      operationId: 'runTestSettlements',
      tags: ['Test simulation'],
      summary: 'Rehearse clearing and settlements (Test keys only)',
      description:
        "Runs, for the calling Test key's merchant, payment clearing and the settlement schedule as if it were `as_of`: credits whose clearing time has passed by then become available (and the reserve keeps its part), and each scheduled settlement due by then is made, period by period, each paying out the available balance when it reaches the schedule's minimum. Answers the settlements made. An `as_of` before the previous one is 409 SETTLEMENT_CLOCK_BACKWARDS; Live keys get 403.",
      body: RunBody,
      response: simulatorResponses(RunAnswer, 'The settlements this run made.'),
    },
    async (request) =>
      workAs(simulatorPrincipalOf(request, 'Settlements'), 200, async (tx, principal) => {
        const made = await rehearseSettlements(
          tx,
          deps.providers,
          { merchantId: principal.merchantId, environment: principal.environment },
          new Date(request.body.as_of),
        );
        return {
          object: 'list' as const,
          data: await Promise.all(made.map((payout) => queries.payoutResponse(tx, payout))),
          has_more: false,
        };
      }),
  );
}
