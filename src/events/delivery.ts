// The webhook delivery worker: claims due deliveries (SKIP LOCKED), signs, POSTs with a timeout, records
// every try (and logs a failing endpoint once per outage: failing-endpoints.ts), retries on a schedule, and never holds a database transaction across a network call.
// Successful tries are recorded in batches (one statement and one commit for all that finished while the
// previous batch was being written), a failed one in one statement. A transaction that leaves deliveries due
// signals DELIVERIES_DUE_CHANNEL once it commits (src/db/signals.ts): the worker claims at once, at most
// every DELIVERY_POLL_MIN_MS; without a signal (a writer that sends none, a missed NOTIFY) it still looks
// every pollIntervalMs, and a finished try wakes it when a limit held due deliveries back.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Db, StorageAvailability, Subscription } from '../db/index.ts';
import { randomToken } from '../lib/ids.ts';
import { FailingEndpointLog } from './failing-endpoints.ts';
import { DELIVERIES_DUE_CHANNEL } from './model.ts';
import { signatureHeader } from './signing.ts';
import { parseRetryAfter, retryDelayS, RETRY_SCHEDULE_S } from './retry-schedule.ts';
import { cachingResolver, resolveTarget, systemResolver, UnsafeUrlError, type Resolver } from '../lib/ssrf.ts';
import * as store from './store.ts';

export const DELIVERY_TIMEOUT_MS = 10_000;
/** DESIGN: an endpoint whose deliveries have all failed for this long is disabled. */
export const ENDPOINT_FAILING_DISABLE_S = 5 * 86_400;
export const RESPONSE_EXCERPT_BYTES_MAX = 1_024;
const RESPONSE_READ_BYTES_MAX = 64 * 1_024;
/**
 * The least time between two claims of a worker. A transaction that leaves deliveries due signals the worker once
 * it commits (src/db/signals.ts), which claims at once, or this long after its last claim began: at any rate of
 * commits a worker claims at most 50 times a second, each claim taking all that came meanwhile. A claim costs about
 * a millisecond of PostgreSQL whatever it takes, so this sets a busy flow's cost per delivery: at 500 events/s over
 * ten endpoints, 5 ms gave PostgreSQL 346-390 µs per delivery and commit-to-receipt p50 4 ms, p99 8-12 ms; 20 ms
 * gives 266-286 µs, p50 12-13 ms, p99 23 ms (issue 37, bench/webhooks.ts on one database, two rounds each). Without a signal
 * (one missed, a writer that sends none) a worker looks every pollIntervalMs. (The signal to other processes is a
 * NOTIFY sent after the commit, in a transaction of its own: a NOTIFY inside the writing transaction would serialise
 * its commit with every other notifying one on one lock; measured on 2 cores with 50 clients, 11,600 commits/s fell
 * to 2,900-3,900/s.) Issue 37 measured signals against looking every 5 ms while busy: the same latency, fewer claims.
 */
export const DELIVERY_POLL_MIN_MS = 20;
/** Successful tries written in one statement, at most. */
const DELIVERED_BATCH_ROWS_MAX = 256;

/** How many outages a batch of finished tries waits out before it is given up (its claims then lapse and the tries repeat). */
const RECORD_OUTAGE_WAITS_MAX = 3;

export interface DeliveryOptions {
  retryScheduleS: readonly number[];
  timeoutMs: number;
  /** Deliveries in flight at once in this worker, and per endpoint. */
  inFlightMax: number;
  perEndpointMax: number;
  /** How long a claim holds before another worker may take the delivery again (covers a crash). */
  claimTtlS: number;
  pollIntervalMs: number;
  resolver: Resolver;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS (config.webhookAllowPrivateTargets); off unless the deployment says so. */
  allowPrivateTargets: boolean;
  /** The process's view of storage (src/workers.ts): the loop pauses while it is down instead of failing each poll. */
  availability?: StorageAvailability;
}

export const defaultDeliveryOptions = (overrides: Partial<DeliveryOptions> = {}): DeliveryOptions => ({
  retryScheduleS: RETRY_SCHEDULE_S,
  timeoutMs: DELIVERY_TIMEOUT_MS,
  inFlightMax: 64,
  perEndpointMax: 8,
  claimTtlS: Math.ceil(DELIVERY_TIMEOUT_MS / 1000) + 20,
  pollIntervalMs: 50,
  resolver: systemResolver,
  allowPrivateTargets: false,
  ...overrides,
});

interface TryResult {
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  excerpt: string | null;
  /** The receiver's Retry-After, in seconds, when it sent one. */
  retryAfterS?: number | null;
}

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

