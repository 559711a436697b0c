// The operator console's refunds: the queue of Live refunds of cash and bank transfer payments (Sika does not
// know the payer's account, so an operator transfers the money). The outcome is settleOperatorRefund's.
import type { Queryable } from '../db/index.ts';
import { operatorQueue } from '../refunds/store.ts';
import { paymentsOfRefunds } from './refunds-store.ts';
import { CONSOLE_LIST_ROWS_MAX } from './store.ts';

/** Longest payer account an operator types (a bank account number with its bank, or a wallet number). */
export const PAYER_ACCOUNT_LENGTH_MAX = 120;
/** Longest transfer reference (the bank's or the wallet provider's). */
export const TRANSFER_REFERENCE_LENGTH_MAX = 80;
/** Longest reason an operator gives for a refund that cannot be paid. */
export const OPERATOR_FAIL_REASON_LENGTH_MAX = 500;

/** The queue, oldest first, each refund with its merchant's name and its payment (rail, reference). */
export async function operatorRefundQueue(db: Queryable) {
  const refunds = await operatorQueue(db, CONSOLE_LIST_ROWS_MAX);
  const payments = new Map((await paymentsOfRefunds(db, refunds.map((r) => r.id))).map((p) => [p.refund_id, p]));
  return refunds.map((refund) => ({ refund, payment: payments.get(refund.id)! }));
}
export type QueuedRefund = Awaited<ReturnType<typeof operatorRefundQueue>>[number];
