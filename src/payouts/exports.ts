// The payouts CSV (GET /api/v1/payouts with Accept: text/csv, GET /api/v1/exports/payouts.csv and the
// dashboard's export): the payouts created on Africa/Accra days from..to, oldest first, streamed in keyset
// pages; written by src/http/csv.ts like the other exports.
import { exportFilename } from '../books/exports.ts';
import { EXPORT_PAGE_ROWS, parseDayRange } from '../books/model.ts';
import type { BooksOwner } from '../books/service.ts';
import type { Queryable } from '../db/index.ts';
import { csvColumn as col, type CsvColumn } from '../lib/csv-columns.ts';
import { fieldColumns } from '../lib/csv-field-columns.ts';
import { payoutsCreatedBetween, type PayoutExportRow } from './queries.ts';

const field = fieldColumns<PayoutExportRow>();

export const PAYOUT_CSV_COLUMNS: CsvColumn<PayoutExportRow>[] = [
  ...field.text('id'),
  ...field.timestamp('created_at'),
  ...field.text('reference', 'client_reference', 'status', 'recipient_id', 'recipient_name', 'recipient_account_type'),
  ...field.integer('amount_minor', 'fee_minor', 'total_debit_minor'),
  col.ghs('amount_ghs', (row) => row.amount_minor),
  col.ghs('fee_ghs', (row) => row.fee_minor),
  col.ghs('total_debit_ghs', (row) => row.total_debit_minor),
  ...field.text('currency', 'bank_reference', 'failure_reason'),
  ...field.timestamp('paid_at'),
  // Issue 34, at the end (files are read by position): manual or settlement, and a settlement's period.
  col.text('type', (row) => row.type ?? 'manual'),
  ...field.timestamp('settlement_period_start', 'settlement_period_end'),
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
