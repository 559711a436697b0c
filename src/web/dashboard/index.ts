// The merchant dashboard at /dashboard: sign-in, the Test/Live switch, home, and the section pages.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { expectedSettlementMinor, HOME_RANGE_DEFAULT, homeAnalytics, type HomeRange } from '../../books/analytics.ts';
import { recentSessions } from '../../checkout/service.ts';
import { balance } from '../../ledger/service.ts';
import { recentPayouts } from '../../payouts/queries.ts';
import { getSchedule, settlementBanner } from '../../payouts/settlement-schedule.ts';
import { refundHolds } from '../../refunds/queries.ts';
import { switchEnvironment } from '../auth.ts';
import { formValue, registerConsoleAuth, sendPage, sessionOf } from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { html, raw } from '../html.ts';
import { MERCHANT_NAV, money, page, statusBadge, when_ } from '../layout.ts';
import { accountGate, accountPages } from './account.ts';
import { activationPages } from './activation.ts';
import { balancePages } from './balance.ts';
import { checkoutPages } from './checkout.ts';
import { developerPages } from './developers.ts';
import { exportPages } from './exports.ts';
import { paymentLinkPages } from './payment-links.ts';
import { payoutPages } from './payouts/routes.ts';
import { refundPages } from './refunds.ts';
import { settingsPages } from './settings.ts';
import { settlementPages } from './settlements.ts';
import {
  failureReasons,
  HOME_CSS,
  nextSettlementCard,
  rangePicker,
  revenueChart,
  revenueTable,
  successRates,
  totalsFigures,
  type NextSettlement,
} from './home-views.ts';
import { pausedBanner } from './settlements-views.ts';
import { signInLinkPages } from './sign-in-link.ts';
import { consoleErrorPage, registerErrorPages } from '../error-pages.ts';

/** Rows in each of the home page's recent lists. */
const RECENT_ROWS = 8;

