// Operator actions: each one runs in one transaction with its audit log row (who, what, before, after).
import { hashPassword, PASSWORD_LENGTH_MIN } from '../accounts/service.ts';
import { audit, type Actor } from '../audit/log.ts';
import {
  normaliseSlipReference,
  recordCashDeposit,
  TEST_SLIP_REFUSAL,
  toSlipResponse,
} from '../checkout/cash-slips.ts';
import { slipByReference } from '../checkout/service.ts';
import type { Db, Queryable } from '../db/index.ts';
import { DbError } from '../db/index.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { newUuid } from '../lib/ids.ts';
import { reconcilePayout } from '../payouts/lifecycle.ts';
import { payoutSettingsOf } from '../payouts/settings.ts';
import * as approvalsStore from './approvals-store.ts';
import * as livePayoutsStore from './live-payouts-store.ts';
import * as store from './store.ts';

/** A new operator account, audited as made by `actor` (the CLI's user@host; the system when a program makes one). */
export async function createOperator(
  db: Db,
  input: { email: string; password: string; role?: 'operator' | 'teller' | 'compliance' },
  actor: Actor = { type: 'system', id: 'system', email: null },
) {
  const email = input.email.trim();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    throw new SikaError('INVALID_ARGUMENT', `email "${email}" is not an email address`);
  if (input.password.length < PASSWORD_LENGTH_MIN)
    throw new SikaError('INVALID_ARGUMENT', `password must be at least ${PASSWORD_LENGTH_MIN} characters`);
  const id = newUuid();
  const passwordHash = await hashPassword(input.password);
  try {
    await db.transaction(async (tx) => {
      await store.insertOperator(tx, { id, email, passwordHash, role: input.role ?? 'operator' });
      await audit(tx, {
        actor,
        merchantId: null,
        action: 'operator.create',
        objectType: 'operator',
        objectId: id,
        before: null,
        after: { email, role: input.role ?? 'operator' },
      });
    });
  } catch (error) {
    if (error instanceof DbError && error.isUniqueViolation)
      throw new SikaError('EMAIL_TAKEN', `an operator with email ${email} already exists`);
    throw error;
  }
  return { operator_id: id, email, role: input.role ?? 'operator' };
}

/** A merchant's payout settings change: Live openings and raises through a second operator (approvals.ts). */
export { changePayoutSettings } from './approvals.ts';

export async function addBank(db: Db, actor: Actor, input: { name: string; code: string }) {
  const name = input.name.trim();
  const code = input.code.trim().toUpperCase();
  if (!name || name.length > 120 || !/^[A-Z0-9]{2,10}$/.test(code))
    throw errors.invalidArgument('A bank needs a name and a code of 2 to 10 letters or digits.');
  try {
    return await db.transaction(async (tx) => {
      const id = await store.insertBank(tx, { name, code });
      await audit(tx, {
        actor,
        merchantId: null,
        action: 'bank.create',
        objectType: 'bank',
        objectId: id,
        before: null,
        after: { name, code },
      });
      return id;
    });
  } catch (error) {
    if (error instanceof DbError && error.isUniqueViolation)
      throw new SikaError('CODE_TAKEN', `bank code ${code} is already used`);
    throw error;
  }
}

export async function addBranch(db: Db, actor: Actor, input: { bankId: string; name: string; code: string }) {
  const name = input.name.trim();
  const code = input.code.trim().toUpperCase();
  if (!name || name.length > 120 || !/^[A-Z0-9-]{2,20}$/.test(code))
    throw errors.invalidArgument('A branch needs a name and a code of 2 to 20 letters, digits or hyphens.');
  try {
    return await db.transaction(async (tx) => {
      if (!(await store.bankExists(tx, input.bankId))) throw errors.notFound('Bank');
      const id = await store.insertBranch(tx, { bankId: input.bankId, name, code });
      await audit(tx, {
        actor,
        merchantId: null,
        action: 'branch.create',
        objectType: 'bank_branch',
        objectId: id,
        before: null,
        after: { bank_id: input.bankId, name, code },
      });
      return id;
    });
  } catch (error) {
    if (error instanceof DbError && error.isUniqueViolation)
      throw new SikaError('CODE_TAKEN', `branch code ${code} is already used`);
    throw error;
  }
}

