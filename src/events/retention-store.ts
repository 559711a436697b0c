// The SQL of event retention (src/events/retention.ts): one batch of old events whose deliveries have all
// finished, locked with their deliveries, their tries, and their deletion, all in the batch's transaction.
import type { Queryable } from '../db/index.ts';
import { sqlList } from '../lib/state-machine.ts';
import { deliveryMachine } from './model.ts';

/** A delivery in this status is not finished (claimed or waiting for its next try): its event stays. */
const UNFINISHED = deliveryMachine.initialStatus('pending');
/** The finished statuses (delivered, failed, skipped): every other status of the table. */
const FINISHED = deliveryMachine.statuses.filter((status) => status !== UNFINISHED);

/** Key of the advisory lock that makes one archiver run at a time across every process of the database. */
const ARCHIVE_LOCK = 'sika:archive-events';

/** True when this transaction is the one archiver running now; false when another process's holds the lock. */
export async function takeArchiveLock(tx: Queryable): Promise<boolean> {
  const rows = await tx.query<{ taken: boolean }>(
    'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS taken',
    [ARCHIVE_LOCK],
  );
  return rows[0]?.taken === true;
}

export interface ArchivedEventRow {
  id: string;
  merchant_id: string;
  environment: string;
  api_key_id: string | null;
  type: string;
  object_type: string;
  object_id: string;
  object_version: number;
  payload: string;
  created_at: Date;
}

/**
 * The next events, in id order after `afterId`, older than both bounds (ids are time-sortable, so the
 * primary key's index is the scan and no index on created_at is written on the hot path), none of whose
 * deliveries is pending, locked FOR UPDATE: a replay adding a delivery to one waits for this transaction.
 */
export const lockOldFinishedEvents = (
  tx: Queryable,
  q: { idBelow: string; createdBefore: Date; afterId: string; limit: number },
) =>
  tx.query<ArchivedEventRow>(
    `SELECT e.id, e.merchant_id, e.environment, e.api_key_id, e.type, e.object_type, e.object_id, e.object_version,
            e.payload, e.created_at
       FROM events e
      WHERE e.id < $1 AND e.id > $2 AND e.created_at < $3
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = '${UNFINISHED}')
      ORDER BY e.id
      LIMIT $4
      FOR UPDATE OF e`,
    [q.idBelow, q.afterId, q.createdBefore, q.limit],
  );

export interface ArchivedDeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: string;
  tries: number;
  last_http_status: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  delivered_at: Date | null;
}

/**
 * The events' deliveries, locked FOR UPDATE and read as committed now: a replay that put one back to
 * pending since the events were chosen shows here (its event then stays), and none can start until commit.
 */
export const lockDeliveries = (tx: Queryable, eventIds: readonly string[]) =>
  tx.query<ArchivedDeliveryRow>(
    `SELECT id, event_id, endpoint_id, status, tries, last_http_status, last_error, created_at, updated_at, delivered_at
       FROM webhook_deliveries WHERE event_id = ANY($1::text[])
      ORDER BY event_id, created_at, id
      FOR UPDATE`,
    [eventIds],
  );

export interface ArchivedTryRow {
  delivery_id: string;
  try_number: number;
  tried_at: Date;
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string | null;
  worker_id: string;
}

export const triesOf = (tx: Queryable, deliveryIds: readonly string[]) =>
  tx.query<ArchivedTryRow>(
    `SELECT delivery_id, try_number, tried_at, http_status, latency_ms, error, response_excerpt, worker_id
       FROM webhook_delivery_tries WHERE delivery_id = ANY($1::uuid[])
      ORDER BY delivery_id, try_number, id`,
    [deliveryIds],
  );

/**
 * Deletes the events with their deliveries and tries, in one statement (the foreign keys are checked at
 * its end); only deliveries still finished, so an event that gained a pending one is never deleted (the
 * caller left it out already; this is the statement's own guard). The number of events deleted.
 */
export async function deleteArchived(tx: Queryable, eventIds: readonly string[]): Promise<number> {
  const rows = await tx.query<{ deleted: number }>(
    `WITH doomed AS (
       SELECT e.id FROM events e
        WHERE e.id = ANY($1::text[])
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status NOT IN (${sqlList(FINISHED)}))
     ), deliveries AS (
       SELECT d.id FROM webhook_deliveries d JOIN doomed ON doomed.id = d.event_id
     ), tries AS (
       DELETE FROM webhook_delivery_tries t USING deliveries WHERE t.delivery_id = deliveries.id
     ), gone_deliveries AS (
       DELETE FROM webhook_deliveries d USING deliveries WHERE d.id = deliveries.id
     ), gone AS (
       DELETE FROM events e USING doomed WHERE e.id = doomed.id RETURNING 1
     )
     SELECT count(*)::int AS deleted FROM gone`,
    [eventIds],
  );
  return rows[0]?.deleted ?? 0;
}
