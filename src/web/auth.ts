// Browser sign-in for the dashboard and the operator console: argon2id passwords, an opaque session
// cookie (HttpOnly, SameSite=Lax, Secure on https) whose hash is stored, a CSRF token per session,
// a backoff on failures shared by every process (accounts/sign-in-throttle.ts), a TOTP second factor
// for merchant users who turned it on, and a device cookie after each complete sign-in, so that browser's
// later attempts back off on their own (accounts/trusted-devices.ts).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SECOND_FACTOR_ROLES } from '../accounts/console-accounts.ts';
import type { Role } from '../accounts/model.ts';
import { verifyPassword } from '../accounts/service.ts';
import { accountKey, reserveAttempt, type ConsoleKind } from '../accounts/sign-in-throttle.ts';
import { rememberDevice, TRUSTED_DEVICE_LIFETIME_S } from '../accounts/trusted-devices.ts';
import type { Db, Queryable } from '../db/index.ts';

export const SESSION_LIFETIME_S = 12 * 3_600;
/** Time to enter the second-factor code after the password was right. */
export const SECOND_FACTOR_WINDOW_S = 5 * 60;

export type { ConsoleKind };

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
  /** 'second_factor': the password was right, the code is still to come; nothing else opens. */
  stage: 'active' | 'second_factor';
  /** A temporary password (an invitation): nothing opens until it is changed. */
  mustChangePassword: boolean;
  secondFactorEnrolled: boolean;
  /** The merchant requires a second factor for this user's role. */
  secondFactorRequired: boolean;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
export const cookieName = (kind: ConsoleKind) => (kind === 'merchant' ? 'sika_dashboard' : 'sika_ops');
/** The browser's trusted-device token for this console (an opaque random value: it names no account). */
export const deviceCookieName = (kind: ConsoleKind) => (kind === 'merchant' ? 'sika_dashboard_device' : 'sika_ops_device');
const cookiePath = (kind: ConsoleKind) => (kind === 'merchant' ? '/dashboard' : '/ops');

export type SignInResult =
  /** device: the device token to set now (null while the second factor is still to come). */
  | { ok: true; token: string; secondFactor: boolean; device: string | null }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'throttled'; retryAfterS: number };

/**
 * Checks a password from an address, with the browser's device cookie if any. The attempt is reserved
 * in the shared backoff first (refused while it backs off, counted as a failure until the password
 * proves right), so concurrent guesses cannot outrun the count. With a second factor on, the session
 * opens at the code step only, and the device is trusted only after the code.
 */
export async function signIn(db: Db, kind: ConsoleKind, email: string, password: string, address: string, device: string | null = null): Promise<SignInResult> {
  const attempt = await reserveAttempt(db, { kind, email, address, device });
  if (!attempt.allowed) return { ok: false, reason: 'throttled', retryAfterS: attempt.retryAfterS };
  const table = kind === 'merchant' ? 'users' : 'operators';
  const rows = await db.query<{ id: string; password_hash: string | null; second_factor: boolean }>(
    `SELECT id, password_hash, ${kind === 'merchant' ? 'totp_secret IS NOT NULL' : 'false'} AS second_factor
       FROM ${table} WHERE lower(email) = lower($1)${kind === 'merchant' ? ' AND active' : ''}`,
    [email.trim()],
  );
  const account = rows[0];
  // Verify against a dummy hash when the account does not exist, so timing does not reveal emails.
  const valid = account?.password_hash ? await verifyPassword(account.password_hash, password) : (await verifyPassword(DUMMY_HASH, password), false);
  if (!account || !valid) return { ok: false, reason: 'invalid' };
  // With a code still to come the password forgives nothing yet: else re-entering it would reset the
  // count between code guesses. The code's success does.
  if (!account.second_factor) await attempt.succeeded();
  const token = await createWebSession(db, kind, account.id, account.second_factor ? 'second_factor' : 'active');
  return { ok: true, token, secondFactor: account.second_factor, device: account.second_factor ? null : await trustDevice(db, kind, email, device) };
}

/** A complete sign-in: the browser's device token for the account (the one it presented when still trusted, else a new one). */
export const trustDevice = (db: Db, kind: ConsoleKind, email: string, presented: string | null) => rememberDevice(db, accountKey(kind, email), presented);

