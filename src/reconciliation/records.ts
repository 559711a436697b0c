// Sika's side of a reconciliation: its Live attempts and payouts of a provider, read from the store and
// shaped as records to compare (what the provider should report for each).
import type { Queryable } from '../db/index.ts';
import type { AccraDay, SikaRecord } from './model.ts';
import {
  attemptsByReferences,
  paidAttemptsBetween,
  paidPayoutsBetween,
  payoutsByReferences,
  RECONCILIATION_ROWS_MAX,
  type AttemptRecordRow,
  type PayoutRecordRow,
} from './store.ts';

export function fromAttempt(row: AttemptRecordRow): SikaRecord {
  return {
    kind: 'collection',
    id: row.id,
    merchantId: row.merchant_id,
    merchantName: row.merchant_name,
    reference: row.provider_reference,
    status: row.status,
    expected: row.status === 'paid' ? 'paid' : row.status === 'reversed' ? 'reversed' : null,
    amountMinor: row.amount_charged_minor,
    currency: row.currency,
    paidAt: row.status === 'paid' ? row.finalized_at : null,
    lastCheck: { rawStatus: row.raw_status, checks: row.status_checks, at: row.updated_at },
  };
}

export function fromPayout(row: PayoutRecordRow): SikaRecord {
  return {
    kind: 'payout',
    id: row.id,
    merchantId: row.merchant_id,
    merchantName: row.merchant_name,
    reference: row.provider_reference,
    status: row.status,
    // A payout returned after it was paid was paid that day: the provider reports the transfer reversed.
    expected: row.status === 'paid' ? 'paid' : row.status === 'returned' ? 'reversed' : null,
    amountMinor: row.amount_minor,
    currency: row.currency,
    paidAt: row.paid_at,
    lastCheck: { rawStatus: row.status, checks: row.status_checks, at: row.updated_at },
  };
}

/** The provider's Live attempts paid on the day (by finalized_at) and payouts paid on the day (by paid_at). */
export async function paidRecordsOfDay(
  db: Queryable,
  provider: string,
  day: AccraDay,
  options: { payouts: boolean },
): Promise<{ records: SikaRecord[]; truncated: boolean }> {
  const [attempts, payouts] = await Promise.all([
    paidAttemptsBetween(db, provider, day.start, day.end),
    options.payouts ? paidPayoutsBetween(db, provider, day.start, day.end) : Promise.resolve([]),
  ]);
  const truncated = attempts.length > RECONCILIATION_ROWS_MAX || payouts.length > RECONCILIATION_ROWS_MAX;
  const records = [
    ...attempts.slice(0, RECONCILIATION_ROWS_MAX).map(fromAttempt),
    ...payouts.slice(0, RECONCILIATION_ROWS_MAX).map(fromPayout),
  ];
  return { records, truncated };
}

/** Sika's records of the provider by our references with it, whatever their day or status. */
export async function recordsByReferences(
  db: Queryable,
  provider: string,
  references: { collections: string[]; payouts: string[] },
): Promise<SikaRecord[]> {
  const [attempts, payouts] = await Promise.all([
    references.collections.length > 0
      ? attemptsByReferences(db, provider, references.collections)
      : Promise.resolve([]),
    references.payouts.length > 0 ? payoutsByReferences(db, provider, references.payouts) : Promise.resolve([]),
  ]);
  return [...attempts.map(fromAttempt), ...payouts.map(fromPayout)];
}
