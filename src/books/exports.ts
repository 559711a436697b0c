// CSV exports of the merchant's books (issue 17): which columns each file has and what it is called. The
// rows come from each domain's keyset reads (oldest first, constant memory); src/http/csv.ts writes them.
// Every amount is an integer pesewas column with a GHS decimal column beside it.
import type { Environment } from '../accounts/model.ts';
import { sessionsCreatedBetween, toPayment } from '../checkout/session-list.ts';
import type { Queryable } from '../db/index.ts';
import { csvColumn as col, type CsvColumn } from '../lib/csv-columns.ts';
import { payoutsCreatedBetween, type PayoutExportRow } from '../payouts/queries.ts';
import {
  balanceTransactionId,
  EXPORT_PAGE_ROWS,
  parseDayRange,
  typeOfKind,
  type BalanceTransactionRow,
  type BalanceTransactionType,
  type DayRange,
  type SummaryPeriod,
} from './model.ts';
import { balanceTransactionsBetween, type BooksOwner } from './service.ts';
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
];

type SessionExportRow = Awaited<
  ReturnType<typeof sessionsCreatedBetween> extends AsyncIterable<infer Row> ? Row : never
>;

export const SESSION_COLUMNS: CsvColumn<SessionExportRow>[] = (() => {
  const paid = (row: SessionExportRow) => (row.payment ? toPayment(row.payment) : null);
  return [
    col.text('id', (row) => row.session.id),
    col.timestamp('created_at', (row) => row.session.created_at),
    col.text('status', (row) => row.session.status),
    col.text('invoice_ref', (row) => row.session.invoice_ref),
    col.text('description', (row) => row.session.description),
    col.text('customer_name', (row) => row.session.customer_name),
    col.text('customer_email', (row) => row.session.customer_email),
    col.integer('amount_minor', (row) => row.session.amount_minor),
    col.ghs('amount_ghs', (row) => row.session.amount_minor),
    col.text('currency', (row) => row.session.currency),
    col.text('attempt_reference', (row) => paid(row)?.attempt_reference),
    col.text('payment_status', (row) => paid(row)?.status),
    col.text('rail', (row) => paid(row)?.rail),
    col.text('provider', (row) => paid(row)?.provider),
    col.text('provider_reference', (row) => paid(row)?.provider_reference),
    col.integer('amount_charged_minor', (row) => paid(row)?.amount_charged_minor),
    col.integer('fee_minor', (row) => paid(row)?.fee_minor),
    col.integer('net_minor', (row) => paid(row)?.net_minor),
    col.ghs('amount_charged_ghs', (row) => paid(row)?.amount_charged_minor),
    col.ghs('fee_ghs', (row) => paid(row)?.fee_minor),
    col.ghs('net_ghs', (row) => paid(row)?.net_minor),
    col.timestamp('paid_at', (row) => paid(row)?.paid_at),
    // Issue 31, appended (files are read by position): what the provider calls the payment, and the card that paid.
    col.text('provider_transaction_id', (row) => paid(row)?.provider_transaction_id),
    col.text('card_brand', (row) => paid(row)?.card?.brand),
    col.text('card_last4', (row) => paid(row)?.card?.last4),
  ];
})();

export const PAYOUT_COLUMNS: CsvColumn<PayoutExportRow>[] = [
  col.text('id', (row) => row.id),
  col.timestamp('created_at', (row) => row.created_at),
  col.text('reference', (row) => row.reference),
  col.text('client_reference', (row) => row.client_reference),
  col.text('status', (row) => row.status),
  col.text('recipient_id', (row) => row.recipient_id),
  col.text('recipient_name', (row) => row.recipient_name),
  col.text('recipient_account_type', (row) => row.recipient_account_type),
  col.integer('amount_minor', (row) => row.amount_minor),
  col.integer('fee_minor', (row) => row.fee_minor),
  col.integer('total_debit_minor', (row) => row.total_debit_minor),
  col.ghs('amount_ghs', (row) => row.amount_minor),
  col.ghs('fee_ghs', (row) => row.fee_minor),
  col.ghs('total_debit_ghs', (row) => row.total_debit_minor),
  col.text('currency', (row) => row.currency),
  col.text('bank_reference', (row) => row.bank_reference),
  col.text('failure_reason', (row) => row.failure_reason),
  col.timestamp('paid_at', (row) => row.paid_at),
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

export const SUMMARY_COLUMNS: CsvColumn<SummaryRow>[] = [
  col.text('day', (row) => row.day),
  ...SUMMARY_AMOUNTS.map((name) => col.integer(name, (row: SummaryRow) => row[name])),
  col.integer('transactions', (row) => row.transactions),
  ...SUMMARY_AMOUNTS.map((name) => col.ghs(name.replace(/_minor$/, '_ghs'), (row: SummaryRow) => row[name])),
];

/** The balance transactions of Accra days from..to (and of one type), for a CSV file (the range is checked first: 400 before any row). */
export async function exportBalanceTransactions(
  db: Queryable,
  owner: BooksOwner,
  query: { from?: string; to?: string; type?: BalanceTransactionType },
) {
  const range = parseDayRange(query.from, query.to);
  const rows = await balanceTransactionsBetween(db, owner, range.bounds[0]!, range.bounds.at(-1)!, query.type);
  return { range, rows, filename: exportFilename('balance-transactions', owner.environment, range) };
}

/** The sessions of Accra days from..to, for a CSV file (the range is checked first: 400 before any row). */
export function exportSessions(db: Queryable, owner: BooksOwner, query: { from?: string; to?: string }) {
  const range = parseDayRange(query.from, query.to);
  const rows = sessionsCreatedBetween(db, owner, range.bounds[0]!, range.bounds.at(-1)!, EXPORT_PAGE_ROWS);
  return { range, rows, filename: exportFilename('sessions', owner.environment, range) };
}

/** The payouts of Accra days from..to, for a CSV file. */
export function exportPayouts(db: Queryable, owner: BooksOwner, query: { from?: string; to?: string }) {
  const range = parseDayRange(query.from, query.to);
  const rows = payoutsCreatedBetween(
    db,
    owner.merchantId,
    owner.environment,
    range.bounds[0]!,
    range.bounds.at(-1)!,
    EXPORT_PAGE_ROWS,
  );
  return { range, rows, filename: exportFilename('payouts', owner.environment, range) };
}

/** Rows of an array as the async iterator sendCsv reads. */
export async function* rowsOf<Row>(rows: readonly Row[]): AsyncIterable<Row> {
  yield* rows;
}
