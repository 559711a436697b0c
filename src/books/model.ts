// The merchant's books (issue 17): balance transactions (every movement of the available balance, one row
// of balance_transactions each), their types, ids and amounts, the Africa/Accra day ranges of exports and
// the daily settlement summary. Pure: no I/O here.
import type { EntryKind } from '../ledger/model.ts';
import { errors } from '../lib/errors.ts';

export const BALANCE_TRANSACTION_LIMIT_DEFAULT = 20;
export const BALANCE_TRANSACTION_LIMIT_MAX = 100;

/** The merchant's days are Ghana's (GMT all year: no daylight saving since 1942); the zone is named, never assumed. */
export const BOOKS_TIME_ZONE = 'Africa/Accra';
/** The longest range an export or a summary covers, in days (from and to inclusive). */
export const EXPORT_RANGE_DAYS_MAX = 366;
/** Rows read per keyset page while an export streams (memory stays one page, whatever the range holds). */
export const EXPORT_PAGE_ROWS = 2_000;

/**
 * What a movement was, from the journal entry that made it. Only entries that moved the balance (available +
 * pending, issue 34) are rows.
 */
export const BALANCE_TRANSACTION_TYPES = [
  'payment',
  'payment_reversal',
  'payout',
  'payout_release',
  'payout_return',
  'refund',
  'refund_release',
  'reserve',
  'reserve_release',
] as const;
export type BalanceTransactionType = (typeof BALANCE_TRANSACTION_TYPES)[number];

// payout_post and refund_post move held money (never available), so they are never rows; nor is payment_cleared
// (issue 34): it moves a credit from pending to available, both in the balance. A reserve held or released is one.
const TYPE_OF_KIND: Partial<Record<EntryKind, BalanceTransactionType>> = {
  payment_credit: 'payment',
  payment_reversal: 'payment_reversal',
  payout_hold: 'payout',
  payout_paid: 'payout',
  payout_void: 'payout_release',
  payout_return: 'payout_return',
  refund_hold: 'refund',
  refund_void: 'refund_release',
  reserve_hold: 'reserve',
  reserve_release: 'reserve_release',
};

export function typeOfKind(kind: EntryKind): BalanceTransactionType {
  const type = TYPE_OF_KIND[kind];
  // A journal entry on available of a kind not mapped here is a bug (a new kind needs its type).
  if (!type) throw new Error(`books assertion failed: entry kind ${kind} moved the available balance`);
  return type;
}

/**
 * Issue 34: pending while its money is still clearing (a payment credit whose available_on has not come and
 * that has not cleared), else available.
 */
export const BALANCE_TRANSACTION_STATUSES = ['pending', 'available'] as const;
export type BalanceTransactionStatus = (typeof BALANCE_TRANSACTION_STATUSES)[number];

export const kindsOfType = (type: BalanceTransactionType): EntryKind[] =>
  (Object.keys(TYPE_OF_KIND) as EntryKind[]).filter((kind) => TYPE_OF_KIND[kind] === type);

// ---------- ids ----------

/** A balance transaction's id: txn_ and its journal entry's id (one row per entry), hex without dashes. */
export const balanceTransactionId = (entryId: string): string => `txn_${entryId.replace(/-/g, '').toLowerCase()}`;

