// Console accounts: setting and changing passwords (other sessions signed out), and the TOTP second
// factor (enrolment, recovery codes, checks with replay refused). Every change is audited in its own
// transaction; every secret check goes through the sign-in backoff first (sign-in-throttle.ts).
import { audit, type Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { AppError, errors } from '../http/errors.ts';
import { hashPassword, PASSWORD_LENGTH_MIN, verifyPassword } from './service.ts';
import { accountKey, clearAccountThrottles, reserveAttempt, type ConsoleKind } from './sign-in-throttle.ts';
import { revokeDevices } from './trusted-devices.ts';
import { looksLikeRecoveryCode, looksLikeTotpCode, matchingStep, newRecoveryCodes, newTotpSecret, recoveryCodeHash } from './totp.ts';
import type { Role } from './model.ts';

/** Longer input is refused rather than silently cut (the sign-in form reads at most this much). */
export const PASSWORD_LENGTH_MAX = 1_000;
/** Roles an owner can make use a second factor: approvers decide payouts; owners, admins and developers create and revoke API keys. */
export const SECOND_FACTOR_ROLES: readonly Role[] = ['owner', 'admin', 'developer', 'approver'];

const tableOf = (kind: ConsoleKind) => (kind === 'merchant' ? 'users' : 'operators');

export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_LENGTH_MIN) return `The password must be at least ${PASSWORD_LENGTH_MIN} characters.`;
  if (password.length > PASSWORD_LENGTH_MAX) return `The password must be at most ${PASSWORD_LENGTH_MAX} characters.`;
  return null;
}

/** Signs out every session of the account but the one kept (null: all of them). */
const signOutSessions = (tx: Queryable, kind: ConsoleKind, accountId: string, keepTokenHash: string | null) =>
  tx.query(`DELETE FROM web_sessions WHERE ${kind === 'merchant' ? 'user_id' : 'operator_id'} = $1 AND ($2::text IS NULL OR token_hash <> $2)`, [accountId, keepTokenHash]);

/**
 * Sets an account's password from the command line (a Quickstart merchant made without one, a
 * forgotten password): every session is signed out, every trusted device revoked, the backoff is
 * cleared, no change is forced.
 */
export async function setPassword(db: Db, input: { kind: ConsoleKind; email: string; password: string }): Promise<{ id: string; email: string }> {
  const problem = passwordProblem(input.password);
  if (problem) throw errors.invalidArgument(problem);
  const passwordHash = await hashPassword(input.password);
  const table = tableOf(input.kind);
  return db.transaction(async (tx) => {
    const rows = await tx.query<{ id: string; email: string; merchant_id: string | null }>(
      `UPDATE ${table} SET password_hash = $2${input.kind === 'merchant' ? ', must_change_password = false' : ''} WHERE lower(email) = lower($1)
       RETURNING id, email, ${input.kind === 'merchant' ? 'merchant_id' : 'NULL::uuid AS merchant_id'}`,
      [input.email.trim(), passwordHash],
    );
    const account = rows[0];
    if (!account) throw new AppError(404, 'NOT_FOUND', `no ${input.kind === 'merchant' ? 'user' : 'operator'} with email ${input.email.trim()}`);
    await signOutSessions(tx, input.kind, account.id, null);
    await revokeDevices(tx, accountKey(input.kind, account.email));
    await clearAccountThrottles(tx, input.kind, account.email);
    await audit(tx, {
      actor: { type: 'system', id: 'cli', email: null },
      merchantId: account.merchant_id,
      action: `${input.kind === 'merchant' ? 'user' : 'operator'}.password_set`,
      objectType: input.kind === 'merchant' ? 'user' : 'operator',
      objectId: account.id,
      before: null,
      after: { sessions_signed_out: true, trusted_devices_revoked: true },
    });
    return { id: account.id, email: account.email };
  });
}

export type CheckResult = { ok: true } | { ok: false; reason: 'throttled'; retryAfterS: number } | { ok: false; reason: 'wrong' } | { ok: false; reason: 'invalid'; message: string };

export interface SignedInAccount {
  kind: ConsoleKind;
  accountId: string;
  email: string;
  merchantId: string | null;
  /** The session making the change: it stays signed in. */
  tokenHash: string;
  address: string;
  /** The browser's device cookie: its attempts back off on their own when it is a trusted device of this account; it stays trusted after a password change. */
  device?: string | null;
}

