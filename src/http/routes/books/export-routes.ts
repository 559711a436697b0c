// The CSV exports as operations of their own (issue 29): each answers text/csv only, so a generated client
// types the list operations as JSON alone and these as text. The list paths still answer the same file to
// `Accept: text/csv` (their descriptions say so). Thin: parse, authorize, call, stream (src/http/csv.ts).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../../auth.ts';
import { sendCsv } from '../../csv.ts';
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
import { ownerOf, settlementSummary } from '../../../books/service.ts';

/** from and to, both required: Africa/Accra days, both included. */
const ExportQuery = SummaryQuery;
type ExportQuery = Static<typeof ExportQuery>;
const BalanceTransactionsExportQuery = Type.Object(
  { ...SummaryQuery.properties, type: Type.Optional(BalanceTransactionTypeSchema) },
  { additionalProperties: false },
);
type BalanceTransactionsExportQuery = Static<typeof BalanceTransactionsExportQuery>;

const headers = (columns: readonly { header: string }[]) => columns.map((column) => column.header).join(', ');
const RANGE = `the Africa/Accra days \`from\` to \`to\` (both included, at most ${EXPORT_RANGE_DAYS_MAX} days)`;
const FILE_NOTES =
  "Streamed, oldest first, however many rows; UTF-8 with a BOM, CRLF lines; amounts in pesewas with a GHS column beside each; text a spreadsheet would run as a formula starts with `'`.";

interface ExportRoute<Query> {
  path: string;
  operationId: string;
  summary: string;
  /** The list path that answers the same file to Accept: text/csv. */
  listPath: string;
  what: string;
  /** The file's header line. */
  columns: string;
  querystring: TSchema;
  send(request: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply): Promise<FastifyReply> | FastifyReply;
}

export async function exportRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  function exportRoute<Query>(route: ExportRoute<Query>): void {
    app.get<{ Querystring: Query }>(
      route.path,
      {
        schema: {
          operationId: route.operationId,
          tags: ['Exports'],
          security: [{ apiKey: [] }],
          summary: route.summary,
          description: `A CSV file of ${route.what} on ${RANGE}. ${FILE_NOTES} The same file as \`GET ${route.listPath}\` with \`Accept: text/csv\`.`,
          querystring: route.querystring,
          response: {
            200: {
              description: 'The CSV file (Content-Disposition: attachment, with its file name).',
              content: { 'text/csv': { schema: { type: 'string', description: `Columns: ${route.columns}.` } } },
            },
            ...errorResponses(400, 401, 429),
          },
        },
      },
      (request, reply) => route.send(request, reply),
    );
  }

  exportRoute<BalanceTransactionsExportQuery>({
    path: '/api/v1/exports/balance-transactions',
    operationId: 'exportBalanceTransactions',
    summary: 'Export balance transactions (CSV)',
    listPath: '/api/v1/balance/transactions',
    what: 'the balance transactions (of one `type` when given)',
    columns: headers(BALANCE_TRANSACTION_COLUMNS),
    querystring: BalanceTransactionsExportQuery,
    async send(request, reply) {
      const file = await exportBalanceTransactions(db, ownerOf(principalOf(request)), request.query);
      return sendCsv(reply, { filename: file.filename, columns: BALANCE_TRANSACTION_COLUMNS, rows: file.rows });
    },
  });
  exportRoute<ExportQuery>({
    path: '/api/v1/exports/balance-summary',
    operationId: 'exportBalanceSummary',
    summary: 'Export the daily settlement summary (CSV)',
    listPath: '/api/v1/balance/summary',
    what: 'the daily settlement summary, one line per day,',
    columns: headers(SUMMARY_COLUMNS),
    querystring: ExportQuery,
    async send(request, reply) {
      const owner = ownerOf(principalOf(request));
      const summary = await settlementSummary(db, owner, request.query);
      return sendCsv(reply, {
        filename: exportFilename('balance-summary', owner.environment, summary),
        columns: SUMMARY_COLUMNS,
        rows: rowsOf(summary.days),
      });
    },
  });
  exportRoute<ExportQuery>({
    path: '/api/v1/exports/sessions',
    operationId: 'exportSessions',
    summary: 'Export checkout sessions (CSV)',
    listPath: '/api/v1/sessions',
    what: 'the checkout sessions created, each with its payment,',
    columns: headers(SESSION_COLUMNS),
    querystring: ExportQuery,
    send(request, reply) {
      const file = exportSessions(db, ownerOf(principalOf(request)), request.query);
      return sendCsv(reply, { filename: file.filename, columns: SESSION_COLUMNS, rows: file.rows });
    },
  });
  exportRoute<ExportQuery>({
    path: '/api/v1/exports/payouts',
    operationId: 'exportPayouts',
    summary: 'Export payouts (CSV)',
    listPath: '/api/v1/payouts',
    what: 'the payouts created',
    columns: headers(PAYOUT_COLUMNS),
    querystring: ExportQuery,
    send(request, reply) {
      const file = exportPayouts(db, ownerOf(principalOf(request)), request.query);
      return sendCsv(reply, { filename: file.filename, columns: PAYOUT_COLUMNS, rows: file.rows });
    },
  });
  exportRoute<ExportQuery>({
    path: '/api/v1/exports/refunds',
    operationId: 'exportRefunds',
    summary: 'Export refunds (CSV)',
    listPath: '/api/v1/refunds',
    what: 'the refunds created',
    columns: headers(REFUND_CSV_COLUMNS),
    querystring: ExportQuery,
    send(request, reply) {
      const file = exportRefunds(db, principalOf(request), request.query);
      return sendCsv(reply, { filename: file.filename, columns: REFUND_CSV_COLUMNS, rows: file.rows });
    },
  });
}
