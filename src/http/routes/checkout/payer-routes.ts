// Hosted checkout API (SPEC 4.2), used by the payer page. No API key: the unguessable session id is the
// capability. Rate limited per client address and per session.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { assertSessionLiveAllowed } from '../../auth.ts';
import type { AppDeps } from '../../deps.ts';
import { described, errorResponses, explainedPattern } from '../../schemas.ts';
import {
  authorizeAttempt,
  createAttempt,
  getAttemptStatus,
  RESENDS_MAX,
  resendAttempt,
  toAttemptInitiation,
  VERIFICATION_CODE_PATTERN,
} from '../../../checkout/attempts.ts';
import { applyCancel, askBeforeCancel } from '../../../checkout/attempt-cancel.ts';
import { createCashSlip, toSlipResponse } from '../../../checkout/cash-slips.ts';
import type { Queryable } from '../../../db/index.ts';
import { ID_PARAM_LENGTH_MAX } from '../../../checkout/model.ts';
import {
  attemptBody,
  type AttemptBody,
  AttemptInitiation,
  AttemptStatusResponse,
  CashSlipBody,
  CashSlipResponse,
  CheckoutOptions,
  CheckoutQuote,
  CODE_FIELD_LENGTH_MAX,
  PublicSession,
} from './payer-schemas.ts';
import { getOptions, getPublicSession, getQuote, type PayerContext } from '../../../checkout/payer-view.ts';

const Id = () => Type.String({ minLength: 1, maxLength: ID_PARAM_LENGTH_MAX });
const SessionParams = Type.Object({ reference: Id() });
const AttemptParams = Type.Object({ reference: Id(), attempt_reference: Id() });
type AttemptParams = Static<typeof AttemptParams>;
const tags = ['Hosted checkout'];
/** A Live session of a merchant not activated or suspended takes no new payment (issue 33). */
const LIVE_REFUSED = {
  403: Type.Ref('ErrorEnvelope', {
    description:
      'The Live merchant cannot take payments now: not activated (ACCOUNT_NOT_ACTIVATED) or suspended (ACCOUNT_SUSPENDED).',
  }),
};

