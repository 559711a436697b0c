// Applying a payment outcome: the one place where attempts and sessions change status together, the
// merchant is credited (or the credit reversed) and checkout events are written, in one transaction.
import type { Db, Queryable } from '../db/index.ts';
import { emitEvent } from '../events/outbox.ts';
import { SikaError } from '../lib/errors.ts';
import { markInvoiceRemitted } from '../invoicing/service.ts';
import { creditPayment, InsufficientFundsError, reversePayment } from '../ledger/service.ts';
import type { PaymentCredit } from '../ledger/model.ts';
import type { LiveProviders } from '../rails/live.ts';
import type { ProviderOutcome } from '../rails/types.ts';
import { duplicatePaymentRefund, type DuplicatePaymentReason } from './duplicate-refund.ts';
import {
  ATTEMPT_FINAL,
  FAILED_ATTEMPTS_MAX,
  SESSION_FINAL,
  attemptMachine,
  cashSlipMachine,
  sessionMachine,
  toSessionResponse,
  type AttemptRow,
  type AttemptStatus,
  type SessionRow,
  type SessionStatus,
} from './model.ts';
import { countLinkPayment, LinkClosedError, linkAvailabilityOf } from './payment-link-payments.ts';
import { newReceiptNumber } from './receipt-number.ts';
import { giveReceiptNumber } from './receipts.ts';
import * as store from './store.ts';

export interface OutcomeContext {
  checkoutUrlHost: string;
  /** What reported the outcome (simulate, provider, operator, teller, expiry): kept in raw_status. */
  source: string;
  /** The provider's own status text (e.g. FAILED:NOT_ENOUGH_FUNDS): kept in raw_status instead, so the reason is not lost. */
  providerStatus?: string;
  /** What the provider reports taking, when it says: recorded on an attempt held in amount_mismatch, for the operator's decision. */
  receivedMinor?: number;
  /** What the provider told beyond the status (its transaction id, the card, why it failed; issue 31), recorded with the outcome. */
  facts?: store.AttemptProviderFacts;
  /** The configured Live providers: a duplicate payment is refunded through the one that took it (else an operator's transfer). */
  providers?: LiveProviders;
}

export interface Applied {
  attempt: AttemptRow;
  session: SessionRow;
  changed: boolean;
}

const RAW_STATUS: Record<ProviderOutcome, string> = {
  pending: 'PENDING',
  paid: 'SUCCESSFUL',
  failed: 'FAILED',
  expired: 'EXPIRED',
  cancelled: 'CANCELLED',
  reversed: 'REVERSED',
  manual_review: 'MANUAL_REVIEW',
  amount_mismatch: 'AMOUNT_MISMATCH',
};

/**
 * Moves a session and announces it. Back to open after an attempt ended unpaid is
 * `checkout.session.reopened`, carrying why (`reopened`); without one (a payer switching away from a cash
 * slip in the same transaction as the next attempt) nothing is announced.
 */
async function moveSession(
  tx: Queryable,
  session: SessionRow,
  to: SessionStatus,
  ctx: OutcomeContext,
  reopened?: Reopened,
  attempt?: Pick<AttemptRow, 'rail' | 'network'>,
): Promise<SessionRow> {
  if (session.status === to) return session;
  // The attempt that starts a try (pending) or pays (success) names the session's method; the payer's receipt
  // number comes with success, before the event: checkout.session.completed carries it.
  const extras: store.SessionStatusExtras = {
    method:
      attempt && (to === 'pending' || to === 'success') ? { rail: attempt.rail, network: attempt.network } : undefined,
    receiptNumber: to === 'success' && !session.receipt_number ? newReceiptNumber() : undefined,
  };
  let updated = await store.updateSessionStatus(
    tx,
    session.id,
    sessionMachine.transition(session.status, to),
    SESSION_FINAL.includes(to),
    extras,
  );
  // The number drawn was another session's (see updateSessionStatus): drawn again behind a savepoint.
  if (to === 'success' && !updated.receipt_number) updated = await giveReceiptNumber(tx, updated);
  const type = {
    success: 'checkout.session.completed',
    pending: 'checkout.session.pending',
    failed: 'checkout.session.failed',
    expired: 'checkout.session.expired',
    open: reopened ? 'checkout.session.reopened' : null,
  }[to];
  if (type) await emitSessionEvent(tx, updated, type, ctx, to === 'open' ? reopened : undefined);
  return updated;
}

