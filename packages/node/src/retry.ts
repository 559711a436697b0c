// The fetch every request goes through: an Idempotency-Key on each POST that has none (one key for all
// of its tries), a timeout per try, and retries: on 429 for any request (refused before anything ran); on
// 503 and on lost answers (network errors, timeouts) for GETs and HEADs, and for the POSTs whose route the
// server promises to deduplicate by the key (KEYED_POSTS: the operations of /openapi.json that declare
// Idempotency-Key). Any other POST (the payer's and the providers' public routes reached through sika.api,
// `…/resend` above all: each call is one more prompt to the payer) is sent once after a lost answer or a
// 503. The README says exactly this; keep both true.
import { randomUUID } from 'node:crypto';
import { SikaError } from './errors.js';
import type { paths } from './generated/schema.js';

type PostPath = { [P in keyof paths]: paths[P] extends { post: object } ? P : never }[keyof paths];

/**
 * The POST routes that honour Idempotency-Key, exactly those of the server's /openapi.json that declare the
 * header (test/sdk/client.test.ts compares them): every POST of the merchant API (an API key), and the
 * payer's attempt cancel (its key scoped to the session). A POST to any other path is not resent.
 */
export const KEYED_POSTS = [
  '/api/v1/sessions',
  '/api/v1/payment-links',
  '/api/v1/payment-links/{id}',
  '/api/v1/invoice-lines',
  '/api/v1/revenue-lines',
  '/api/v1/refunds',
  '/api/v1/payouts',
  '/api/v1/payouts/quote',
  '/api/v1/payouts/recipients',
  '/api/v1/payouts/{payout_id}/cancel',
  '/api/v1/payouts/{payout_id}/evidence',
  '/api/v1/events/{id}/replay',
  '/api/v1/events/replay',
  '/api/v1/test/payment-attempts/{reference}/simulate',
  '/api/v1/test/refunds/{id}/simulate',
  '/api/v1/test/payouts/{payout_id}/simulate',
  '/api/v1/settlements/schedule',
  '/api/v1/test/settlements/run',
  '/api/v1/checkout/sessions/{reference}/provider-attempts/{attempt_reference}/cancel',
] as const satisfies readonly PostPath[];

/** Each template as the end of a URL's path (a base URL may have a path of its own), a segment per `{name}`. */
const KEYED_POST_PATHS = KEYED_POSTS.map(
  (template) => new RegExp(`(?:^|/)${template.slice(1).replace(/\{[^/}]+\}/g, '[^/]+')}$`),
);

/** Whether the server deduplicates a POST to this URL by its Idempotency-Key (so resending it is safe). */
export function honoursIdempotencyKey(url: string): boolean {
  const path = new URL(url).pathname;
  return KEYED_POST_PATHS.some((pattern) => pattern.test(path));
}

/** A Retry-After longer than this is cut to it (and a missing one means exponential backoff). */
export const RETRY_AFTER_MAX_MS = 60_000;
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 8_000;
const RETRY_STATUSES = new Set([429, 503]);

export interface RetryOptions {
  /** Tries after the first one (default 2). */
  maxRetries: number;
  /** Per try; 0 for none. */
  timeoutMs: number;
  fetch: typeof globalThis.fetch;
  /** For tests: how to wait. */
  sleep?: (ms: number, signal?: AbortSignal | null) => Promise<void>;
}

/** Milliseconds to wait from a Retry-After header (seconds or an HTTP date), capped; null when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs = Date.now()): number | null {
  if (header === null || header.trim() === '') return null;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.min(Math.round(Number(value) * 1000), RETRY_AFTER_MAX_MS);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.min(Math.max(date - nowMs, 0), RETRY_AFTER_MAX_MS);
}

function backoffMs(retry: number): number {
  const ms = Math.min(BACKOFF_BASE_MS * 2 ** retry, BACKOFF_MAX_MS);
  return Math.round(ms / 2 + Math.random() * (ms / 2));
}

function defaultSleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A fetch(Request) with the idempotency key, the timeouts and the retries. */
export function retryingFetch(options: RetryOptions): (input: Request, init?: RequestInit) => Promise<Response> {
  const sleep = options.sleep ?? defaultSleep;
  return async (input, init) => {
    let request = input;
    if (request.method === 'POST' && !request.headers.has('idempotency-key')) {
      const headers = new Headers(request.headers);
      headers.set('idempotency-key', randomUUID());
      request = new Request(request, { headers });
    }
    // Resent after a lost answer or a 503 (which may come after a commit: its outcome is unknown).
    const canResend =
      request.method === 'GET' ||
      request.method === 'HEAD' ||
      (request.method === 'POST' && honoursIdempotencyKey(request.url));
    const callerSignal = input.signal;
    for (let retry = 0; ; retry++) {
      const last = retry >= options.maxRetries;
      const attempt = request.clone();
      const timeout = options.timeoutMs > 0 ? AbortSignal.timeout(options.timeoutMs) : null;
      let response: Response;
      try {
        response = await options.fetch(
          timeout ? new Request(attempt, { signal: AbortSignal.any([callerSignal, timeout]) }) : attempt,
          init,
        );
      } catch (error) {
        if (callerSignal.aborted) throw error;
        const timedOut = timeout?.aborted === true;
        if (last || !canResend) {
          throw new SikaError({
            status: 0,
            code: timedOut ? 'TIMEOUT' : 'CONNECTION_ERROR',
            message: timedOut
              ? `no answer within ${options.timeoutMs} ms: ${request.method} ${request.url}`
              : `the request failed: ${request.method} ${request.url}: ${(error as Error).message}`,
            cause: error,
          });
        }
        await sleep(backoffMs(retry), callerSignal);
        continue;
      }
      if (last || !RETRY_STATUSES.has(response.status)) return response;
      if (response.status === 503 && request.method === 'POST' && !canResend) return response;
      const waitMs = retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(retry);
      await response.body?.cancel();
      await sleep(waitMs, callerSignal);
    }
  };
}
