// Rate limits (DESIGN §3): per API key on merchant and payout routes; per client address and per
// session on public checkout routes. In memory by default, in Redis when REDIS_URL is set, so many
// instances share one budget. Each bucket refills its per-second rate every second.
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { errors } from '../lib/errors.ts';
import { MemoryWindowStore } from './memory-window-store.ts';

export interface RateLimiters {
  perKey: preHandlerAsyncHookHandler;
  perIp: preHandlerAsyncHookHandler;
  perSession: preHandlerAsyncHookHandler;
  close(): Promise<void>;
}

const WINDOW_MS = 1_000;

type Check = (request: FastifyRequest) => Promise<{ isAllowed: boolean; isExceeded: boolean; ttlInSeconds: number }>;

export async function registerRateLimits(
  app: FastifyInstance,
  options: { redisUrl: string | null; keyPerSecond: number; ipPerSecond: number; sessionPerSecond: number },
): Promise<RateLimiters> {
  // ioredis is loaded only when REDIS_URL is set (20 MB and 0.2 s at start otherwise).
  const redis = options.redisUrl
    ? new (await import('ioredis')).Redis(options.redisUrl, {
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        connectTimeout: 2_000,
        lazyConnect: false,
      })
    : null;
  redis?.on('error', (error) => app.log.warn({ err: error }, 'redis unavailable for rate limits'));
  await app.register(rateLimit, {
    global: false,
    ...(redis ? { redis } : { store: MemoryWindowStore }),
    nameSpace: 'sika-rl:',
    // A broken Redis must not take the API down: the request passes and the failure is logged.
    skipOnError: true,
  });
  const create = (app as unknown as { createRateLimit(o: object): Check }).createRateLimit.bind(app);

  const hook = (check: Check): preHandlerAsyncHookHandler =>
    async function rateLimitHook(request) {
      const result = await check(request);
      if (!result.isAllowed && result.isExceeded) throw errors.rateLimited(Math.max(1, result.ttlInSeconds));
    };

  return {
    perKey: hook(
      create({
        max: options.keyPerSecond,
        timeWindow: WINDOW_MS,
        keyGenerator: (r: FastifyRequest) => `key:${r.principal?.apiKeyId ?? r.ip}`,
      }),
    ),
    perIp: hook(
      create({ max: options.ipPerSecond, timeWindow: WINDOW_MS, keyGenerator: (r: FastifyRequest) => `ip:${r.ip}` }),
    ),
    perSession: hook(
      create({
        max: options.sessionPerSecond,
        timeWindow: WINDOW_MS,
        keyGenerator: (r: FastifyRequest) =>
          `session:${String((r.params as Record<string, string> | undefined)?.reference ?? (r.body as Record<string, unknown> | undefined)?.session_id ?? r.ip).slice(0, 80)}`,
      }),
    ),
    async close() {
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}
