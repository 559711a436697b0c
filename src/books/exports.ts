// CSV exports of the merchant's books (issue 17): the balance transactions' and the daily summary's columns,
// and what every export file is called. The sessions', payouts' and refunds' columns and rows are their
// domain's (checkout/exports.ts, payouts/exports.ts, refunds/exports.ts), from its keyset reads (oldest
// first, constant memory); src/http/csv.ts writes them. Every amount is an integer pesewas column with a GHS
// decimal column beside it.
import type { Environment } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { csvColumn as col, type CsvColumn } from '../lib/csv-columns.ts';
import {
  balanceTransactionId,
  parseDayRange,
  typeOfKind,
  type BalanceTransactionRow,
  type BalanceTransactionType,
  type DayRange,
  type SummaryPeriod,
} from './model.ts';
import { balanceTransactionsBetween, settlementTransactions, type BooksOwner } from './service.ts';
import type { PaymentReferenceColumns } from './store.ts';

/** sika-<what>-<environment>-<from>-to-<to>.csv (the range's days are checked dates, so the name is safe). */
export const exportFilename = (what: string, environment: Environment, range: Pick<DayRange, 'from' | 'to'>): string =>
  `sika-${what}-${environment}-${range.from}-to-${range.to}.csv`;

// A payment's row carries what the provider named it by (the store reads them with the row; a row read without
// them, or a payout's or refund's, leaves the cells empty). New columns go at the end: files are read by position.
type BalanceTransactionExportRow = BalanceTransactionRow & Partial<PaymentReferenceColumns>;

export const BALANCE_TRANSACTION_COLUMNS: CsvColumn<BalanceTransactionExportRow>[] = [
  col.text('id', (row) => balanceTransactionId(row.entry_id)),
  col.timestamp('created_at', (row) => row.created_at),
  col.text('type', (row) => typeOfKind(row.kind)),
  col.text('source_type', (row) => row.reference_type),
  col.text('source_id', (row) => row.reference_id),
  col.text('session_id', (row) => row.session_id),
  col.integer('amount_minor', (row) => row.net_minor + row.fee_minor),
  col.integer('fee_minor', (row) => row.fee_minor),
  col.integer('net_minor', (row) => row.net_minor),
  col.integer('balance_after_minor', (row) => row.balance_after_minor),
  col.ghs('amount_ghs', (row) => row.net_minor + row.fee_minor),
  col.ghs('fee_ghs', (row) => row.fee_minor),
  col.ghs('net_ghs', (row) => row.net_minor),
  col.ghs('balance_after_ghs', (row) => row.balance_after_minor),
  col.text('currency', () => 'GHS'),
  col.text('provider_transaction_id', (row) => row.provider_transaction_id),
  col.text('card_brand', (row) => row.card_brand),
  col.text('card_last4', (row) => row.card_last4),
  // Issue 34: when the money is available, whether it is yet, and the settlement that paid it out.
  col.timestamp('available_on', (row) => row.available_on),
  col.text('status', (row) => row.status),
  col.text('payout_id', (row) => row.payout_id),
];

type SummaryRow = SummaryPeriod & { day: string };
const SUMMARY_AMOUNTS: (keyof SummaryPeriod)[] = [
  'opening_balance_minor',
  'payments_minor',
  'fees_minor',
  'refunds_minor',
  'payouts_minor',
  'payment_reversals_minor',
  'refund_releases_minor',
  'payout_releases_minor',
  'payout_returns_minor',
  'net_minor',
  'closing_balance_minor',
];
/** Issue 34's columns, after all the others (files are read by position). */
const SUMMARY_RESERVE_AMOUNTS: (keyof SummaryPeriod)[] = ['reserves_minor', 'reserve_releases_minor'];

export const SUMMARY_COLUMNS: CsvColumn<SummaryRow>[] = [
  col.text('day', (row) => row.day),
  ...SUMMARY_AMOUNTS.map((name) => col.integer(name, (row: SummaryRow) => row[name])),
  col.integer('transactions', (row) => row.transactions),
  ...SUMMARY_AMOUNTS.map((name) => col.ghs(name.replace(/_minor$/, '_ghs'), (row: SummaryRow) => row[name])),
  ...SUMMARY_RESERVE_AMOUNTS.map((name) => col.integer(name, (row: SummaryRow) => row[name])),
  ...SUMMARY_RESERVE_AMOUNTS.map((name) => col.ghs(name.replace(/_minor$/, '_ghs'), (row: SummaryRow) => row[name])),
];

/** Every balance transaction a settlement paid out, oldest first, for a CSV file (404 before any row when not the owner's). */
export async function exportSettlementTransactions(db: Queryable, owner: BooksOwner, payoutId: string) {
  const rows = await settlementTransactions(db, owner, payoutId);
  return { rows, filename: `sika-balance-transactions-${owner.environment}-${payoutId}.csv` };
}

/**
 * The balance transactions of Accra days from..to (and of one type), for a CSV file (the range is checked first:
 * 400 before any row); with payout_id, every one that settlement paid out (from and to are then not needed).
 */
export async function exportBalanceTransactions(
  db: Queryable,
  owner: BooksOwner,
  query: { from?: string; to?: string; type?: BalanceTransactionType; payout_id?: string },
) {
  if (query.payout_id !== undefined) return exportSettlementTransactions(db, owner, query.payout_id);
  const range = parseDayRange(query.from, query.to);
  const rows = await balanceTransactionsBetween(db, owner, range.bounds[0]!, range.bounds.at(-1)!, query.type);
  return { range, rows, filename: exportFilename('balance-transactions', owner.environment, range) };
}

/** Rows of an array as the async iterator sendCsv reads. */
export async function* rowsOf<Row>(rows: readonly Row[]): AsyncIterable<Row> {
  yield* rows;
}
