// The audit log: every operator and approver action with who, what, when, before and after, written in
// the transaction of the action itself. Append-only in storage (a trigger refuses UPDATE and DELETE); its
// SQL is in store.ts.
import type { Queryable } from '../db/index.ts';
import * as store from './store.ts';

export interface Actor {
  /** api_key: a merchant's API request (id: the key's id), e.g. an event replay (migration 026). */
  type: 'operator' | 'user' | 'system' | 'api_key';
  id: string;
  email: string | null;
}

export const audit = (
  tx: Queryable,
  entry: { actor: Actor; merchantId: string | null; action: string; objectType: string; objectId: string; before: unknown; after: unknown },
) =>
  store.insertAudit(tx, {
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    actorEmail: entry.actor.email,
    merchantId: entry.merchantId,
    action: entry.action,
    objectType: entry.objectType,
    objectId: entry.objectId,
    before: entry.before === undefined ? null : JSON.stringify(entry.before),
    after: entry.after === undefined ? null : JSON.stringify(entry.after),
  });

export const listAudit = (db: Queryable, filter: { merchantId: string | null; limit: number }) => store.listAudit(db, filter);
