// One merchant's payout controls in the operator console: the form per environment (access, paused, limits)
// and what a submitted form changes. The merchant page (merchants.ts) shows the forms and routes their POST here.
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { SikaError } from '../../lib/errors.ts';
import { parseCedis } from '../../lib/ghana.ts';
import * as ops from '../../ops/service.ts';
import type { PayoutControls } from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, sessionOf } from '../console.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, statusBadge } from '../layout.ts';
import { actorOf, type Flash } from './common.ts';

/**
 * Applies a submitted payout settings form of an existing merchant; the flash and status the merchant page
 * shows. Amounts are read as GHS (1,220.00 or 1220); opening Live payouts or raising a Live limit is filed
 * for a second operator with the form's reason (closing, pausing, lowering and Test changes apply at once).
 */
export async function submitPayoutSettings(
  deps: AppDeps,
  request: FastifyRequest,
  merchantId: string,
): Promise<{ flash: Flash; status: number }> {
  const session = sessionOf(request);
  const environment = formValue(request, 'environment');
  const limit = parseCedis(formValue(request, 'limit'));
  const daily = parseCedis(formValue(request, 'daily_limit'));
  if (environment !== 'test' && environment !== 'live')
    return { flash: { message: 'Choose the Test or Live settings.', error: true }, status: 400 };
  const bad = !limit
    ? ['The limit per payout', formValue(request, 'limit')]
    : !daily
      ? ['The daily limit', formValue(request, 'daily_limit')]
      : null;
  if (bad)
    return {
      flash: {
        message: `${bad[0]} must be an amount in GHS above zero, like 5,000.00 ("${bad[1]!.slice(0, 20)}" is not).`,
        error: true,
      },
      status: 400,
    };
  try {
    const result = await ops.changePayoutSettings(
      deps.db,
      actorOf(session),
      merchantId,
      environment,
      {
        payout_access: formValue(request, 'access') === 'on',
        paused: formValue(request, 'paused') === 'on',
        payout_limit_minor: limit!,
        daily_limit_minor: daily!,
      },
      { reason: formValue(request, 'reason'), confirmed: formValue(request, 'confirm') === 'yes' },
    );
    const message = result.filed
      ? 'Opening Live payouts or raising a Live limit needs a second operator: the change is filed under Approvals and applies once another operator approves it.'
      : result.message;
    return { flash: { message }, status: 200 };
  } catch (error) {
    if (error instanceof SikaError && (error.code === 'INVALID_ARGUMENT' || error.code === 'APPROVAL_PENDING'))
      return { flash: { message: error.message, error: true }, status: error.code === 'INVALID_ARGUMENT' ? 400 : 409 };
    throw error;
  }
}

/** The Test and Live payout settings forms of one merchant. */
export function payoutSettingsForms(session: WebSession, { merchant, settings }: PayoutControls): Html {
  const form = (environment: 'test' | 'live') => {
    const s = settings[environment];
    return html`<form method="post" action="/ops/merchants/${merchant.id}/payouts" class="card">${csrfField(session)}<input type="hidden" name="environment" value="${environment}">
        <h2 style="margin-top:0">${environment === 'test' ? 'Test' : 'Live'} payouts</h2>
        <p>Payout access: ${statusBadge(s.payout_access ? 'enabled' : 'off')} · ${s.paused ? statusBadge('paused') : statusBadge('active')}</p>
        <label for="access-${environment}">Payout access</label><select id="access-${environment}" name="access"><option value="on"${raw(s.payout_access ? ' selected' : '')}>On</option><option value="off"${raw(s.payout_access ? '' : ' selected')}>Off</option></select>
        <label for="paused-${environment}">Payouts</label><select id="paused-${environment}" name="paused"><option value="off"${raw(s.paused ? '' : ' selected')}>Running</option><option value="on"${raw(s.paused ? ' selected' : '')}>Paused</option></select>
        <label for="limit-${environment}">Limit per payout (GHS)</label><input id="limit-${environment}" name="limit" inputmode="decimal" value="${(s.payout_limit_minor / 100).toFixed(2)}">
        <label for="daily-${environment}">Daily limit (GHS, Africa/Accra day)</label><input id="daily-${environment}" name="daily_limit" inputmode="decimal" value="${(s.daily_limit_minor / 100).toFixed(2)}">
        ${
          environment === 'live'
            ? html`<label for="reason-${environment}">Reason (needed to open Live payouts or raise a limit)</label><textarea id="reason-${environment}" name="reason" rows="2" maxlength="500"></textarea>
        <p><label><input type="checkbox" name="confirm" value="yes" style="width:auto"> The merchant is cleared for these Live payouts</label></p>
        <p class="muted">Opening access or raising a limit waits for a second operator; closing, pausing, resuming and lowering apply now.</p>`
            : ''
        }
        <p><button type="submit">Save ${environment} payout settings</button></p></form>`;
  };
  return html`<div class="grid">${form('test')}${form('live')}</div>`;
}