function post(
  url: URL,
  address: string,
  family: 4 | 6,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<TryResult> {
  const started = performance.now();
  // Connect to the address the SSRF guard checked, whatever DNS says now.
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<TryResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...result, latencyMs: Math.round(performance.now() - started) });
    };
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup,
        agent: url.protocol === 'https:' ? agents.https : agents.http,
        servername: url.hostname.replace(/^\[|\]$/g, ''),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= RESPONSE_READ_BYTES_MAX) chunks.push(chunk);
          else response.destroy();
        });
        const done = () => {
          // PostgreSQL text cannot hold NUL: a binary answer must not stop the try from being recorded.
          const text = Buffer.concat(chunks)
            .subarray(0, RESPONSE_EXCERPT_BYTES_MAX)
            .toString('utf8')
            .replace(/\u0000/g, '\uFFFD');
          finish({
            httpStatus: response.statusCode ?? null,
            error: null,
            excerpt: text.slice(0, RESPONSE_EXCERPT_BYTES_MAX) || null,
            retryAfterS: parseRetryAfter(response.headers['retry-after']),
          });
        };
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      },
    );
    // A deadline for the whole try, not only for silence on the socket: a receiver trickling its answer
    // must not hold the try past the claim TTL (another worker would send the event again meanwhile).
    const deadline = setTimeout(() => {
      finish({ httpStatus: null, error: `timed out after ${timeoutMs} ms`, excerpt: null });
      request.destroy();
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({
        httpStatus: null,
        error: `${error.code ? `${error.code}: ` : ''}${error.message}`.slice(0, 500),
        excerpt: null,
      }),
    );
    request.end(body);
  });
}

export class DeliveryWorker {
  readonly workerId = `w_${randomToken(8)}`;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** A signal came (deliveries committed due, or a try held back by a limit finished) since the last claim began: look again without waiting out the poll. */
  private signalled = false;
  private lastClaimAtMs = 0;
  private subscription: Subscription | null = null;
  /** The last claim may have left due deliveries behind (this worker or an endpoint at its limit): a finished try wakes the loop. */
  private heldBack = false;
  /** A claim is on its way (a try finishing meanwhile asks for another look, held back or not). */
  private claiming = false;
  private finishedDuringClaim = false;
  /** Successful tries waiting for the next batch write, and whether one is under way. */
  private readonly delivered: { row: store.DeliveredTry; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private deliveredWriter: Promise<void> | null = null;
  private readonly resolver: Resolver;
  private readonly failing: FailingEndpointLog;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly options: DeliveryOptions = defaultDeliveryOptions(),
  ) {
    this.resolver = cachingResolver(options.resolver, { allowPrivateTargets: options.allowPrivateTargets });
    this.failing = new FailingEndpointLog(log);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops claiming, then waits for the deliveries in flight to finish and be recorded. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    await this.subscription?.close();
    this.subscription = null;
    await Promise.all(this.inFlight.values());
  }

  /** Claims and sends what is due now; resolves when those tries are recorded (tests and the CLI). */
  async runOnce(): Promise<number> {
    const claimed = await this.claim();
    await Promise.all(claimed.map((delivery) => this.inFlight.get(delivery.id)));
    return claimed.length;
  }

  /** Deliveries were committed due: claim now, or DELIVERY_POLL_MIN_MS after the last claim began. */
  private signal(): void {
    this.signalled = true;
    if (!this.heldBack) this.wake?.();
  }

  private async listen(): Promise<void> {
    try {
      // reset: messages may have been missed (a reconnect), so look now.
      this.subscription = await this.db.listen(DELIVERIES_DUE_CHANNEL, {
        message: () => this.signal(),
        reset: () => this.signal(),
      });
      if (!this.running) {
        // stop() came while this was connecting: it closes only what it finds.
        await this.subscription.close();
        this.subscription = null;
      }
    } catch (error) {
      // Storage unreachable at start: the loop polls, and pauses while storage is down, as before.
      this.log.warn({ err: error }, 'webhook delivery could not listen for new events; polling only');
    }
  }

