// Background jobs of the process: each loop is bounded, one pass of a job at a time, and stop() waits for
// the running pass. While storage is unreachable they all pause (src/db/availability.ts). Webhook delivery runs its own claim loop.
import type { FastifyBaseLogger } from 'fastify';
import { expireDueSessions } from './checkout/expiry.ts';
import { checkPendingAttempts } from './checkout/status-checks.ts';
import type { Config } from './config/index.ts';
import { StorageAvailability, type Db } from './db/index.ts';
import { DeliveryWorker, defaultDeliveryOptions } from './events/delivery.ts';
import { archiveOldEvents } from './events/retention.ts';
import { purgeExpiredWebSessions } from './accounts/console-accounts.ts';
import { purgeIdleThrottles } from './accounts/sign-in-throttle.ts';
import { purgeExpiredSignups } from './accounts/signups.ts';
import { purgeExpiredDevices } from './accounts/trusted-devices.ts';
import { purgeExpiredIdempotencyKeys } from './http/idempotency.ts';
import { applyAllPendingCredits } from './ledger/service.ts';
import { processDuePayouts } from './payouts/processing.ts';
import { runDueSettlements } from './payouts/settlement-run.ts';
import { processDueRefunds } from './refunds/processing.ts';
import { verifyTestRecipients } from './payouts/recipients.ts';
import { deliverDueMail, mailDelivery } from './mail/delivery.ts';
import { deliverDueSms, smsDelivery } from './sms/delivery.ts';
import type { LiveProviders } from './rails/live.ts';

/** A background job: its name in logs, how often a pass starts (one at a time), and the pass. */
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
  // Mail goes through SMTP_URL's server, or to the log without one (src/mail/delivery.ts).
  const mail = mailDelivery({ smtpUrl: config.smtpUrl, from: config.mailFrom }, log);
  // SMS go through SMS_PROVIDER (Hubtel or mNotify), or to the log without one (src/sms/delivery.ts).
  const sms = smsDelivery(config.sms, log);
  // Every job with its interval, in one table.
  const jobs: Job[] = [
    {
      name: 'purge-idempotency-keys',
      intervalMs: 10 * 60_000,
      run: () => purgeExpiredIdempotencyKeys(db),
    },
    {
      name: 'purge-sign-in-throttles',
      intervalMs: 60 * 60_000,
      // Idle backoff rows, expired trusted devices and expired console sessions: sign-in state that no longer counts.
      run: async () => {
        await purgeIdleThrottles(db);
        await purgeExpiredDevices(db);
        await purgeExpiredWebSessions(db);
      },
    },
    {
      name: 'archive-events',
      // Events past EVENT_RETENTION_DAYS whose deliveries have finished go to ARCHIVE_DIR, then leave the
      // database with their deliveries and tries (src/events/retention.ts); a pass stops after about 10 s and
      // the next one goes on, so a backlog drains a batch at a time (a third of the time; idle, one indexed look).
      intervalMs: 30_000,
      run: () => archiveOldEvents(db, { retentionDays: config.eventRetentionDays, archiveDir: config.archiveDir }),
    },
    {
      name: 'purge-signups',
      intervalMs: 60 * 60_000,
      // Unverified sign-ups a day past their link's expiry, and the sign-up limits' old counts.
      run: () => purgeExpiredSignups(db),
    },
    {
      name: 'expire-sessions',
      intervalMs: 2_000,
      run: () => expireDueSessions(db, config.checkoutUrlHost),
    },
    {
      name: 'provider-status-checks',
      intervalMs: 10_000,
      run: () => checkPendingAttempts({ db, checkoutUrlHost: config.checkoutUrlHost, providers, log }),
    },
    { name: 'verify-test-recipients', intervalMs: 1_000, run: () => verifyTestRecipients(db) },
    {
      name: 'process-live-payouts',
      intervalMs: 500,
      run: () => processDuePayouts(db, providers, { log }),
    },
    {
      name: 'apply-ledger-credits',
      // Payment credits wait to be applied to the cached balances (src/ledger, migration 024) at most about this long.
      intervalMs: 250,
      run: () => applyAllPendingCredits(db),
    },
    {
      name: 'settle',
      // Issue 34: credits whose clearing time has passed become available, reserves whose days have passed are
      // released, and every settlement schedule whose time has come is settled (once per period, whatever
      // the number of processes: src/payouts/settlement-run.ts).
      intervalMs: 5_000,
      run: () => runDueSettlements({ db, providers, log }),
    },
    {
      name: 'process-live-refunds',
      intervalMs: 1_000,
      run: () => processDueRefunds(db, providers, log),
    },
    {
      name: 'send-mail',
      // Polled, not woken: a NOTIFY would serialise every mailing transaction's commit (events/delivery.ts says
      // why); one indexed look a second is cheap, and a mail leaves within about a second of its commit.
      intervalMs: 1_000,
      run: () => deliverDueMail(db, mail),
    },
    {
      name: 'send-sms',
      // Polled a second, as send-mail: a receipt SMS leaves within about a second of the payer asking.
      intervalMs: 1_000,
      run: () => deliverDueSms(db, sms),
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
      mail.sender?.close();
    },
  };
}
