// Live refunds through the provider that took the payment. A worker claims due refunds (SKIP LOCKED) and
// moves each one step: send (ask the provider, once: the step moves on before the call), then status
// questions until the provider gives an outcome. No transaction spans a provider call. A lost answer is
// asked about by our reference; the refund is sent again only when the provider says it never saw it.
// There is no failover: only the provider that took the money can give it back.
import type { Db, Queryable } from '../db/index.ts';
import { attemptById } from '../checkout/service.ts';
import { stepEachClaimed } from '../lib/claimed-steps.ts';
import type { LiveProviders } from '../rails/live.ts';
import type { RefundForRail, RefundOutcome, RefundRail } from '../rails/refunds.ts';
import { ProviderNoAnswerError, ProviderRefusedError } from '../rails/types.ts';
import { moveRefund } from './lifecycle.ts';
import type { RefundRow } from './model.ts';
import {
  advanceStep,
  claimDueRefunds,
  findRefundById,
  findRefundByProviderReference,
  pendingRefundsOfCharge,
  updateRefund,
} from './store.ts';

/** How long a claimed refund is pushed back while a worker handles it (another worker skips it meanwhile). */
const CLAIM_HOLD_S = 60;
/** A refund the provider reports pending is asked about again after this long, doubling each time... */
const REFUND_STATUS_POLL_FIRST_MS = 5_000;
/** ...up to this. */
const REFUND_STATUS_POLL_MAX_MS = 30 * 60_000;
/** A provider that refused before accepting (down, 5xx) is asked again after this long... */
const PROVIDER_REFUSED_RETRY_MS = 30_000;
/** ...at most this many times; then the refund fails and its hold is released (the merchant may ask again). */
export const REFUND_SEND_REFUSALS_MAX = 20;
const DUE_REFUNDS_PER_PASS_MAX = 20;

type Log = { warn(obj: object, msg: string): void };

export const refundPollDelayMs = (checks: number): number =>
  Math.min(REFUND_STATUS_POLL_FIRST_MS * 2 ** Math.min(checks, 20), REFUND_STATUS_POLL_MAX_MS);

async function forRail(db: Queryable, refund: RefundRow): Promise<RefundForRail> {
  const attempt = (await attemptById(db, refund.attempt_id))!;
  return {
    refundId: refund.id,
    providerReference: refund.provider_reference!,
    paymentProviderReference: attempt.provider_reference,
    payerPhone: attempt.phone,
    amountMinor: refund.amount_minor,
    currency: refund.currency,
    reason: refund.reason,
    providerRefundId: refund.provider_refund_id,
    createdAt: refund.created_at,
  };
}

/** Applies what the provider says to a refund still pending (repeats and late answers change nothing). */
export async function applyRefundOutcome(db: Db, refundId: string, outcome: RefundOutcome): Promise<RefundRow | null> {
  return db.transaction(async (tx) => {
    const refund = (await findRefundById(tx, refundId, true))!;
    if (refund.status !== 'pending' || refund.route !== 'provider') return refund;
    const named =
      outcome.outcome !== 'unknown' && outcome.providerRefundId ? { provider_refund_id: outcome.providerRefundId } : {};
    switch (outcome.outcome) {
      case 'succeeded':
        return moveRefund(tx, refund, 'succeeded', { ...named, processing_step: null, next_step_at: null });
      case 'failed':
        return moveRefund(tx, refund, 'failed', {
          ...named,
          failure_reason: `the provider refused the refund: ${outcome.reason}`,
          processing_step: null,
          next_step_at: null,
        });
      case 'pending':
        return updateRefund(tx, refundId, {
          ...named,
          processing_step: 'awaiting_result',
          status_checks: refund.status_checks + 1,
          next_step_at: new Date(Date.now() + refundPollDelayMs(refund.status_checks)),
        });
      case 'unknown':
        // The provider never saw it (lost on the way): send it again, under the same reference.
        return updateRefund(tx, refundId, { processing_step: 'send', next_step_at: new Date() });
    }
  });
}

