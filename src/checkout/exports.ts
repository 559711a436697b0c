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

/** The payment's amounts, each a column in pesewas (`<amount>_minor`), then each in cedis (`<amount>_ghs`). */
const PAYMENT_AMOUNTS = ['amount_charged', 'fee', 'net'] as const;

export const SESSION_CSV_COLUMNS: CsvColumn<SessionExportRow>[] = (() => {
  const paid = (row: SessionExportRow) => (row.payment ? toPayment(row.payment) : null);
  /** Text columns named as the session's field each reads. */
  const sessionText = (...fields: ('status' | 'invoice_ref' | 'description' | 'customer_name' | 'customer_email')[]) =>
    fields.map((field) => col.text(field, (row: SessionExportRow) => row.session[field]));
  /** Text columns named as the payment's field each reads (empty without a payment). */
  const paymentText = (...fields: ('rail' | 'provider' | 'provider_reference' | 'provider_transaction_id')[]) =>
    fields.map((field) => col.text(field, (row: SessionExportRow) => paid(row)?.[field]));
  /** One of the payment's amounts in pesewas (none without a payment). */
  const paidMinor = (amount: (typeof PAYMENT_AMOUNTS)[number]) => (row: SessionExportRow) =>
    paid(row)?.[`${amount}_minor` as const];
  return [
    col.text('id', (row) => row.session.id),
    col.timestamp('created_at', (row) => row.session.created_at),
    ...sessionText('status', 'invoice_ref', 'description', 'customer_name', 'customer_email'),
    col.integer('amount_minor', (row) => row.session.amount_minor),
    col.ghs('amount_ghs', (row) => row.session.amount_minor),
    col.text('currency', (row) => row.session.currency),
    col.text('attempt_reference', (row) => paid(row)?.attempt_reference),
    col.text('payment_status', (row) => paid(row)?.status),
    ...paymentText('rail', 'provider', 'provider_reference'),
    ...PAYMENT_AMOUNTS.map((amount) => col.integer(`${amount}_minor`, paidMinor(amount))),
    ...PAYMENT_AMOUNTS.map((amount) => col.ghs(`${amount}_ghs`, paidMinor(amount))),
    col.timestamp('paid_at', (row) => paid(row)?.paid_at),
    // Issue 31, appended (files are read by position): what the provider calls the payment, and the card that paid.
    ...paymentText('provider_transaction_id'),
    col.text('card_brand', (row) => paid(row)?.card?.brand),
    col.text('card_last4', (row) => paid(row)?.card?.last4),
    // Issue 35, appended: the payment link a payer made the session from, and what they entered in its custom
    // fields as one JSON text cell (key to value), so a school's export keeps each pupil's name beside the fee.
    col.text('payment_link_id', (row) => row.session.payment_link_id),
    col.text('custom_fields', (row) => (row.session.custom_fields ? JSON.stringify(row.session.custom_fields) : null)),
  ];
})();

/** The sessions of Accra days from..to, for a CSV file (the range is checked first: 400 before any row). */
export function exportSessions(db: Queryable, owner: BooksOwner, query: { from?: string; to?: string }) {
  const range = parseDayRange(query.from, query.to);
  const rows = sessionsCreatedBetween(db, owner, range.bounds[0]!, range.bounds.at(-1)!, EXPORT_PAGE_ROWS);
  return { range, rows, filename: exportFilename('sessions', owner.environment, range) };
}
