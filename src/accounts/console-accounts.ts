// Console accounts: setting and changing passwords (other sessions signed out), and the TOTP second
// factor (enrolment, recovery codes, checks with replay refused). Every change is audited in its own
// transaction; every secret check goes through the sign-in backoff first (sign-in-throttle.ts).
import { audit, auditMerchant, type Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { randomBytes } from 'node:crypto';
import { hashPassword, PASSWORD_LENGTH_MIN, verifyPassword } from './service.ts';
import { accountKey, clearAccountThrottles, reserveAttempt, type ConsoleKind } from './sign-in-throttle.ts';
import { revokeDevices } from './trusted-devices.ts';
import {
  looksLikeRecoveryCode,
  looksLikeTotpCode,
  matchingStep,
  newRecoveryCodes,
  newTotpSecret,
  recoveryCodeHash,
} from './totp.ts';
import type { Role } from './model.ts';
import * as store from './console-account-store.ts';
import { deleteAccountSessions, deleteExpiredSessions } from './console-session-store.ts';

/** Longer input is refused rather than silently cut (the sign-in form reads at most this much). */
export const PASSWORD_LENGTH_MAX = 1_000;
/** Roles an owner can make use a second factor: approvers decide payouts; owners, admins and developers create and revoke API keys. */
export const SECOND_FACTOR_ROLES: readonly Role[] = ['owner', 'admin', 'developer', 'approver'];
/**
 * Operator roles that must use a second factor: all of them move money or open Live (operators approve payments
 * and record refunds and returns, tellers record cash, compliance decides Go-Live applications).
 */
export const OPERATOR_SECOND_FACTOR_ROLES: readonly string[] = ['operator', 'teller', 'compliance'];

/** Whether an account of this kind and role must use a second factor (`merchantRule`: the owner's rule, for merchant users). */
export const secondFactorRequiredFor = (kind: ConsoleKind, role: string, merchantRule: boolean): boolean =>
  kind === 'merchant'
    ? merchantRule && SECOND_FACTOR_ROLES.includes(role as Role)
    : OPERATOR_SECOND_FACTOR_ROLES.includes(role);

export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_LENGTH_MIN) return `The password must be at least ${PASSWORD_LENGTH_MIN} characters.`;
  if (password.length > PASSWORD_LENGTH_MAX) return `The password must be at most ${PASSWORD_LENGTH_MAX} characters.`;
  return null;
}

/** Signs out every session of the account but the one kept (null: all of them). */
const signOutSessions = deleteAccountSessions;

/**
 * Sets an account's password from the command line (a Quickstart merchant made without one, a
 * forgotten password): every session is signed out, every trusted device revoked, the backoff is
 * cleared, no change is forced.
 */
export async function setPassword(
  db: Db,
  input: { kind: ConsoleKind; email: string; password: string; actor: Actor },
): Promise<{ id: string; email: string }> {
  const problem = passwordProblem(input.password);
  if (problem) throw errors.invalidArgument(problem);
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const account = await store.setPasswordByEmail(tx, input.kind, input.email.trim(), passwordHash);
    if (!account)
      throw new SikaError(
        'NOT_FOUND',
        `no ${input.kind === 'merchant' ? 'user' : 'operator'} with email ${input.email.trim()}`,
      );
    await signOutSessions(tx, input.kind, account.id, null);
    await revokeDevices(tx, accountKey(input.kind, account.email));
    await clearAccountThrottles(tx, input.kind, account.email);
    await auditAccount(
      tx,
      input.actor,
      { kind: input.kind, id: account.id, merchantId: account.merchant_id },
      'password_set',
      {
        before: null,
        after: { sessions_signed_out: true, trusted_devices_revoked: true },
      },
    );
    return { id: account.id, email: account.email };
  });
}

export type CheckResult =
  | { ok: true }
  | { ok: false; reason: 'throttled'; retryAfterS: number }
  | { ok: false; reason: 'wrong' }
  | { ok: false; reason: 'invalid'; message: string };

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

const actorOf = (who: SignedInAccount): Actor => ({
  type: who.kind === 'merchant' ? 'user' : 'operator',
  id: who.accountId,
  email: who.email,
});
/** The audit log's object type (and action prefix) of an account of this kind. */
const objectOf = (kind: ConsoleKind) => (kind === 'merchant' ? 'user' : 'operator');

