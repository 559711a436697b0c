// The merchant API's event list (GET /api/v1/events): a merchant's own events of one environment, newest
// first, keyset-paged on (created_at, id) like sessions and refunds.
import type { Queryable } from '../db/index.ts';

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

export async function findMerchantEvent(db: Queryable, merchantId: string, environment: string, id: string): Promise<EventRow | null> {
  const rows = await db.query<EventRow>('SELECT id, created_at, payload FROM events WHERE id = $1 AND merchant_id = $2 AND environment = $3', [id, merchantId, environment]);
  return rows[0] ?? null;
}

export function searchEvents(db: Queryable, search: EventSearch, limit: number): Promise<EventRow[]> {
  const where = ['merchant_id = $1', 'environment = $2'];
  const params: unknown[] = [search.merchantId, search.environment];
  const add = (clause: (n: number) => string, value: unknown) => {
    params.push(value);
    where.push(clause(params.length));
  };
  if (search.type) add((n) => `type = $${n}`, search.type);
  if (search.objectId) add((n) => `object_id = $${n}`, search.objectId);
  if (search.createdFrom) add((n) => `created_at >= $${n}`, search.createdFrom);
  if (search.createdBefore) add((n) => `created_at < $${n}`, search.createdBefore);
  if (search.after) {
    params.push(search.after.createdAt, search.after.id);
    where.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`);
  }
  params.push(limit);
  return db.query<EventRow>(`SELECT id, created_at, payload FROM events WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`, params);
}
