// The operator console's merchants: the list (/ops: search by name, email or id, filters, keyset pages, CSV of
// every matching row; a search that is a payment's reference, the provider's transaction id or ours, or an
// attempt or session id, also shows the checkout sessions it names) and one merchant's page (balances per
// environment, recent sessions and payouts, users, API key prefixes, webhook endpoints, payout controls).
// Every object shows its environment.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findAccount, reinstateMerchant, suspendMerchant, type Account } from '../../accounts/activation.ts';
import type { AppDeps } from '../../http/deps.ts';
import { csvColumn } from '../../lib/csv-columns.ts';
import {
  MERCHANT_FILTER_NAMES,
  merchantOverview,
  merchantsPage,
  paymentsMatching,
  type MerchantOverview,
  type MerchantOverviewRow,
  type PaymentSearchRow,
} from '../../ops/merchant-overview.ts';
import * as ops from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, postOnObject, refusedForm, sessionOf, pageSender, type PageOutcome } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { csrfField, money, statusBadge, when_ } from '../layout.ts';
import { paymentReferencesCell } from '../payment-references.ts';
import { actorOf, environmentBadge } from './common.ts';
import * as consoleList from './console-list.ts';
import { payoutSettingsForms, submitPayoutSettings } from './payout-settings.ts';
import { fieldColumns } from '../../lib/csv-field-columns.ts';

const MERCHANT_CSV: consoleList.ListCsv<MerchantOverviewRow> = {
  filename: 'sika-merchants.csv',
  columns: [
    ...fieldColumns<MerchantOverviewRow>().textAs({ merchant_id: 'id', name: 'name', email: 'email' }),
    csvColumn.text('live_payouts', (m) => (m.live_access ? 'on' : 'off')),
    csvColumn.text('paused', (m) => (m.paused_any ? 'yes' : 'no')),
    csvColumn.ghs('live_balance_ghs', (m) => m.live_balance_minor),
    csvColumn.timestamp('created_at', (m) => m.created_at),
  ],
};

const show = pageSender('operator', 'merchants');

export async function merchantPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const merchants: consoleList.ListSource<MerchantOverviewRow> = {
    fetch: (list) => (cursor, limit) => merchantsPage(db, list.q, list.filters, cursor, limit),
    key: (row) => ({ at: row.created_at, id: row.id }),
  };
  app.get('/ops', { schema: { hide: true, ...opsSchemas.merchants } }, async (request, reply) => {
    const list = consoleList.readListQuery(request.query as consoleList.QueryString, MERCHANT_FILTER_NAMES);
    if (list.csv) return consoleList.sendListCsv(reply, list, merchants, MERCHANT_CSV);
    // A reference names sessions on the first page only (later pages page through merchants).
    const [{ rows, next }, payments] = await Promise.all([
      consoleList.listRows(list, merchants),
      list.cursor ? [] : paymentsMatching(db, list.q),
    ]);
    return show(reply, sessionOf(request), 'Merchants', merchantsView(list, rows, next, payments));
  });

  async function merchantPage(reply: FastifyReply, session: WebSession, merchantId: string, outcome: PageOutcome = {}) {
    const overview = await merchantOverview(db, merchantId);
    if (!overview)
      return show(
        reply,
        session,
        'Not found',
        html`<h1>Merchant not found</h1><p><a href="/ops">All merchants</a></p>`,
        null,
        404,
      );
    const account = await findAccount(db, merchantId);
    return show(
      reply,
      session,
      overview.merchant.name,
      merchantView(session, overview, account),
      outcome.flash,
      outcome.status,
    );
  }

  app.get<{ Params: { id: string } }>(
    '/ops/merchants/:id',
    { schema: { hide: true, ...opsSchemas.merchant } },
    async (request, reply) => merchantPage(reply, sessionOf(request), request.params.id),
  );

  postOnObject(app, '/ops/merchants/:id/payouts', opsSchemas.payoutSettings, async (request, reply, session) => {
    // An unknown merchant is the merchant page's 404, before anything is written.
    if (!(await ops.merchantPayoutControls(db, request.params.id)))
      return merchantPage(reply, session, request.params.id);
    const outcome = await submitPayoutSettings(deps, request, request.params.id);
    return merchantPage(reply, session, request.params.id, outcome);
  });

  // Suspending and reinstating (issue 33): audited, e-mailed to the owner, announced (account.updated), heard by
  // every server process within 1 s (src/accounts/activation.ts, live-access.ts).
  /** Suspending or reinstating: an unknown merchant is the page's 404, a teller is refused, else the change runs. */
  const standingChange = (
    path: string,
    schema: typeof opsSchemas.merchantSuspend,
    verb: string,
    change: (request: FastifyRequest, merchantId: string, session: WebSession) => Promise<unknown>,
    done: string,
  ) =>
    postOnObject(app, path, schema, async (request, reply, session) => {
      const merchantId = request.params.id;
      if (!(await findAccount(db, merchantId))) return merchantPage(reply, session, merchantId);
      if (!canSuspend(session))
        return merchantPage(
          reply,
          session,
          merchantId,
          refusedForm(`Only operators and compliance may ${verb} a merchant.`, 403),
        );
      await change(request, merchantId, session);
      return merchantPage(reply, session, merchantId, { flash: { message: done } });
    });
  standingChange(
    '/ops/merchants/:id/suspend',
    opsSchemas.merchantSuspend,
    'suspend',
    (request, merchantId, session) => suspendMerchant(db, merchantId, formValue(request, 'reason'), actorOf(session)),
    'Merchant suspended: new Live work is refused by every server within a second. The owner was e-mailed.',
  );
  standingChange(
    '/ops/merchants/:id/reinstate',
    opsSchemas.merchantReinstate,
    'reinstate',
    (_request, merchantId, session) => reinstateMerchant(db, merchantId, actorOf(session)),
    'Merchant reinstated. The owner was e-mailed.',
  );
}