/** The audit log's entry of a change to an account itself: `user.<event>` or `operator.<event>`, the account its object. */
const auditAccount = (
  tx: Queryable,
  actor: Actor,
  account: { kind: ConsoleKind; id: string; merchantId: string | null },
  event: string,
  change: { before: unknown; after: unknown },
) =>
  audit(tx, {
    actor,
    merchantId: account.merchantId,
    action: `${objectOf(account.kind)}.${event}`,
    objectType: objectOf(account.kind),
    objectId: account.id,
    before: change.before,
    after: change.after,
  });

/** The same, made by the signed-in account itself. */
const auditOwnChange = (
  tx: Queryable,
  who: SignedInAccount,
  event: string,
  change: { before: unknown; after: unknown },
) => auditAccount(tx, actorOf(who), { kind: who.kind, id: who.accountId, merchantId: who.merchantId }, event, change);

/** Checks a signed-in account's password through the backoff: a stolen session cannot guess it. */
export async function checkPassword(db: Db, who: SignedInAccount, password: string): Promise<CheckResult> {
  const attempt = await reserveAttempt(db, who);
  if (!attempt.allowed) return { ok: false, reason: 'throttled', retryAfterS: attempt.retryAfterS };
  const hash = await store.findPasswordHash(db, who.kind, who.accountId);
  if (!hash || !(await verifyPassword(hash, password))) return { ok: false, reason: 'wrong' };
  await attempt.succeeded();
  return { ok: true };
}

/**
 * Changes a signed-in account's password: the current one is checked (through the backoff), other
 * sessions are signed out and other trusted devices revoked (this browser's stays).
 */
export async function changePassword(
  db: Db,
  who: SignedInAccount,
  input: { current: string; next: string; confirm: string },
): Promise<CheckResult> {
  const problem =
    passwordProblem(input.next) ??
    (input.next !== input.confirm
      ? 'The new password and its repetition differ.'
      : input.next === input.current
        ? 'Choose a new password that differs from the current one.'
        : null);
  if (problem) return { ok: false, reason: 'invalid', message: problem };
  const checked = await checkPassword(db, who, input.current);
  if (!checked.ok) return checked;
  const passwordHash = await hashPassword(input.next);
  await db.transaction(async (tx) => {
    await store.updatePassword(tx, who.kind, who.accountId, passwordHash);
    await signOutSessions(tx, who.kind, who.accountId, who.tokenHash);
    await revokeDevices(tx, accountKey(who.kind, who.email), who.device ?? null);
    await auditOwnChange(tx, who, 'password_change', {
      before: null,
      after: { other_sessions_signed_out: true, other_trusted_devices_revoked: true },
    });
  });
  return { ok: true };
}

// ---- TOTP second factor (merchant users and operators) ----

export interface SecondFactorState {
  enrolled: boolean;
  enabledAt: Date | null;
  recoveryCodesLeft: number;
  /** The merchant requires it for this user's role; every operator role requires it. */
  required: boolean;
}

export async function secondFactorState(
  db: Queryable,
  accountId: string,
  kind: ConsoleKind = 'merchant',
): Promise<SecondFactorState> {
  const row = await store.findSecondFactorState(db, kind, accountId);
  if (!row) throw errors.notFound(kind === 'merchant' ? 'User' : 'Operator');
  return {
    enrolled: row.enabled_at !== null,
    enabledAt: row.enabled_at,
    recoveryCodesLeft: row.codes_left,
    required: secondFactorRequiredFor(kind, row.role, row.required),
  };
}

/** The secret to enrol with: kept unconfirmed until a code from it is entered, so a reload shows the same one. */
export async function pendingTotpSecret(
  db: Queryable,
  accountId: string,
  kind: ConsoleKind = 'merchant',
): Promise<string> {
  const secret = await store.reservePendingTotpSecret(db, kind, accountId, newTotpSecret());
  if (!secret) throw new SikaError('ALREADY_ENROLLED', 'Two-factor authentication is already on for this account.');
  return secret;
}

/**
 * Confirms enrolment with a code from the pending secret: the secret becomes the account's, that
 * code's step is used up, and ten recovery codes are made (returned once; only their hashes are kept).
 */
