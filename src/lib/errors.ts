// The error catalogue: every code Sika answers with, what it means, and whether sending the same
// request again later can succeed without the caller changing anything. Domain code throws a
// SikaError with one of these codes; the HTTP status of each code is decided in one place,
// src/http/errors.ts, and the envelope and page renderers live beside the routes.

interface CatalogueEntry {
  meaning: string;
  /** True when the same request, sent again later unchanged, can succeed. */
  retryable: boolean;
}

/** An error the same request meets again: the caller must change something first. */
const permanent = (meaning: string) => ({ meaning, retryable: false }) as const;
/** An error the same request, sent again later unchanged, can get past (TigerBeetle's transient()). */
const transient = (meaning: string) => ({ meaning, retryable: true }) as const;

export const ERROR_CATALOGUE = {
  // Requests
  INVALID_ARGUMENT: permanent('The request is malformed or a field is invalid; `fields` names each problem.'),
  UNAUTHORIZED: permanent('No valid API key (or console session) came with the request.'),
  FORBIDDEN: permanent('The caller is known but may not do this (role, account setting or missing pairing).'),
  NOT_FOUND: permanent('No such object for this merchant and environment, or no such route.'),
  METHOD_NOT_ALLOWED: permanent('The route exists but not for this method.'),
  URI_TOO_LONG: permanent('A path segment is longer than any id the route takes.'),
  PAYLOAD_TOO_LARGE: permanent('The request body or an uploaded file is over its limit.'),
  UNSUPPORTED_MEDIA_TYPE: permanent(
    'The body (or uploaded file) is of a type this route does not take, in a charset other than UTF-8, or compressed (a Content-Encoding other than identity).',
  ),
  RATE_LIMITED: transient('Too many requests; wait retry_after_seconds.'),
  IDEMPOTENCY_KEY_REUSED: permanent('The Idempotency-Key was used before with a different request body.'),
  IDEMPOTENCY_KEY_IN_FLIGHT: transient('A request with this Idempotency-Key is still running.'),
  SERVICE_UNAVAILABLE: transient(
    'Storage is momentarily unavailable (a restart, a database failover); retry with the same Idempotency-Key or client_reference: the request takes effect at most once.',
  ),
  INTERNAL: transient('An unexpected failure on our side; it is logged.'),

  // Checkout
  SESSION_NOT_PAYABLE: permanent('The session is not open for a new payment (paid, expired, cancelled or failed).'),
  PAYMENT_AMOUNT_MISMATCH: permanent(
    'The amount sent differs from the current total for that method; get a fresh quote.',
  ),
  PAYMENT_ATTEMPT_PENDING: transient('Another payment for this session is still in progress.'),
  RAIL_NOT_OFFERED: permanent(
    'The checkout does not offer this payment method (see allowed_rails); choose one it offers.',
  ),
  PROVIDER_RAIL_UNAVAILABLE: transient(
    'No provider can take this payment method (or payout) right now; choose another method or retry later.',
  ),
  PROVIDER_PAYMENT_REJECTED: permanent('The provider refused what the payer entered (e.g. a wrong verification code).'),
  ATTEMPT_FINAL: permanent('The payment attempt already has its outcome.'),
  ATTEMPT_NOT_HELD: permanent('Only attempts held for review can be resolved by an operator.'),
  APPROVAL_NOT_PENDING: permanent('The operator approval request is already decided (approved or rejected).'),
  APPROVAL_PENDING: permanent(
    'A request for this object already waits for a second operator; approve or reject it first.',
  ),
  APPROVAL_STALE: permanent(
    'The object of the approval request changed after it was requested; the request was withdrawn and must be filed again.',
  ),
  VERIFICATION_NOT_REQUIRED: permanent('This payment needs no verification code.'),
  RESEND_LIMIT_REACHED: permanent('The payment prompt was re-sent as often as allowed.'),
  ATTEMPTS_LIMIT_REACHED: permanent(
    'This checkout has had as many payment attempts as one checkout may have; ask the merchant for a new payment link.',
  ),
  RESEND_NOT_AVAILABLE: permanent(
    "This payment's provider cannot send its prompt again; approve the pending prompt, or cancel the attempt and use another number or method.",
  ),
  REVERSAL_NOT_COVERED: permanent(
    'The balance no longer covers a reversed payment; an operator must recover the funds first.',
  ),
  SLIP_NOT_RECORDABLE: permanent(
    'The cash slip cannot be recorded at a teller desk: it is not active (used, cancelled or expired) or it is a Test slip.',
  ),
  STATEMENT_ALREADY_IMPORTED: permanent(
    'This statement file (the same content, by sha256) was imported before; it is imported again only when forced with a reason.',
  ),
  IMPORT_NOT_VOIDABLE: permanent(
    'The statement import cannot be voided: it is voided already, or some of its lines are matched, held or resolved.',
  ),

  // Payouts
  RECIPIENT_UNAVAILABLE: permanent('The recipient is not active or was rejected at verification.'),
  RECIPIENT_HAS_OPEN_PAYOUTS: transient('The recipient still has payouts in progress.'),
  RECIPIENT_NOT_VERIFIED: permanent(
    'The recipient is not verified yet (or failed verification): a settlement account must be a verified recipient.',
  ),
  FEE_LIMIT_EXCEEDED: permanent('The payout fee is above the max_fee_minor sent.'),
  REFERENCE_CONFLICT: permanent('The client_reference was used with a different request or another API key.'),
  INSUFFICIENT_FUNDS: permanent(
    'The available balance does not cover the amount plus the fee (of a payout) or the refund.',
  ),
  PAYOUT_LIMIT: permanent("The amount is above the account's per-payout limit."),
  PAYOUT_DAILY_LIMIT: transient("The account's daily payout limit is reached."),
  PAYOUTS_PAUSED: transient('Payouts are paused for this account.'),
  PAYOUT_NOT_REQUESTED: permanent('Only a requested payout can be approved or rejected.'),
  PAYOUT_NOT_CANCELLABLE: permanent('The payout has gone past the point where it can be cancelled.'),
  PAYOUT_NOT_RETURNABLE: permanent('Only a paid payout can be recorded as returned.'),
  PAYOUT_NOT_HOLDABLE: permanent(
    'Only a Live payout not yet sent to the provider (requested, or processing before the transfer) and not held already can be held.',
  ),
  PAYOUT_NOT_HELD: permanent('The payout is not held (or no longer open), so there is no hold to release.'),
  PAYOUT_TRANSITION_NOT_ALLOWED: permanent(
    "The payout's status cannot move to the one asked for (the Test simulator follows the payout status table).",
  ),
  PAYOUT_NOT_RECONCILABLE: permanent('The payout is not in a state its reconciliation can change.'),
  PAYOUT_ALREADY_RECONCILED: permanent("The payout's reconciliation is already settled."),
  RECEIPT_NOT_AVAILABLE: transient('A receipt exists only once the payout is paid.'),

  // Refunds
  SESSION_NOT_REFUNDABLE: permanent('Only a paid (success) session whose payment stands can be refunded.'),
  REFUND_EXCEEDS_PAYMENT: permanent(
    'The refund, with the refunds before it, would give back more than the payer was charged.',
  ),
  REFUND_NOT_PENDING: permanent('The refund already has its outcome (or is not at the step this action needs).'),

  // Accounts and consoles
  EMAIL_TAKEN: permanent('An account with this email already exists.'),
  CODE_TAKEN: permanent('A bank or branch with this code already exists.'),
  ALREADY_ENROLLED: permanent('Two-factor authentication is already on for this account.'),
  SECOND_FACTOR_REQUIRED: permanent('The account owner requires two-factor authentication for this role.'),
  SECOND_FACTOR_NOT_ENROLLED: permanent('Turn on two-factor authentication for yourself first.'),
  ACCOUNT_NOT_ACTIVATED: permanent(
    'The account is not activated for Live yet: submit the Go-Live application in the dashboard and wait for approval. Test works meanwhile.',
  ),
  ACCOUNT_SUSPENDED: permanent('The account is suspended: Live payments and payouts are refused. Test keeps working.'),
  ACTIVATION_DECIDED: permanent(
    'The Go-Live application is no longer at the step this decision needs (someone decided first, or it moved on).',
  ),
  SETTLEMENT_CLOCK_BACKWARDS: permanent(
    "A Test settlement rehearsal's as_of is before the latest time this merchant's settlements ran at: the clock never moves backwards.",
  ),
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Codes for one refused line inside a partly accepted batch (a 207 answer's `errors`), never a whole answer. */
export const LINE_ERROR_CATALOGUE = {
  INVALID_ARGUMENT: ERROR_CATALOGUE.INVALID_ARGUMENT,
  INVOICE_LINE_AMOUNT_INVALID: permanent("The line's amount_minor is not a whole number of pesewas in range."),
  INVOICE_LINE_REMITTED: permanent('The invoice line is already paid and cannot change.'),
} as const satisfies Record<string, CatalogueEntry>;

export type LineErrorCode = keyof typeof LINE_ERROR_CATALOGUE;

export interface FieldError {
  field: string;
  message: string;
}

export interface ErrorDetails {
  /** Seconds after which a retry makes sense (sent as retry_after_seconds and Retry-After). */
  retryAfterSeconds?: number;
  fields?: FieldError[];
  /** The 403/404 `detail` field (SPEC 7). */
  detail?: string;
}

export class SikaError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'SikaError';
  }
}

