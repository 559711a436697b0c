// The daily reconciliation's types and pure rules (docs/reconciliation.md): an Africa/Accra day, Sika's
// Live records of a provider that day, the provider's own report, and the differences between the two.
import { formatGhs } from '../lib/ghana.ts';
import type { ReportedStatus, ReportedTransaction } from '../rails/reports.ts';

/** An amount as an operator reads it: GHS 1,234.50; another currency in its minor units, named. */
export const amountText = (amountMinor: number, currency: string) =>
  currency === 'GHS' ? formatGhs(amountMinor) : `${amountMinor} ${currency || '(no currency)'} minor units`;

export const RECONCILIATION_PROVIDERS = ['paystack', 'mtn_momo', 'bank_transfer'] as const;
export type ReconciliationProvider = (typeof RECONCILIATION_PROVIDERS)[number];

export const PROVIDER_LABELS: Record<ReconciliationProvider, string> = {
  paystack: 'Paystack',
  mtn_momo: 'MTN MoMo',
  bank_transfer: 'Bank transfers',
};

export const isReconciliationProvider = (value: string): value is ReconciliationProvider =>
  (RECONCILIATION_PROVIDERS as readonly string[]).includes(value);

/** Days a reconciliation may be asked for: before 2000 Sika did not exist; after 2999 is a typo. */
const DAY_YEAR_MIN = 2000;
const DAY_YEAR_MAX = 2999;
/** A provider's report is read from this long before the day, so a charge created late the day before and paid on the day is in it. */
export const REPORT_LOOKBACK_MS = 24 * 60 * 60 * 1000;

/** One Africa/Accra calendar day: [start, end). */
export interface AccraDay {
  day: string;
  start: Date;
  end: Date;
}

const accraDate = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'Africa/Accra',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});
const accraClock = new Intl.DateTimeFormat('en-US', {
  timeZone: 'Africa/Accra',
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
});

/** The Accra calendar day of an instant, YYYY-MM-DD. */
export const accraDayOf = (at: Date): string => accraDate.format(at);

/** Accra's offset from UTC at an instant (zero since 1918, but read from the time zone data, not assumed). */
function accraOffsetMs(at: Date): number {
  const parts = Object.fromEntries(accraClock.formatToParts(at).map((part) => [part.type, Number(part.value)]));
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return wall - (at.getTime() - at.getMilliseconds());
}

/** A YYYY-MM-DD day that exists in the calendar, or null. */
export function parseDay(raw: string): AccraDay | null {
  const found = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw);
  if (!found) return null;
  const [year, month, day] = [Number(found[1]), Number(found[2]), Number(found[3])];
  if (year < DAY_YEAR_MIN || year > DAY_YEAR_MAX) return null;
  const midnightUtc = Date.UTC(year, month - 1, day);
  if (new Date(midnightUtc).toISOString().slice(0, 10) !== raw) return null;
  const start = new Date(midnightUtc - accraOffsetMs(new Date(midnightUtc)));
  const nextUtc = midnightUtc + 24 * 60 * 60 * 1000;
  const end = new Date(nextUtc - accraOffsetMs(new Date(nextUtc)));
  return { day: raw, start, end };
}

/** Yesterday in Accra: the default day (today's records are still arriving). */
export const yesterdayInAccra = (now: Date): string => accraDayOf(new Date(now.getTime() - 24 * 60 * 60 * 1000));

/** One Live attempt or payout as Sika recorded it. */
export interface SikaRecord {
  kind: 'collection' | 'payout';
  /** att_... or po_... */
  id: string;
  merchantId: string;
  merchantName: string;
  /** Our reference with the provider. */
  reference: string;
  /** Sika's status (paid, returned, failed, pending ...). */
  status: string;
  /** What the provider should report for it: paid, or reversed for a payout returned later. Null when Sika holds it unpaid. */
  expected: ReportedStatus | null;
  amountMinor: number;
  currency: string;
  /** When Sika recorded it paid (finalized_at of an attempt, paid_at of a payout). */
  paidAt: Date | null;
  /** The provider's word at Sika's last status check (an attempt's raw_status), and how many checks were made. */
  lastCheck: { rawStatus: string; checks: number; at: Date } | null;
}

export type DifferenceKind =
  | 'missing_at_provider'
  | 'missing_in_sika'
  | 'status_differs'
  | 'amount_differs'
  | 'other_day';