export async function setBankActive(db: Db, actor: Actor, table: store.BankTable, id: string, active: boolean) {
  return db.transaction(async (tx) => {
    const before = await store.lockBankOrBranch(tx, table, id);
    if (!before) throw errors.notFound(table === 'banks' ? 'Bank' : 'Branch');
    await store.setBankOrBranchActive(tx, table, id, active);
    await audit(tx, {
      actor,
      merchantId: null,
      action: `${table === 'banks' ? 'bank' : 'branch'}.${active ? 'activate' : 'deactivate'}`,
      objectType: table,
      objectId: id,
      before,
      after: { ...before, active },
    });
  });
}

/** Teller: records the cash for a slip; the attempt is paid and the session succeeds (audited in the same transaction). */
export const tellerRecordDeposit = (
  db: Db,
  actor: Actor,
  checkoutUrlHost: string,
  input: { reference: string; branchId: string; amountMinor: number },
) => recordCashDeposit(db, checkoutUrlHost, input, actor);

/**
 * Operator decisions on attempts held in manual_review or amount_mismatch (issue 30): shown with what was
 * received and the statement line or deposit behind it, filed with a reason and a confirmation, and run when
 * a second operator approves (approvals.ts). A reject moves no money and applies at once.
 */
export {
  requestHeldDecision,
  requestPayoutReturn,
  decideApproval,
  heldAttemptView,
  approvalsOverview,
} from './approvals.ts';

/** The review queue: held attempts with what was received, the line or deposit behind each and any request waiting. */
export const heldAttempts = (
  db: Queryable,
  query: Omit<approvalsStore.HeldQuery, 'limit'> & { limit?: number } = {
    q: '',
    qPattern: '%',
    environment: null,
    status: null,
    cursor: null,
  },
) => approvalsStore.listHeldAttempts(db, { limit: store.CONSOLE_LIST_ROWS_MAX, ...query });

export const reconcile = (db: Db, actor: Actor, payoutId: string, result: 'matched' | 'exception') =>
  reconcilePayout(db, payoutId, result, actor);

/** An operator holds a Live payout not yet sent, or releases one held (a flag, not a status; audited: payouts/holds.ts). */
export { holdPayout, releasePayout } from '../payouts/holds.ts';

// ---- what the console pages show ----

export type { LivePayoutRow } from './live-payouts-store.ts';
export type { HeldAttemptDetail } from './approvals-store.ts';
export type PayoutControls = NonNullable<Awaited<ReturnType<typeof merchantPayoutControls>>>;
export type TellerSlip = Awaited<ReturnType<typeof tellerSlip>>;
export type BanksAndBranches = Awaited<ReturnType<typeof banksAndBranches>>;

/** A merchant and its payout settings in both environments, or null when there is no such merchant. */
export async function merchantPayoutControls(db: Db, merchantId: string) {
  const merchant = await store.findMerchant(db, merchantId);
  if (!merchant) return null;
  const settings = await db.transaction(async (tx) => ({
    test: await payoutSettingsOf(tx, merchant.id, 'test'),
    live: await payoutSettingsOf(tx, merchant.id, 'live'),
  }));
  return { merchant, settings };
}

/**
 * The teller's lookup: the slip by its reference as typed (any case, with or without dashes), its
 * environment, and the branches to record it at when it can be recorded. A Test slip is never recordable
 * here (`refusal` says why): Test deposits are recorded through the Test simulator only.
 */
export async function tellerSlip(db: Queryable, typed: string) {
  const reference = typed.trim() ? normaliseSlipReference(typed) : '';
  const slip = reference ? await slipByReference(db, reference) : null;
  const found = slip ? await toSlipResponse(db, slip, false) : null;
  const refusal = slip && slip.environment !== 'live' ? TEST_SLIP_REFUSAL : null;
  const view =
    found && slip ? { ...found, environment: slip.environment, can_record: found.can_record && !refusal } : null;
  const branches = view?.can_record ? await store.listActiveBranchOptions(db) : [];
  return { view, refusal, branches };
}

/** The Live payouts list (searched, filtered, a page from the cursor on), each with any return request waiting. */
export const livePayouts = (db: Queryable, query: livePayoutsStore.LivePayoutQuery) =>
  livePayoutsStore.listLivePayouts(db, query);

export async function banksAndBranches(db: Queryable) {
  const banks = await store.listBanks(db);
  const branches = await store.listBranches(db);
  return { banks, branches };
}
