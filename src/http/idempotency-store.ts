// The SQL of Idempotency-Key handling (idempotency_keys): a key's claim and its stored result, the read of
// a key already taken, the deletes that free an expired key or an abandoned claim, the purge, and the one
// statement that puts a completed claim in front of a caller's insert. When to claim, replay, refuse or
// take over, and the lease and the retention, are idempotency.ts's; this module runs what it is told to.
import type { Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';

/** A key's scope: the merchant, the environment and the Idempotency-Key. */
export type KeyScope = readonly [merchantId: string, environment: string, key: string];

/**
 * A use case whose whole effect is one `INSERT ... SELECT ... WHERE EXISTS (SELECT 1 FROM idempotency_claim)`
 * statement (see insertClaimed); `name` names the prepared statement.
 */
export interface OneStatementInsert {
  sql: string;
  params: readonly unknown[];
  name: string;
}

/** A key already taken, as stored: `stale` past the in-flight lease, `expired` past the retention. */
export interface StoredKey {
  request_hash: string;
  state: 'in_flight' | 'completed';
  response_status: number | null;
  response_body: unknown;
  stale: boolean;
  expired: boolean;
}

/** Claims the key (in flight) in the caller's transaction; false when it is already taken. */
export async function claimKey(tx: Queryable, scope: KeyScope, requestHash: string): Promise<boolean> {
  const claimed = await tx.query(
    `INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, state)
         VALUES ($1, $2, $3, $4, 'in_flight') ON CONFLICT DO NOTHING RETURNING 1`,
    [...scope, requestHash],
  );
  return claimed.length > 0;
}

/** Stores the result with the claim, in the transaction that claimed the key. */
export const completeKey = (tx: Queryable, scope: KeyScope, status: number, body: unknown) =>
  tx.query(
    `UPDATE idempotency_keys SET state = 'completed', response_status = $4, response_body = $5
          WHERE merchant_id = $1 AND environment = $2 AND key = $3`,
    [...scope, status, JSON.stringify(body)],
  );

/** The key as stored, or null when there is none (a claim rolled back meanwhile). */
export const findStoredKey = (db: Queryable, scope: KeyScope, inFlightLeaseS: number, ttlHours: number) =>
  firstRow(
    db.query<StoredKey>(
      `SELECT request_hash, state, response_status, response_body,
              created_at < now() - make_interval(secs => $4) AS stale,
              created_at < now() - make_interval(hours => $5) AS expired
         FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND key = $3`,
      [...scope, inFlightLeaseS, ttlHours],
    ),
  );

/** Frees the key when it is older than the retention. */
export const deleteExpiredKey = (db: Queryable, scope: KeyScope, ttlHours: number) =>
  db.query(
    `DELETE FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND key = $3
           AND created_at < now() - make_interval(hours => $4)`,
    [...scope, ttlHours],
  );

/** Frees the key when it is still an in-flight claim older than the lease (its process died mid-request). */
export const deleteAbandonedClaim = (db: Queryable, scope: KeyScope, inFlightLeaseS: number) =>
  db.query(
    `DELETE FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND key = $3
         AND state = 'in_flight' AND created_at < now() - make_interval(secs => $4)`,
    [...scope, inFlightLeaseS],
  );

/** Deletes every key older than the retention. */
export const deleteExpiredKeys = (db: Queryable, ttlHours: number) =>
  db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`, [ttlHours]);

/** A key's claim written already completed, its response in place (insertClaimed). */
export interface CompletedClaim {
  scope: KeyScope;
  requestHash: string;
  status: number;
  body: unknown;
}

/**
 * Runs `effect` as ONE statement, behind a CTE `idempotency_claim`: the key's completed claim (ON CONFLICT
 * DO NOTHING, so it returns no row when the key is already taken), or a constant row without a key. The
 * effect inserts only when the claim returned its row, so claim, effect and result commit together, with
 * no BEGIN/COMMIT round trips. Returns the effect's rows: none when the key was already taken. A claim
 * that would wait on a concurrent request with the same key fails with the lock timeout (a DbError).
 */
export function insertClaimed(
  db: Queryable,
  completed: CompletedClaim | null,
  effect: OneStatementInsert,
): Promise<unknown[]> {
  const n = effect.params.length;
  const claim =
    completed === null
      ? 'WITH idempotency_claim AS (SELECT 1)'
      : `WITH idempotency_claim AS (
           INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, state, response_status, response_body)
           VALUES ($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, 'completed', $${n + 5}, $${n + 6})
           ON CONFLICT DO NOTHING RETURNING 1)`;
  const params =
    completed === null
      ? effect.params
      : [...effect.params, ...completed.scope, completed.requestHash, completed.status, JSON.stringify(completed.body)];
  const sql = `${claim}\n${effect.sql}`;
  const name = `${effect.name}_${completed === null ? 'nokey' : 'key'}`;
  return db.write(name, sql, params);
}
