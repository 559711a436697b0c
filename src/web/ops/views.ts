// The operator console's page bodies (routes.ts fetches their data through the ops service and sends them).
import type { AuditRow, BanksAndBranches, HeldAttemptRow, LivePayoutRow, MerchantOverviewRow, PayoutControls, TellerSlip } from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, money, statusBadge, when_ } from '../layout.ts';

export const merchantsView = (merchants: readonly MerchantOverviewRow[]): Html => html`<h1>Merchants</h1><div class="table-wrap"><table><thead><tr><th>Merchant</th><th>Email</th><th>Live payouts</th><th>Created</th></tr></thead><tbody>
${merchants.map((m) => html`<tr><td><a href="/ops/merchants/${m.id}">${m.name}</a></td><td>${m.email}</td><td>${statusBadge(m.live_access ? 'enabled' : 'off')}${m.paused_any ? html` ${statusBadge('paused')}` : ''}</td><td>${when_(m.created_at)}</td></tr>`)}
</tbody></table></div>`;

export function merchantView(session: WebSession, { merchant, settings }: PayoutControls): Html {
  const form = (environment: 'test' | 'live') => {
    const s = settings[environment];
    return html`<form method="post" action="/ops/merchants/${merchant.id}/payouts" class="card">${csrfField(session)}<input type="hidden" name="environment" value="${environment}">
        <h2 style="margin-top:0">${environment === 'test' ? 'Test' : 'Live'} payouts</h2>
        <p>Payout access: ${statusBadge(s.payout_access ? 'enabled' : 'off')} · ${s.paused ? statusBadge('paused') : statusBadge('active')}</p>
        <label for="access-${environment}">Payout access</label><select id="access-${environment}" name="access"><option value="on"${raw(s.payout_access ? ' selected' : '')}>On</option><option value="off"${raw(s.payout_access ? '' : ' selected')}>Off</option></select>
        <label for="paused-${environment}">Payouts</label><select id="paused-${environment}" name="paused"><option value="off"${raw(s.paused ? '' : ' selected')}>Running</option><option value="on"${raw(s.paused ? ' selected' : '')}>Paused</option></select>
        <label for="limit-${environment}">Limit per payout (GHS)</label><input id="limit-${environment}" name="limit" inputmode="decimal" value="${(s.payout_limit_minor / 100).toFixed(2)}">
        <label for="daily-${environment}">Daily limit (GHS, Africa/Accra day)</label><input id="daily-${environment}" name="daily_limit" inputmode="decimal" value="${(s.daily_limit_minor / 100).toFixed(2)}">
        <p><button type="submit">Save ${environment} payout settings</button></p></form>`;
  };
  return html`<h1>${merchant.name}</h1><p class="muted">${merchant.email} · <span class="mono">${merchant.id}</span> · approval ${merchant.payout_approval_required ? 'required' : 'not required'}</p>
<div class="grid">${form('test')}${form('live')}</div>`;
}

