// Browser sign-in for the dashboard and the operator console: argon2id passwords, an opaque session
// cookie (HttpOnly, SameSite=Lax, Secure on https) whose hash is stored, a CSRF token per session,
// and a temporary lockout after repeated failures.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { verifyPassword } from '../accounts/service.ts';
import type { Db, Queryable } from '../db/index.ts';

export const SESSION_LIFETIME_S = 12 * 3_600;
export const FAILED_LOGINS_MAX = 5;
export const LOCKOUT_S = 15 * 60;

export type ConsoleKind = 'merchant' | 'operator';

export interface WebSession {
  tokenHash: string;
  kind: ConsoleKind;
  userId: string | null;
  operatorId: string | null;
  csrfToken: string;
  environment: 'test' | 'live';
  email: string;
  role: string;
  merchantId: string | null;
  merchantName: string | null;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
export const cookieName = (kind: ConsoleKind) => (kind === 'merchant' ? 'sika_dashboard' : 'sika_ops');
const cookiePath = (kind: ConsoleKind) => (kind === 'merchant' ? '/dashboard' : '/ops');

export type SignInResult = { ok: true; token: string } | { ok: false; reason: 'invalid' | 'locked'; retryAfterS?: number };

/** Checks a password; 5 failures lock the account for 15 minutes (even a right password is refused meanwhile). */
export async function signIn(db: Db, kind: ConsoleKind, email: string, password: string): Promise<SignInResult> {
  const table = kind === 'merchant' ? 'users' : 'operators';
  const rows = await db.query<{ id: string; password_hash: string | null; failed_logins: number; locked_s: number | null }>(
    `SELECT id, password_hash, failed_logins, CASE WHEN locked_until > now() THEN ceil(extract(epoch FROM locked_until - now()))::int END AS locked_s
       FROM ${table} WHERE lower(email) = lower($1)${kind === 'merchant' ? ' AND active' : ''}`,
    [email.trim()],
  );
  const account = rows[0];
  if (account?.locked_s) return { ok: false, reason: 'locked', retryAfterS: account.locked_s };
  // Verify against a dummy hash when the account does not exist, so timing does not reveal emails.
  const valid = account?.password_hash ? await verifyPassword(account.password_hash, password) : (await verifyPassword(DUMMY_HASH, password), false);
  if (!account || !valid) {
    if (account) {
      await db.query(
        `UPDATE ${table} SET failed_logins = failed_logins + 1,
                locked_until = CASE WHEN failed_logins + 1 >= $2 THEN now() + make_interval(secs => $3) ELSE locked_until END
          WHERE id = $1`,
        [account.id, FAILED_LOGINS_MAX, LOCKOUT_S],
      );
    }
    return { ok: false, reason: 'invalid' };
  }
  await db.query(`UPDATE ${table} SET failed_logins = 0, locked_until = NULL WHERE id = $1`, [account.id]);
  const token = randomBytes(32).toString('base64url');
  await db.query(
    `INSERT INTO web_sessions (token_hash, kind, user_id, operator_id, csrf_token, expires_at) VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [hashToken(token), kind, kind === 'merchant' ? account.id : null, kind === 'operator' ? account.id : null, randomBytes(24).toString('base64url'), SESSION_LIFETIME_S],
  );
  return { ok: true, token };
}

// argon2id hash of a random string nobody knows; only used to spend the same time on unknown emails.
const DUMMY_HASH = '$argon2id$v=19$m=65536,p=4,t=3$v0Ks/HSmgsOwXyJO8qokGg$jqbMpXKnqRUCll3pAlqQpOtugz/9T3w3IVLQzsHhohc';

export function setSessionCookie(reply: FastifyReply, kind: ConsoleKind, token: string, secure: boolean): void {
  reply.setCookie(cookieName(kind), token, { httpOnly: true, sameSite: 'lax', secure, path: cookiePath(kind), maxAge: SESSION_LIFETIME_S });
}

export function clearSessionCookie(reply: FastifyReply, kind: ConsoleKind): void {
  reply.clearCookie(cookieName(kind), { path: cookiePath(kind) });
}

export async function loadSession(db: Queryable, request: FastifyRequest, kind: ConsoleKind): Promise<WebSession | null> {
  const token = request.cookies[cookieName(kind)];
  if (!token || token.length > 200) return null;
  const rows = await db.query<{
    token_hash: string; kind: ConsoleKind; user_id: string | null; operator_id: string | null; csrf_token: string; environment: 'test' | 'live';
    email: string; role: string; merchant_id: string | null; merchant_name: string | null;
  }>(
    kind === 'merchant'
      ? `SELECT s.token_hash, s.kind, s.user_id, s.operator_id, s.csrf_token, s.environment, u.email, u.role, u.merchant_id, m.name AS merchant_name
           FROM web_sessions s JOIN users u ON u.id = s.user_id JOIN merchants m ON m.id = u.merchant_id
          WHERE s.token_hash = $1 AND s.kind = 'merchant' AND s.expires_at > now() AND u.active`
      : `SELECT s.token_hash, s.kind, s.user_id, s.operator_id, s.csrf_token, s.environment, o.email, o.role, NULL::uuid AS merchant_id, NULL::text AS merchant_name
           FROM web_sessions s JOIN operators o ON o.id = s.operator_id
          WHERE s.token_hash = $1 AND s.kind = 'operator' AND s.expires_at > now()`,
    [hashToken(token)],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    tokenHash: row.token_hash,
    kind: row.kind,
    userId: row.user_id,
    operatorId: row.operator_id,
    csrfToken: row.csrf_token,
    environment: row.environment,
    email: row.email,
    role: row.role,
    merchantId: row.merchant_id,
    merchantName: row.merchant_name,
  };
}

export const signOut = (db: Queryable, session: WebSession) => db.query('DELETE FROM web_sessions WHERE token_hash = $1', [session.tokenHash]);

export const switchEnvironment = (db: Queryable, session: WebSession, environment: 'test' | 'live') =>
  db.query('UPDATE web_sessions SET environment = $2 WHERE token_hash = $1', [session.tokenHash, environment]);

/** Synchronizer-token CSRF check for every state-changing form post. */
export function csrfValid(session: WebSession, submitted: unknown): boolean {
  if (typeof submitted !== 'string' || submitted.length !== session.csrfToken.length) return false;
  return timingSafeEqual(Buffer.from(submitted), Buffer.from(session.csrfToken));
}
