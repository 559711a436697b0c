// The dashboard's payout page bodies: list, detail (approval, cancel, receipt, evidence), the new-payout
// form with its live fee quote, and recipients. routes.ts fetches their data through services and sends them.
import { randomBytes } from 'node:crypto';
import type { listApiKeys, listEndpoints } from '../../../accounts/integrations.ts';
import type { Balance } from '../../../ledger/service.ts';
import { MOMO_NETWORKS, NETWORK_LABELS } from '../../../lib/ghana.ts';
import {
  ACCOUNT_NAME_LENGTH_MAX,
  ACCOUNT_NUMBER_DIGITS_MAX,
  CANCEL_REASON_LENGTH_MAX,
  canCancel,
  ACCOUNT_TYPES,
  type AccountType,
  NOTES_LENGTH_MAX,
  PAYOUT_STATUSES,
  STATUS_LABELS,
} from '../../../payouts/model.ts';
import type { activeBanks, PayoutRow, RecipientRow } from '../../../payouts/queries.ts';
import { PAYOUT_SEARCH_LENGTH_MAX } from '../../../payouts/payout-search.ts';
import {
  maskedPayoutAccount,
  payoutMethodLabel,
  type PayoutListRow,
  type PayoutsQuery,
} from '../../../payouts/payouts-list.ts';
import { filterSelect, listHref } from '../../ops/console-list.ts';
import { PAYOUT_TYPES, type PayoutType } from '../../../payouts/presenters.ts';
import type { BalanceTransaction } from '../../../books/model.ts';
import type { toPayoutResponse } from '../../../payouts/presenters.ts';
import type { WebSession } from '../../auth.ts';
import { html, raw, type Html } from '../../html.ts';
import { csrfField, money, statusBadge, when_ } from '../../layout.ts';

/** Roles that may create payouts and recipients, and cancel payouts. */
export const canRequest = (s: WebSession) => ['owner', 'admin', 'developer'].includes(s.role);

/** The Payouts page's address. */
export const PAYOUTS_PATH = '/dashboard/payouts';

/** The query's parameters that the address keeps (empty ones left out by listHref). */
const payoutsParams = (query: PayoutsQuery): Record<string, string | undefined> => ({
  q: query.q,
  status: query.status,
  method: query.method,
  type: query.type,
  from: query.from,
  to: query.to,
});

/** How the filter names a payout's method (the recipient's account type). */
const METHOD_LABELS: Record<AccountType, string> = { bank: 'Bank transfer', momo: 'Mobile Money' };

function payoutsFilterForm(query: PayoutsQuery): Html {
  return html`<form method="get" action="${PAYOUTS_PATH}" class="card row" role="search" aria-label="Search payouts">
  <div style="flex:2 1 16rem"><label for="f-q">Search</label><input id="f-q" name="q" type="search" value="${query.q ?? ''}" maxlength="${PAYOUT_SEARCH_LENGTH_MAX}" placeholder="Name, account, amount, reference…" aria-describedby="f-q-hint"><div id="f-q-hint" class="muted" style="font-size:.8rem">An account's or wallet's last four digits, an amount such as 500.00, a client reference or a payout id.</div></div>
  ${filterSelect('status', 'Status', PAYOUT_STATUSES, query.status, 'f-status')}
  ${filterSelect(
    'method',
    'Method',
    ACCOUNT_TYPES.map((type) => [type, METHOD_LABELS[type]] as const),
    query.method,
    'f-method',
  )}
  ${filterSelect(
    'type',
    'Type',
    PAYOUT_TYPES.map((type) => [type, TYPE_LABELS[type]] as const),
    query.type,
    'f-type',
  )}
  <div><label for="f-from">From</label><input id="f-from" name="from" type="date" value="${query.from ?? ''}"></div>
  <div><label for="f-to">To</label><input id="f-to" name="to" type="date" value="${query.to ?? ''}"></div>
  <div><button type="submit">Search</button> <a href="${PAYOUTS_PATH}">Clear</a></div></form>`;
}

