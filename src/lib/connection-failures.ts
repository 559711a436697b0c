// What a failed HTTP call's error says about whether the request reached the other side: the one rule the
// provider adapters (src/rails/provider-http.ts) and the SMS providers (src/sms/providers.ts) share. A request
// that certainly never left (connection refused, name not found) is safe to send again or elsewhere; any other
// failure may have been acted on.

/** Connection failures that prove the request never reached the server. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The error code of a failed fetch, looked for down its chain of causes (undici wraps the socket's error). */
export function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The code of a failure that proves the request never reached the server, else undefined. */
export function neverSentCode(error: unknown): string | undefined {
  const code = causeCode(error);
  return code && NOT_SENT_CODES.has(code) ? code : undefined;
}
