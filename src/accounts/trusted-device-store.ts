// The SQL of trusted devices (trusted_devices): a device is the SHA-256 of its token, bound to an account
// key. The rules (which token is well formed, the lifetime, how many devices an account keeps) are
// trusted-devices.ts's; this module only reads and writes the rows it is told to.
import type { Queryable } from '../db/index.ts';

/** The stored hash when it is a live device of this account; null otherwise (another account's, revoked, expired). */
export async function findLiveDevice(db: Queryable, tokenHash: string, accountKey: string): Promise<string | null> {
  const rows = await db.query<{ token_hash: string }>(
    'SELECT token_hash FROM trusted_devices WHERE token_hash = $1 AND account_key = $2 AND expires_at > now()',
    [tokenHash, accountKey],
  );
  return rows[0]?.token_hash ?? null;
}

/** Until the transaction ends, the account's devices change only here: concurrent sign-ins wait their turn. */
export const lockAccountDevices = (tx: Queryable, accountKey: string) =>
  tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`trusted_devices:${accountKey}`]);

/** Starts a live device's time again (used now, trusted for `lifetimeS` more); false when it is not a live device of this account. */
export async function renewDevice(
  tx: Queryable,
  tokenHash: string,
  accountKey: string,
  lifetimeS: number,
): Promise<boolean> {
  const renewed = await tx.query(
    `UPDATE trusted_devices SET last_used_at = now(), expires_at = now() + make_interval(secs => $3)
          WHERE token_hash = $1 AND account_key = $2 AND expires_at > now() RETURNING token_hash`,
    [tokenHash, accountKey, lifetimeS],
  );
  return renewed.length > 0;
}

export const insertDevice = (tx: Queryable, tokenHash: string, accountKey: string, lifetimeS: number) =>
  tx.query(
    'INSERT INTO trusted_devices (token_hash, account_key, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))',
    [tokenHash, accountKey, lifetimeS],
  );

/** Deletes the account's devices but its `keep` most recently used. */
export const keepRecentDevices = (tx: Queryable, accountKey: string, keep: number) =>
  tx.query(
    `DELETE FROM trusted_devices WHERE account_key = $1 AND token_hash NOT IN (
         SELECT token_hash FROM trusted_devices WHERE account_key = $1 ORDER BY last_used_at DESC, created_at DESC LIMIT $2)`,
    [accountKey, keep],
  );

/** Deletes the account's devices, but the one whose hash is `keepHash` (none kept when null). */
export const deleteAccountDevices = (tx: Queryable, accountKey: string, keepHash: string | null) =>
  tx.query('DELETE FROM trusted_devices WHERE account_key = $1 AND ($2::text IS NULL OR token_hash <> $2)', [
    accountKey,
    keepHash,
  ]);

export const deleteExpiredDevices = (db: Queryable) =>
  db.query('DELETE FROM trusted_devices WHERE expires_at <= now()');
