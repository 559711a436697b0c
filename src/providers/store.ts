// Provider webhooks already acted on (provider_events): a second delivery of the same event is answered
// without asking the provider again.
import type { Queryable } from '../db/index.ts';

/** Records an event as acted on; false when it already was (a duplicate delivery). */
export async function recordProviderEvent(
  db: Queryable,
  e: { provider: string; eventKey: string; eventType: string; reference: string | null },
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO provider_events (provider, event_key, event_type, reference) VALUES ($1, $2, $3, $4)
     ON CONFLICT (provider, event_key) DO NOTHING RETURNING 1`,
    [e.provider, e.eventKey, e.eventType, e.reference],
  );
  return rows.length === 1;
}

export async function providerEventSeen(db: Queryable, provider: string, eventKey: string): Promise<boolean> {
  return (
    (await db.query(`SELECT 1 FROM provider_events WHERE provider = $1 AND event_key = $2`, [provider, eventKey]))
      .length > 0
  );
}
