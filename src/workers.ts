// Background jobs of the single process: each loop is bounded, and stop() waits for the running pass.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from './db/index.ts';
import { purgeExpiredIdempotencyKeys } from './http/idempotency.ts';

const IDEMPOTENCY_PURGE_INTERVAL_MS = 10 * 60_000;

interface Job {
  name: string;
  intervalMs: number;
  run(): Promise<unknown>;
}

export function startWorkers({ db, log }: { db: Db; log: FastifyBaseLogger }) {
  const jobs: Job[] = [{ name: 'purge-idempotency-keys', intervalMs: IDEMPOTENCY_PURGE_INTERVAL_MS, run: () => purgeExpiredIdempotencyKeys(db) }];
  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<unknown>>();
  let stopped = false;
  for (const job of jobs) {
    const tick = () => {
      if (stopped) return;
      const pass = job
        .run()
        .catch((error: unknown) => log.warn({ err: error, job: job.name }, 'background job failed; will retry'))
        .finally(() => running.delete(pass));
      running.add(pass);
    };
    timers.push(setInterval(tick, job.intervalMs));
  }
  return {
    async stop() {
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      await Promise.all(running);
    },
  };
}
