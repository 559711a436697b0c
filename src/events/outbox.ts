// The transactional outbox: an event is inserted in the same transaction as the change it announces,
// so it exists if and only if the change committed. Delivery (signing, retries) reads from here. The
// statements are in outbox-store.ts.
import type { Queryable } from '../db/index.ts';
import { newId } from '../lib/ids.ts';
import type { EventInput, EventPayload } from './model.ts';
import * as store from './outbox-store.ts';

export type { EventInput, EventPayload } from './model.ts';

/** The payload an event carries, built before it is written (its id is the webhook-id). */
export function eventPayload(input: EventInput): EventPayload {
  return {
    id: newId('evt'),
    type: input.type,
    created_at: new Date().toISOString(),
    environment: input.environment,
    livemode: input.environment === 'live',
    version: input.objectVersion,
    data: input.data,
  };
}

export async function emitEvent(tx: Queryable, input: EventInput): Promise<EventPayload> {
  const payload = eventPayload(input);
  // The event and its fan-out in one statement (one round trip).
  await store.insertEvent(tx, input, payload);
  return payload;
}

/**
 * An event about the merchant's account itself, in one environment, to every endpoint of it (not a key's);
 * its version counts the object's events in that environment (the caller holds the merchant row's lock).
 */
export async function emitMerchantEvent(
  tx: Queryable,
  input: Omit<EventInput, 'apiKeyId' | 'objectVersion'>,
): Promise<EventPayload> {
  const objectVersion = await store.nextObjectVersion(tx, input.objectId, input.environment);
  const full: EventInput = { ...input, apiKeyId: null, objectVersion };
  const payload = eventPayload(full);
  await store.insertMerchantEvent(tx, full, payload);
  return payload;
}

/**
 * An event about an object of the merchant that no API key made (a settlement, issue 34), with the object's
 * own version, to every endpoint of the merchant in its environment.
 */
export async function emitEventToMerchant(tx: Queryable, input: Omit<EventInput, 'apiKeyId'>): Promise<EventPayload> {
  const full: EventInput = { ...input, apiKeyId: null };
  const payload = eventPayload(full);
  await store.insertMerchantEvent(tx, full, payload);
  return payload;
}

export const listEventsForObject = (db: Queryable, objectId: string) => store.listEventsForObject(db, objectId);
