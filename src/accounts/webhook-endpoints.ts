import type { Db, Queryable } from '../db/index.ts';
import { SikaError } from '../lib/errors.ts';
import { newWebhookSecret } from './service.ts';
import * as store from './store.ts';

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
  const rows = await store.rotateEndpointSecret(tx, { endpointId, overlapS, secret, merchantId });
  if (rows.length === 0) throw new SikaError('NOT_FOUND', 'Webhook endpoint not found.', { detail: 'Webhook endpoint not found.' });
  return { endpoint_id: endpointId, secret, previous_secret_expires_at: rows[0]!.previous_secret_expires_at.toISOString() };
}

/** The operator's rotation (the CLI): any merchant's endpoint, in a transaction of its own. */
export const rotateAnyWebhookSecret = (db: Db, endpointId: string, overlapS: number) => db.transaction((tx) => rotateWebhookSecret(tx, endpointId, overlapS));

export const listWebhookEndpoints = (db: Queryable, merchantId: string) => store.listMerchantEndpoints(db, merchantId);
