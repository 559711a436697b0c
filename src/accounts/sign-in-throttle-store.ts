// The SQL of sign-in backoff (sign_in_throttles): one row per key, its failures, the next allowed time
// and a version moved by every attempt on it. The policies, the keys and the backoff arithmetic are
// sign-in-throttle.ts's; this module only reads and writes the rows it is told to.
import type { Queryable } from '../db/index.ts';

/** The attempt's rows as locked: failures counted, whether they are forgotten (idle too long), and the seconds still to wait. */
export interface ThrottleRow {
  key: string;
  failures: number;
  forgotten: boolean;
  wait_s: number;
}

/** A row's version after an attempt moved it. */
export interface ThrottleVersion {
  key: string;
  version: number;
}

/** Creates the rows of these keys that do not exist yet (no failure, no delay). */
export const ensureThrottles = (tx: Queryable, keys: readonly { key: string; accountKey: string | null }[]) =>
  tx.query(
    'INSERT INTO sign_in_throttles (key, account_key) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (key) DO NOTHING',
    [keys.map((k) => k.key), keys.map((k) => k.accountKey)],
  );

/** Locks the rows of these keys, in key order, until the transaction ends; failures idle past `forgottenAfterS` read as forgotten. */
export const lockThrottles = (tx: Queryable, keys: readonly string[], forgottenAfterS: number) =>
  tx.query<ThrottleRow>(
    `SELECT key, failures, updated_at < clock_timestamp() - make_interval(secs => $2) AS forgotten,
              CASE WHEN next_allowed_at > clock_timestamp() THEN ceil(extract(epoch FROM next_allowed_at - clock_timestamp()))::int ELSE 0 END AS wait_s
         FROM sign_in_throttles WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE`,
    [keys, forgottenAfterS],
  );

/** Moves the version of these keys (an attempt was refused on them). */
export const bumpThrottleVersions = (tx: Queryable, keys: readonly string[]) =>
  tx.query('UPDATE sign_in_throttles SET version = version + 1 WHERE key = ANY($1::text[])', [keys]);

/** Records each key's failures and its delay (none when 0: the next allowed time stays), moving its version; the new versions. */
export const recordFailures = (tx: Queryable, updates: readonly { key: string; failures: number; delayS: number }[]) =>
  tx.query<ThrottleVersion>(
    `UPDATE sign_in_throttles t
          SET failures = u.failures, version = t.version + 1, updated_at = clock_timestamp(),
              next_allowed_at = CASE WHEN u.delay_s > 0 THEN clock_timestamp() + make_interval(secs => u.delay_s) ELSE t.next_allowed_at END
         FROM unnest($1::text[], $2::int[], $3::int[]) AS u(key, failures, delay_s)
        WHERE t.key = u.key
        RETURNING t.key, t.version`,
    [updates.map((u) => u.key), updates.map((u) => u.failures), updates.map((u) => u.delayS)],
  );

/** Clears the failures and the delay of each key still at the given version. */
export const clearFailuresAtVersion = (db: Queryable, versions: readonly ThrottleVersion[]) =>
  db.query(
    `UPDATE sign_in_throttles t SET failures = 0, next_allowed_at = NULL
       FROM unnest($1::text[], $2::bigint[]) AS u(key, version) WHERE t.key = u.key AND t.version = u.version`,
    [versions.map((v) => v.key), versions.map((v) => v.version)],
  );

/** Takes one failure back from the key; its delay is cleared only when it is still at the given version. */
export const takeBackFailure = (db: Queryable, key: string, version: number) =>
  db.query(
    'UPDATE sign_in_throttles SET failures = greatest(failures - 1, 0), next_allowed_at = CASE WHEN version = $2 THEN NULL ELSE next_allowed_at END WHERE key = $1',
    [key, version],
  );

/** Deletes the rows an account's key names (pair, account and device keys). */
export const deleteAccountThrottles = (tx: Queryable, accountKey: string) =>
  tx.query('DELETE FROM sign_in_throttles WHERE account_key = $1', [accountKey]);

/** Deletes the rows with no attempt for `forgottenAfterS` and no delay still running. */
export const deleteIdleThrottles = (db: Queryable, forgottenAfterS: number) =>
  db.query(
    'DELETE FROM sign_in_throttles WHERE updated_at < now() - make_interval(secs => $1) AND (next_allowed_at IS NULL OR next_allowed_at < now())',
    [forgottenAfterS],
  );
