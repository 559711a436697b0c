// The expiry sweep: sessions past their time stop taking payments; their pending attempts expire.
import type { Db } from '../db/index.ts';
import { expireSession } from './payments.ts';
import { dueSessionIds } from './store.ts';

export const EXPIRY_BATCH_MAX = 100;

/** Expires up to one batch of due sessions, each in its own transaction; returns how many it looked at. */
export async function expireDueSessions(db: Db, checkoutUrlHost: string): Promise<number> {
  const due = await dueSessionIds(db, EXPIRY_BATCH_MAX);
  for (const { id } of due) {
    await db.transaction((tx) => expireSession(tx, id, { checkoutUrlHost, source: 'expiry' }));
  }
  return due.length;
}
