// The dashboard's refunds of a checkout session: what the session page shows (its payment, its refunds and
// what can still be refunded) and a refund asked for by a signed-in user, in one transaction (createRefund
// locks the session, holds the amount and emits refund.created; a Live one is sent after commit by the worker).
import type { Db, Queryable } from '../db/index.ts';
import type { LiveProviders } from '../rails/live.ts';
import { createRefund, type RefundRequest, type RefundRequester } from './create.ts';
import type { RefundRow, RefundStatus } from './model.ts';
import { sessionRefunds } from './queries.ts';
import type { AttemptRow } from '../checkout/model.ts';

/** Refunds that still count against the payment (as createRefund counts them): not failed, not cancelled. */
const COMMITTED: readonly RefundStatus[] = ['awaiting_approval', 'pending', 'succeeded'];

/** The attempt whose payment stands for the session: the first paid (as createRefund picks it; a refunded duplicate is paid later). */
export function paidAttemptOf(attempts: readonly AttemptRow[]): AttemptRow | null {
  const paid = attempts.filter((a) => a.status === 'paid');
  paid.sort(
    (a, b) =>
      (a.finalized_at?.getTime() ?? Infinity) - (b.finalized_at?.getTime() ?? Infinity) ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  return paid[0] ?? null;
}

/** What can still be refunded of a payment, in pesewas (never below zero). */
export function refundableMinor(
  payment: Pick<AttemptRow, 'amount_charged_minor'>,
  refunds: readonly Pick<RefundRow, 'status' | 'amount_minor'>[],
): number {
  const committed = refunds.filter((r) => COMMITTED.includes(r.status)).reduce((sum, r) => sum + r.amount_minor, 0);
  return Math.max(0, payment.amount_charged_minor - committed);
}

/** The session page's refunds part: the payment, its refunds (oldest first) and the rest that can be refunded. */
export async function sessionRefundState(db: Queryable, sessionId: string, attempts: readonly AttemptRow[]) {
  const payment = paidAttemptOf(attempts);
  const refunds = await sessionRefunds(db, sessionId);
  // Only refunds of the payment itself count against it (a duplicate payment's automatic refund is another attempt's).
  return {
    payment,
    refunds,
    refundableMinor: payment
      ? refundableMinor(
          payment,
          refunds.filter((r) => r.attempt_id === payment.id),
        )
      : 0,
  };
}

/** A refund asked for in the dashboard (who: the merchant, the dashboard's environment, the signed-in user; no API key). */
export const requestRefund = (
  db: Db,
  who: RefundRequester,
  request: RefundRequest,
  providers: LiveProviders,
): Promise<RefundRow> => db.transaction((tx) => createRefund(tx, who, request, providers));
