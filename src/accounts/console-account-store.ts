// The SQL of console accounts (merchant users and operators): passwords, the TOTP second factor and its
// recovery codes, and the owner's second-factor rule. Table names come from the console kind, never input.
import type { Queryable } from '../db/index.ts';
import { firstRow, firstValue } from '../db/first-row.ts';
import type { Role } from './model.ts';
import type { ConsoleKind } from './sign-in-throttle.ts';

const tableOf = (kind: ConsoleKind) => (kind === 'merchant' ? 'users' : 'operators');
/** Recovery codes: their table and its account column. */
const codesOf = (kind: ConsoleKind) =>
  kind === 'merchant'
    ? { table: 'user_recovery_codes', owner: 'user_id' }
    : { table: 'operator_recovery_codes', owner: 'operator_id' };

/** Sets the password of the account with this email (a user's forced change is lifted); the account, or null. */
export const setPasswordByEmail = (tx: Queryable, kind: ConsoleKind, email: string, passwordHash: string) =>
  firstRow(
    tx.query<{ id: string; email: string; merchant_id: string | null }>(
      `UPDATE ${tableOf(kind)} SET password_hash = $2, must_change_password = false WHERE lower(email) = lower($1)
       RETURNING id, email, ${kind === 'merchant' ? 'merchant_id' : 'NULL::uuid AS merchant_id'}`,
      [email, passwordHash],
    ),
  );

export const findPasswordHash = (db: Queryable, kind: ConsoleKind, accountId: string) =>
  firstValue(
    db.query<{ password_hash: string | null }>(`SELECT password_hash FROM ${tableOf(kind)} WHERE id = $1`, [accountId]),
    'password_hash',
  );

export const updatePassword = (tx: Queryable, kind: ConsoleKind, accountId: string, passwordHash: string) =>
  tx.query(`UPDATE ${tableOf(kind)} SET password_hash = $2, must_change_password = false WHERE id = $1`, [
    accountId,
    passwordHash,
  ]);

/** The account's second factor; `required` is the merchant's rule for a user (the role is judged by the caller), always true for an operator. */
export async function findSecondFactorState(db: Queryable, kind: ConsoleKind, accountId: string) {
  const codes = codesOf(kind);
  const rows = await db.query<{ enabled_at: Date | null; role: string; required: boolean; codes_left: number }>(
    kind === 'merchant'
      ? `SELECT u.totp_enabled_at AS enabled_at, u.role, m.second_factor_required AS required,
            (SELECT count(*)::int FROM user_recovery_codes c WHERE c.user_id = u.id AND c.used_at IS NULL) AS codes_left
       FROM users u JOIN merchants m ON m.id = u.merchant_id WHERE u.id = $1`
      : `SELECT o.totp_enabled_at AS enabled_at, o.role, true AS required,
            (SELECT count(*)::int FROM ${codes.table} c WHERE c.${codes.owner} = o.id AND c.used_at IS NULL) AS codes_left
       FROM operators o WHERE o.id = $1`,
    [accountId],
  );
  return rows[0] ?? null;
}

/** Keeps the pending secret if there is one, else stores this one; null when the account is already enrolled. */
export const reservePendingTotpSecret = (db: Queryable, kind: ConsoleKind, accountId: string, secret: string) =>
  firstValue(
    db.query<{ secret: string }>(
      `UPDATE ${tableOf(kind)} SET totp_pending_secret = coalesce(totp_pending_secret, $2) WHERE id = $1 AND totp_secret IS NULL RETURNING totp_pending_secret AS secret`,
      [accountId, secret],
    ),
    'secret',
  );

export const findTotpEnrolment = (db: Queryable, kind: ConsoleKind, accountId: string) =>
  firstRow(
    db.query<{ pending: string | null; enrolled: boolean }>(
      `SELECT totp_pending_secret AS pending, totp_secret IS NOT NULL AS enrolled FROM ${tableOf(kind)} WHERE id = $1`,
      [accountId],
    ),
  );

/** The pending secret becomes the account's with `step` used up; false when it changed meanwhile. */
export async function confirmPendingTotpSecret(
  tx: Queryable,
  kind: ConsoleKind,
  accountId: string,
  pending: string,
  step: number,
): Promise<boolean> {
  const updated = await tx.query(
    `UPDATE ${tableOf(kind)} SET totp_secret = totp_pending_secret, totp_pending_secret = NULL, totp_enabled_at = now(), totp_last_step = $3
        WHERE id = $1 AND totp_secret IS NULL AND totp_pending_secret = $2 RETURNING id`,
    [accountId, pending, step],
  );
  return updated.length > 0;
}

export async function replaceRecoveryCodes(
  tx: Queryable,
  kind: ConsoleKind,
  accountId: string,
  codeHashes: string[],
): Promise<void> {
  const codes = codesOf(kind);
  await tx.query(`DELETE FROM ${codes.table} WHERE ${codes.owner} = $1`, [accountId]);
  await tx.query(`INSERT INTO ${codes.table} (${codes.owner}, code_hash) SELECT $1, unnest($2::text[])`, [
    accountId,
    codeHashes,
  ]);
}

