// Dashboard: payouts (list, detail, approve/reject, receipt, evidence), recipients, and a new-payout form with a live fee quote.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiPrincipal } from '../../accounts/model.ts';
import { checkSecondFactor } from '../../accounts/console-accounts.ts';
import * as accounts from '../../accounts/store.ts';
import type { AppDeps } from '../../http/deps.ts';
import { toAppError } from '../../http/error-handler.ts';
import { MOMO_NETWORKS, NETWORK_LABELS, parseCedis } from '../../lib/ghana.ts';
import { addEvidence, receiptPdf } from '../../payouts/evidence.ts';
import { canCancel, payoutFeeMinor, STATUS_LABELS } from '../../payouts/model.ts';
import * as payouts from '../../payouts/service.ts';
import * as store from '../../payouts/store.ts';
import type { WebSession } from '../auth.ts';
import { formValue, sendPage, sessionOf, signedInAccount, tooManyAttempts } from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, money, page, statusBadge, when_ } from '../layout.ts';

type Flash = { message: string; error?: boolean } | null;
const canRequest = (s: WebSession) => ['owner', 'admin', 'developer'].includes(s.role);


/** The dashboard acts through one of the merchant's keys in the current environment (events go to its endpoint). */
async function principalFor(deps: AppDeps, session: WebSession, apiKeyId: string): Promise<ApiPrincipal | null> {
  const keys = await accounts.listApiKeys(deps.db, session.merchantId!, session.environment);
  const key = keys.find((k) => k.id === apiKeyId && !k.revoked_at);
  return key ? { merchantId: session.merchantId!, environment: session.environment, apiKeyId: key.id, apiKeyPrefix: key.prefix } : null;
}

const dashboardPrincipal = (session: WebSession): ApiPrincipal => ({ merchantId: session.merchantId!, environment: session.environment, apiKeyId: '', apiKeyPrefix: 'dashboard' });

