// Console sign-in sessions for the dashboard and the operator console: the password check through the
// shared backoff (sign-in-throttle.ts), an opaque session token stored only as its SHA-256 hash, a CSRF
// token per session, the second-factor step, and the trusted device after each complete sign-in
// (trusted-devices.ts). The cookies themselves are the web layer's (web/auth.ts).
import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../db/index.ts';
import { sha256Hex } from '../lib/canonical-json.ts';
import { secondFactorRequiredFor } from './console-accounts.ts';
import * as store from './console-session-store.ts';
import { verifyNothing, verifyPassword } from './password-hash.ts';
import { accountKey, reserveAttempt, type ConsoleKind } from './sign-in-throttle.ts';
import { rememberDevice } from './trusted-devices.ts';

export const SESSION_LIFETIME_S = 12 * 3_600;
/** Time to enter the second-factor code after the password was right. */
export const SECOND_FACTOR_WINDOW_S = 5 * 60;

export type { ConsoleKind };

export interface ConsoleSession {
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
  /** The merchant's activation status (issue 33); null for operators. */
  activationStatus: string | null;
  /** 'second_factor': the password was right, the code is still to come; nothing else opens. */
  stage: store.SessionStage;
  /** A temporary password (an invitation): nothing opens until it is changed. */
  mustChangePassword: boolean;
  secondFactorEnrolled: boolean;
  /** The merchant requires a second factor for this user's role; every operator must use one. */
  secondFactorRequired: boolean;
}

const hashToken = (token: string): string => sha256Hex(token);

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
export async function signIn(
  db: Db,
  kind: ConsoleKind,
  email: string,
  password: string,
  address: string,
  device: string | null = null,
): Promise<SignInResult> {
  const attempt = await reserveAttempt(db, { kind, email, address, device });
  if (!attempt.allowed) return { ok: false, reason: 'throttled', retryAfterS: attempt.retryAfterS };
  const account = await store.findSignInAccount(db, kind, email.trim());
  // Verify against a dummy hash when the account does not exist, so timing does not reveal emails.
  // An unknown account costs the same hash as a known one (no timing tells which e-mails exist).
  const valid = account?.password_hash
    ? await verifyPassword(account.password_hash, password)
    : await verifyNothing(password);
  if (!account || !valid) return { ok: false, reason: 'invalid' };
  // With a code still to come the password forgives nothing yet: else re-entering it would reset the
  // count between code guesses. The code's success does.
  if (!account.second_factor) await attempt.succeeded();
  const token = await createSession(db, kind, account.id, account.second_factor ? 'second_factor' : 'active');
  if (!account.second_factor && kind === 'operator') await store.recordOperatorSignIn(db, account.id);
  return {
    ok: true,
    token,
    secondFactor: account.second_factor,
    device: account.second_factor ? null : await trustDevice(db, kind, email, device),
  };
}

/** A complete sign-in: the browser's device token for the account (the one it presented when still trusted, else a new one). */
export const trustDevice = (db: Db, kind: ConsoleKind, email: string, presented: string | null) =>
  rememberDevice(db, accountKey(kind, email), presented);

async function createSession(
  db: Queryable,
  kind: ConsoleKind,
  accountId: string,
  stage: store.SessionStage,
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await store.insertSession(db, {
    tokenHash: hashToken(token),
    kind,
    accountId,
    csrfToken: randomBytes(24).toString('base64url'),
    stage,
    lifetimeS: stage === 'active' ? SESSION_LIFETIME_S : SECOND_FACTOR_WINDOW_S,
  });
  return token;
}

/** The code was right: the half-open session is replaced by a full one under a new token. */
export async function completeSecondFactor(db: Db, session: ConsoleSession): Promise<string | null> {
  return db.transaction(async (tx) => {
    if (!(await store.deleteSecondFactorSession(tx, session.tokenHash))) return null;
    if (session.kind === 'operator') await store.recordOperatorSignIn(tx, session.operatorId!);
    return createSession(tx, session.kind, (session.userId ?? session.operatorId)!, 'active');
  });
}

/** The live session a session token opens in this console, or null (unknown, expired, or its user deactivated). */
export async function findSession(db: Queryable, kind: ConsoleKind, token: string): Promise<ConsoleSession | null> {
  const row = await store.findLiveSession(db, kind, hashToken(token));
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
    activationStatus: row.activation_status,
    stage: row.stage,
    mustChangePassword: row.must_change_password,
    secondFactorEnrolled: row.second_factor_enrolled,
    secondFactorRequired: secondFactorRequiredFor(kind, row.role, row.second_factor_required),
  };
}

export const signOut = (db: Queryable, session: ConsoleSession) => store.deleteSession(db, session.tokenHash);

export const switchEnvironment = (db: Queryable, session: ConsoleSession, environment: 'test' | 'live') =>
  store.setSessionEnvironment(db, session.tokenHash, environment);