export async function checkoutPayerRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const ctx: PayerContext = { db: deps.db, checkoutUrlHost: deps.config.checkoutUrlHost, providers: deps.providers };
  app.addHook('preHandler', deps.limiters.perIp);
  app.addHook('preHandler', deps.limiters.perSession);

  const OptionsQuery = Type.Object({
    livemode: Type.Optional(
      Type.Boolean({
        description: 'Only what is offered in Live (true) or Test (false); without it, every method Sika knows.',
      }),
    ),
  });
  app.get<{ Querystring: Static<typeof OptionsQuery> }>(
    '/api/v1/checkout/options',
    {
      schema: {
        operationId: 'retrieveCheckoutOptions',
        tags,
        summary: 'Payment methods, branch payment methods and banks with branches',
        querystring: OptionsQuery,
        response: { 200: described(CheckoutOptions, 'What a payer can choose from.'), ...errorResponses(400, 429) },
      },
    },
    async (request) =>
      getOptions(
        deps.db,
        request.query.livemode === undefined
          ? undefined
          : { environment: request.query.livemode ? 'live' : 'test', providers: deps.providers },
      ),
  );

  app.get<{ Params: Static<typeof SessionParams> }>(
    '/api/v1/checkout/sessions/:reference',
    {
      schema: {
        operationId: 'retrievePublicSession',
        tags,
        summary: 'The payer view of a session',
        params: SessionParams,
        response: {
          200: described(PublicSession, 'What the payer page shows of the session.'),
          ...errorResponses(404, 429),
        },
      },
    },
    async (request) => (await getPublicSession(ctx, request.params.reference)).view,
  );

  app.get<{ Params: Static<typeof SessionParams> }>(
    '/api/v1/checkout/sessions/:reference/quote',
    {
      schema: {
        operationId: 'retrieveCheckoutQuote',
        tags,
        summary: 'Totals per payment method, with surcharges',
        params: SessionParams,
        response: {
          200: described(CheckoutQuote, 'The total per allowed payment method.'),
          ...errorResponses(404, 409, 429),
        },
      },
    },
    async (request) => getQuote(ctx, request.params.reference),
  );

  app.post<{ Params: Static<typeof SessionParams>; Body: AttemptBody }>(
    '/api/v1/checkout/sessions/:reference/provider-attempts',
    {
      schema: {
        operationId: 'createPaymentAttempt',
        tags,
        summary: 'Start a payment attempt',
        description:
          'amount_minor must be the quoted total for the rail. Public (no API key), so no Idempotency-Key: the session is the scope. The same attempt (rail and payer details) while it is pending is replayed (200, replayed true) and nothing is sent to the provider again.',
        params: SessionParams,
        body: attemptBody(),
        response: {
          200: described(AttemptInitiation, 'The pending attempt with the same details, replayed.'),
          201: described(AttemptInitiation, 'The new attempt and what the payer does next.'),
          ...errorResponses(400, 404, 409, 429, 503),
          ...LIVE_REFUSED,
        },
      },
    },
    async (request, reply) => {
      await assertSessionLiveAllowed(deps.liveAccess, deps.db, request.params.reference);
      const { attempt, replayed } = await createAttempt(ctx, request.params.reference, request.body);
      return reply.code(replayed ? 200 : 201).send(toAttemptInitiation(attempt, replayed));
    },
  );

  app.get<{ Params: AttemptParams; Querystring: { refresh?: boolean | '1' | '0' } }>(
    '/api/v1/checkout/sessions/:reference/provider-attempts/:attempt_reference',
    {
      schema: {
        operationId: 'retrievePaymentAttempt',
        tags,
        summary: 'Status of a payment attempt',
        params: AttemptParams,
        // SPEC 4.2: refresh=1 (query coercion only turns 'true'/'false' into booleans, so '1' and '0' are listed).
        querystring: Type.Object({
          refresh: Type.Optional(
            Type.Union([Type.Boolean(), Type.Literal('1'), Type.Literal('0')], {
              description: '1 (or true) asks the provider before answering',
            }),
          ),
        }),
        response: {
          200: described(AttemptStatusResponse, "The attempt and its session's status."),
          ...errorResponses(404, 409, 429, 503),
        },
      },
    },
    async (request) =>
      getAttemptStatus(
        ctx,
        request.params.reference,
        request.params.attempt_reference,
        request.query.refresh === true || request.query.refresh === '1',
      ),
  );

  app.post<{ Params: AttemptParams; Body: { code: string } }>(
    '/api/v1/checkout/sessions/:reference/provider-attempts/:attempt_reference/authorize',
    {
      schema: {
        operationId: 'authorizePaymentAttempt',
        tags,
        summary: 'Submit the Mobile Money verification code',
        description:
          'Public (no API key), so no Idempotency-Key: a code is passed to the provider only while the attempt waits for one; once a code was accepted a repeat is 409 VERIFICATION_NOT_REQUIRED (ATTEMPT_FINAL once the attempt ended), so a retry never acts twice. Read the attempt for its status.',
        params: AttemptParams,
        body: Type.Object(
          {
            code: Type.String({
              minLength: 1,
              maxLength: CODE_FIELD_LENGTH_MAX,
              pattern: explainedPattern(
                VERIFICATION_CODE_PATTERN.source,
                'must be the 4 to 10 letters or digits of the verification code from your phone',
              ),
              description: "The verification code from the payer's phone: 4 to 10 letters or digits.",
            }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: described(AttemptStatusResponse, 'The attempt after the code was accepted.'),
          ...errorResponses(400, 404, 409, 429, 503),
        },
      },
    },
    async (request) =>
      authorizeAttempt(ctx, request.params.reference, request.params.attempt_reference, request.body.code),
  );

  app.post<{ Params: AttemptParams }>(
    '/api/v1/checkout/sessions/:reference/provider-attempts/:attempt_reference/resend',
    {
      schema: {
        operationId: 'resendPaymentAttempt',
        tags,
        summary: 'Re-send the Mobile Money prompt',
        description: `Public (no API key), so no Idempotency-Key, and deliberately not deduplicated: each call is the payer asking for one more prompt, counted in resends_left (at most ${RESENDS_MAX}, then 409 RESEND_LIMIT_REACHED). A prompt moves no money: a provider whose prompt would be a second charge offers no re-send (409 RESEND_NOT_AVAILABLE).`,
        params: AttemptParams,
        response: {
          200: described(AttemptStatusResponse, 'The attempt, its prompt sent again (resends_left one less).'),
          ...errorResponses(400, 404, 409, 429, 503),
        },
      },
    },
    async (request) => resendAttempt(ctx, request.params.reference, request.params.attempt_reference),
  );

  app.post<{ Params: AttemptParams }>(
    '/api/v1/checkout/sessions/:reference/provider-attempts/:attempt_reference/cancel',
    {
      config: { idempotent: 'public' },
      schema: {
        operationId: 'cancelPaymentAttempt',
        tags,
        summary: 'Cancel a pending attempt to use another number or method',
        description:
          'The payer changes course. The provider is asked first: an attempt it already finished keeps that outcome (paid: the session is paid, nothing is cancelled). Otherwise the attempt is cancelled (status cancelled, failure_reason changed_course) and the session is open again for another number or method. Mobile Money prompts and card pages cannot be withdrawn at the providers, so Sika keeps asking about a cancelled attempt for a day: a success that still arrives is applied, and when another attempt has paid the session meanwhile it is refunded in full automatically (checkout.session.duplicate_payment_refunded). Cancelling an attempt that has already ended changes nothing and answers its status. With an Idempotency-Key (scoped to the session) a retry answers exactly what the first call did.',
        params: AttemptParams,
        response: {
          200: described(
            AttemptStatusResponse,
            'The attempt after the cancel: cancelled, or the outcome it already had.',
          ),
          ...errorResponses(400, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request) => {
      const asked = await askBeforeCancel(ctx, request.params.reference, request.params.attempt_reference);
      request.idempotencyScope = {
        merchantId: asked.attempt.merchant_id,
        environment: asked.attempt.environment,
        prefix: `payer:${asked.attempt.session_id}`,
      };
      return { run: async (tx: Queryable) => ({ status: 200, body: await applyCancel(tx, ctx, asked) }) };
    },
  );

  app.post<{ Body: Static<typeof CashSlipBody> }>(
    '/api/v1/checkout/cash-slips',
    {
      schema: {
        operationId: 'createCashSlip',
        tags,
        summary: 'Create (or replay) the cash deposit slip of a session',
        description:
          'Public (no API key), so no Idempotency-Key: the session is the scope. While the session has an active, unexpired slip, a repeat returns that slip (200, replayed true) and no second payable slip is made.',
        body: CashSlipBody,
        response: {
          200: described(CashSlipResponse, "The session's active slip, replayed."),
          201: described(CashSlipResponse, 'The new slip to take to a branch.'),
          ...errorResponses(400, 404, 409, 429),
          ...LIVE_REFUSED,
        },
      },
    },
    async (request, reply) => {
      await assertSessionLiveAllowed(deps.liveAccess, deps.db, request.body.session_id);
      const { slip, replayed } = await createCashSlip(ctx, request.body);
      return reply.code(replayed ? 200 : 201).send(await toSlipResponse(deps.db, slip, replayed));
    },
  );
}
