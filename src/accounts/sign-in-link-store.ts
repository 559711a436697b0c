// The SQL of one-time dashboard sign-in links (sign_in_links) and of the first-run marker (first_run),
// migration 025.
import type { Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';

export const insertSignInLink = (db: Queryable, link: { tokenHash: string; userId: string; lifetimeS: number }) =>
  db.query(
    'INSERT INTO sign_in_links (token_hash, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))',
    [link.tokenHash, link.userId, link.lifetimeS],
  );

/**
 * Marks an unused, unexpired link used and returns its active user (whether a second factor is on), in one
 * statement: of two redeeming at once only one gets the row. Null for an unknown, used or expired link.
 */
export const useSignInLink = (tx: Queryable, tokenHash: string) =>
  firstRow(
    tx.query<{ user_id: string; email: string; second_factor: boolean }>(
      `UPDATE sign_in_links l SET used_at = now()
       FROM users u
      WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.expires_at > now() AND u.id = l.user_id AND u.active
      RETURNING l.user_id, u.email, u.totp_secret IS NOT NULL AS second_factor`,
      [tokenHash],
    ),
  );

/** Why a link that did not sign in was refused: 'used', 'expired', or null (unknown, or its user deactivated). */
export async function findSignInLinkState(db: Queryable, tokenHash: string): Promise<'used' | 'expired' | null> {
  const rows = await db.query<{ used: boolean; expired: boolean }>(
    'SELECT used_at IS NOT NULL AS used, expires_at <= now() AS expired FROM sign_in_links WHERE token_hash = $1',
    [tokenHash],
  );
  const row = rows[0];
  if (!row) return null;
  return row.used ? 'used' : row.expired ? 'expired' : null;
}

/** Whether the first run was decided already (by this process or another, now or at an earlier start). */
export async function firstRunDecided(db: Queryable): Promise<boolean> {
  return (await db.query('SELECT 1 FROM first_run')).length > 0;
}

/** Claims the first run: true for the one process whose insert made the row. */
export async function claimFirstRun(tx: Queryable): Promise<boolean> {
  return (
    (
      await tx.query(
        'INSERT INTO first_run (singleton) VALUES (true) ON CONFLICT (singleton) DO NOTHING RETURNING singleton',
      )
    ).length > 0
  );
}

export const recordDemoMerchant = (db: Queryable, merchantId: string) =>
  db.query('UPDATE first_run SET demo_merchant_id = $1', [merchantId]);

export const releaseFirstRun = (db: Queryable) => db.query('DELETE FROM first_run WHERE demo_merchant_id IS NULL');

export async function anyMerchant(db: Queryable): Promise<boolean> {
  return (await db.query('SELECT 1 FROM merchants LIMIT 1')).length > 0;
}

/** Whether an active merchant user has a dashboard password (one who came in by a sign-in link may not). */
export async function userHasPassword(db: Queryable, userId: string): Promise<boolean> {
  const rows = await db.query<{ has: boolean }>('SELECT password_hash IS NOT NULL AS has FROM users WHERE id = $1', [
    userId,
  ]);
  return rows[0]?.has ?? true;
}

/** Sets the first password of a user who has none; null when they have one already (or are inactive). */
export const setPasswordWhereNone = (tx: Queryable, userId: string, passwordHash: string) =>
  firstRow(
    tx.query<{ merchant_id: string; email: string }>(
      'UPDATE users SET password_hash = $2 WHERE id = $1 AND password_hash IS NULL AND active RETURNING merchant_id, email',
      [userId, passwordHash],
    ),
  );
