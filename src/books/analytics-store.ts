// The dashboard home's figures (issue 36): its SQL. Reads checkout's payment_attempts, the refunds table and the
// ledger's clearings, never writes. Every query is bounded by the merchant, the environment and the range, so it
// reads one merchant's rows of those days and no more. Buckets are Africa/Accra days ('YYYY-MM-DD') or, for
// today, Accra hours ('HH24'): the format is handed in, the zone is the books' one.
import type { Queryable } from '../db/index.ts';
import { firstValue } from '../db/first-row.ts';
import { BOOKS_TIME_ZONE } from './model.ts';

/** How a bucket is named: an Accra day, or an hour of the Accra day. */
export type BucketFormat = 'YYYY-MM-DD' | 'HH24';

export interface AnalyticsScope {
  merchantId: string;
  environment: string;
  from: Date;
  before: Date;
}

export interface PaymentBucketRow {
  bucket: string;
  gross_minor: number;
  fees_minor: number;
  payments: number;
}

export interface RefundBucketRow {
  bucket: string;
  refunds_minor: number;
}

/** Attempts of the range counted by how they ended (pending ones are left out: they have not ended). */
export interface OutcomeCountRow {
  rail: string;
  network: string | null;
  status: string;
  failure_reason: string | null;
  attempts: number;
}

// An attempt belongs to the Accra day it was made on (a payment is decided within minutes of its attempt).
// What a payment charged is amount_charged_minor (the payer's total) and its fee fee_minor: charged - fee is
// what the merchant was credited, whoever bore the fee.
const PAYMENT_BUCKETS = `
  SELECT to_char(a.created_at AT TIME ZONE '${BOOKS_TIME_ZONE}', $5) AS bucket,
         sum(a.amount_charged_minor)::bigint AS gross_minor, sum(a.fee_minor)::bigint AS fees_minor,
         count(*)::int AS payments
    FROM payment_attempts a
   WHERE a.merchant_id = $1 AND a.environment = $2 AND a.created_at >= $3 AND a.created_at < $4 AND a.status = 'paid'
   GROUP BY 1`;

/** Gross charged, fees and the number of successful payments per bucket (buckets with none are absent). */
export async function paymentBuckets(db: Queryable, scope: AnalyticsScope, format: BucketFormat) {
  const rows = await db.query<PaymentBucketRow>(PAYMENT_BUCKETS, [
    scope.merchantId,
    scope.environment,
    scope.from,
    scope.before,
    format,
  ]);
  return rows.map((r) => ({
    bucket: r.bucket,
    gross_minor: Number(r.gross_minor),
    fees_minor: Number(r.fees_minor),
    payments: Number(r.payments),
  }));
}

// A refund counts on the day it was asked for, once it succeeded (refunds_list_idx bounds the read).
const REFUND_BUCKETS = `
  SELECT to_char(r.created_at AT TIME ZONE '${BOOKS_TIME_ZONE}', $5) AS bucket, sum(r.amount_minor)::bigint AS refunds_minor
    FROM refunds r
   WHERE r.merchant_id = $1 AND r.environment = $2 AND r.created_at >= $3 AND r.created_at < $4 AND r.status = 'succeeded'
   GROUP BY 1`;

/** Succeeded refunds per bucket. */
export async function refundBuckets(db: Queryable, scope: AnalyticsScope, format: BucketFormat) {
  const rows = await db.query<RefundBucketRow>(REFUND_BUCKETS, [
    scope.merchantId,
    scope.environment,
    scope.from,
    scope.before,
    format,
  ]);
  return rows.map((r) => ({ bucket: r.bucket, refunds_minor: Number(r.refunds_minor) }));
}

const OUTCOME_COUNTS = `
  SELECT a.rail, a.network, a.status, a.failure_reason, count(*)::int AS attempts
    FROM payment_attempts a
   WHERE a.merchant_id = $1 AND a.environment = $2 AND a.created_at >= $3 AND a.created_at < $4 AND a.status <> 'pending'
   GROUP BY 1, 2, 3, 4`;

/** The range's ended attempts counted per rail, network, status and failure reason: one read for rates and reasons. */
export async function outcomeCounts(db: Queryable, scope: AnalyticsScope): Promise<OutcomeCountRow[]> {
  const rows = await db.query<OutcomeCountRow>(OUTCOME_COUNTS, [
    scope.merchantId,
    scope.environment,
    scope.from,
    scope.before,
  ]);
  return rows.map((r) => ({ ...r, attempts: Number(r.attempts) }));
}

// A credit still clearing becomes available on available_on, less the part the rolling reserve keeps
// (ledger_clearings_due_idx reads exactly these rows).
const CLEARING_BY = `
  SELECT coalesce(sum(c.amount_minor - c.reserve_minor), 0)::bigint AS amount_minor
    FROM ledger_clearings c
   WHERE c.merchant_id = $1 AND c.environment = $2 AND c.cleared_at IS NULL AND c.reversed_at IS NULL
     AND c.available_on <= $3`;

/** What of the pending balance clears by `at`. */
export async function clearingBy(db: Queryable, merchantId: string, environment: string, at: Date): Promise<number> {
  const rows = db.query<{ amount_minor: number | string }>(CLEARING_BY, [merchantId, environment, at]);
  return Number((await firstValue(rows, 'amount_minor')) ?? 0);
}
