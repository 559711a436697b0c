import { webhookEndpointMachine, type WebhookEndpointStatus } from '../lib/statuses.ts';
import type { Queryable } from '../db/index.ts';
import { Statement } from '../db/statement.ts';
import { sqlList } from '../lib/state-machine.ts';
import { DELIVERIES_DUE_CHANNEL, deliveryMachine } from './model.ts';

// The status writes of this file, each allowed by its table (checked once, at load).
const DELIVERED = deliveryMachine.transition('pending', 'delivered');
const GIVES_UP = deliveryMachine.transition('pending', 'failed');
const REPLAYED = deliveryMachine.transition('pending', 'pending').to;
const REPLAY_INITIAL = deliveryMachine.initialStatus('pending');
const ENDPOINT_GIVES_UP = webhookEndpointMachine.transition('active', 'disabled');
const ENDPOINT_DISABLED = 'disabled' satisfies WebhookEndpointStatus;

export interface ClaimedDelivery {
  id: string;
  event_id: string;
  endpoint_id: string;
  environment: 'test' | 'live';
  tries: number;
  payload: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  endpoint_status: WebhookEndpointStatus;
}

/**
 * Claims due deliveries for this worker: FOR UPDATE SKIP LOCKED so concurrent workers never take the
 * same one, each locked for `claimTtlS` (a crash lets it lapse). With what the worker already has in
 * flight per endpoint (`inFlightByEndpoint`), an endpoint never has more than `perEndpointMax` in flight;
 * endpoints take turns, so each gets its share of `limit`.
 */
export async function claimDueDeliveries(
  db: Queryable,
  limit: number,
  perEndpointMax: number,
  claimTtlS: number,
  inFlightByEndpoint: ReadonlyMap<string, number> = new Map(),
): Promise<ClaimedDelivery[]> {
  return db.query<ClaimedDelivery>(
    `WITH RECURSIVE busy AS (
       SELECT * FROM unnest($4::uuid[], $5::int[]) AS b(endpoint_id, in_flight)
     ), pending_endpoint AS (
       -- The endpoints with pending deliveries: one index probe each (a skip scan), not one row per delivery.
       (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
       UNION ALL
       SELECT (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.endpoint_id > p.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
         FROM pending_endpoint p WHERE p.endpoint_id IS NOT NULL
     ), due AS (
       -- Each endpoint's earliest due deliveries, no more than what its share of tries in flight leaves,
       -- taken in turns (every endpoint's first, then every endpoint's second, ...) so that when the claim
       -- cannot take them all a busy endpoint does not crowd out the others; earliest first within a turn.
       -- (ROWS: with the default RANGE frame, rows due at the same instant are peers and all of them are read.)
       SELECT d.id, d.next_try_at, d.turn
         FROM pending_endpoint p
         LEFT JOIN busy b ON b.endpoint_id = p.endpoint_id
         CROSS JOIN LATERAL (
           SELECT d.id, d.next_try_at, row_number() OVER (ORDER BY d.next_try_at ROWS UNBOUNDED PRECEDING) AS turn FROM webhook_deliveries d
            WHERE d.endpoint_id = p.endpoint_id AND d.status = 'pending' AND d.next_try_at <= now()
              AND (d.locked_until IS NULL OR d.locked_until < now())
            ORDER BY d.next_try_at
            LIMIT greatest($2 - coalesce(b.in_flight, 0), 0)) d
        WHERE p.endpoint_id IS NOT NULL
        ORDER BY d.turn, d.next_try_at
        LIMIT $1 * 4
     ), picked AS (
       SELECT d.id FROM webhook_deliveries d JOIN due ON due.id = d.id
        WHERE d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until < now())
        ORDER BY due.turn, due.next_try_at
        LIMIT $1
        FOR UPDATE OF d SKIP LOCKED
     ), claimed AS (
       -- No indexed column changes (updated_at is one: webhook_deliveries_failed_idx), so on a page with room (fillfactor
       -- 80, migration 044) the claim is a HOT update and writes no index entry. updated_at moves with the try's outcome.
       UPDATE webhook_deliveries d SET locked_until = now() + make_interval(secs => $3), tries = d.tries + 1
         FROM picked WHERE d.id = picked.id
       RETURNING d.id, d.event_id, d.endpoint_id, d.environment, d.tries
     )
     SELECT c.id, c.event_id, c.endpoint_id, c.environment, c.tries, e.payload, w.url, w.secret, w.previous_secret,
            w.previous_secret_expires_at, w.status AS endpoint_status
       FROM claimed c JOIN events e ON e.id = c.event_id JOIN webhook_endpoints w ON w.id = c.endpoint_id`,
    [limit, perEndpointMax, claimTtlS, [...inFlightByEndpoint.keys()], [...inFlightByEndpoint.values()]],
    'delivery_claim',
  );
}

