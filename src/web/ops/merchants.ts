// The operator console's merchants: the list (/ops) and one merchant's page with its payout controls.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import * as ops from '../../ops/service.ts';
import type { MerchantOverviewRow, PayoutControls } from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { sessionOf } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { statusBadge, when_ } from '../layout.ts';
import { showOpsPage as show, type Flash } from './common.ts';
import { payoutSettingsForms, submitPayoutSettings } from './payout-settings.ts';

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
    const { flash, status } = await submitPayoutSettings(deps, request, request.params.id);
    return merchantPage(reply, session, request.params.id, flash, status);
  });
}

export const merchantsView = (merchants: readonly MerchantOverviewRow[]): Html => html`<h1>Merchants</h1><div class="table-wrap"><table><thead><tr><th>Merchant</th><th>Email</th><th>Live payouts</th><th>Created</th></tr></thead><tbody>
${merchants.map((m) => html`<tr><td><a href="/ops/merchants/${m.id}">${m.name}</a></td><td>${m.email}</td><td>${statusBadge(m.live_access ? 'enabled' : 'off')}${m.paused_any ? html` ${statusBadge('paused')}` : ''}</td><td>${when_(m.created_at)}</td></tr>`)}
</tbody></table></div>`;

export const merchantView = (session: WebSession, controls: PayoutControls): Html => html`<h1>${controls.merchant.name}</h1><p class="muted">${controls.merchant.email} · <span class="mono">${controls.merchant.id}</span> · approval ${controls.merchant.payout_approval_required ? 'required' : 'not required'}</p>
${payoutSettingsForms(session, controls)}`;
