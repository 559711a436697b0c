import { audit, type Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { errors, SikaError } from '../lib/errors.ts';
import type { ApiPrincipal } from '../lib/environment.ts';
import { newWebhookSecret } from './service.ts';
import * as store from './store.ts';

export const SECRET_OVERLAP_DEFAULT_S = 24 * 3_600;
export const SECRET_OVERLAP_MAX_S = 7 * 24 * 3_600;

/**
 * A new secret for an endpoint. The old one keeps signing alongside it (both signatures are sent,
 * space-separated) until the overlap ends, so receivers can switch without dropping a delivery.
 */
export async function rotateWebhookSecret(
  tx: Queryable,
  endpointId: string,
  overlapS = SECRET_OVERLAP_DEFAULT_S,
  merchantId: string | null = null,
) {
  if (!Number.isInteger(overlapS) || overlapS < 0 || overlapS > SECRET_OVERLAP_MAX_S) {
    throw new SikaError('INVALID_ARGUMENT', `the overlap must be 0 to ${SECRET_OVERLAP_MAX_S} seconds`);
  }
  const secret = newWebhookSecret();
  const rows = await store.rotateEndpointSecret(tx, { endpointId, overlapS, secret, merchantId });
  if (rows.length === 0)
    throw new SikaError('NOT_FOUND', 'Webhook endpoint not found.', { detail: 'Webhook endpoint not found.' });
  return {
    endpoint_id: endpointId,
    secret,
    previous_secret_expires_at: rows[0]!.previous_secret_expires_at.toISOString(),
  };
}

/** The operator's rotation (the CLI): any merchant's endpoint, in a transaction of its own with its audit row (never the secret). */
export const rotateAnyWebhookSecret = (db: Db, endpointId: string, overlapS: number, actor: Actor) =>
  db.transaction(async (tx) => {
    const rotated = await rotateWebhookSecret(tx, endpointId, overlapS);
    await audit(tx, {
      actor,
      merchantId: null,
      action: 'webhook_endpoint.secret_rotate',
      objectType: 'webhook_endpoint',
      objectId: endpointId,
      before: null,
      after: { previous_secret_expires_at: rotated.previous_secret_expires_at },
    });
    return rotated;
  });

export const listWebhookEndpoints = (db: Queryable, merchantId: string) => store.listMerchantEndpoints(db, merchantId);

/** One secret `sika listen` signs forwarded events with: an endpoint's current one, or its previous one until it expires. */
export interface StreamSigningSecret {
  endpoint_id: string;
  url: string;
  status: string;
  secret: string;
  /** null for the current secret; for a previous one, when it stops signing (the rotation's overlap). */
  expires_at: string | null;
}

/**
 * The secrets the Test webhook endpoints paired with this key sign with, so that `sika listen` signs what it
 * forwards exactly as those endpoints' deliveries are signed and a receiver verifying with an endpoint's secret
 * (the first-run banner's, `sika merchant create`'s, the dashboard's) accepts both. Disabled endpoints count:
 * a developer who turned the demo endpoint off to use `sika listen` still verifies with its secret. Test keys
 * only: a Live secret never leaves the dashboard.
 */
export async function streamSigningSecrets(
  db: Queryable,
  principal: ApiPrincipal,
): Promise<{ object: 'stream_signing_secrets'; secrets: StreamSigningSecret[] }> {
  if (principal.environment !== 'test') {
    throw errors.forbidden(
      "Signing secrets are given to Test keys only (for sika listen); a Live endpoint's secret is shown in the dashboard when it is made or rotated.",
    );
  }
  const secrets: StreamSigningSecret[] = [];
  for (const e of await store.listKeyEndpointSecrets(db, principal.apiKeyId)) {
    secrets.push({ endpoint_id: e.id, url: e.url, status: e.status, secret: e.secret, expires_at: null });
    if (e.previous_secret && e.previous_secret_expires_at)
      secrets.push({
        endpoint_id: e.id,
        url: e.url,
        status: e.status,
        secret: e.previous_secret,
        expires_at: e.previous_secret_expires_at.toISOString(),
      });
  }
  return { object: 'stream_signing_secrets', secrets };
}
