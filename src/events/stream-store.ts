// The event stream's SQL (src/events/stream.ts): where "now" is, and the next events of a merchant's
// environment after a cursor, below the horizon of ended transactions (migration 026).
import type { Queryable } from '../db/index.ts';

export interface StreamStart {
  /** The oldest transaction still running: every event below it has committed (or never will). */
  xmin: string;
  /** Every transaction from here on had not started. */
  xmax: string;
  /** The snapshot itself (pg_snapshot text): which transactions between xmin and xmax had committed. */
  snapshot: string;
}

export async function streamStart(db: Queryable): Promise<StreamStart> {
  const rows = await db.read<StreamStart>(
    'event_stream_start',
    'SELECT pg_snapshot_xmin(s)::text AS xmin, pg_snapshot_xmax(s)::text AS xmax, s::text AS snapshot FROM pg_current_snapshot() AS s',
  );
  return rows[0]!;
}

export interface StreamQuery {
  merchantId: string;
  environment: string;
  types: string[] | null;
  /** After this (xact_id, id); id '' is before every event of that transaction. */
  after: { xact: string; id: string };
  /** Leave out the events of transactions this snapshot sees as committed (a stream that starts now). */
  excludeVisibleIn: string | null;
  limit: number;
}

export interface StreamRow {
  xact_id: string;
  id: string;
  type: string;
  payload: string;
}

/**
 * The next events after the cursor in (xact_id, id) order, only those of transactions older than the
 * statement's snapshot's xmin (all ended: nothing can be inserted below it any more); and that horizon.
 */
export async function streamBatch(db: Queryable, q: StreamQuery): Promise<{ rows: StreamRow[]; horizon: string }> {
  const rows = await db.read<StreamRow & { horizon: string }>(
    'event_stream_batch',
    `SELECT h.horizon::text AS horizon, e.xact_id::text AS xact_id, e.id, e.type, e.payload
       FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS horizon) h
       LEFT JOIN LATERAL (
         SELECT xact_id, id, type, payload FROM events
          WHERE merchant_id = $1 AND environment = $2
            AND (xact_id, id) > ($3::xid8, $4::text) AND xact_id < h.horizon
            AND ($5::text[] IS NULL OR type = ANY($5::text[]))
            AND ($6::pg_snapshot IS NULL OR NOT pg_visible_in_snapshot(xact_id, $6::pg_snapshot))
          ORDER BY xact_id, id
          LIMIT $7
       ) e ON true`,
    [q.merchantId, q.environment, q.after.xact, q.after.id, q.types, q.excludeVisibleIn, q.limit],
  );
  const horizon = rows[0]!.horizon;
  return { rows: rows.filter((r) => r.id !== null), horizon };
}
