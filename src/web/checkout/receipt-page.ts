// The payer's receipt page (issue 35), in the payer page's look: the receipt as a printable slip (the page's
// print rules print only .slip), its number large and spaced for reading out, the PDF, and the forms that send
// it by e-mail or SMS. No script: the forms post and come back here with a notice.
import type { Receipt } from '../../checkout/receipts.ts';
import { spacedReceiptNumber } from '../../checkout/receipt-number.ts';
import { formatGhs } from '../../lib/ghana.ts';
import { html, raw, when, type Html } from '../html.ts';
import type { Assets } from './page-model.ts';
import { formatAccra, ICONS, kv } from './page-parts.ts';

/** What came back from a request to send the receipt: a notice, or a refusal beside the field. */
export interface ReceiptNotice {
  channel: 'email' | 'sms';
  sent?: boolean;
  error?: string;
  /** What the payer typed, kept on a refusal. */
  value?: string;
}

/** The receipt's rows, as the page and the PDF list them. */
export function receiptRows(r: Receipt): [string, string][] {
  return [
    ['Paid to', r.merchantName],
    ...(r.linkName ? ([['For', r.linkName]] as [string, string][]) : []),
    ['Amount', formatGhs(r.amountMinor)],
    ['Fee', formatGhs(r.feeMinor)],
    ['Total charged', formatGhs(r.totalMinor)],
    ['Paid with', r.method],
    ...(r.paidFrom ? ([['From', r.paidFrom]] as [string, string][]) : []),
    ['Date', formatAccra(r.paidAt)],
    ['Invoice', r.invoiceRef],
    ...(r.customerName ? ([['Payer', r.customerName]] as [string, string][]) : []),
    ...r.customFields.map((field) => [field.label, field.value] as [string, string]),
  ];
}

const groups = (number: string): Html =>
  html`${spacedReceiptNumber(number)
    .split(' ')
    .map((group) => html`<span>${group}</span>`)}`;

/** The form sending a session's receipt on one channel (the receipt page, the payer page's success screen). */
export function receiptSendForm(
  sessionId: string,
  channel: 'email' | 'sms',
  notice: ReceiptNotice | null = null,
): Html {
  const mine = notice?.channel === channel ? notice : null;
  const email = channel === 'email';
  const id = `receipt-${channel}`;
  return html`<form method="post" action="/pay/${sessionId}/receipt/${channel}" class="panel" novalidate>
<label class="field" for="${id}">${email ? 'Send to my e-mail' : 'Send to my phone by SMS'}</label>
<input id="${id}" name="${email ? 'email' : 'phone'}" type="${email ? 'text' : 'tel'}" inputmode="${email ? 'email' : 'tel'}" autocomplete="${email ? 'email' : 'tel'}" placeholder="${email ? 'ama@example.com' : '024 123 4567'}" value="${mine?.error ? (mine.value ?? '') : ''}"${raw(mine?.error ? ` aria-invalid="true" aria-describedby="${id}-msg"` : '')} required>
${when(mine?.error, () => html`<p class="msg bad" id="${id}-msg" role="alert">${mine!.error}</p>`)}
${when(mine?.sent, () => html`<p class="msg ok" role="status">${email ? 'Sent. Check your inbox in a minute.' : 'Sent. The SMS will arrive in a minute.'}</p>`)}
<div class="actions"><button type="submit" class="secondary block">${email ? 'Send e-mail' : 'Send SMS'}</button></div></form>`;
}

export function renderReceiptPage(
  r: Receipt,
  assets: Pick<Assets, 'css'>,
  options: { sms: boolean; notice: ReceiptNotice | null },
): string {
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>Receipt ${r.receiptNumber} · ${r.merchantName}</title><link rel="icon" href="data:,"><style>${raw(assets.css)}</style></head>
<body>
${when(r.test, () => html`<div class="testbar" role="note">Test mode — no real money moved</div>`)}
<main class="wrap solo"><div class="summary"><p class="payee">Receipt</p><h1>You paid ${r.merchantName}</h1>
<p class="amount num">${formatGhs(r.totalMinor)}</p><div class="actions"><a class="button block" href="/pay/${r.sessionId}/receipt.pdf" download>Download PDF</a><a class="button secondary block" href="/pay/${r.sessionId}">Back to the payment</a></div></div>
<div class="pay"><article class="slip" aria-labelledby="receipt-number-label"><p class="payee" id="receipt-number-label">Receipt number</p>
<p class="ref groups" aria-label="${r.receiptNumber.split('').join(' ')}">${groups(r.receiptNumber)}</p>
${kv(receiptRows(r))}
<p class="hint">Quote the receipt number to ${r.merchantName} or to Sika about this payment.</p></article>
<div class="card screen gap"><h2>Get this receipt</h2>
${receiptSendForm(r.sessionId, 'email', options.notice)}
${when(options.sms, () => receiptSendForm(r.sessionId, 'sms', options.notice))}</div></div></main>
<footer><p>${raw(ICONS.lock)} Secure payment by Sika.</p></footer></body></html>`}`;
}
