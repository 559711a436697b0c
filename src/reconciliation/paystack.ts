// Paystack's day: Sika's paid Live attempts and payouts through Paystack against Paystack's transactions
// and transfers lists (src/rails/paystack/reports.ts). The lists are read outside any transaction, after
// Sika's records; when Paystack cannot answer in full the page says so and claims nothing.
import type { Queryable } from '../db/index.ts';
import type { ProviderReports, ReportedTransaction } from '../rails/reports.ts';
import {
  compareWithReport,
  movedMoney,
  REPORT_LOOKBACK_MS,
  totalsOf,
  type AccraDay,
  type Reconciliation,
} from './model.ts';
import { paidRecordsOfDay, recordsByReferences } from './records.ts';

const PROVIDER = 'paystack' as const;

export async function reconcilePaystack(
  db: Queryable,
  reports: ProviderReports | null,
  day: AccraDay,
): Promise<Reconciliation> {
  const { records, truncated } = await paidRecordsOfDay(db, PROVIDER, day, { payouts: true });
  const base = {
    provider: PROVIDER,
    day,
    sika: records,
    sikaTotals: totalsOf(records),
    truncated,
    matched: [],
    differences: [],
  } satisfies Omit<Reconciliation, 'side'>;
  if (!reports)
    return {
      ...base,
      side: { state: 'not_configured', reason: 'Paystack is not configured on this Sika (PAYSTACK_SECRET_KEY).' },
    };

  let report: ReportedTransaction[];
  try {
    report = await reports.transactions({ from: new Date(day.start.getTime() - REPORT_LOOKBACK_MS), to: day.end });
  } catch (error) {
    return { ...base, side: { state: 'unavailable', reason: (error as Error).message } };
  }

  // Sika's own records of what Paystack reports for the day but is not among the day's paid records.
  const ofDay = new Set(records.map((record) => `${record.kind}:${record.reference}`));
  const others = report.filter((item) => movedMoney(item) && !ofDay.has(`${item.kind}:${item.reference}`));
  const known = await recordsByReferences(db, PROVIDER, {
    collections: others.filter((item) => item.kind === 'collection').map((item) => item.reference),
    payouts: others.filter((item) => item.kind === 'payout').map((item) => item.reference),
  });
  const comparison = compareWithReport(day, records, report, known);
  return {
    ...base,
    side: { state: 'report', totals: totalsOf(comparison.providerOfDay), records: comparison.providerOfDay.length },
    matched: comparison.matched,
    differences: comparison.differences,
  };
}
