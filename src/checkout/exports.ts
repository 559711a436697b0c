// The sessions CSV (GET /api/v1/checkout/sessions with Accept: text/csv, GET /api/v1/exports/sessions.csv and
// the dashboard's export): the sessions created on Africa/Accra days from..to with their payment, oldest
// first, streamed in keyset pages; written by src/http/csv.ts like the other exports.
import { exportFilename } from '../books/exports.ts';
import { EXPORT_PAGE_ROWS, parseDayRange } from '../books/model.ts';
import type { BooksOwner } from '../books/service.ts';
import type { Queryable } from '../db/index.ts';
import { csvColumn as col, type CsvColumn } from '../lib/csv-columns.ts';
import { sessionsCreatedBetween, toPayment } from './session-list.ts';

type SessionExportRow = Awaited<
  ReturnType<typeof sessionsCreatedBetween> extends AsyncIterable<infer Row> ? Row : never
>;

export const SESSION_CSV_COLUMNS: CsvColumn<SessionExportRow>[] = (() => {
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

/** The sessions of Accra days from..to, for a CSV file (the range is checked first: 400 before any row). */
export function exportSessions(db: Queryable, owner: BooksOwner, query: { from?: string; to?: string }) {
  const range = parseDayRange(query.from, query.to);
  const rows = sessionsCreatedBetween(db, owner, range.bounds[0]!, range.bounds.at(-1)!, EXPORT_PAGE_ROWS);
  return { range, rows, filename: exportFilename('sessions', owner.environment, range) };
}
