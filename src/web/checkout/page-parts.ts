// Pieces the payer page's screens share: Accra times, rail and network labels, icons, key-value lists,
// the late-confirmation hint and the Test outcome buttons.
import type { RailQuote } from '../../checkout/fees.ts';
import { SIMULATION_OUTCOMES } from '../../checkout/payer-schemas.ts';
import { formatGhs, NETWORK_LABELS, type MomoNetwork } from '../../lib/ghana.ts';
import { findRail, railDescriptor, type Rail } from '../../rails/registry.ts';
import { html, raw, type Html } from '../html.ts';
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

const accraTime = new Intl.DateTimeFormat('en-GB', { timeZone: 'Africa/Accra', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
/** Accra is on GMT all year. */
export const formatAccra = (iso: string | Date) => `${accraTime.format(new Date(iso))} GMT`;

export const isRail = (value: string): value is Rail => findRail(value) !== undefined;
export const railLabel = (rail: string) => findRail(rail)?.labels.payer ?? rail;
/** The button of the chosen rail: its own action, or the amount to pay. */
export const actionOf = (rail: Rail, quote: RailQuote) => railDescriptor(rail).labels.action ?? `Pay ${formatGhs(quote.total_minor)}`;
/** One part per line, as the page has always been laid out. */
export const lines = (parts: Html[]): Html => raw(parts.map((part) => part.value).join('\n'));
export const networkLabel = (network: unknown) => (typeof network === 'string' && network in NETWORK_LABELS ? NETWORK_LABELS[network as MomoNetwork] : 'Mobile Money');

export const ICONS = {
  ok: '<svg viewBox="0 0 24 24" width="28" height="28" aria-hidden="true"><path d="M5 12.5l4.5 4.5L19 7.5" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>',
  bad: '<svg viewBox="0 0 24 24" width="26" height="26" aria-hidden="true"><path d="M7 7l10 10M17 7L7 17" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>',
  clock: '<svg viewBox="0 0 24 24" width="28" height="28" aria-hidden="true"><circle cx="12" cy="12" r="8" fill="none" stroke="#fff" stroke-width="2.5"/><path d="M12 7.5V12l3 2" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/></svg>',
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

/** Under a waiting screen, shown by the script when confirmation takes long. */
export const late = html`<p class="hint late" data-late hidden>Still waiting for confirmation. If you approved the payment, it will be confirmed here soon; keep this page open. <button type="button" class="secondary" data-action="check">Check now</button></p>`;