export async function dashboardRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  // Errors on console pages render as pages, not JSON.
  registerErrorPages(app, 'dashboard', consoleErrorPage('merchant'));
  await registerConsoleAuth(app, deps, 'merchant');
  await app.register(signInLinkPages, deps);
  app.addHook('preHandler', accountGate);

  app.post(
    '/dashboard/environment',
    { schema: { hide: true, ...dashboardSchemas.environment } },
    async (request, reply) => {
      const environment = formValue(request, 'environment');
      if (environment === 'test' || environment === 'live')
        await switchEnvironment(db, sessionOf(request), environment);
      // Back to the section's own page: the page you were on may have been a form's answer (no GET route)
      // or an object that exists only in the other environment.
      const back = formValue(request, 'return_to');
      return reply.redirect(MERCHANT_NAV.some(([, href]) => href === back) ? back : '/dashboard', 303);
    },
  );

  app.get('/dashboard', { schema: { hide: true, ...dashboardSchemas.home } }, async (request, reply) => {
    const session = sessionOf(request);
    const merchantId = session.merchantId!;
    const owner = { merchantId, environment: session.environment };
    const range = (request.query as { range?: HomeRange }).range ?? HOME_RANGE_DEFAULT;
    const [test, live, sessions, payouts, testRefundHolds, liveRefundHolds, paused, analytics, schedule] =
      await Promise.all([
        balance(db, merchantId, 'test'),
        balance(db, merchantId, 'live'),
        recentSessions(db, merchantId, session.environment, RECENT_ROWS),
        recentPayouts(db, merchantId, session.environment, RECENT_ROWS),
        refundHolds(db, merchantId, 'test'),
        refundHolds(db, merchantId, 'live'),
        settlementBanner(db, merchantId, session.environment),
        homeAnalytics(db, owner, range),
        getSchedule(db, merchantId, session.environment),
      ]);
    const current = session.environment === 'live' ? live : test;
    const next = await nextSettlement(db, owner, schedule, current.available_minor);
    // Each hold named by what it holds for: payouts requested or processing, refunds not finished yet.
    const balanceCard = (
      label: string,
      b: typeof test,
      forRefunds: number,
    ) => html`<section class="card" aria-label="${label} balance"><h2 style="margin-top:0">${label}</h2><div class="grid">
      <div class="stat"><div class="label">Eligible</div><div class="value">${money(b.eligible_minor)}</div></div>
      <div class="stat"><div class="label">Held for payouts</div><div class="value">${money(Math.max(0, b.held_minor - forRefunds))}</div></div>
      ${forRefunds > 0 ? html`<div class="stat"><div class="label">Held for refunds</div><div class="value">${money(forRefunds)}</div></div>` : ''}
      <div class="stat"><div class="label">Available</div><div class="value">${money(b.available_minor)}</div></div>
      ${b.pending_minor > 0 || b.environment === session.environment ? html`<div class="stat"><div class="label">Clearing (pending)</div><div class="value">${money(b.pending_minor)}</div></div>` : ''}
      ${b.reserved_minor > 0 || b.environment === session.environment ? html`<div class="stat"><div class="label">Reserve</div><div class="value">${money(b.reserved_minor)}</div></div>` : ''}</div></section>`;
    return sendPage(
      reply,
      page({
        title: 'Home',
        session,
        kind: 'merchant',
        active: 'home',
        body: html`<style>${raw(HOME_CSS)}</style><h1>${session.merchantName}</h1>
${paused ? pausedBanner(session, paused, false) : ''}
${rangePicker(range)}
<section class="card" aria-labelledby="revenue-heading"><h2 id="revenue-heading">Revenue (${session.environment})</h2>
${totalsFigures(analytics)}${revenueChart(analytics)}</section>
${revenueTable(analytics)}
<section aria-labelledby="rates-heading"><h2 id="rates-heading">Payment success rate</h2>
<p class="muted">Attempts that ended paid, of all attempts that ended in this range.</p>
${successRates(analytics)}${failureReasons(analytics)}</section>
<h2>Balance</h2>
${balanceCard('Test', test, testRefundHolds)}${balanceCard('Live', live, liveRefundHolds)}
${nextSettlementCard(next)}
<h2>Recent payments (${session.environment})</h2>
<div class="table-wrap"><table class="stack" aria-label="Recent payments"><thead><tr><th>Session</th><th>Invoice</th><th class="num">Amount</th><th>Status</th><th>Updated</th></tr></thead><tbody>
${sessions.map((s) => html`<tr><td class="mono id" data-label="Session"><a href="/dashboard/sessions/${s.id}">${s.id}</a></td><td data-label="Invoice">${s.invoice_ref}</td><td class="num" data-label="Amount">${money(s.amount_minor)}</td><td data-label="Status">${statusBadge(s.status)}</td><td class="date" data-label="Updated">${when_(s.updated_at)}</td></tr>`)}
${sessions.length === 0 ? html`<tr><td colspan="5" class="muted">No sessions yet.</td></tr>` : ''}
</tbody></table></div>
<h2>Recent payouts (${session.environment})</h2>
<div class="table-wrap"><table class="stack" aria-label="Recent payouts"><thead><tr><th>Reference</th><th class="num">Amount</th><th>Status</th><th>Updated</th></tr></thead><tbody>
${payouts.map((p) => html`<tr><td class="mono id" data-label="Reference"><a href="/dashboard/payouts/${p.id}">${p.reference}</a></td><td class="num" data-label="Amount">${money(p.amount_minor)}</td><td data-label="Status">${statusBadge(p.status)}</td><td class="date" data-label="Updated">${when_(p.updated_at)}</td></tr>`)}
${payouts.length === 0 ? html`<tr><td colspan="4" class="muted">No payouts yet.</td></tr>` : ''}
</tbody></table></div>`,
      }),
    );
  });

  await app.register(developerPages, deps);
  await app.register(checkoutPages, deps);
  await app.register(paymentLinkPages, deps);
  await app.register(payoutPages, deps);
  await app.register(exportPages, deps);
  await app.register(refundPages, deps);
  await app.register(balancePages, deps);
  await app.register(settingsPages, deps);
  await app.register(settlementPages, deps);
  await app.register(accountPages, deps);
  await app.register(activationPages, deps);
}

/**
 * The next settlement as home shows it: manual, paused, none due (no run set), or its date with the available
 * balance plus what clears by then.
 */
async function nextSettlement(
  db: AppDeps['db'],
  owner: { merchantId: string; environment: 'test' | 'live' },
  schedule: Awaited<ReturnType<typeof getSchedule>>,
  availableMinor: number,
): Promise<NextSettlement> {
  if (schedule.interval === 'manual') return { kind: 'manual' };
  if (schedule.paused) return { kind: 'paused' };
  if (!schedule.next_run_at || !schedule.recipient_id) return { kind: 'none' };
  const at = new Date(schedule.next_run_at);
  return {
    kind: 'scheduled',
    at,
    expected_minor: await expectedSettlementMinor(db, owner, availableMinor, at),
    minimum_minor: schedule.minimum_minor,
  };
}
