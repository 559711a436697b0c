// The CSV exports as operations of their own (issue 29): each answers text/csv only, so a generated client
// types the list operations as JSON alone and these as text. The list paths still answer the same file to
// `Accept: text/csv` (their descriptions say so). Thin: parse, authorize, call, stream (src/http/csv.ts).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CsvColumn } from '../../../lib/csv-columns.ts';
import { principalOf } from '../../auth.ts';
import { sendCsv, type CsvFile } from '../../csv.ts';
import type { AppDeps } from '../../deps.ts';
import { errorResponses } from '../../schemas.ts';
import { exportRefunds, REFUND_CSV_COLUMNS } from '../../../refunds/exports.ts';
import {
  BALANCE_TRANSACTION_COLUMNS,
  exportBalanceTransactions,
  exportFilename,
  rowsOf,
  SUMMARY_COLUMNS,
} from '../../../books/exports.ts';
import { exportSessions, SESSION_CSV_COLUMNS as SESSION_COLUMNS } from '../../../checkout/exports.ts';
import { exportPayouts, PAYOUT_CSV_COLUMNS as PAYOUT_COLUMNS } from '../../../payouts/exports.ts';
import { EXPORT_RANGE_DAYS_MAX } from '../../../books/model.ts';
import { BalanceTransactionTypeSchema, SummaryQuery } from './schemas.ts';
import { ownerOf, settlementSummary, type BooksOwner } from '../../../books/service.ts';
import type { Queryable } from '../../../db/index.ts';

/** from and to, both required: Africa/Accra days, both included. */
const ExportQuery = SummaryQuery;
const BalanceTransactionsExportQuery = Type.Object(
  { ...SummaryQuery.properties, type: Type.Optional(BalanceTransactionTypeSchema) },
  { additionalProperties: false },
);

const headers = (columns: readonly { header: string }[]) => columns.map((column) => column.header).join(', ');
const RANGE = `the Africa/Accra days \`from\` to \`to\` (both included, at most ${EXPORT_RANGE_DAYS_MAX} days)`;
const FILE_NOTES =
  "Streamed, oldest first, however many rows; UTF-8 with a BOM, CRLF lines; amounts in pesewas with a GHS column beside each; text a spreadsheet would run as a formula starts with `'`.";

interface ExportRoute<Query extends TSchema, Row> {
  path: string;
  operationId: string;
  summary: string;
  /** The list path that answers the same file to Accept: text/csv. */
  listPath: string;
  what: string;
  /** The file's columns (its header line is in the description). */
  columns: readonly CsvColumn<Row>[];
  querystring: Query;
  /** The file's name and rows for this request. */
  file(request: FastifyRequest<{ Querystring: Static<Query> }>): CsvFile<Row> | Promise<CsvFile<Row>>;
}

/** The daily settlement summary as a CSV file: this export's, and its list path's with Accept: text/csv. */
export async function balanceSummaryFile(db: Queryable, owner: BooksOwner, query: SummaryQuery) {
  const summary = await settlementSummary(db, owner, query);
  return { filename: exportFilename('balance-summary', owner.environment, summary), rows: rowsOf(summary.days) };
}

export async function exportRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  function exportRoute<Query extends TSchema, Row>(route: ExportRoute<Query, Row>): void {
    app.get<{ Querystring: Static<Query> }>(
      route.path,
      {
        schema: {
          operationId: route.operationId,
          tags: ['Exports'],
          summary: route.summary,
          description: `A CSV file of ${route.what} on ${RANGE}. ${FILE_NOTES} The same file as \`GET ${route.listPath}\` with \`Accept: text/csv\`.`,
          querystring: route.querystring,
          response: {
            200: {
              description: 'The CSV file (Content-Disposition: attachment, with its file name).',
              content: {
                'text/csv': { schema: { type: 'string', description: `Columns: ${headers(route.columns)}.` } },
              },
            },
            ...errorResponses(400, 401, 429),
          },
        },
      },
      async (request, reply) => {
        const file = await route.file(request);
        return sendCsv(reply, { filename: file.filename, columns: route.columns, rows: file.rows });
      },
    );
  }

  exportRoute({
    path: '/api/v1/exports/balance-transactions',
    operationId: 'exportBalanceTransactions',
    summary: 'Export balance transactions (CSV)',
    listPath: '/api/v1/balance/transactions',
    what: 'the balance transactions (of one `type` when given)',
    columns: BALANCE_TRANSACTION_COLUMNS,
    querystring: BalanceTransactionsExportQuery,
    file: (request) => exportBalanceTransactions(db, ownerOf(principalOf(request)), request.query),
  });
  exportRoute({
    path: '/api/v1/exports/balance-summary',
    operationId: 'exportBalanceSummary',
    summary: 'Export the daily settlement summary (CSV)',
    listPath: '/api/v1/balance/summary',
    what: 'the daily settlement summary, one line per day,',
    columns: SUMMARY_COLUMNS,
    querystring: ExportQuery,
    file: (request) => balanceSummaryFile(db, ownerOf(principalOf(request)), request.query),
  });
  exportRoute({
    path: '/api/v1/exports/sessions',
    operationId: 'exportSessions',
    summary: 'Export checkout sessions (CSV)',
    listPath: '/api/v1/sessions',
    what: 'the checkout sessions created, each with its payment,',
    columns: SESSION_COLUMNS,
    querystring: ExportQuery,
    file: (request) => exportSessions(db, ownerOf(principalOf(request)), request.query),
  });
  exportRoute({
    path: '/api/v1/exports/payouts',
    operationId: 'exportPayouts',
    summary: 'Export payouts (CSV)',
    listPath: '/api/v1/payouts',
    what: 'the payouts created',
    columns: PAYOUT_COLUMNS,
    querystring: ExportQuery,
    file: (request) => exportPayouts(db, ownerOf(principalOf(request)), request.query),
  });
  exportRoute({
    path: '/api/v1/exports/refunds',
    operationId: 'exportRefunds',
    summary: 'Export refunds (CSV)',
    listPath: '/api/v1/refunds',
    what: 'the refunds created',
    columns: REFUND_CSV_COLUMNS,
    querystring: ExportQuery,
    file: (request) => exportRefunds(db, principalOf(request), request.query),
  });
}
