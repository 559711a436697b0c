// What the dashboard's Developers page manages in a merchant's environment: integrations, API keys and
// webhook endpoints. Each change is one transaction.
import type { Db, Queryable } from '../db/index.ts';
import { newUuid } from '../lib/ids.ts';
import { issueApiKey, revokeMerchantApiKey, type KeyActor } from './api-keys.ts';
import type { Environment } from '../lib/environment.ts';
import { newWebhookSecret } from './service.ts';
import * as store from './store.ts';
import { rotateWebhookSecret } from './webhook-endpoints.ts';

export const listIntegrations = (db: Queryable, merchantId: string, environment: Environment) =>
  store.listIntegrations(db, merchantId, environment);
export const listApiKeys = (db: Queryable, merchantId: string, environment: Environment) =>
  store.listApiKeys(db, merchantId, environment);
export const listEndpoints = (db: Queryable, merchantId: string, environment: Environment) =>
  store.listEndpoints(db, merchantId, environment);
export const findEndpoint = (db: Queryable, merchantId: string, environment: Environment, id: string) =>
  store.findEndpoint(db, merchantId, environment, id);

export const issueKey = (
  db: Db,
  params: { merchantId: string; integrationId: string; environment: Environment; createdByUserId: string | null },
) => db.transaction((tx) => issueApiKey(tx, params));

/**
 * Revokes a key of this merchant's environment through the audited use case (api_key.revoked, the acting
 * user as actor); null when no such key is this merchant's in this environment (another merchant's, the
 * other environment's, or none). A key revoked before is returned as such and nothing is written.
 */
export async function revokeKey(
  db: Db,
  params: { id: string; merchantId: string; environment: Environment; actor: KeyActor },
): Promise<{ id: string; prefix: string; alreadyRevoked: boolean } | null> {
  const revoked = await revokeMerchantApiKey(db, {
    merchantId: params.merchantId,
    idOrPrefix: params.id,
    environment: params.environment,
    actor: params.actor,
  });
  return revoked ? { id: revoked.id, prefix: revoked.prefix, alreadyRevoked: revoked.alreadyRevoked } : null;
}

/** Adds an endpoint paired with an API key; returns its signing secret (shown once). */
export async function addEndpoint(
  db: Db,
  e: { merchantId: string; environment: Environment; apiKeyId: string; url: string },
): Promise<string> {
  const secret = newWebhookSecret();
  await db.transaction((tx) => store.insertWebhookEndpoint(tx, { id: newUuid(), ...e, secret }));
  return secret;
}

export const rotateEndpointSecret = (db: Db, endpointId: string, merchantId: string) =>
  db.transaction((tx) => rotateWebhookSecret(tx, endpointId, undefined, merchantId));

export const setEndpointStatus = (...change: Parameters<typeof store.setEndpointStatus>) =>
  store.setEndpointStatus(...change);
