// A rail that needs nothing of its own on the payer page: the payer approves the payment elsewhere (the
// rail's app or provider) and the page waits for the confirmation.
import { formatGhs } from '../../../lib/ghana.ts';
import { html } from '../../html.ts';
import type { RailPayerView } from '../page-model.ts';
import { changeCourse, icon, late, railLabel, testPanel } from '../page-parts.ts';

export const confirmationView = {
  panel: (_m, rail, quote) => html`
<p>After you continue, approve the payment of ${formatGhs(quote.total_minor)} with ${rail.labels.payer}. This page shows it as soon as it is confirmed.</p>`,

  waiting(m) {
    const a = m.attempt!;
    const label = railLabel(a.rail);
    return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">Confirming your ${label} payment</h2>
<p>We are waiting for ${label} to confirm <strong class="num">${formatGhs(a.amount_charged_minor)}</strong>. This page updates by itself.</p>
${changeCourse(m)}
${late}${testPanel(m)}</div>`;
  },
} satisfies RailPayerView;
