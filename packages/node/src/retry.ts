// The fetch every request goes through: an Idempotency-Key on each POST that has none (one key for all
// of its tries), a timeout per try, and retries on 429 and 503 (honouring Retry-After) and on lost
// answers (network errors, timeouts) of GETs and of POSTs, which are safe to send again because they
// carry the key (every POST of the merchant API honours it). The README says exactly this; keep both true.
import { randomUUID } from 'node:crypto';
import { SikaError } from './errors.js';

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
    const canResend = request.method === 'GET' || request.method === 'HEAD' || request.headers.has('idempotency-key');
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
      const waitMs = retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(retry);
      await response.body?.cancel();
      await sleep(waitMs, callerSignal);
    }
  };
}
