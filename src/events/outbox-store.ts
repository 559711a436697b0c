// The outbox's SQL: an event and its fan-out to the webhook endpoints of the key that caused it, as CTEs
// another statement can carry (so a change and its events are one statement), or alone; and the events of
// one object.
import type { Queryable } from '../db/index.ts';
import { Statement } from '../db/statement.ts';
import { DELIVERIES_DUE_CHANNEL, deliveryMachine, type EventInput, type EventPayload } from './model.ts';

// A new delivery's status, as the delivery table allows (checked at load).
const DELIVERY_TO_SEND = deliveryMachine.initialStatus('pending');
const DELIVERY_NOT_SENT = deliveryMachine.initialStatus('skipped');

/**
 * The CTEs that write events and their fan-out to each event's key's endpoints (outbox_event,
 * outbox_deliveries), for a statement that also writes the changes the events announce. onlyIf, a
 * condition that may name the event's columns as given.* (e.g. given.object_id) and the statement's other
 * parts, leaves out an event whose change did not happen.
 */
export function eventCtes(
  s: Statement,
  events: readonly { input: EventInput; payload: EventPayload }[],
  onlyIf = 'true',
): string {
  const column = (value: (e: { input: EventInput; payload: EventPayload }) => unknown, cast: string) =>
    s.p(events.map(value), cast);
  return `outbox_event AS (
       INSERT INTO events (id, merchant_id, environment, api_key_id, type, object_type, object_id, object_version, payload, created_at)
       SELECT given.*
         FROM unnest(${column((e) => e.payload.id, 'text[]')}, ${column((e) => e.input.merchantId, 'uuid[]')}, ${column((e) => e.input.environment, 'text[]')},
                     ${column((e) => e.input.apiKeyId, 'uuid[]')}, ${column((e) => e.input.type, 'text[]')}, ${column((e) => e.input.objectType, 'text[]')},
                     ${column((e) => e.input.objectId, 'text[]')}, ${column((e) => e.input.objectVersion, 'integer[]')}, ${column((e) => JSON.stringify(e.payload), 'text[]')},
                     ${column((e) => e.payload.created_at, 'timestamptz[]')})
              AS given (id, merchant_id, environment, api_key_id, type, object_type, object_id, object_version, payload, created_at)
        WHERE ${onlyIf}
       RETURNING id, api_key_id, merchant_id, environment
     ), outbox_deliveries AS (
       INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, environment, status, last_error)
       SELECT gen_random_uuid(), outbox_event.id, w.id, w.merchant_id, w.environment,
              CASE WHEN w.status = 'active' THEN '${DELIVERY_TO_SEND}' ELSE '${DELIVERY_NOT_SENT}' END,
              CASE WHEN w.status = 'active' THEN NULL ELSE 'endpoint disabled: not sent' END
         FROM outbox_event JOIN webhook_endpoints w ON w.api_key_id = outbox_event.api_key_id
       UNION ALL
       -- An event no key caused (a payer's session from a payment link): every endpoint of its merchant and environment.
       SELECT gen_random_uuid(), outbox_event.id, w.id, w.merchant_id, w.environment,
              CASE WHEN w.status = 'active' THEN '${DELIVERY_TO_SEND}' ELSE '${DELIVERY_NOT_SENT}' END,
              CASE WHEN w.status = 'active' THEN NULL ELSE 'endpoint disabled: not sent' END
         FROM outbox_event JOIN webhook_endpoints w
           ON outbox_event.api_key_id IS NULL AND w.merchant_id = outbox_event.merchant_id AND w.environment = outbox_event.environment
       RETURNING 1
     )`;
}

/** One event and its fan-out in one statement (one round trip). */
export async function insertEvent(tx: Queryable, input: EventInput, payload: EventPayload): Promise<void> {
  const s = new Statement();
  await tx.query(`WITH ${eventCtes(s, [{ input, payload }])} SELECT 1`, s.params, 'event_insert');
  tx.signal(DELIVERIES_DUE_CHANNEL);
}

export const listEventsForObject = (db: Queryable, objectId: string) =>
  db.query<{ id: string; type: string; payload: string; created_at: Date }>(
    'SELECT id, type, payload, created_at FROM events WHERE object_id = $1 ORDER BY created_at, id',
    [objectId],
  );

/**
 * One event fanned out to every webhook endpoint of its merchant and environment, whichever key each is paired
 * with: what happens to the account itself (account.updated), not to an object a key made.
 */
export async function insertMerchantEvent(tx: Queryable, input: EventInput, payload: EventPayload): Promise<void> {
  await tx.query(
    `WITH outbox_event AS (
       INSERT INTO events (id, merchant_id, environment, api_key_id, type, object_type, object_id, object_version, payload, created_at)
       VALUES ($1, $2, $3, NULL, $4, $5, $6, $7, $8, $9)
       RETURNING id, merchant_id, environment
     )
     INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, environment, status, last_error)
     SELECT gen_random_uuid(), outbox_event.id, w.id, w.merchant_id, w.environment,
            CASE WHEN w.status = 'active' THEN '${DELIVERY_TO_SEND}' ELSE '${DELIVERY_NOT_SENT}' END,
            CASE WHEN w.status = 'active' THEN NULL ELSE 'endpoint disabled: not sent' END
       FROM outbox_event JOIN webhook_endpoints w
         ON w.merchant_id = outbox_event.merchant_id AND w.environment = outbox_event.environment`,
    [
      payload.id,
      input.merchantId,
      input.environment,
      input.type,
      input.objectType,
      input.objectId,
      input.objectVersion,
      JSON.stringify(payload),
      payload.created_at,
    ],
  );
  tx.signal(DELIVERIES_DUE_CHANNEL);
}

/** The version an object's next event carries: one more than its events so far in that environment. */
export const nextObjectVersion = async (tx: Queryable, objectId: string, environment: string): Promise<number> => {
  const rows = await tx.query<{ n: number }>(
    'SELECT count(*)::int + 1 AS n FROM events WHERE object_id = $1 AND environment = $2',
    [objectId, environment],
  );
  return rows[0]!.n;
};
