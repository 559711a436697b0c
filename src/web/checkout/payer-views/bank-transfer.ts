// Bank transfers on the payer page: the account to pay (bank, branch, account name and number), the amount
// and the reference to quote, each value a payer types into a bank app with a copy button, then a wait
// until the transfer arrives. Live instructions carry { bank_name, bank_code, branch, account_number,
// account_name, reference, note, amount_minor, currency } (src/rails/registry.ts and the Live adapter).
import { formatGhs } from '../../../lib/ghana.ts';
import { html, raw, when, type Html } from '../../html.ts';
import type { RailPayerView } from '../page-model.ts';
import { changeCourse, icon, kv, late, testPanel } from '../page-parts.ts';

/** Characters per group when a reference is shown for reading out (SK7K Q2M9). */
const REFERENCE_GROUP_LENGTH = 4;

/**
 * A reference in groups of four counted from its end, so a Live reference reads SK 4F7K 9QXM and an
 * eight-character one SK7K Q2M9; each group is a span spaced by CSS, so the text on the page (and a
 * selection, or a copy, of it) is the reference unchanged. A hyphen ends its group (TEST- ABCD EFGH).
 */
export function groupedReference(reference: string): Html {
  const groups = reference.split(/(?<=-)/).flatMap((segment) => {
    const hyphen = segment.endsWith('-') ? '-' : '';
    const body = segment.slice(0, segment.length - hyphen.length);
    const chunks: string[] = [];
    for (let end = body.length; end > 0; end -= REFERENCE_GROUP_LENGTH)
      chunks.unshift(body.slice(Math.max(0, end - REFERENCE_GROUP_LENGTH), end));
    if (chunks.length === 0) chunks.push('');
    chunks[chunks.length - 1] += hyphen;
    return chunks;
  });
  return raw(groups.map((group) => html`<span>${group}</span>`.value).join(''));
}

/** "500.00": an amount as a bank app's amount field takes it (no currency, no thousands separator). */
export const plainAmount = (minor: number) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;

/**
 * A value with its copy button. The script copies the text of the element the button names (data-copy),
 * through navigator.clipboard, or else selects that text for the payer to copy.
 */
function copyable(id: string, label: string, value: Html | string, before = ''): Html {
  return html`<span class="copyval"><span>${before}<span id="${id}">${value}</span></span><button type="button" class="copy" data-action="copy" data-copy="${id}" aria-label="Copy the ${label}">Copy</button></span>`;
}

const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : null);

export const bankTransferView = {
  panel: () => html`
<p>You will get our account details and a reference to quote. We confirm the payment when your transfer arrives.</p>`,

  waiting(m) {
    const a = m.attempt!;
    const i = m.instructions ?? {};
    const accountNumber = text(i.account_number);
    const reference = text(i.reference) ?? a.provider_reference;
    const branch = text(i.branch);
    return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">Transfer ${formatGhs(a.amount_charged_minor)} from your bank</h2>
<p>Use your bank app, internet banking or a branch. Quote the reference exactly so we can match your transfer to this payment.</p>
${kv([
  ['Bank', i.bank_name],
  ...(branch ? ([['Branch', branch]] as [string, string][]) : []),
  ['Account name', i.account_name],
  accountNumber
    ? ['Account number', copyable('copy-account', 'account number', accountNumber), 'ref stack']
    : ['Account number', 'Shown by your bank'],
  ['Amount', copyable('copy-amount', 'amount', plainAmount(a.amount_charged_minor), `${a.currency} `), 'num'],
  [
    'Payment reference',
    copyable('copy-reference', 'payment reference', html`<span class="groups">${groupedReference(reference)}</span>`),
    'ref big',
  ],
])}
${when(text(i.note), () => html`<p class="hint">${text(i.note)}</p>`)}
<p class="hint">We confirm the payment here when the transfer arrives. You can keep this page open or come back to this link later.</p>
${changeCourse(m)}
${late}${testPanel(m)}</div>`;
  },
} satisfies RailPayerView;