/** Who may suspend and reinstate a merchant: operators and the compliance role (not tellers). */
const canSuspend = (session: WebSession) => session.role === 'operator' || session.role === 'compliance';

/** The merchant's standing and the operator's suspend or reinstate form. */
function standingSection(session: WebSession, merchantId: string, account: Account | null): Html {
  if (!account) return html``;
  const state = account.suspended ? 'suspended' : account.live_enabled ? 'enabled' : 'off';
  const form = !canSuspend(session)
    ? html``
    : account.suspended
      ? html`<form method="post" action="/ops/merchants/${merchantId}/reinstate" class="card">${csrfField(session)}<p><button type="submit">Reinstate merchant</button></p></form>`
      : html`<form method="post" action="/ops/merchants/${merchantId}/suspend" class="card">${csrfField(session)}<label for="suspend-reason">Reason for suspending (e-mailed to the owner)</label><textarea id="suspend-reason" name="reason" required maxlength="500" rows="2"></textarea><p><button type="submit" class="danger">Suspend merchant</button></p></form>`;
  return html`<h2 id="standing">Live access</h2><p>Activation: ${statusBadge(account.activation.status)} · Live: ${statusBadge(state)}</p>${form}`;
}

const FILTER_CHOICES: { name: (typeof MERCHANT_FILTER_NAMES)[number]; label: string; options: [string, string][] }[] = [
  {
    name: 'live_payouts',
    label: 'Live payouts',
    options: [
      ['on', 'On'],
      ['off', 'Off'],
    ],
  },
  {
    name: 'paused',
    label: 'Payouts paused',
    options: [
      ['yes', 'Paused'],
      ['no', 'Running'],
    ],
  },
  {
    name: 'live_balance',
    label: 'Live balance',
    options: [
      ['yes', 'Holds Live money'],
      ['no', 'None'],
    ],
  },
];

const filterSelects = (filters: Record<string, string>): Html =>
  html`${FILTER_CHOICES.map((f) => consoleList.filterSelect(f.name, f.label, f.options, filters[f.name]))}`;

/** The checkout sessions a searched reference names: which merchant, the session, the attempt and what the provider knows it by. */
function paymentsFound(q: string, payments: readonly PaymentSearchRow[]): Html {
  if (payments.length === 0) return html``;
  return html`<div class="table-wrap"><table aria-label="Payments"><caption class="muted" style="text-align:left;padding:.4rem .5rem">Checkout sessions named by “${q}”, newest attempt first</caption><thead><tr><th scope="col">Environment</th><th scope="col">Merchant and session</th><th scope="col">Amount</th><th scope="col">Attempt</th><th scope="col">References</th><th scope="col">Created</th></tr></thead><tbody>
${payments.map(
  (p) =>
    html`<tr><td>${environmentBadge(p.environment)}</td><td><a href="/ops/merchants/${p.merchant_id}">${p.merchant_name}</a><br><span class="mono wrap">${p.session_id}</span> ${statusBadge(p.session_status)}<br><span class="muted wrap">${p.invoice_ref}</span></td><td class="nowrap">${money(p.amount_charged_minor ?? p.amount_minor)}</td><td>${p.attempt_id ? html`<span class="mono wrap">${p.attempt_id}</span><br>${p.rail}${p.network ? ` (${p.network})` : ''} ${statusBadge(p.attempt_status!)}` : html`<span class="muted">No attempt yet</span>`}</td><td class="wrap">${p.attempt_id ? paymentReferencesCell(p) : html`<span class="muted">–</span>`}</td><td class="nowrap">${when_(p.attempt_created_at ?? p.session_created_at)}</td></tr>`,
)}
</tbody></table></div>`;
}

