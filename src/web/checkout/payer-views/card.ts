// Cards on the payer page: in Test no card details are collected (the Test buttons decide); in Live the
// payer enters them on the card network's page and this page waits for the confirmation.
import { formatGhs } from '../../../lib/ghana.ts';
import { html } from '../../html.ts';
import type { RailPayerView } from '../page-model.ts';
import { icon, late, testPanel } from '../page-parts.ts';

export const cardView = {
  panel: (m) => html`
<p>${m.session.card_collection_mode === 'test_simulation' ? 'Test mode: no card details are collected. After you continue, choose the outcome with the Test buttons.' : 'You will enter your card details on the card network’s secure page.'}</p>`,

  waiting(m) {
    const a = m.attempt!;
    return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">${m.test ? 'Test card payment' : 'Confirming your card payment'}</h2>
<p>${m.test ? html`A card payment of <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> has started. No card details are collected in Test mode: choose its outcome with the Test buttons below.` : html`We are waiting for your card network to confirm <strong class="num">${formatGhs(a.amount_charged_minor)}</strong>. This page updates by itself.`}</p>
${late}${testPanel(m)}</div>`;
  },
} satisfies RailPayerView;