/** Why a session went back to open: the attempt that ended and how (its status and the provider's raw status). */
export interface Reopened {
  attempt_reference: string;
  attempt_status: AttemptStatus;
  reason: string;
}

export function emitSessionEvent(
  tx: Queryable,
  session: SessionRow,
  type: string,
  ctx: Pick<OutcomeContext, 'checkoutUrlHost'>,
  reopened?: Reopened,
) {
  return emitEvent(tx, {
    merchantId: session.merchant_id,
    environment: session.environment,
    apiKeyId: session.api_key_id,
    type,
    objectType: 'checkout.session',
    objectId: session.id,
    objectVersion: session.version,
    data: reopened
      ? { session: toSessionResponse(session, ctx.checkoutUrlHost), reopened }
      : { session: toSessionResponse(session, ctx.checkoutUrlHost) },
  });
}

async function moveAttempt(
  tx: Queryable,
  attempt: AttemptRow,
  to: AttemptStatus,
  rawStatus: string,
): Promise<AttemptRow> {
  const updated = await store.updateAttemptStatus(
    tx,
    attempt.id,
    attemptMachine.transition(attempt.status, to),
    rawStatus,
    ATTEMPT_FINAL.includes(to),
  );
  if (attempt.rail === 'cash' && to !== 'manual_review' && to !== 'amount_mismatch') {
    const slip = await store.findSlipByAttempt(tx, attempt.id);
    if (slip && slip.status === 'active')
      await store.updateSlipStatus(
        tx,
        slip.id,
        cashSlipMachine.transition(slip.status, to === 'paid' ? 'used' : to === 'expired' ? 'expired' : 'cancelled'),
      );
  }
  return updated;
}

/** Attempt statuses that keep a session pending: waiting for the provider or for an operator. */
const IN_PLAY: readonly AttemptStatus[] = ['pending', 'manual_review', 'amount_mismatch'];

/** After an attempt ends without payment: the payer may retry (announced as reopened), unless time or tries have run out. */
async function settleAfterUnpaid(
  tx: Queryable,
  session: SessionRow,
  attempt: AttemptRow,
  ctx: OutcomeContext,
): Promise<SessionRow> {
  if (session.status !== 'pending') return session;
  // Another attempt still in play (a late answer held for an operator while the payer had moved on): the session waits for it.
  if (
    (await store.listAttempts(tx, session.id)).some(
      (other) => other.id !== attempt.id && IN_PLAY.includes(other.status),
    )
  )
    return session;
  const expired = session.expires_at.getTime() <= Date.now();
  if (expired) return moveSession(tx, session, 'expired', ctx);
  if ((await store.countFailedAttempts(tx, session.id)) >= FAILED_ATTEMPTS_MAX)
    return moveSession(tx, session, 'failed', ctx);
  // A link's session is not reopened once its link takes no payment (used up meanwhile, turned off, past its time).
  if ((await linkAvailabilityOf(tx, session)) !== 'available') return moveSession(tx, session, 'expired', ctx);
  return moveSession(tx, session, 'open', ctx, {
    attempt_reference: attempt.id,
    attempt_status: attempt.status,
    reason: attempt.raw_status,
  });
}

async function settlePaid(
  tx: Queryable,
  session: SessionRow,
  attempt: AttemptRow,
  ctx: OutcomeContext,
  credit: PaymentCredit | null = null,
): Promise<SessionRow> {
  if (
    session.status === 'success' &&
    (await store.listAttempts(tx, session.id)).some((other) => other.id !== attempt.id && other.status === 'paid')
  ) {
    return settleDuplicate(tx, session, attempt, ctx, credit?.chargedMinor ?? attempt.amount_charged_minor);
  }
  // A link's session counts its payment on the link before it is credited (payment-link-payments.ts): one the
  // link may no longer take is refunded as a duplicate is. A session already success counted when it first was.
  const linkPayment = session.status === 'success' ? null : await countLinkPayment(tx, session);
  if (linkPayment && !linkPayment.kept) {
    return settleDuplicate(
      tx,
      session,
      attempt,
      ctx,
      credit?.chargedMinor ?? attempt.amount_charged_minor,
      'payment_link_used_up',
    );
  }
  const payerFeeMinor = attempt.bearer === 'payer' ? attempt.fee_minor : 0;
  const merchantFeeMinor = attempt.bearer === 'merchant' ? attempt.fee_minor : 0;
  await creditPayment(tx, {
    merchantId: attempt.merchant_id,
    environment: attempt.environment,
    paymentId: attempt.id,
    rail: attempt.rail,
    ...(credit ?? { chargedMinor: attempt.amount_charged_minor, payerFeeMinor, merchantFeeMinor }),
  });
  if (session.status === 'success') return session; // its earlier payment was reversed: this one is the session's payment now
  const updated = await moveSession(tx, session, 'success', ctx, undefined, attempt);
  await markInvoiceRemitted(tx, session.merchant_id, session.environment, session.invoice_ref);
  // Any other attempt still waiting for this session is no longer needed.
  for (const other of await store.listAttempts(tx, session.id)) {
    if (other.id === attempt.id || other.status !== 'pending') continue;
    await moveAttempt(tx, other, 'cancelled', 'CANCELLED_SESSION_PAID');
    // Its prompt may still be approved: it is asked about for the late-success window (a payment that arrives is refunded).
    await store.recordProviderFacts(tx, other.id, { abandoned: true });
  }
  // This payment used the link up: its other open sessions take no more (announced as expired).
  for (const other of linkPayment?.expire ?? []) await moveSession(tx, other, 'expired', ctx);
  return updated;
}