  private async run(): Promise<void> {
    await this.listen();
    while (this.running) {
      this.signalled = false;
      this.finishedDuringClaim = false;
      this.lastClaimAtMs = performance.now();
      try {
        await this.claim();
      } catch (error) {
        const availability = this.options.availability;
        if (availability?.report(error)) await availability.whenAvailable();
        else this.log.warn({ err: error }, 'webhook claim failed; retrying');
      }
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        let timer = setTimeout(
          resolve,
          (this.signalled && !this.heldBack) || this.finishedDuringClaim
            ? this.sinceLastClaimMs()
            : this.options.pollIntervalMs,
        );
        this.wake = () => {
          clearTimeout(timer);
          // Claims stay DELIVERY_POLL_MIN_MS apart however often commits signal; stop() resolves at once.
          timer = setTimeout(resolve, this.running ? this.sinceLastClaimMs() : 0);
        };
      });
      this.wake = null;
    }
  }

  /** What is left of DELIVERY_POLL_MIN_MS since the last claim began. */
  private sinceLastClaimMs(): number {
    return Math.max(0, DELIVERY_POLL_MIN_MS - (performance.now() - this.lastClaimAtMs));
  }

  private async claim(): Promise<store.ClaimedDelivery[]> {
    const capacity = this.options.inFlightMax - this.inFlight.size;
    if (capacity <= 0) {
      this.heldBack = true;
      return [];
    }
    // What is already in flight counts against each endpoint's share (at most perEndpointMax at once).
    const inFlightBefore = new Map(this.perEndpoint);
    let claimed: store.ClaimedDelivery[];
    this.claiming = true;
    try {
      claimed = await store.claimDueDeliveries(
        this.db,
        capacity,
        this.options.perEndpointMax,
        this.options.claimTtlS,
        inFlightBefore,
      );
    } finally {
      this.claiming = false;
    }
    const taken = new Map<string, number>();
    for (const delivery of claimed) {
      taken.set(delivery.endpoint_id, (taken.get(delivery.endpoint_id) ?? 0) + 1);
      this.perEndpoint.set(delivery.endpoint_id, (this.perEndpoint.get(delivery.endpoint_id) ?? 0) + 1);
      const pass = this.deliver(delivery)
        .catch((error: unknown) =>
          this.log.error(
            { err: error, delivery_id: delivery.id },
            'recording a webhook try failed; the claim will lapse and it will be retried',
          ),
        )
        .finally(() => {
          this.inFlight.delete(delivery.id);
          const left = (this.perEndpoint.get(delivery.endpoint_id) ?? 1) - 1;
          if (left <= 0) this.perEndpoint.delete(delivery.endpoint_id);
          else this.perEndpoint.set(delivery.endpoint_id, left);
          // A limit may have held due deliveries back: look again. A try finishing during a claim may have freed
          // a share that claim did not see, and finds no wait to end: the loop looks again soon after the claim.
          if (this.claiming) this.finishedDuringClaim = true;
          if (this.heldBack || this.claiming) {
            this.signalled = true;
            this.wake?.();
          }
        });
      this.inFlight.set(delivery.id, pass);
    }
    // Held back: the claim took all it could, in all or for an endpoint (its share as the claim began, which
    // tries finishing meanwhile do not change), so more may be due.
    const max = this.options.perEndpointMax;
    this.heldBack =
      claimed.length >= capacity ||
      [...inFlightBefore.values()].some((n) => n >= max) ||
      [...taken].some(([endpoint, n]) => n >= max - (inFlightBefore.get(endpoint) ?? 0));
    return claimed;
  }

  private secretsOf(delivery: store.ClaimedDelivery): string[] {
    const secrets = [delivery.secret];
    if (
      delivery.previous_secret &&
      delivery.previous_secret_expires_at &&
      delivery.previous_secret_expires_at.getTime() > Date.now()
    ) {
      secrets.push(delivery.previous_secret);
    }
    return secrets;
  }

  private async deliver(delivery: store.ClaimedDelivery): Promise<void> {
    if (delivery.endpoint_status !== 'active') {
      await this.db.transaction(async (tx) => {
        await store.insertTry(tx, {
          deliveryId: delivery.id,
          tryNumber: delivery.tries,
          httpStatus: null,
          latencyMs: 0,
          error: 'endpoint disabled: not sent',
          responseExcerpt: null,
          workerId: this.workerId,
        });
        await store.markFailed(tx, delivery.id, 'skipped', null, 'endpoint disabled: not sent');
      });
      // Debug: a line per event for an endpoint someone turned off on purpose says nothing new.
      this.log.debug(
        { delivery_id: delivery.id, endpoint_id: delivery.endpoint_id },
        'webhook skipped: endpoint disabled',
      );
      return;
    }
    let result: TryResult;
    try {
      // A refused target is never connected to, so its try reveals nothing about the port or the host behind it.
      const target = await resolveTarget(
        delivery.url,
        delivery.environment,
        { allowPrivateTargets: this.options.allowPrivateTargets },
        this.resolver,
      );
      const timestampS = Math.floor(Date.now() / 1000);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'Sika-Webhooks/1.0',
        'webhook-id': delivery.event_id,
        'webhook-timestamp': String(timestampS),
        'webhook-signature': signatureHeader(this.secretsOf(delivery), delivery.event_id, timestampS, delivery.payload),
      };
      result = await post(target.url, target.address, target.family, headers, delivery.payload, this.options.timeoutMs);
    } catch (error) {
      if (!(error instanceof UnsafeUrlError)) throw error;
      result = { httpStatus: null, latencyMs: 0, error: `refused: ${error.message}`, excerpt: null };
    }
    await this.record(delivery, result);
  }

  private async record(delivery: store.ClaimedDelivery, result: TryResult): Promise<void> {
    const ok = result.httpStatus !== null && result.httpStatus >= 200 && result.httpStatus < 300;
    const error = ok ? null : (result.error ?? `HTTP ${result.httpStatus}`);
    const sent: store.DeliveryTry = {
      deliveryId: delivery.id,
      tryNumber: delivery.tries,
      httpStatus: result.httpStatus,
      latencyMs: result.latencyMs,
      error,
      responseExcerpt: result.excerpt,
      workerId: this.workerId,
    };
    if (ok) {
      this.failing.delivered(delivery.endpoint_id);
      return this.recordDelivered({
        deliveryId: delivery.id,
        tryNumber: delivery.tries,
        httpStatus: result.httpStatus!,
        latencyMs: result.latencyMs,
        responseExcerpt: result.excerpt,
      });
    }
    if (result.httpStatus === 410) {
      await this.db.transaction(async (tx) => {
        await store.insertTry(tx, sent);
        // Standard Webhooks: 410 Gone means the receiver wants no more; its events stay replayable.
        await store.disableEndpoint(tx, delivery.endpoint_id, 'the receiver answered 410 Gone');
        await store.markFailed(tx, delivery.id, 'failed', 410, 'endpoint answered 410 Gone: disabled');
      });
      this.log.warn({ endpoint_id: delivery.endpoint_id }, 'webhook endpoint disabled: the receiver answered 410 Gone');
    } else {
      // The try, the endpoint's record of failures and the retry (or the end of the schedule) in one statement.
      const retryInS = retryDelayS(this.options.retryScheduleS, delivery.tries, result.retryAfterS ?? null);
      if (
        await store.recordFailedTry(
          this.db,
          sent,
          delivery.endpoint_id,
          retryInS,
          ENDPOINT_FAILING_DISABLE_S,
          'every delivery failed for 5 days',
        )
      ) {
        this.log.warn(
          { endpoint_id: delivery.endpoint_id },
          'webhook endpoint disabled: every delivery failed for 5 days',
        );
      }
    }
    this.failing.failed(delivery.endpoint_id, {
      delivery_id: delivery.id,
      event_id: delivery.event_id,
      try: delivery.tries,
      status: result.httpStatus,
      error,
    });
  }

  /** Resolves once the try and the delivery's new state are written (with the others that finished meanwhile). */
  private recordDelivered(row: store.DeliveredTry): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.delivered.push({ row, resolve, reject });
      // The write starts after this turn of the event loop, so tries finishing together share it.
      this.deliveredWriter ??= new Promise<void>((started) => setImmediate(started)).then(() => this.writeDelivered());
    });
  }

  private async writeDelivered(): Promise<void> {
    let outageWaits = 0;
    try {
      while (this.delivered.length > 0) {
        const batch = this.delivered.splice(0, DELIVERED_BATCH_ROWS_MAX);
        try {
          await store.recordDeliveredBatch(
            this.db,
            batch.map((b) => b.row),
            this.workerId,
          );
          for (const b of batch) b.resolve();
        } catch (error) {
          // Storage went away after the receiver answered (a failover): record the tries once a primary answers,
          // within their claim, rather than let the claims lapse into a second send of each.
          const availability = this.options.availability;
          if (availability?.report(error) && outageWaits < RECORD_OUTAGE_WAITS_MAX) {
            outageWaits++;
            await availability.whenAvailable();
            this.delivered.unshift(...batch);
            continue;
          }
          // One at a time, so a failure (e.g. a deadlock with a worker recording the same delivery after a lapsed claim) stays with its own try.
          this.log.warn(
            { err: error, tries: batch.length },
            'recording a batch of webhook tries failed; recording them one by one',
          );
          for (const b of batch)
            await store.recordDelivered(this.db, { ...b.row, workerId: this.workerId }).then(b.resolve, b.reject);
        }
      }
    } finally {
      this.deliveredWriter = null;
    }
  }
}
