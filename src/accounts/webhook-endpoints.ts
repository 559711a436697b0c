import type { Queryable } from '../db/index.ts';
import { SikaError } from '../lib/errors.ts';
import { newWebhookSecret } from './service.ts';

export const SECRET_OVERLAP_DEFAULT_S = 24 * 3_600;
export const SECRET_OVERLAP_MAX_S = 7 * 24 * 3_600;

/**
 * A new secret for an endpoint. The old one keeps signing alongside it (both signatures are sent,
 * space-separated) until the overlap ends, so receivers can switch without dropping a delivery.
 */
export async function rotateWebhookSecret(tx: Queryable, endpointId: string, overlapS = SECRET_OVERLAP_DEFAULT_S, merchantId: string | null = null) {
  if (!Number.isInteger(overlapS) || overlapS < 0 || overlapS > SECRET_OVERLAP_MAX_S) {
    throw new SikaError('INVALID_ARGUMENT', `the overlap must be 0 to ${SECRET_OVERLAP_MAX_S} seconds`);
  }
  const secret = newWebhookSecret();
  const rows = await tx.query<{ id: string; previous_secret_expires_at: Date }>(
    `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = now() + make_interval(secs => $2),
            secret = $3, updated_at = now()
      WHERE id = $1 AND ($4::uuid IS NULL OR merchant_id = $4) RETURNING id, previous_secret_expires_at`,
    [endpointId, overlapS, secret, merchantId],
  );
  if (rows.length === 0) throw new SikaError('NOT_FOUND', 'Webhook endpoint not found.', { detail: 'Webhook endpoint not found.' });
  return { endpoint_id: endpointId, secret, previous_secret_expires_at: rows[0]!.previous_secret_expires_at.toISOString() };
}

export const listWebhookEndpoints = (db: Queryable, merchantId: string) =>
  db.query<{ id: string; environment: string; api_key_id: string; url: string; status: string; disabled_reason: string | null; created_at: Date }>(
    'SELECT id, environment, api_key_id, url, status, disabled_reason, created_at FROM webhook_endpoints WHERE merchant_id = $1 ORDER BY created_at',
    [merchantId],
  );