export const tellerView = (session: WebSession, reference: string, { view, branches }: TellerSlip): Html => html`<h1>Teller desk</h1>
<form method="get" action="/ops/teller" class="card row"><div><label for="slip-reference">Slip reference</label><input id="slip-reference" name="reference" value="${reference}" placeholder="SK-XXXX-XXXX" autocomplete="off" required></div><div><button type="submit">Find slip</button></div></form>
${reference && !view ? html`<div class="card" role="alert"><strong>No slip with reference ${reference}.</strong> Check the reference on the payer's slip.</div>` : ''}
${view ? html`<section class="card" aria-label="Slip ${view.reference}"><h2 style="margin-top:0">Slip ${view.reference} ${statusBadge(view.status)}</h2>
  <p><strong>Amount to collect: ${money(view.amount_minor)}</strong></p>
  <p>Merchant: ${view.merchant_name} · Invoice ${view.invoice_ref}${view.customer_name ? ` · Payer ${view.customer_name}` : ''}<br>Expires ${when_(new Date(view.expires_at))}</p>
  ${view.can_record ? html`<form method="post" action="/ops/teller/record">${csrfField(session)}<input type="hidden" name="reference" value="${view.reference}">
    <label for="branch">Branch</label><select id="branch" name="branch_id" required>${branches.map((b) => html`<option value="${b.id}">${b.label}</option>`)}</select>
    <label for="amount">Cash received (GHS)</label><input id="amount" name="amount" inputmode="decimal" required placeholder="${(view.amount_minor / 100).toFixed(2)}">
    <p><button type="submit">Record deposit</button></p></form>` : html`<p role="alert"><strong>Do not take cash for this slip:</strong> it is ${view.status}.</p>`}
</section>` : ''}`;

export const reviewView = (session: WebSession, held: readonly HeldAttemptRow[]): Html => html`<h1>Payments held for review</h1>
<div class="table-wrap"><table><thead><tr><th>Attempt</th><th>Merchant</th><th>Rail</th><th>Amount</th><th>Status</th><th><span class="muted">Decision</span></th></tr></thead><tbody>
${held.map((a) => html`<tr><td class="mono">${a.id}<br><span class="muted">${a.session_id} · ${a.environment}</span></td><td>${a.merchant_name}</td><td>${a.rail}</td><td>${money(a.amount_charged_minor)}</td><td>${statusBadge(a.status)}<br><span class="muted">${a.raw_status}</span></td>
<td><form method="post" action="/ops/review/${a.id}" class="inline">${csrfField(session)}<button name="decision" value="approve" aria-label="Approve ${a.id}">Approve</button> <button name="decision" value="reject" class="danger" aria-label="Reject ${a.id}">Reject</button></form></td></tr>`)}
${held.length === 0 ? html`<tr><td colspan="6" class="muted">Nothing is waiting.</td></tr>` : ''}
</tbody></table></div>`;

export const payoutsView = (session: WebSession, rows: readonly LivePayoutRow[]): Html => html`<h1>Live payouts</h1>
<div class="table-wrap"><table><thead><tr><th>Reference</th><th>Merchant</th><th>Amount</th><th>Status</th><th>Bank reference</th><th>Reconciliation</th><th><span class="muted">Actions</span></th></tr></thead><tbody>
${rows.map((p) => html`<tr><td class="mono">${p.reference}</td><td>${p.merchant_name}</td><td>${money(p.amount_minor)}</td><td>${statusBadge(p.status)}</td><td class="mono">${p.bank_reference}</td><td>${statusBadge(p.reconciliation_status)}</td>
<td>${p.reconciliation_status === 'unreconciled' && (p.status === 'paid' || p.status === 'returned') ? html`<form method="post" action="/ops/payouts/${p.id}/reconcile" class="inline">${csrfField(session)}<button name="result" value="matched">Matched</button> <button name="result" value="exception" class="danger">Exception</button></form>` : ''}
${p.status === 'paid' ? html`<form method="post" action="/ops/payouts/${p.id}/return" class="row" style="margin-top:.3rem">${csrfField(session)}<div><label for="ret-${p.id}">Return reference</label><input id="ret-${p.id}" name="return_reference" required></div><div><button class="secondary">Record return</button></div></form>` : ''}</td></tr>`)}
${rows.length === 0 ? html`<tr><td colspan="7" class="muted">No Live payouts.</td></tr>` : ''}
</tbody></table></div>`;

export const banksView = (session: WebSession, { banks, branches }: BanksAndBranches): Html => html`<h1>Banks and branches</h1>
<form method="post" action="/ops/banks" class="card row">${csrfField(session)}<div><label for="bank-name">Bank name</label><input id="bank-name" name="name" required></div><div><label for="bank-code">Code</label><input id="bank-code" name="code" required maxlength="10"></div><div><button>Add bank</button></div></form>
${banks.map((b) => html`<section class="card" aria-label="${b.name}"><h2 style="margin-top:0">${b.name} <span class="mono muted">${b.code}</span> ${statusBadge(b.active ? 'active' : 'inactive')}</h2>
<form method="post" action="/ops/banks/${b.id}/${b.active ? 'deactivate' : 'activate'}" class="inline">${csrfField(session)}<button class="${b.active ? 'danger' : 'secondary'}">${b.active ? 'Deactivate bank' : 'Activate bank'}</button></form>
<ul class="list">${branches.filter((br) => br.bank_id === b.id).map((br) => html`<li>${br.name} <span class="mono muted">${br.code}</span> ${statusBadge(br.active ? 'active' : 'inactive')}
<form method="post" action="/ops/branches/${br.id}/${br.active ? 'deactivate' : 'activate'}" class="inline">${csrfField(session)}<button class="secondary" aria-label="${br.active ? 'Deactivate' : 'Activate'} ${br.name}">${br.active ? 'Deactivate' : 'Activate'}</button></form></li>`)}</ul>
<form method="post" action="/ops/banks/${b.id}/branches" class="row">${csrfField(session)}<div><label for="br-name-${b.id}">New branch</label><input id="br-name-${b.id}" name="name" required></div><div><label for="br-code-${b.id}">Code</label><input id="br-code-${b.id}" name="code" required placeholder="${b.code}-XXX"></div><div><button class="secondary">Add branch</button></div></form></section>`)}`;

export const auditView = (rows: readonly AuditRow[]): Html => html`<h1>Audit log</h1><p class="muted">Append-only: every operator and approver action.</p>
<div class="table-wrap"><table><thead><tr><th>When</th><th>Who</th><th>Action</th><th>Object</th><th>Before</th><th>After</th></tr></thead><tbody>
${rows.map((r) => html`<tr><td class="nowrap">${when_(r.created_at)}</td><td>${r.actor_email ?? r.actor_id}<br><span class="muted">${r.actor_type}</span></td><td>${r.action}</td><td class="mono wrap">${r.object_type}<br>${r.object_id}</td><td class="mono json">${JSON.stringify(r.before)}</td><td class="mono json">${JSON.stringify(r.after)}</td></tr>`)}
</tbody></table></div>`;