// data-label: the column's name beside each value once a phone stacks the row (layout.ts, table.stack).
const payoutRow = (p: PayoutListRow): Html =>
  html`<tr><td class="mono id" data-label="Reference"><span><a href="${PAYOUTS_PATH}/${p.id}">${p.reference}</a><br><span class="muted">${p.client_reference}</span></span></td><td data-label="Recipient"><span>${p.recipient_name}<br><span class="muted">${maskedPayoutAccount(p)}</span></span></td><td class="nowrap" data-label="Method">${payoutMethodLabel(p)}</td><td data-label="Type">${TYPE_LABELS[p.type ?? 'manual']}</td><td class="num" data-label="Amount">${money(Number(p.amount_minor))}</td><td class="num" data-label="Fee">${money(Number(p.fee_minor))}</td><td data-label="Status">${statusBadge(p.status)}</td><td class="date" data-label="Created">${when_(p.created_at)}</td></tr>`;

/** The Payouts page's body: its actions, the search and filters, the rows, the pager and the export of the same search. */
export function listView(
  _session: WebSession,
  view: {
    query: PayoutsQuery;
    rows: readonly PayoutListRow[];
    next: string | null;
    later: boolean;
    searchedAs: readonly string[];
  },
): Html {
  const params = payoutsParams(view.query);
  const filtered = Object.values(params).some(Boolean);
  return html`<h1>Payouts</h1>
<p class="row"><a class="button" href="${PAYOUTS_PATH}/new">New payout</a> <a class="button secondary" href="/dashboard/recipients">Recipients</a> <a class="button secondary" href="${listHref(PAYOUTS_PATH, { ...params, format: 'csv' })}" download>Export CSV</a></p>
${payoutsFilterForm(view.query)}
${view.searchedAs.length ? html`<p class="muted" id="searched-as">Searched as ${view.searchedAs.join(', ')}.</p>` : ''}
<div class="table-wrap"><table class="stack" aria-label="Payouts"><thead><tr><th>Reference</th><th>Recipient</th><th>Method</th><th>Type</th><th class="num">Amount</th><th class="num">Fee</th><th>Status</th><th>Created</th></tr></thead><tbody>
${view.rows.map(payoutRow)}
${view.rows.length === 0 ? html`<tr><td colspan="8" class="muted">${filtered || view.later ? 'No payouts match.' : 'No payouts yet.'}</td></tr>` : ''}</tbody></table></div>
${
  view.next || view.later
    ? html`<nav aria-label="Pages" class="row" style="margin-top:.6rem">${view.later ? html`<a class="button secondary" href="${listHref(PAYOUTS_PATH, params)}">Newest</a>` : ''}${view.next ? html`<a class="button secondary" href="${listHref(PAYOUTS_PATH, { ...params, after: view.next })}">Next page</a>` : ''}</nav>`
    : ''
}`;
}

/** How the pages name a payout's type. */
const TYPE_LABELS: Record<PayoutType, string> = { manual: 'Manual', settlement: 'Settlement' };

/** What a settlement paid out (routes.ts): its first balance transactions and the totals of all of them. */
export interface SettlementView {
  transactions: readonly BalanceTransaction[];
  totals: { count: number; amount_minor: number; fee_minor: number; net_minor: number };
}

