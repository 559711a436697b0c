// The error catalogue: every code Sika answers with, what it means, and whether sending the same
// request again later can succeed without the caller changing anything. Domain code throws a
// SikaError with one of these codes; the HTTP status of each code is decided in one place,
// src/http/errors.ts, and the envelope and page renderers live beside the routes.

interface CatalogueEntry {
  meaning: string;
  /** True when the same request, sent again later unchanged, can succeed. */
  retryable: boolean;
}

export const ERROR_CATALOGUE = {
  // Requests
  INVALID_ARGUMENT: {
    meaning: 'The request is malformed or a field is invalid; `fields` names each problem.',
    retryable: false,
  },
  UNAUTHORIZED: { meaning: 'No valid API key (or console session) came with the request.', retryable: false },
  FORBIDDEN: {
    meaning: 'The caller is known but may not do this (role, account setting or missing pairing).',
    retryable: false,
  },
  NOT_FOUND: { meaning: 'No such object for this merchant and environment, or no such route.', retryable: false },
  METHOD_NOT_ALLOWED: { meaning: 'The route exists but not for this method.', retryable: false },
  URI_TOO_LONG: { meaning: 'A path segment is longer than any id the route takes.', retryable: false },
  PAYLOAD_TOO_LARGE: { meaning: 'The request body or an uploaded file is over its limit.', retryable: false },
  UNSUPPORTED_MEDIA_TYPE: {
    meaning:
      'The body (or uploaded file) is of a type this route does not take, in a charset other than UTF-8, or compressed (a Content-Encoding other than identity).',
    retryable: false,
  },
  RATE_LIMITED: { meaning: 'Too many requests; wait retry_after_seconds.', retryable: true },
  IDEMPOTENCY_KEY_REUSED: {
    meaning: 'The Idempotency-Key was used before with a different request body.',
    retryable: false,
  },
  IDEMPOTENCY_KEY_IN_FLIGHT: { meaning: 'A request with this Idempotency-Key is still running.', retryable: true },
  SERVICE_UNAVAILABLE: {
    meaning:
      'Storage is momentarily unavailable (a restart, a database failover); retry with the same Idempotency-Key or client_reference: the request takes effect at most once.',
    retryable: true,
  },
  INTERNAL: { meaning: 'An unexpected failure on our side; it is logged.', retryable: true },

  // Checkout
  SESSION_NOT_PAYABLE: {
    meaning: 'The session is not open for a new payment (paid, expired, cancelled or failed).',
    retryable: false,
  },
  PAYMENT_AMOUNT_MISMATCH: {
    meaning: 'The amount sent differs from the current total for that method; get a fresh quote.',
    retryable: false,
  },
  PAYMENT_ATTEMPT_PENDING: { meaning: 'Another payment for this session is still in progress.', retryable: true },
  RAIL_NOT_OFFERED: {
    meaning: 'The checkout does not offer this payment method (see allowed_rails); choose one it offers.',
    retryable: false,
  },
  PROVIDER_RAIL_UNAVAILABLE: {
    meaning: 'No provider can take this payment method (or payout) right now; choose another method or retry later.',
    retryable: true,
  },
  PROVIDER_PAYMENT_REJECTED: {
    meaning: 'The provider refused what the payer entered (e.g. a wrong verification code).',
    retryable: false,
  },
  ATTEMPT_FINAL: { meaning: 'The payment attempt already has its outcome.', retryable: false },
  ATTEMPT_NOT_HELD: { meaning: 'Only attempts held for review can be resolved by an operator.', retryable: false },
  APPROVAL_NOT_PENDING: {
    meaning: 'The operator approval request is already decided (approved or rejected).',
    retryable: false,
  },
  APPROVAL_PENDING: {
    meaning: 'A request for this object already waits for a second operator; approve or reject it first.',
    retryable: false,
  },
  APPROVAL_STALE: {
    meaning:
      'The object of the approval request changed after it was requested; the request was withdrawn and must be filed again.',
    retryable: false,
  },
  VERIFICATION_NOT_REQUIRED: { meaning: 'This payment needs no verification code.', retryable: false },
  RESEND_LIMIT_REACHED: { meaning: 'The payment prompt was re-sent as often as allowed.', retryable: false },
  ATTEMPTS_LIMIT_REACHED: {
    meaning:
      'This checkout has had as many payment attempts as one checkout may have; ask the merchant for a new payment link.',
    retryable: false,
  },
  RESEND_NOT_AVAILABLE: {
    meaning:
      "This payment's provider cannot send its prompt again; approve the pending prompt, or cancel the attempt and use another number or method.",
    retryable: false,
  },
  REVERSAL_NOT_COVERED: {
    meaning: 'The balance no longer covers a reversed payment; an operator must recover the funds first.',
    retryable: false,
  },
  SLIP_NOT_RECORDABLE: {
    meaning:
      'The cash slip cannot be recorded at a teller desk: it is not active (used, cancelled or expired) or it is a Test slip.',
    retryable: false,
  },
  STATEMENT_ALREADY_IMPORTED: {
    meaning:
      'This statement file (the same content, by sha256) was imported before; it is imported again only when forced with a reason.',
    retryable: false,
  },
  IMPORT_NOT_VOIDABLE: {
    meaning:
      'The statement import cannot be voided: it is voided already, or some of its lines are matched, held or resolved.',
    retryable: false,
  },

  // Payouts
  RECIPIENT_UNAVAILABLE: { meaning: 'The recipient is not active or was rejected at verification.', retryable: false },
  RECIPIENT_HAS_OPEN_PAYOUTS: { meaning: 'The recipient still has payouts in progress.', retryable: true },
  FEE_LIMIT_EXCEEDED: { meaning: 'The payout fee is above the max_fee_minor sent.', retryable: false },
  REFERENCE_CONFLICT: {
    meaning: 'The client_reference was used with a different request or another API key.',
    retryable: false,
  },
  INSUFFICIENT_FUNDS: {
    meaning: 'The available balance does not cover the amount plus the fee (of a payout) or the refund.',
    retryable: false,
  },
  PAYOUT_LIMIT: { meaning: "The amount is above the account's per-payout limit.", retryable: false },
  PAYOUT_DAILY_LIMIT: { meaning: "The account's daily payout limit is reached.", retryable: true },
  PAYOUTS_PAUSED: { meaning: 'Payouts are paused for this account.', retryable: true },
  PAYOUT_NOT_REQUESTED: { meaning: 'Only a requested payout can be approved or rejected.', retryable: false },
  PAYOUT_NOT_CANCELLABLE: {
    meaning: 'The payout has gone past the point where it can be cancelled.',
    retryable: false,
  },
  PAYOUT_NOT_RETURNABLE: { meaning: 'Only a paid payout can be recorded as returned.', retryable: false },
  PAYOUT_NOT_HOLDABLE: {
    meaning:
      'Only a Live payout not yet sent to the provider (requested, or processing before the transfer) and not held already can be held.',
    retryable: false,
  },
  PAYOUT_NOT_HELD: {
    meaning: 'The payout is not held (or no longer open), so there is no hold to release.',
    retryable: false,
  },
  PAYOUT_TRANSITION_NOT_ALLOWED: {
    meaning:
      "The payout's status cannot move to the one asked for (the Test simulator follows the payout status table).",
    retryable: false,
  },
  PAYOUT_NOT_RECONCILABLE: { meaning: 'The payout is not in a state its reconciliation can change.', retryable: false },
  PAYOUT_ALREADY_RECONCILED: { meaning: "The payout's reconciliation is already settled.", retryable: false },
  RECEIPT_NOT_AVAILABLE: { meaning: 'A receipt exists only once the payout is paid.', retryable: true },

  // Refunds
  SESSION_NOT_REFUNDABLE: {
    meaning: 'Only a paid (success) session whose payment stands can be refunded.',
    retryable: false,
  },
  REFUND_EXCEEDS_PAYMENT: {
    meaning: 'The refund, with the refunds before it, would give back more than the payer was charged.',
    retryable: false,
  },
  REFUND_NOT_PENDING: {
    meaning: 'The refund already has its outcome (or is not at the step this action needs).',
    retryable: false,
  },

  // Accounts and consoles
  EMAIL_TAKEN: { meaning: 'An account with this email already exists.', retryable: false },
  CODE_TAKEN: { meaning: 'A bank or branch with this code already exists.', retryable: false },
  ALREADY_ENROLLED: { meaning: 'Two-factor authentication is already on for this account.', retryable: false },
  SECOND_FACTOR_REQUIRED: {
    meaning: 'The account owner requires two-factor authentication for this role.',
    retryable: false,
  },
  SECOND_FACTOR_NOT_ENROLLED: { meaning: 'Turn on two-factor authentication for yourself first.', retryable: false },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Codes for one refused line inside a partly accepted batch (a 207 answer's `errors`), never a whole answer. */
export const LINE_ERROR_CATALOGUE = {
  INVALID_ARGUMENT: ERROR_CATALOGUE.INVALID_ARGUMENT,
  INVOICE_LINE_AMOUNT_INVALID: {
    meaning: "The line's amount_minor is not a whole number of pesewas in range.",
    retryable: false,
  },
  INVOICE_LINE_REMITTED: { meaning: 'The invoice line is already paid and cannot change.', retryable: false },
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