export async function payoutPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = (reply: FastifyReply, session: WebSession, title: string, body: Html, flash: Flash = null, status = 200) =>
    sendPage(reply, page({ title, session, kind: 'merchant', active: 'payouts', flash, body }), status);

  async function listPage(reply: FastifyReply, session: WebSession, pageNumber: number, flash: Flash = null, status = 200) {
    const { rows, total } = await store.listPayouts(db, session.merchantId!, session.environment, pageNumber, 25, null);
    const pages = Math.max(1, Math.ceil(total / 25));
    return show(reply, session, 'Payouts', html`<h1>Payouts</h1>
<p><a class="button" href="/dashboard/payouts/new">New payout</a> <a class="button secondary" href="/dashboard/recipients">Recipients</a></p>
<div class="table-wrap"><table><thead><tr><th>Reference</th><th>Amount</th><th>Fee</th><th>Status</th><th>Created</th></tr></thead><tbody>
${rows.map((p) => html`<tr><td class="mono"><a href="/dashboard/payouts/${p.id}">${p.reference}</a><br><span class="muted">${p.client_reference}</span></td><td>${money(p.amount_minor)}</td><td>${money(p.fee_minor)}</td><td>${statusBadge(p.status)}</td><td>${when_(p.created_at)}</td></tr>`)}
${rows.length === 0 ? html`<tr><td colspan="5" class="muted">No payouts yet.</td></tr>` : ''}</tbody></table></div>
<p class="muted">${total} payout${total === 1 ? '' : 's'} · page ${pageNumber} of ${pages}
${pageNumber > 1 ? html` · <a href="/dashboard/payouts?page=${pageNumber - 1}">Previous</a>` : ''}${pageNumber < pages ? html` · <a href="/dashboard/payouts?page=${pageNumber + 1}">Next</a>` : ''}</p>`, flash, status);
  }

  app.get<{ Querystring: { page?: string } }>('/dashboard/payouts', { schema: { hide: true, ...dashboardSchemas.payouts } }, async (request, reply) =>
    listPage(reply, sessionOf(request), Math.max(1, Math.min(10_000, Number.parseInt(request.query.page ?? '1', 10) || 1))),
  );

  async function detailPage(reply: FastifyReply, session: WebSession, id: string, flash: Flash = null, status = 200) {
    const payout = await store.findPayout(db, session.merchantId!, session.environment, id);
    if (!payout) return show(reply, session, 'Not found', html`<h1>Payout not found</h1>`, flash, 404);
    const view = await payouts.toPayoutResponse(db, payout);
    const mayDecide = payout.status === 'requested' && session.role === 'approver' && payout.requested_by_user_id !== session.userId;
    const isRequester = payout.requested_by_user_id === session.userId;
    return show(reply, session, payout.reference, html`<h1>Payout <span class="mono">${payout.reference}</span> ${statusBadge(payout.status)}</h1>
<div class="card grid"><div class="stat"><div class="label">Amount</div><div class="value">${money(payout.amount_minor)}</div></div>
<div class="stat"><div class="label">Fee</div><div class="value">${money(payout.fee_minor)}</div></div><div class="stat"><div class="label">Total debit</div><div class="value">${money(payout.total_debit_minor)}</div></div>
<div><div class="muted">Status</div>${STATUS_LABELS[payout.status]}${payout.failure_reason ? html`<br><span class="muted">${payout.failure_reason}</span>` : ''}</div>
<div><div class="muted">Recipient</div>${view.recipient?.account_name ?? '–'}<br><span class="muted">${view.recipient?.bank_name ?? view.recipient?.network?.toUpperCase() ?? ''} ${view.recipient?.account_number ?? view.recipient?.phone ?? ''}</span></div>
<div><div class="muted">Client reference</div><span class="mono">${payout.client_reference}</span></div><div><div class="muted">Bank reference</div><span class="mono">${payout.bank_reference || '–'}</span></div>
<div><div class="muted">Reconciliation</div>${payout.reconciliation_status}</div></div>
${payout.status === 'requested'
  ? mayDecide
    ? html`<section class="card" aria-label="Approval"><h2 style="margin-top:0">Approval</h2><form method="post" action="/dashboard/payouts/${payout.id}/decision">${csrfField(session)}
      <label for="reason">Reason (optional)</label><input id="reason" name="reason" maxlength="500">
      ${session.secondFactorEnrolled ? html`<label for="approval-code">Code from your authenticator app (to approve)</label><input id="approval-code" name="code" autocomplete="one-time-code" inputmode="numeric" maxlength="10">` : ''}
      <p><button name="decision" value="approve">Approve payout</button> <button name="decision" value="reject" class="danger">Reject payout</button></p></form></section>`
    : html`<p class="card" role="note">${isRequester ? 'You requested this payout, so another approver must approve or reject it.' : session.role === 'approver' ? '' : 'Waiting for a user with the approver role.'}</p>`
  : ''}
${canCancel(payout.status, payout.processing_step) && canRequest(session) ? html`<form method="post" action="/dashboard/payouts/${payout.id}/cancel" class="inline">${csrfField(session)}<button class="danger">Cancel payout</button></form>` : ''}
${payout.status === 'paid' || payout.status === 'returned' ? html`<p><a class="button secondary" href="/dashboard/payouts/${payout.id}/receipt">Download receipt (PDF)</a></p>` : ''}
<h2>Evidence</h2><ul>${view.evidence.map((e) => html`<li>${e.filename ?? e.id} · ${e.content_type} · ${e.size_bytes} bytes</li>`)}${view.evidence.length === 0 ? html`<li class="muted">No files.</li>` : ''}</ul>
<form method="post" action="/dashboard/payouts/${payout.id}/evidence" enctype="multipart/form-data" class="card">${csrfField(session)}
<label for="evidence-file">Attach a file (PDF, PNG or JPEG, at most 5 MB)</label><input id="evidence-file" name="file" type="file" accept="application/pdf,image/png,image/jpeg" required>
<p><button class="secondary">Upload evidence</button></p></form>`, flash, status);
  }

  app.get<{ Params: { id: string } }>('/dashboard/payouts/:id', { schema: { hide: true, ...dashboardSchemas.payout } }, async (request, reply) => detailPage(reply, sessionOf(request), request.params.id));
  app.get('/dashboard/payouts/new', { schema: { hide: true, ...dashboardSchemas.newPayout } }, async (request, reply) => newPayoutPage(reply, sessionOf(request)));

  app.post<{ Params: { id: string } }>('/dashboard/payouts/:id/decision', { schema: { hide: true, ...dashboardSchemas.payoutDecision } }, async (request, reply) => {
    const session = sessionOf(request);
    const decision = formValue(request, 'decision');
    const payout = await store.findPayout(db, session.merchantId!, session.environment, request.params.id);
    if (!payout || (decision !== 'approve' && decision !== 'reject')) return detailPage(reply, session, request.params.id, { message: 'Choose approve or reject.', error: true }, 400);
    // With a second factor, an approval needs a fresh code: a stolen session alone cannot send money.
    if (decision === 'approve' && session.secondFactorEnrolled) {
      const checked = await checkSecondFactor(db, signedInAccount(request), formValue(request, 'code'), { allowRecoveryCode: false });
      if (!checked.ok) {
        if (checked.reason === 'throttled') reply.header('retry-after', String(checked.retryAfterS));
        const message = checked.reason === 'throttled' ? tooManyAttempts(checked.retryAfterS) : 'Enter the current code from your authenticator app to approve (each code works once).';
        return detailPage(reply, session, payout.id, { message, error: true }, checked.reason === 'throttled' ? 429 : 403);
      }
    }
    try {
      const after = await payouts.decidePayout(db, { payoutId: payout.id, userId: session.userId!, decision, reason: formValue(request, 'reason') || undefined });
      return detailPage(reply, session, payout.id, { message: `Payout ${decision === 'approve' ? 'approved' : 'rejected'}: it is ${after.status}.` });
    } catch (error) {
      const appError = toAppError(error);
      if (appError.statusCode >= 500) throw error;
      return detailPage(reply, session, payout.id, { message: appError.message, error: true }, appError.statusCode);
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/payouts/:id/cancel', { schema: { hide: true, ...dashboardSchemas.payoutCancel } }, async (request, reply) => {
    const session = sessionOf(request);
    try {
      await payouts.cancelPayout(db, dashboardPrincipal(session), request.params.id, `cancelled in the dashboard by ${session.email}`);
      return detailPage(reply, session, request.params.id, { message: 'Payout cancelled; the amount and fee are released.' });
    } catch (error) {
      const appError = toAppError(error);
      if (appError.statusCode >= 500) throw error;
      return detailPage(reply, session, request.params.id, { message: appError.message, error: true }, appError.statusCode);
    }
  });

  app.get<{ Params: { id: string } }>('/dashboard/payouts/:id/receipt', { schema: { hide: true, ...dashboardSchemas.payoutReceipt } }, async (request, reply) => {
    const session = sessionOf(request);
    const payout = await store.findPayout(db, session.merchantId!, session.environment, request.params.id);
    if (!payout) return detailPage(reply, session, request.params.id);
    const pdf = await receiptPdf(db, payout);
    return reply.type('application/pdf').header('content-disposition', `attachment; filename="receipt-${payout.reference}.pdf"`).send(pdf);
  });

  app.post<{ Params: { id: string } }>('/dashboard/payouts/:id/evidence', { schema: { hide: true, ...dashboardSchemas.payoutEvidence } }, async (request, reply) => {
    const session = sessionOf(request);
    const payout = await store.findPayout(db, session.merchantId!, session.environment, request.params.id);
    if (!payout) return detailPage(reply, session, request.params.id);
    const file = request.uploads?.[0];
    if (!file) return detailPage(reply, session, payout.id, { message: 'Choose a file to upload.', error: true }, 400);
    try {
      await addEvidence(db, null, payout, { data: file.data, filename: file.filename || null }, `user:${session.email}`);
      return detailPage(reply, session, payout.id, { message: 'Evidence uploaded.' });
    } catch (error) {
      const appError = toAppError(error);
      if (appError.statusCode >= 500) throw error;
      return detailPage(reply, session, payout.id, { message: appError.message, error: true }, appError.statusCode);
    }
  });

  // ---- new payout with a live fee quote ----
  async function newPayoutPage(reply: FastifyReply, session: WebSession, flash: Flash = null, status = 200) {
    const [recipients, keys, endpoints, bal] = await Promise.all([
      store.listRecipients(db, session.merchantId!, session.environment),
      accounts.listApiKeys(db, session.merchantId!, session.environment),
      accounts.listEndpoints(db, session.merchantId!, session.environment),
      payouts.getBalance(db, dashboardPrincipal(session)),
    ]);
    const usable = recipients.filter((r) => r.active && r.verification_status !== 'rejected');
    const keysWithEndpoint = keys.filter((k) => !k.revoked_at && endpoints.some((e) => e.api_key_id === k.id && e.status === 'active'));
    return show(reply, session, 'New payout', html`<h1>New payout</h1><p>Available: <strong>${money(bal.available_minor)}</strong></p>
${keysWithEndpoint.length === 0 ? html`<p class="card" role="alert">Payouts need an API key with an active webhook endpoint (events about the payout go there). <a href="/dashboard/developers">Add one</a>.</p>` : ''}
${usable.length === 0 ? html`<p class="card">No usable recipients yet. <a href="/dashboard/recipients">Add a recipient</a>.</p>` : ''}
<form method="post" action="/dashboard/payouts" class="card" id="new-payout">${csrfField(session)}
<label for="recipient">Recipient</label><select id="recipient" name="recipient_id" required>${usable.map((r) => html`<option value="${r.id}" data-type="${r.account_type}">${r.account_name} · ${r.bank_name ?? r.network?.toUpperCase()} ${r.account_number ?? r.phone}</option>`)}</select>
<label for="amount">Amount (GHS)</label><input id="amount" name="amount" inputmode="decimal" required placeholder="100.00" aria-describedby="fee-quote">
<p id="fee-quote" aria-live="polite" class="muted">Enter an amount to see the fee.</p>
<label for="key">Request as API key</label><select id="key" name="api_key_id">${keysWithEndpoint.map((k) => html`<option value="${k.id}">${k.prefix}…</option>`)}</select>
<label for="notes">Notes (optional)</label><input id="notes" name="notes" maxlength="500">
<input type="hidden" name="client_reference" value="dash-${randomBytes(8).toString('hex')}">
<p><button type="submit">Create payout</button></p></form>
<script>${raw(FEE_QUOTE_SCRIPT)}</script>`, flash, status);
  }

  app.get<{ Querystring: { recipient_id?: string; amount?: string } }>('/dashboard/payouts/quote', { schema: { hide: true, ...dashboardSchemas.payoutQuote } }, async (request, reply) => {
    const session = sessionOf(request);
    const amountMinor = parseCedis(request.query.amount ?? '');
    const recipient = request.query.recipient_id ? await store.findRecipient(db, session.merchantId!, session.environment, request.query.recipient_id) : null;
    if (!amountMinor || !recipient) return reply.code(400).send({ error: { code: 'INVALID_ARGUMENT', message: 'Choose a recipient and an amount.' } });
    const fee = payoutFeeMinor(recipient.account_type, amountMinor);
    return { amount_minor: amountMinor, fee_minor: fee, total_debit_minor: amountMinor + fee, text: `Fee ${money(fee)} · total debit ${money(amountMinor + fee)}` };
  });

  app.post('/dashboard/payouts', { schema: { hide: true, ...dashboardSchemas.createPayout } }, async (request, reply) => {
    const session = sessionOf(request);
    if (!canRequest(session)) return newPayoutPage(reply, session, { message: 'Your role cannot create payouts.', error: true }, 403);
    const amountMinor = parseCedis(formValue(request, 'amount'));
    const principal = await principalFor(deps, session, formValue(request, 'api_key_id'));
    if (!amountMinor || !principal) return newPayoutPage(reply, session, { message: !amountMinor ? 'Enter an amount in GHS, e.g. 100.00.' : 'Choose an API key.', error: true }, 400);
    try {
      const { payout } = await payouts.createPayout(
        { db, payoutRail: deps.payoutRail, decisions: deps.payoutDecisions, writer: deps.payoutWriter },
        principal,
        { recipient_id: formValue(request, 'recipient_id'), amount_minor: amountMinor, client_reference: formValue(request, 'client_reference'), notes: formValue(request, 'notes') || undefined },
        { requestedByUserId: session.userId! },
      );
      return reply.redirect(`/dashboard/payouts/${payout.id}`, 303);
    } catch (error) {
      const appError = toAppError(error);
      if (appError.statusCode >= 500) throw error;
      return newPayoutPage(reply, session, { message: appError.message, error: true }, appError.statusCode);
    }
  });

  // ---- recipients ----
  async function recipientsPage(reply: FastifyReply, session: WebSession, flash: Flash = null, status = 200, replacing: string | null = null) {
    const [recipients, banks] = await Promise.all([
      store.listRecipients(db, session.merchantId!, session.environment),
      db.query<{ id: string; name: string }>('SELECT id, name FROM banks WHERE active ORDER BY name'),
    ]);
    return show(reply, session, 'Recipients', html`<h1>Recipients</h1>
<div class="table-wrap"><table><thead><tr><th>Name</th><th>Account</th><th>Verification</th><th>Status</th><th><span class="muted">Actions</span></th></tr></thead><tbody>
${recipients.map((r) => html`<tr><td>${r.account_name}<br><span class="mono muted">${r.id}</span></td><td>${r.account_type === 'bank' ? html`${r.bank_name} ${r.account_number}` : html`${r.network?.toUpperCase()} ${r.phone}`}</td>
<td>${statusBadge(r.verification_status)}${r.rejection_reason ? html`<br><span class="muted">${r.rejection_reason}</span>` : ''}</td><td>${statusBadge(r.active ? 'active' : 'inactive')}</td>
<td>${r.active && canRequest(session) ? html`<a class="button secondary" href="/dashboard/recipients?replace=${r.id}#add">Replace</a> <form method="post" action="/dashboard/recipients/${r.id}/deactivate" class="inline">${csrfField(session)}<button class="danger" aria-label="Deactivate ${r.account_name}">Deactivate</button></form>` : ''}</td></tr>`)}
${recipients.length === 0 ? html`<tr><td colspan="5" class="muted">No recipients yet.</td></tr>` : ''}</tbody></table></div>
${canRequest(session) ? html`<form method="post" action="/dashboard/recipients" class="card" id="add">${csrfField(session)}<h2 style="margin-top:0">${replacing ? 'Replace recipient' : 'Add a recipient'}</h2>
${replacing ? html`<input type="hidden" name="previous_version_id" value="${replacing}"><p class="muted">Replaces <span class="mono">${replacing}</span>; the old version becomes inactive.</p>` : ''}
<label for="r-type">Account type</label><select id="r-type" name="account_type"><option value="bank">Bank account</option><option value="momo">Mobile Money wallet</option></select>
<label for="r-name">Account name</label><input id="r-name" name="account_name" required maxlength="200">
<fieldset class="group"><legend>Bank account</legend>
<label for="r-bank">Bank</label><select id="r-bank" name="bank_id">${banks.map((b) => html`<option value="${b.id}">${b.name}</option>`)}</select>
<label for="r-number">Account number</label><input id="r-number" name="account_number" inputmode="numeric" maxlength="34"></fieldset>
<fieldset class="group"><legend>Mobile Money wallet</legend>
<label for="r-network">Network</label><select id="r-network" name="network">${MOMO_NETWORKS.map((n) => html`<option value="${n}">${NETWORK_LABELS[n]}</option>`)}</select>
<label for="r-phone">Phone</label><input id="r-phone" name="phone" inputmode="tel" placeholder="024 123 4567"></fieldset>
<p><button type="submit">Save recipient</button></p></form>` : ''}`, flash, status);
  }

  app.get<{ Querystring: { replace?: string } }>('/dashboard/recipients', { schema: { hide: true, ...dashboardSchemas.recipients } }, async (request, reply) =>
    recipientsPage(reply, sessionOf(request), null, 200, request.query.replace?.slice(0, 80) ?? null),
  );

  app.post('/dashboard/recipients', { schema: { hide: true, ...dashboardSchemas.createRecipient } }, async (request, reply) => {
    const session = sessionOf(request);
    if (!canRequest(session)) return recipientsPage(reply, session, { message: 'Your role cannot add recipients.', error: true }, 403);
    const type = formValue(request, 'account_type') === 'momo' ? 'momo' : 'bank';
    const input =
      type === 'bank'
        ? { account_type: 'bank', bank_id: formValue(request, 'bank_id'), account_number: formValue(request, 'account_number').replace(/\s/g, ''), account_name: formValue(request, 'account_name') }
        : { account_type: 'momo', network: formValue(request, 'network'), phone: formValue(request, 'phone'), account_name: formValue(request, 'account_name') };
    const previous = formValue(request, 'previous_version_id');
    try {
      const created = await payouts.createRecipient(db, dashboardPrincipal(session), { ...input, ...(previous ? { previous_version_id: previous } : {}) });
      return recipientsPage(reply, session, { message: `Recipient ${created.account_name} saved; verification is pending.` });
    } catch (error) {
      const appError = toAppError(error);
      if (appError.statusCode >= 500) throw error;
      return recipientsPage(reply, session, { message: appError.message, error: true }, appError.statusCode, previous || null);
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/recipients/:id/deactivate', { schema: { hide: true, ...dashboardSchemas.deactivateRecipient } }, async (request, reply) => {
    const session = sessionOf(request);
    try {
      await payouts.deleteRecipient(db, dashboardPrincipal(session), request.params.id);
      return recipientsPage(reply, session, { message: 'Recipient deactivated.' });
    } catch (error) {
      const appError = toAppError(error);
      if (appError.statusCode >= 500) throw error;
      return recipientsPage(reply, session, { message: appError.message, error: true }, appError.statusCode);
    }
  });
}

// Progressive enhancement: the form works without it; with it the fee shows as you type.
const FEE_QUOTE_SCRIPT = `(()=>{const f=document.getElementById('new-payout');if(!f)return;const a=f.amount,r=f.recipient_id,o=document.getElementById('fee-quote');let t;
const q=()=>{clearTimeout(t);t=setTimeout(async()=>{if(!a.value||!r.value){o.textContent='Enter an amount to see the fee.';return}
try{const res=await fetch('/dashboard/payouts/quote?recipient_id='+encodeURIComponent(r.value)+'&amount='+encodeURIComponent(a.value),{credentials:'same-origin'});const j=await res.json();o.textContent=res.ok?j.text:j.error.message}catch(e){o.textContent='Could not get a quote.'}},250)};
a.addEventListener('input',q);r.addEventListener('change',q)})();`;
