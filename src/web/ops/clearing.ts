// One merchant's clearing in the operator console (issue 34): /ops/merchants/:id/clearing, linked from the
// merchant page. The clearing time per rail in Test and in Live as it applies now (the deployment's default,
// CLEARING_DAYS, or the operator's override), the rolling reserve, and a form per environment to change them
// (src/ops/clearing-settings.ts: audited, operators only, the rule of payout settings).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import type { Environment } from '../../lib/environment.ts';
import { SikaError } from '../../lib/errors.ts';
import {
  changeClearingSettings,
  merchantClearing,
  CLEARING_DAYS_MAX,
  RESERVE_DAYS_MAX,
  RESERVE_DAYS_MIN,
  type ClearingChange,
  type EffectiveClearing,
} from '../../ops/clearing-settings.ts';
import { railDescriptors, railIds } from '../../rails/registry.ts';
import type { WebSession } from '../auth.ts';
import { formValue, pageSender, postOnObject, refusedForm, sessionOf, type PageOutcome } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, raw } from '../html.ts';
import { csrfField } from '../layout.ts';
import { actorOf, environmentBadge, refusalOf } from './common.ts';

const show = pageSender('operator', 'merchants');

const daysText = (days: number | undefined): string =>
  days === undefined ? 'not set' : days === 0 ? 'at once' : `${days} business day${days === 1 ? '' : 's'}`;

/** Basis points as the percentage an operator types: 1250 -> "12.5". */
const percentOf = (bp: number): string => String(bp / 100);

/** "12.5" -> 1250: the schema allowed 0-100 with at most two decimals; counted in whole basis points. */
export function basisPointsOf(percent: string): number {
  const [whole = '0', fraction = ''] = percent.trim().split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
}

/** The form's change: each rail's days_<rail> field (empty: the default), the reserve percentage and days. */
function changeOf(request: FastifyRequest): ClearingChange {
  const overrides: Record<string, number> = {};
  for (const rail of railIds()) {
    const value = formValue(request, `days_${rail}`).trim();
    if (value !== '') overrides[rail] = Number(value);
  }
  const days = formValue(request, 'reserve_days').trim();
  return {
    overrides,
    reserve_bp: basisPointsOf(formValue(request, 'reserve_percent') || '0'),
    reserve_days: days === '' ? 0 : Number(days),
  };
}

function environmentCard(session: WebSession, merchantId: string, environment: Environment, c: EffectiveClearing) {
  const name = environment === 'test' ? 'Test' : 'Live';
  const testNote =
    environment === 'test'
      ? c.test_clearing
        ? html`<p class="muted">Test clearing is on (the merchant rehearses Live clearing): Test payments clear after these times.</p>`
        : html`<p class="muted">Test clearing is off in the merchant's dashboard: Test payments are available at once. When the merchant turns it on, they clear after the overrides set here, or else the deployment's Live defaults.</p>`
      : '';
  const rows = railDescriptors().map((rail) => {
    const override = c.overrides[rail.id];
    return html`<tr><td>${rail.labels.dashboard}</td><td>${daysText(c.days[rail.id])}</td><td>${override === undefined ? html`<span class="muted">default</span>` : 'operator override'}</td><td><input id="days-${environment}-${rail.id}" aria-label="Clearing days for ${rail.labels.dashboard}" name="days_${rail.id}" inputmode="numeric" maxlength="2" size="3" value="${override === undefined ? '' : String(override)}" placeholder="default"></td></tr>`;
  });
  const reserve =
    c.reserve_bp > 0
      ? html`${percentOf(c.reserve_bp)}% of each credit held for ${c.reserve_days} day${c.reserve_days === 1 ? '' : 's'}`
      : html`off`;
  return html`<form method="post" action="/ops/merchants/${merchantId}/clearing" class="card">${csrfField(session)}<input type="hidden" name="environment" value="${environment}">
    <h2 style="margin-top:0">${environmentBadge(environment)} ${name} clearing</h2>
    ${testNote}
    <div class="table-wrap"><table><thead><tr><th scope="col">Rail</th><th scope="col">Clears</th><th scope="col">Set by</th><th scope="col">Override (business days, 0-${CLEARING_DAYS_MAX}; empty: default)</th></tr></thead><tbody>${rows}</tbody></table></div>
    <p>Rolling reserve: <strong>${reserve}</strong></p>
    <label for="reserve-percent-${environment}">Reserve percentage (0-100, up to two decimals; 0 turns it off)</label><input id="reserve-percent-${environment}" name="reserve_percent" inputmode="decimal" maxlength="6" value="${percentOf(c.reserve_bp)}">
    <label for="reserve-days-${environment}">Reserve days (${RESERVE_DAYS_MIN}-${RESERVE_DAYS_MAX}, calendar days each credit's reserve is held)</label><input id="reserve-days-${environment}" name="reserve_days" inputmode="numeric" maxlength="3" value="${c.reserve_days > 0 ? String(c.reserve_days) : ''}">
    <p><button type="submit">Save ${raw(name)} clearing</button></p></form>`;
}