const actorOf = (who: SignedInAccount): Actor => ({ type: who.kind === 'merchant' ? 'user' : 'operator', id: who.accountId, email: who.email });

/** Checks a signed-in account's password through the backoff: a stolen session cannot guess it. */
export async function checkPassword(db: Db, who: SignedInAccount, password: string): Promise<CheckResult> {
  const attempt = await reserveAttempt(db, { kind: who.kind, email: who.email, address: who.address, device: who.device });
  if (!attempt.allowed) return { ok: false, reason: 'throttled', retryAfterS: attempt.retryAfterS };
  const rows = await db.query<{ password_hash: string | null }>(`SELECT password_hash FROM ${tableOf(who.kind)} WHERE id = $1`, [who.accountId]);
  const hash = rows[0]?.password_hash;
  if (!hash || !(await verifyPassword(hash, password))) return { ok: false, reason: 'wrong' };
  await attempt.succeeded();
  return { ok: true };
}

/**
 * Changes a signed-in account's password: the current one is checked (through the backoff), other
 * sessions are signed out and other trusted devices revoked (this browser's stays).
 */
export async function changePassword(db: Db, who: SignedInAccount, input: { current: string; next: string; confirm: string }): Promise<CheckResult> {
  const problem = passwordProblem(input.next) ?? (input.next !== input.confirm ? 'The new password and its repetition differ.' : input.next === input.current ? 'Choose a new password that differs from the current one.' : null);
  if (problem) return { ok: false, reason: 'invalid', message: problem };
  const checked = await checkPassword(db, who, input.current);
  if (!checked.ok) return checked;
  const table = tableOf(who.kind);
  const passwordHash = await hashPassword(input.next);
  await db.transaction(async (tx) => {
    await tx.query(`UPDATE ${table} SET password_hash = $2${who.kind === 'merchant' ? ', must_change_password = false' : ''} WHERE id = $1`, [who.accountId, passwordHash]);
    await signOutSessions(tx, who.kind, who.accountId, who.tokenHash);
    await revokeDevices(tx, accountKey(who.kind, who.email), who.device ?? null);
    await audit(tx, { actor: actorOf(who), merchantId: who.merchantId, action: `${who.kind === 'merchant' ? 'user' : 'operator'}.password_change`, objectType: who.kind === 'merchant' ? 'user' : 'operator', objectId: who.accountId, before: null, after: { other_sessions_signed_out: true, other_trusted_devices_revoked: true } });
  });
  return { ok: true };
}

// ---- TOTP second factor (merchant users) ----

export interface SecondFactorState {
  enrolled: boolean;
  enabledAt: Date | null;
  recoveryCodesLeft: number;
  /** The merchant requires it for this user's role. */
  required: boolean;
}

export async function secondFactorState(db: Queryable, userId: string): Promise<SecondFactorState> {
  const rows = await db.query<{ enabled_at: Date | null; role: Role; required: boolean; codes_left: number }>(
    `SELECT u.totp_enabled_at AS enabled_at, u.role, m.second_factor_required AS required,
            (SELECT count(*)::int FROM user_recovery_codes c WHERE c.user_id = u.id AND c.used_at IS NULL) AS codes_left
       FROM users u JOIN merchants m ON m.id = u.merchant_id WHERE u.id = $1`,
    [userId],
  );
  const row = rows[0];
  if (!row) throw errors.notFound('User');
  return { enrolled: row.enabled_at !== null, enabledAt: row.enabled_at, recoveryCodesLeft: row.codes_left, required: row.required && SECOND_FACTOR_ROLES.includes(row.role) };
}

/** The secret to enrol with: kept unconfirmed until a code from it is entered, so a reload shows the same one. */
export async function pendingTotpSecret(db: Queryable, userId: string): Promise<string> {
  const rows = await db.query<{ secret: string }>(
    'UPDATE users SET totp_pending_secret = coalesce(totp_pending_secret, $2) WHERE id = $1 AND totp_secret IS NULL RETURNING totp_pending_secret AS secret',
    [userId, newTotpSecret()],
  );
  if (!rows[0]) throw new AppError(409, 'ALREADY_ENROLLED', 'Two-factor authentication is already on for this account.');
  return rows[0].secret;
}

/**
 * Confirms enrolment with a code from the pending secret: the secret becomes the account's, that
 * code's step is used up, and ten recovery codes are made (returned once; only their hashes are kept).
 */