/**
 * A second payment of a session another attempt has paid (a payer who changed course and approved the old
 * prompt as well): credited without fee and refunded in full in the same transaction (src/refunds/sika-refunds.ts,
 * handed in through ./duplicate-refund.ts),
 * and the merchant told with checkout.session.duplicate_payment_refunded. The session stays success with its first payment.
 * The same for a payment of a link's session once the link has taken every payment it may
 * (`payment_link_used_up`): the session does not succeed, an open or pending one expires (the payer's only
 * payment went back to them, so nothing of it is left to pay or to wait for).
 */
async function settleDuplicate(
  tx: Queryable,
  session: SessionRow,
  attempt: AttemptRow,
  ctx: OutcomeContext,
  receivedMinor: number,
  reason: DuplicatePaymentReason = 'session_already_paid',
): Promise<SessionRow> {
  // No rail: available at once, as the refund below takes it straight back out.
  await creditPayment(tx, {
    merchantId: attempt.merchant_id,
    environment: attempt.environment,
    paymentId: attempt.id,
    chargedMinor: receivedMinor,
    payerFeeMinor: 0,
    merchantFeeMinor: 0,
  });
  const refund = await duplicatePaymentRefund()(tx, attempt, receivedMinor, ctx.providers, reason);
  const closed =
    reason === 'payment_link_used_up' && (session.status === 'open' || session.status === 'pending')
      ? await moveSession(tx, session, 'expired', ctx)
      : session;
  const updated = await store.bumpSessionVersion(tx, closed.id);
  await emitEvent(tx, {
    merchantId: updated.merchant_id,
    environment: updated.environment,
    apiKeyId: updated.api_key_id,
    type: 'checkout.session.duplicate_payment_refunded',
    objectType: 'checkout.session',
    objectId: updated.id,
    objectVersion: updated.version,
    data: {
      session: toSessionResponse(updated, ctx.checkoutUrlHost),
      duplicate: {
        attempt_reference: attempt.id,
        amount_minor: receivedMinor,
        currency: attempt.currency,
        refund_id: refund.id,
        reason,
      },
    },
  });
  return updated;
}

/**
 * An attempt held for an operator keeps its session pending and unfinalized. One that was abandoned or had
 * expired while the session reopened (a late answer) puts an open session back to pending: no other payment
 * starts while money may have been taken. A session already decided (success, expired) stays as it is.
 */
const holdSession = (tx: Queryable, session: SessionRow, ctx: OutcomeContext, attempt: AttemptRow) =>
  session.status === 'open' ? moveSession(tx, session, 'pending', ctx, undefined, attempt) : Promise.resolve(session);

/** True when the provider said something about the attempt that is not recorded yet. */
const hasNewFacts = (attempt: AttemptRow, facts: store.AttemptProviderFacts) =>
  (!!facts.providerTransactionId && facts.providerTransactionId !== attempt.provider_transaction_id) ||
  (!!facts.card && (facts.card.brand !== attempt.card_brand || facts.card.last4 !== attempt.card_last4)) ||
  (!!facts.failureReason && facts.failureReason !== attempt.failure_reason);

