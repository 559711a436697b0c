// The operator console at /ops: merchants and payout controls, the teller desk, held attempts,
// Live payout reconciliation, banks and branches, and the audit log. Every action is audited.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Actor } from '../../audit/log.ts';
import { listAudit } from '../../audit/log.ts';
import { toSlipResponse } from '../../checkout/payer-service.ts';
import { findSlipByReference } from '../../checkout/store.ts';
import type { AppDeps } from '../../http/deps.ts';
import { toAppError } from '../../http/error-handler.ts';
import { parseCedis } from '../../lib/ghana.ts';
import * as ops from '../../ops/service.ts';
import { settingsFor } from '../../payouts/store.ts';
import type { WebSession } from '../auth.ts';
import { formValue, registerConsoleAuth, sendPage, sessionOf } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, money, page, statusBadge, when_ } from '../layout.ts';
import { operatorAccountPages } from './account.ts';

const actorOf = (session: WebSession): Actor => ({ type: 'operator', id: session.operatorId!, email: session.email });
const isTeller = (session: WebSession) => session.role === 'teller';


export async function opsRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = (reply: FastifyReply, session: WebSession, active: string, title: string, body: Html, flash: { message: string; error?: boolean } | null = null, status = 200) =>
    sendPage(reply, page({ title, session, kind: 'operator', active, flash, body }), status);
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error);
    if (appError.statusCode >= 500) request.log.error({ err: error }, 'ops request failed');
    return sendPage(reply, page({ title: 'Error', session: request.webSession, kind: 'operator', flash: { message: appError.message, error: true }, body: html`<p><a href="/ops">Back</a></p>` }), appError.statusCode);
  });
  await registerConsoleAuth(app, deps, 'operator');

  // Tellers see only the teller desk (and their own account page).
  app.addHook('preHandler', async (request, reply) => {
    const session = request.webSession;
    const path = request.url.split('?')[0]!;
    if (session && isTeller(session) && !path.startsWith('/ops/teller') && !path.startsWith('/ops/account') && path !== '/ops/logout') return reply.redirect('/ops/teller', 303);
  });

  app.get('/ops', { schema: { hide: true, ...opsSchemas.merchants } }, async (request, reply) => {
    const merchants = await db.query<{ id: string; name: string; email: string; created_at: Date; live_access: boolean | null; paused_any: boolean | null }>(
      `SELECT m.id, m.name, m.email, m.created_at,
              (SELECT payout_access FROM payout_settings s WHERE s.merchant_id = m.id AND s.environment = 'live') AS live_access,
              (SELECT bool_or(paused) FROM payout_settings s WHERE s.merchant_id = m.id) AS paused_any
         FROM merchants m ORDER BY m.created_at DESC LIMIT 200`,
    );
    return show(reply, sessionOf(request), 'merchants', 'Merchants', html`<h1>Merchants</h1><div class="table-wrap"><table><thead><tr><th>Merchant</th><th>Email</th><th>Live payouts</th><th>Created</th></tr></thead><tbody>
${merchants.map((m) => html`<tr><td><a href="/ops/merchants/${m.id}">${m.name}</a></td><td>${m.email}</td><td>${statusBadge(m.live_access ? 'enabled' : 'off')}${m.paused_any ? html` ${statusBadge('paused')}` : ''}</td><td>${when_(m.created_at)}</td></tr>`)}
</tbody></table></div>`);
  });

  async function merchantPage(reply: FastifyReply, session: WebSession, merchantId: string, flash: { message: string; error?: boolean } | null = null, status = 200) {
    const merchant = (await db.query<{ id: string; name: string; email: string; payout_approval_required: boolean }>('SELECT id, name, email, payout_approval_required FROM merchants WHERE id::text = $1', [merchantId]))[0];
    if (!merchant) return show(reply, session, 'merchants', 'Not found', html`<h1>Merchant not found</h1>`, null, 404);
    const settings = await db.transaction(async (tx) => ({ test: await settingsFor(tx, merchant.id, 'test'), live: await settingsFor(tx, merchant.id, 'live') }));
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
    return show(reply, session, 'merchants', merchant.name, html`<h1>${merchant.name}</h1><p class="muted">${merchant.email} · <span class="mono">${merchant.id}</span> · approval ${merchant.payout_approval_required ? 'required' : 'not required'}</p>
<div class="grid">${form('test')}${form('live')}</div>`, flash, status);
  }

  app.get<{ Params: { id: string } }>('/ops/merchants/:id', { schema: { hide: true, ...opsSchemas.merchant } }, async (request, reply) => merchantPage(reply, sessionOf(request), request.params.id));

  app.post<{ Params: { id: string } }>('/ops/merchants/:id/payouts', { schema: { hide: true, ...opsSchemas.payoutSettings } }, async (request, reply) => {
    const session = sessionOf(request);
    const environment = formValue(request, 'environment');
    const limit = parseCedis(formValue(request, 'limit'));
    const daily = parseCedis(formValue(request, 'daily_limit'));
    if ((environment !== 'test' && environment !== 'live') || !limit || !daily) {
      return merchantPage(reply, session, request.params.id, { message: 'Limits must be amounts in GHS above zero.', error: true }, 400);
    }
    await ops.changePayoutSettings(db, actorOf(session), request.params.id, environment, {
      payout_access: formValue(request, 'access') === 'on',
      paused: formValue(request, 'paused') === 'on',
      payout_limit_minor: limit,
      daily_limit_minor: daily,
    });
    return merchantPage(reply, session, request.params.id, { message: `${environment === 'test' ? 'Test' : 'Live'} payout settings saved.` });
  });

  // ---- teller desk ----
  async function tellerPage(reply: FastifyReply, session: WebSession, reference: string, flash: { message: string; error?: boolean } | null = null, status = 200) {
    const slip = reference ? await findSlipByReference(db, reference.trim().toUpperCase()) : null;
    const view = slip ? await toSlipResponse(db, slip, false) : null;
    const branches = view?.can_record
      ? await db.query<{ id: string; label: string }>(`SELECT br.id, b.name || ' · ' || br.name AS label FROM bank_branches br JOIN banks b ON b.id = br.bank_id WHERE br.active AND b.active ORDER BY b.name, br.name`)
      : [];
    return show(reply, session, 'teller', 'Teller', html`<h1>Teller desk</h1>
<form method="get" action="/ops/teller" class="card row"><div><label for="slip-reference">Slip reference</label><input id="slip-reference" name="reference" value="${reference}" placeholder="SK-XXXX-XXXX" autocomplete="off" required></div><div><button type="submit">Find slip</button></div></form>
${reference && !view ? html`<div class="card" role="alert"><strong>No slip with reference ${reference}.</strong> Check the reference on the payer's slip.</div>` : ''}
${view ? html`<section class="card" aria-label="Slip ${view.reference}"><h2 style="margin-top:0">Slip ${view.reference} ${statusBadge(view.status)}</h2>
  <p><strong>Amount to collect: ${money(view.amount_minor)}</strong></p>
  <p>Merchant: ${view.merchant_name} · Invoice ${view.invoice_ref}${view.customer_name ? ` · Payer ${view.customer_name}` : ''}<br>Expires ${when_(new Date(view.expires_at))}</p>
  ${view.can_record ? html`<form method="post" action="/ops/teller/record">${csrfField(session)}<input type="hidden" name="reference" value="${view.reference}">
    <label for="branch">Branch</label><select id="branch" name="branch_id" required>${branches.map((b) => html`<option value="${b.id}">${b.label}</option>`)}</select>
    <label for="amount">Cash received (GHS)</label><input id="amount" name="amount" inputmode="decimal" required placeholder="${(view.amount_minor / 100).toFixed(2)}">
    <p><button type="submit">Record deposit</button></p></form>` : html`<p role="alert"><strong>Do not take cash for this slip:</strong> it is ${view.status}.</p>`}
</section>` : ''}`, flash, status);
  }

  app.get<{ Querystring: { reference?: string } }>('/ops/teller', { schema: { hide: true, ...opsSchemas.teller } }, async (request, reply) => tellerPage(reply, sessionOf(request), (request.query.reference ?? '').slice(0, 40)));

  app.post('/ops/teller/record', { schema: { hide: true, ...opsSchemas.tellerRecord } }, async (request, reply) => {
    const session = sessionOf(request);
    const reference = formValue(request, 'reference').slice(0, 40);
    const amountMinor = parseCedis(formValue(request, 'amount'));
    if (!amountMinor) return tellerPage(reply, session, reference, { message: 'Enter the cash received in GHS, e.g. 502.00.', error: true }, 400);
    try {
      const applied = await ops.tellerRecordDeposit(db, actorOf(session), deps.config.checkoutUrlHost, { reference, branchId: formValue(request, 'branch_id'), amountMinor });
      return tellerPage(reply, session, reference, { message: `Deposit recorded: ${money(amountMinor)}. The payment is ${applied.attempt.status} and the checkout is ${applied.session.status}.` });
    } catch (error) {
      const appError = toAppError(error);
      if (appError.statusCode >= 500) throw error;
      return tellerPage(reply, session, reference, { message: appError.message, error: true }, appError.statusCode);
    }
  });

  // ---- held attempts ----
  async function reviewPage(reply: FastifyReply, session: WebSession, flash: { message: string; error?: boolean } | null = null, status = 200) {
    const held = await ops.heldAttempts(db);
    return show(reply, session, 'review', 'Review', html`<h1>Payments held for review</h1>
<div class="table-wrap"><table><thead><tr><th>Attempt</th><th>Merchant</th><th>Rail</th><th>Amount</th><th>Status</th><th><span class="muted">Decision</span></th></tr></thead><tbody>
${held.map((a) => html`<tr><td class="mono">${a.id}<br><span class="muted">${a.session_id} · ${a.environment}</span></td><td>${a.merchant_name}</td><td>${a.rail}</td><td>${money(a.amount_charged_minor)}</td><td>${statusBadge(a.status)}<br><span class="muted">${a.raw_status}</span></td>
<td><form method="post" action="/ops/review/${a.id}" class="inline">${csrfField(session)}<button name="decision" value="approve" aria-label="Approve ${a.id}">Approve</button> <button name="decision" value="reject" class="danger" aria-label="Reject ${a.id}">Reject</button></form></td></tr>`)}
${held.length === 0 ? html`<tr><td colspan="6" class="muted">Nothing is waiting.</td></tr>` : ''}
</tbody></table></div>`, flash, status);
  }
  app.get('/ops/review', { schema: { hide: true, ...opsSchemas.review } }, async (request, reply) => reviewPage(reply, sessionOf(request)));
  app.post<{ Params: { id: string } }>('/ops/review/:id', { schema: { hide: true, ...opsSchemas.reviewDecision } }, async (request, reply) => {
    const session = sessionOf(request);
    const decision = formValue(request, 'decision');
    if (decision !== 'approve' && decision !== 'reject') return reviewPage(reply, session, { message: 'Choose approve or reject.', error: true }, 400);
    const applied = await ops.resolveHeldAttempt(db, actorOf(session), deps.config.checkoutUrlHost, request.params.id, decision);
    return reviewPage(reply, session, { message: `Attempt ${applied.attempt.id} is ${applied.attempt.status}; checkout ${applied.session.id} is ${applied.session.status}.` });
  });

  // ---- payouts reconciliation ----
  async function payoutsPage(reply: FastifyReply, session: WebSession, flash: { message: string; error?: boolean } | null = null, status = 200) {
    const rows = await db.query<{ id: string; reference: string; merchant_name: string; status: string; amount_minor: number; bank_reference: string; reconciliation_status: string; updated_at: Date }>(
      `SELECT p.id, p.reference, m.name AS merchant_name, p.status, p.amount_minor, p.bank_reference, p.reconciliation_status, p.updated_at
         FROM payouts p JOIN merchants m ON m.id = p.merchant_id
        WHERE p.environment = 'live' AND p.status IN ('paid', 'returned', 'processing', 'requested') ORDER BY p.updated_at DESC LIMIT 200`,
    );
    return show(reply, session, 'payouts', 'Live payouts', html`<h1>Live payouts</h1>
<div class="table-wrap"><table><thead><tr><th>Reference</th><th>Merchant</th><th>Amount</th><th>Status</th><th>Bank reference</th><th>Reconciliation</th><th><span class="muted">Actions</span></th></tr></thead><tbody>
${rows.map((p) => html`<tr><td class="mono">${p.reference}</td><td>${p.merchant_name}</td><td>${money(p.amount_minor)}</td><td>${statusBadge(p.status)}</td><td class="mono">${p.bank_reference}</td><td>${statusBadge(p.reconciliation_status)}</td>
<td>${p.reconciliation_status === 'unreconciled' && (p.status === 'paid' || p.status === 'returned') ? html`<form method="post" action="/ops/payouts/${p.id}/reconcile" class="inline">${csrfField(session)}<button name="result" value="matched">Matched</button> <button name="result" value="exception" class="danger">Exception</button></form>` : ''}
${p.status === 'paid' ? html`<form method="post" action="/ops/payouts/${p.id}/return" class="row" style="margin-top:.3rem">${csrfField(session)}<div><label for="ret-${p.id}">Return reference</label><input id="ret-${p.id}" name="return_reference" required></div><div><button class="secondary">Record return</button></div></form>` : ''}</td></tr>`)}
${rows.length === 0 ? html`<tr><td colspan="7" class="muted">No Live payouts.</td></tr>` : ''}
</tbody></table></div>`, flash, status);
  }
  app.get('/ops/payouts', { schema: { hide: true, ...opsSchemas.payouts } }, async (request, reply) => payoutsPage(reply, sessionOf(request)));
  app.post<{ Params: { id: string } }>('/ops/payouts/:id/reconcile', { schema: { hide: true, ...opsSchemas.reconcile } }, async (request, reply) => {
    const session = sessionOf(request);
    const result = formValue(request, 'result');
    if (result !== 'matched' && result !== 'exception') return payoutsPage(reply, session, { message: 'Choose matched or exception.', error: true }, 400);
    const payout = await ops.reconcile(db, actorOf(session), request.params.id, result);
    return payoutsPage(reply, session, { message: `Payout ${payout.reference} is ${payout.reconciliation_status}.` });
  });
  app.post<{ Params: { id: string } }>('/ops/payouts/:id/return', { schema: { hide: true, ...opsSchemas.payoutReturn } }, async (request, reply) => {
    const session = sessionOf(request);
    const reference = formValue(request, 'return_reference').trim().slice(0, 80);
    if (!reference) return payoutsPage(reply, session, { message: 'Enter the return reference from the bank.', error: true }, 400);
    const payout = await ops.recordReturn(db, actorOf(session), request.params.id, reference);
    return payoutsPage(reply, session, { message: `Payout ${payout.reference} is returned; the amount and fee are back on the merchant's balance.` });
  });

  // ---- banks and branches ----
  async function banksPage(reply: FastifyReply, session: WebSession, flash: { message: string; error?: boolean } | null = null, status = 200) {
    const banks = await db.query<{ id: string; name: string; code: string; active: boolean }>('SELECT id, name, code, active FROM banks ORDER BY name');
    const branches = await db.query<{ id: string; bank_id: string; name: string; code: string; active: boolean }>('SELECT id, bank_id, name, code, active FROM bank_branches ORDER BY name');
    return show(reply, session, 'banks', 'Banks', html`<h1>Banks and branches</h1>
<form method="post" action="/ops/banks" class="card row">${csrfField(session)}<div><label for="bank-name">Bank name</label><input id="bank-name" name="name" required></div><div><label for="bank-code">Code</label><input id="bank-code" name="code" required maxlength="10"></div><div><button>Add bank</button></div></form>
${banks.map((b) => html`<section class="card" aria-label="${b.name}"><h2 style="margin-top:0">${b.name} <span class="mono muted">${b.code}</span> ${statusBadge(b.active ? 'active' : 'inactive')}</h2>
<form method="post" action="/ops/banks/${b.id}/${b.active ? 'deactivate' : 'activate'}" class="inline">${csrfField(session)}<button class="${b.active ? 'danger' : 'secondary'}">${b.active ? 'Deactivate bank' : 'Activate bank'}</button></form>
<ul class="list">${branches.filter((br) => br.bank_id === b.id).map((br) => html`<li>${br.name} <span class="mono muted">${br.code}</span> ${statusBadge(br.active ? 'active' : 'inactive')}
<form method="post" action="/ops/branches/${br.id}/${br.active ? 'deactivate' : 'activate'}" class="inline">${csrfField(session)}<button class="secondary" aria-label="${br.active ? 'Deactivate' : 'Activate'} ${br.name}">${br.active ? 'Deactivate' : 'Activate'}</button></form></li>`)}</ul>
<form method="post" action="/ops/banks/${b.id}/branches" class="row">${csrfField(session)}<div><label for="br-name-${b.id}">New branch</label><input id="br-name-${b.id}" name="name" required></div><div><label for="br-code-${b.id}">Code</label><input id="br-code-${b.id}" name="code" required placeholder="${b.code}-XXX"></div><div><button class="secondary">Add branch</button></div></form></section>`)}`, flash, status);
  }
  app.get('/ops/banks', { schema: { hide: true, ...opsSchemas.banks } }, async (request, reply) => banksPage(reply, sessionOf(request)));
  app.post('/ops/banks', { schema: { hide: true, ...opsSchemas.addBank } }, async (request, reply) => {
    const session = sessionOf(request);
    await ops.addBank(db, actorOf(session), { name: formValue(request, 'name'), code: formValue(request, 'code') });
    return banksPage(reply, session, { message: 'Bank added.' });
  });
  app.post<{ Params: { id: string } }>('/ops/banks/:id/branches', { schema: { hide: true, ...opsSchemas.addBranch } }, async (request, reply) => {
    const session = sessionOf(request);
    await ops.addBranch(db, actorOf(session), { bankId: request.params.id, name: formValue(request, 'name'), code: formValue(request, 'code') });
    return banksPage(reply, session, { message: 'Branch added.' });
  });
  app.post<{ Params: { table: string; id: string; action: string } }>('/ops/:table/:id/:action', { schema: { hide: true, ...opsSchemas.setActive } }, async (request, reply) => {
    const session = sessionOf(request);
    const { table, id, action } = request.params;
    if ((table !== 'banks' && table !== 'branches') || (action !== 'activate' && action !== 'deactivate')) return banksPage(reply, session, { message: 'Unknown action.', error: true }, 404);
    await ops.setBankActive(db, actorOf(session), table === 'banks' ? 'banks' : 'bank_branches', id, action === 'activate');
    return banksPage(reply, session, { message: `${table === 'banks' ? 'Bank' : 'Branch'} ${action}d.` });
  });

  // ---- audit ----
  app.get('/ops/audit', { schema: { hide: true, ...opsSchemas.audit } }, async (request, reply) => {
    const rows = await listAudit(db, { merchantId: null, limit: 200 });
    return show(reply, sessionOf(request), 'audit', 'Audit log', html`<h1>Audit log</h1><p class="muted">Append-only: every operator and approver action.</p>
<div class="table-wrap"><table><thead><tr><th>When</th><th>Who</th><th>Action</th><th>Object</th><th>Before</th><th>After</th></tr></thead><tbody>
${rows.map((r) => html`<tr><td class="nowrap">${when_(r.created_at)}</td><td>${r.actor_email ?? r.actor_id}<br><span class="muted">${r.actor_type}</span></td><td>${r.action}</td><td class="mono wrap">${r.object_type}<br>${r.object_id}</td><td class="mono json">${JSON.stringify(r.before)}</td><td class="mono json">${JSON.stringify(r.after)}</td></tr>`)}
</tbody></table></div>`);
  });

  await app.register(operatorAccountPages, deps);
}
