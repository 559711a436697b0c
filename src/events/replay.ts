// The delivery log and replays: an endpoint's deliveries, replaying its failed ones, replaying one event
// of the merchant's environment (the dashboard), and replaying any event (the CLI), each its own
// transaction; and the API's replays of one event or a time range (below).
import type { ApiPrincipal } from '../lib/environment.ts';
import { audit, type Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { errors, SikaError } from '../lib/errors.ts';
import { createdRange, cursorPosition } from '../lib/list-paging.ts';
import { findMerchantEvent } from './event-list-store.ts';
import * as replayStore from './replay-store.ts';
import type { QueuedDelivery } from './replay-store.ts';
import * as store from './store.ts';

export const endpointDeliveries = (db: Queryable, endpointId: string, limit: number) =>
  store.endpointDeliveries(db, endpointId, limit);

/** Queues every failed delivery of the endpoint again; returns how many events were replayed. */
export async function replayFailedForEndpoint(db: Db, endpointId: string): Promise<number> {
  const failed = await store.failedEventIdsForEndpoint(db, endpointId);
  for (const { event_id } of failed) await db.transaction((tx) => store.replayEvent(tx, event_id));
  return failed.length;
}

/** Replays an event of the merchant's environment; false (nothing done) for a foreign or unknown event. */
export async function replayMerchantEvent(
  db: Db,
  merchantId: string,
  environment: string,
  eventId: string,
): Promise<boolean> {
  if (!(await store.eventBelongsTo(db, eventId, merchantId, environment))) return false;
  await db.transaction((tx) => store.replayEvent(tx, eventId));
  return true;
}

/** Replays any event (the operator's CLI), audited as the actor's: how many deliveries were queued, -1 for an unknown event. */
export const replayEvent = (db: Db, eventId: string, actor: Actor): Promise<number> =>
  db.transaction(async (tx) => {
    const queued = await store.replayEvent(tx, eventId);
    if (queued >= 0)
      await audit(tx, {
        actor,
        merchantId: null,
        action: 'event.replay',
        objectType: 'event',
        objectId: eventId,
        before: null,
        after: { deliveries_queued: queued },
      });
    return queued;
  });

// ---------------------------------------------------------------------------------------------------
// Replays over the API (issue 19): POST /api/v1/events/{id}/replay and POST /api/v1/events/replay. Each
// runs in the caller's transaction (the route's Idempotency-Key transaction), audited with the key as actor.

/** A range replay covers at most this many days (created_gte to created_lt)... */
export const EVENT_REPLAY_RANGE_DAYS_MAX = 31;
/** ...and replays at most this many events per call, the oldest first; has_more and next_starting_after give the rest. */
export const EVENT_REPLAY_ROWS_MAX = 1_000;
/** One range replay per API key per this many seconds, across every process (429 with Retry-After otherwise). */
export const EVENT_REPLAY_INTERVAL_S = 10;

type KeyPrincipal = Pick<ApiPrincipal, 'merchantId' | 'environment' | 'apiKeyId'>;

const keyActor = (principal: KeyPrincipal): Actor => ({ type: 'api_key', id: principal.apiKeyId, email: null });

export interface QueuedView {
  id: string;
  event_id: string;
  endpoint_id: string;
  url: string;
}

const queuedView = (d: QueuedDelivery): QueuedView => ({
  id: d.id,
  event_id: d.event_id,
  endpoint_id: d.endpoint_id,
  url: d.url,
});

/** Queues one event of the key's merchant and environment again (404 otherwise): what was queued. */
export async function replayEventForKey(tx: Queryable, principal: KeyPrincipal, eventId: string) {
  if (!(await store.eventBelongsTo(tx, eventId, principal.merchantId, principal.environment)))
    throw errors.notFound('Event');
  const queued = await replayStore.queueReplays(tx, principal.merchantId, principal.environment, [eventId], false);
  const body = {
    object: 'event_replay' as const,
    event_id: eventId,
    deliveries_queued: queued.length,
    deliveries: queued.map(queuedView),
  };
  await audit(tx, {
    actor: keyActor(principal),
    merchantId: principal.merchantId,
    action: 'events.replay',
    objectType: 'event',
    objectId: eventId,
    before: null,
    after: { environment: principal.environment, deliveries_queued: queued.length },
  });
  return body;
}

export interface RangeReplayInput {
  created_gte: string;
  created_lt: string;
  type?: string;
  only_failed?: boolean;
  starting_after?: string;
}

/** The range's bounds, checked before anything runs: 400 for an empty range or one over EVENT_REPLAY_RANGE_DAYS_MAX. */
export function checkReplayRange(input: RangeReplayInput): { createdFrom: Date; createdBefore: Date } {
  const { createdFrom, createdBefore } = createdRange(input);
  if (!createdFrom || !createdBefore) throw errors.invalidArgument('created_gte and created_lt are both required.');
  if (createdBefore.getTime() - createdFrom.getTime() > EVENT_REPLAY_RANGE_DAYS_MAX * 86_400_000) {
    throw errors.invalidArgument(
      `A replay covers at most ${EVENT_REPLAY_RANGE_DAYS_MAX} days: narrow created_gte..created_lt and send one replay per ${EVENT_REPLAY_RANGE_DAYS_MAX} days or less.`,
      [{ field: 'created_lt', message: `must be at most ${EVENT_REPLAY_RANGE_DAYS_MAX} days after created_gte` }],
    );
  }
  return { createdFrom, createdBefore };
}

/**
 * Replays the events of a range, oldest first: at most EVENT_REPLAY_ROWS_MAX per call (has_more and
 * next_starting_after give where the next call starts), at most once per EVENT_REPLAY_INTERVAL_S per key.
 * only_failed (the default) replays only the deliveries that failed or were not sent.
 */
export async function replayEventRange(tx: Queryable, principal: KeyPrincipal, input: RangeReplayInput) {
  const { createdFrom, createdBefore } = checkReplayRange(input);
  const waitS = await replayStore.claimReplayWindow(tx, principal.apiKeyId, EVENT_REPLAY_INTERVAL_S);
  if (waitS !== null) {
    const retryAfter = Math.max(1, Math.ceil(waitS));
    throw new SikaError(
      'RATE_LIMITED',
      `One range replay per API key every ${EVENT_REPLAY_INTERVAL_S} s; retry after ${retryAfter} s.`,
      { retryAfterSeconds: retryAfter },
    );
  }
  const after = await cursorPosition(input.starting_after, 'an event', (id) =>
    findMerchantEvent(tx, principal.merchantId, principal.environment, id),
  );
  const onlyFailed = input.only_failed ?? true;
  const rows = await replayStore.rangeEvents(
    tx,
    {
      merchantId: principal.merchantId,
      environment: principal.environment,
      createdFrom,
      createdBefore,
      type: input.type ?? null,
      onlyFailed,
      after: after ?? null,
    },
    EVENT_REPLAY_ROWS_MAX + 1,
  );
  const picked = rows.slice(0, EVENT_REPLAY_ROWS_MAX).map((r) => r.id);
  const hasMore = rows.length > EVENT_REPLAY_ROWS_MAX;
  const queued =
    picked.length > 0
      ? await replayStore.queueReplays(tx, principal.merchantId, principal.environment, picked, onlyFailed)
      : [];
  const body = {
    object: 'event_range_replay' as const,
    created_gte: createdFrom.toISOString(),
    created_lt: createdBefore.toISOString(),
    type: input.type ?? null,
    only_failed: onlyFailed,
    event_ids: picked,
    deliveries_queued: queued.length,
    has_more: hasMore,
    next_starting_after: hasMore ? picked.at(-1)! : null,
  };
  await audit(tx, {
    actor: keyActor(principal),
    merchantId: principal.merchantId,
    action: 'events.replay',
    objectType: 'event_range',
    objectId: `${body.created_gte}/${body.created_lt}`,
    before: null,
    after: {
      environment: principal.environment,
      type: body.type,
      only_failed: onlyFailed,
      starting_after: input.starting_after ?? null,
      events: picked.length,
      deliveries_queued: queued.length,
      has_more: hasMore,
    },
  });
  return body;
}
