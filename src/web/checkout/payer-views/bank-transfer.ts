// Bank transfers on the payer page: the account details and the reference to quote, then a wait until
// the transfer arrives.
import { formatGhs } from '../../../lib/ghana.ts';
import { html } from '../../html.ts';
import type { RailPayerView } from '../page-model.ts';
import { icon, kv, late, testPanel } from '../page-parts.ts';

export const bankTransferView = {
  panel: () => html`
<p>You will get our account details and a reference to quote. We confirm the payment when your transfer arrives.</p>`,

  waiting(m) {
    const a = m.attempt!;
    const i = m.instructions ?? {};
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
  },
} satisfies RailPayerView;