export async function confirmTotpEnrolment(db: Db, who: SignedInAccount, code: string, nowMs = Date.now()): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false; message: string }> {
  const rows = await db.query<{ pending: string | null; enrolled: boolean }>('SELECT totp_pending_secret AS pending, totp_secret IS NOT NULL AS enrolled FROM users WHERE id = $1', [who.accountId]);
  const row = rows[0];
  if (!row || row.enrolled) return { ok: false, message: 'Two-factor authentication is already on for this account.' };
  if (!row.pending) return { ok: false, message: 'Start again: open the two-factor page to get a secret.' };
  const step = matchingStep(row.pending, code, nowMs);
  if (step === null) return { ok: false, message: 'That code is not right for this secret. Check the time on your phone and enter the current code.' };
  const recoveryCodes = newRecoveryCodes();
  const confirmed = await db.transaction(async (tx) => {
    const updated = await tx.query(
      `UPDATE users SET totp_secret = totp_pending_secret, totp_pending_secret = NULL, totp_enabled_at = now(), totp_last_step = $3
        WHERE id = $1 AND totp_secret IS NULL AND totp_pending_secret = $2 RETURNING id`,
      [who.accountId, row.pending, step],
    );
    if (updated.length === 0) return false;
    await replaceRecoveryCodes(tx, who.accountId, recoveryCodes);
    await audit(tx, { actor: actorOf(who), merchantId: who.merchantId, action: 'user.2fa_enrol', objectType: 'user', objectId: who.accountId, before: { enrolled: false }, after: { enrolled: true, recovery_codes: recoveryCodes.length } });
    return true;
  });
  return confirmed ? { ok: true, recoveryCodes } : { ok: false, message: 'Two-factor authentication changed meanwhile; reload the page.' };
}

async function replaceRecoveryCodes(tx: Queryable, userId: string, codes: string[]): Promise<void> {
  await tx.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [userId]);
  await tx.query('INSERT INTO user_recovery_codes (user_id, code_hash) SELECT $1, unnest($2::text[])', [userId, codes.map(recoveryCodeHash)]);
}

export type SecondFactorMethod = 'totp' | 'recovery_code';

/**
 * Checks a second-factor code through the backoff: a TOTP code whose step is later than the last one
 * accepted (the step is recorded in the same statement, so a replay is refused even when raced), or,
 * where allowed, an unused recovery code (used up, and audited).
 */
export async function checkSecondFactor(
  db: Db,
  who: SignedInAccount,
  code: string,
  options: { allowRecoveryCode: boolean; nowMs?: number },
): Promise<{ ok: true; method: SecondFactorMethod } | { ok: false; reason: 'throttled'; retryAfterS: number } | { ok: false; reason: 'wrong' }> {
  // Input that cannot be a code checks no secret, so it costs no attempt (an empty approval form, a typo).
  if (!looksLikeTotpCode(code) && !(options.allowRecoveryCode && looksLikeRecoveryCode(code))) return { ok: false, reason: 'wrong' };
  const attempt = await reserveAttempt(db, { kind: who.kind, email: who.email, address: who.address, device: who.device });
  if (!attempt.allowed) return { ok: false, reason: 'throttled', retryAfterS: attempt.retryAfterS };
  const method = await consumeSecondFactor(db, who, code, options.allowRecoveryCode, options.nowMs ?? Date.now());
  if (!method) return { ok: false, reason: 'wrong' };
  await attempt.succeeded();
  return { ok: true, method };
}

async function consumeSecondFactor(db: Db, who: SignedInAccount, code: string, allowRecoveryCode: boolean, nowMs: number): Promise<SecondFactorMethod | null> {
  const rows = await db.query<{ secret: string | null }>('SELECT totp_secret AS secret FROM users WHERE id = $1', [who.accountId]);
  const secret = rows[0]?.secret;
  if (!secret) return null;
  if (allowRecoveryCode && looksLikeRecoveryCode(code)) {
    return db.transaction(async (tx) => {
      const used = await tx.query('UPDATE user_recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING user_id', [who.accountId, recoveryCodeHash(code)]);
      if (used.length === 0) return null;
      const left = await tx.query<{ left: number }>('SELECT count(*)::int AS left FROM user_recovery_codes WHERE user_id = $1 AND used_at IS NULL', [who.accountId]);
      await audit(tx, { actor: actorOf(who), merchantId: who.merchantId, action: 'user.2fa_recovery_code_use', objectType: 'user', objectId: who.accountId, before: null, after: { recovery_codes_left: left[0]!.left } });
      return 'recovery_code' as const;
    });
  }
  const step = matchingStep(secret, code, nowMs);
  if (step === null) return null;
  const accepted = await db.query(
    'UPDATE users SET totp_last_step = $3 WHERE id = $1 AND totp_secret = $2 AND (totp_last_step IS NULL OR totp_last_step < $3) RETURNING id',
    [who.accountId, secret, step],
  );
  return accepted.length > 0 ? 'totp' : null;
}

