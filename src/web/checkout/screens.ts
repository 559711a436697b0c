// The payer page's screens but the page shell: choose a method, wait for a pending payment (its rail's
// view), the cash slip, review, success, failure and expiry.
import type { RailQuote } from '../../checkout/fees.ts';
import type { AttemptRow } from '../../checkout/model.ts';
import { formatGhs, NETWORK_LABELS, NETWORK_PREFIXES, phoneLast4 } from '../../lib/ghana.ts';
import { findRail, railDescriptor, type Rail } from '../../rails/registry.ts';
import { html, raw, when, type Html } from '../html.ts';
import type { PageModel } from './page-model.ts';
import {
  actionOf,
  CHANGE_COURSE_LABEL,
  CHANGED_COURSE,
  changeCourse,
  formatAccra,
  icon,
  isRail,
  kv,
  late,
  lines,
  NETWORK_NAMES,
  networkLabel,
  railLabel,
  testPanel,
} from './page-parts.ts';
import { PAYER_VIEWS } from './payer-views.ts';
import { receiptSendForm } from './receipt-page.ts';
import { cardRedirectUrl } from './payer-views/card.ts';
import { slipArticle } from './payer-views/cash-slip.ts';
import { mobileMoneyView } from './payer-views/mobile-money.ts';

/** A reference longer than this gets a line of its own on the success screen. */
const REFERENCE_INLINE_LENGTH_MAX = 20;

const UNPAID_REASONS: Record<string, string> = {
  failed: 'The payment did not go through',
  cancelled: 'The payment was cancelled',
  expired: 'The payment request expired before it was approved',
  reversed: 'The payment was reversed',
};

/** The button of a rail on the choose screen: its view's (a Live card's redirect), its own, or the amount. */
const actionFor = (m: PageModel, rail: Rail, quote: RailQuote) =>
  PAYER_VIEWS[railDescriptor(rail).payerView].action?.(m) ?? actionOf(rail, quote);

/**
 * A rail's option and, right under it, its panel (the Mobile Money network and number): choosing a method
 * opens its fields next to it, above the fold on a phone, instead of below every other method.
 */
function railOption(m: PageModel, rail: Rail, quote: RailQuote, checked: boolean): Html {
  const fee = quote.surcharge_minor > 0 ? `incl. ${formatGhs(quote.surcharge_minor)} fee` : 'no fee';
  const descriptor = railDescriptor(rail);
  const { labels } = descriptor;
  return html`<label class="opt"><input type="radio" name="rail" value="${rail}" data-total="${quote.total_minor}" data-action="${actionFor(m, rail, quote)}"${raw(checked ? ' checked' : '')}>
<span><span class="name">${labels.payer}</span><span class="sub">${labels.hint}</span></span>
<span class="price"><b class="num">${formatGhs(quote.total_minor)}</b><small>${fee}</small></span></label>
<div class="panel" data-panel="${rail}"${raw(checked ? '' : ' hidden')}>${PAYER_VIEWS[descriptor.payerView].panel(m, descriptor, quote)}</div>`;
}

/**
 * The methods, each with its panel, and the button right under the chosen one's panel (the script moves it
 * when another is chosen): typed a number, the payer finds the button next to it, not under every other method.
 */
function chooseForm(m: PageModel, rails: Rail[], heading: string): Html {
  const s = m.session;
  const first = rails[0];
  if (!first)
    return html`<p class="error">No payment method is available for this checkout right now. Please try again later.</p>`;
  const firstQuote = m.quotes[first]!;
  const go = html`<div class="go" data-go><p class="error" id="form-error" role="alert" hidden></p>
<button type="submit" class="block" id="pay-button">${actionFor(m, first, firstQuote)}</button></div>`;
  return html`<form id="pay-form" method="post" action="/pay/${s.id}" novalidate data-base="${s.amount_minor}" data-prefixes="${JSON.stringify(NETWORK_PREFIXES)}" data-labels="${JSON.stringify(NETWORK_LABELS)}" data-networks="${JSON.stringify(NETWORK_NAMES)}">
<fieldset><legend><h2 id="choose-title" tabindex="-1">${heading}</h2></legend>
<div class="rails">${lines(rails.map((rail) => html`${railOption(m, rail, m.quotes[rail]!, rail === first)}${when(rail === first, () => go)}`))}</div></fieldset>
<noscript><p class="error">Turn on JavaScript in your browser to pay on this page.</p></noscript>
</form>`;
}

