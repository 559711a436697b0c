// Cards on the payer page: in Test no card details are collected (the Test buttons decide); in Live the
// payer enters them on the provider's hosted page (instructions {mode: 'card_network_hosted_session',
// redirect_url}), comes back to /pay/{id}?attempt={id}, and this page confirms the result with the server.
import { formatGhs } from '../../../lib/ghana.ts';
import { html } from '../../html.ts';
import type { RailPayerView } from '../page-model.ts';
import { changeCourse, icon, late, testPanel } from '../page-parts.ts';

export const CARD_REDIRECT_ACTION = 'Continue to secure card payment';

/** The provider's page to send the payer to, when the instructions name one over http(s) (never javascript: or data:). */
export function cardRedirectUrl(instructions: Record<string, unknown> | null): string | null {
  const url = instructions?.mode === 'card_network_hosted_session' ? instructions.redirect_url : undefined;
  if (typeof url !== 'string') return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : null;
  } catch {
    return null;
  }
}

/** A provider's card type as payers read it: "visa ", "VISA" and "visa" all "Visa"; a mixed-case name ("MasterCard") as written. */
export const cardBrand = (brand: string) => {
  const trimmed = brand.trim();
  return (
    trimmed.charAt(0).toUpperCase() +
    (trimmed === trimmed.toUpperCase() ? trimmed.slice(1).toLowerCase() : trimmed.slice(1))
  );
};

const hosted = (m: { session: { card_collection_mode: string } }) =>
  m.session.card_collection_mode === 'card_network_hosted_session';

export const cardView = {
  panel: (m) => html`
<p>${m.session.card_collection_mode === 'test_simulation' ? 'Test mode: no card details are collected. After you continue, choose the outcome with the Test buttons.' : 'You will enter your card details on the card provider’s secure page, then come back here.'}</p>`,

  action: (m) => (hosted(m) ? CARD_REDIRECT_ACTION : undefined),

  waiting(m) {
    const a = m.attempt!;
    const redirect = cardRedirectUrl(m.instructions);
    if (redirect) {
      // The script goes there by itself once the attempt is made; this is the step for a payer who comes
      // back to the page (or whose browser did not follow).
      return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">${CARD_REDIRECT_ACTION}</h2>
<p>Pay <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> on the card provider’s secure page. You will come back here when you finish, and we confirm the payment.</p>
<div class="actions"><a class="button block" href="${redirect}" data-card-redirect>${CARD_REDIRECT_ACTION}</a></div>
<p class="hint">Already paid on the card page? This page updates by itself.</p>
${changeCourse(m)}
${late}${testPanel(m)}</div>`;
    }
    return html`<div class="card screen">${icon('wait')}
<h2 tabindex="-1">${m.test ? 'Test card payment' : 'Confirming your card payment'}</h2>
<p>${m.test ? html`A card payment of <strong class="num">${formatGhs(a.amount_charged_minor)}</strong> has started. No card details are collected in Test mode: choose its outcome with the Test buttons below.` : html`We are waiting for your card provider to confirm <strong class="num">${formatGhs(a.amount_charged_minor)}</strong>. This page updates by itself.`}</p>
${changeCourse(m)}
${late}${testPanel(m)}</div>`;
  },

  // "Visa •••• 4081": the card's brand and last four digits, as the provider reported them.
  paidWith: (_a, _i, facts) => (facts?.card ? `${cardBrand(facts.card.brand)} •••• ${facts.card.last4}` : 'Card'),
} satisfies RailPayerView;
