// The hosted payment page's HTML, rendered on the server for every state of a session: choose a method,
// enter a Telecel code, wait for a prompt or a transfer, the cash slip, review, success, failure, expiry.
// The client script (pay.js) only calls the payer API and swaps #view for a fresh render of this page.
import type { RailQuote } from '../../checkout/fees.ts';
import type { AttemptRow } from '../../checkout/model.ts';
import { SIMULATION_OUTCOMES } from '../../checkout/payer-schemas.ts';
import { formatGhs, NETWORK_LABELS, NETWORK_PREFIXES, type MomoNetwork } from '../../lib/ghana.ts';
import { findRail, railDescriptor, railDescriptors, type Rail, type RailDescriptor } from '../../rails/registry.ts';
import { html, raw, when, type Html } from '../html.ts';
import { qrSvg } from './qr.ts';

export type Screen = 'choose' | 'code' | 'waiting' | 'cash' | 'review' | 'success' | 'failed' | 'expired';

/** The payer view of the session (SPEC 2.2), as the public session endpoint returns it. */
export interface PublicSessionView {
  id: string;
  merchant_name: string;
  status: string;
  amount_minor: number;
  currency: string;
  invoice_ref: string;
  description: string;
  customer_name: string;
  allowed_rails: string[];
  expires_at: string;
  return_to_merchant_url: string | null;
  card_collection_mode: string;
  line_items: { code: string; name: string; amount_minor: number; currency: string }[];
  livemode: boolean;
}

export interface SlipView {
  reference: string;
  amount_minor: number;
  merchant_name: string;
  invoice_ref: string;
  description: string;
  customer_name: string;
  status: string;
  expires_at: string;
}

export interface BankBranches {
  name: string;
  branches: { name: string }[];
}

export interface PageModel {
  session: PublicSessionView;
  test: boolean;
  screen: Screen;
  quotes: Partial<Record<Rail, RailQuote>>;
  /** The attempt the screen is about (the pending one, the paid one, or the last that failed). */
  attempt: AttemptRow | null;
  instructions: Record<string, unknown> | null;
  resendsLeft: number;
  /** On the choose screen: the attempt that just ended without payment, to say so. */
  lastUnpaid: AttemptRow | null;
  slip: SlipView | null;
  banks: BankBranches[];
}

export interface Assets {
  scriptUrl: string;
  css: string;
}

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
const UNPAID_REASONS: Record<string, string> = {
  failed: 'The payment did not go through',
  cancelled: 'The payment was cancelled',
  expired: 'The payment request expired before it was approved',
  reversed: 'The payment was reversed',
};

