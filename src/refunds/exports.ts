// The refunds CSV (GET /api/v1/refunds with Accept: text/csv): the refunds created on Africa/Accra days
// from..to, oldest first, streamed in keyset pages; written by src/http/csv.ts like the other exports.
import type { ApiPrincipal } from '../lib/environment.ts';
import { exportFilename } from '../books/exports.ts';
import { EXPORT_PAGE_ROWS, parseDayRange } from '../books/model.ts';
import type { Queryable } from '../db/index.ts';
import { csvColumn as col, type CsvColumn } from '../lib/csv-columns.ts';
import { fieldColumns } from '../lib/csv-field-columns.ts';
import type { RefundRow } from './model.ts';
import { refundsCreatedBetween } from './queries.ts';

const field = fieldColumns<RefundRow>();

export const REFUND_CSV_COLUMNS: CsvColumn<RefundRow>[] = [
  ...field.text('id'),
  ...field.timestamp('created_at'),
  ...field.text('status', 'session_id'),
  col.text('attempt_reference', (row) => row.attempt_id),
  ...field.integer('amount_minor'),
  col.ghs('amount_ghs', (row) => row.amount_minor),
  ...field.text('currency'),
  col.text('method', (row) => row.route),
  ...field.text('provider', 'provider_refund_id', 'reason', 'failure_reason'),
  ...field.timestamp('succeeded_at', 'failed_at'),
];

/** The refunds of Accra days from..to (the range is checked first: a 400 comes before any row). */
export function exportRefunds(
  db: Queryable,
  principal: Pick<ApiPrincipal, 'merchantId' | 'environment'>,
  query: { from?: string; to?: string },
) {
  const range = parseDayRange(query.from, query.to);
  const rows = refundsCreatedBetween(db, principal, range.bounds[0]!, range.bounds.at(-1)!, EXPORT_PAGE_ROWS);
  return { rows, filename: exportFilename('refunds', principal.environment, range) };
}