async function createWebSession(db: Queryable, kind: ConsoleKind, accountId: string, stage: WebSession['stage']): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db.query(
    `INSERT INTO web_sessions (token_hash, kind, user_id, operator_id, csrf_token, stage, expires_at) VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
    [hashToken(token), kind, kind === 'merchant' ? accountId : null, kind === 'operator' ? accountId : null, randomBytes(24).toString('base64url'), stage, stage === 'active' ? SESSION_LIFETIME_S : SECOND_FACTOR_WINDOW_S],
  );
  return token;
}

/** The code was right: the half-open session is replaced by a full one under a new token. */
export async function completeSecondFactor(db: Db, session: WebSession): Promise<string | null> {
  return db.transaction(async (tx) => {
    const removed = await tx.query("DELETE FROM web_sessions WHERE token_hash = $1 AND stage = 'second_factor' AND expires_at > now() RETURNING token_hash", [session.tokenHash]);
    if (removed.length === 0) return null;
    return createWebSession(tx, session.kind, (session.userId ?? session.operatorId)!, 'active');
  });
}

// argon2id hash of a random string nobody knows; only used to spend the same time on unknown emails.
const DUMMY_HASH = '$argon2id$v=19$m=65536,p=4,t=3$v0Ks/HSmgsOwXyJO8qokGg$jqbMpXKnqRUCll3pAlqQpOtugz/9T3w3IVLQzsHhohc';

export function setSessionCookie(reply: FastifyReply, kind: ConsoleKind, token: string, secure: boolean): void {
  reply.setCookie(cookieName(kind), token, { httpOnly: true, sameSite: 'lax', secure, path: cookiePath(kind), maxAge: SESSION_LIFETIME_S });
}

export function setDeviceCookie(reply: FastifyReply, kind: ConsoleKind, token: string, secure: boolean): void {
  reply.setCookie(deviceCookieName(kind), token, { httpOnly: true, sameSite: 'lax', secure, path: cookiePath(kind), maxAge: TRUSTED_DEVICE_LIFETIME_S });
}

/** The device cookie a request presents (trusted-devices.ts looks up only well-formed tokens). */
export const presentedDevice = (request: FastifyRequest, kind: ConsoleKind): string | null => request.cookies[deviceCookieName(kind)] ?? null;

export function clearSessionCookie(reply: FastifyReply, kind: ConsoleKind): void {
  reply.clearCookie(cookieName(kind), { path: cookiePath(kind) });
}

export async function loadSession(db: Queryable, request: FastifyRequest, kind: ConsoleKind): Promise<WebSession | null> {
  const token = request.cookies[cookieName(kind)];
  if (!token || token.length > 200) return null;
  const rows = await db.query<{
    token_hash: string; kind: ConsoleKind; user_id: string | null; operator_id: string | null; csrf_token: string; environment: 'test' | 'live';
    email: string; role: string; merchant_id: string | null; merchant_name: string | null;
    stage: WebSession['stage']; must_change_password: boolean; second_factor_enrolled: boolean; second_factor_required: boolean;
  }>(
    kind === 'merchant'
      ? `SELECT s.token_hash, s.kind, s.user_id, s.operator_id, s.csrf_token, s.environment, u.email, u.role, u.merchant_id, m.name AS merchant_name,
                s.stage, u.must_change_password, u.totp_secret IS NOT NULL AS second_factor_enrolled, m.second_factor_required
           FROM web_sessions s JOIN users u ON u.id = s.user_id JOIN merchants m ON m.id = u.merchant_id
          WHERE s.token_hash = $1 AND s.kind = 'merchant' AND s.expires_at > now() AND u.active`
      : `SELECT s.token_hash, s.kind, s.user_id, s.operator_id, s.csrf_token, s.environment, o.email, o.role, NULL::uuid AS merchant_id, NULL::text AS merchant_name,
                s.stage, false AS must_change_password, false AS second_factor_enrolled, false AS second_factor_required
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
    stage: row.stage,
    mustChangePassword: row.must_change_password,
    secondFactorEnrolled: row.second_factor_enrolled,
    secondFactorRequired: row.second_factor_required && SECOND_FACTOR_ROLES.includes(row.role as Role),
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
