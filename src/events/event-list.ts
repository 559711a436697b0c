// Events as the merchant's server reads them (GET /api/v1/events, GET /api/v1/events/{id}): the payloads
// their webhooks carry, for catching up after downtime without waiting for retries.
import type { ApiPrincipal } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { errors } from '../lib/errors.ts';
import { listPage, listWindow, type CursorListQuery } from '../lib/list-paging.ts';
import { eventDeliveries, eventDeliveryTries, findMerchantEvent, searchEvents } from './event-list-store.ts';

export const EVENT_LIST_LIMIT_DEFAULT = 20;
export const EVENT_LIST_LIMIT_MAX = 100;
/** A retrieved event shows at most this many tries of each delivery, the latest (replays add tries without end). */
export const EVENT_DELIVERY_TRIES_SHOWN_MAX = 50;

export interface EventListQuery extends CursorListQuery {
  type?: string;
  object_id?: string;
}

type Principal = Pick<ApiPrincipal, 'merchantId' | 'environment'>;

export interface EventDeliveryView {
  id: string;
  endpoint_id: string;
  url: string;
  status: string;
  try_count: number;
  next_try_at: string | null;
  delivered_at: string | null;
  last_http_status: number | null;
  tries: {
    try_number: number;
    tried_at: string;
    http_status: number | null;
    latency_ms: number;
    error: string | null;
  }[];
}

/**
 * One event: the body its webhooks carry, plus `deliveries`, its deliveries to the merchant's endpoints
 * of the environment with their latest tries (no response bodies, no secrets).
 */
export async function getEvent(
  db: Queryable,
  principal: Principal,
  id: string,
): Promise<Record<string, unknown> & { deliveries: EventDeliveryView[] }> {
  const row = await findMerchantEvent(db, principal.merchantId, principal.environment, id);
  if (!row) throw errors.notFound('Event');
  const [deliveries, tries] = await Promise.all([
    eventDeliveries(db, principal.merchantId, principal.environment, id),
    eventDeliveryTries(db, principal.merchantId, principal.environment, id, EVENT_DELIVERY_TRIES_SHOWN_MAX),
  ]);
  const view = deliveries.map(
    (d): EventDeliveryView => ({
      id: d.id,
      endpoint_id: d.endpoint_id,
      url: d.url,
      status: d.status,
      try_count: d.tries,
      next_try_at: d.status === 'pending' ? d.next_try_at.toISOString() : null,
      delivered_at: d.delivered_at?.toISOString() ?? null,
      last_http_status: d.last_http_status,
      tries: tries
        .filter((t) => t.delivery_id === d.id)
        .map((t) => ({
          try_number: t.try_number,
          tried_at: t.tried_at.toISOString(),
          http_status: t.http_status,
          latency_ms: t.latency_ms,
          error: t.error,
        })),
    }),
  );
  return { ...(JSON.parse(row.payload) as Record<string, unknown>), deliveries: view };
}

export async function listEvents(db: Queryable, principal: Principal, query: EventListQuery) {
  const { limit, search } = await listWindow(principal, query, {
    limitDefault: EVENT_LIST_LIMIT_DEFAULT,
    what: 'an event',
    find: (id) => findMerchantEvent(db, principal.merchantId, principal.environment, id),
  });
  const rows = await searchEvents(db, { ...search, type: query.type, objectId: query.object_id }, limit + 1);
  return listPage(rows, limit, (row) => JSON.parse(row.payload) as Record<string, unknown>);
}
