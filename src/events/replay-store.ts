// The SQL of replays over the API (src/events/replay.ts): the events of a time range, queuing chosen
// events' deliveries again in one statement, and the per-key window of range replays (migration 026).
import type { Queryable } from '../db/index.ts';
import { sqlList } from '../lib/state-machine.ts';
import { DELIVERIES_DUE_CHANNEL, deliveryMachine } from './model.ts';

// A replay puts a delivery back to pending, due now (any status may be replayed, the table says so).
const REPLAYED = deliveryMachine.transition('pending', 'pending').to;
const REPLAY_INITIAL = deliveryMachine.initialStatus('pending');
/** What only_failed replays: deliveries that gave up or were not sent (a disabled endpoint). */
const NOT_DELIVERED = ['failed', 'skipped'] as const;
for (const status of NOT_DELIVERED) deliveryMachine.transition(status, REPLAYED);

export interface RangeQuery {
  merchantId: string;
  environment: string;
  createdFrom: Date;
  createdBefore: Date;
  type: string | null;
  onlyFailed: boolean;
  /** After this event of the range, in (created_at, id) order. */
  after: { createdAt: Date; id: string } | null;
}

/** The events of the range, oldest first, at most `limit`. */
export const rangeEvents = (db: Queryable, q: RangeQuery, limit: number) =>
  db.query<{ id: string; created_at: Date }>(
    `SELECT e.id, e.created_at FROM events e
      WHERE e.merchant_id = $1 AND e.environment = $2 AND e.created_at >= $3 AND e.created_at < $4
        AND ($5::text IS NULL OR e.type = $5)
        AND (NOT $6::boolean OR EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status IN (${sqlList(NOT_DELIVERED)})))
        AND ($7::timestamptz IS NULL OR (e.created_at, e.id) > ($7::timestamptz, $8::text))
      ORDER BY e.created_at, e.id
      LIMIT $9`,
    [
      q.merchantId,
      q.environment,
      q.createdFrom,
      q.createdBefore,
      q.type,
      q.onlyFailed,
      q.after?.createdAt ?? null,
      q.after?.id ?? null,
      limit,
    ],
  );

export interface QueuedDelivery {
  id: string;
  event_id: string;
  endpoint_id: string;
  url: string;
}

/**
 * Queues the events again, keeping their ids, in one statement: with onlyFailed, each event's deliveries
 * that failed or were skipped, to endpoints still active; otherwise every delivery to an active endpoint
 * (one being tried right now is left to finish) and a new one to each active endpoint of the event's key
 * added since (as store.ts replayEvent), or of the merchant when no key caused the event. Only the merchant's endpoints of the environment.
 */
export async function queueReplays(
  tx: Queryable,
  merchantId: string,
  environment: string,
  eventIds: readonly string[],
  onlyFailed: boolean,
): Promise<QueuedDelivery[]> {
  const queued = await tx.query<QueuedDelivery>(
    `WITH picked AS (
       SELECT e.id, e.api_key_id FROM events e WHERE e.id = ANY($1::text[]) AND e.merchant_id = $2 AND e.environment = $3
     ), added AS (
       INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, environment, status)
       SELECT gen_random_uuid(), p.id, w.id, w.merchant_id, w.environment, '${REPLAY_INITIAL}'
         -- An event no key caused (a payment link's session, the account's) goes to every endpoint, as outbox-store.ts fans it out.
         FROM picked p JOIN webhook_endpoints w ON (w.api_key_id = p.api_key_id OR p.api_key_id IS NULL)
          AND w.merchant_id = $2 AND w.environment = $3 AND w.status = 'active'
        WHERE NOT $4::boolean
       ON CONFLICT (event_id, endpoint_id) DO NOTHING
       RETURNING id, event_id, endpoint_id
     ), reset AS (
       UPDATE webhook_deliveries d SET status = '${REPLAYED}', next_try_at = now(), locked_until = NULL, updated_at = now()
         FROM picked p, webhook_endpoints w
        WHERE d.event_id = p.id AND d.endpoint_id = w.id AND w.status = 'active' AND w.merchant_id = $2 AND w.environment = $3
          AND CASE WHEN $4::boolean THEN d.status IN (${sqlList(NOT_DELIVERED)})
                   ELSE d.status IN (${sqlList(deliveryMachine.fromStatusesTo(REPLAYED))}) AND (d.status <> 'pending' OR d.locked_until IS NULL) END
       RETURNING d.id, d.event_id, d.endpoint_id
     )
     SELECT q.id, q.event_id, q.endpoint_id, w.url
       FROM (SELECT * FROM added UNION ALL SELECT * FROM reset) q JOIN webhook_endpoints w ON w.id = q.endpoint_id
      ORDER BY q.event_id, w.url, q.id`,
    [eventIds, merchantId, environment, onlyFailed],
  );
  if (queued.length > 0) tx.signal(DELIVERIES_DUE_CHANNEL);
  return queued;
}

/**
 * Takes the key's range-replay window for `intervalS`, unless one is still running: null when taken,
 * else the seconds until it ends. Concurrent claims queue on the key's row; the one that commits first wins.
 */
export async function claimReplayWindow(tx: Queryable, apiKeyId: string, intervalS: number): Promise<number | null> {
  const rows = await tx.query<{ taken: boolean; wait_s: number | null }>(
    `WITH taken AS (
       INSERT INTO event_replay_windows (api_key_id, until) VALUES ($1, now() + make_interval(secs => $2))
       ON CONFLICT (api_key_id) DO UPDATE SET until = EXCLUDED.until WHERE event_replay_windows.until <= now()
       RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM taken) AS taken,
            (SELECT extract(epoch FROM until - now())::float8 FROM event_replay_windows WHERE api_key_id = $1) AS wait_s`,
    [apiKeyId, intervalS],
  );
  const row = rows[0]!;
  return row.taken ? null : Math.max(row.wait_s ?? intervalS, 0);
}
