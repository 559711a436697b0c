// Dashboard: Exports (issue 17). A range of Africa/Accra days, the daily settlement summary for it, and a
// download of each CSV (balance transactions, sessions, payouts, refunds, the summary) in the environment shown:
// the same files as the API's Accept: text/csv, streamed by the same code.
import type { FastifyInstance } from 'fastify';
import {
  exportBalanceTransactions,
  exportFilename,
  BALANCE_TRANSACTION_COLUMNS,
  rowsOf,
  SUMMARY_COLUMNS,
} from '../../books/exports.ts';
import { exportSessions, SESSION_CSV_COLUMNS as SESSION_COLUMNS } from '../../checkout/exports.ts';
import { exportPayouts, PAYOUT_CSV_COLUMNS as PAYOUT_COLUMNS } from '../../payouts/exports.ts';
import { dayOf, EXPORT_RANGE_DAYS_MAX } from '../../books/model.ts';
import { settlementSummary, type BooksOwner, type SettlementSummary } from '../../books/service.ts';
import { sendCsv } from '../../http/csv.ts';
import { exportRefunds, REFUND_CSV_COLUMNS } from '../../refunds/exports.ts';
import type { AppDeps } from '../../http/deps.ts';
import { SikaError } from '../../lib/errors.ts';
import { sendPage, sessionOf } from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { money, page } from '../layout.ts';

/** The files offered, by the name in their download path. */
const FILES = ['balance-transactions', 'sessions', 'payouts', 'refunds', 'summary'] as const;
type FileName = (typeof FILES)[number];
const FILE_LABELS: Record<FileName, string> = {
  'balance-transactions': 'Balance transactions',
  sessions: 'Checkout sessions',
  payouts: 'Payouts',
  refunds: 'Refunds',
  summary: 'Daily settlement summary',
};

interface RangeQuery {
  from?: string;
  to?: string;
}

/** The month so far (Accra days) when the form has not been sent. */
function defaultRange(): { from: string; to: string } {
  const today = dayOf(new Date());
  return { from: `${today.slice(0, 8)}01`, to: today };
}

function summaryTable(summary: SettlementSummary): Html {
  const columns: [string, keyof SettlementSummary['days'][number]][] = [
    ['Opening', 'opening_balance_minor'],
    ['Payments', 'payments_minor'],
    ['Fees', 'fees_minor'],
    ['Refunds', 'refunds_minor'],
    ['Payouts', 'payouts_minor'],
    ['Reversals', 'payment_reversals_minor'],
    ['Refunds released', 'refund_releases_minor'],
    ['Payouts released', 'payout_releases_minor'],
    ['Payouts returned', 'payout_returns_minor'],
    ['Closing', 'closing_balance_minor'],
  ];
  return html`<div class="table-wrap"><table aria-label="Daily settlement summary"><thead><tr><th>Day</th>${columns.map(([label]) => html`<th>${label}</th>`)}</tr></thead><tbody>
${summary.days.map((day) => html`<tr><td class="mono">${day.day}</td>${columns.map(([, key]) => html`<td>${money(day[key] as number)}</td>`)}</tr>`)}
</tbody></table></div>`;
}

export async function exportPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const ownerOfPage = (request: Parameters<typeof sessionOf>[0]): BooksOwner => {
    const session = sessionOf(request);
    return { merchantId: session.merchantId!, environment: session.environment };
  };

  app.get<{ Querystring: RangeQuery }>(
    '/dashboard/exports',
    { schema: { hide: true, ...dashboardSchemas.exports } },
    async (request, reply) => {
      const session = sessionOf(request);
      const asked = request.query.from !== undefined || request.query.to !== undefined;
      const range = asked
        ? { from: request.query.from?.trim() || undefined, to: request.query.to?.trim() || undefined }
        : defaultRange();
      let summary: SettlementSummary | null = null;
      let problem: string | null = null;
      try {
        summary = await settlementSummary(db, ownerOfPage(request), range);
      } catch (error) {
        if (!(error instanceof SikaError) || error.code !== 'INVALID_ARGUMENT') throw error;
        problem = error.message;
      }
      const search = new URLSearchParams({ from: range.from ?? '', to: range.to ?? '' });
      return sendPage(
        reply,
        page({
          title: 'Exports',
          session,
          kind: 'merchant',
          active: 'exports',
          flash: problem ? { message: problem, error: true } : null,
          body: html`<h1>Exports (${session.environment})</h1>
<p class="muted">Days are Africa/Accra days, from and to included, at most ${EXPORT_RANGE_DAYS_MAX}. Amounts in the files are whole pesewas with a GHS column beside each.</p>
<form method="get" action="/dashboard/exports" class="card row" aria-label="Date range">
  <div><label for="x-from">From</label><input id="x-from" name="from" type="date" required value="${range.from ?? ''}"></div>
  <div><label for="x-to">To</label><input id="x-to" name="to" type="date" required value="${range.to ?? ''}"></div>
  <div><button type="submit">Show summary</button></div></form>
${
  summary
    ? html`<section class="card" aria-label="Downloads"><h2 style="margin-top:0">Download CSV</h2><ul>
${FILES.map((file) => html`<li><a href="/dashboard/exports/${file}.csv?${search.toString()}" download>${FILE_LABELS[file]}</a></li>`)}
</ul></section>
<h2>Daily settlement summary</h2>
${summaryTable(summary)}`
    : ''
}`,
        }),
        problem ? 400 : 200,
      );
    },
  );

  // One route per file (no path parameter: the file names are fixed).
  for (const file of FILES) {
    app.get<{ Querystring: RangeQuery }>(
      `/dashboard/exports/${file}.csv`,
      { schema: { hide: true, ...dashboardSchemas.exportFile } },
      async (request, reply) => {
        const owner = ownerOfPage(request);
        const query = { from: request.query.from, to: request.query.to };
        if (file === 'balance-transactions') {
          const { filename, rows } = await exportBalanceTransactions(db, owner, query);
          return sendCsv(reply, { filename, columns: BALANCE_TRANSACTION_COLUMNS, rows });
        }
        if (file === 'sessions')
          return sendCsv(reply, { ...exportSessions(db, owner, query), columns: SESSION_COLUMNS });
        if (file === 'payouts') return sendCsv(reply, { ...exportPayouts(db, owner, query), columns: PAYOUT_COLUMNS });
        if (file === 'refunds')
          return sendCsv(reply, { ...exportRefunds(db, owner, query), columns: REFUND_CSV_COLUMNS });
        const summary = await settlementSummary(db, owner, query);
        return sendCsv(reply, {
          filename: exportFilename('balance-summary', owner.environment, summary),
          columns: SUMMARY_COLUMNS,
          rows: rowsOf(summary.days),
        });
      },
    );
  }
}
