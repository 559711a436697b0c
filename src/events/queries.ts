// The events and their delivery tries as Sika's own tools read them, across merchants (`sika events`:
// src/cli/commands.ts); the merchant's own event list is event-list.ts.
import type { Queryable } from '../db/index.ts';
import * as store from './store.ts';

/** The newest events, of one merchant or all, each with its deliveries summed up. */
export const listEvents = (db: Queryable, filter: { merchantId: string | null; limit: number }) =>
  store.listEvents(db, filter);

/** An event's payload as sent; null when there is no such event. */
export const findEventPayload = (db: Queryable, eventId: string) => store.findEventPayload(db, eventId);

/** Every delivery try of an event, with its endpoint's URL. */
export const listTries = (db: Queryable, eventId: string) => store.listTries(db, eventId);

/** Events with a delivery failed since a time, of one merchant or all. */
export const failedEventIdsSince = (db: Queryable, since: Date, merchantId: string | null) =>
  store.failedEventIdsSince(db, since, merchantId);
