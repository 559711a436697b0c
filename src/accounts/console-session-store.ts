// The SQL of console sign-in sessions (web_sessions) and of the accounts that sign in (users, operators).
import type { Queryable } from '../db/index.ts';
import type { ConsoleKind } from './sign-in-throttle.ts';

export type SessionStage = 'active' | 'second_factor';

/** The account an email signs in to: an active merchant user or an operator (second factor: a TOTP secret is set). */
export async function findSignInAccount(db: Queryable, kind: ConsoleKind, email: string) {
  const table = kind === 'merchant' ? 'users' : 'operators';
  const rows = await db.query<{ id: string; password_hash: string | null; second_factor: boolean }>(
    `SELECT id, password_hash, totp_secret IS NOT NULL AS second_factor
       FROM ${table} WHERE lower(email) = lower($1)${kind === 'merchant' ? ' AND active' : ''}`,
    [email],
  );
  return rows[0] ?? null;
}

export const insertSession = (
  db: Queryable,
  s: {
    tokenHash: string;
    kind: ConsoleKind;
    accountId: string;
    csrfToken: string;
    stage: SessionStage;
    lifetimeS: number;
  },
) =>
  db.query(
    `INSERT INTO web_sessions (token_hash, kind, user_id, operator_id, csrf_token, stage, expires_at) VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
    [
      s.tokenHash,
      s.kind,
      s.kind === 'merchant' ? s.accountId : null,
      s.kind === 'operator' ? s.accountId : null,
      s.csrfToken,
      s.stage,
      s.lifetimeS,
    ],
  );

/** Removes a half-open session (password right, code to come) that has not expired; false when there was none. */
export async function deleteSecondFactorSession(tx: Queryable, tokenHash: string): Promise<boolean> {
  const removed = await tx.query(
    "DELETE FROM web_sessions WHERE token_hash = $1 AND stage = 'second_factor' AND expires_at > now() RETURNING token_hash",
    [tokenHash],
  );
  return removed.length > 0;
}

export interface SessionRow {
  token_hash: string;
  kind: ConsoleKind;
  user_id: string | null;
  operator_id: string | null;
  csrf_token: string;
  environment: 'test' | 'live';
  email: string;
  role: string;
  merchant_id: string | null;
  merchant_name: string | null;
  /** The merchant's activation status (the dashboard shows "Activate your account" until approved); null for operators. */
  activation_status: string | null;
  stage: SessionStage;
  must_change_password: boolean;
  second_factor_enrolled: boolean;
  second_factor_required: boolean;
}

/** An unexpired session of the console with its account (a merchant user must still be active). */
export async function findLiveSession(db: Queryable, kind: ConsoleKind, tokenHash: string): Promise<SessionRow | null> {
  const rows = await db.query<SessionRow>(
    kind === 'merchant'
      ? `SELECT s.token_hash, s.kind, s.user_id, s.operator_id, s.csrf_token, s.environment, u.email, u.role, u.merchant_id, m.name AS merchant_name, m.activation_status,
                s.stage, u.must_change_password, u.totp_secret IS NOT NULL AS second_factor_enrolled, m.second_factor_required
           FROM web_sessions s JOIN users u ON u.id = s.user_id JOIN merchants m ON m.id = u.merchant_id
          WHERE s.token_hash = $1 AND s.kind = 'merchant' AND s.expires_at > now() AND u.active`
      : `SELECT s.token_hash, s.kind, s.user_id, s.operator_id, s.csrf_token, s.environment, o.email, o.role, NULL::uuid AS merchant_id, NULL::text AS merchant_name, NULL::text AS activation_status,
                s.stage, o.must_change_password, o.totp_secret IS NOT NULL AS second_factor_enrolled, true AS second_factor_required
           FROM web_sessions s JOIN operators o ON o.id = s.operator_id
          WHERE s.token_hash = $1 AND s.kind = 'operator' AND s.expires_at > now()`,
    [tokenHash],
  );
  return rows[0] ?? null;
}

/** A complete sign-in of an operator (the Operators page shows when each last signed in). */
export const recordOperatorSignIn = (db: Queryable, operatorId: string) =>
  db.query('UPDATE operators SET last_sign_in_at = now() WHERE id = $1', [operatorId]);

export const deleteSession = (db: Queryable, tokenHash: string) =>
  db.query('DELETE FROM web_sessions WHERE token_hash = $1', [tokenHash]);

export const setSessionEnvironment = (db: Queryable, tokenHash: string, environment: 'test' | 'live') =>
  db.query('UPDATE web_sessions SET environment = $2 WHERE token_hash = $1', [tokenHash, environment]);

/** Signs out every session of the account but the one kept (null: all of them). */
export const deleteAccountSessions = (
  tx: Queryable,
  kind: ConsoleKind,
  accountId: string,
  keepTokenHash: string | null,
) =>
  tx.query(
    `DELETE FROM web_sessions WHERE ${kind === 'merchant' ? 'user_id' : 'operator_id'} = $1 AND ($2::text IS NULL OR token_hash <> $2)`,
    [accountId, keepTokenHash],
  );

export const deleteExpiredSessions = (db: Queryable) => db.query('DELETE FROM web_sessions WHERE expires_at < now()');
