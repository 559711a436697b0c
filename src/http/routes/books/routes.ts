// The merchant's books over the API (issue 17): balance transactions (JSON pages, or a CSV file of Accra days
// with Accept: text/csv) and the daily settlement summary (JSON or CSV). Thin: parse, authorize, call.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../../auth.ts';
import { listReply, listResponse } from '../../csv.ts';
import type { AppDeps } from '../../deps.ts';
import { errorResponses } from '../../schemas.ts';
import {
  BALANCE_TRANSACTION_COLUMNS as BALANCE_TRANSACTION_CSV,
  exportBalanceTransactions,
  exportFilename,
  rowsOf,
  SUMMARY_COLUMNS,
} from '../../../books/exports.ts';
import { EXPORT_RANGE_DAYS_MAX } from '../../../books/model.ts';
import { BalanceSummary, BalanceTransactionList, ListBalanceTransactionsQuery, SummaryQuery } from './schemas.ts';
import { listBalanceTransactions, ownerOf, settlementSummary } from '../../../books/service.ts';

const tags = ['Balance'];
const security = [{ apiKey: [] }];

export async function booksRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  app.get<{ Querystring: ListBalanceTransactionsQuery }>(
    '/api/v1/balance/transactions',
    {
      schema: {
        operationId: 'listBalanceTransactions',
        tags,
        security,
        summary: 'List balance transactions',
        description:
          "Every movement of the calling key's available balance (payments, reversals, payouts and their releases and returns, refunds and their releases), newest first, each with amount, fee, net (= amount - fee, the change of available), its source and the balance after it. Page with limit and starting_after while has_more is true: a page never skips or repeats a row, whatever is posted meanwhile. " +
          `With \`Accept: text/csv\`: a CSV file of the Africa/Accra days \`from\` to \`to\` (required, at most ${EXPORT_RANGE_DAYS_MAX} days), oldest first, streamed; \`type\` still filters.`,
        querystring: ListBalanceTransactionsQuery,
        response: {
          200: listResponse(Type.Ref(BalanceTransactionList.$id!), '/api/v1/exports/balance-transactions'),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const owner = ownerOf(principalOf(request));
      return listReply(request, reply, {
        json: () => listBalanceTransactions(db, owner, request.query),
        columns: BALANCE_TRANSACTION_CSV,
        csv: () => exportBalanceTransactions(db, owner, request.query),
      });
    },
  );

  app.get<{ Querystring: SummaryQuery }>(
    '/api/v1/balance/summary',
    {
      schema: {
        operationId: 'retrieveBalanceSummary',
        tags,
        security,
        summary: 'Daily settlement summary',
        description:
          `One row per Africa/Accra day from \`from\` to \`to\` (at most ${EXPORT_RANGE_DAYS_MAX} days): the available balance when the day began, its payments, fees, refunds, payouts, reversals, releases and returns, and the balance when it ended. ` +
          "Each opening is the previous closing, and closing - opening is the sum of the day's balance transactions exactly. `Accept: text/csv` answers the same rows as a CSV file.",
        querystring: SummaryQuery,
        response: {
          200: listResponse(Type.Ref(BalanceSummary.$id!), '/api/v1/exports/balance-summary'),
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const owner = ownerOf(principalOf(request));
      const summary = await settlementSummary(db, owner, request.query);
      return listReply(request, reply, {
        json: () => summary,
        columns: SUMMARY_COLUMNS,
        csv: () => ({
          filename: exportFilename('balance-summary', owner.environment, summary),
          rows: rowsOf(summary.days),
        }),
      });
    },
  );
}