/** The everyday errors, with their standard wording. */
export const errors = {
  invalidArgument: (message: string, fields?: FieldError[]) =>
    new SikaError('INVALID_ARGUMENT', message, fields ? { fields } : {}),
  unauthorized: (message = 'A valid API key is required: send Authorization: Bearer <API_KEY>.') =>
    new SikaError('UNAUTHORIZED', message),
  forbidden: (message: string) => new SikaError('FORBIDDEN', message, { detail: message }),
  notFound: (what: string) => new SikaError('NOT_FOUND', `${what} not found.`, { detail: `${what} not found.` }),
  routeNotFound: (method: string, url: string) =>
    new SikaError('NOT_FOUND', `No route ${method} ${url}.`, { detail: `No route ${method} ${url}.` }),
  methodNotAllowed: (method: string, allowed: readonly string[]) =>
    new SikaError(
      'METHOD_NOT_ALLOWED',
      `Method ${method} is not allowed on this path; it takes ${allowed.join(', ')}.`,
    ),
  idempotencyKeyReused: () =>
    new SikaError(
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was used with a different request body; use a new key for a changed request.',
    ),
  idempotencyKeyInFlight: () =>
    new SikaError(
      'IDEMPOTENCY_KEY_IN_FLIGHT',
      'A request with this Idempotency-Key is still being processed; retry shortly.',
      { retryAfterSeconds: 1 },
    ),
  payloadTooLarge: (limitBytes?: number) =>
    new SikaError(
      'PAYLOAD_TOO_LARGE',
      limitBytes === undefined ? 'The request body is too large.' : `The request body exceeds ${limitBytes} bytes.`,
    ),
  unsupportedMediaType: (type: string) =>
    new SikaError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Type ${type} is not supported; send application/json, application/x-www-form-urlencoded or multipart/form-data.`,
    ),
  unsupportedCharset: (charset: string) =>
    new SikaError(
      'UNSUPPORTED_MEDIA_TYPE',
      `The body's charset ${charset} is not supported; send the body in UTF-8 (charset=utf-8, or no charset).`,
    ),
  unsupportedContentEncoding: (encoding: string) =>
    new SikaError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Encoding ${encoding} is not supported; send the body uncompressed (no Content-Encoding, or identity).`,
    ),
  rateLimited: (retryAfterSeconds: number) =>
    new SikaError('RATE_LIMITED', `Too many requests; retry after ${retryAfterSeconds} s.`, { retryAfterSeconds }),
  sessionNotPayable: (status: string) =>
    new SikaError('SESSION_NOT_PAYABLE', `The session is ${status} and cannot take a new payment.`),
  unavailable: (message = 'The service is temporarily unavailable; retry shortly.') =>
    new SikaError('SERVICE_UNAVAILABLE', message, { retryAfterSeconds: 1 }),
  internal: () => new SikaError('INTERNAL', 'Something went wrong on our side; it has been logged. Retry later.'),
  /** A refusal because of the object's or the account's current state (the catalogue's conflict codes). */
  conflict: (code: ErrorCode, message: string) => new SikaError(code, message),
};