async function sendStep(db: Db, rail: RefundRail, refund: RefundRow, log?: Log): Promise<void> {
  // Only one worker sends: the step moves on before the call, if it is still at send.
  if (!(await advanceStep(db, refund.id, 'send', 'awaiting_result', new Date(Date.now() + CLAIM_HOLD_S * 1000))))
    return;
  const request = await forRail(db, refund);
  let outcome: RefundOutcome;
  try {
    outcome = await rail.refund(request);
  } catch (error) {
    if (error instanceof ProviderRefusedError && error.declined) {
      outcome = { outcome: 'failed', providerRefundId: null, rawStatus: 'declined', reason: error.message };
    } else if (error instanceof ProviderRefusedError) {
      log?.warn(
        { err: error, refund_id: refund.id, provider: rail.provider },
        'refund provider refused before accepting; asking again later',
      );
      await db.transaction(async (tx) => {
        const current = (await findRefundById(tx, refund.id, true))!;
        if (current.status !== 'pending') return;
        if (current.status_checks + 1 >= REFUND_SEND_REFUSALS_MAX) {
          await moveRefund(tx, current, 'failed', {
            failure_reason: `the provider refused the refund ${REFUND_SEND_REFUSALS_MAX} times: ${error.message}`,
            processing_step: null,
            next_step_at: null,
          });
          return;
        }
        await updateRefund(tx, refund.id, {
          processing_step: 'send',
          status_checks: current.status_checks + 1,
          next_step_at: new Date(Date.now() + PROVIDER_REFUSED_RETRY_MS),
        });
      });
      return;
    } else if (error instanceof ProviderNoAnswerError) {
      // It may have been accepted: ask by our reference, never send blindly.
      log?.warn({ err: error, refund_id: refund.id }, 'refund answer lost; asking the provider');
      outcome = await rail
        .status(request)
        .catch((): RefundOutcome => ({ outcome: 'pending', providerRefundId: null, rawStatus: 'answer lost' }));
    } else {
      throw error;
    }
  }
  await applyRefundOutcome(db, refund.id, outcome);
}

/** One step of one Live provider refund. */
async function processRefund(db: Db, providers: LiveProviders, refundId: string, log?: Log): Promise<void> {
  const refund = await findRefundById(db, refundId);
  if (refund?.status !== 'pending' || refund.route !== 'provider') return;
  const rail = providers.refundsByName(refund.provider!);
  if (!rail) {
    log?.warn(
      { refund_id: refundId, provider: refund.provider },
      'the provider of this refund is not configured; it waits',
    );
    await db.transaction((tx) =>
      updateRefund(tx, refundId, { next_step_at: new Date(Date.now() + PROVIDER_REFUSED_RETRY_MS) }),
    );
    return;
  }
  if (refund.processing_step === 'send') return sendStep(db, rail, refund, log);
  await applyRefundOutcome(db, refundId, await rail.status(await forRail(db, refund)));
}

/** Asks a refund's provider now (a provider webhook said something happened to it); refund as just read. */
async function checkRefundNow(db: Db, providers: LiveProviders, refund: RefundRow): Promise<void> {
  if (refund.status !== 'pending' || refund.route !== 'provider' || refund.processing_step !== 'awaiting_result')
    return;
  const rail = providers.refundsByName(refund.provider!);
  if (!rail) return;
  await applyRefundOutcome(db, refund.id, await rail.status(await forRail(db, refund)));
}

/** How a provider's notification names refunds: our reference with it, the charge they refund, or our refund id. */
export type RefundsNamed = { refundReference: string } | { chargeReference: string } | { refundId: string };

/** The refunds a notification names, each read once. By our id, only a refund that provider holds under a reference of ours. */
async function refundsNamedBy(db: Queryable, provider: string, named: RefundsNamed): Promise<RefundRow[]> {
  if ('chargeReference' in named) return pendingRefundsOfCharge(db, provider, named.chargeReference);
  const refund =
    'refundReference' in named
      ? await findRefundByProviderReference(db, provider, named.refundReference)
      : await findRefundById(db, named.refundId);
  return refund && refund.provider === provider && refund.provider_reference ? [refund] : [];
}

/**
 * A provider notification about refunds (only a reason to ask): by our refund reference (MTN's callback), by
 * the charge it refunds (Paystack's refund.* events name the transaction) or by our refund id (MTN's external
 * id). Each refund named is read once and asked about. True when it named a refund of ours.
 */
export async function checkRefundsNamed(
  db: Db,
  providers: LiveProviders,
  provider: string,
  named: RefundsNamed,
): Promise<boolean> {
  const refunds = await refundsNamedBy(db, provider, named);
  for (const refund of refunds) await checkRefundNow(db, providers, refund);
  return refunds.length > 0;
}

/** Worker pass: claims due provider refunds and moves each one step. */
export async function processDueRefunds(db: Db, providers: LiveProviders, log?: Log): Promise<number> {
  const ids = await db.transaction((tx) => claimDueRefunds(tx, DUE_REFUNDS_PER_PASS_MAX, CLAIM_HOLD_S));
  return stepEachClaimed(
    ids,
    (id) => processRefund(db, providers, id, log),
    (error, id) => log?.warn({ err: error, refund_id: id }, 'refund step failed; it will be retried'),
  );
}
