// The in-memory rate-limit store (no REDIS_URL): a fixed window per key, as @fastify/rate-limit's own
// LocalStore, but each answer is a snapshot. The plugin reads the count after an await; LocalStore hands
// it the live window object, so requests counted in the same tick all read the last count, and a burst
// whose authentication finished together was refused under its budget (found when pipelined key
// lookups made such bursts common).
import type { FastifyRateLimitOptions, FastifyRateLimitStore } from '@fastify/rate-limit';

/** Keys kept at most per limiter; past it, ended windows are dropped first, then the oldest. */
const WINDOWS_MAX = 10_000;

type Answer = (error: Error | null, result?: { current: number; ttl: number }) => void;

export class MemoryWindowStore implements FastifyRateLimitStore {
  private readonly windows = new Map<string, { count: number; startMs: number }>();

  constructor(
    _options?: FastifyRateLimitOptions,
    private readonly windowsMax = WINDOWS_MAX,
  ) {}

  incr(key: string, answer: Answer, timeWindow: number, _max?: number): void {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.startMs + timeWindow <= now) {
      if (!window && this.windows.size >= this.windowsMax) this.evict(now, timeWindow);
      window = { count: 0, startMs: now };
      this.windows.set(key, window);
    }
    window.count++;
    answer(null, { current: window.count, ttl: window.startMs + timeWindow - now });
  }

  child(): MemoryWindowStore {
    return new MemoryWindowStore(undefined, this.windowsMax);
  }

  private evict(now: number, timeWindow: number): void {
    for (const [key, window] of this.windows) if (window.startMs + timeWindow <= now) this.windows.delete(key);
    // Still full of live windows (a flood of distinct keys): drop the oldest half.
    if (this.windows.size >= this.windowsMax) {
      let drop = Math.ceil(this.windows.size / 2);
      for (const key of this.windows.keys()) {
        if (drop-- <= 0) break;
        this.windows.delete(key);
      }
    }
  }
}
