import type { Queryable } from '../db/index.ts';
import type { SessionRow } from './model.ts';

const SESSION_COLUMNS = `id, merchant_id, environment, api_key_id, status, amount_minor, currency, invoice_ref, description,
  customer_name, customer_email, callback_url, metadata, expires_at, finalized_at, version, created_at, updated_at`;

export async function insertSession(
  tx: Queryable,
  s: Omit<SessionRow, 'status' | 'finalized_at' | 'version' | 'created_at' | 'updated_at' | 'expires_at'> & { expiresInSeconds: number },
): Promise<SessionRow> {
  const rows = await tx.query<SessionRow>(
    `INSERT INTO checkout_sessions (id, merchant_id, environment, api_key_id, status, amount_minor, currency, invoice_ref,
       description, customer_name, customer_email, callback_url, metadata, expires_at)
     VALUES ($1, $2, $3, $4, 'open', $5, $6, $7, $8, $9, $10, $11, $12, now() + make_interval(secs => $13))
     RETURNING ${SESSION_COLUMNS}`,
    [
      s.id,
      s.merchant_id,
      s.environment,
      s.api_key_id,
      s.amount_minor,
      s.currency,
      s.invoice_ref,
      s.description,
      s.customer_name,
      s.customer_email,
      s.callback_url,
      JSON.stringify(s.metadata),
      s.expiresInSeconds,
    ],
  );
  return rows[0]!;
}

/** A session of this merchant and environment, or null: foreign ids look exactly like missing ones. */
export async function findSession(db: Queryable, merchantId: string, environment: string, id: string): Promise<SessionRow | null> {
  const rows = await db.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM checkout_sessions WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
    [id, merchantId, environment],
  );
  return rows[0] ?? null;
}
