// The hosted payment page's HTML, rendered on the server for every state of a session: choose a method,
// enter a Telecel code, wait for a prompt or a transfer, the cash slip, review, success, failure, expiry.
// The client script (pay.js) only calls the payer API and swaps #view for a fresh render of this page.
// This file is the page around the screens: the document, the summary, the view element the script
// reads, the printable slip page and the problem page. The screens are in screens.ts, each rail's part
// of them in payer-views/ (picked by its descriptor's payerView, payer-views.ts).
import { formatGhs } from '../../lib/ghana.ts';
import { html, raw, when, type Html } from '../html.ts';
import type { Assets, BankBranches, PageModel, PublicSessionView, Screen, SlipView } from './page-model.ts';
import { CHANGED_COURSE, formatAccra, icon, ICONS, railLabel } from './page-parts.ts';
import { slipArticle } from './payer-views/cash-slip.ts';
import { codeScreen } from './payer-views/mobile-money.ts';
import {
  cashScreen,
  chooseScreen,
  expiredScreen,
  failedScreen,
  payableRails,
  reviewScreen,
  successScreen,
  waitingScreen,
} from './screens.ts';

/** The one amount the page shows: the chosen method's total, or what the attempt charges, and the fee in it. */
interface Shown {
  total: number;
  fee: number;
  feeLabel: string;
}

function shownAmount(m: PageModel): Shown {
  const base = m.session.amount_minor;
  const a = m.attempt;
  if (a && m.screen !== 'choose')
    return {
      total: a.amount_charged_minor,
      fee: Math.max(0, a.amount_charged_minor - base),
      feeLabel: `${railLabel(a.rail)} fee`,
    };
  const first = m.screen === 'choose' ? payableRails(m)[0] : undefined;
  const quote = first && m.quotes[first];
  if (first && quote)
    return { total: quote.total_minor, fee: quote.surcharge_minor, feeLabel: `${railLabel(first)} fee` };
  return { total: base, fee: 0, feeLabel: '' };
}

/**
 * The merchant, the amount and what it is for: the same on every screen. The amount is the total of the
 * chosen method (pay.js updates it, and the fee line, when the payer picks another), never the base
 * beside it; the invoice lines end with that fee and that total.
 */
function summary(s: PublicSessionView, shown: Shown, showDeadline: boolean): Html {
  const items = s.line_items;
  const itemsTotal = items.reduce((sum, item) => sum + item.amount_minor, 0);
  const hideUnless = (show: boolean) => raw(show ? '' : ' hidden');
  // Without a fee, one line equal to the amount needs no total line (data-optional: the script's rule too).
  const totalOptional = items.length === 1 && itemsTotal === s.amount_minor;
  const meta = [
    html`Invoice <span class="ref">${s.invoice_ref}</span>`,
    ...(s.customer_name ? [html`For ${s.customer_name}`] : []),
  ];
  return html`<section class="summary" aria-labelledby="pay-title">
<h1 id="pay-title"><span class="payee">Payment to</span><br>${s.merchant_name}</h1>
<p class="amount num" data-show="amount">${formatGhs(shown.total)}</p>
${when(items.length === 0, () => html`<p class="meta" data-show="fee-row"${hideUnless(shown.fee > 0)}>incl. <span class="num" data-show="fee">${formatGhs(shown.fee)}</span> <span data-show="fee-label">${shown.feeLabel}</span></p>`)}
${when(s.description, () => html`<p class="desc">${s.description}</p>`)}
<p class="meta">${raw(meta.map((part) => part.value).join(' · '))}</p>
${when(showDeadline, () => html`<p class="meta">Pay before ${formatAccra(s.expires_at)}</p>`)}
${when(
  items.length > 0,
  () => html`<ul class="items" aria-label="Items">${items.map((item) => html`<li><span>${item.name}</span><span class="num">${formatGhs(item.amount_minor)}</span></li>`)}
<li data-show="fee-row"${hideUnless(shown.fee > 0)}><span data-show="fee-label">${shown.feeLabel}</span><span class="num" data-show="fee">${formatGhs(shown.fee)}</span></li>
<li class="total"${raw(totalOptional ? ' data-optional' : '')}${hideUnless(!totalOptional || shown.fee > 0)}><span>Total</span><span class="num" data-show="amount">${formatGhs(shown.total)}</span></li></ul>`,
)}
</section>`;
}

