// The operator console's Live payouts: reconciliation (matched or exception) and recorded returns.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import * as ops from '../../ops/service.ts';
import type { LivePayoutRow } from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, sessionOf } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { csrfField, money, statusBadge } from '../layout.ts';
import { actorOf, showOpsPage as show, type Flash } from './common.ts';

export async function payoutPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  // ---- payouts reconciliation ----
  async function payoutsPage(reply: FastifyReply, session: WebSession, flash: Flash = null, status = 200) {
    return show(reply, session, 'payouts', 'Live payouts', payoutsView(session, await ops.livePayouts(db)), flash, status);
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
}

export const payoutsView = (session: WebSession, rows: readonly LivePayoutRow[]): Html => html`<h1>Live payouts</h1>
<div class="table-wrap"><table><thead><tr><th>Reference</th><th>Merchant</th><th>Amount</th><th>Status</th><th>Bank reference</th><th>Reconciliation</th><th><span class="muted">Actions</span></th></tr></thead><tbody>
${rows.map((p) => html`<tr><td class="mono">${p.reference}</td><td>${p.merchant_name}</td><td>${money(p.amount_minor)}</td><td>${statusBadge(p.status)}</td><td class="mono">${p.bank_reference}</td><td>${statusBadge(p.reconciliation_status)}</td>
<td>${p.reconciliation_status === 'unreconciled' && (p.status === 'paid' || p.status === 'returned') ? html`<form method="post" action="/ops/payouts/${p.id}/reconcile" class="inline">${csrfField(session)}<button name="result" value="matched">Matched</button> <button name="result" value="exception" class="danger">Exception</button></form>` : ''}
${p.status === 'paid' ? html`<form method="post" action="/ops/payouts/${p.id}/return" class="row" style="margin-top:.3rem">${csrfField(session)}<div><label for="ret-${p.id}">Return reference</label><input id="ret-${p.id}" name="return_reference" required></div><div><button class="secondary">Record return</button></div></form>` : ''}</td></tr>`)}
${rows.length === 0 ? html`<tr><td colspan="7" class="muted">No Live payouts.</td></tr>` : ''}
</tbody></table></div>`;