export function merchantsView(
  list: consoleList.ListQuery,
  merchants: readonly MerchantOverviewRow[],
  next: string | null,
  payments: readonly PaymentSearchRow[] = [],
): Html {
  const state = consoleList.listPageState(list, next);
  return html`<h1>Merchants</h1>
${consoleList.listToolbar('/ops', state, { searchLabel: 'Search merchants or payments', placeholder: 'Name, email, id, a payment reference or receipt number', filters: filterSelects(list.filters) })}
${paymentsFound(list.q, payments)}
${
  merchants.length === 0
    ? html`<p class="card">No merchant${payments.length > 0 ? ' name, email or id' : ''} matches${list.q ? html` “${list.q}”` : ''}${Object.keys(list.filters).length ? ' with these filters' : ''}.</p>`
    : html`<div class="table-wrap"><table><caption class="muted" style="text-align:left;padding:.4rem .5rem">${merchants.length} merchant${merchants.length === 1 ? '' : 's'} on this page, newest first</caption><thead><tr><th scope="col">Merchant</th><th scope="col">Email</th><th scope="col">Live payouts</th><th scope="col">Live balance</th><th scope="col">Created</th></tr></thead><tbody>
${merchants.map((m) => html`<tr><td><a href="/ops/merchants/${m.id}">${m.name}</a><br><span class="mono muted">${m.id}</span></td><td class="wrap">${m.email}</td><td>${statusBadge(m.live_access ? 'enabled' : 'off')}${m.paused_any ? html` ${statusBadge('paused')}` : ''}</td><td class="nowrap">${money(m.live_balance_minor)}</td><td class="nowrap">${when_(m.created_at)}</td></tr>`)}
</tbody></table></div>`
}
${consoleList.pagerNav('/ops', state)}`;
}

const table = (caption: string, head: string[], rows: Html[], empty: string): Html =>
  rows.length === 0
    ? html`<h2>${caption}</h2><p class="muted">${empty}</p>`
    : html`<h2>${caption}</h2><div class="table-wrap"><table><thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`;

export function merchantView(session: WebSession, o: MerchantOverview, account: Account | null = null): Html {
  const m = o.merchant;
  return html`<p><a href="/ops">All merchants</a></p><h1>${m.name}</h1><p class="muted">${m.email} · <span class="mono">${m.id}</span> · created ${when_(m.created_at)} · payout approval ${m.payout_approval_required ? 'required' : 'not required'}</p>
${standingSection(session, m.id, account)}
<h2>Balances</h2><div class="grid">${o.balances.map(
    (b) =>
      html`<div class="card stat"><p style="margin:0 0 .4rem">${environmentBadge(b.environment)}</p><div class="label">Available</div><div class="value">${money(b.available_minor)}</div><div class="label">Reserved for payouts and refunds in progress</div><div>${money(b.held_minor)}</div></div>`,
  )}</div>
${table(
  'Recent checkout sessions',
  ['Environment', 'Session', 'Invoice', 'Amount', 'Status', 'Updated'],
  o.sessions.map(
    (s) =>
      html`<tr><td>${environmentBadge(s.environment)}</td><td class="mono wrap">${s.id}</td><td class="wrap">${s.invoice_ref}</td><td class="nowrap">${money(s.amount_minor)}</td><td>${statusBadge(s.status)}</td><td class="nowrap">${when_(s.updated_at)}</td></tr>`,
  ),
  'No checkout sessions yet.',
)}
${table(
  'Recent payouts',
  ['Environment', 'Reference', 'Amount', 'Status', 'Updated'],
  o.payouts.map(
    (p) =>
      html`<tr><td>${environmentBadge(p.environment)}</td><td class="mono wrap">${p.reference}</td><td class="nowrap">${money(p.amount_minor)}</td><td>${statusBadge(p.status)}</td><td class="nowrap">${when_(p.updated_at)}</td></tr>`,
  ),
  'No payouts yet.',
)}
${table(
  'Users',
  ['Email', 'Role', 'Second factor', 'Status'],
  o.users.map(
    (u) =>
      html`<tr><td class="wrap">${u.email}</td><td>${u.role}</td><td>${statusBadge(u.second_factor ? 'enabled' : 'off')}</td><td>${statusBadge(u.active ? 'active' : 'disabled')}</td></tr>`,
  ),
  'No users.',
)}
${table(
  'API keys',
  ['Environment', 'Key prefix', 'Integration', 'Created', 'Revoked'],
  o.apiKeys.map(
    (k) =>
      html`<tr><td>${environmentBadge(k.environment)}</td><td class="mono">${k.prefix}…</td><td class="wrap">${k.integration_name}</td><td class="nowrap">${when_(k.created_at)}</td><td class="nowrap">${k.revoked_at ? when_(k.revoked_at) : 'not revoked'}</td></tr>`,
  ),
  'No API keys.',
)}
${table(
  'Webhook endpoints',
  ['Environment', 'URL', 'State', 'Key prefix'],
  o.endpoints.map(
    (w) =>
      html`<tr><td>${environmentBadge(w.environment)}</td><td class="wrap">${w.url}</td><td>${statusBadge(w.status === 'active' ? 'enabled' : 'disabled')}</td><td class="mono">${w.key_prefix}…</td></tr>`,
  ),
  'No webhook endpoints.',
)}
<h2>Payout settings</h2>
${payoutSettingsForms(session, o)}
<h2>Clearing and reserve</h2>
<p><a href="/ops/merchants/${m.id}/clearing">Clearing times per rail and the rolling reserve</a> (Test and Live)</p>`;
}