/**
 * The status an outcome moves an attempt to: the outcome itself, except that a reversal of an attempt that
 * was never paid counts as failed (DESIGN §3). The one place of that rule: applyOutcome and the provider
 * status path (which decides before opening a transaction whether there is anything to apply) both read it.
 */
export const outcomeTarget = (status: AttemptStatus, outcome: ProviderOutcome): AttemptStatus =>
  outcome === 'reversed' && status !== 'paid' && status !== 'reversed' ? 'failed' : outcome;

/**
 * Applies what a provider (or the simulator, an operator, a teller, the expiry worker) says about an
 * attempt. Locks the session, then the attempt. Repeating an outcome already applied changes nothing;
 * an outcome the transition table forbids is a 409. read: the attempt if the caller has just read it
 * (saves a read; it is read again under the lock).
 */
export async function applyOutcome(
  tx: Queryable,
  attemptId: string,
  outcome: ProviderOutcome,
  ctx: OutcomeContext,
  read?: AttemptRow,
): Promise<Applied> {
  // The attempt as the caller already read it (unlocked: only its session id is used before the locks).
  const peek = read?.id === attemptId ? read : await store.findAttempt(tx, attemptId);
  if (!peek) throw new SikaError('NOT_FOUND', 'Payment attempt not found.', { detail: 'Payment attempt not found.' });
  let session = (await store.lockSession(tx, peek.session_id))!;
  let attempt = (await store.findAttempt(tx, attemptId, true))!;
  const raw = ctx.providerStatus || `${RAW_STATUS[outcome]}${ctx.source ? `:${ctx.source}` : ''}`;

  if (outcome === 'pending') return { attempt, session, changed: false };
  const target = outcomeTarget(attempt.status, outcome);
  if (attempt.status === target) {
    if (ctx.facts && hasNewFacts(attempt, ctx.facts))
      attempt = await store.recordProviderFacts(tx, attempt.id, { ...ctx.facts, abandoned: false });
    return { attempt, session, changed: false };
  }
  if (!attemptMachine.canTransition(attempt.status, target)) {
    throw new SikaError('ATTEMPT_FINAL', `The attempt is ${attempt.status} and cannot become ${target}.`);
  }
  attempt = await moveAttempt(
    tx,
    attempt,
    target,
    target === 'failed' && outcome === 'reversed' ? `REVERSED${ctx.source ? `:${ctx.source}` : ''}` : raw,
  );
  if (ctx.facts)
    attempt = await store.recordProviderFacts(tx, attempt.id, {
      ...ctx.facts,
      abandoned: target === 'cancelled' && ctx.facts.abandoned === true,
    });

  switch (target) {
    case 'paid':
      session = await settlePaid(tx, session, attempt, ctx);
      break;
    case 'reversed':
      if (await store.hasDuplicateRefund(tx, attempt.id)) {
        // Its money already went back to the payer as a duplicate: a reversal on top is for an operator to reconcile.
        throw new SikaError(
          'REVERSAL_NOT_COVERED',
          'This payment was a duplicate and was already refunded to the payer automatically; an operator must reconcile the reversal.',
        );
      }
      try {
        await reversePayment(tx, {
          merchantId: attempt.merchant_id,
          environment: attempt.environment,
          paymentId: attempt.id,
        });
      } catch (error) {
        // The balance may never go negative: when the money was already paid out, nothing is recorded
        // and the reversal waits for an operator to recover the funds (it is reported again on retry).
        if (error instanceof InsufficientFundsError) {
          throw new SikaError(
            'REVERSAL_NOT_COVERED',
            'The merchant balance no longer covers this payment, so the reversal cannot be applied automatically; an operator must recover the funds first.',
          );
        }
        throw error;
      }
      if (session.status === 'success') {
        // Not a status write (success is final): the session's version grows so the event can be ordered.
        session = await store.bumpSessionVersion(tx, session.id);
        await emitSessionEvent(tx, session, 'checkout.session.reversed', ctx);
      }
      break;
    case 'amount_mismatch':
      // What the provider took, for the operator's decision (a statement credit is read from its line instead).
      if (ctx.receivedMinor !== undefined && Number.isSafeInteger(ctx.receivedMinor) && ctx.receivedMinor >= 1)
        attempt = await store.setAttemptReceived(tx, attempt.id, ctx.receivedMinor, null);
      session = await holdSession(tx, session, ctx, attempt);
      break;
    case 'manual_review':
      session = await holdSession(tx, session, ctx, attempt);
      break;
    default:
      session = await settleAfterUnpaid(tx, session, attempt, ctx);
  }
  return { attempt, session, changed: true };
}

