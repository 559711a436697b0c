// The audit log: every operator and approver action with who, what, when, before and after, written in
// the transaction of the action itself. Append-only in storage (a trigger refuses UPDATE and DELETE).
import type { Queryable } from '../db/index.ts';

export interface Actor {
  type: 'operator' | 'user' | 'system';
  id: string;
  email: string | null;
}

export const audit = (
  tx: Queryable,
  entry: { actor: Actor; merchantId: string | null; action: string; objectType: string; objectId: string; before: unknown; after: unknown },
) =>
  tx.query(
    `INSERT INTO audit_log (actor_type, actor_id, actor_email, merchant_id, action, object_type, object_id, before, after)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      entry.actor.type,
      entry.actor.id,
      entry.actor.email,
      entry.merchantId,
      entry.action,
      entry.objectType,
      entry.objectId,
      entry.before === undefined ? null : JSON.stringify(entry.before),
      entry.after === undefined ? null : JSON.stringify(entry.after),
    ],
  );

export const listAudit = (db: Queryable, filter: { merchantId: string | null; limit: number }) =>
  db.query<{ id: number; actor_type: string; actor_email: string | null; actor_id: string; merchant_id: string | null; action: string; object_type: string; object_id: string; before: unknown; after: unknown; created_at: Date }>(
    `SELECT id, actor_type, actor_email, actor_id, merchant_id, action, object_type, object_id, before, after, created_at
       FROM audit_log WHERE ($1::uuid IS NULL OR merchant_id = $1) ORDER BY id DESC LIMIT $2`,
    [filter.merchantId, filter.limit],
  );
