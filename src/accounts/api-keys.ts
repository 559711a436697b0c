import { hash, timingSafeEqual } from 'node:crypto';
import { audit } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import type { Subscription } from '../db/types.ts';
import { ExpiringMap } from '../lib/expiring-map.ts';
import { newUuid, randomToken } from '../lib/ids.ts';
import { API_KEY_PATTERN, API_KEY_PREFIX_LENGTH, API_KEY_SECRET_LENGTH } from './model.ts';
import type { ApiPrincipal, Environment } from '../lib/environment.ts';
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

/** The promise to merchants: a revoked key is refused by every process within this time (issue 14). */
export const REVOCATION_EFFECTIVE_MS = 1_000;
/**
 * Revocations reach every process at once by NOTIFY (migration 015); the cache also expires within the
 * promise, so even a notification lost in a way nobody noticed cannot keep a revoked key alive longer.
 */
const CACHE_TTL_MS = REVOCATION_EFFECTIVE_MS / 2;
const CACHE_ENTRIES_MAX = 10_000;
export const API_KEY_REVOKED_CHANNEL = 'sika_api_key_revoked';

/**
 * Resolves a bearer key to its merchant and environment. Keys are found by their visible prefix,
 * then the SHA-256 of the whole key is compared in constant time. A short cache keeps the hot path
 * cheap; it is used only while this process hears revocations (start()), and each one drops its key.
 */
export class ApiKeyAuthenticator {
  /** By prefix; a prefix with no key is remembered too (row null). */
  private readonly cache = new ExpiringMap<string, { row: store.ApiKeyRow | null }>(CACHE_TTL_MS, CACHE_ENTRIES_MAX);
  private revocations: Subscription | null = null;
  /** Grows with every revocation heard and every gap in hearing them: a lookup that overlapped one is not cached. */
  private generation = 0;

  constructor(private readonly db: Db) {}

  /** Listens for revocations from every process; until then (and while the listener reconnects) nothing is cached. */
  async start(): Promise<void> {
    this.revocations = await this.db.listen(API_KEY_REVOKED_CHANNEL, {
      message: (prefix) => this.forget(prefix),
      reset: () => {
        this.generation++;
        this.cache.clear();
      },
    });
  }

  /** Whether this process hears revocations now (and so may cache keys). */
  get listening(): boolean {
    return this.revocations?.live === true;
  }

  async stop(): Promise<void> {
    const revocations = this.revocations;
    this.revocations = null;
    await revocations?.close();
  }

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
    this.generation++;
    this.cache.delete(prefix);
  }

  private async lookup(prefix: string): Promise<store.ApiKeyRow | null> {
    const trusted = this.revocations?.live === true;
    const cached = trusted ? this.cache.get(prefix) : undefined;
    if (cached) return cached.row;
    const generation = this.generation;
    const row = await store.findApiKeyByPrefix(this.db, prefix);
    // A revocation heard while this read was on its way may not be in its answer: use it, but do not keep it.
    if (trusted && generation === this.generation && this.revocations?.live) this.cache.set(prefix, { row });
    return row;
  }
}

export interface KeyActor {
  type: 'user' | 'operator' | 'system' | 'cli';
  id: string;
  email: string | null;
}

/**
 * A new key for a merchant and environment, on the merchant's first integration of that environment;
 * created by the merchant's owner unless a user is named (an API payout's requester is the key's creator).
 */
export async function createApiKey(
  db: Db,
  params: { merchantId: string; environment: Environment; createdByUserId?: string | null; actor: KeyActor },
): Promise<IssuedApiKey> {
  return db.transaction(async (tx) => {
    const integration = (await store.listIntegrations(tx, params.merchantId, params.environment))[0];
    if (!integration) throw new Error(`merchant ${params.merchantId} has no ${params.environment} integration`);
    const createdByUserId = params.createdByUserId ?? (await store.findOwnerUserId(tx, params.merchantId));
    const issued = await issueApiKey(tx, {
      merchantId: params.merchantId,
      integrationId: integration.id,
      environment: params.environment,
      createdByUserId,
    });
    await audit(tx, {
      actor: params.actor,
      merchantId: params.merchantId,
      action: 'api_key.created',
      objectType: 'api_key',
      objectId: issued.id,
      before: null,
      after: { prefix: issued.prefix, environment: params.environment },
    });
    return issued;
  });
}

/**
 * Revokes a merchant's key named by id or prefix, audited (api_key.revoked, by the actor). Every process
 * refuses it within REVOCATION_EFFECTIVE_MS (the revocation is announced at commit, migration 015).
 * environment: only a key of that environment is found (the dashboard's environment in view).
 * null: no such key of this merchant (of that environment).
 */
export async function revokeMerchantApiKey(
  db: Db,
  params: { merchantId: string; idOrPrefix: string; environment?: Environment; actor: KeyActor },
) {
  return db.transaction(async (tx) => {
    const key = await store.findMerchantApiKey(tx, params.merchantId, params.idOrPrefix);
    if (!key || (params.environment !== undefined && key.environment !== params.environment)) return null;
    if (key.revoked_at) return { ...key, alreadyRevoked: true };
    const revoked = await store.revokeApiKey(tx, key.id, params.merchantId, key.environment);
    await audit(tx, {
      actor: params.actor,
      merchantId: params.merchantId,
      action: 'api_key.revoked',
      objectType: 'api_key',
      objectId: key.id,
      before: { revoked: false },
      after: { revoked: revoked.length > 0 },
    });
    return { ...key, alreadyRevoked: revoked.length === 0 };
  });
}
