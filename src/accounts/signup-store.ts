// The SQL of self-service sign-ups (migration 037): the pending sign-ups (signups), the accepted forms the
// rate limits count (signup_requests), and the owner's name on the user a verified sign-up makes. The rules
// (limits, lifetimes, which mail) are signups.ts's; this module reads and writes the rows it is told to.
import type { Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';

/**
 * Serialises the sign-up forms of one key (a client address, an e-mail) until the transaction ends, so two
 * processes counting the same key cannot both pass its limit. Taken in a fixed order (address, then e-mail).
 */
export const lockSignupKey = (tx: Queryable, key: string) =>
  tx.query("SELECT pg_advisory_xact_lock(hashtextextended('sika_signup:' || $1, 0))", [key]);

/** Forms accepted from this address within the window, and the seconds until the oldest leaves it. */
export const countAddressRequests = (tx: Queryable, address: string, windowS: number) =>
  firstRow(
    tx.query<{ count: number; retry_after_s: number | null }>(
      `SELECT count(*)::int AS count,
              ceil(extract(epoch FROM min(created_at) + make_interval(secs => $2) - now()))::int AS retry_after_s
         FROM signup_requests WHERE requester_ip = $1 AND created_at > now() - make_interval(secs => $2)`,
      [address, windowS],
    ),
  );

/** Mails sent to this e-mail (by its hash) within the window. */
export async function countMailedRequests(tx: Queryable, emailHash: string, windowS: number): Promise<number> {
  const row = await firstRow(
    tx.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM signup_requests
        WHERE email_hash = $1 AND mailed AND created_at > now() - make_interval(secs => $2)`,
      [emailHash, windowS],
    ),
  );
  return row?.count ?? 0;
}

export const insertRequest = (tx: Queryable, r: { address: string; emailHash: string; mailed: boolean }) =>
  tx.query('INSERT INTO signup_requests (requester_ip, email_hash, mailed) VALUES ($1, $2, $3)', [
    r.address,
    r.emailHash,
    r.mailed,
  ]);

/** Whether a user (active or not) has this e-mail: such an address cannot sign up again. */
export async function userHasEmail(tx: Queryable, email: string): Promise<boolean> {
  const rows = await tx.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [email]);
  return rows.length > 0;
}

/**
 * The one unverified sign-up of this e-mail, written new or replacing the one there (expired or not): its
 * token, lifetime, names, password and address are the new form's, so the old link no longer opens it.
 */
export const upsertPendingSignup = (
  tx: Queryable,
  s: {
    id: string;
    businessName: string;
    ownerName: string;
    email: string;
    passwordHash: string;
    tokenHash: string;
    address: string;
    lifetimeS: number;
  },
) =>
  tx.query(
    `INSERT INTO signups (id, business_name, owner_name, email, password_hash, token_hash, requester_ip, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))
     ON CONFLICT (lower(email)) WHERE verified_at IS NULL DO UPDATE
        SET business_name = EXCLUDED.business_name, owner_name = EXCLUDED.owner_name, email = EXCLUDED.email,
            password_hash = EXCLUDED.password_hash, token_hash = EXCLUDED.token_hash,
            requester_ip = EXCLUDED.requester_ip, expires_at = EXCLUDED.expires_at, created_at = now()`,
    [s.id, s.businessName, s.ownerName, s.email, s.passwordHash, s.tokenHash, s.address, s.lifetimeS],
  );

export interface PendingSignupRow {
  id: string;
  business_name: string;
  owner_name: string;
  email: string;
  password_hash: string;
}

/** The unverified, unexpired sign-up a token opens, locked until the transaction ends; null otherwise. */
export const lockOpenSignup = (tx: Queryable, tokenHash: string) =>
  firstRow(
    tx.query<PendingSignupRow>(
      `SELECT id, business_name, owner_name, email, password_hash FROM signups
        WHERE token_hash = $1 AND verified_at IS NULL AND expires_at > now() FOR UPDATE`,
      [tokenHash],
    ),
  );

/** Whether a token opens an unverified, unexpired sign-up (the confirmation page; nothing is locked or used). */
export async function openSignupExists(db: Queryable, tokenHash: string): Promise<boolean> {
  const rows = await db.query(
    'SELECT 1 FROM signups WHERE token_hash = $1 AND verified_at IS NULL AND expires_at > now()',
    [tokenHash],
  );
  return rows.length > 0;
}

/** The sign-up is verified and made this merchant: its password hash is no longer kept. */
export const markVerified = (tx: Queryable, id: string, merchantId: string) =>
  tx.query('UPDATE signups SET verified_at = now(), merchant_id = $2, password_hash = NULL WHERE id = $1', [
    id,
    merchantId,
  ]);

export const setUserName = (tx: Queryable, userId: string, name: string) =>
  tx.query('UPDATE users SET name = $2 WHERE id = $1', [userId, name]);

/** Deletes unverified sign-ups expired more than `graceS` ago, and request rows older than `requestsKeptS`; the sign-ups deleted. */
export async function deleteExpired(db: Queryable, graceS: number, requestsKeptS: number): Promise<number> {
  const deleted = await db.query(
    `DELETE FROM signups WHERE verified_at IS NULL AND expires_at < now() - make_interval(secs => $1) RETURNING id`,
    [graceS],
  );
  await db.query('DELETE FROM signup_requests WHERE created_at < now() - make_interval(secs => $1)', [requestsKeptS]);
  return deleted.length;
}