const accraTime = new Intl.DateTimeFormat('en-GB', { timeZone: 'Africa/Accra', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
/** Accra is on GMT all year. */
export const formatAccra = (iso: string | Date) => `${accraTime.format(new Date(iso))} GMT`;

const isRail = (value: string): value is Rail => findRail(value) !== undefined;
const railLabel = (rail: string) => findRail(rail)?.labels.payer ?? rail;
/** The button of the chosen rail: its own action, or the amount to pay. */
const actionOf = (rail: Rail, quote: RailQuote) => railDescriptor(rail).labels.action ?? `Pay ${formatGhs(quote.total_minor)}`;
/** One part per line, as the page has always been laid out. */
const lines = (parts: Html[]): Html => raw(parts.map((part) => part.value).join('\n'));
const networkLabel = (operator: unknown) => (typeof operator === 'string' && operator in NETWORK_LABELS ? NETWORK_LABELS[operator as MomoNetwork] : 'Mobile Money');

const ICONS = {
  ok: '<svg viewBox="0 0 24 24" width="28" height="28" aria-hidden="true"><path d="M5 12.5l4.5 4.5L19 7.5" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>',
  bad: '<svg viewBox="0 0 24 24" width="26" height="26" aria-hidden="true"><path d="M7 7l10 10M17 7L7 17" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>',
  clock: '<svg viewBox="0 0 24 24" width="28" height="28" aria-hidden="true"><circle cx="12" cy="12" r="8" fill="none" stroke="#fff" stroke-width="2.5"/><path d="M12 7.5V12l3 2" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/></svg>',
  lock: '<svg viewBox="0 0 24 24" width="14" height="14" aria-hidden="true"><path d="M7 10V8a5 5 0 0110 0v2h1v11H6V10zm2 0h6V8a3 3 0 00-6 0z" fill="currentColor"/></svg>',
};
const icon = (kind: 'ok' | 'bad' | 'clock' | 'info' | 'wait') =>
  html`<div class="icon${raw(kind === 'ok' ? '' : ` ${kind === 'clock' ? 'info' : kind}`)}" aria-hidden="true">${raw(kind === 'ok' ? ICONS.ok : kind === 'bad' ? ICONS.bad : kind === 'clock' ? ICONS.clock : kind === 'info' ? '!' : '')}</div>`;

function kv(rows: [string, unknown, string?][]): Html {
  // A long reference gets a line of its own (label above) rather than breaking inside it.
  return html`<dl class="kv">${rows.map(([label, value, cls]) => html`<div${raw(/big|stack/.test(cls ?? '') ? ' class="stack"' : '')}><dt>${label}</dt><dd${raw(cls ? ` class="${cls}"` : '')}>${value}</dd></div>`)}</dl>`;
}

/** The merchant, the amount and what it is for: the same on every screen. */
function summary(s: PublicSessionView, showDeadline: boolean): Html {
  const items = s.line_items;
  const itemsTotal = items.reduce((sum, item) => sum + item.amount_minor, 0);
  return html`<section class="summary" aria-labelledby="pay-title">
<h1 id="pay-title"><span class="payee">Payment to</span><br>${s.merchant_name}</h1>
<p class="amount num">${formatGhs(s.amount_minor)}</p>
${when(s.description, () => html`<p class="desc">${s.description}</p>`)}
<p class="meta">Invoice <span class="ref">${s.invoice_ref}</span></p>
${when(s.customer_name, () => html`<p class="meta">For ${s.customer_name}</p>`)}
${when(showDeadline, () => html`<p class="meta">Pay before ${formatAccra(s.expires_at)}</p>`)}
${when(
  items.length > 0,
  () => html`<ul class="items" aria-label="Items">${items.map((item) => html`<li><span>${item.name}</span><span class="num">${formatGhs(item.amount_minor)}</span></li>`)}
${when(items.length > 1 || itemsTotal !== s.amount_minor, () => html`<li class="total"><span>Total</span><span class="num">${formatGhs(s.amount_minor)}</span></li>`)}</ul>`,
)}
</section>`;
}

function testPanel(m: PageModel): Html {
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

function railOption(rail: Rail, quote: RailQuote, checked: boolean): Html {
  const fee = quote.surcharge_minor > 0 ? `incl. ${formatGhs(quote.surcharge_minor)} fee` : 'no fee';
  const { labels } = railDescriptor(rail);
  return html`<label class="opt"><input type="radio" name="rail" value="${rail}" data-total="${quote.total_minor}" data-action="${actionOf(rail, quote)}"${raw(checked ? ' checked' : '')}>
<span><span class="name">${labels.payer}</span><span class="sub">${labels.hint}</span></span>
<span class="price"><b class="num">${formatGhs(quote.total_minor)}</b><small>${fee}</small></span></label>`;
}

/** What the payer is told about a rail before continuing with it (its view's panel). */
function panelBody(m: PageModel, rail: RailDescriptor<Rail>, quote: RailQuote): Html {
  const s = m.session;
  switch (rail.payerView) {
    case 'mobile_money':
      return html`
<fieldset><legend>Mobile Money network</legend><div class="nets">
${(Object.keys(NETWORK_LABELS) as MomoNetwork[]).map((n) => html`<label class="opt"><input type="radio" name="operator" value="${n}">${NETWORK_LABELS[n]}</label>`)}
</div></fieldset>
<label class="field" for="phone">Mobile Money number</label>
<input id="phone" name="phone" type="tel" inputmode="tel" autocomplete="tel-national" maxlength="20" placeholder="024 123 4567" aria-describedby="phone-hint phone-msg">
<p id="phone-hint" class="hint">The wallet that pays. We'll send a payment prompt to this phone.</p>
<p id="phone-msg" class="msg" aria-live="polite"></p>
`;
    case 'card':
      return html`
<p>${s.card_collection_mode === 'test_simulation' ? 'Test mode: no card details are collected. After you continue, choose the outcome with the Test buttons.' : 'You will enter your card details on the card network’s secure page.'}</p>`;
    case 'bank_transfer':
      return html`
<p>You will get our account details and a reference to quote. We confirm the payment when your transfer arrives.</p>`;
    case 'cash_slip':
      return html`
<p>You will get a deposit slip. Take it with ${formatGhs(quote.total_minor)} in cash to a bank branch before ${formatAccra(s.expires_at)}; the teller records your payment.</p>`;
    case 'confirmation':
      return html`
<p>After you continue, approve the payment of ${formatGhs(quote.total_minor)} with ${rail.labels.payer}. This page shows it as soon as it is confirmed.</p>`;
  }
}

/** Every offered rail's panel, in the registry's order; only the first chosen one is shown. */
function panels(m: PageModel, rails: Rail[], first: Rail): Html {
  return lines(
    railDescriptors().map((rail) => {
      const quote = m.quotes[rail.id];
      return when(
        rails.includes(rail.id) && quote,
        () => html`<div class="panel" data-panel="${rail.id}"${raw(first === rail.id ? '' : ' hidden')}>${panelBody(m, rail, quote!)}</div>`,
      );
    }),
  );
}

function chooseForm(m: PageModel, rails: Rail[], heading: string): Html {
  const s = m.session;
  const first = rails[0];
  if (!first) return html`<p class="error">No payment method is available for this checkout right now. Please try again later.</p>`;
  const firstQuote = m.quotes[first]!;
  return html`<form id="pay-form" method="post" action="/pay/${s.id}" novalidate data-prefixes="${JSON.stringify(NETWORK_PREFIXES)}" data-labels="${JSON.stringify(NETWORK_LABELS)}">
<fieldset><legend><h2 id="choose-title" tabindex="-1">${heading}</h2></legend>
<div class="rails">${rails.map((rail) => railOption(rail, m.quotes[rail]!, rail === first))}</div></fieldset>
${panels(m, rails, first)}
<p class="error" id="form-error" role="alert" hidden></p>
<button type="submit" class="block">${firstQuote && actionOf(first, firstQuote)}</button>
<noscript><p class="error">Turn on JavaScript in your browser to pay on this page.</p></noscript>
</form>`;
}

const payableRails = (m: PageModel, except?: Rail): Rail[] => m.session.allowed_rails.filter((r): r is Rail => isRail(r) && r !== except && m.quotes[r] !== undefined);

function chooseScreen(m: PageModel): Html {
  const last = m.lastUnpaid;
  return html`${when(
    last,
    () => html`<div class="card screen" data-unpaid>
${icon('bad')}<h2 tabindex="-1">Payment not completed</h2>
<p>${UNPAID_REASONS[last!.status] ?? 'The payment did not go through'} (${railLabel(last!.rail)}, ${formatGhs(last!.amount_charged_minor)}). You have not been charged for it.</p>
<p>Try again below, with the same method or another one.</p></div>`,
  )}
<div class="card${raw(last ? ' gap' : '')}">${chooseForm(m, payableRails(m), last ? 'Try again' : 'Choose how to pay')}</div>`;
}

function resendButton(m: PageModel): Html {
  const left = m.resendsLeft;
  return html`<button type="button" class="secondary block" data-action="resend"${raw(left > 0 ? '' : ' disabled')}>Resend prompt</button>
<p class="hint" data-resends>${left > 0 ? `You can resend it ${left} more time${left === 1 ? '' : 's'}.` : 'The prompt cannot be re-sent again. If it does not arrive, wait for this payment to end and start a new one.'}</p>`;
}

const late = html`<p class="hint late" data-late hidden>Still waiting for confirmation. If you approved the payment, it will be confirmed here soon; keep this page open. <button type="button" class="secondary" data-action="check">Check now</button></p>`;

function codeScreen(m: PageModel): Html {
  const a = m.attempt!;
  const i = m.instructions ?? {};
  return html`<div class="card screen">
<h2 tabindex="-1">Enter your ${networkLabel(a.operator)} code</h2>
<p>${networkLabel(a.operator)} needs a verification code to approve <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> from the wallet ending <strong>${i.phone_last4 ?? ''}</strong>. Create the code in the ${networkLabel(a.operator)} menu on your phone, then enter it here.</p>
<form id="code-form" novalidate data-attempt="${a.id}">
<label class="field" for="code">Verification code</label>
<input id="code" name="code" type="text" autocomplete="one-time-code" spellcheck="false" autocapitalize="off" maxlength="10" aria-describedby="code-hint code-error">
<p id="code-hint" class="hint">${m.test ? 'Test mode: the code is 123456.' : 'The code is 4 to 10 letters or digits.'}</p>
<p id="code-error" class="error" role="alert" hidden></p>
<div class="actions"><button type="submit" class="block">Confirm code</button></div>
</form>
${testPanel(m)}</div>`;
}

function waitingScreen(m: PageModel): Html {
  const a = m.attempt!;
  const i = m.instructions ?? {};
  const view = findRail(a.rail)?.payerView;
  if (view === 'bank_transfer') {
    return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">Transfer ${formatGhs(a.amount_charged_minor)} from your bank</h2>
<p>Use your bank app, internet banking or a branch. Quote the reference exactly so we can match your transfer to this payment.</p>
${kv([
  ['Bank', i.bank_name],
  ['Account name', i.account_name],
  ['Account number', i.account_number ?? 'Shown by your bank', 'ref'],
  ['Reference', i.reference, 'ref big'],
  ['Amount', formatGhs(a.amount_charged_minor), 'num'],
])}
<p class="hint">We confirm the payment here when the transfer arrives. You can keep this page open or come back to this link later.</p>
${late}${testPanel(m)}</div>`;
  }
  if (view === 'confirmation') {
    const label = railLabel(a.rail);
    return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">Confirming your ${label} payment</h2>
<p>We are waiting for ${label} to confirm <strong class="num">${formatGhs(a.amount_charged_minor)}</strong>. This page updates by itself.</p>
${late}${testPanel(m)}</div>`;
  }
  if (view === 'card') {
    return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">${m.test ? 'Test card payment' : 'Confirming your card payment'}</h2>
<p>${m.test ? html`A card payment of <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> has started. No card details are collected in Test mode: choose its outcome with the Test buttons below.` : html`We are waiting for your card network to confirm <strong class="num">${formatGhs(a.amount_charged_minor)}</strong>. This page updates by itself.`}</p>
${late}${testPanel(m)}</div>`;
  }
  if (a.operator === 'telecel') {
    return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">Confirming your Telecel Cash payment</h2>
<p>Your code was accepted. We are waiting for Telecel Cash to confirm <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> from the wallet ending <strong>${i.phone_last4 ?? ''}</strong>. If your phone asks you to approve it, enter your PIN.</p>
<p class="hint">This page updates by itself.</p>
${late}${testPanel(m)}</div>`;
  }
  return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">Approve the payment on your phone</h2>
<p>We sent a request for <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> to the ${networkLabel(a.operator)} wallet ending <strong>${i.phone_last4 ?? ''}</strong>. Enter your Mobile Money PIN on your phone to approve it.</p>
<p class="hint">This page updates by itself. No prompt after a minute? Resend it.</p>
<div class="actions">${resendButton(m)}</div>
<p class="error" data-error role="alert" hidden></p>
${late}${testPanel(m)}</div>`;
}

function slipArticle(slip: SlipView, banks: BankBranches[], test: boolean): Html {
  return html`<article class="slip" aria-labelledby="slip-title">
<h2 id="slip-title">Cash deposit slip</h2>
${when(test, () => html`<p class="stamp">Test mode: not valid at a bank</p>`)}
<div class="slip-top">${raw(qrSvg(slip.reference, `QR code of the slip reference ${slip.reference}`))}
${kv([
  ['Reference', slip.reference, 'ref big'],
  ['Amount to pay', formatGhs(slip.amount_minor), 'num'],
  ['Pay to', slip.merchant_name],
  ['Invoice', slip.invoice_ref, 'ref'],
  ...(slip.customer_name ? ([['Payer', slip.customer_name]] as [string, string][]) : []),
  ['Valid until', formatAccra(slip.expires_at)],
])}</div>
<p>Give this slip and exactly <strong class="num">${formatGhs(slip.amount_minor)}</strong> in cash to the teller. The teller types in the reference (or scans the code) and records your payment. After the date above the slip is no longer valid.</p>
<h3>Where to pay</h3>
<ul class="banks">${banks.map((b) => html`<li><strong>${b.name}</strong>: ${b.branches.map((br) => br.name).join(', ')}</li>`)}</ul>
</article>`;
}

function cashScreen(m: PageModel): Html {
  const slip = m.slip!;
  const others = payableRails(m, 'cash');
  return html`<div class="card screen">
<h2 tabindex="-1">Your cash deposit slip</h2>
<p>Print the slip or show it on your phone at any branch listed on it. We confirm the payment here when the teller records it.</p>
<div class="actions"><button type="button" class="block" data-action="print">Print slip</button>
<a class="button secondary block" href="/pay/${m.session.id}/slip">Open the printable slip</a></div>
${slipArticle(slip, m.banks, m.test)}
${testPanel(m)}
${when(others.length > 0, () => html`<details><summary>Pay another way instead</summary>${chooseForm(m, others, 'Choose another method')}</details>`)}
</div>`;
}

function reviewScreen(m: PageModel): Html {
  const a = m.attempt;
  return html`<div class="card screen">${icon('info')}
<h2 tabindex="-1">We are checking your payment</h2>
<p>Your payment${a ? html` of <strong class="num">${formatGhs(a.amount_charged_minor)}</strong>` : ''} needs a manual check before it is confirmed. Please do not pay again. ${m.session.merchant_name} will be told the result.</p>
<p class="hint">This page updates by itself.</p>
${testPanel(m)}</div>`;
}

function returnLink(m: PageModel, primary: boolean): Html {
  const url = m.session.return_to_merchant_url;
  return when(url, () => html`<div class="actions"><a class="button block${raw(primary ? '' : ' secondary')}" href="${url}">Return to ${m.session.merchant_name}</a></div>`);
}

function successScreen(m: PageModel): Html {
  const a = m.attempt;
  const i = m.instructions ?? {};
  const method = a ? (findRail(a.rail)?.payerView === 'mobile_money' ? `${networkLabel(a.operator)}${i.phone_last4 ? ` ending ${i.phone_last4}` : ''}` : railLabel(a.rail)) : null;
  return html`<div class="card screen">${icon('ok')}
<h2 tabindex="-1">Payment successful</h2>
<p>You paid <strong class="num">${formatGhs(a ? a.amount_charged_minor : m.session.amount_minor)}</strong> to <strong>${m.session.merchant_name}</strong>.</p>
${kv([
  ['Invoice', m.session.invoice_ref, 'ref'],
  ...(method ? ([['Paid with', method]] as [string, string][]) : []),
  ...(a ? ([['Payment reference', a.id, 'ref stack']] as [string, string, string][]) : []),
  ...(a?.finalized_at ? ([['Date', formatAccra(a.finalized_at)]] as [string, string][]) : []),
])}
${returnLink(m, true)}
<p class="hint">You can close this page. ${m.session.merchant_name} will be told about your payment.</p></div>`;
}

function failedScreen(m: PageModel): Html {
  return html`<div class="card screen">${icon('bad')}
<h2 tabindex="-1">Payment failed</h2>
<p>This checkout cannot take any more attempts, and you have not been charged for the ones that failed.${m.session.return_to_merchant_url ? ` Return to ${m.session.merchant_name} to start again.` : ` Contact ${m.session.merchant_name} to start again.`}</p>
${returnLink(m, true)}</div>`;
}

function expiredScreen(m: PageModel): Html {
  return html`<div class="card screen">${icon('clock')}
<h2 tabindex="-1">This checkout has expired</h2>
<p>The time to pay invoice <span class="ref">${m.session.invoice_ref}</span> ran out on ${formatAccra(m.session.expires_at)}. Nothing more can be paid on this page.</p>
<p>${m.session.return_to_merchant_url ? `Return to ${m.session.merchant_name} to start a new payment.` : `Contact ${m.session.merchant_name} for a new payment link.`}</p>
${returnLink(m, true)}</div>`;
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
  const announce = m.screen === 'choose' && m.lastUnpaid ? 'Payment not completed. You can try again.' : ANNOUNCE[m.screen];
  const poll = POLL_CAP_S[m.screen];
  return html`<div id="view" data-screen="${m.screen}" data-announce="${announce}"${raw(
    a && poll
      ? html` data-attempt="${a.id}" data-attempt-status="${a.status}" data-session-status="${m.session.status}" data-verification="${String(a.verification_required)}" data-poll-cap="${poll}"`.value
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
  return documentOf(
    `Pay ${s.merchant_name} · ${formatGhs(s.amount_minor)}`,
    m.test,
    assets,
    s.id,
    html`<main class="wrap">${summary(s, showDeadline)}<div class="pay">${renderView(m)}</div></main><p id="live" class="vh" role="status" aria-live="polite"></p>`,
  );
}

export function renderSlipPage(session: PublicSessionView, test: boolean, slip: SlipView, banks: BankBranches[], assets: Assets): string {
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

/** Unknown session, or a slip that is not there: a page, not JSON, with the HTTP status. */
export function renderProblemPage(status: number, heading: string, text: string, assets: Pick<Assets, 'css'>): string {
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${heading} · Sika</title><link rel="icon" href="data:,"><style>${raw(assets.css)}</style></head>
<body><main class="wrap solo"><div class="summary"><p class="payee">Sika checkout</p></div><div class="pay"><div class="card screen">${icon(status === 404 ? 'info' : 'bad')}
<h1>${heading}</h1><p>${text}</p></div></div></main>
<footer><p>${raw(ICONS.lock)} Secure payment by Sika.</p></footer></body></html>`}`;
}
