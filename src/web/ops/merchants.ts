// The operator console's merchants: the list (/ops) and one merchant's page with its payout controls.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { parseCedis } from '../../lib/ghana.ts';
import * as ops from '../../ops/service.ts';
import type { MerchantOverviewRow, PayoutControls } from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, sessionOf } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, statusBadge, when_ } from '../layout.ts';
import { actorOf, showOpsPage as show, type Flash } from './common.ts';

export async function merchantPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  app.get('/ops', { schema: { hide: true, ...opsSchemas.merchants } }, async (request, reply) =>
    show(reply, sessionOf(request), 'merchants', 'Merchants', merchantsView(await ops.merchantsOverview(db))),
  );

  async function merchantPage(reply: FastifyReply, session: WebSession, merchantId: string, flash: Flash = null, status = 200) {
    const controls = await ops.merchantPayoutControls(db, merchantId);
    if (!controls) return show(reply, session, 'merchants', 'Not found', html`<h1>Merchant not found</h1>`, null, 404);
    return show(reply, session, 'merchants', controls.merchant.name, merchantView(session, controls), flash, status);
  }

  app.get<{ Params: { id: string } }>('/ops/merchants/:id', { schema: { hide: true, ...opsSchemas.merchant } }, async (request, reply) => merchantPage(reply, sessionOf(request), request.params.id));

  app.post<{ Params: { id: string } }>('/ops/merchants/:id/payouts', { schema: { hide: true, ...opsSchemas.payoutSettings } }, async (request, reply) => {
    const session = sessionOf(request);
    // An unknown merchant is the merchant page's 404, before anything is written.
    if (!(await ops.merchantPayoutControls(db, request.params.id))) return merchantPage(reply, session, request.params.id);
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
}

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

