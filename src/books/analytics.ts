// The dashboard home's figures (issue 36, item 1): gross, fees, refunds and net per Africa/Accra day over the
// last 7, 30 or 90 days (per hour for today), the payment success rate by method and by MoMo network, the top
// failure reasons, and what of the pending balance clears by a given time. Reads only; SQL in analytics-store.ts.
import type { Queryable } from '../db/index.ts';
import { accraDay, accraMidnight } from '../lib/accra-calendar.ts';
import { isFailureReason, type FailureReason } from '../lib/payment-failures.ts';
import * as store from './analytics-store.ts';
import type { BooksOwner } from './service.ts';

/** The ranges home offers: today per hour, or the last 7, 30 or 90 Accra days (today included) per day. */
export const HOME_RANGES = ['today', '7d', '30d', '90d'] as const;
export type HomeRange = (typeof HOME_RANGES)[number];
export const HOME_RANGE_DEFAULT: HomeRange = '30d';
const RANGE_DAYS: Record<HomeRange, number> = { today: 1, '7d': 7, '30d': 30, '90d': 90 };
/** How many failure reasons home lists. */
export const FAILURE_REASONS_SHOWN = 5;

const HOURS_PER_DAY = 24;
const DAY_MS = 86_400_000;

/** One bar of the chart and one row of its table. */
export interface Bucket {
  /** 'YYYY-MM-DD' (a day) or 'HH' (an hour of today), Africa/Accra. */
  key: string;
  gross_minor: number;
  fees_minor: number;
  refunds_minor: number;
  /** gross - fees - refunds: what the merchant kept. */
  net_minor: number;
  payments: number;
}

/** Of the attempts that ended in the range, how many ended paid. */
export interface SuccessRate {
  key: string;
  paid: number;
  ended: number;
}

export interface FailureCount {
  /** null: the provider gave no reason (or the attempt expired or was reversed without one). */
  reason: FailureReason | null;
  attempts: number;
}

export interface HomeAnalytics {
  range: HomeRange;
  unit: 'day' | 'hour';
  /** The range's first instant and the instant after its last (Accra midnights). */
  from: Date;
  before: Date;
  buckets: Bucket[];
  totals: Omit<Bucket, 'key'>;
  byMethod: SuccessRate[];
  byNetwork: SuccessRate[];
  failures: FailureCount[];
}

/** The Accra day `days` after `day` ('YYYY-MM-DD'; calendar arithmetic, no zone involved). */
function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The bucket keys of a range in order, and its bounds. */
export function rangeBuckets(range: HomeRange, now: Date) {
  const today = accraDay(now);
  const first = addDays(today, 1 - RANGE_DAYS[range]);
  const from = accraMidnight(first);
  const before = accraMidnight(addDays(today, 1));
  const keys =
    range === 'today'
      ? Array.from({ length: HOURS_PER_DAY }, (_, hour) => String(hour).padStart(2, '0'))
      : Array.from({ length: RANGE_DAYS[range] }, (_, i) => addDays(first, i));
  return { from, before, keys, unit: range === 'today' ? ('hour' as const) : ('day' as const) };
}

// An attempt that ended paid counts as paid; every other end (failed, expired, cancelled, reversed, held for
// review, the wrong amount) is an attempt that did not get the merchant paid.
const rate = (rows: store.OutcomeCountRow[], keyOf: (row: store.OutcomeCountRow) => string | null) => {
  const rates = new Map<string, SuccessRate>();
  for (const row of rows) {
    const key = keyOf(row);
    if (key === null) continue;
    const r = rates.get(key) ?? { key, paid: 0, ended: 0 };
    r.ended += row.attempts;
    if (row.status === 'paid') r.paid += row.attempts;
    rates.set(key, r);
  }
  return [...rates.values()].sort((a, b) => b.ended - a.ended || a.key.localeCompare(b.key));
};

function topFailures(rows: store.OutcomeCountRow[]): FailureCount[] {
  const counts = new Map<FailureReason | null, number>();
  for (const row of rows) {
    if (row.status === 'paid') continue;
    const reason = isFailureReason(row.failure_reason) ? row.failure_reason : null;
    counts.set(reason, (counts.get(reason) ?? 0) + row.attempts);
  }
  return [...counts.entries()]
    .map(([reason, attempts]) => ({ reason, attempts }))
    .sort((a, b) => b.attempts - a.attempts || String(a.reason).localeCompare(String(b.reason)))
    .slice(0, FAILURE_REASONS_SHOWN);
}

/** Home's figures for the owner over the range ending today (Africa/Accra). */
export async function homeAnalytics(
  db: Queryable,
  owner: BooksOwner,
  range: HomeRange,
  now = new Date(),
): Promise<HomeAnalytics> {
  const { from, before, keys, unit } = rangeBuckets(range, now);
  const scope = { merchantId: owner.merchantId, environment: owner.environment, from, before };
  const format = unit === 'hour' ? 'HH24' : 'YYYY-MM-DD';
  const [payments, refunds, outcomes] = await Promise.all([
    store.paymentBuckets(db, scope, format),
    store.refundBuckets(db, scope, format),
    store.outcomeCounts(db, scope),
  ]);
  const paidBy = new Map(payments.map((p) => [p.bucket, p]));
  const refundedBy = new Map(refunds.map((r) => [r.bucket, r.refunds_minor]));
  const buckets = keys.map((key): Bucket => {
    const paid = paidBy.get(key);
    const gross = paid?.gross_minor ?? 0;
    const fees = paid?.fees_minor ?? 0;
    const refunded = refundedBy.get(key) ?? 0;
    return {
      key,
      gross_minor: gross,
      fees_minor: fees,
      refunds_minor: refunded,
      net_minor: gross - fees - refunded,
      payments: paid?.payments ?? 0,
    };
  });
  const totals = buckets.reduce(
    (sum, b) => ({
      gross_minor: sum.gross_minor + b.gross_minor,
      fees_minor: sum.fees_minor + b.fees_minor,
      refunds_minor: sum.refunds_minor + b.refunds_minor,
      net_minor: sum.net_minor + b.net_minor,
      payments: sum.payments + b.payments,
    }),
    { gross_minor: 0, fees_minor: 0, refunds_minor: 0, net_minor: 0, payments: 0 },
  );
  return {
    range,
    unit,
    from,
    before,
    buckets,
    totals,
    byMethod: rate(outcomes, (row) => row.rail),
    byNetwork: rate(outcomes, (row) => (row.rail === 'momo' ? row.network : null)),
    failures: topFailures(outcomes),
  };
}

/**
 * What a settlement at `at` would pay as far as the books can tell now: the available balance plus what of the
 * pending balance clears by then (payments still to come are not counted).
 */
export async function expectedSettlementMinor(
  db: Queryable,
  owner: BooksOwner,
  availableMinor: number,
  at: Date,
): Promise<number> {
  return availableMinor + (await store.clearingBy(db, owner.merchantId, owner.environment, at));
}
