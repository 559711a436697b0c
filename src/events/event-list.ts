// Events as the merchant's server reads them (GET /api/v1/events, GET /api/v1/events/{id}): the payloads
// their webhooks carry, for catching up after downtime without waiting for retries.
import type { ApiPrincipal } from '../accounts/model.ts';
import type { Queryable } from '../db/index.ts';
import { errors } from '../lib/errors.ts';
import { createdRange, cursorPosition } from '../lib/list-paging.ts';
import { findMerchantEvent, searchEvents } from './event-list-store.ts';

export const EVENT_LIST_LIMIT_DEFAULT = 20;
export const EVENT_LIST_LIMIT_MAX = 100;

export interface EventListQuery {
  limit?: number;
  starting_after?: string;
  type?: string;
  object_id?: string;
  created_gte?: string;
  created_lt?: string;
}

type Principal = Pick<ApiPrincipal, 'merchantId' | 'environment'>;

export async function getEvent(db: Queryable, principal: Principal, id: string): Promise<Record<string, unknown>> {
  const row = await findMerchantEvent(db, principal.merchantId, principal.environment, id);
  if (!row) throw errors.notFound('Event');
  return JSON.parse(row.payload) as Record<string, unknown>;
}

export async function listEvents(db: Queryable, principal: Principal, query: EventListQuery) {
  const limit = query.limit ?? EVENT_LIST_LIMIT_DEFAULT;
  const after = await cursorPosition(query.starting_after, 'an event', (id) => findMerchantEvent(db, principal.merchantId, principal.environment, id));
  const { createdFrom, createdBefore } = createdRange(query);
  const rows = await searchEvents(
    db,
    { merchantId: principal.merchantId, environment: principal.environment, type: query.type, objectId: query.object_id, createdFrom, createdBefore, after },
    limit + 1,
  );
  return { object: 'list' as const, data: rows.slice(0, limit).map((row) => JSON.parse(row.payload) as Record<string, unknown>), has_more: rows.length > limit };
}
