// The transactional outbox: an event is inserted in the same transaction as the change it announces,
// so it exists if and only if the change committed. Delivery (signing, retries) reads from here.
import type { Environment } from '../accounts/model.ts';
import type { Queryable } from '../db/index.ts';
import { newId } from '../lib/ids.ts';

export interface EventInput {
  merchantId: string;
  environment: Environment;
  /** The key that created the object: its paired webhook endpoint(s) receive the event. */
  apiKeyId: string | null;
  type: string;
  objectType: string;
  objectId: string;
  /** Grows with each state change of the object, so receivers can drop stale, out-of-order events. */
  objectVersion: number;
  data: Record<string, unknown>;
}

export interface EventPayload {
  id: string;
  type: string;
  created_at: string;
  environment: Environment;
  livemode: boolean;
  version: number;
  data: Record<string, unknown>;
}

export async function emitEvent(tx: Queryable, input: EventInput): Promise<EventPayload> {
  const payload: EventPayload = {
    id: newId('evt'),
    type: input.type,
    created_at: new Date().toISOString(),
    environment: input.environment,
    livemode: input.environment === 'live',
    version: input.objectVersion,
    data: input.data,
  };
  // The event and its fan-out to the key's endpoints in one statement (one round trip).
  await tx.query(
    `WITH event AS (
       INSERT INTO events (id, merchant_id, environment, api_key_id, type, object_type, object_id, object_version, payload, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id, api_key_id
     )
     INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, environment, status, last_error)
     SELECT gen_random_uuid(), event.id, w.id, w.merchant_id, w.environment,
            CASE WHEN w.status = 'active' THEN 'pending' ELSE 'skipped' END,
            CASE WHEN w.status = 'active' THEN NULL ELSE 'endpoint disabled: not sent' END
       FROM event JOIN webhook_endpoints w ON w.api_key_id = event.api_key_id`,
    [payload.id, input.merchantId, input.environment, input.apiKeyId, input.type, input.objectType, input.objectId, input.objectVersion, JSON.stringify(payload), payload.created_at],
    'event_insert',
  );
  return payload;
}

export const listEventsForObject = (db: Queryable, objectId: string) =>
  db.query<{ id: string; type: string; payload: string; created_at: Date }>(
    'SELECT id, type, payload, created_at FROM events WHERE object_id = $1 ORDER BY created_at, id',
    [objectId],
  );