export async function confirmTotpEnrolment(
  db: Db,
  who: SignedInAccount,
  code: string,
  nowMs = Date.now(),
): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false; message: string }> {
  const row = await store.findTotpEnrolment(db, who.kind, who.accountId);
  if (!row || row.enrolled) return { ok: false, message: 'Two-factor authentication is already on for this account.' };
  if (!row.pending) return { ok: false, message: 'Start again: open the two-factor page to get a secret.' };
  const step = matchingStep(row.pending, code, nowMs);
  if (step === null)
    return {
      ok: false,
      message: 'That code is not right for this secret. Check the time on your phone and enter the current code.',
    };
  const recoveryCodes = newRecoveryCodes();
  const confirmed = await db.transaction(async (tx) => {
    if (!(await store.confirmPendingTotpSecret(tx, who.kind, who.accountId, row.pending!, step))) return false;
    await store.replaceRecoveryCodes(tx, who.kind, who.accountId, recoveryCodes.map(recoveryCodeHash));
    await auditOwnChange(tx, who, '2fa_enrol', {
      before: { enrolled: false },
      after: { enrolled: true, recovery_codes: recoveryCodes.length },
    });
    return true;
  });
  return confirmed
    ? { ok: true, recoveryCodes }
    : { ok: false, message: 'Two-factor authentication changed meanwhile; reload the page.' };
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
): Promise<
  | { ok: true; method: SecondFactorMethod }
  | { ok: false; reason: 'throttled'; retryAfterS: number }
  | { ok: false; reason: 'wrong' }
> {
  // Input that cannot be a code checks no secret, so it costs no attempt (an empty approval form, a typo).
  if (!looksLikeTotpCode(code) && !(options.allowRecoveryCode && looksLikeRecoveryCode(code)))
    return { ok: false, reason: 'wrong' };
  const attempt = await reserveAttempt(db, who);
  if (!attempt.allowed) return { ok: false, reason: 'throttled', retryAfterS: attempt.retryAfterS };
  const method = await consumeSecondFactor(db, who, code, options.allowRecoveryCode, options.nowMs ?? Date.now());
  if (!method) return { ok: false, reason: 'wrong' };
  await attempt.succeeded();
  return { ok: true, method };
}

async function consumeSecondFactor(
  db: Db,
  who: SignedInAccount,
  code: string,
  allowRecoveryCode: boolean,
  nowMs: number,
): Promise<SecondFactorMethod | null> {
  const secret = await store.findTotpSecret(db, who.kind, who.accountId);
  if (!secret) return null;
  if (allowRecoveryCode && looksLikeRecoveryCode(code)) {
    return db.transaction(async (tx) => {
      if (!(await store.useRecoveryCode(tx, who.kind, who.accountId, recoveryCodeHash(code)))) return null;
      const left = await store.countRecoveryCodesLeft(tx, who.kind, who.accountId);
      await auditOwnChange(tx, who, '2fa_recovery_code_use', { before: null, after: { recovery_codes_left: left } });
      return 'recovery_code' as const;
    });
  }
  const step = matchingStep(secret, code, nowMs);
  if (step === null) return null;
  return (await store.acceptTotpStep(db, who.kind, who.accountId, secret, step)) ? 'totp' : null;
}

/**
 * Turns the second factor off (the caller has checked a code, or an operator asks from the command
 * line). From the dashboard it is refused where the merchant requires it for the user's role.
 */
export async function disableSecondFactor(
  db: Db,
  actor: Actor,
  userId: string,
  options: { refuseWhenRequired: boolean; signOutSessions: boolean },
): Promise<void> {
  await db.transaction(async (tx) => {
    const user = await store.lockUserSecondFactor(tx, userId);
    if (!user) throw errors.notFound('User');
    if (options.refuseWhenRequired && user.required && SECOND_FACTOR_ROLES.includes(user.role)) {
      throw new SikaError(
        'SECOND_FACTOR_REQUIRED',
        'Your account owner requires two-factor authentication for your role; it stays on.',
      );
    }
    await store.clearSecondFactor(tx, 'merchant', userId);
    if (options.signOutSessions) await signOutSessions(tx, 'merchant', userId, null);
    await audit(tx, {
      actor,
      merchantId: user.merchant_id,
      action: 'user.2fa_disable',
      objectType: 'user',
      objectId: userId,
      before: { enrolled: user.enabled },
      after: { enrolled: false },
    });
  });
}

