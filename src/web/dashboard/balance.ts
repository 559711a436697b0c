// Dashboard: the Balance page (issue 36), the merchant's balance transactions in the current environment with
// the balances now; the search and filters are the address, keyset pages, format=csv the CSV of exactly what is
// shown (the API's columns, BALANCE_TRANSACTION_COLUMNS).
import type { FastifyInstance } from 'fastify';
import {
  balanceExportRows,
  balanceFilter,
  balancePage,
  cleanBalanceFragment,
  positionOf,
  type BalanceQuery,
} from '../../books/balance-list.ts';
import { BALANCE_TRANSACTION_COLUMNS } from '../../books/exports.ts';
import { balanceTransactionId } from '../../books/model.ts';
import type { AppDeps } from '../../http/deps.ts';
import { sendCsv } from '../../http/csv.ts';
import { balance } from '../../ledger/service.ts';
import { accraDay } from '../../lib/accra-calendar.ts';
import { pageSender, sessionOf } from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { html } from '../html.ts';
import { BALANCE_PATH, balanceBody } from './balance-views.ts';

/** The Balance page's query string (console-schemas.ts `balance`). */
type BalancePageQuery = BalanceQuery & { after?: string; format?: string };

export async function balancePages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = pageSender('merchant', 'balance');

  app.get<{ Querystring: BalancePageQuery }>(
    BALANCE_PATH,
    { schema: { hide: true, ...dashboardSchemas.balance } },
    async (request, reply) => {
      const session = sessionOf(request);
      const owner = { merchantId: session.merchantId!, environment: session.environment };
      const given = request.query ?? {};
      const query: BalanceQuery = { ...given, q: cleanBalanceFragment(given.q) ?? undefined };
      // Another merchant's (or environment's) transaction as the page's position is not found.
      const after = given.after || null;
      const afterSeq = after ? await positionOf(db, owner, after) : null;
      if (after && afterSeq === null)
        return show(
          reply,
          session,
          'Not found',
          html`<h1>Balance transaction not found</h1><p><a href="${BALANCE_PATH}">All balance transactions</a></p>`,
          null,
          404,
        );
      const filter = balanceFilter(owner, query);
      if (given.format === 'csv')
        return sendCsv(reply, {
          filename: `balance-transactions-${session.environment}-${accraDay(new Date())}.csv`,
          columns: BALANCE_TRANSACTION_COLUMNS,
          rows: balanceExportRows(db, filter),
        });
      const [{ rows, next }, now] = await Promise.all([
        balancePage(db, filter, afterSeq),
        balance(db, owner.merchantId, owner.environment),
      ]);
      return show(
        reply,
        session,
        'Balance',
        balanceBody({
          balance: now,
          environment: session.environment,
          query,
          rows,
          next: next ? balanceTransactionId(next.entry_id) : null,
          later: after !== null,
        }),
      );
    },
  );
}
