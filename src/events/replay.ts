// The delivery log and replays: an endpoint's deliveries, replaying its failed ones, replaying one event
// of the merchant's environment (the dashboard), and replaying any event (the CLI). Each replay is its own
// transaction.
import type { Db, Queryable } from '../db/index.ts';
import * as store from './store.ts';

export const endpointDeliveries = (db: Queryable, endpointId: string, limit: number) => store.endpointDeliveries(db, endpointId, limit);

/** Queues every failed delivery of the endpoint again; returns how many events were replayed. */
export async function replayFailedForEndpoint(db: Db, endpointId: string): Promise<number> {
  const failed = await store.failedEventIdsForEndpoint(db, endpointId);
  for (const { event_id } of failed) await db.transaction((tx) => store.replayEvent(tx, event_id));
  return failed.length;
}

/** Replays an event of the merchant's environment; false (nothing done) for a foreign or unknown event. */
export async function replayMerchantEvent(db: Db, merchantId: string, environment: string, eventId: string): Promise<boolean> {
  if (!(await store.eventBelongsTo(db, eventId, merchantId, environment))) return false;
  await db.transaction((tx) => store.replayEvent(tx, eventId));
  return true;
}

/** Replays any event (the operator's CLI): how many deliveries were queued, -1 for an unknown event. */
export const replayEvent = (db: Db, eventId: string): Promise<number> => db.transaction((tx) => store.replayEvent(tx, eventId));