/** A settlement's period and the balance transactions it paid out, with their totals and the CSV of all. */
function settlementSection(payout: PayoutRow, settlement: SettlementView): Html {
  const { transactions, totals } = settlement;
  const period = html`${payout.settlement_period_start ? html`from ${when_(payout.settlement_period_start)}` : 'from your first balance movement'} to ${when_(payout.settlement_period_end)}`;
  return html`<section class="card" aria-label="Settlement"><h2 style="margin-top:0">Settlement</h2>
<p>Period: ${period}. ${totals.count} balance transaction${totals.count === 1 ? '' : 's'} paid out; their net is the payout's amount.</p>
<p><a class="button secondary" href="/dashboard/payouts/${payout.id}/transactions.csv">Download CSV</a></p>
<div class="table-wrap"><table><thead><tr><th>Type</th><th>Source</th><th class="num">Amount</th><th class="num">Fee</th><th class="num">Net</th><th>Available on</th></tr></thead><tbody>
${transactions.map((t) => html`<tr><td>${t.type}</td><td class="mono wrap">${t.source.id}</td><td class="num">${money(t.amount_minor)}</td><td class="num">${money(t.fee_minor)}</td><td class="num">${money(t.net_minor)}</td><td class="date">${when_(new Date(t.available_on))}</td></tr>`)}
${transactions.length === 0 ? html`<tr><td colspan="6" class="muted">No balance transactions.</td></tr>` : ''}</tbody>
<tfoot><tr><th colspan="2">Total</th><th class="num">${money(totals.amount_minor)}</th><th class="num">${money(totals.fee_minor)}</th><th class="num">${money(totals.net_minor)}</th><td></td></tr></tfoot></table></div>
${totals.count > transactions.length ? html`<p class="muted">The first ${transactions.length} of ${totals.count} are shown; the CSV file has every one.</p>` : ''}</section>`;
}

export function detailView(
  session: WebSession,
  payout: PayoutRow,
  view: Awaited<ReturnType<typeof toPayoutResponse>>,
  settlement: SettlementView | null = null,
): Html {
  const mayDecide =
    payout.status === 'requested' && session.role === 'approver' && payout.requested_by_user_id !== session.userId;
  const isRequester = payout.requested_by_user_id === session.userId;
  return html`<h1>Payout <span class="mono">${payout.reference}</span> ${statusBadge(payout.status)}</h1>
<div class="card grid"><div class="stat"><div class="label">Amount</div><div class="value">${money(payout.amount_minor)}</div></div>
<div class="stat"><div class="label">Fee</div><div class="value">${money(payout.fee_minor)}</div></div><div class="stat"><div class="label">Total debit</div><div class="value">${money(payout.total_debit_minor)}</div></div>
<div><div class="muted">Status</div>${STATUS_LABELS[payout.status]}${payout.failure_reason ? html`<br><span class="muted">${payout.failure_reason}</span>` : ''}</div>
<div><div class="muted">Recipient</div>${view.recipient?.account_name ?? '–'}<br><span class="muted">${view.recipient?.bank_name ?? view.recipient?.network?.toUpperCase() ?? ''} ${view.recipient?.account_number ?? view.recipient?.phone ?? ''}</span></div>
<div><div class="muted">Client reference</div><span class="mono">${payout.client_reference}</span></div><div><div class="muted">Bank reference</div><span class="mono">${payout.bank_reference || '–'}</span></div>
<div><div class="muted">Reconciliation</div>${payout.reconciliation_status}</div><div><div class="muted">Type</div>${TYPE_LABELS[payout.type ?? 'manual']}</div></div>
${settlement ? settlementSection(payout, settlement) : ''}
${
  payout.status === 'requested'
    ? mayDecide
      ? html`<section class="card" aria-label="Approval"><h2 style="margin-top:0">Approval</h2><form method="post" action="/dashboard/payouts/${payout.id}/decision">${csrfField(session)}
      <label for="reason">Reason (optional)</label><input id="reason" name="reason" maxlength="${CANCEL_REASON_LENGTH_MAX}">
      ${session.secondFactorEnrolled ? html`<label for="approval-code">Code from your authenticator app (to approve)</label><input id="approval-code" name="code" autocomplete="one-time-code" inputmode="numeric" maxlength="10">` : ''}
      <p><button name="decision" value="approve">Approve payout</button> <button name="decision" value="reject" class="danger">Reject payout</button></p></form></section>`
      : html`<p class="card" role="note">${isRequester ? 'You requested this payout, so another approver must approve or reject it.' : session.role === 'approver' ? '' : 'Waiting for a user with the approver role.'}</p>`
    : ''
}
${canCancel(payout.status, payout.processing_step) && canRequest(session) ? html`<form method="post" action="/dashboard/payouts/${payout.id}/cancel" class="inline">${csrfField(session)}<button class="danger">Cancel payout</button></form>` : ''}
${payout.status === 'paid' || payout.status === 'returned' ? html`<p><a class="button secondary" href="/dashboard/payouts/${payout.id}/receipt">Download receipt (PDF)</a></p>` : ''}
<h2>Evidence</h2><ul>${view.evidence.map((e) => html`<li>${e.filename ?? e.id} · ${e.content_type} · ${e.size_bytes} bytes</li>`)}${view.evidence.length === 0 ? html`<li class="muted">No files.</li>` : ''}</ul>
<form method="post" action="/dashboard/payouts/${payout.id}/evidence" enctype="multipart/form-data" class="card">${csrfField(session)}
<label for="evidence-file">Attach a file (PDF, PNG or JPEG, at most 5 MB)</label><input id="evidence-file" name="file" type="file" accept="application/pdf,image/png,image/jpeg" required>
<p><button class="secondary">Upload evidence</button></p></form>`;
}

