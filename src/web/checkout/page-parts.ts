// Pieces the payer page's screens share: Accra times, rail and network labels, icons, key-value lists,
// the late-confirmation hint and the Test outcome buttons.
import type { RailQuote } from '../../checkout/fees.ts';
import { SIMULATION_OUTCOMES } from '../../http/routes/checkout/payer-schemas.ts';
import { formatGhs, NETWORK_LABELS, type MomoNetwork } from '../../lib/ghana.ts';
import type { FailureReason } from '../../lib/payment-failures.ts';
import { findRail, railDescriptor, type Rail } from '../../rails/registry.ts';
import { html, raw, when, type Html } from '../html.ts';
import type { PageModel } from './page-model.ts';

const OUTCOME_LABELS: Record<(typeof SIMULATION_OUTCOMES)[number], string> = {
  paid: 'Paid',
  failed: 'Failed',
  expired: 'Expired',
  cancelled: 'Cancelled',
  reversed: 'Reversed',
  manual_review: 'Manual review',
  amount_mismatch: 'Amount mismatch',
  pending: 'Still pending',
};

const accraTime = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Africa/Accra',
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});
/** Accra is on GMT all year. */
export const formatAccra = (iso: string | Date) => `${accraTime.format(new Date(iso))} GMT`;

export const isRail = (value: string): value is Rail => findRail(value) !== undefined;
export const railLabel = (rail: string) => findRail(rail)?.labels.payer ?? rail;
/** The button of the chosen rail: its own action, or the amount to pay. */
export const actionOf = (rail: Rail, quote: RailQuote) =>
  railDescriptor(rail).labels.action ?? `Pay ${formatGhs(quote.total_minor)}`;
/** One part per line, as the page has always been laid out. */
export const lines = (parts: Html[]): Html => raw(parts.map((part) => part.value).join('\n'));
/** A network's short name, as payers say it ("This number usually belongs to MTN"). */
export const NETWORK_NAMES: Record<MomoNetwork, string> = { mtn: 'MTN', telecel: 'Telecel', at: 'AT' };
export const networkLabel = (network: unknown) =>
  typeof network === 'string' && network in NETWORK_LABELS ? NETWORK_LABELS[network as MomoNetwork] : 'Mobile Money';

export const ICONS = {
  ok: '<svg viewBox="0 0 24 24" width="28" height="28" aria-hidden="true"><path d="M5 12.5l4.5 4.5L19 7.5" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>',
  bad: '<svg viewBox="0 0 24 24" width="26" height="26" aria-hidden="true"><path d="M7 7l10 10M17 7L7 17" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>',
  clock:
    '<svg viewBox="0 0 24 24" width="28" height="28" aria-hidden="true"><circle cx="12" cy="12" r="8" fill="none" stroke="#fff" stroke-width="2.5"/><path d="M12 7.5V12l3 2" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/></svg>',
  lock: '<svg viewBox="0 0 24 24" width="14" height="14" aria-hidden="true"><path d="M7 10V8a5 5 0 0110 0v2h1v11H6V10zm2 0h6V8a3 3 0 00-6 0z" fill="currentColor"/></svg>',
};
export const icon = (kind: 'ok' | 'bad' | 'clock' | 'info' | 'wait') =>
  html`<div class="icon${raw(kind === 'ok' ? '' : ` ${kind === 'clock' ? 'info' : kind}`)}" aria-hidden="true">${raw(kind === 'ok' ? ICONS.ok : kind === 'bad' ? ICONS.bad : kind === 'clock' ? ICONS.clock : kind === 'info' ? '!' : '')}</div>`;

export function kv(rows: [string, unknown, string?][]): Html {
  // A long reference gets a line of its own (label above) rather than breaking inside it.
  return html`<dl class="kv">${rows.map(([label, value, cls]) => html`<div${raw(/big|stack/.test(cls ?? '') ? ' class="stack"' : '')}><dt>${label}</dt><dd${raw(cls ? ` class="${cls}"` : '')}>${value}</dd></div>`)}</dl>`;
}