/** The rails this checkout can be paid with now, in the registry's order (the first is chosen). */
export const payableRails = (m: PageModel, except?: Rail): Rail[] =>
  m.session.allowed_rails.filter((r): r is Rail => isRail(r) && r !== except && m.quotes[r] !== undefined);

/** The attempt that just ended unpaid, in words: its plain reason (failure_message), the method and amount. */
function unpaidNote(m: PageModel, last: AttemptRow): Html {
  const what = html`${railLabel(last.rail)}${when(last.network, () => html` (${networkLabel(last.network)}${last.phone ? ` ending ${phoneLast4(last.phone)}` : ''})`)}, <span class="num">${formatGhs(last.amount_charged_minor)}</span>`;
  if (m.facts?.failureReason === CHANGED_COURSE) {
    return html`<p class="note" data-unpaid data-changed>You stopped the payment by ${what}. You have not been charged for it.</p>`;
  }
  return html`<div class="card screen" data-unpaid>
${icon('bad')}<h2 tabindex="-1">Payment not completed</h2>
<p><strong data-reason>${m.facts?.failureMessage ?? UNPAID_REASONS[last.status] ?? 'The payment did not go through'}</strong></p>
<p>${what}: you have not been charged for it. Try again below, with the same method or another one.</p></div>`;
}

export function chooseScreen(m: PageModel): Html {
  const last = m.lastUnpaid;
  const changed = last !== null && m.facts?.failureReason === CHANGED_COURSE;
  if (changed)
    return html`<div class="card">${unpaidNote(m, last)}${chooseForm(m, payableRails(m), 'Choose another number or method')}</div>`;
  return html`${when(last, () => unpaidNote(m, last!))}
<div class="card${raw(last ? ' gap' : '')}">${chooseForm(m, payableRails(m), last ? 'Try again' : 'Choose how to pay')}</div>`;
}

/**
 * Back from a provider's hosted page (/pay/{id}?attempt=...) with the attempt still pending: what the
 * provider's redirect said is not trusted; the script asks for the status with refresh (the server asks
 * the provider) until the attempt is final, and the page then shows the verified result.
 */
