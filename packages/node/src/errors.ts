/** The error envelope every Sika API error uses: `{ error: { code, message, ... } }`. */
export interface ErrorEnvelope {
  error: { code: string; message: string; retry_after_seconds?: number; [key: string]: unknown };
}

/**
 * A failed API call: the HTTP status (0 when no answer arrived), Sika's error code (`VALIDATION_FAILED`,
 * `NOT_FOUND`, ... or `CONNECTION_ERROR` / `TIMEOUT` when no answer arrived), its message and the
 * request id (the `x-request-id` header, to quote to support).
 */
export class SikaError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  /** The error object of the envelope as sent (extra fields included), or null when there was none. */
  readonly raw: ErrorEnvelope['error'] | null;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    requestId?: string | null;
    raw?: ErrorEnvelope['error'] | null;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'SikaError';
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId ?? null;
    this.raw = init.raw ?? null;
  }

  /** From an error response and its parsed body (the envelope, or anything else a proxy may answer). */
  static fromResponse(response: Response, body: unknown): SikaError {
    const requestId = response.headers.get('x-request-id');
    const envelope = isEnvelope(body) ? body.error : null;
    return new SikaError({
      status: response.status,
      code: envelope?.code ?? `HTTP_${response.status}`,
      message:
        envelope?.message ??
        (typeof body === 'string' && body !== ''
          ? body.slice(0, 500)
          : `HTTP ${response.status} ${response.statusText}`.trim()),
      requestId,
      raw: envelope,
    });
  }
}

function isEnvelope(body: unknown): body is ErrorEnvelope {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const error = (body as { error: unknown }).error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}
