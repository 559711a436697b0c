// What a Paystack transaction says beyond its status: its own id, the card that paid, and why it failed in the
// payer's terms (src/lib/payment-failures.ts). Sources, as in docs/providers/paystack.md: [OAS]
// PaystackOSS/openapi dist/paystack.yaml, [SNIP] PaystackOSS/doc-code-snippets dist/, [GR]
// https://docs-v2.production.paystack.co/docs/payments/gateway-responses/, [CUST]
// https://support.paystack.com/hc/en-us/articles/360013597919 ("Customer errors"), [BANK]
// https://support.paystack.com/en/articles/2123650 ("Bank errors"), [TXERR] https://docs-v2.paystack.com/api/errors/transaction.
import type { FailureReason } from '../../lib/payment-failures.ts';
import { field, text } from '../provider-http.ts';

/** Longest provider transaction id Sika stores (payment_attempts.provider_transaction_id, migration 033). */
export const TRANSACTION_ID_LENGTH_MAX = 100;
/** Longest card brand Sika stores (payment_attempts.card_brand, migration 033). */
export const CARD_BRAND_LENGTH_MAX = 30;

/**
 * Paystack's own id of the transaction: data.id, an integer [OAS VerifyResponse.data.id; SNIP
 * api/transactions/verify/response.json "id": 4099260516], kept as a string. Undefined when absent or not an id.
 */
export function transactionIdOf(data: unknown): string | undefined {
  const id = field(data, 'id');
  const value =
    typeof id === 'number' && Number.isSafeInteger(id) && id > 0
      ? String(id)
      : typeof id === 'string' && /^\d+$/.test(id)
        ? id
        : null;
  return value && value.length <= TRANSACTION_ID_LENGTH_MAX ? value : undefined;
}

/**
 * The card that paid, from data.authorization {last4, card_type, brand, channel} [OAS VerifyResponse.data.authorization].
 * brand ("visa") is preferred; card_type ("visa ", "visa DEBIT" in [SNIP api/transactions/verify/response.json,
 * api/charges/submit-address/response.json]) gives its first word otherwise. Only for a card: a Mobile Money
 * authorization carries the wallet ("Mtn mobile money") and a masked number ("X149") in the same fields
 * [SNIP doc/payments/payment-methods/mobile-event.js].
 */
export function cardOf(data: unknown): { brand: string; last4: string } | undefined {
  const authorization = field(data, 'authorization');
  const channel = text(field(authorization, 'channel')) ?? text(field(data, 'channel'));
  if (channel !== 'card') return undefined;
  const last4 = text(field(authorization, 'last4'))?.trim() ?? '';
  if (!/^\d{4}$/.test(last4)) return undefined;
  const brand = (
    text(field(authorization, 'brand'))?.trim() ||
    text(field(authorization, 'card_type'))?.trim().split(/\s+/)[0] ||
    ''
  ).slice(0, CARD_BRAND_LENGTH_MAX);
  return brand ? { brand, last4 } : undefined;
}

/**
 * Paystack's words for a failure, matched where they say one thing only (first match wins). Paystack publishes
 * no closed list of gateway_response texts; these are the documented ones:
 * - "Insufficient funds" [SNIP api/charges/check/response.json 200_failed; CUST "Insufficient funds"];
 * - "Incorrect PIN" [CUST "Incorrect PIN": "the customer provided an incorrect PIN"];
 * - a session that timed out [TXERR "The transaction was not completed in the time allowed by your session
 *   timeout"; GR lists no success for it];
 * - "Declined" / "Do Not Honor" from the bank or network [BANK; GR 05 do_not_honor].
 * Anything else (a processor error, a blocked customer, an expired card) has no plain reason of ours.
 */
const FAILURE_TEXTS: ReadonlyArray<readonly [RegExp, FailureReason]> = [
  [/\binsufficient funds?\b/i, 'insufficient_funds'],
  [/\bincorrect pin\b/i, 'wrong_pin'],
  [/\btimed? ?out\b/i, 'timed_out'],
  [/\bdeclined\b|\bdo not hono(u)?r\b/i, 'declined'],
];

/**
 * gateway_response_code, the classification Paystack returns with the transaction object [GR "Transaction
 * model"]: the codes of its table whose meaning is plain. Other codes (processing_error, invalid_merchant,
 * unknown ...) give no reason.
 */
const FAILURE_CODES: Readonly<Record<string, FailureReason>> = {
  // 05 do_not_honor, 04 pickup_card, 07 pickup_card_special [GR]: the issuer refused the card.
  do_not_honor: 'declined',
  pickup_card: 'declined',
  pickup_card_special: 'declined',
  // 17 customer_cancellation [GR]: the payer cancelled it.
  customer_cancellation: 'declined_by_payer',
};

/**
 * Why a failed transaction failed: gateway_response_code [GR], then the texts of gateway_response and message
 * (verify's data.gateway_response [OAS VerifyResponse], a charge's data.message [SNIP api/charges/check/response.json]).
 */
export function failureReasonOf(data: unknown): FailureReason | undefined {
  const code = text(field(data, 'gateway_response_code'))?.trim().toLowerCase();
  if (code && Object.hasOwn(FAILURE_CODES, code)) return FAILURE_CODES[code];
  for (const said of [text(field(data, 'gateway_response')), text(field(data, 'message'))]) {
    if (!said) continue;
    for (const [pattern, reason] of FAILURE_TEXTS) if (pattern.test(said)) return reason;
  }
  return undefined;
}
