import { hash, timingSafeEqual } from 'node:crypto';
import type { Db, Queryable } from '../db/index.ts';
import { ExpiringMap } from '../lib/expiring-map.ts';
import { newUuid, randomToken } from '../lib/ids.ts';
import { API_KEY_PATTERN, API_KEY_PREFIX_LENGTH, API_KEY_SECRET_LENGTH, type ApiPrincipal, type Environment } from './model.ts';
import * as store from './store.ts';

export const hashApiKey = (key: string): Buffer => hash('sha256', key, 'buffer');

export interface IssuedApiKey {
  id: string;
  key: string; // shown once, never stored
  prefix: string;
}

export async function issueApiKey(
  tx: Queryable,
  params: { merchantId: string; integrationId: string; environment: Environment; createdByUserId: string | null },
): Promise<IssuedApiKey> {
  const key = `ak_${params.environment}_${randomToken(API_KEY_SECRET_LENGTH)}`;
  const id = newUuid();
  const prefix = key.slice(0, API_KEY_PREFIX_LENGTH);
  await store.insertApiKey(tx, { id, ...params, prefix, keyHash: hashApiKey(key) });
  return { id, key, prefix };
}

const CACHE_TTL_MS = 5_000;
const CACHE_ENTRIES_MAX = 10_000;

/**
 * Resolves a bearer key to its merchant and environment. Keys are found by their visible prefix,
 * then the SHA-256 of the whole key is compared in constant time. A short cache keeps the hot path
 * to one query per request; revocation through this process clears it at once, elsewhere within 5 s.
 */
export class ApiKeyAuthenticator {
  /** By prefix; a prefix with no key is remembered too (row null). */
  private readonly cache = new ExpiringMap<string, { row: store.ApiKeyRow | null }>(CACHE_TTL_MS, CACHE_ENTRIES_MAX);

  constructor(private readonly db: Db) {}

  async authenticate(authorization: string | undefined): Promise<ApiPrincipal | null> {
    if (!authorization) return null;
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
    const key = match?.[1];
    if (!key || !API_KEY_PATTERN.test(key)) return null;
    const prefix = key.slice(0, API_KEY_PREFIX_LENGTH);
    const row = await this.lookup(prefix);
    // Hash and compare even when nothing was found, so timing does not reveal which prefixes exist.
    const expected = row ? Buffer.from(row.key_hash) : Buffer.alloc(32);
    const matches = timingSafeEqual(hashApiKey(key), expected) && row !== null;
    if (!matches || !row || row.revoked_at) return null;
    if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > 60_000) {
      row.last_used_at = new Date();
      store.touchApiKey(this.db, row.id).catch(() => {}); // best effort: never fails a request
    }
    return { merchantId: row.merchant_id, environment: row.environment, apiKeyId: row.id, apiKeyPrefix: row.prefix };
  }

  forget(prefix: string): void {
    this.cache.delete(prefix);
  }

  private async lookup(prefix: string): Promise<store.ApiKeyRow | null> {
    const cached = this.cache.get(prefix);
    if (cached) return cached.row;
    const row = await store.findApiKeyByPrefix(this.db, prefix);
    this.cache.set(prefix, { row });
    return row;
  }
}
