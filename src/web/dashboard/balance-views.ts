// The Balance page (issue 36): the balances now, the search and filters as one GET form (the address is the
// search), the balance transactions newest first with their source linked to its page, the pager, and the CSV
// link of exactly this search.
import { BALANCE_SEARCH_LENGTH_MAX, type BalanceQuery } from '../../books/balance-list.ts';
import {
  BALANCE_TRANSACTION_TYPES,
  balanceTransactionId,
  typeOfKind,
  type BalanceTransactionRow,
} from '../../books/model.ts';
import type { Balance } from '../../ledger/service.ts';
import { html, raw, type Html } from '../html.ts';
import { money, when_ } from '../layout.ts';
import { filterSelect, listHref } from '../ops/console-list.ts';

export const BALANCE_PATH = '/dashboard/balance';

/** A type as the page names it: "Payment reversal" for payment_reversal. */
export const typeLabel = (type: string) => {
  const words = type.replace(/_/g, ' ');
  return words[0]!.toUpperCase() + words.slice(1);
};

/** The query's parameters that the address keeps (empty ones left out by listHref). */
export const balanceQueryParams = (query: BalanceQuery): Record<string, string | undefined> => ({
  q: query.q,
  type: query.type,
  from: query.from,
  to: query.to,
});

function balanceFigures(balance: Balance): Html {
  const figure = (label: string, minor: number) =>
    html`<div class="stat"><div class="label">${label}</div><div class="value">${money(minor)}</div></div>`;
  return html`<section class="card" aria-label="Balances"><div class="grid">
${figure('Available', balance.available_minor)}${figure('Pending (clearing)', balance.pending_minor)}${figure('Held', balance.held_minor)}${balance.reserved_minor > 0 ? figure('Reserve', balance.reserved_minor) : ''}</div></section>`;
}

function filterForm(query: BalanceQuery): Html {
  const types = BALANCE_TRANSACTION_TYPES.map((type) => [type, typeLabel(type)] as const);
  return html`<form method="get" action="${BALANCE_PATH}" class="card row" role="search" aria-label="Search balance transactions">
<div style="flex:2 1 16rem"><label for="f-q">Search</label><input id="f-q" name="q" type="search" value="${query.q ?? ''}" maxlength="${BALANCE_SEARCH_LENGTH_MAX}" placeholder="txn_…, cs_…, po_…, re_…" aria-describedby="f-q-hint"><div id="f-q-hint" class="muted" style="font-size:.8rem">A transaction id, or the id of its session, payout or refund.</div></div>
${filterSelect('type', 'Type', types, query.type, 'f-type')}
<div><label for="f-from">From</label><input id="f-from" name="from" type="date" value="${query.from ?? ''}"></div>
<div><label for="f-to">To</label><input id="f-to" name="to" type="date" value="${query.to ?? ''}"></div>
<div><button type="submit">Search</button> <a href="${BALANCE_PATH}">Clear</a></div></form>`;
}

/** What moved the balance, linked to the page where there is one: a payment's session, a payout, a refund (found by its id). */
function sourceCell(row: BalanceTransactionRow): Html {
  if (row.reference_type === 'payment')
    return row.session_id
      ? html`Payment · <a class="mono" href="/dashboard/sessions/${row.session_id}">${row.session_id}</a>`
      : html`Payment · <span class="mono">${row.reference_id}</span>`;
  if (row.reference_type === 'payout')
    return html`Payout · <a class="mono" href="/dashboard/payouts/${row.reference_id}">${row.reference_id}</a>`;
  return html`Refund · <a class="mono" href="${listHref('/dashboard/refunds', { q: row.reference_id })}">${row.reference_id}</a>`;
}

// One span in the source cell: a phone's stacked row lays the cell out as a flex row (label, value).
function transactionRow(row: BalanceTransactionRow): Html {
  const id = balanceTransactionId(row.entry_id);
  return html`<tr><td class="date" data-label="Date">${when_(row.created_at)}</td><td class="nowrap" data-label="Type">${typeLabel(typeOfKind(row.kind))}${row.status === 'pending' ? html` <span class="muted">(pending)</span>` : ''}</td><td class="id" data-label="Source"><span>${sourceCell(row)}<br><span class="mono muted">${id}</span></span></td><td class="num" data-label="Amount">${money(row.net_minor + row.fee_minor)}</td><td class="num" data-label="Fee">${money(row.fee_minor)}</td><td class="num" data-label="Net">${money(row.net_minor)}</td></tr>`;
}

/** The page's body: the balances, the form, the rows, the pager and the export of the same search. */
export function balanceBody(view: {
  balance: Balance;
  environment: string;
  query: BalanceQuery;
  rows: readonly BalanceTransactionRow[];
  next: string | null;
  later: boolean;
}): Html {
  const params = balanceQueryParams(view.query);
  const filtered = Boolean(view.query.q || view.query.type || view.query.from || view.query.to);
  return html`<h1>Balance (${view.environment})</h1>
${balanceFigures(view.balance)}
${filterForm(view.query)}
<p class="row"><a class="button secondary" href="${listHref(BALANCE_PATH, { ...params, format: 'csv' })}" download>Export CSV</a></p>
<div class="table-wrap"><table class="stack" aria-label="Balance transactions"><thead><tr><th scope="col">Date</th><th scope="col">Type</th><th scope="col">Source</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Fee</th><th scope="col" class="num">Net</th></tr></thead><tbody>
${view.rows.map(transactionRow)}
${view.rows.length === 0 ? html`<tr><td colspan="6" class="muted">${filtered ? 'No balance transactions match.' : 'No balance transactions yet.'}</td></tr>` : ''}
</tbody></table></div>
${
  view.next || view.later
    ? html`<nav aria-label="Pages" class="row" style="margin-top:.6rem">${view.later ? html`<a class="button secondary" href="${listHref(BALANCE_PATH, params)}">Newest</a>` : ''}${view.next ? html`<a class="button secondary" href="${listHref(BALANCE_PATH, { ...params, after: view.next })}">Next page</a>` : ''}</nav>`
    : raw('')
}`;
}