export function testPanel(m: PageModel): Html {
  const attempt = m.attempt;
  if (!m.test || !attempt) return raw('');
  type Outcome = (typeof SIMULATION_OUTCOMES)[number];
  // 'pending' (nothing changes) last: the buttons that decide come first.
  const outcomes: Outcome[] =
    attempt.status === 'pending'
      ? [...SIMULATION_OUTCOMES.filter((o) => o !== 'pending'), 'pending']
      : attempt.status === 'manual_review' || attempt.status === 'amount_mismatch'
        ? ['paid', 'failed']
        : [];
  if (outcomes.length === 0) return raw('');
  return html`<section class="test" aria-labelledby="test-title">
<h3 id="test-title">Test mode: choose the outcome</h3>
<p>Decide what happens to this payment, as its provider would report it.</p>
<form method="post" action="/pay/${m.session.id}/test-outcome" class="outcomes" data-test-outcome>
<input type="hidden" name="attempt_reference" value="${attempt.id}">
${outcomes.map((o) => html`<button type="submit" name="outcome" value="${o}">${OUTCOME_LABELS[o]}</button>`)}
</form>
<p class="error" role="alert" data-error hidden></p>
</section>`;
}

/** Seconds without approval before the network's own way to approve (approval_help) is shown. */
export const APPROVAL_HELP_AFTER_S = 30;

/** m:ss */
export const clock = (seconds: number) => `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;

/**
 * The time left to approve (a countdown from approve_within_s, counted from the attempt's creation) and,
 * after APPROVAL_HELP_AFTER_S, the network's own way to approve when no prompt came. Drawn by the server at
 * its elapsed time, so a reload shows the same; the script counts on from there (data-elapsed on #view).
 */
export function waitTiming(m: PageModel): Html {
  const f = m.facts;
  if (!f || m.attempt?.status !== 'pending') return raw('');
  const left = f.approveWithinS === null ? null : Math.max(0, f.approveWithinS - f.elapsedS);
  return html`${when(
    left !== null,
    () =>
      html`<p class="hint" data-countdown data-within="${f.approveWithinS}"${raw(left === 0 ? ' data-over' : '')}><span data-running${raw(left === 0 ? ' hidden' : '')}>Approve within <b class="num" data-clock>${clock(left ?? 0)}</b>.</span><span data-ended${raw(left === 0 ? '' : ' hidden')}>The time to approve has run out. If you approved, it will be confirmed here; if not, use another number or method.</span></p>`,
  )}
${when(f.approvalHelp, () => html`<p class="prompt" data-help data-after="${APPROVAL_HELP_AFTER_S}"${raw(f.elapsedS >= APPROVAL_HELP_AFTER_S ? '' : ' hidden')}>No prompt on your phone? ${f.approvalHelp}</p>`)}`;
}

/**
 * "Use another number or method" on a waiting screen: the script cancels the attempt through the payer
 * API (with an Idempotency-Key) and shows the method choice with the number kept; without the script the
 * form posts to the page's own route, which cancels it and sends the payer back to the page.
 */
export function changeCourse(m: PageModel, label = CHANGE_COURSE_LABEL): Html {
  const a = m.attempt;
  if (a?.status !== 'pending') return raw('');
  return html`<form method="post" action="/pay/${m.session.id}/change" class="actions" data-change>
<input type="hidden" name="attempt_reference" value="${a.id}">
<button type="submit" class="secondary block">${label}</button>
<p class="error" role="alert" data-change-error hidden></p></form>`;
}
export const CHANGE_COURSE_LABEL = 'Use another number or method';
/** The failure reason of an attempt the payer stopped to use another number or method. */
export const CHANGED_COURSE: FailureReason = 'changed_course';

/** Under a waiting screen, shown by the script when confirmation takes long. */
export const late = html`<p class="hint late" data-late hidden>Still waiting for confirmation. If you approved the payment, it will be confirmed here soon; keep this page open. <button type="button" class="secondary" data-action="check">Check now</button></p>`;
