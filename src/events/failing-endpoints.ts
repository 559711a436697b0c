// What the delivery worker logs about endpoints whose tries fail. A receiver that is down fails every try of
// every event (a developer's demo endpoint on a closed port: every few seconds), so a line per try buries the
// rest of the log. Instead: one line when an endpoint's tries start failing, one every
// FAILING_ENDPOINT_LOG_INTERVAL_MS while they go on (with the count), one when a try succeeds again. Logging
// only: every try is still made on the retry schedule and recorded (webhook_delivery_tries, `sika events show`).
import type { FastifyBaseLogger } from 'fastify';

export const FAILING_ENDPOINT_LOG_INTERVAL_MS = 60 * 60 * 1000;
/** Endpoints remembered at once; past this the longest-failing is forgotten (its next failure logs again). */
const FAILING_ENDPOINTS_TRACKED_MAX = 10_000;

interface Outage {
  sinceMs: number;
  failedTries: number;
  loggedAtMs: number;
}

export class FailingEndpointLog {
  private readonly outages = new Map<string, Outage>();

  constructor(
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs = FAILING_ENDPOINT_LOG_INTERVAL_MS,
  ) {}

  /** A try to the endpoint failed: logged if it is the first of an outage, or the first for an interval. */
  failed(
    endpointId: string,
    details: { delivery_id: string; event_id: string; try: number; status: number | null; error: string | null },
    nowMs = Date.now(),
  ): void {
    const outage = this.outages.get(endpointId);
    if (!outage) {
      if (this.outages.size >= FAILING_ENDPOINTS_TRACKED_MAX)
        this.outages.delete(this.outages.keys().next().value as string);
      this.outages.set(endpointId, { sinceMs: nowMs, failedTries: 1, loggedAtMs: nowMs });
      this.log.info(
        { endpoint_id: endpointId, ...details },
        "webhook try failed; the endpoint's tries go on by the retry schedule, and its failures are counted, not logged, until one succeeds",
      );
      return;
    }
    outage.failedTries++;
    if (nowMs - outage.loggedAtMs < this.intervalMs) return;
    outage.loggedAtMs = nowMs;
    this.log.info(
      {
        endpoint_id: endpointId,
        failed_tries: outage.failedTries,
        failing_since: new Date(outage.sinceMs).toISOString(),
        ...details,
      },
      'webhook endpoint still failing',
    );
  }

  /** A try to the endpoint succeeded: the end of its outage, if it had one. */
  delivered(endpointId: string, nowMs = Date.now()): void {
    const outage = this.outages.get(endpointId);
    if (!outage) return;
    this.outages.delete(endpointId);
    this.log.info(
      {
        endpoint_id: endpointId,
        failed_tries: outage.failedTries,
        failing_for_s: Math.round((nowMs - outage.sinceMs) / 1000),
      },
      'webhook endpoint delivering again',
    );
  }
}