export interface NewPayoutData {
  recipients: readonly RecipientRow[];
  keys: Awaited<ReturnType<typeof listApiKeys>>;
  endpoints: Awaited<ReturnType<typeof listEndpoints>>;
  balance: Balance;
}

export function newPayoutView(session: WebSession, { recipients, keys, endpoints, balance: bal }: NewPayoutData): Html {
  const usable = recipients.filter((r) => r.active && r.verification_status !== 'rejected');
  const keysWithEndpoint = keys.filter(
    (k) => !k.revoked_at && endpoints.some((e) => e.api_key_id === k.id && e.status === 'active'),
  );
  return html`<h1>New payout</h1><p>Available: <strong>${money(bal.available_minor)}</strong></p>
${keysWithEndpoint.length === 0 ? html`<p class="card" role="alert">Payouts need an API key with an active webhook endpoint (events about the payout go there). <a href="/dashboard/developers">Add one</a>.</p>` : ''}
${usable.length === 0 ? html`<p class="card">No usable recipients yet. <a href="/dashboard/recipients">Add a recipient</a>.</p>` : ''}
<form method="post" action="/dashboard/payouts" class="card" id="new-payout">${csrfField(session)}
<label for="recipient">Recipient</label><select id="recipient" name="recipient_id" required>${usable.map((r) => html`<option value="${r.id}" data-type="${r.account_type}">${r.account_name} · ${r.bank_name ?? r.network?.toUpperCase()} ${r.account_number ?? r.phone}</option>`)}</select>
<label for="amount">Amount (GHS)</label><input id="amount" name="amount" inputmode="decimal" required placeholder="100.00" aria-describedby="fee-quote">
<p id="fee-quote" aria-live="polite" class="muted">Enter an amount to see the fee.</p>
<label for="key">Request as API key</label><select id="key" name="api_key_id">${keysWithEndpoint.map((k) => html`<option value="${k.id}">${k.prefix}…</option>`)}</select>
<label for="notes">Notes (optional)</label><input id="notes" name="notes" maxlength="${NOTES_LENGTH_MAX}">
<input type="hidden" name="client_reference" value="dash-${randomBytes(8).toString('hex')}">
<p><button type="submit">Create payout</button></p></form>
<script>${raw(FEE_QUOTE_SCRIPT)}</script>`;
}