export const findTotpSecret = (db: Queryable, kind: ConsoleKind, accountId: string) =>
  firstValue(
    db.query<{ secret: string | null }>(`SELECT totp_secret AS secret FROM ${tableOf(kind)} WHERE id = $1`, [
      accountId,
    ]),
    'secret',
  );

/** Uses up an unused recovery code; false when there is none with this hash. */
export async function useRecoveryCode(
  tx: Queryable,
  kind: ConsoleKind,
  accountId: string,
  codeHash: string,
): Promise<boolean> {
  const codes = codesOf(kind);
  const used = await tx.query(
    `UPDATE ${codes.table} SET used_at = now() WHERE ${codes.owner} = $1 AND code_hash = $2 AND used_at IS NULL RETURNING ${codes.owner}`,
    [accountId, codeHash],
  );
  return used.length > 0;
}

export async function countRecoveryCodesLeft(tx: Queryable, kind: ConsoleKind, accountId: string): Promise<number> {
  const codes = codesOf(kind);
  const left = await tx.query<{ left: number }>(
    `SELECT count(*)::int AS left FROM ${codes.table} WHERE ${codes.owner} = $1 AND used_at IS NULL`,
    [accountId],
  );
  return left[0]!.left;
}

/** Records a TOTP step as used when it is later than the last one accepted (one statement, so a raced replay is refused). */
export async function acceptTotpStep(
  db: Queryable,
  kind: ConsoleKind,
  accountId: string,
  secret: string,
  step: number,
): Promise<boolean> {
  const accepted = await db.query(
    `UPDATE ${tableOf(kind)} SET totp_last_step = $3 WHERE id = $1 AND totp_secret = $2 AND (totp_last_step IS NULL OR totp_last_step < $3) RETURNING id`,
    [accountId, secret, step],
  );
  return accepted.length > 0;
}

export const lockUserSecondFactor = (tx: Queryable, userId: string) =>
  firstRow(
    tx.query<{ merchant_id: string; role: Role; enabled: boolean; required: boolean }>(
      `SELECT u.merchant_id, u.role, u.totp_secret IS NOT NULL AS enabled, m.second_factor_required AS required
         FROM users u JOIN merchants m ON m.id = u.merchant_id WHERE u.id = $1 FOR UPDATE OF u`,
      [userId],
    ),
  );

export async function clearSecondFactor(tx: Queryable, kind: ConsoleKind, accountId: string): Promise<void> {
  const codes = codesOf(kind);
  await tx.query(
    `UPDATE ${tableOf(kind)} SET totp_secret = NULL, totp_pending_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL WHERE id = $1`,
    [accountId],
  );
  await tx.query(`DELETE FROM ${codes.table} WHERE ${codes.owner} = $1`, [accountId]);
}

export const lockSecondFactorRule = (tx: Queryable, merchantId: string, ownerId: string) =>
  firstRow(
    tx.query<{ required: boolean; owner_enrolled: boolean }>(
      'SELECT m.second_factor_required AS required, (SELECT totp_secret IS NOT NULL FROM users WHERE id = $2) AS owner_enrolled FROM merchants m WHERE m.id = $1 FOR UPDATE',
      [merchantId, ownerId],
    ),
  );

export const updateSecondFactorRequired = (tx: Queryable, merchantId: string, required: boolean) =>
  tx.query('UPDATE merchants SET second_factor_required = $2 WHERE id = $1', [merchantId, required]);

export const findUserByEmail = (db: Queryable, email: string) =>
  firstRow(
    db.query<{ id: string; email: string }>('SELECT id, email FROM users WHERE lower(email) = lower($1)', [email]),
  );

// ---- operators (the Operators page and their reset) ----

export interface OperatorListRow {
  id: string;
  email: string;
  role: string;
  second_factor: boolean;
  must_change_password: boolean;
  last_sign_in_at: Date | null;
  created_at: Date;
}

export const listOperators = (db: Queryable) =>
  db.query<OperatorListRow>(
    `SELECT id, email, role, totp_secret IS NOT NULL AS second_factor, must_change_password, last_sign_in_at, created_at
       FROM operators ORDER BY lower(email)`,
  );

/** An operator by id or email, locked for a change; null when there is none. */
export const lockOperator = (tx: Queryable, by: { id: string } | { email: string }) =>
  firstRow(
    tx.query<{
      id: string;
      email: string;
      role: string;
      second_factor: boolean;
      must_change_password: boolean;
    }>(
      `SELECT id, email, role, totp_secret IS NOT NULL AS second_factor, must_change_password FROM operators
      WHERE ${'id' in by ? 'id = $1::uuid' : 'lower(email) = lower($1)'} FOR UPDATE`,
      ['id' in by ? by.id : by.email],
    ),
  );

/** A temporary password that must be changed at the next sign-in. */
export const setTemporaryOperatorPassword = (tx: Queryable, operatorId: string, passwordHash: string) =>
  tx.query('UPDATE operators SET password_hash = $2, must_change_password = true WHERE id = $1', [
    operatorId,
    passwordHash,
  ]);
