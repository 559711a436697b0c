// Why MTN says a request to pay failed, in the payer's terms (src/lib/payment-failures.ts). Sources:
// [192] https://momodevelopercommunity.mtn.com/product-updates/reason-for-some-failed-api-responses-updated-192
// (MTN's table "situation -> reason"), [TEcUW] https://momodeveloper.mtn.com/content/html_widgets/TEcUW.html
// (descriptions and actions), [o46rh] https://momodeveloper.mtn.com/content/html_widgets/o46rh.html (the full
// catalogue of codes), [DOC18] sparkplug/mtn-momo-api-documentation docs/testing/README.md (the sandbox's
// "Rejected" and "Timeout" numbers). docs/providers/mtn-momo.md §3.3 keeps the list.
import type { FailureReason } from '../../lib/payment-failures.ts';

/**
 * The reasons whose meaning the documentation states. Every other code of the catalogue [o46rh] gives no
 * reason: INTERNAL_PROCESSING_ERROR is MTN's generic code ("no specific error mapping", [TEcUW]); NOT_ALLOWED,
 * PAYEE_NOT_FOUND and PAYEE_NOT_ALLOWED_TO_RECEIVE are about Sika's own account (the partner, the payee);
 * TRANSACTION_CANCELED, PAYMENT_NOT_APPROVED and TRANSACTION_NOT_COMPLETED are listed without saying who or why.
 */
export const MTN_FAILURE_REASONS: Readonly<Record<string, FailureReason>> = {
  // "Insufficient funds: NOT_ENOUGH_FUNDS" [192].
  NOT_ENOUGH_FUNDS: 'insufficient_funds',
  // "Payer limit reached: PAYER_LIMIT_REACHED" [192].
  PAYER_LIMIT_REACHED: 'limit_reached',
  // In the catalogue [o46rh]; the sandbox's "Rejected" number [DOC18]: the payer said no on the phone.
  APPROVAL_REJECTED: 'declined_by_payer',
  // In the catalogue [o46rh]: the request outlived its approval window.
  EXPIRED: 'timed_out',
  // "PIN not entered in time" [192]; "a delay to approve a transaction within the given time frame (5 minutes)" [TEcUW].
  COULD_NOT_PERFORM_TRANSACTION: 'timed_out',
  // "Invalid payer" [192]; "MSISDN is not registered for Mobile Money Service" [TEcUW].
  PAYER_NOT_FOUND: 'number_not_registered',
  // "Blocked payer: SENDER_ACCOUNT_NOT_ACTIVE" [192]: the wallet cannot pay, whatever the amount.
  SENDER_ACCOUNT_NOT_ACTIVE: 'declined',
};

/** The payer's reason for an MTN failure code (cleaned, upper case), or undefined when MTN's code does not say. */
export function mtnFailureReason(code: string | null): FailureReason | undefined {
  return code && Object.hasOwn(MTN_FAILURE_REASONS, code) ? MTN_FAILURE_REASONS[code] : undefined;
}