const ANNOUNCE: Record<Screen, string> = {
  choose: '',
  code: 'Enter the verification code from your phone.',
  waiting: 'Payment started. Waiting for confirmation.',
  cash: 'Your cash deposit slip is ready.',
  review: 'Your payment is being checked.',
  success: 'Payment successful.',
  failed: 'Payment failed.',
  expired: 'This checkout has expired.',
};
/** Longest wait between two status checks, in seconds: payments by phone move fast, cash and reviews slowly. */
const POLL_CAP_S: Partial<Record<Screen, number>> = { waiting: 5, code: 5, cash: 30, review: 30 };

export function renderView(m: PageModel): Html {
  const a = m.attempt;
  const body = {
    choose: chooseScreen,
    code: codeScreen,
    waiting: waitingScreen,
    cash: cashScreen,
    review: reviewScreen,
    success: successScreen,
    failed: failedScreen,
    expired: expiredScreen,
  }[m.screen](m);
  const announce =
    m.screen === 'choose' && m.lastUnpaid
      ? m.facts?.failureReason === CHANGED_COURSE
        ? 'Payment stopped. Choose another number or method.'
        : `Payment not completed. ${m.facts?.failureMessage ?? 'You can try again.'}`
      : m.returning
        ? 'Confirming your payment.'
        : ANNOUNCE[m.screen];
  const poll = POLL_CAP_S[m.screen];
  return html`<div id="view" data-screen="${m.screen}" data-announce="${announce}"${raw(
    a && poll
      ? html` data-attempt="${a.id}" data-attempt-status="${a.status}" data-session-status="${m.session.status}" data-verification="${String(a.verification_required)}" data-poll-cap="${poll}" data-elapsed="${m.facts?.elapsedS ?? 0}"${raw(m.returning ? ' data-poll-now' : '')}`
          .value
      : '',
  )}>${body}</div>`;
}

function documentOf(title: string, test: boolean, assets: Assets, sessionId: string, main: Html): string {
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${title}</title><link rel="icon" href="data:,"><style>${raw(assets.css)}</style>
<script src="${assets.scriptUrl}" defer></script></head>
<body data-session="${sessionId}">
${when(test, () => html`<div class="testbar" role="note">Test mode — no real money moves</div>`)}
${main}
<footer><p>${raw(ICONS.lock)} Secure payment by Sika. Never share your Mobile Money PIN with anyone, including us.</p></footer>
</body></html>`}`;
}

export function renderPayPage(m: PageModel, assets: Assets): string {
  const s = m.session;
  const showDeadline = m.screen === 'choose' || m.screen === 'code' || m.screen === 'waiting' || m.screen === 'cash';
  const shown = shownAmount(m);
  return documentOf(
    `Pay ${s.merchant_name} · ${formatGhs(shown.total)}`,
    m.test,
    assets,
    s.id,
    html`<main class="wrap">${summary(s, shown, showDeadline)}<div class="pay">${renderView(m)}</div></main><p id="live" class="vh" role="status" aria-live="polite"></p>`,
  );
}

export function renderSlipPage(
  session: PublicSessionView,
  test: boolean,
  slip: SlipView,
  banks: BankBranches[],
  assets: Assets,
): string {
  return documentOf(
    `Cash deposit slip ${slip.reference} · ${session.merchant_name}`,
    test,
    assets,
    session.id,
    html`<main class="wrap solo"><div class="summary"><h1>Cash deposit slip for ${session.merchant_name}</h1><p class="meta">Print this page, or show it on your phone at the bank.</p>
<div class="actions"><button type="button" class="block" data-action="print">Print slip</button><a class="button secondary block" href="/pay/${session.id}">Back to the payment page</a></div></div>
<div class="pay">${slipArticle(slip, banks, test)}</div></main>`,
  );
}

/**
 * Unknown session, or a slip that is not there: a page, not JSON, with the HTTP status. `test`: a page of a Test
 * object (a Test link's 410) carries the Test bar, as its payer page does.
 */
export function renderProblemPage(
  status: number,
  heading: string,
  text: string,
  assets: Pick<Assets, 'css'>,
  options: { test?: boolean } = {},
): string {
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${heading} · Sika</title><link rel="icon" href="data:,"><style>${raw(assets.css)}</style></head>
<body>${when(options.test, () => html`<div class="testbar" role="note">Test mode — no real money moves</div>`)}<main class="wrap solo"><div class="summary"><p class="payee">Sika checkout</p></div><div class="pay"><div class="card screen">${icon(status === 404 ? 'info' : 'bad')}
<h1>${heading}</h1><p>${text}</p></div></div></main>
<footer><p>${raw(ICONS.lock)} Secure payment by Sika.</p></footer></body></html>`}`;
}
