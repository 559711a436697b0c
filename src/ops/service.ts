// Operator actions: each one runs in one transaction with its audit log row (who, what, before, after).
import { hashPassword, PASSWORD_LENGTH_MIN } from '../accounts/service.ts';
import { audit, listAudit, type Actor } from '../audit/log.ts';
import { applyOutcome } from '../checkout/payments.ts';
import { recordCashDeposit, toSlipResponse } from '../checkout/cash-slips.ts';
import * as checkoutStore from '../checkout/store.ts';
import type { Db, Queryable } from '../db/index.ts';
import { DbError } from '../db/index.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { newUuid } from '../lib/ids.ts';
import { markPayoutReturned, reconcilePayout } from '../payouts/lifecycle.ts';
import type { setPayoutAccess } from '../payouts/settings.ts';
import * as payoutSettingsStore from '../payouts/settings-store.ts';
import * as store from './store.ts';

export async function createOperator(db: Db, input: { email: string; password: string; role?: 'operator' | 'teller' }) {
  const email = input.email.trim();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new SikaError('INVALID_ARGUMENT', `email "${email}" is not an email address`);
  if (input.password.length < PASSWORD_LENGTH_MIN) throw new SikaError('INVALID_ARGUMENT', `password must be at least ${PASSWORD_LENGTH_MIN} characters`);
  const id = newUuid();
  const passwordHash = await hashPassword(input.password);
  try {
    await db.transaction(async (tx) => {
      await store.insertOperator(tx, { id, email, passwordHash, role: input.role ?? 'operator' });
      await audit(tx, { actor: { type: 'system', id: 'cli', email: null }, merchantId: null, action: 'operator.create', objectType: 'operator', objectId: id, before: null, after: { email, role: input.role ?? 'operator' } });
    });
  } catch (error) {
    if (error instanceof DbError && error.isUniqueViolation) throw new SikaError('EMAIL_TAKEN', `an operator with email ${email} already exists`);
    throw error;
  }
  return { operator_id: id, email, role: input.role ?? 'operator' };
}

export async function changePayoutSettings(db: Db, actor: Actor, merchantId: string, environment: 'test' | 'live', change: Parameters<typeof setPayoutAccess>[3]) {
  return db.transaction(async (tx) => {
    const before = await payoutSettingsStore.settingsFor(tx, merchantId, environment, true);
    await payoutSettingsStore.updateSettings(tx, merchantId, environment, change);
    const after = await payoutSettingsStore.settingsFor(tx, merchantId, environment);
    await audit(tx, { actor, merchantId, action: 'payout_settings.update', objectType: 'payout_settings', objectId: `${merchantId}:${environment}`, before, after });
    return after;
  });
}

export async function addBank(db: Db, actor: Actor, input: { name: string; code: string }) {
  const name = input.name.trim();
  const code = input.code.trim().toUpperCase();
  if (!name || name.length > 120 || !/^[A-Z0-9]{2,10}$/.test(code)) throw errors.invalidArgument('A bank needs a name and a code of 2 to 10 letters or digits.');
  try {
    return await db.transaction(async (tx) => {
      const id = await store.insertBank(tx, { name, code });
      await audit(tx, { actor, merchantId: null, action: 'bank.create', objectType: 'bank', objectId: id, before: null, after: { name, code } });
      return id;
    });
  } catch (error) {
    if (error instanceof DbError && error.isUniqueViolation) throw new SikaError('CODE_TAKEN', `bank code ${code} is already used`);
    throw error;
  }
}

export async function addBranch(db: Db, actor: Actor, input: { bankId: string; name: string; code: string }) {
  const name = input.name.trim();
  const code = input.code.trim().toUpperCase();
  if (!name || name.length > 120 || !/^[A-Z0-9-]{2,20}$/.test(code)) throw errors.invalidArgument('A branch needs a name and a code of 2 to 20 letters, digits or hyphens.');
  try {
    return await db.transaction(async (tx) => {
      if (!(await store.bankExists(tx, input.bankId))) throw errors.notFound('Bank');
      const id = await store.insertBranch(tx, { bankId: input.bankId, name, code });
      await audit(tx, { actor, merchantId: null, action: 'branch.create', objectType: 'bank_branch', objectId: id, before: null, after: { bank_id: input.bankId, name, code } });
      return id;
    });
  } catch (error) {
    if (error instanceof DbError && error.isUniqueViolation) throw new SikaError('CODE_TAKEN', `branch code ${code} is already used`);
    throw error;
  }
}

