// Settlement schedule API (issue 34, item 2). Thin: parse, authorize, call src/payouts/settlement-schedule.ts.
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { getSchedule, updateScheduleIn } from '../../../payouts/settlement-schedule.ts';
import { principalOf } from '../../auth.ts';
import type { AppDeps } from '../../deps.ts';
import { idempotentPost, workAs } from '../../idempotency.ts';
import { described, errorResponses } from '../../schemas.ts';
import { SettlementSchedule, SettlementScheduleBody } from './settlement-schemas.ts';

const tags = ['Settlements'];

export async function settlementRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  app.get(
    '/api/v1/settlements/schedule',
    {
      schema: {
        operationId: 'retrieveSettlementSchedule',
        tags,
        summary: "The settlement schedule of the key's merchant and environment",
        description: 'Answers the defaults (manual, 10:00, no settlement account) until a schedule is saved.',
        response: {
          200: described(SettlementSchedule, 'The schedule.'),
          ...errorResponses(401, 429),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return getSchedule(db, principal.merchantId, principal.environment);
    },
  );

  idempotentPost<{ Body: Static<typeof SettlementScheduleBody> }>(
    app,
    '/api/v1/settlements/schedule',
    {
      operationId: 'updateSettlementSchedule',
      tags,
      summary: 'Change the settlement schedule (a partial update)',
      description:
        'The fields sent replace theirs; the others keep their value. Saving resumes a schedule paused after a failed settlement. ' +
        'recipient_id must be a verified, active recipient of the merchant (404 for an unknown one, 409 RECIPIENT_NOT_VERIFIED or RECIPIENT_UNAVAILABLE). ' +
        'A new settlement account receives nothing for 24 hours after a change (recipient_active_at), and the owner is e-mailed every change. ' +
        'A Live key may set the first settlement account but not replace it (403: change it in the dashboard, with a second-factor code). ' +
        'Honours Idempotency-Key: a retry with the same key and body answers what the first request was answered; the same key with another body is 422 IDEMPOTENCY_KEY_REUSED.',
      body: SettlementScheduleBody,
      response: {
        200: described(SettlementSchedule, 'The schedule, saved.'),
        ...errorResponses(400, 401, 403, 404, 409, 422, 429),
      },
    },
    async (request) =>
      workAs(principalOf(request), 200, (tx, principal) =>
        updateScheduleIn(
          tx,
          {
            merchantId: principal.merchantId,
            environment: principal.environment,
            actor: { type: 'api_key', id: principal.apiKeyId, email: null },
            channel: 'api',
            baseUrl: deps.config.baseUrl,
          },
          request.body,
        ),
      ),
  );
}
