// Dashboard: the Settlements page's HTML (issue 34, item 2): the schedule form, the next run, the 24-hour hold on
// a new settlement account, the banner of a schedule paused after a failed settlement, and the Test clearing switch.
import type { RecipientRow } from '../../payouts/queries.ts';
import {
  accraWhen,
  describeRule,
  maskedAccount,
  MONTHLY_ANCHOR_MAX,
  MONTHLY_ANCHOR_MIN,
  SETTLEMENT_INTERVALS,
  WEEKDAYS,
  type ScheduleResponse,
} from '../../payouts/settlement-schedule.ts';
import type { WebSession } from '../auth.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, money } from '../layout.ts';

/** Roles that may change the settlement settings; the others read them. */
export const SETTLEMENT_EDITOR_ROLES = ['owner', 'admin'] as const;
export const canEditSettlements = (session: WebSession) =>
  (SETTLEMENT_EDITOR_ROLES as readonly string[]).includes(session.role);

const INTERVAL_LABELS: Record<(typeof SETTLEMENT_INTERVALS)[number], string> = {
  manual: 'Manual (I request payouts myself)',
  daily: 'Daily (every business day)',
  weekly: 'Weekly',
  monthly: 'Monthly',
};

const capitalised = (word: string) => `${word[0]!.toUpperCase()}${word.slice(1)}`;
const selected = (on: boolean) => raw(on ? ' selected' : '');
/** Pesewas as the form's cedis field shows them: 50.00, 0.00. */
export const cedisField = (minor: number) => (minor / 100).toFixed(2);

/** The red banner of a schedule paused after a failed settlement (the home page shows it too). */
export function pausedBanner(
  session: WebSession,
  paused: { reason: string; payoutId: string | null },
  resumeHere: boolean,
): Html {
  return html`<section class="card" role="alert" aria-label="Settlements paused" style="border:2px solid #c0392b;background:#fde0de;color:#8c1d18">
<h2 style="margin-top:0">Automatic settlements are paused</h2>
<p>${paused.reason}${paused.payoutId ? html` See <a href="/dashboard/payouts/${paused.payoutId}">the settlement payout</a>.` : ''}</p>
${paused.reason.includes('available balance') ? '' : html`<p>Your money stays available. Check the settlement account, then resume.</p>`}
${
  resumeHere
    ? canEditSettlements(session)
      ? html`<form method="post" action="/dashboard/settlements" aria-label="Resume settlements">${csrfField(session)}<input type="hidden" name="resume" value="on"><button type="submit">Resume</button></form>`
      : html`<p class="muted">An owner or admin can resume them.</p>`
    : html`<p><a href="/dashboard/settlements">Settlements: resume</a></p>`
}</section>`;
}

export interface SettlementsPageData {
  schedule: ScheduleResponse;
  /** The current settlement account (any state), or null. */
  current: RecipientRow | null;
  /** The recipients a settlement account may be: verified and active. */
  choices: RecipientRow[];
  testClearing: boolean;
  now: Date;
}