/** One try of a webhook delivery (a row of webhook_delivery_tries). */
export interface DeliveryTry {
  deliveryId: string;
  tryNumber: number;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
  workerId: string;
}

export const insertTry = (tx: Queryable, t: DeliveryTry) =>
  tx.query(
    `INSERT INTO webhook_delivery_tries (delivery_id, try_number, http_status, latency_ms, error, response_excerpt, worker_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [t.deliveryId, t.tryNumber, t.httpStatus, t.latencyMs, t.error, t.responseExcerpt, t.workerId],
  );

/** A successful try (no error): the try and the delivery's new state in one statement (one round trip, atomic). */
export const recordDelivered = (db: Queryable, t: Omit<DeliveryTry, 'error' | 'httpStatus'> & { httpStatus: number }) =>
  db.query(
    `WITH try AS (
       INSERT INTO webhook_delivery_tries (delivery_id, try_number, http_status, latency_ms, error, response_excerpt, worker_id)
       VALUES ($1, $2, $3, $4, NULL, $5, $6)
     )
     UPDATE webhook_deliveries SET status = '${DELIVERED.to}', delivered_at = now(), locked_until = NULL, last_http_status = $3, last_error = NULL, updated_at = now()
      WHERE id = $1 AND status = '${DELIVERED.from}'`,
    [t.deliveryId, t.tryNumber, t.httpStatus, t.latencyMs, t.responseExcerpt, t.workerId],
    'delivery_delivered',
  );

/** A successful try, as recordDeliveredBatch takes it. */
export type DeliveredTry = Omit<DeliveryTry, 'error' | 'httpStatus' | 'workerId'> & { httpStatus: number };

/**
 * Several successful tries of one worker in one statement (one round trip, one commit): each try logged,
 * each delivery delivered if it is still pending, as recordDelivered does one at a time.
 */
export const recordDeliveredBatch = (db: Queryable, tries: readonly DeliveredTry[], workerId: string) =>
  db.query(
    `WITH given AS (
       SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[], $4::int[], $5::text[]) AS g(delivery_id, try_number, http_status, latency_ms, response_excerpt)
     ), try AS (
       INSERT INTO webhook_delivery_tries (delivery_id, try_number, http_status, latency_ms, error, response_excerpt, worker_id)
       SELECT delivery_id, try_number, http_status, latency_ms, NULL, response_excerpt, $6 FROM given
     )
     UPDATE webhook_deliveries d SET status = '${DELIVERED.to}', delivered_at = now(), locked_until = NULL, last_http_status = g.http_status, last_error = NULL, updated_at = now()
       FROM given g WHERE d.id = g.delivery_id AND d.status = '${DELIVERED.from}'`,
    [
      tries.map((t) => t.deliveryId),
      tries.map((t) => t.tryNumber),
      tries.map((t) => t.httpStatus),
      tries.map((t) => t.latencyMs),
      tries.map((t) => t.responseExcerpt),
      workerId,
    ],
    'delivery_delivered_batch',
  );

/** How long before failing_since a delivery that succeeded after it can have been created (the retry schedule spans about 35 h). */
const DELIVERY_SPAN_S = 2 * 86_400;

/**
 * A failed try's note on its endpoint (DESIGN: an endpoint whose deliveries have all failed for failingForS
 * is disabled), as CTEs for the statement that records the try; the last, endpoint_failure, returns
 * `disabled` when it wrote. failing_since marks a failure with no success known after it. It is written
 * only by failures, and only rarely, so successes and failures racing on a busy endpoint never queue on its
 * row: the first failure sets it; a failure that finds it failingForS old looks for a delivery that
 * succeeded since, and moves it to the last such success, or, finding none, disables the endpoint.
 */
function noteEndpointFailure(s: Statement, endpointId: string, failingForS: number, reason: string): string {
  const id = s.p(endpointId, 'uuid');
  return `endpoint AS (
       SELECT id, failing_since FROM webhook_endpoints
        WHERE id = ${id} AND status = '${ENDPOINT_GIVES_UP.from}' AND (failing_since IS NULL OR failing_since <= now() - make_interval(secs => ${s.p(failingForS, 'double precision')}))
        FOR UPDATE
     ), last_success AS (
       SELECT max(d.delivered_at) AS at FROM webhook_deliveries d JOIN endpoint e ON d.endpoint_id = e.id
        WHERE d.status = 'delivered' AND d.delivered_at >= e.failing_since AND d.created_at >= e.failing_since - make_interval(secs => ${s.p(DELIVERY_SPAN_S, 'double precision')})
     ), decided AS (
       SELECT e.id, e.failing_since IS NOT NULL AND (SELECT at FROM last_success) IS NULL AS disable,
              CASE WHEN e.failing_since IS NULL THEN now() ELSE coalesce((SELECT at FROM last_success), e.failing_since) END AS failing_since
         FROM endpoint e
     ), endpoint_failure AS (
       UPDATE webhook_endpoints w
          SET failing_since = decided.failing_since,
              status = CASE WHEN decided.disable THEN '${ENDPOINT_GIVES_UP.to}' ELSE w.status END,
              disabled_reason = CASE WHEN decided.disable THEN ${s.p(reason, 'text')} ELSE w.disabled_reason END,
              updated_at = CASE WHEN decided.disable THEN now() ELSE w.updated_at END
         FROM decided WHERE w.id = decided.id
       RETURNING decided.disable AS disabled
     )`;
}

/**
 * A failed try in one statement (one round trip, atomic): the try logged, the endpoint's failure noted
 * (noteEndpointFailure), and the delivery retried after retryInS (it stays pending) or, with null, failed
 * if it is still pending (as markFailed). True when this disabled the endpoint.
 */
export async function recordFailedTry(
  db: Queryable,
  t: DeliveryTry,
  endpointId: string,
  retryInS: number | null,
  failingForS: number,
  reason: string,
): Promise<boolean> {
  const s = new Statement();
  const deliveryId = s.p(t.deliveryId, 'uuid');
  const httpStatus = s.p(t.httpStatus, 'integer');
  const error = s.p(t.error, 'text');
  const retryIn = s.p(retryInS, 'double precision');
  const rows = await db.query<{ disabled: boolean }>(
    `WITH try AS (
       INSERT INTO webhook_delivery_tries (delivery_id, try_number, http_status, latency_ms, error, response_excerpt, worker_id)
       VALUES (${deliveryId}, ${s.p(t.tryNumber, 'integer')}, ${httpStatus}, ${s.p(t.latencyMs, 'integer')}, ${error}, ${s.p(t.responseExcerpt, 'text')}, ${s.p(t.workerId, 'text')})
     ), delivery AS (
       UPDATE webhook_deliveries
          SET status = CASE WHEN ${retryIn} IS NULL THEN '${GIVES_UP.to}' ELSE status END,
              next_try_at = CASE WHEN ${retryIn} IS NULL THEN next_try_at ELSE now() + make_interval(secs => ${retryIn}) END,
              locked_until = NULL, last_http_status = ${httpStatus}, last_error = ${error}, updated_at = now()
        WHERE id = ${deliveryId} AND (${retryIn} IS NOT NULL OR status = '${GIVES_UP.from}')
     ), ${noteEndpointFailure(s, endpointId, failingForS, reason)}
     SELECT coalesce((SELECT disabled FROM endpoint_failure), false) AS disabled`,
    s.params,
    'delivery_failed',
  );
  return rows[0]?.disabled ?? false;
}

/** A claimed (so pending) delivery that will not be tried again. */
export const markFailed = (
  tx: Queryable,
  id: string,
  status: 'failed' | 'skipped',
  httpStatus: number | null,
  error: string | null,
) =>
  // Only a pending delivery: a claim that lapsed mid-try lets a second worker send it too, and the first
  // answer to be recorded wins (delivered never becomes failed, nor failed delivered).
  tx.query(
    `UPDATE webhook_deliveries SET status = $2, locked_until = NULL, last_http_status = $3, last_error = $4, updated_at = now() WHERE id = $1 AND status = 'pending'`,
    [id, deliveryMachine.transition('pending', status).to, httpStatus, error],
  );

export const disableEndpoint = (tx: Queryable, endpointId: string, reason: string) =>
  tx.query(
    `UPDATE webhook_endpoints SET status = '${ENDPOINT_DISABLED}', disabled_reason = $2, updated_at = now()
      WHERE id = $1 AND status IN (${sqlList(webhookEndpointMachine.fromStatusesTo(ENDPOINT_DISABLED))})`,
    [endpointId, reason],
  );

/** Replays keep the event id: the event's deliveries go back to pending, due now; endpoints added since get one too. */
export async function replayEvent(tx: Queryable, eventId: string): Promise<number> {
  // FOR KEY SHARE: an event the archiver (retention.ts) holds is waited for, then found gone (-1, a 404), rather
  // than its new delivery failing the foreign key; one replayed first keeps it out of that archive batch.
  const events = await tx.query<{ id: string }>('SELECT id FROM events WHERE id = $1 FOR KEY SHARE', [eventId]);
  if (events.length === 0) return -1;
  // The endpoints of the key that caused it; an event no key caused (a settlement, a payment link's session) goes
  // to every endpoint of its merchant and environment, as when it was written (src/events/outbox-store.ts).
  await tx.query(
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, environment, status)
     SELECT gen_random_uuid(), e.id, w.id, w.merchant_id, w.environment, '${REPLAY_INITIAL}'
       FROM events e JOIN webhook_endpoints w
         ON w.api_key_id = e.api_key_id
         OR (e.api_key_id IS NULL AND w.merchant_id = e.merchant_id AND w.environment = e.environment)
      WHERE e.id = $1 AND w.status = 'active'
     ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
    [eventId],
  );
  const rows = await tx.query(
    // A replay is one more try, numbered after the earlier ones in the log; a failed replay waits for the next replay.
    `UPDATE webhook_deliveries d SET status = '${REPLAYED}', next_try_at = now(), locked_until = NULL, updated_at = now()
       FROM webhook_endpoints w
      WHERE d.endpoint_id = w.id AND w.status = 'active' AND d.event_id = $1
        AND d.status IN (${sqlList(deliveryMachine.fromStatusesTo(REPLAYED))}) AND (d.status <> 'pending' OR d.locked_until IS NULL)
      RETURNING d.id`,
    [eventId],
  );
  if (rows.length > 0) tx.signal(DELIVERIES_DUE_CHANNEL);
  return rows.length;
}

export const failedEventIdsSince = (db: Queryable, since: Date, merchantId: string | null) =>
  db.query<{ event_id: string }>(
    `SELECT DISTINCT event_id FROM webhook_deliveries WHERE status = 'failed' AND updated_at >= $1 AND ($2::uuid IS NULL OR merchant_id = $2)`,
    [since, merchantId],
  );

export const listEvents = (db: Queryable, filter: { merchantId: string | null; limit: number }) =>
  db.query<{
    id: string;
    type: string;
    merchant_id: string;
    environment: string;
    object_id: string;
    created_at: Date;
    deliveries: string | null;
  }>(
    `SELECT e.id, e.type, e.merchant_id, e.environment, e.object_id, e.created_at,
            (SELECT string_agg(d.status || CASE WHEN d.last_http_status IS NULL THEN '' ELSE '(' || d.last_http_status || ')' END || ' x' || d.tries, ', ')
               FROM webhook_deliveries d WHERE d.event_id = e.id) AS deliveries
       FROM events e WHERE ($1::uuid IS NULL OR e.merchant_id = $1) ORDER BY e.created_at DESC, e.id DESC LIMIT $2`,
    [filter.merchantId, filter.limit],
  );

export const listTries = (db: Queryable, eventId: string) =>
  db.query<{
    endpoint_id: string;
    url: string;
    try_number: number;
    tried_at: Date;
    http_status: number | null;
    latency_ms: number;
    error: string | null;
    response_excerpt: string | null;
  }>(
    `SELECT d.endpoint_id, w.url, a.try_number, a.tried_at, a.http_status, a.latency_ms, a.error, a.response_excerpt
       FROM webhook_delivery_tries a JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.event_id = $1 ORDER BY a.tried_at, a.id`,
    [eventId],
  );

/** The delivery log of one endpoint: each delivery with its latest try. */
export const endpointDeliveries = (db: Queryable, endpointId: string, limit: number) =>
  db.query<{
    id: string;
    event_id: string;
    type: string;
    status: string;
    tries: number;
    last_http_status: number | null;
    last_error: string | null;
    updated_at: Date;
    latency_ms: number | null;
    response_excerpt: string | null;
  }>(
    `SELECT d.id, d.event_id, e.type, d.status, d.tries, d.last_http_status, d.last_error, d.updated_at,
            t.latency_ms, t.response_excerpt
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       LEFT JOIN LATERAL (SELECT latency_ms, response_excerpt FROM webhook_delivery_tries a WHERE a.delivery_id = d.id ORDER BY a.id DESC LIMIT 1) t ON true
      WHERE d.endpoint_id = $1 ORDER BY d.created_at DESC LIMIT $2`,
    [endpointId, limit],
  );

export const failedEventIdsForEndpoint = (db: Queryable, endpointId: string) =>
  db.query<{ event_id: string }>(
    `SELECT event_id FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'failed'`,
    [endpointId],
  );

export async function eventBelongsTo(
  db: Queryable,
  eventId: string,
  merchantId: string,
  environment: string,
): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM events WHERE id = $1 AND merchant_id = $2 AND environment = $3', [
    eventId,
    merchantId,
    environment,
  ]);
  return rows.length > 0;
}

export async function findEventPayload(db: Queryable, eventId: string): Promise<string | null> {
  const rows = await db.query<{ payload: string }>('SELECT payload FROM events WHERE id = $1', [eventId]);
  return rows[0]?.payload ?? null;
}