export interface Difference {
  kind: DifferenceKind;
  /** Our reference with the provider (or a statement line's payment reference / narration). */
  reference: string;
  sika: SikaRecord | null;
  provider: ReportedTransaction | null;
  /** A statement line's id, for bank transfers. */
  lineId?: string;
  note: string;
}

export interface Matched {
  sika: SikaRecord;
  provider: ReportedTransaction | null;
  lineId?: string;
}

export interface Totals {
  count: number;
  amountMinor: number;
}
export interface SideTotals {
  collections: Totals;
  payouts: Totals;
}

export function totalsOf(items: ReadonlyArray<{ kind: 'collection' | 'payout'; amountMinor: number }>): SideTotals {
  const totals: SideTotals = { collections: { count: 0, amountMinor: 0 }, payouts: { count: 0, amountMinor: 0 } };
  for (const item of items) {
    const side = item.kind === 'collection' ? totals.collections : totals.payouts;
    side.count++;
    side.amountMinor += item.amountMinor;
  }
  return totals;
}

const keyOf = (item: { kind: string; reference: string }) => `${item.kind}:${item.reference}`;
const within = (day: AccraDay, at: Date | null) => at !== null && at >= day.start && at < day.end;
/** Reported records that moved money (paid, or paid and later reversed). */
export const movedMoney = (item: ReportedTransaction) => item.status === 'paid' || item.status === 'reversed';

/** A record whose status the report contradicts. */
const statusDiffers = (reference: string, record: SikaRecord, item: ReportedTransaction): Difference => ({
  kind: 'status_differs',
  reference,
  sika: record,
  provider: item,
  note: `Sika: ${record.status}; provider: ${item.rawStatus}`,
});

/** A record the report gives another amount or currency. */
const amountDiffers = (reference: string, record: SikaRecord, item: ReportedTransaction): Difference => ({
  kind: 'amount_differs',
  reference,
  sika: record,
  provider: item,
  note: `Sika: ${amountText(record.amountMinor, record.currency)}; provider: ${amountText(item.amountMinor, item.currency)}`,
});

/** A record of the day the report does not list. */
const missingAtProvider = (record: SikaRecord): Difference => ({
  kind: 'missing_at_provider',
  reference: record.reference,
  sika: record,
  provider: null,
  note: `Sika recorded it ${record.status}; the provider's report does not list it`,
});

/** A record the report lists (it moved money that day) and Sika does not hold at all. */
const missingInSika = (item: ReportedTransaction): Difference => ({
  kind: 'missing_in_sika',
  reference: item.reference,
  sika: null,
  provider: item,
  note: `The provider reports it ${item.rawStatus}; Sika has no ${item.kind === 'collection' ? 'attempt' : 'payout'} with this reference`,
});

/** A record the report lists on this day that Sika holds, agreeing, as paid on another day. */
const otherDay = (record: SikaRecord, item: ReportedTransaction): Difference => ({
  kind: 'other_day',
  reference: item.reference,
  sika: record,
  provider: item,
  note: `Sika recorded it paid on ${record.paidAt ? accraDayOf(record.paidAt) : 'no day'}`,
});

/**
 * A record both Sika and the report hold: the status first (does the report's agree with what Sika
 * expects?), then the amount and currency; null when both agree.
 */
function pairDifference(
  reference: string,
  record: SikaRecord,
  item: ReportedTransaction,
  statusAgrees: boolean,
): Difference | null {
  if (!statusAgrees) return statusDiffers(reference, record, item);
  if (item.amountMinor !== record.amountMinor || item.currency !== record.currency)
    return amountDiffers(reference, record, item);
  return null;
}

export interface Comparison {
  matched: Matched[];
  differences: Difference[];
  /** The report's records of the day that moved money (what the provider's totals count). */
  providerOfDay: ReportedTransaction[];
}

/**
 * Sika's records of the day against a provider's report of a window around it. `known` holds Sika's records
 * (of any day, any status) for the report's references that are not among the day's, so a record the
 * provider reports but Sika holds unpaid or paid on another day is told apart from one Sika never had.
 */
