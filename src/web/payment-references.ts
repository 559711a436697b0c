// What a payment is known by, as both consoles show it (issue 31): the provider's own transaction id (what the
// payer's receipt and the provider's support quote), our reference with the provider, and the card that paid.
import { cardLabel } from '../lib/card-label.ts';
import { html, type Html } from './html.ts';

export interface PaymentReferenceFields {
  provider: string | null;
  provider_reference: string | null;
  provider_transaction_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
}

/** The providers whose own transaction ids are shown, by name; any other by its id. */
const PROVIDER_NAMES: Record<string, string> = { paystack: 'Paystack', mtn_momo: 'MTN MoMo', sika_test: 'Test' };
export const providerName = (provider: string | null): string =>
  provider ? (PROVIDER_NAMES[provider] ?? provider) : 'Provider';

/** The references of one attempt, one per line (none known: a dash). */
export function paymentReferencesCell(a: PaymentReferenceFields): Html {
  const card = cardLabel(a.card_brand, a.card_last4);
  const lines: Html[] = [];
  if (a.provider_transaction_id)
    lines.push(
      html`<span class="muted">${providerName(a.provider)} transaction</span> <span class="mono">${a.provider_transaction_id}</span>`,
    );
  if (a.provider_reference)
    lines.push(html`<span class="muted">Our reference</span> <span class="mono">${a.provider_reference}</span>`);
  if (card) lines.push(html`${card}`);
  if (lines.length === 0) return html`<span class="muted">–</span>`;
  return html`${lines.map((line, i) => (i === 0 ? line : html`<br>${line}`))}`;
}