function confirmingScreen(m: PageModel): Html {
  const a = m.attempt!;
  // A payer who left the provider's page without paying can go back to it.
  const unfinished = cardRedirectUrl(m.instructions);
  return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">Confirming your payment…</h2>
<p>We are checking with the payment provider that your ${railLabel(a.rail)} payment of <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> went through. This takes a few seconds; please do not pay again.</p>
<p class="hint">This page updates by itself.${when(unfinished, () => html` Did not finish on the card page? <a href="${unfinished}">Go back to the card page</a>.`)}</p>
${changeCourse(m)}
${late}${testPanel(m)}</div>`;
}

/** The pending attempt's screen, its rail's view's; a rail (or view) without one gets the Mobile Money prompt's. */
export function waitingScreen(m: PageModel): Html {
  if (m.returning) return confirmingScreen(m);
  const view = findRail(m.attempt!.rail)?.payerView;
  const waiting = (view && PAYER_VIEWS[view].waiting) ?? mobileMoneyView.waiting;
  return waiting(m);
}

export function cashScreen(m: PageModel): Html {
  const slip = m.slip!;
  const others = payableRails(m, 'cash');
  return html`<div class="card screen">
<h2 tabindex="-1">Your cash deposit slip</h2>
<p>Print the slip or show it on your phone at any branch listed on it. We confirm the payment here when the teller records it.</p>
<div class="actions"><button type="button" class="block" data-action="print">Print slip</button>
<a class="button secondary block" href="/pay/${m.session.id}/slip">Open the printable slip</a></div>
${slipArticle(slip, m.banks, m.test)}
${testPanel(m)}
${when(others.length > 0, () => html`<details><summary>${CHANGE_COURSE_LABEL}</summary>${chooseForm(m, others, 'Choose another method')}</details>`)}
</div>`;
}

export function reviewScreen(m: PageModel): Html {
  const a = m.attempt;
  return html`<div class="card screen">${icon('info')}
<h2 tabindex="-1">We are checking your payment</h2>
<p>Your payment${a ? html` of <strong class="num">${formatGhs(a.amount_charged_minor)}</strong>` : ''} needs a manual check before it is confirmed. Please do not pay again. ${m.session.merchant_name} will be told the result.</p>
<p class="hint">This page updates by itself.</p>
${testPanel(m)}</div>`;
}

function returnLink(m: PageModel, primary: boolean): Html {
  const url = m.session.return_to_merchant_url;
  return when(
    url,
    () =>
      html`<div class="actions"><a class="button block${raw(primary ? '' : ' secondary')}" href="${url}">Return to ${m.session.merchant_name}</a></div>`,
  );
}

/**
 * What the provider knows the payment by (MTN's financialTransactionId, Paystack's transaction id), else our
 * reference with the provider (a bank transfer's SK reference, a Test TEST-…); the attempt's own att_ id only
 * when there is neither.
 */
const paymentReference = (m: PageModel, a: AttemptRow) =>
  m.facts?.providerTransactionId || a.provider_reference || a.id;

export function successScreen(m: PageModel): Html {
  const a = m.attempt;
  const i = m.instructions ?? {};
  const view = a ? findRail(a.rail)?.payerView : undefined;
  const paidWith = view && PAYER_VIEWS[view].paidWith;
  const method = a ? (paidWith ? paidWith(a, i, m.facts) : railLabel(a.rail)) : null;
  const reference = a ? paymentReference(m, a) : null;
  return html`<div class="card screen">${icon('ok')}
<h2 tabindex="-1">Payment successful</h2>
<p>You paid <strong class="num">${formatGhs(a ? a.amount_charged_minor : m.session.amount_minor)}</strong> to <strong>${m.session.merchant_name}</strong>.</p>
${kv([
  ['Invoice', m.session.invoice_ref, 'ref'],
  ...(method ? ([['Paid with', method]] as [string, string][]) : []),
  ...(reference
    ? ([['Payment reference', reference, reference.length > REFERENCE_INLINE_LENGTH_MAX ? 'ref stack' : 'ref']] as [
        string,
        string,
        string,
      ][])
    : []),
  ...(a?.finalized_at ? ([['Date', formatAccra(a.finalized_at)]] as [string, string][]) : []),
])}
${returnLink(m, true)}
<div class="actions"><a class="button block${raw(m.session.return_to_merchant_url ? ' secondary' : '')}" href="/pay/${m.session.id}/receipt">View receipt</a><a class="button secondary block" href="/pay/${m.session.id}/receipt.pdf" download>Download PDF</a></div>
<div class="gap">${receiptSendForm(m.session.id, 'email')}
${when(m.smsReceipts, () => receiptSendForm(m.session.id, 'sms'))}</div>
<p class="hint">You can close this page. ${m.session.merchant_name} will be told about your payment.</p></div>`;
}

export function failedScreen(m: PageModel): Html {
  return html`<div class="card screen">${icon('bad')}
<h2 tabindex="-1">Payment failed</h2>
<p>This checkout cannot take any more attempts, and you have not been charged for the ones that failed.${m.session.return_to_merchant_url ? ` Return to ${m.session.merchant_name} to start again.` : ` Contact ${m.session.merchant_name} to start again.`}</p>
${returnLink(m, true)}</div>`;
}

export function expiredScreen(m: PageModel): Html {
  return html`<div class="card screen">${icon('clock')}
<h2 tabindex="-1">This checkout has expired</h2>
<p>The time to pay invoice <span class="ref">${m.session.invoice_ref}</span> ran out on ${formatAccra(m.session.expires_at)}. Nothing more can be paid on this page.</p>
<p>${m.session.return_to_merchant_url ? `Return to ${m.session.merchant_name} to start a new payment.` : `Contact ${m.session.merchant_name} for a new payment link.`}</p>
${returnLink(m, true)}</div>`;
}
