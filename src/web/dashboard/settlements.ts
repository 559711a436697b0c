// Dashboard: Settlements (issue 34, item 2): the merchant's settlement schedule in the session's environment, its
// settlement account (a change needs the user's current second-factor code), resuming after a failed settlement,
// and the Test clearing switch. Owner or admin may change them; the other roles read. HTML in settlements-views.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkSecondFactor } from '../../accounts/console-accounts.ts';
import type { AppDeps } from '../../http/deps.ts';
import { parseCedis } from '../../lib/ghana.ts';
import {
  getSchedule,
  setTestClearing,
  settlementRecipient,
  settlementRecipientChoices,
  testClearing,
  updateSchedule,
  type ScheduleInput,
} from '../../payouts/settlement-schedule.ts';
import type { WebSession } from '../auth.ts';
import {
  formValue,
  pageSender,
  postForm,
  refusedForm,
  sessionOf,
  signedInAccount,
  tooManyAttempts,
  type PageOutcome,
} from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import { canEditSettlements, settlementsView } from './settlements-views.ts';

const userActor = (session: WebSession) => ({ type: 'user' as const, id: session.userId!, email: session.email });

export async function settlementPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = pageSender('merchant', 'settlements');

  async function settlementsPage(reply: FastifyReply, session: WebSession, outcome: PageOutcome = {}) {
    const merchantId = session.merchantId!;
    const [schedule, choices, clearing] = await Promise.all([
      getSchedule(db, merchantId, session.environment),
      settlementRecipientChoices(db, merchantId, session.environment),
      testClearing(db, merchantId),
    ]);
    const current = schedule.recipient_id
      ? await settlementRecipient(db, merchantId, session.environment, schedule.recipient_id)
      : null;
    const body = settlementsView(session, { schedule, current, choices, testClearing: clearing, now: new Date() });
    return show(reply, session, 'Settlements', body, outcome.flash, outcome.status);
  }

  app.get(
    '/dashboard/settlements',
    { schema: { hide: true, ...dashboardSchemas.settlements } },
    async (request, reply) => settlementsPage(reply, sessionOf(request)),
  );

  /** The form's fields as a partial change: a field left empty keeps its value. */
  function scheduleInput(request: FastifyRequest): ScheduleInput | { refusal: string } {
    const input: ScheduleInput = {};
    const interval = formValue(request, 'interval');
    if (interval) input.interval = interval;
    const weekly = formValue(request, 'weekly_anchor');
    if (weekly) input.weekly_anchor = weekly;
    const monthly = formValue(request, 'monthly_anchor');
    if (monthly) input.monthly_anchor = Number(monthly);
    const time = formValue(request, 'time').trim();
    if (time) input.time = time;
    const minimum = formValue(request, 'minimum');
    if (minimum.trim()) {
      const minor = parseCedis(minimum);
      if (minor === null) return { refusal: 'Write the minimum balance in GHS, e.g. 50.00 (0 for none).' };
      input.minimum_minor = minor;
    }
    const recipientId = formValue(request, 'recipient_id');
    if (recipientId) input.recipient_id = recipientId;
    return input;
  }

  postForm(app, '/dashboard/settlements', dashboardSchemas.saveSettlements, async (request, reply, session) => {
    const merchantId = session.merchantId!;
    const { environment } = session;
    const input = scheduleInput(request);
    if ('refusal' in input) return settlementsPage(reply, session, refusedForm(input.refusal, 400));
    // Another merchant's recipient, or the other environment's, is not found whoever asks.
    if (input.recipient_id && !(await settlementRecipient(db, merchantId, environment, input.recipient_id)))
      return settlementsPage(reply, session, refusedForm('Recipient not found.', 404));
    if (!canEditSettlements(session))
      return settlementsPage(reply, session, refusedForm('Only the owner or an admin can change settlements.', 403));
    const current = await getSchedule(db, merchantId, environment);
    if (input.recipient_id && current.recipient_id && input.recipient_id !== current.recipient_id) {
      // A stolen session alone cannot redirect the money: a change of settlement account needs a fresh code.
      if (!session.secondFactorEnrolled)
        return settlementsPage(
          reply,
          session,
          refusedForm(
            'Set up a second factor on your Account page first: changing the settlement account needs a code from your authenticator app.',
            403,
          ),
        );
      const checked = await checkSecondFactor(db, signedInAccount(request), formValue(request, 'code'), {
        allowRecoveryCode: false,
      });
      if (!checked.ok) {
        if (checked.reason === 'throttled') {
          reply.header('retry-after', String(checked.retryAfterS));
          return settlementsPage(reply, session, refusedForm(tooManyAttempts(checked.retryAfterS), 429));
        }
        return settlementsPage(
          reply,
          session,
          refusedForm(
            'Enter the current code from your authenticator app to change the settlement account (each code works once).',
            403,
          ),
        );
      }
    }
    try {
      const saved = await updateSchedule(
        db,
        { merchantId, environment, actor: userActor(session), channel: 'dashboard', baseUrl: deps.config.baseUrl },
        input,
      );
      const message = current.paused
        ? 'Settlements resumed.'
        : saved.recipient_id !== current.recipient_id && current.recipient_id
          ? 'Settlement account changed: it receives settlements 24 hours from now. The owner has been e-mailed.'
          : 'Settlement schedule saved.';
      return settlementsPage(reply, session, { flash: { message } });
    } catch (error) {
      return settlementsPage(reply, session, formRefusal(error));
    }
  });

  postForm(
    app,
    '/dashboard/settlements/test-clearing',
    dashboardSchemas.testClearing,
    async (request, reply, session) => {
      if (!canEditSettlements(session))
        return settlementsPage(reply, session, refusedForm('Only the owner or an admin can change settlements.', 403));
      if (session.environment !== 'test')
        return settlementsPage(reply, session, refusedForm('Test clearing is a Test setting: switch to Test.', 409));
      const on = formValue(request, 'enabled') === 'on';
      await setTestClearing(db, userActor(session), session.merchantId!, on);
      const message = on
        ? 'Test clearing is on: Test payments now clear after the Live clearing times.'
        : 'Test clearing is off: Test payments clear at once.';
      return settlementsPage(reply, session, { flash: { message } });
    },
  );
}