export async function setBankActive(db: Db, actor: Actor, table: store.BankTable, id: string, active: boolean) {
  return db.transaction(async (tx) => {
    const before = await store.lockBankOrBranch(tx, table, id);
    if (!before) throw errors.notFound(table === 'banks' ? 'Bank' : 'Branch');
    await store.setBankOrBranchActive(tx, table, id, active);
    await audit(tx, { actor, merchantId: null, action: `${table === 'banks' ? 'bank' : 'branch'}.${active ? 'activate' : 'deactivate'}`, objectType: table, objectId: id, before, after: { ...before, active } });
  });
}

/** Teller: records the cash for a slip; the attempt is paid and the session succeeds (audited in the same transaction). */
export const tellerRecordDeposit = (db: Db, actor: Actor, checkoutUrlHost: string, input: { reference: string; branchId: string; amountMinor: number }) =>
  recordCashDeposit(db, checkoutUrlHost, input, actor);

/** Operator decision on an attempt held in manual_review or amount_mismatch: approve -> paid, reject -> failed. */
export async function resolveHeldAttempt(db: Db, actor: Actor, checkoutUrlHost: string, attemptId: string, decision: 'approve' | 'reject') {
  return db.transaction(async (tx) => {
    const attempt = await checkoutStore.findAttempt(tx, attemptId);
    if (!attempt) throw errors.notFound('Payment attempt');
    if (attempt.status !== 'manual_review' && attempt.status !== 'amount_mismatch') {
      throw new SikaError('ATTEMPT_NOT_HELD', `The attempt is ${attempt.status}; only held attempts are resolved here.`);
    }
    const applied = await applyOutcome(tx, attemptId, decision === 'approve' ? 'paid' : 'failed', { checkoutUrlHost, source: `operator_${decision}` });
    await audit(tx, {
      actor,
      merchantId: attempt.merchant_id,
      action: `attempt.${decision}`,
      objectType: 'payment_attempt',
      objectId: attemptId,
      before: { status: attempt.status, session: attempt.session_id },
      after: { status: applied.attempt.status, session_status: applied.session.status },
    });
    return applied;
  });
}

export const heldAttempts = (db: Queryable) => store.listHeldAttempts(db, store.CONSOLE_LIST_ROWS_MAX);

export const reconcile = (db: Db, actor: Actor, payoutId: string, result: 'matched' | 'exception') => reconcilePayout(db, payoutId, result, actor);

export const recordReturn = (db: Db, actor: Actor, payoutId: string, returnReference: string) => markPayoutReturned(db, payoutId, returnReference, actor);

// ---- what the console pages show ----

export type { HeldAttemptRow, LivePayoutRow, MerchantOverviewRow } from './store.ts';
export type PayoutControls = NonNullable<Awaited<ReturnType<typeof merchantPayoutControls>>>;
export type TellerSlip = Awaited<ReturnType<typeof tellerSlip>>;
export type BanksAndBranches = Awaited<ReturnType<typeof banksAndBranches>>;
export type AuditRow = Awaited<ReturnType<typeof auditLog>>[number];

export const merchantsOverview = (db: Queryable) => store.listMerchants(db, store.CONSOLE_LIST_ROWS_MAX);

/** A merchant and its payout settings in both environments, or null when there is no such merchant. */
export async function merchantPayoutControls(db: Db, merchantId: string) {
  const merchant = await store.findMerchant(db, merchantId);
  if (!merchant) return null;
  const settings = await db.transaction(async (tx) => ({ test: await payoutSettingsStore.settingsFor(tx, merchant.id, 'test'), live: await payoutSettingsStore.settingsFor(tx, merchant.id, 'live') }));
  return { merchant, settings };
}

/** The teller's lookup: the slip by its reference (as typed: trimmed, upper-cased), and the branches to record it at when it can be recorded. */
export async function tellerSlip(db: Queryable, reference: string) {
  const slip = reference ? await checkoutStore.findSlipByReference(db, reference.trim().toUpperCase()) : null;
  const view = slip ? await toSlipResponse(db, slip, false) : null;
  const branches = view?.can_record ? await store.listActiveBranchOptions(db) : [];
  return { view, branches };
}

export const livePayouts = (db: Queryable) => store.listLivePayouts(db, store.CONSOLE_LIST_ROWS_MAX);

export async function banksAndBranches(db: Queryable) {
  const banks = await store.listBanks(db);
  const branches = await store.listBranches(db);
  return { banks, branches };
}

export const auditLog = (db: Queryable) => listAudit(db, { merchantId: null, limit: store.CONSOLE_LIST_ROWS_MAX });