export function clearingView(
  session: WebSession,
  merchantId: string,
  clearing: Record<Environment, EffectiveClearing>,
) {
  return html`<p><a href="/ops/merchants/${merchantId}">Back to the merchant</a></p><h1>Clearing and reserve</h1>
<p class="muted">A payment credit is pending until its rail's clearing time passes, counted in Africa/Accra business days (weekends and Ghana's public holidays left out), then available. The defaults are the deployment's (CLEARING_DAYS); an override here applies to this merchant only. A rolling reserve holds a percentage of each credit for a number of days, then releases it to the available balance. Every change is audited.</p>
<div class="grid">${environmentCard(session, merchantId, 'test', clearing.test)}${environmentCard(session, merchantId, 'live', clearing.live)}</div>`;
}

export async function clearingPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  async function clearingPage(reply: FastifyReply, session: WebSession, merchantId: string, outcome: PageOutcome = {}) {
    const clearing = await merchantClearing(db, merchantId);
    if (!clearing)
      return show(
        reply,
        session,
        'Not found',
        html`<h1>Merchant not found</h1><p><a href="/ops">All merchants</a></p>`,
        null,
        404,
      );
    return show(
      reply,
      session,
      'Clearing and reserve',
      clearingView(session, merchantId, clearing),
      outcome.flash,
      outcome.status,
    );
  }

  app.get<{ Params: { id: string } }>(
    '/ops/merchants/:id/clearing',
    { schema: { hide: true, ...opsSchemas.clearing } },
    async (request, reply) => clearingPage(reply, sessionOf(request), request.params.id),
  );

  postOnObject(app, '/ops/merchants/:id/clearing', opsSchemas.clearingSettings, async (request, reply, session) => {
    const merchantId = request.params.id;
    const environment = formValue(request, 'environment');
    if (environment !== 'test' && environment !== 'live')
      return clearingPage(reply, session, merchantId, refusedForm('Choose the Test or Live settings.', 400));
    try {
      const result = await changeClearingSettings(
        db,
        actorOf(session),
        merchantId,
        environment,
        changeOf(request),
        railIds(),
      );
      return clearingPage(reply, session, merchantId, { flash: { message: result.message } });
    } catch (error) {
      // An unknown merchant: the page's 404, nothing written. A teller or compliance: refused, as payout settings.
      if (error instanceof SikaError && error.code === 'NOT_FOUND') return clearingPage(reply, session, merchantId);
      if (error instanceof SikaError && error.code === 'FORBIDDEN')
        return clearingPage(reply, session, merchantId, refusedForm(error.message, 403));
      return clearingPage(reply, session, merchantId, refusalOf(error, ['INVALID_ARGUMENT']));
    }
  });
}
