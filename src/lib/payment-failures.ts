// Why a payment did not go through, in words a payer understands (issue 31). Providers' codes (MTN's
// FAILED reasons, Paystack's gateway_response) are mapped to one of these by each adapter; the payer page
// and the attempt's status response show the sentence, and the payer's number is kept for a retry.

/** The sentence the payer reads for each reason (no provider jargon, what to do next): the reasons are its keys. */
export const FAILURE_MESSAGES = {
  insufficient_funds:
    'There was not enough money for this payment. Top up and try again, or use another number or method.',
  wrong_pin: 'The PIN entered was wrong. Try again and enter your PIN carefully.',
  timed_out: 'The payment was not approved in time. Try again and approve it as soon as the prompt appears.',
  declined_by_payer: 'The payment was declined on the phone. Try again if that was a mistake.',
  declined: 'The network or bank declined this payment. Try again, or use another number or method.',
  limit_reached: 'This payment is above the wallet or card limit. Use another number or method.',
  number_not_registered:
    'This number has no Mobile Money wallet on the network chosen. Check the number and the network.',
  changed_course: 'You stopped this payment to use another number or method.',
};
export type FailureReason = keyof typeof FAILURE_MESSAGES;
/** Every reason, in the table's order. */
export const FAILURE_REASONS = Object.keys(FAILURE_MESSAGES) as readonly FailureReason[];

/** The sentence when no provider code says why. */
export const FAILURE_MESSAGE_UNKNOWN = 'The payment did not go through. Try again, or use another number or method.';

export const failureMessage = (reason: FailureReason | null): string =>
  reason ? FAILURE_MESSAGES[reason] : FAILURE_MESSAGE_UNKNOWN;
export const isFailureReason = (value: unknown): value is FailureReason =>
  typeof value === 'string' && (FAILURE_REASONS as readonly string[]).includes(value);
