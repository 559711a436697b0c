// One map of error factories: each with its code, HTTP status and whether a retry can succeed.
// The error handler (error-handler.ts) is the only place that turns these into responses.

export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly extra: {
      retryable?: boolean;
      retryAfterSeconds?: number;
      fields?: FieldError[];
      detail?: string;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
  }
}

export const errors = {
  invalidArgument: (message: string, fields?: FieldError[]) => new AppError(400, 'INVALID_ARGUMENT', message, { fields }),
  unauthorized: (message = 'A valid API key is required: send Authorization: Bearer <API_KEY>.') => new AppError(401, 'UNAUTHORIZED', message),
  forbidden: (message: string) => new AppError(403, 'FORBIDDEN', message, { detail: message }),
  notFound: (what: string) => new AppError(404, 'NOT_FOUND', `${what} not found.`, { detail: `${what} not found.` }),
  routeNotFound: (method: string, url: string) =>
    new AppError(404, 'NOT_FOUND', `No route ${method} ${url}.`, { detail: `No route ${method} ${url}.` }),
  methodNotAllowed: (method: string) => new AppError(405, 'METHOD_NOT_ALLOWED', `Method ${method} is not allowed here.`),
  idempotencyKeyReused: () =>
    new AppError(422, 'IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body; use a new key for a changed request.'),
  idempotencyKeyInFlight: () =>
    new AppError(409, 'IDEMPOTENCY_KEY_IN_FLIGHT', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
      retryable: true,
      retryAfterSeconds: 1,
    }),
  payloadTooLarge: (limitBytes: number) => new AppError(413, 'PAYLOAD_TOO_LARGE', `The request body exceeds ${limitBytes} bytes.`),
  unsupportedMediaType: (type: string) =>
    new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type ${type} is not supported; send application/json, application/x-www-form-urlencoded or multipart/form-data.`),
  rateLimited: (retryAfterSeconds: number) =>
    new AppError(429, 'RATE_LIMITED', `Too many requests; retry after ${retryAfterSeconds} s.`, {
      retryable: true,
      retryAfterSeconds,
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
  sessionNotPayable: (status: string) =>
    new AppError(409, 'SESSION_NOT_PAYABLE', `The session is ${status} and cannot take a new payment.`),
  unavailable: (message = 'The service is temporarily unavailable; retry shortly.') =>
    new AppError(503, 'SERVICE_UNAVAILABLE', message, { retryable: true, retryAfterSeconds: 1, headers: { 'retry-after': '1' } }),
  internal: () => new AppError(500, 'INTERNAL', 'Something went wrong on our side; it has been logged. Retry later.', { retryable: true }),
};
