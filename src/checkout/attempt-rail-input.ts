// An attempt as its rail adapter sees it: what every provider call about an attempt sends (start, status,
// code, resend, cancel). Imports only the model and the rails, so every attempt module can use it.
import type { AttemptForRail } from '../rails/index.ts';
import type { AttemptRow } from './model.ts';

/** An attempt as its rail adapter sees it; the return URL and email matter only when it is first sent. */
export const railInput = (
  attempt: AttemptRow,
  extras: { checkoutUrlHost?: string; payerEmail?: string | null } = {},
): AttemptForRail => ({
  reference: attempt.id,
  sessionId: attempt.session_id,
  environment: attempt.environment,
  rail: attempt.rail,
  amountMinor: attempt.amount_charged_minor,
  currency: attempt.currency,
  network: attempt.network,
  phone: attempt.phone,
  providerReference: attempt.provider_reference || null,
  payerEmail: extras.payerEmail ?? null,
  returnUrl: extras.checkoutUrlHost
    ? `${extras.checkoutUrlHost}/pay/${encodeURIComponent(attempt.session_id)}?attempt=${encodeURIComponent(attempt.id)}`
    : '',
});
