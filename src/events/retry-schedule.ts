// The one webhook retry schedule (DESIGN §3), with jitter, honouring a receiver's Retry-After within bounds
// (as Svix's calculate_retry_delay does). WEBHOOK_RETRY_SCHEDULE_S replaces the steps, nothing else.

/** Retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then the delivery is failed. */
export const RETRY_SCHEDULE_S: readonly number[] = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];
/**
 * Each wait grows by up to this share, at random, so deliveries that failed together (a receiver's outage)
 * do not all come back in the same second. Only ever longer: a receiver is never retried sooner than the schedule says.
 */
export const RETRY_JITTER_SHARE_MAX = 0.1;
/** A receiver asking for a longer wait (Retry-After) gets it, up to this; it never shortens the schedule's wait. */
export const RETRY_AFTER_HONOURED_MAX_S = 36_000;

/**
 * Seconds to wait before try `tryNumber + 1`, after try `tryNumber` (1-based) failed; null when the schedule
 * has run out and the delivery is failed.
 */
export function retryDelayS(
  schedule: readonly number[],
  tryNumber: number,
  retryAfterS: number | null = null,
  random: () => number = Math.random,
): number | null {
  const stepS = schedule[tryNumber - 1];
  if (stepS === undefined) return null;
  const jitteredS = stepS * (1 + random() * RETRY_JITTER_SHARE_MAX);
  const askedS = retryAfterS === null ? 0 : Math.min(retryAfterS, RETRY_AFTER_HONOURED_MAX_S);
  return Math.round(Math.max(jitteredS, askedS) * 1000) / 1000;
}

/** A Retry-After header (delta-seconds or an HTTP date, RFC 9110 §10.2.3) in seconds from now; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs = Date.now()): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d{1,10}$/.test(text)) return Number(text);
  const atMs = Date.parse(text);
  if (Number.isNaN(atMs) || !/[a-z]/i.test(text)) return null;
  return Math.max(0, Math.ceil((atMs - nowMs) / 1000));
}
