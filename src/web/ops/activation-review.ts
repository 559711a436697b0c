// The operator console's Go-Live review (issue 33): the queue of applications under review, oldest
// submission first; each application with every field, its documents viewable inline, the automatic checks
// (formats, the settlement account's name match, Ghana Card PINs or settlement accounts other merchants'
// applications name too) and three decisions. Only compliance operators decide: other operators see the
// queue and the applications read-only, and a decision they post is refused with a 403. An approval needs a
// current code from the operator's authenticator (a stolen session alone cannot open Live). Two operators
// deciding at once: the first wins, the second is told it is already decided (changeActivation's expectedFrom).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  COMPLIANCE_ROLE,
  DECISIONS,
  DECISION_REASON_LENGTH_MAX,
  applicationReview,
  decideApplication,
  documentFile,
  reviewQueue,
  type Decision,
} from '../../accounts/activation-application.ts';
import { CHANGEABLE_FIELDS } from '../../accounts/activation-fields.ts';
import { checkSecondFactor } from '../../accounts/console-accounts.ts';
import type { AppDeps } from '../../http/deps.ts';
import { SikaError } from '../../lib/errors.ts';
import type { WebSession } from '../auth.ts';
import { formValue, pageSender, refusedForm, sessionOf, signedInAccount, type PageOutcome } from '../console.ts';
import { sendDocument } from '../dashboard/activation.ts';
import { actorOf } from './common.ts';
import { changeFieldName, queueView, reviewView } from './activation-review-views.ts';

const CSRF_TOKEN_LENGTH_MAX = 128;
const CODE_FIELD_LENGTH_MAX = 40;
const MerchantParams = Type.Object(
  {
    id: Type.String({ format: 'uuid', maxLength: 36, description: 'an id like 123e4567-e89b-12d3-a456-426614174000' }),
  },
  { additionalProperties: false },
);
const anyQuery = Type.Object({}, { additionalProperties: true });

export const activationReviewSchemas = {
  queue: { querystring: anyQuery },
  application: { params: MerchantParams, querystring: anyQuery },
  decision: {
    params: MerchantParams,
    body: Type.Object(
      {
        _csrf: Type.Optional(Type.String({ maxLength: CSRF_TOKEN_LENGTH_MAX })),
        decision: Type.Unsafe<string>({ type: 'string', enum: [...DECISIONS], examples: ['reject'] }),
        reason: Type.Optional(Type.String({ maxLength: DECISION_REASON_LENGTH_MAX })),
        code: Type.Optional(Type.String({ maxLength: CODE_FIELD_LENGTH_MAX })),
        ...Object.fromEntries(
          CHANGEABLE_FIELDS.map((f) => [
            changeFieldName(f),
            Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['on'], examples: ['on'] })),
          ]),
        ),
      },
      { required: ['decision'], additionalProperties: true },
    ),
  },
  document: {
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
    querystring: anyQuery,
  },
};

export const decides = (session: WebSession): boolean => session.role === COMPLIANCE_ROLE;

export async function activationReviewPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = pageSender('operator', 'activation');

  const queuePage = async (reply: FastifyReply, session: WebSession, outcome: PageOutcome = {}) =>
    show(reply, session, 'Go-Live review', queueView(session, await reviewQueue(db)), outcome.flash, outcome.status);

  const applicationPage = async (
    reply: FastifyReply,
    session: WebSession,
    merchantId: string,
    outcome: PageOutcome = {},
  ) => {
    const review = await applicationReview(db, merchantId);
    return show(
      reply,
      session,
      `Go-Live application: ${review.merchant.name}`,
      reviewView(session, review, decides(session)),
      outcome.flash,
      outcome.status,
    );
  };

  app.get('/ops/activation', { schema: { hide: true, ...activationReviewSchemas.queue } }, async (request, reply) =>
    queuePage(reply, sessionOf(request)),
  );

  app.get<{ Params: { id: string } }>(
    '/ops/activation/:id',
    { schema: { hide: true, ...activationReviewSchemas.application } },
    async (request, reply) => applicationPage(reply, sessionOf(request), request.params.id),
  );

  app.post<{ Params: { id: string } }>(
    '/ops/activation/:id/decision',
    { schema: { hide: true, ...activationReviewSchemas.decision } },
    async (request, reply) => {
      const session = sessionOf(request);
      const merchantId = request.params.id;
      if (!decides(session))
        return applicationPage(
          reply,
          session,
          merchantId,
          refusedForm('Only compliance operators decide Go-Live applications; you can read them.', 403),
        );
      const decision = formValue(request, 'decision') as Decision;
      if (decision === 'approve') {
        const refusal = await secondFactorRefusal(request, reply);
        if (refusal) return applicationPage(reply, session, merchantId, refusal);
      }
      const fields = CHANGEABLE_FIELDS.filter((f) => formValue(request, changeFieldName(f)) === 'on');
      try {
        const to = await decideApplication(db, {
          merchantId,
          decision,
          actor: actorOf(session),
          operatorRole: session.role,
          reason: formValue(request, 'reason'),
          fields,
        });
        const done =
          to === 'approved'
            ? 'Approved: the merchant can now create Live keys. The owner is e-mailed.'
            : to === 'rejected'
              ? 'Rejected: the owner is e-mailed the reason.'
              : 'Changes requested: the owner is e-mailed and can resubmit.';
        return applicationPage(reply, session, merchantId, { flash: { message: done } });
      } catch (error) {
        if (error instanceof SikaError && error.code === 'ACTIVATION_DECIDED')
          return applicationPage(
            reply,
            session,
            merchantId,
            refusedForm(`Already decided by another operator: ${error.message} Your decision was not applied.`, 409),
          );
        if (error instanceof SikaError && error.code === 'INVALID_ARGUMENT')
          return applicationPage(reply, session, merchantId, refusedForm(error.message, 400));
        throw error;
      }
    },
  );

  /** An approval's second factor: null when the code is right, else the refusal (403, or 429 with Retry-After). */
  async function secondFactorRefusal(request: FastifyRequest, reply: FastifyReply) {
    const checked = await checkSecondFactor(db, signedInAccount(request), formValue(request, 'code'), {
      allowRecoveryCode: false,
    });
    if (checked.ok) return null;
    if (checked.reason === 'throttled') {
      reply.header('retry-after', String(checked.retryAfterS));
      return refusedForm(`Too many attempts. Try again in ${checked.retryAfterS} seconds.`, 429);
    }
    return refusedForm('Enter the current code from your authenticator app to approve (each code works once).', 403);
  }

  app.get<{ Params: { id: string } }>(
    '/ops/activation/documents/:id',
    { schema: { hide: true, ...activationReviewSchemas.document } },
    async (request, reply) => {
      const document = await documentFile(db, request.params.id, null);
      if (!document) throw new SikaError('NOT_FOUND', 'No such document.');
      return sendDocument(reply, document);
    },
  );
}