/** The journal entry id inside a balance transaction id, or null when it is not one. */
export function entryIdOf(id: string): string | null {
  const match = /^txn_([0-9a-f]{32})$/.exec(id);
  if (!match) return null;
  const hex = match[1]!;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// ---------- rows ----------

/** One movement as stored (balance_transactions with its entry, its fee and its source). */
export interface BalanceTransactionRow {
  seq: number;
  entry_id: string;
  kind: EntryKind;
  reference_type: 'payment' | 'payout' | 'refund';
  reference_id: string;
  /** The checkout session of a payment's attempt (null for payouts and refunds). */
  session_id: string | null;
  net_minor: number;
  fee_minor: number;
  balance_after_minor: number;
  created_at: Date;
  /** When its money is (or was) available: a clearing payment credit's available_on, else created_at (issue 34). */
  available_on: Date;
  status: BalanceTransactionStatus;
  /** The settlement that paid this movement out (settlement_transactions), else null; never the settlement's own movement. */
  payout_id: string | null;
  /** The payment's provider transaction id and card (migration 033), for the export; null when none or not a payment. */
  provider_transaction_id?: string | null;
  card_brand?: string | null;
  card_last4?: string | null;
}

/**
 * The API's balance transaction. net is the change of available; fee is what Sika kept (negative when a fee
 * comes back: a reversal, a released or returned payout); amount = net + fee, so net = amount - fee always.
 */
export function toBalanceTransaction(row: BalanceTransactionRow) {
  return {
    id: balanceTransactionId(row.entry_id),
    object: 'balance_transaction' as const,
    type: typeOfKind(row.kind),
    amount_minor: row.net_minor + row.fee_minor,
    fee_minor: row.fee_minor,
    net_minor: row.net_minor,
    currency: 'GHS' as const,
    source: {
      type: row.reference_type,
      id: row.reference_id,
      ...(row.reference_type === 'payment' ? { session_id: row.session_id } : {}),
    },
    balance_after_minor: row.balance_after_minor,
    available_on: row.available_on.toISOString(),
    status: row.status,
    payout_id: row.payout_id,
    created_at: row.created_at.toISOString(),
  };
}
export type BalanceTransaction = ReturnType<typeof toBalanceTransaction>;

// ---------- Accra days ----------

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

/** The zone's offset from UTC at an instant, in minutes (Intl's tz data: the same IANA zone PostgreSQL uses). */
function zoneOffsetMinutes(at: Date): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: BOOKS_TIME_ZONE,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const asUtc = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
  return Math.round((asUtc - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
}

/** A YYYY-MM-DD that is a real calendar day, as its UTC midnight in ms; null otherwise. */
function calendarDayMs(day: string): number | null {
  const match = DAY_PATTERN.exec(day);
  if (!match) return null;
  const [year, month, date] = [Number(match[1]), Number(match[2]), Number(match[3])];
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999, and format: date accepts 0001-01-01.
  const back = new Date(0);
  const ms = back.setUTCFullYear(year, month - 1, date);
  return back.getUTCFullYear() === year && back.getUTCMonth() === month - 1 && back.getUTCDate() === date ? ms : null;
}

/** The instant an Accra day begins. */
export function dayStart(day: string): Date {
  const utcMidnight = calendarDayMs(day);
  if (utcMidnight === null) throw new Error(`books assertion failed: ${day} is not a day`);
  return new Date(utcMidnight - zoneOffsetMinutes(new Date(utcMidnight)) * 60_000);
}

const dayAfter = (day: string): string => new Date(calendarDayMs(day)! + DAY_MS).toISOString().slice(0, 10);

/** The Accra day an instant falls on. */
export function dayOf(at: Date): string {
  return new Date(at.getTime() + zoneOffsetMinutes(at) * 60_000).toISOString().slice(0, 10);
}

export interface DayRange {
  from: string;
  to: string;
  /** Each day from `from` to `to`, in order. */
  days: string[];
  /** Where each day begins, and where the last one ends (days.length + 1 instants). */
  bounds: Date[];
}

/** from and to (YYYY-MM-DD, Accra days, inclusive), both required, at most EXPORT_RANGE_DAYS_MAX days. 400 otherwise. */
export function parseDayRange(from: string | undefined, to: string | undefined): DayRange {
  const bad = (field: string, message: string) =>
    errors.invalidArgument(
      `An export covers Africa/Accra days from \`from\` to \`to\` (YYYY-MM-DD, inclusive, at most ${EXPORT_RANGE_DAYS_MAX} days): ${field} ${message}.`,
      [{ field, message }],
    );
  if (from === undefined) throw bad('from', 'is required');
  if (to === undefined) throw bad('to', 'is required');
  const fromMs = calendarDayMs(from);
  const toMs = calendarDayMs(to);
  if (fromMs === null) throw bad('from', 'must be a calendar day as YYYY-MM-DD');
  if (toMs === null) throw bad('to', 'must be a calendar day as YYYY-MM-DD');
  if (toMs < fromMs) throw bad('to', 'must not be before from');
  const count = (toMs - fromMs) / DAY_MS + 1;
  if (count > EXPORT_RANGE_DAYS_MAX)
    throw bad('to', `must be at most ${EXPORT_RANGE_DAYS_MAX} days after from (counting both)`);
  const days = [from];
  while (days.length < count) days.push(dayAfter(days.at(-1)!));
  return { from, to, days, bounds: [...days.map(dayStart), dayStart(dayAfter(to))] };
}

// ---------- the settlement summary ----------

/** Each type's column in the summary: its amounts (gross; fees apart in fees_minor). */
export const SUMMARY_AMOUNT_COLUMNS: Record<BalanceTransactionType, string> = {
  payment: 'payments_minor',
  payment_reversal: 'payment_reversals_minor',
  refund: 'refunds_minor',
  refund_release: 'refund_releases_minor',
  payout: 'payouts_minor',
  payout_release: 'payout_releases_minor',
  payout_return: 'payout_returns_minor',
  reserve: 'reserves_minor',
  reserve_release: 'reserve_releases_minor',
};

/** What one period's movements of one kind add up to (store.periodTotals). */
export interface PeriodKindTotal {
  /** 1 for the first period (bounds[0] to bounds[1]), and so on. */
  period: number;
  kind: EntryKind;
  count: number;
  net_minor: number;
  fee_minor: number;
}

export interface SummaryPeriod {
  opening_balance_minor: number;
  payments_minor: number;
  payment_reversals_minor: number;
  refunds_minor: number;
  refund_releases_minor: number;
  payouts_minor: number;
  payout_releases_minor: number;
  payout_returns_minor: number;
  reserves_minor: number;
  reserve_releases_minor: number;
  /** Every fee of the period (payments' and payouts'), less fees given back; subtracted once. */
  fees_minor: number;
  net_minor: number;
  transactions: number;
  closing_balance_minor: number;
}

/**
 * Periods chained from an opening balance: each period's opening is the previous closing, and closing -
 * opening = net = the sum of the amount columns - fees_minor, exactly (integers; asserted).
 */
export function chainPeriods(
  openingMinor: number,
  periodCount: number,
  totals: readonly PeriodKindTotal[],
): SummaryPeriod[] {
  const periods: SummaryPeriod[] = [];
  let balance = openingMinor;
  for (let period = 1; period <= periodCount; period++) {
    const item: SummaryPeriod = {
      opening_balance_minor: balance,
      payments_minor: 0,
      payment_reversals_minor: 0,
      refunds_minor: 0,
      refund_releases_minor: 0,
      payouts_minor: 0,
      payout_releases_minor: 0,
      payout_returns_minor: 0,
      reserves_minor: 0,
      reserve_releases_minor: 0,
      fees_minor: 0,
      net_minor: 0,
      transactions: 0,
      closing_balance_minor: 0,
    };
    for (const total of totals.filter((t) => t.period === period)) {
      const column = SUMMARY_AMOUNT_COLUMNS[typeOfKind(total.kind)] as keyof SummaryPeriod;
      item[column] += total.net_minor + total.fee_minor;
      item.fees_minor += total.fee_minor;
      item.net_minor += total.net_minor;
      item.transactions += total.count;
    }
    const items =
      (Object.values(SUMMARY_AMOUNT_COLUMNS) as (keyof SummaryPeriod)[]).reduce(
        (sum, column) => sum + item[column],
        0,
      ) - item.fees_minor;
    if (items !== item.net_minor || !Number.isSafeInteger(balance + item.net_minor)) {
      throw new Error(`books assertion failed: period ${period} itemises ${items} but moved ${item.net_minor}`);
    }
    balance += item.net_minor;
    item.closing_balance_minor = balance;
    periods.push(item);
  }
  return periods;
}
