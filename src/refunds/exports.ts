// The refunds CSV (GET /api/v1/refunds with Accept: text/csv): the refunds created on Africa/Accra days
// from..to, oldest first, streamed in keyset pages; written by src/http/csv.ts like the other exports.
import type { ApiPrincipal } from '../lib/environment.ts';
import { exportFilename } from '../books/exports.ts';
import { EXPORT_PAGE_ROWS, parseDayRange } from '../books/model.ts';
import type { Queryable } from '../db/index.ts';
import { csvColumn as col, type CsvColumn } from '../lib/csv-columns.ts';
import type { RefundRow } from './model.ts';
import { refundsCreatedBetween } from './queries.ts';

export const REFUND_CSV_COLUMNS: CsvColumn<RefundRow>[] = [
  col.text('id', (row) => row.id),
  col.timestamp('created_at', (row) => row.created_at),
  col.text('status', (row) => row.status),
  col.text('session_id', (row) => row.session_id),
  col.text('attempt_reference', (row) => row.attempt_id),
  col.integer('amount_minor', (row) => row.amount_minor),
  col.ghs('amount_ghs', (row) => row.amount_minor),
  col.text('currency', (row) => row.currency),
  col.text('method', (row) => row.route),
  col.text('provider', (row) => row.provider),
  col.text('provider_refund_id', (row) => row.provider_refund_id),
  col.text('reason', (row) => row.reason),
  col.text('failure_reason', (row) => row.failure_reason),
  col.timestamp('succeeded_at', (row) => row.succeeded_at),
  col.timestamp('failed_at', (row) => row.failed_at),
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
