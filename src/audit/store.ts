// The audit log's SQL: append a row, list the latest. The table is append-only (a trigger refuses UPDATE
// and DELETE).
import type { Queryable } from '../db/index.ts';
import type { ConsolePageQuery } from '../lib/list-paging.ts';

export interface AuditRow {
  actorType: string;
  actorId: string;
  actorEmail: string | null;
  merchantId: string | null;
  action: string;
  objectType: string;
  objectId: string;
  /** JSON text, or null. */
  before: string | null;
  after: string | null;
}

export const insertAudit = (tx: Queryable, row: AuditRow) =>
  tx.query(
    `INSERT INTO audit_log (actor_type, actor_id, actor_email, merchant_id, action, object_type, object_id, before, after)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      row.actorType,
      row.actorId,
      row.actorEmail,
      row.merchantId,
      row.action,
      row.objectType,
      row.objectId,
      row.before,
      row.after,
    ],
  );

export interface AuditLogRow {
  id: number;
  actor_type: string;
  actor_email: string | null;
  actor_id: string;
  merchant_id: string | null;
  merchant_name: string | null;
  action: string;
  object_type: string;
  object_id: string;
  before: unknown;
  after: unknown;
  created_at: Date;
}

/** The page: after the row (created_at, id) the page before ended on (only its id is compared), at most `limit` rows. */
export interface AuditFilter extends ConsolePageQuery {
  /** Matched in the action, the object id, the actor's email or id and the merchant's name (ILIKE pattern, wildcards escaped). */
  qPattern: string | null;
  /** The actor's id, or its email (case-insensitive). */
  actor: string | null;
  /** The merchant's id, or a pattern of its name (ILIKE, wildcards escaped). */
  merchantId: string | null;
  merchantNamePattern: string | null;
  /** An action ("payout_settings.update") or a family of them ("payout_settings"). */
  action: string | null;
  objectType: string | null;
  objectId: string | null;
  /** From this instant (inclusive) to that one (exclusive). */
  from: Date | null;
  before: Date | null;
}

/** Audit rows, newest first (keyset on the id, which grows with every row written: exact and indexed), narrowed by the filters given. */
export const listAudit = (db: Queryable, f: AuditFilter) =>
  db.query<AuditLogRow>(
    `SELECT a.id, a.actor_type, a.actor_email, a.actor_id, a.merchant_id, m.name AS merchant_name, a.action, a.object_type, a.object_id, a.before, a.after, a.created_at
       FROM audit_log a LEFT JOIN merchants m ON m.id = a.merchant_id
      WHERE ($1::text IS NULL OR a.action ILIKE $1 ESCAPE '\\' OR a.object_id ILIKE $1 ESCAPE '\\' OR a.actor_email ILIKE $1 ESCAPE '\\' OR a.actor_id ILIKE $1 ESCAPE '\\' OR m.name ILIKE $1 ESCAPE '\\')
        AND ($2::text IS NULL OR a.actor_id = $2 OR lower(a.actor_email) = lower($2))
        AND ($3::uuid IS NULL OR a.merchant_id = $3::uuid)
        AND ($4::text IS NULL OR a.action = $4 OR left(a.action, length($4) + 1) = $4 || '.')
        AND ($5::text IS NULL OR a.object_type = $5)
        AND ($6::text IS NULL OR a.object_id = $6)
        AND ($7::timestamptz IS NULL OR a.created_at >= $7::timestamptz)
        AND ($8::timestamptz IS NULL OR a.created_at < $8::timestamptz)
        AND ($9::bigint IS NULL OR a.id < $9::bigint)
        AND ($11::text IS NULL OR m.name ILIKE $11 ESCAPE '\\')
      ORDER BY a.id DESC LIMIT $10`,
    [
      f.qPattern,
      f.actor,
      f.merchantId,
      f.action,
      f.objectType,
      f.objectId,
      f.from,
      f.before,
      f.cursor?.id ?? null,
      f.limit,
      f.merchantNamePattern,
    ],
  );

/**
 * The distinct values of a column (action or object_type) the log holds, for the filters' choices: a loose index
 * scan (one index probe per value, migration 030's indexes), not a read of every row. `column` is one of two
 * fixed names, never input.
 */
export async function distinctValues(db: Queryable, column: 'action' | 'object_type'): Promise<string[]> {
  const rows = await db.query<{ v: string }>(
    `WITH RECURSIVE vals(v) AS (
       SELECT min(${column}) FROM audit_log
       UNION ALL
       SELECT (SELECT min(${column}) FROM audit_log WHERE ${column} > vals.v) FROM vals WHERE vals.v IS NOT NULL
     ) SELECT v FROM vals WHERE v IS NOT NULL`,
  );
  return rows.map((row) => row.v);
}
