// The operator console's refunds: the queue of Live refunds of cash and bank transfer payments (Sika does not
// know the payer's account, so an operator transfers the money). The outcome is settleOperatorRefund's.
import type { Queryable } from '../db/index.ts';
import { operatorQueue } from '../refunds/queries.ts';
import {
  finishedRefunds,
  paymentsOfRefunds,
  stuckProviderRefunds,
  type FinishedRefundsQuery,
} from './refunds-store.ts';
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
  const payments = new Map(
    (
      await paymentsOfRefunds(
        db,
        refunds.map((r) => r.id),
      )
    ).map((p) => [p.refund_id, p]),
  );
  return refunds.map((refund) => ({ refund, payment: payments.get(refund.id)! }));
}
export type QueuedRefund = Awaited<ReturnType<typeof operatorRefundQueue>>[number];

/** A Live provider refund still pending this long after it was made is listed as stuck (providers answer within hours). */
export const REFUND_STUCK_AFTER_MS = 24 * 60 * 60 * 1000;

/** Live refunds through a provider still pending after REFUND_STUCK_AFTER_MS, the oldest first, with their age. */
export async function stuckRefunds(db: Queryable, now = new Date()) {
  const rows = await stuckProviderRefunds(db, new Date(now.getTime() - REFUND_STUCK_AFTER_MS), CONSOLE_LIST_ROWS_MAX);
  return rows.map((row) => ({ ...row, age_ms: now.getTime() - row.created_at.getTime() }));
}
export type StuckRefund = Awaited<ReturnType<typeof stuckRefunds>>[number];

/** The filters of the finished refunds' list, each a closed set. */
export const FINISHED_REFUND_FILTERS = { status: ['succeeded', 'failed'], environment: ['live', 'test'] } as const;

/** One page (or, for CSV, every page) of the finished refunds: succeeded or failed, who finished them and when. */
export const finishedRefundsPage = (db: Queryable, query: FinishedRefundsQuery) => finishedRefunds(db, query);
export type { FinishedRefundRow } from './refunds-store.ts';
