// The merchant's books over the API (issue 17): balance transactions (JSON pages, or a CSV file of Accra days
// with Accept: text/csv) and the daily settlement summary (JSON or CSV). Thin: parse, authorize, call.
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../../auth.ts';
import { listRoute } from '../../csv.ts';
import type { AppDeps } from '../../deps.ts';
import {
  BALANCE_TRANSACTION_COLUMNS as BALANCE_TRANSACTION_CSV,
  exportBalanceTransactions,
  SUMMARY_COLUMNS,
} from '../../../books/exports.ts';
import { EXPORT_RANGE_DAYS_MAX } from '../../../books/model.ts';
import { balanceSummaryFile } from './export-routes.ts';
import { BalanceSummary, BalanceTransactionList, ListBalanceTransactionsQuery, SummaryQuery } from './schemas.ts';
import { listBalanceTransactions, ownerOf, settlementSummary } from '../../../books/service.ts';

const tags = ['Balance'];

export async function booksRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  listRoute(app, '/api/v1/balance/transactions', {
    schema: {
      operationId: 'listBalanceTransactions',
      tags,
      summary: 'List balance transactions',
      description:
        "Every movement of the calling key's balance (payments, reversals, payouts and their releases and returns, refunds and their releases, the rolling reserve held and released), newest first, each with amount, fee, net (= amount - fee, the change of the balance), its source, the balance after it, when its money is available (available_on, status) and the settlement that paid it out (payout_id). Page with limit and starting_after while has_more is true: a page never skips or repeats a row, whatever is posted meanwhile. " +
        'With `payout_id`: the balance transactions that settlement paid out, oldest first, whose net_minor add up to its amount_minor (none for a manual payout). ' +
        `With \`Accept: text/csv\`: a CSV file of the Africa/Accra days \`from\` to \`to\` (required, at most ${EXPORT_RANGE_DAYS_MAX} days), oldest first, streamed; \`type\` still filters; with \`payout_id\`, every row of that settlement.`,
      querystring: ListBalanceTransactionsQuery,
    },
    list: BalanceTransactionList,
    exportPath: '/api/v1/exports/balance-transactions',
    // A payout_id that is not the key's.
    notFound: true,
    json: (request) => listBalanceTransactions(db, ownerOf(principalOf(request)), request.query),
    columns: BALANCE_TRANSACTION_CSV,
    csv: (request) => exportBalanceTransactions(db, ownerOf(principalOf(request)), request.query),
  });

  listRoute(app, '/api/v1/balance/summary', {
    schema: {
      operationId: 'retrieveBalanceSummary',
      tags,
      summary: 'Daily settlement summary',
      description:
        `One row per Africa/Accra day from \`from\` to \`to\` (at most ${EXPORT_RANGE_DAYS_MAX} days): the available balance when the day began, its payments, fees, refunds, payouts, reversals, releases and returns, and the balance when it ended. ` +
        "Each opening is the previous closing, and closing - opening is the sum of the day's balance transactions exactly. `Accept: text/csv` answers the same rows as a CSV file.",
      querystring: SummaryQuery,
    },
    list: BalanceSummary,
    exportPath: '/api/v1/exports/balance-summary',
    json: (request) => settlementSummary(db, ownerOf(principalOf(request)), request.query),
    columns: SUMMARY_COLUMNS,
    csv: (request) => balanceSummaryFile(db, ownerOf(principalOf(request)), request.query),
  });
}