/** The owner's rule; turning it on needs the owner's own second factor first (else the owner would be sent to enrol at once). */
export async function setSecondFactorRequired(
  db: Db,
  actor: Actor & { type: 'user' },
  merchantId: string,
  required: boolean,
): Promise<void> {
  await db.transaction(async (tx) => {
    const before = await store.lockSecondFactorRule(tx, merchantId, actor.id);
    if (!before) throw errors.notFound('Merchant');
    if (required && !before.owner_enrolled)
      throw new SikaError(
        'SECOND_FACTOR_NOT_ENROLLED',
        'Turn on two-factor authentication for yourself first (Account page).',
      );
    await store.updateSecondFactorRequired(tx, merchantId, required);
    await auditMerchant(tx, actor, merchantId, {
      action: 'second_factor_requirement.update',
      before: { second_factor_required: before.required },
      after: { second_factor_required: required },
    });
  });
}

/** For the CLI: turns off a user's second factor (phone and recovery codes lost); their sessions are signed out. */
export async function resetSecondFactor(db: Db, actor: Actor, email: string): Promise<{ id: string; email: string }> {
  const user = await store.findUserByEmail(db, email.trim());
  if (!user) throw new SikaError('NOT_FOUND', `no user with email ${email.trim()}`);
  await disableSecondFactor(db, actor, user.id, { refuseWhenRequired: false, signOutSessions: true });
  return user;
}

/** Console sessions past their expiry open nothing (loadSession checks the time); their rows are dropped by the background job. */
export const purgeExpiredWebSessions = (db: Queryable) => deleteExpiredSessions(db);

// ---- operators: the Operators page and a locked-out operator's reset ----

/** Characters of a temporary password a reset sets (base64url of 12 random bytes: 96 bits). */
const TEMPORARY_PASSWORD_BYTES = 12;

/** Every operator with role, second factor on or off, and last sign-in (the Operators page). */
export const listOperators = (db: Queryable) => store.listOperators(db);

/**
 * Resets a locked-out operator (a lost phone, a forgotten password), by another operator or from the
 * command line: a temporary password, returned once, that must be changed at the next sign-in; the
 * second factor and its recovery codes cleared (they set it up again); every session signed out, every
 * trusted device revoked, the backoff cleared. An operator cannot reset themselves, and a teller cannot
 * reset anyone. Audited in the same transaction.
 */
export async function resetOperator(
  db: Db,
  actor: Actor,
  target: { id: string } | { email: string },
): Promise<{ id: string; email: string; temporaryPassword: string }> {
  if (actor.type === 'operator' && 'id' in target && target.id === actor.id) {
    throw new SikaError(
      'FORBIDDEN',
      'You cannot reset yourself: ask another operator, or the administrator (sika operator reset).',
    );
  }
  const temporaryPassword = randomBytes(TEMPORARY_PASSWORD_BYTES).toString('base64url');
  const passwordHash = await hashPassword(temporaryPassword);
  return db.transaction(async (tx) => {
    if (actor.type === 'operator') {
      const acting = await store.lockOperator(tx, { id: actor.id });
      if (acting?.role !== 'operator')
        throw new SikaError('FORBIDDEN', 'Only an operator can reset another operator; tellers cannot.');
    }
    const operator = await store.lockOperator(tx, 'id' in target ? { id: target.id } : { email: target.email.trim() });
    if (!operator)
      throw 'id' in target
        ? errors.notFound('Operator')
        : new SikaError('NOT_FOUND', `no operator with email ${target.email.trim()}`);
    if (actor.type === 'operator' && operator.id === actor.id) {
      throw new SikaError(
        'FORBIDDEN',
        'You cannot reset yourself: ask another operator, or the administrator (sika operator reset).',
      );
    }
    await store.setTemporaryOperatorPassword(tx, operator.id, passwordHash);
    await store.clearSecondFactor(tx, 'operator', operator.id);
    await signOutSessions(tx, 'operator', operator.id, null);
    await revokeDevices(tx, accountKey('operator', operator.email));
    await clearAccountThrottles(tx, 'operator', operator.email);
    await audit(tx, {
      actor,
      merchantId: null,
      action: 'operator.reset',
      objectType: 'operator',
      objectId: operator.id,
      before: { second_factor: operator.second_factor, must_change_password: operator.must_change_password },
      after: {
        second_factor: false,
        must_change_password: true,
        sessions_signed_out: true,
        trusted_devices_revoked: true,
      },
    });
    return { id: operator.id, email: operator.email, temporaryPassword };
  });
}