export function settlementsView(session: WebSession, data: SettlementsPageData): Html {
  const { schedule, current, choices, now } = data;
  const editable = canEditSettlements(session);
  const disabled = raw(editable ? '' : ' disabled');
  const holdUntil = schedule.recipient_active_at ? new Date(schedule.recipient_active_at) : null;
  const held = current && holdUntil && holdUntil > now;
  const options = [...choices];
  if (current && !options.some((r) => r.id === current.id)) options.unshift(current);
  const needsCode = schedule.recipient_id !== null;
  return html`<h1>Settlements (${session.environment})</h1>
${schedule.paused ? pausedBanner(session, { reason: schedule.paused_reason ?? 'A settlement failed.', payoutId: schedule.paused_payout_id }, true) : ''}
${
  held
    ? html`<div class="card" role="status" aria-label="New settlement account"><strong>New settlement account ${maskedAccount(current)} receives settlements from ${accraWhen(holdUntil)}.</strong> <span class="muted">For your protection a new account receives nothing for 24 hours after a change; until then no settlement is paid.</span></div>`
    : ''
}
<section class="card" aria-label="Schedule now"><h2 style="margin-top:0">Schedule</h2>
<p>Settlements are ${describeRule({ interval: schedule.interval, weekly_anchor: schedule.weekly_anchor, monthly_anchor: schedule.monthly_anchor, time_of_day: schedule.time })}${schedule.interval === 'manual' ? '' : html`, when the available balance is at least ${money(schedule.minimum_minor)}`}.</p>
<p>Settlement account: ${current ? html`<strong>${maskedAccount(current)}</strong>` : html`<span class="muted">none yet</span>`}</p>
<p>Next settlement: ${schedule.next_run_at ? html`<strong id="next-run">${accraWhen(new Date(schedule.next_run_at))}</strong>` : html`<span class="muted" id="next-run">none scheduled</span>`}</p></section>
<form method="post" action="/dashboard/settlements" class="card" aria-label="Settlement schedule">${csrfField(session)}<h2 style="margin-top:0">Change the schedule</h2>
<p class="muted">Times are Africa/Accra time. A run falling on a weekend or a Ghana public holiday moves to the next business day.</p>
<div class="row">
<div><label for="interval">How often</label><select id="interval" name="interval"${disabled}>${SETTLEMENT_INTERVALS.map((i) => html`<option value="${i}"${selected(schedule.interval === i)}>${INTERVAL_LABELS[i]}</option>`)}</select></div>
<div><label for="weekly_anchor">Weekday (weekly)</label><select id="weekly_anchor" name="weekly_anchor"${disabled}>${WEEKDAYS.map((d) => html`<option value="${d}"${selected(schedule.weekly_anchor === d)}>${capitalised(d)}</option>`)}</select></div>
<div><label for="monthly_anchor">Day of the month (monthly)</label><select id="monthly_anchor" name="monthly_anchor"${disabled}>${Array.from({ length: MONTHLY_ANCHOR_MAX - MONTHLY_ANCHOR_MIN + 1 }, (_, i) => i + MONTHLY_ANCHOR_MIN).map((n) => html`<option value="${String(n)}"${selected(schedule.monthly_anchor === n)}>${String(n)}</option>`)}</select></div>
<div><label for="time">Time (HH:MM)</label><input id="time" name="time" value="${schedule.time}" pattern="([01][0-9]|2[0-3]):[0-5][0-9]" maxlength="5" required${disabled}></div>
<div><label for="minimum">Minimum balance (GHS)</label><input id="minimum" name="minimum" value="${cedisField(schedule.minimum_minor)}" inputmode="decimal" required${disabled}></div>
</div>
<label for="recipient_id">Settlement account</label>
${
  options.length
    ? html`<select id="recipient_id" name="recipient_id"${disabled}>${current ? '' : html`<option value="">Choose a verified recipient</option>`}${options.map((r) => html`<option value="${r.id}"${selected(r.id === current?.id)}>${maskedAccount(r)}</option>`)}</select>`
    : html`<p class="muted" id="recipient_id">No verified recipient yet: <a href="/dashboard/recipients">add one</a> (it is verified before it can receive settlements).</p>`
}
${
  editable && needsCode
    ? session.secondFactorEnrolled
      ? html`<label for="code">Code from your authenticator app (only to change the settlement account)</label><input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" maxlength="10">
<p class="muted">A new settlement account receives nothing for 24 hours, and the owner is e-mailed.</p>`
      : html`<p class="muted">To change the settlement account, first <a href="/dashboard/account">set up a second factor</a> on your Account page.</p>`
    : ''
}
${editable ? html`<p><button type="submit">${schedule.paused ? 'Save and resume' : 'Save schedule'}</button></p>` : html`<p class="muted">Only the owner or an admin can change settlements.</p>`}
</form>
${session.environment === 'test' ? testClearingForm(session, data.testClearing, editable) : ''}`;
}

function testClearingForm(session: WebSession, on: boolean, editable: boolean): Html {
  return html`<form method="post" action="/dashboard/settlements/test-clearing" class="card" aria-label="Test clearing">${csrfField(session)}<h2 style="margin-top:0">Test clearing</h2>
<p>Test payments clear at once unless you turn this on to rehearse Live clearing times.</p>
<p>Test clearing is <strong id="test-clearing">${on ? 'on' : 'off'}</strong>.</p>
${editable ? html`<input type="hidden" name="enabled" value="${on ? 'off' : 'on'}"><button type="submit">${on ? 'Turn Test clearing off' : 'Turn Test clearing on'}</button>` : ''}</form>`;
}
