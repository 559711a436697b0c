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
  sessions: 'Payments (checkout sessions)',
  payouts: 'Payouts',
  refunds: 'Refunds',
  summary: 'Daily settlement summary',
};

interface RangeQuery {
  from?: string;
  to?: string;
}

const DAY_MS = 86_400_000;
/** The Accra day `days` after (or before, negative) a YYYY-MM-DD day. */
const dayPlus = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** The range picker's presets, from today's Accra day: this month so far (the default), last month, the last 7 days. */
export function rangePresets(today: string): { label: string; from: string; to: string }[] {
  const monthStart = `${today.slice(0, 8)}01`;
  const lastMonthEnd = dayPlus(monthStart, -1);
  return [
    { label: 'This month', from: monthStart, to: today },
    { label: 'Last month', from: `${lastMonthEnd.slice(0, 8)}01`, to: lastMonthEnd },
    { label: 'Last 7 days', from: dayPlus(today, -6), to: today },
  ];
}

/** The month so far (Accra days) when the form has not been sent. */
function defaultRange(): { from: string; to: string } {
  const [thisMonth] = rangePresets(dayOf(new Date()));
  return { from: thisMonth!.from, to: thisMonth!.to };
}

type SummaryDay = SettlementSummary['days'][number];

/**
 * The page's summary: only the days with a movement, in the columns a merchant reads (the CSV keeps every
 * column): what came in, went back, was paid out, everything else (reversals, releases, returns, reserves)
 * as Other, the fees, the day's net and the closing balance; then a total row for the range.
 */
function summaryTable(summary: SettlementSummary): Html {
  const other = (day: SummaryDay) =>
    day.net_minor + day.fees_minor - day.payments_minor - day.refunds_minor - day.payouts_minor;
  const columns: [string, (day: SummaryDay) => number][] = [
    ['Payments', (day) => day.payments_minor],
    ['Refunds', (day) => day.refunds_minor],
    ['Payouts', (day) => day.payouts_minor],
    ['Other', other],
    ['Fees', (day) => -day.fees_minor],
    ['Net', (day) => day.net_minor],
  ];
  const active = summary.days.filter((day) => day.transactions > 0);
  const last = summary.days.at(-1);
  const cells = (values: number[]) => values.map((value) => html`<td class="num">${money(value)}</td>`);
  return html`<div class="table-wrap"><table aria-label="Daily settlement summary"><thead><tr><th scope="col">Day</th>${columns.map(([label]) => html`<th scope="col" class="num">${label}</th>`)}<th scope="col" class="num">Closing</th></tr></thead><tbody>
${active.map((day) => html`<tr><td class="date">${day.day}</td>${cells(columns.map(([, of]) => of(day)))}<td class="num">${money(day.closing_balance_minor)}</td></tr>`)}
${active.length === 0 ? html`<tr><td colspan="${columns.length + 2}" class="muted">No money moved on these days.</td></tr>` : ''}
</tbody><tfoot><tr class="total"><th scope="row">Total</th>${cells(columns.map(([, of]) => summary.days.reduce((sum, day) => sum + of(day), 0)))}<td class="num">${money(last ? last.closing_balance_minor : 0)}</td></tr></tfoot></table></div>
<p class="muted">${active.length} of ${summary.days.length} days had activity. The opening balance was ${money(summary.days[0]?.opening_balance_minor ?? 0)}.</p>`;
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
  <div><button type="submit">Show summary</button></div>
  <nav aria-label="Ranges" class="row">${rangePresets(dayOf(new Date())).map((preset) => html`<a href="/dashboard/exports?from=${preset.from}&amp;to=${preset.to}"${preset.from === range.from && preset.to === range.to ? html` aria-current="true"` : ''}>${preset.label}</a>`)}</nav></form>
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
