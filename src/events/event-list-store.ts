// The merchant API's event list (GET /api/v1/events): a merchant's own events of one environment, newest
// first, keyset-paged on (created_at, id) like sessions and refunds.
import type { Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';
import { keysetOrder, ListWhere } from '../db/paging.ts';

const KEYSET = ['created_at', 'id'] as const;

export interface EventSearch {
  merchantId: string;
  environment: string;
  type?: string;
  objectId?: string;
  createdFrom?: Date;
  createdBefore?: Date;
  after?: { createdAt: Date; id: string };
}

export interface EventRow {
  id: string;
  created_at: Date;
  payload: string;
}

export const findMerchantEvent = (db: Queryable, merchantId: string, environment: string, id: string) =>
  firstRow(
    db.query<EventRow>(
      'SELECT id, created_at, payload FROM events WHERE id = $1 AND merchant_id = $2 AND environment = $3',
      [id, merchantId, environment],
    ),
  );

export function searchEvents(db: Queryable, search: EventSearch, limit: number): Promise<EventRow[]> {
  const where = new ListWhere({ merchant_id: search.merchantId, environment: search.environment });
  if (search.type) where.add((n) => `type = $${n}`, search.type);
  if (search.objectId) where.add((n) => `object_id = $${n}`, search.objectId);
  where.created('created_at', search);
  where.after(KEYSET, search.after);
  const limitParam = where.limit(limit);
  return db.query<EventRow>(
    `SELECT id, created_at, payload FROM events WHERE ${where.sql} ORDER BY ${keysetOrder(KEYSET)} LIMIT ${limitParam}`,
    where.params,
  );
}

export interface EventDeliveryRow {
  id: string;
  endpoint_id: string;
  url: string;
  status: string;
  tries: number;
  next_try_at: Date;
  delivered_at: Date | null;
  last_http_status: number | null;
}

/** The event's deliveries to the merchant's own endpoints of the environment (never a secret). */
export const eventDeliveries = (db: Queryable, merchantId: string, environment: string, eventId: string) =>
  db.query<EventDeliveryRow>(
    `SELECT d.id, d.endpoint_id, w.url, d.status, d.tries, d.next_try_at, d.delivered_at, d.last_http_status
       FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.event_id = $1 AND d.merchant_id = $2 AND d.environment = $3 AND w.merchant_id = $2
      ORDER BY d.created_at, d.id`,
    [eventId, merchantId, environment],
  );

export interface DeliveryTryRow {
  delivery_id: string;
  try_number: number;
  tried_at: Date;
  http_status: number | null;
  latency_ms: number;
  error: string | null;
}

/** The latest `perDelivery` tries of each of the event's deliveries (as eventDeliveries scopes them), oldest first. */
export const eventDeliveryTries = (
  db: Queryable,
  merchantId: string,
  environment: string,
  eventId: string,
  perDelivery: number,
) =>
  db.query<DeliveryTryRow>(
    `SELECT t.delivery_id, t.try_number, t.tried_at, t.http_status, t.latency_ms, t.error
       FROM webhook_deliveries d
       CROSS JOIN LATERAL (
         SELECT a.id, a.delivery_id, a.try_number, a.tried_at, a.http_status, a.latency_ms, a.error
           FROM webhook_delivery_tries a WHERE a.delivery_id = d.id ORDER BY a.tried_at DESC, a.id DESC LIMIT $4
       ) t
      WHERE d.event_id = $1 AND d.merchant_id = $2 AND d.environment = $3
      ORDER BY t.delivery_id, t.tried_at, t.id`,
    [eventId, merchantId, environment, perDelivery],
  );