export function compareWithReport(
  day: AccraDay,
  sika: readonly SikaRecord[],
  report: readonly ReportedTransaction[],
  known: readonly SikaRecord[],
): Comparison {
  const reported = new Map(report.map((item) => [keyOf(item), item]));
  const knownByKey = new Map(known.map((record) => [keyOf(record), record]));
  const used = new Set<string>();
  const matched: Matched[] = [];
  const differences: Difference[] = [];

  for (const record of sika) {
    const key = keyOf(record);
    const item = reported.get(key) ?? null;
    if (!item) {
      differences.push(missingAtProvider(record));
      continue;
    }
    used.add(key);
    const difference = pairDifference(record.reference, record, item, item.status === record.expected);
    if (difference) differences.push(difference);
    else matched.push({ sika: record, provider: item });
  }

  const providerOfDay = report.filter((item) => movedMoney(item) && within(day, item.settledAt));
  for (const item of providerOfDay) {
    const key = keyOf(item);
    if (used.has(key)) continue;
    const record = knownByKey.get(key) ?? null;
    if (!record) differences.push(missingInSika(item));
    else
      differences.push(
        pairDifference(item.reference, record, item, record.expected !== null) ?? otherDay(record, item),
      );
  }
  return { matched, differences, providerOfDay };
}

/** A credit line of the collection account's statement, as the bank transfer reconciliation shows it. */
export interface StatementLine {
  id: string;
  bankCode: string;
  lineNumber: number;
  valueDate: string;
  amountMinor: number;
  narration: string;
  status: string;
  paymentReference: string | null;
  attemptId: string | null;
  /** Why it is unmatched or mismatched, or the operator's note once resolved. */
  note: string;
}

/** What stands on the provider's side of the page. */
export type ProviderSide =
  /** The provider's report was read in full: its totals of the day's records that moved money. */
  | { state: 'report'; totals: SideTotals; records: number }
  /** The provider has a report but it could not be read now (5xx, no answer, too long): nothing is claimed. */
  | { state: 'unavailable'; reason: string }
  /** The provider is not configured here. */
  | { state: 'not_configured'; reason: string }
  /** The provider offers no report at all (MTN MoMo): Sika's records are listed, never claimed to match. */
  | { state: 'no_report'; reason: string }
  /**
   * Bank transfers: the statement lines of the day of the configured collection accounts (lines of voided
   * imports left out), their totals in all and per account, and how many lines of other accounts (a
   * statement imported under the wrong bank before imports were limited to collection accounts) were left out.
   */
  | {
      state: 'statement';
      totals: SideTotals;
      accounts: AccountTotals[];
      lines: StatementLine[];
      otherAccountLines: number;
    };

/** One collection account's statement credits of the day. */
export interface AccountTotals {
  bankCode: string;
  label: string;
  totals: Totals;
}

/**
 * One row per difference: a record named by several differences (a mismatched credit whose payment was then
 * approved, so it is also "paid in Sika, no statement line") is one row, its notes joined, its first kind kept.
 */
export function oneRowPerRecord(differences: readonly Difference[]): Difference[] {
  const rows: Difference[] = [];
  const byRecord = new Map<string, Difference>();
  for (const difference of differences) {
    const key = difference.sika ? `${difference.sika.kind}:${difference.sika.id}` : null;
    const earlier = key ? byRecord.get(key) : undefined;
    if (earlier) {
      earlier.note = `${earlier.note}; ${difference.note.charAt(0).toLowerCase()}${difference.note.slice(1)}`;
      earlier.lineId ??= difference.lineId;
      earlier.provider ??= difference.provider;
      continue;
    }
    const row = { ...difference };
    rows.push(row);
    if (key) byRecord.set(key, row);
  }
  return rows;
}

/** Whether neither side has a single record for the day (said as such, never as "everything matched"). */
export function noRecordsEitherSide(r: Pick<Reconciliation, 'sika' | 'side' | 'matched' | 'differences'>): boolean {
  if (r.sika.length > 0 || r.matched.length > 0 || r.differences.length > 0) return false;
  switch (r.side.state) {
    case 'report':
      return r.side.records === 0 && r.side.totals.collections.count + r.side.totals.payouts.count === 0;
    case 'statement':
      return r.side.lines.length === 0;
    default:
      return true;
  }
}

export interface Reconciliation {
  provider: ReconciliationProvider;
  day: AccraDay;
  sika: SikaRecord[];
  sikaTotals: SideTotals;
  /** More records than the page reads (RECONCILIATION_ROWS_MAX): the totals count only those read. */
  truncated: boolean;
  side: ProviderSide;
  matched: Matched[];
  differences: Difference[];
}
