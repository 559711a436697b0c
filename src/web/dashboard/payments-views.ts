// The Payments page (issue 36): the search box and filters as one GET form (the address is the search, so it
// can be shared), the rows with their customer and method, the pager, and the CSV link of exactly this search.
import type { PaymentsQuery, PaymentsRow } from '../../checkout/payments-list.ts';
import { SESSION_SEARCH_LENGTH_MAX } from '../../checkout/session-search.ts';
import { SESSION_STATUSES } from '../../checkout/model.ts';
import { MOMO_NETWORKS, NETWORK_LABELS, type MomoNetwork } from '../../lib/ghana.ts';
import { railDescriptors } from '../../rails/registry.ts';
import { html, raw, type Html } from '../html.ts';
import { money, statusBadge, when_ } from '../layout.ts';
import { filterSelect, listHref } from '../ops/console-list.ts';

export const PAYMENTS_PATH = '/dashboard/sessions';

/** How a payer paid or tried to: the network's name for Mobile Money ("MTN MoMo"), else the rail's. */
export function methodLabel(method: PaymentsRow['method']): string {
  if (!method) return '–';
  if (method.network && (MOMO_NETWORKS as readonly string[]).includes(method.network))
    return NETWORK_LABELS[method.network as MomoNetwork];
  return railDescriptors().find((rail) => rail.id === method.rail)?.labels.dashboard ?? method.rail;
}

/** Who paid: the customer's name, else their e-mail. */
const customerOf = (row: PaymentsRow) => row.session.customer_name || row.session.customer_email || '';

/** The query's parameters that the address keeps (empty ones left out by listHref). */
export const queryParams = (query: PaymentsQuery): Record<string, string | undefined> => ({
  q: query.q,
  status: query.status,
  rail: query.rail,
  network: query.network,
  link: query.link,
  from: query.from,
  to: query.to,
});

function filterForm(query: PaymentsQuery, links: readonly { id: string; name: string }[]): Html {
  const rails = railDescriptors().map((rail) => [rail.id, rail.labels.dashboard] as const);
  const networks = MOMO_NETWORKS.map((network) => [network, NETWORK_LABELS[network]] as const);
  return html`<form method="get" action="${PAYMENTS_PATH}" class="card row" role="search" aria-label="Search payments">
  <div style="flex:2 1 16rem"><label for="f-q">Search</label><input id="f-q" name="q" type="search" value="${query.q ?? ''}" maxlength="${SESSION_SEARCH_LENGTH_MAX}" placeholder="Name, phone, amount, receipt…" aria-describedby="f-q-hint"><div id="f-q-hint" class="muted" style="font-size:.8rem">A phone's last four digits, an amount such as 500.00, a receipt number or a session id.</div></div>
  ${filterSelect('status', 'Status', SESSION_STATUSES, query.status, 'f-status')}
  ${filterSelect('rail', 'Method', rails, query.rail, 'f-rail')}
  ${filterSelect('network', 'Network', networks, query.network, 'f-network')}
  ${filterSelect(
    'link',
    'Payment link',
    links.map((link) => [link.id, link.name] as const),
    query.link,
    'f-link',
  )}
  <div><label for="f-from">From</label><input id="f-from" name="from" type="date" value="${query.from ?? ''}"></div>
  <div><label for="f-to">To</label><input id="f-to" name="to" type="date" value="${query.to ?? ''}"></div>
  <div><button type="submit">Search</button> <a href="${PAYMENTS_PATH}">Clear</a></div></form>`;
}

function paymentRow(row: PaymentsRow): Html {
  const s = row.session;
  // data-label: the column's name beside each value once a phone stacks the row (layout.ts, table.stack).
  return html`<tr><td class="date" data-label="Created"><a href="${PAYMENTS_PATH}/${s.id}" aria-label="${when_(s.created_at)}, session ${s.id}">${when_(s.created_at)}</a></td><td data-label="Customer">${customerOf(row)}${s.invoice_ref ? html`<br><span class="muted">${s.invoice_ref}</span>` : ''}</td><td class="nowrap" data-label="Method">${methodLabel(row.method)}</td><td class="num" data-label="Amount">${money(Number(s.amount_minor))}</td><td data-label="Status">${statusBadge(s.status)}</td><td class="mono nowrap" data-label="Receipt">${s.receipt_number ?? ''}</td></tr>`;
}

/** The page's body: the form, what was searched, the rows, the pager and the export of the same search. */
export function paymentsBody(view: {
  query: PaymentsQuery;
  links: readonly { id: string; name: string }[];
  rows: readonly PaymentsRow[];
  next: string | null;
  later: boolean;
  searchedAs: readonly string[];
}): Html {
  const params = queryParams(view.query);
  const searched = view.searchedAs.length
    ? html`<p class="muted" id="searched-as">Searched as ${view.searchedAs.join(', ')}.</p>`
    : '';
  return html`<h1>Payments</h1>
${filterForm(view.query, view.links)}
${searched}
<p class="row"><a class="button secondary" href="${listHref(PAYMENTS_PATH, { ...params, format: 'csv' })}" download>Export CSV</a> <a href="/dashboard/revenue-lines">Revenue lines</a></p>
<div class="table-wrap"><table class="stack" aria-label="Payments"><thead><tr><th scope="col">Created</th><th scope="col">Customer</th><th scope="col">Method</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Receipt</th></tr></thead><tbody>
${view.rows.map(paymentRow)}
${view.rows.length === 0 ? html`<tr><td colspan="6" class="muted">No payments match.</td></tr>` : ''}
</tbody></table></div>
${
  view.next || view.later
    ? html`<nav aria-label="Pages" class="row" style="margin-top:.6rem">${view.later ? html`<a class="button secondary" href="${listHref(PAYMENTS_PATH, params)}">Newest</a>` : ''}${view.next ? html`<a class="button secondary" href="${listHref(PAYMENTS_PATH, { ...params, after: view.next })}">Next page</a>` : ''}</nav>`
    : raw('')
}`;
}
