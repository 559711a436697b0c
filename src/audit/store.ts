// The audit log's SQL: append a row, list the latest. The table is append-only (a trigger refuses UPDATE
// and DELETE).
import type { Queryable } from '../db/index.ts';

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
    [row.actorType, row.actorId, row.actorEmail, row.merchantId, row.action, row.objectType, row.objectId, row.before, row.after],
  );

export const listAudit = (db: Queryable, filter: { merchantId: string | null; limit: number }) =>
  db.query<{ id: number; actor_type: string; actor_email: string | null; actor_id: string; merchant_id: string | null; action: string; object_type: string; object_id: string; before: unknown; after: unknown; created_at: Date }>(
    `SELECT id, actor_type, actor_email, actor_id, merchant_id, action, object_type, object_id, before, after, created_at
       FROM audit_log WHERE ($1::uuid IS NULL OR merchant_id = $1) ORDER BY id DESC LIMIT $2`,
    [filter.merchantId, filter.limit],
  );