/**
 * Turns the second factor off (the caller has checked a code, or an operator asks from the command
 * line). From the dashboard it is refused where the merchant requires it for the user's role.
 */
export async function disableSecondFactor(db: Db, actor: Actor, userId: string, options: { refuseWhenRequired: boolean; signOutSessions: boolean }): Promise<void> {
  await db.transaction(async (tx) => {
    const rows = await tx.query<{ merchant_id: string; role: Role; enabled: boolean; required: boolean }>(
      `SELECT u.merchant_id, u.role, u.totp_secret IS NOT NULL AS enabled, m.second_factor_required AS required
         FROM users u JOIN merchants m ON m.id = u.merchant_id WHERE u.id = $1 FOR UPDATE OF u`,
      [userId],
    );
    const user = rows[0];
    if (!user) throw errors.notFound('User');
    if (options.refuseWhenRequired && user.required && SECOND_FACTOR_ROLES.includes(user.role)) {
      throw new AppError(409, 'SECOND_FACTOR_REQUIRED', 'Your account owner requires two-factor authentication for your role; it stays on.');
    }
    await tx.query('UPDATE users SET totp_secret = NULL, totp_pending_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL WHERE id = $1', [userId]);
    await tx.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [userId]);
    if (options.signOutSessions) await signOutSessions(tx, 'merchant', userId, null);
    await audit(tx, { actor, merchantId: user.merchant_id, action: 'user.2fa_disable', objectType: 'user', objectId: userId, before: { enrolled: user.enabled }, after: { enrolled: false } });
  });
}

/** The owner's rule; turning it on needs the owner's own second factor first (else the owner would be sent to enrol at once). */
export async function setSecondFactorRequired(db: Db, actor: Actor & { type: 'user' }, merchantId: string, required: boolean): Promise<void> {
  await db.transaction(async (tx) => {
    const rows = await tx.query<{ required: boolean; owner_enrolled: boolean }>(
      'SELECT m.second_factor_required AS required, (SELECT totp_secret IS NOT NULL FROM users WHERE id = $2) AS owner_enrolled FROM merchants m WHERE m.id = $1 FOR UPDATE',
      [merchantId, actor.id],
    );
    const before = rows[0];
    if (!before) throw errors.notFound('Merchant');
    if (required && !before.owner_enrolled) throw new AppError(409, 'SECOND_FACTOR_NOT_ENROLLED', 'Turn on two-factor authentication for yourself first (Account page).');
    await tx.query('UPDATE merchants SET second_factor_required = $2 WHERE id = $1', [merchantId, required]);
    await audit(tx, { actor, merchantId, action: 'second_factor_requirement.update', objectType: 'merchant', objectId: merchantId, before: { second_factor_required: before.required }, after: { second_factor_required: required } });
  });
}

/** For the CLI: turns off a user's second factor (phone and recovery codes lost); their sessions are signed out. */
export async function resetSecondFactor(db: Db, email: string): Promise<{ id: string; email: string }> {
  const rows = await db.query<{ id: string; email: string }>('SELECT id, email FROM users WHERE lower(email) = lower($1)', [email.trim()]);
  const user = rows[0];
  if (!user) throw new AppError(404, 'NOT_FOUND', `no user with email ${email.trim()}`);
  await disableSecondFactor(db, { type: 'system', id: 'cli', email: null }, user.id, { refuseWhenRequired: false, signOutSessions: true });
  return user;
}

/** Console sessions past their expiry open nothing (loadSession checks the time); their rows are dropped by the background job. */
export const purgeExpiredWebSessions = (db: Queryable) => db.query('DELETE FROM web_sessions WHERE expires_at < now()');
