// A payer changing course (issue 31): "Use another number or method" on a waiting screen cancels the pending
// attempt so the session is payable again. No provider we use can withdraw a Mobile Money prompt or a card
// page (MTN's Open API and Paystack's Charge API have no cancel), so the provider is asked first: an attempt
// it already finished keeps that outcome (a payment taken is the session's payment, never cancelled over).
// Otherwise the attempt is cancelled here and marked abandoned: the status checks keep asking its provider
// for the late-success window, and a success that still arrives is applied (cancelled -> paid) and, when
// another attempt has paid the session meanwhile, refunded automatically (payments.ts, settleDuplicate).
import type { Queryable } from '../db/index.ts';
import { SikaError } from '../lib/errors.ts';
import { railOfAttempt, type StatusCheck } from '../rails/index.ts';
import { railInput as railInputOf } from './attempt-rail-input.ts';
import { attemptOfSession, toAttemptStatus, type AttemptStatusBody } from './attempts.ts';
import type { AttemptRow } from './model.ts';
import type { PayerContext } from './payer-view.ts';
import { applyOutcome } from './payments.ts';
import { factsOf } from './provider-status.ts';
import * as store from './store.ts';

/** raw_status source of an attempt the payer left for another number or method. */
export const CHANGED_COURSE_SOURCE = 'payer_changed_course';

/** Outcomes of a provider's answer that finish the attempt on their own (the payer's cancel then changes nothing). */
const FINISHED: readonly StatusCheck['outcome'][] = [
  'paid',
  'failed',
  'expired',
  'reversed',
  'manual_review',
  'amount_mismatch',
];

/** The first step, outside any transaction: the attempt of this session, and (while it is pending) its provider's answer. */
export async function askBeforeCancel(
  ctx: PayerContext,
  sessionId: string,
  attemptId: string,
): Promise<{ attempt: AttemptRow; check: StatusCheck | null }> {
  const attempt = await attemptOfSession(ctx.db, sessionId, attemptId);
  if (attempt.status !== 'pending') return { attempt, check: null };
  // A provider that cannot be asked does not keep the payer waiting: the attempt is cancelled under watch,
  // so whatever it later says is still applied.
  const adapter = attempt.rail === 'cash' ? null : railOfAttempt(attempt, ctx.providers);
  if (!adapter) return { attempt, check: null };
  try {
    return { attempt, check: await adapter.status(railInputOf(attempt)) };
  } catch (error) {
    ctx.log?.warn(
      { err: error, attempt_id: attempt.id },
      'provider status query before a payer cancel failed; cancelling under watch',
    );
    return { attempt, check: null };
  }
}

/** The second step, in the caller's transaction: the provider's final answer applied, or the attempt cancelled. */
export async function applyCancel(
  tx: Queryable,
  ctx: PayerContext,
  asked: { attempt: AttemptRow; check: StatusCheck | null },
): Promise<AttemptStatusBody> {
  const { attempt, check } = asked;
  const outcomeCtx = { checkoutUrlHost: ctx.checkoutUrlHost, providers: ctx.providers };
  let updated: AttemptRow;
  if (check && FINISHED.includes(check.outcome)) {
    const outcome = check.outcome as Exclude<StatusCheck['outcome'], 'unknown' | 'pending'>;
    updated = (
      await applyOutcome(tx, attempt.id, outcome, {
        ...outcomeCtx,
        source: 'provider',
        providerStatus: check.rawStatus,
        receivedMinor: check.amountMinor,
        facts: factsOf(check),
      })
    ).attempt;
  } else {
    try {
      const facts = {
        ...(check ? factsOf(check) : {}),
        failureReason: 'changed_course' as const,
        abandoned: attempt.rail !== 'cash',
      };
      updated = (
        await applyOutcome(
          tx,
          attempt.id,
          'cancelled',
          { ...outcomeCtx, source: CHANGED_COURSE_SOURCE, facts },
          attempt,
        )
      ).attempt;
    } catch (error) {
      // Finished meanwhile (a webhook, the status checks): that outcome stands and is what the payer sees.
      if (!(error instanceof SikaError && error.code === 'ATTEMPT_FINAL')) throw error;
      updated = (await store.findAttempt(tx, attempt.id))!;
    }
  }
  return toAttemptStatus(tx, updated, check !== null);
}

/** Both steps: what the payer page's form (no script) and tests call. */
export async function cancelAttempt(
  ctx: PayerContext,
  sessionId: string,
  attemptId: string,
): Promise<AttemptStatusBody> {
  const asked = await askBeforeCancel(ctx, sessionId, attemptId);
  return ctx.db.transaction((tx) => applyCancel(tx, ctx, asked));
}
