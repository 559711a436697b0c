// Idempotency-Key handling (DESIGN §3): scope merchant + environment + key, kept 24 hours. The first
// request claims the key; its result is stored in the same transaction as its effect, so a replay
// always matches what happened. Validation failures and 5xx store nothing.
import type { FastifyRequest } from 'fastify';
import type { ApiPrincipal } from '../accounts/model.ts';
import { DbError, type Db, type Queryable } from '../db/index.ts';
import { canonicalJson, sha256Hex } from '../lib/canonical-json.ts';
import { errors } from '../lib/errors.ts';

export const IDEMPOTENCY_KEY_TTL_HOURS = 24;
export const IDEMPOTENCY_KEY_LENGTH_MAX = 255;
/** A claim older than this belongs to a process that died mid-request; a retry may take it over. */
export const IDEMPOTENCY_IN_FLIGHT_LEASE_S = 60;

export interface Outcome<Body> {
  status: number;
  body: Body;
  replayed: boolean;
}

export function idempotencyKeyOf(request: FastifyRequest): string | null {
  const raw = request.headers['idempotency-key'];
  if (raw === undefined) return null;
  const key = Array.isArray(raw) ? raw[0]! : raw;
  if (key.length < 1 || key.length > IDEMPOTENCY_KEY_LENGTH_MAX || !/^[\x20-\x7e]+$/.test(key)) {
    throw errors.invalidArgument(`Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_LENGTH_MAX} printable ASCII characters.`, [
      { field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' },
    ]);
  }
  return key;
}

export function requestHash(request: FastifyRequest): string {
  const path = request.url.split('?')[0];
  return sha256Hex(canonicalJson({ method: request.method, path, body: request.body ?? null }));
}

interface StoredKey {
  request_hash: string;
  state: 'in_flight' | 'completed';
  response_status: number | null;
  response_body: unknown;
  stale: boolean;
  expired: boolean;
}

/**
 * Runs `execute` in one transaction, at most once per Idempotency-Key. `execute` returns the status
 * and body to send; with a key they are stored with the effect and replayed to identical retries.
 */
export async function runIdempotent<Body>(
  db: Db,
  principal: ApiPrincipal,
  key: string | null,
  hash: string,
  execute: (tx: Queryable) => Promise<{ status: number; body: Body }>,
): Promise<Outcome<Body>> {
  if (key === null) {
    const result = await db.transaction(execute);
    return { ...result, replayed: false };
  }
  const scope = [principal.merchantId, principal.environment, key] as const;

  for (let round = 0; round < 3; round++) {
    // Claim, effect and stored result in ONE transaction (one commit): a concurrent request with the
    // same key waits on the key's unique index until this one commits (then replays) or rolls back
    // (then runs itself). A failure rolls the claim back with everything else, so nothing is stored.
    const result = await db.transaction(async (tx) => {
      const claimed = await tx.query(
        `INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, state)
         VALUES ($1, $2, $3, $4, 'in_flight') ON CONFLICT DO NOTHING RETURNING 1`,
        [...scope, hash],
      );
      if (claimed.length === 0) return null;
      const outcome = await execute(tx);
      await tx.query(
        `UPDATE idempotency_keys SET state = 'completed', response_status = $4, response_body = $5
          WHERE merchant_id = $1 AND environment = $2 AND key = $3`,
        [...scope, outcome.status, JSON.stringify(outcome.body)],
      );
      return outcome;
    });
    if (result) return { ...result, replayed: false };

    const rows = await db.query<StoredKey>(
      `SELECT request_hash, state, response_status, response_body,
              created_at < now() - make_interval(secs => $4) AS stale,
              created_at < now() - make_interval(hours => $5) AS expired
         FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND key = $3`,
      [...scope, IDEMPOTENCY_IN_FLIGHT_LEASE_S, IDEMPOTENCY_KEY_TTL_HOURS],
    );
    const stored = rows[0];
    if (!stored) continue; // rolled back meanwhile: claim again
    if (stored.expired) {
      await db.query(
        `DELETE FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND key = $3
           AND created_at < now() - make_interval(hours => $4)`,
        [...scope, IDEMPOTENCY_KEY_TTL_HOURS],
      );
      continue;
    }
    if (stored.request_hash !== hash) throw errors.idempotencyKeyReused();
    if (stored.state === 'completed') {
      return { status: stored.response_status!, body: JSON.parse(stored.response_body as string) as Body, replayed: true };
    }
    // An in_flight row is only ever visible if written by an older version that claimed in its own
    // transaction; after the lease it is abandoned and may be taken over.
    if (!stored.stale) throw errors.idempotencyKeyInFlight();
    await db.query(
      `DELETE FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND key = $3
         AND state = 'in_flight' AND created_at < now() - make_interval(secs => $4)`,
      [...scope, IDEMPOTENCY_IN_FLIGHT_LEASE_S],
    );
  }
  throw errors.idempotencyKeyInFlight();
}

/**
 * The one-round-trip form of runIdempotent, for a use case whose whole effect is one
 * `INSERT ... SELECT ... WHERE EXISTS (SELECT 1 FROM idempotency_claim)` statement and whose response
 * is known before it runs: the key's claim, its stored response already in place, is a CTE of that
 * statement, so claim, effect and result commit together with no BEGIN/COMMIT round trips. Without a
 * key the claim is a constant row. Returns null when the key is already taken (an earlier or a
 * concurrent request with it): the caller then goes through runIdempotent, which waits, replays or
 * refuses, exactly as for any other use case.
 */
export async function insertOnce<Body>(
  db: Queryable,
  principal: ApiPrincipal,
  key: string | null,
  hash: string,
  outcome: { status: number; body: Body },
  effect: { sql: string; params: readonly unknown[]; name: string },
): Promise<Outcome<Body> | null> {
  const n = effect.params.length;
  const claim =
    key === null
      ? 'WITH idempotency_claim AS (SELECT 1)'
      : `WITH idempotency_claim AS (
           INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, state, response_status, response_body)
           VALUES ($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, 'completed', $${n + 5}, $${n + 6})
           ON CONFLICT DO NOTHING RETURNING 1)`;
  const params =
    key === null
      ? effect.params
      : [...effect.params, principal.merchantId, principal.environment, key, hash, outcome.status, JSON.stringify(outcome.body)];
  const sql = `${claim}\n${effect.sql}`;
  const name = `${effect.name}_${key === null ? 'nokey' : 'key'}`;
  try {
    const rows = await db.write(name, sql, params);
    return rows.length > 0 ? { ...outcome, replayed: false } : null;
  } catch (error) {
    // The claim would wait on a concurrent request with the same key: the general way waits for it.
    if (error instanceof DbError && error.isLockTimeout) return null;
    throw error;
  }
}

export const purgeExpiredIdempotencyKeys = (db: Queryable) =>
  db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`, [IDEMPOTENCY_KEY_TTL_HOURS]);
