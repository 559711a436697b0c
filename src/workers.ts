// Background jobs of the process: each loop is bounded, one pass of a job at a time, and stop() waits for
// the running pass. While storage is unreachable they all pause (src/db/availability.ts). Webhook delivery runs its own claim loop.
import type { FastifyBaseLogger } from 'fastify';
import { expireDueSessions } from './checkout/expiry.ts';
import { checkPendingAttempts } from './checkout/status-checks.ts';
import type { Config } from './config/index.ts';
import { StorageAvailability, type Db } from './db/index.ts';
import { DeliveryWorker, defaultDeliveryOptions } from './events/delivery.ts';
import { purgeExpiredWebSessions } from './accounts/console-accounts.ts';
import { purgeIdleThrottles } from './accounts/sign-in-throttle.ts';
import { purgeExpiredDevices } from './accounts/trusted-devices.ts';
import { purgeExpiredIdempotencyKeys } from './http/idempotency.ts';
import { applyAllPendingCredits } from './ledger/service.ts';
import { processDuePayouts } from './payouts/processing.ts';
import { processDueRefunds } from './refunds/processing.ts';
import { verifyTestRecipients } from './payouts/recipients.ts';
import type { LiveProviders } from './rails/live.ts';

const IDEMPOTENCY_PURGE_INTERVAL_MS = 10 * 60_000;
const SIGN_IN_THROTTLE_PURGE_INTERVAL_MS = 60 * 60_000;
const EXPIRY_SWEEP_INTERVAL_MS = 2_000;
const RECIPIENT_VERIFY_INTERVAL_MS = 1_000;
const PAYOUT_PROCESS_INTERVAL_MS = 500;
const REFUND_PROCESS_INTERVAL_MS = 1_000;
const STATUS_CHECK_INTERVAL_MS = 10_000;
/** Payment credits wait to be applied to the cached balances (src/ledger, migration 024) at most about this long. */
const CREDIT_APPLY_INTERVAL_MS = 250;

interface Job {
  name: string;
  intervalMs: number;
  run(): Promise<unknown>;
}

export function deliveryWorkerFor(
  db: Db,
  log: FastifyBaseLogger,
  config: Config,
  availability?: StorageAvailability,
): DeliveryWorker {
  return new DeliveryWorker(
    db,
    log,
    defaultDeliveryOptions({
      availability,
      retryScheduleS: config.webhookRetryScheduleS,
      timeoutMs: config.webhookTimeoutMs,
      pollIntervalMs: config.webhookPollMs,
      claimTtlS: config.webhookClaimTtlS,
      allowPrivateTargets: config.webhookAllowPrivateTargets,
    }),
  );
}

export function startWorkers({
  db,
  log,
  config,
  providers,
}: {
  db: Db;
  log: FastifyBaseLogger;
  config: Config;
  providers: LiveProviders;
}) {
  const jobs: Job[] = [
    {
      name: 'purge-idempotency-keys',
      intervalMs: IDEMPOTENCY_PURGE_INTERVAL_MS,
      run: () => purgeExpiredIdempotencyKeys(db),
    },
    {
      name: 'purge-sign-in-throttles',
      intervalMs: SIGN_IN_THROTTLE_PURGE_INTERVAL_MS,
      // Idle backoff rows, expired trusted devices and expired console sessions: sign-in state that no longer counts.
      run: async () => {
        await purgeIdleThrottles(db);
        await purgeExpiredDevices(db);
        await purgeExpiredWebSessions(db);
      },
    },
    {
      name: 'expire-sessions',
      intervalMs: EXPIRY_SWEEP_INTERVAL_MS,
      run: () => expireDueSessions(db, config.checkoutUrlHost),
    },
    {
      name: 'provider-status-checks',
      intervalMs: STATUS_CHECK_INTERVAL_MS,
      run: () => checkPendingAttempts({ db, checkoutUrlHost: config.checkoutUrlHost, providers, log }),
    },
    { name: 'verify-test-recipients', intervalMs: RECIPIENT_VERIFY_INTERVAL_MS, run: () => verifyTestRecipients(db) },
    {
      name: 'process-live-payouts',
      intervalMs: PAYOUT_PROCESS_INTERVAL_MS,
      run: () => processDuePayouts(db, providers, log),
    },
    { name: 'apply-ledger-credits', intervalMs: CREDIT_APPLY_INTERVAL_MS, run: () => applyAllPendingCredits(db) },
    {
      name: 'process-live-refunds',
      intervalMs: REFUND_PROCESS_INTERVAL_MS,
      run: () => processDueRefunds(db, providers, log),
    },
  ];
  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<unknown>>();
  let stopped = false;
  // While the database is unreachable (a failover), every job pauses and resumes by itself once a primary answers.
  const availability = new StorageAvailability(db, log);
  for (const job of jobs) {
    let busy = false;
    const tick = () => {
      if (stopped || busy || !availability.available) return;
      busy = true;
      const pass = job
        .run()
        .catch((error: unknown) => {
          if (!availability.report(error)) log.warn({ err: error, job: job.name }, 'background job failed; will retry');
        })
        .finally(() => {
          busy = false;
          running.delete(pass);
        });
      running.add(pass);
    };
    timers.push(setInterval(tick, job.intervalMs));
  }
  const delivery = deliveryWorkerFor(db, log, config, availability);
  delivery.start();
  return {
    delivery,
    availability,
    async stop() {
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      availability.stop();
      await Promise.all([...running, delivery.stop()]);
    },
  };
}
