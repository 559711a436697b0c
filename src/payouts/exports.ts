// The payouts CSV (GET /api/v1/payouts with Accept: text/csv, GET /api/v1/exports/payouts.csv and the
// dashboard's export): the payouts created on Africa/Accra days from..to, oldest first, streamed in keyset
// pages; written by src/http/csv.ts like the other exports.
import { exportFilename } from '../books/exports.ts';
import { EXPORT_PAGE_ROWS, parseDayRange } from '../books/model.ts';
import type { BooksOwner } from '../books/service.ts';
import type { Queryable } from '../db/index.ts';
import { csvColumn as col, type CsvColumn } from '../lib/csv-columns.ts';
import { payoutsCreatedBetween, type PayoutExportRow } from './queries.ts';

export const PAYOUT_CSV_COLUMNS: CsvColumn<PayoutExportRow>[] = [
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