/**
 * An operator's decision on a held attempt (manual_review or amount_mismatch), approved by a second operator
 * (src/ops/approvals.ts). paid: the attempt is paid and the merchant credited `credit` (what was received,
 * with the fees taken on it) instead of the amount charged when given. failed: the attempt fails (the payer
 * may try again); with `credit`, the money received is still booked on the merchant's balance, for the
 * refund to the payer that the caller holds from it in the same transaction. `received` (with the fee taken)
 * is recorded on the attempt when it is not the amount charged. Locks the session, then the attempt; an
 * attempt no longer held is ATTEMPT_NOT_HELD.
 */
export async function settleHeldAttempt(
  tx: Queryable,
  attemptId: string,
  decision: {
    outcome: 'paid' | 'failed';
    credit: PaymentCredit | null;
    received: { receivedMinor: number; feeMinor: number } | null;
  },
  ctx: OutcomeContext,
): Promise<Applied> {
  const peek = await store.findAttempt(tx, attemptId);
  if (!peek) throw new SikaError('NOT_FOUND', 'Payment attempt not found.', { detail: 'Payment attempt not found.' });
  let session = (await store.lockSession(tx, peek.session_id))!;
  let attempt = (await store.findAttempt(tx, attemptId, true))!;
  if (attempt.status !== 'manual_review' && attempt.status !== 'amount_mismatch') {
    throw new SikaError('ATTEMPT_NOT_HELD', `The attempt is ${attempt.status}; only held attempts are resolved here.`);
  }
  if (decision.received && decision.received.receivedMinor !== attempt.amount_charged_minor) {
    await store.setAttemptReceived(tx, attempt.id, decision.received.receivedMinor, decision.received.feeMinor);
  }
  const raw = `${RAW_STATUS[decision.outcome]}:${ctx.source}`;
  attempt = await moveAttempt(tx, attempt, decision.outcome, raw);
  if (decision.outcome === 'paid') {
    session = await settlePaid(tx, session, attempt, ctx, decision.credit);
  } else {
    if (decision.credit)
      await creditPayment(tx, {
        merchantId: attempt.merchant_id,
        environment: attempt.environment,
        paymentId: attempt.id,
        rail: attempt.rail,
        ...decision.credit,
      });
    session = await settleAfterUnpaid(tx, session, attempt, ctx);
  }
  return { attempt, session, changed: true };
}

/** Expires a session past its time: its pending attempts expire, then the session (unless one is held for review). */
export async function expireSession(tx: Queryable, sessionId: string, ctx: OutcomeContext): Promise<SessionRow | null> {
  let session = await store.lockSession(tx, sessionId);
  if (!session || !sessionMachine.canTransition(session.status, 'expired') || session.expires_at.getTime() > Date.now())
    return session;
  for (const attempt of await store.listAttempts(tx, sessionId)) {
    if (attempt.status === 'pending') await moveAttempt(tx, attempt, 'expired', 'EXPIRED:expiry');
  }
  const held = (await store.listAttempts(tx, sessionId)).some(
    (a) => a.status === 'manual_review' || a.status === 'amount_mismatch',
  );
  if (!held) session = await moveSession(tx, session, 'expired', ctx);
  return session;
}

/**
 * Ends an open session whose payment link takes no more payments (used up, turned off, past its time), after a
 * payer's new attempt on it was refused (attempt-start.ts LinkClosedError), in a transaction of its own:
 * expired and announced, so the page stops offering to pay. Anything else about the session is left alone.
 */
export async function expireClosedLinkSession(db: Db, sessionId: string, ctx: OutcomeContext): Promise<void> {
  await db.transaction(async (tx) => {
    const session = await store.lockSession(tx, sessionId);
    if (session?.status !== 'open') return;
    if ((await linkAvailabilityOf(tx, session)) === 'available') return;
    await moveSession(tx, session, 'expired', ctx);
  });
}

/** Runs a payer's new attempt; when the session's link refused it, the session is closed before the refusal goes on. */
export async function closingOnClosedLink<T>(
  db: Db,
  sessionId: string,
  ctx: OutcomeContext,
  start: () => Promise<T>,
): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if (error instanceof LinkClosedError) await expireClosedLinkSession(db, sessionId, ctx);
    throw error;
  }
}

export { moveAttempt, moveSession };