export function recipientsView(
  session: WebSession,
  recipients: readonly RecipientRow[],
  banks: Awaited<ReturnType<typeof activeBanks>>,
  replacing: string | null,
): Html {
  return html`<h1>Recipients</h1>
<div class="table-wrap"><table class="stack" aria-label="Recipients"><thead><tr><th>Name</th><th>Account</th><th>Verification</th><th>Status</th><th><span class="muted">Actions</span></th></tr></thead><tbody>
${recipients.map(
  (
    r,
  ) => html`<tr><td data-label="Name"><span>${r.account_name}<br><span class="mono muted wrap">${r.id}</span></span></td><td data-label="Account">${r.account_type === 'bank' ? html`<span>${r.bank_name} <span class="mono nowrap">${r.account_number}</span></span>` : html`<span class="nowrap">${r.network?.toUpperCase()} <span class="mono">${r.phone}</span></span>`}</td>
<td data-label="Verification"><span>${statusBadge(r.verification_status)}${r.rejection_reason ? html`<br><span class="muted">${r.rejection_reason}</span>` : ''}</span></td><td data-label="Status">${statusBadge(r.active ? 'active' : 'inactive')}</td>
<td data-label="Actions">${r.active && canRequest(session) ? html`<a class="button secondary" href="/dashboard/recipients?replace=${r.id}#add">Replace</a> <form method="post" action="/dashboard/recipients/${r.id}/deactivate" class="inline">${csrfField(session)}<button class="danger" aria-label="Deactivate ${r.account_name}">Deactivate</button></form>` : ''}</td></tr>`,
)}
${recipients.length === 0 ? html`<tr><td colspan="5" class="muted">No recipients yet.</td></tr>` : ''}</tbody></table></div>
${
  canRequest(session)
    ? html`<form method="post" action="/dashboard/recipients" class="card" id="add">${csrfField(session)}<h2 style="margin-top:0">${replacing ? 'Replace recipient' : 'Add a recipient'}</h2>
${replacing ? html`<input type="hidden" name="previous_version_id" value="${replacing}"><p class="muted">Replaces <span class="mono">${replacing}</span>; the old version becomes inactive.</p>` : ''}
<label for="r-type">Account type</label><select id="r-type" name="account_type"><option value="bank">Bank account</option><option value="momo">Mobile Money wallet</option></select>
<label for="r-name">Account name</label><input id="r-name" name="account_name" required maxlength="${ACCOUNT_NAME_LENGTH_MAX}">
<fieldset class="group"><legend>Bank account</legend>
<label for="r-bank">Bank</label><select id="r-bank" name="bank_id">${banks.map((b) => html`<option value="${b.id}">${b.name}</option>`)}</select>
<label for="r-number">Account number</label><input id="r-number" name="account_number" inputmode="numeric" maxlength="${ACCOUNT_NUMBER_DIGITS_MAX}"></fieldset>
<fieldset class="group"><legend>Mobile Money wallet</legend>
<label for="r-network">Network</label><select id="r-network" name="network">${MOMO_NETWORKS.map((n) => html`<option value="${n}">${NETWORK_LABELS[n]}</option>`)}</select>
<label for="r-phone">Phone</label><input id="r-phone" name="phone" inputmode="tel" placeholder="024 123 4567"></fieldset>
<p><button type="submit">Save recipient</button></p></form>`
    : ''
}`;
}

// Progressive enhancement: the form works without it; with it the fee shows as you type.
const FEE_QUOTE_SCRIPT = `(()=>{const f=document.getElementById('new-payout');if(!f)return;const a=f.amount,r=f.recipient_id,o=document.getElementById('fee-quote');let t;
const q=()=>{clearTimeout(t);t=setTimeout(async()=>{if(!a.value||!r.value){o.textContent='Enter an amount to see the fee.';return}
try{const res=await fetch('/dashboard/payouts/quote?recipient_id='+encodeURIComponent(r.value)+'&amount='+encodeURIComponent(a.value),{credentials:'same-origin'});const j=await res.json();o.textContent=res.ok?j.text:j.error.message}catch(e){o.textContent='Could not get a quote.'}},250)};
a.addEventListener('input',q);r.addEventListener('change',q)})();`;
