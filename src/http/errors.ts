// The HTTP status of every error code: decided here and nowhere else. The codes, what they mean
// and whether a retry can help are in src/lib/errors.ts; the JSON envelope is written by
// error-handler.ts and console and payer pages by src/web/error-pages.ts.
import type { ErrorCode, SikaError } from '../lib/errors.ts';

export const HTTP_STATUS_OF: Record<ErrorCode, number> = {
  INVALID_ARGUMENT: 400,
  PROVIDER_PAYMENT_REJECTED: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
  PROVIDER_RAIL_UNAVAILABLE: 503,

  // Every other code is a refusal because of the current state of an object or an account.
  IDEMPOTENCY_KEY_IN_FLIGHT: 409,
  SESSION_NOT_PAYABLE: 409,
  PAYMENT_AMOUNT_MISMATCH: 409,
  PAYMENT_ATTEMPT_PENDING: 409,
  RAIL_NOT_OFFERED: 409,
  ATTEMPT_FINAL: 409,
  ATTEMPT_NOT_HELD: 409,
  APPROVAL_NOT_PENDING: 409,
  APPROVAL_PENDING: 409,
  APPROVAL_STALE: 409,
  VERIFICATION_NOT_REQUIRED: 409,
  RESEND_LIMIT_REACHED: 409,
  RESEND_NOT_AVAILABLE: 409,
  ATTEMPTS_LIMIT_REACHED: 409,
  REVERSAL_NOT_COVERED: 409,
  SLIP_NOT_RECORDABLE: 409,
  STATEMENT_ALREADY_IMPORTED: 409,
  IMPORT_NOT_VOIDABLE: 409,
  RECIPIENT_UNAVAILABLE: 409,
  RECIPIENT_HAS_OPEN_PAYOUTS: 409,
  FEE_LIMIT_EXCEEDED: 409,
  REFERENCE_CONFLICT: 409,
  INSUFFICIENT_FUNDS: 409,
  PAYOUT_LIMIT: 409,
  PAYOUT_DAILY_LIMIT: 409,
  PAYOUTS_PAUSED: 409,
  PAYOUT_NOT_REQUESTED: 409,
  SESSION_NOT_REFUNDABLE: 409,
  REFUND_EXCEEDS_PAYMENT: 409,
  REFUND_NOT_PENDING: 409,
  PAYOUT_NOT_CANCELLABLE: 409,
  PAYOUT_NOT_RETURNABLE: 409,
  PAYOUT_NOT_HOLDABLE: 409,
  PAYOUT_NOT_HELD: 409,
  PAYOUT_TRANSITION_NOT_ALLOWED: 409,
  PAYOUT_NOT_RECONCILABLE: 409,
  PAYOUT_ALREADY_RECONCILED: 409,
  RECEIPT_NOT_AVAILABLE: 409,
  EMAIL_TAKEN: 409,
  CODE_TAKEN: 409,
  ALREADY_ENROLLED: 409,
  SECOND_FACTOR_REQUIRED: 409,
  ACCOUNT_NOT_ACTIVATED: 403,
  ACCOUNT_SUSPENDED: 403,
  ACTIVATION_DECIDED: 409,
  SECOND_FACTOR_NOT_ENROLLED: 409,
};

export const statusOf = (error: SikaError): number => HTTP_STATUS_OF[error.code];

/** The headers an error answer carries, whatever its format: Retry-After whenever a retry time is known. */
export function errorHeaders(error: SikaError): Record<string, string> {
  return error.details.retryAfterSeconds === undefined
    ? {}
    : { 'retry-after': String(error.details.retryAfterSeconds) };
}
