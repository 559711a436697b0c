// The ledger: money moves only through post(), inside the caller's transaction, as balanced,
// immutable journal entries (the ledger never opens a transaction of its own for a post).
// Cached balances move in the statement that writes the lines; SQL checks back up every assertion.
//
// Errors a caller can act on (all leave its transaction usable and write nothing):
//   LedgerDuplicateEntryError   the event (reference, kind) was already posted: use it for exactly-once
//   PayoutAlreadyResolvedError  (a LedgerDuplicateEntryError) a payout hold was already posted or voided
//   InsufficientFundsError      the entry would take a merchant balance below zero
//   LedgerEntryNotFoundError    the credit to reverse, the hold to resolve or the post to return is missing
// Anything else (an unbalanced entry, an unsafe amount, a resolution that does not match its hold)
// is a bug and throws a plain Error.
import type { Queryable } from '../db/index.ts';
import { newUuid } from '../lib/ids.ts';
import { effectiveClearing, planClearing } from './clearing.ts';
import * as clearingStore from './clearing-store.ts';
import {
  ACCOUNT_KINDS,
  BOOK_ACCOUNTS,
  assertEntry,
  blockingKinds,
  duplicateError,
  findShortfall,
  LedgerEntryNotFoundError,
  merchantBalanceOf,
  oppositeLines,
  paymentClearedLines,
  paymentCreditLines,
  paymentNetMinor,
  payoutHoldLines,
  payoutPaidLines,
  payoutPostLines,
  payoutReturnLines,
  payoutTotalMinor,
  payoutVoidLines,
  refundHoldLines,
  refundPostLines,
  refundVoidLines,
  reserveHoldLines,
  reserveReleaseLines,
  sameLines,
  type AccountKind,
  type EntryInput,
  type EntryKind,
  type Environment,
  type Line,
  type PaymentCredit,
  type PayoutAmounts,
  type ReferenceType,
} from './model.ts';
import * as store from './store.ts';

export {
  ACCOUNT_KINDS,
  InsufficientFundsError,
  LedgerDuplicateEntryError,
  LedgerEntryNotFoundError,
  PayoutAlreadyResolvedError,
  type AccountKind,
  type EntryInput,
  type EntryKind,
  type Line,
} from './model.ts';
export type { AccountRow } from './store.ts';

/**
 * Locks the entry's accounts in id order, creating the merchant's accounts on first use (balances with their
 * unapplied lines). Available and pending are locked together whenever either is, as entriesCtes does (a
 * balance transaction's balance after is their sum): locking one and then the other could deadlock.
 */
async function lockAccounts(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  entryKinds: AccountKind[],
): Promise<store.AccountRow[]> {
  const kinds = entryKinds.some((kind) => BOOK_ACCOUNTS.includes(kind))
    ? [...new Set([...entryKinds, ...BOOK_ACCOUNTS])]
    : entryKinds;
  let rows = await store.lockAccounts(tx, merchantId, environment, kinds);
  if (rows.length < kinds.length) {
    await store.createAccounts(tx, merchantId, environment);
    rows = await store.lockAccounts(tx, merchantId, environment, kinds);
  }
  if (rows.length !== kinds.length)
    throw new Error(`ledger assertion failed: locked ${rows.length} of ${kinds.length} accounts`);
  return rows;
}

/** Account ids never change once created: kept per merchant and environment, so a payment credit reads none. */
const ACCOUNT_IDS_CACHED_MAX = 10_000;
const accountIdsCache = new Map<string, store.AccountRow[]>();

/**
 * The merchant's accounts (ids and kinds; balance_minor 0: not read), created on first use. No lock.
 * Only accounts found already there are cached: ones this transaction creates may yet be rolled back.
 */
async function knownAccounts(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  kinds: AccountKind[],
): Promise<store.AccountRow[]> {
  const key = `${merchantId}:${environment}`;
  let all = accountIdsCache.get(key);
  if (!all) {
    let rows = await store.accountIds(tx, merchantId, environment);
    const complete = ACCOUNT_KINDS.every((kind) => rows.some((row) => row.kind === kind));
    if (!complete) {
      await store.createAccounts(tx, merchantId, environment);
      rows = await store.accountIds(tx, merchantId, environment);
    }
    all = rows.map((row) => ({ ...row, balance_minor: 0 }));
    if (complete) {
      if (accountIdsCache.size >= ACCOUNT_IDS_CACHED_MAX) accountIdsCache.clear();
      accountIdsCache.set(key, all);
    }
  }
  return kinds.map((kind) => {
    const account = all!.find((a) => a.kind === kind);
    if (!account) throw new Error(`ledger assertion failed: no ${kind} account for merchant ${merchantId}`);
    return account;
  });
}

/** The duplicate error for an entry whose event was already posted (the winner's kind, as read now). */
async function alreadyPosted(tx: Queryable, entry: EntryInput): Promise<Error> {
  const [winner] = await store.findEntries(tx, entry, blockingKinds(entry.kind));
  return duplicateError(entry, winner?.kind ?? entry.kind);
}

/**
 * Writes one balanced entry and moves the cached balances, in the caller's transaction.
 * Order: assert the entry, lock its accounts (id order), refuse a duplicate, refuse a shortfall,
 * then write entry + lines + balances in one statement. A refusal writes no journal row.
 */
export async function post(tx: Queryable, entry: EntryInput): Promise<{ entryId: string }> {
  const lines = assertEntry(entry);
  const accounts = await lockAccounts(
    tx,
    entry.merchantId,
    entry.environment,
    lines.map((line) => line.account),
  );
  // After the lock, so a concurrent post of the same event has committed and is seen here.
  const [existing] = await store.findEntries(tx, entry, blockingKinds(entry.kind));
  if (existing) throw duplicateError(entry, existing.kind);
  return writeOn(tx, entry, accounts);
}

/** Asserts the entry, refuses a shortfall against the running sums (which it moves) and lays its lines on the locked accounts. */
function planOn(
  entry: EntryInput,
  sums: Map<AccountKind, number> | null,
  accounts: readonly store.AccountRow[],
): { planned: store.NewEntry; lines: store.NewLine[] } {
  const lines = assertEntry(entry);
  const shortfall = sums && findShortfall(sums, lines);
  if (shortfall) throw shortfall;
  const planned: store.NewEntry = {
    id: newUuid(),
    merchantId: entry.merchantId,
    environment: entry.environment,
    kind: entry.kind,
    referenceType: entry.referenceType,
    referenceId: entry.referenceId,
    reversesEntryId: entry.reversesEntryId ?? null,
  };
  const newLines = lines.map((line) => {
    const account = accounts.find((a) => a.kind === line.account);
    if (!account) throw new Error(`ledger assertion failed: ${line.account} is not among the locked accounts`);
    sums?.set(line.account, (sums.get(line.account) ?? 0) + line.amountMinor);
    return { entryId: planned.id, accountId: account.id, amountMinor: line.amountMinor };
  });
  return { planned, lines: newLines };
}

/** After the accounts are locked and no earlier entry blocks this one: refuse a shortfall, then write entry, lines and balances. */
async function writeOn(tx: Queryable, entry: EntryInput, accounts: store.AccountRow[]): Promise<{ entryId: string }> {
  const { planned, lines } = planOn(
    entry,
    new Map(accounts.map((account) => [account.kind, account.balance_minor])),
    accounts,
  );
  // Lost a race the lock did not cover (e.g. the same event posted for other accounts); nothing was written.
  if (!(await store.writeEntries(tx, [planned], lines))) throw await alreadyPosted(tx, entry);
  return { entryId: planned.id };
}

/** An entry of one merchant's object (referenceType, referenceId); reversesEntryId the entry it resolves or reverses. */
const entryOf = (
  owner: { merchantId: string; environment: Environment },
  referenceType: ReferenceType,
  referenceId: string,
  kind: EntryKind,
  lines: readonly Line[],
  reversesEntryId: string | null = null,
): EntryInput => ({
  merchantId: owner.merchantId,
  environment: owner.environment,
  kind,
  referenceType,
  referenceId,
  reversesEntryId,
  lines,
});

/** The entry an operation builds on, for this merchant and environment. */
async function requireEntry(
  tx: Queryable,
  p: { merchantId: string; environment: Environment },
  referenceType: 'payment' | 'payout' | 'refund',
  referenceId: string,
  kind: EntryKind,
) {
  const entry = await store.findEntry(tx, referenceType, referenceId, kind);
  if (!entry) throw new LedgerEntryNotFoundError(referenceType, referenceId, kind);
  if (entry.merchant_id !== p.merchantId || entry.environment !== p.environment) {
    throw new Error(
      `ledger assertion failed: ${kind} of ${referenceType} ${referenceId} belongs to another merchant or environment`,
    );
  }
  return entry;
}

// ---------- payments ----------

export interface PaymentRef {
  merchantId: string;
  environment: Environment;
  paymentId: string;
}

/**
 * A successful payment: provider_clearing is debited chargedMinor (base + payer-borne fee), the merchant
 * is credited chargedMinor less every fee, fee_revenue the fees. Exactly once per paymentId
 * (LedgerDuplicateEntryError on a second credit).
 */
export async function creditPayment(
  tx: Queryable,
  p: PaymentRef & PaymentCredit & { rail?: string },
): Promise<{ entryId: string }> {
  // Issue 34: the money waits in pending until its rail clears (and the reserve keeps its part) unless it is
  // available at once. Without a rail (a duplicate refunded at once, the ledger's own tests) it is available at once.
  const net = paymentNetMinor(p);
  const plan =
    p.rail !== undefined && net > 0
      ? planClearing(await effectiveClearing(tx, p.merchantId, p.environment), p.rail, net, new Date())
      : null;
  const entry: EntryInput = {
    merchantId: p.merchantId,
    environment: p.environment,
    kind: 'payment_credit',
    referenceType: 'payment',
    referenceId: p.paymentId,
    lines: paymentCreditLines(p, plan ? 'merchant_pending' : 'merchant_available'),
  };
  // A credit never needs the balance (it cannot overdraw), so it locks nothing: its lines are applied
  // to the cached balances later, in order (store.writePendingEntry; migration 024).
  const accounts = await knownAccounts(
    tx,
    entry.merchantId,
    entry.environment,
    assertEntry(entry).map((line) => line.account),
  );
  const { planned, lines } = planOn(entry, null, accounts);
  if (!(await store.writePendingEntry(tx, planned, lines))) throw await alreadyPosted(tx, entry);
  if (plan) {
    await clearingStore.insertClearing(tx, {
      entry_id: planned.id,
      merchant_id: p.merchantId,
      environment: p.environment,
      payment_id: p.paymentId,
      rail: p.rail!,
      amount_minor: net,
      available_on: plan.availableOn,
      reserve_minor: plan.reserveMinor,
      reserve_release_on: plan.reserveReleaseOn,
    });
  }
  return { entryId: planned.id };
}

/**
 * Applies the merchant's credits still waiting (payment credits, see creditPayment) to its cached
 * balances and balance transactions, in the order they were written. One statement, atomic on its own
 * or inside the caller's transaction. skipLocked: the worker leaves accounts a writer holds (that writer
 * applies them). Returns the lines applied.
 */
export function applyPendingCredits(
  db: Queryable,
  merchantId: string,
  environment: Environment,
  options: { skipLocked?: boolean } = {},
): Promise<number> {
  return store.applyUnappliedLines(db, merchantId, environment, options);
}

/** The worker's pass: applies the waiting credits of up to ownersMax merchants (accounts held by a writer are skipped). */
export async function applyAllPendingCredits(db: Queryable, ownersMax = 100): Promise<number> {
  let applied = 0;
  for (const owner of await store.ownersWithUnappliedLines(db, ownersMax)) {
    applied += await applyPendingCredits(db, owner.merchant_id, owner.environment, { skipLocked: true });
  }
  return applied;
}

/**
 * The exact opposite of a payment's credit (reverses_entry_id points at it). Exactly once.
 * The merchant balance never goes negative: when the merchant has already paid the money out (or
 * holds it for a payout), this throws InsufficientFundsError, writes nothing and leaves the
 * transaction usable. The caller decides what then happens (e.g. an operator recovers the money);
 * the ledger never records a debt. LedgerEntryNotFoundError when the payment was never credited.
 */
export async function reversePayment(tx: Queryable, p: PaymentRef): Promise<{ entryId: string }> {
  const credit = await requireEntry(tx, p, 'payment', p.paymentId, 'payment_credit');
  const creditLines = await store.entryLines(tx, credit.id);
  // A credit that waits to clear is read under the balance locks, so the clearing job cannot clear it meanwhile:
  // still pending, the reversal takes it from pending (and it never clears); cleared, from available.
  await lockAccounts(
    tx,
    p.merchantId,
    p.environment,
    creditLines.map((line) => line.account),
  );
  const clearing = await clearingStore.clearingOf(tx, credit.id);
  const cleared = clearing !== null && clearing.cleared_at !== null;
  const lines = oppositeLines(creditLines).map((line) =>
    cleared && line.account === 'merchant_pending' ? { ...line, account: 'merchant_available' as const } : line,
  );
  const reversal = await post(tx, entryOf(p, 'payment', p.paymentId, 'payment_reversal', lines, credit.id));
  if (clearing && !cleared) await clearingStore.markReversed(tx, credit.id);
  return reversal;
}

/**
 * Clears what is due by asOf for one merchant and environment, in the caller's transaction: each credit whose
 * time has come moves pending -> available (payment_cleared) and the reserve keeps its part (reserve_hold);
 * each reserve whose days have passed goes back to available (reserve_release). Exactly once each (the
 * journal's unique (reference, kind); the rows are read under the balance locks). Returns what moved.
 */
export async function clearDuePayments(
  tx: Queryable,
  owner: { merchantId: string; environment: Environment },
  asOf: Date,
  batch = 500,
): Promise<{ cleared: number; released: number }> {
  const accounts = await lockAccounts(tx, owner.merchantId, owner.environment, [
    'merchant_available',
    'merchant_pending',
    'merchant_reserved',
  ]);
  let cleared = 0;
  let released = 0;
  for (;;) {
    const due = await clearingStore.dueClearings(tx, owner.merchantId, owner.environment, asOf, batch);
    const releases = await clearingStore.dueReleases(tx, owner.merchantId, owner.environment, asOf, batch);
    if (due.length === 0 && releases.length === 0) break;
    const planned: store.NewEntry[] = [];
    const lines: store.NewLine[] = [];
    const add = (entry: EntryInput) => {
      const made = planOn(entry, null, accounts);
      planned.push(made.planned);
      lines.push(...made.lines);
    };
    for (const row of due) {
      add(
        entryOf(
          owner,
          'payment',
          row.payment_id,
          'payment_cleared',
          paymentClearedLines(row.amount_minor),
          row.entry_id,
        ),
      );
      if (row.reserve_minor > 0)
        add(
          entryOf(owner, 'payment', row.payment_id, 'reserve_hold', reserveHoldLines(row.reserve_minor), row.entry_id),
        );
    }
    for (const row of releases) {
      add(
        entryOf(
          owner,
          'payment',
          row.payment_id,
          'reserve_release',
          reserveReleaseLines(row.reserve_minor),
          row.entry_id,
        ),
      );
    }
    if (!(await store.writeEntries(tx, planned, lines)))
      throw new Error('ledger assertion failed: a clearing was already posted for a row not marked cleared');
    await clearingStore.markDone(
      tx,
      'cleared_at',
      due.map((row) => row.entry_id),
    );
    await clearingStore.markDone(
      tx,
      'reserve_released_at',
      releases.map((row) => row.entry_id),
    );
    cleared += due.length;
    released += releases.length;
    if (due.length < batch && releases.length < batch) break;
  }
  return { cleared, released };
}

/** Merchants and environments with something to clear or release by asOf (the clear-payments job's list). */
export const ownersWithDueClearings = (db: Queryable, asOf: Date, limit = 100) =>
  clearingStore.ownersWithDueClearings(db, asOf, limit);

// ---------- payouts: two-phase transfers (hold, then post or void exactly once; return after post) ----------
// A payout's hold (phase one: amount + fee, available -> held) is written only with the new payout, in its
// statement: planNewPayout plans it, entriesCtes (src/ledger/statement.ts) writes it.

export interface PayoutMoney extends PayoutAmounts {
  merchantId: string;
  environment: Environment;
  payoutId: string;
}

const payoutEntry = (p: PayoutMoney, kind: EntryKind, lines: Line[], reversesEntryId: string | null = null) =>
  entryOf(p, 'payout', p.payoutId, kind, lines, reversesEntryId);

/** The hold a resolution resolves; the resolution must release exactly what it reserved (else a bug). */
async function requireHold(tx: Queryable, p: PayoutMoney): Promise<string> {
  const hold = await requireEntry(tx, p, 'payout', p.payoutId, 'payout_hold');
  if (!sameLines(await store.entryLines(tx, hold.id), payoutHoldLines(p))) {
    throw new Error(
      `ledger assertion failed: payout ${p.payoutId} resolved for ${payoutTotalMinor(p)}, which is not what its hold reserved`,
    );
  }
  return hold.id;
}

/**
 * Phase two, paid: held -> payout_clearing (amount) and held -> fee_revenue (fee). A new entry pointing
 * at the hold; the hold is never edited. PayoutAlreadyResolvedError after a post or a void.
 */
export async function postPayout(tx: Queryable, p: PayoutMoney): Promise<{ entryId: string }> {
  const holdId = await requireHold(tx, p);
  return post(tx, payoutEntry(p, 'payout_post', payoutPostLines(p), holdId));
}

/** The accounts a new payout's entry touches: its hold, or when paid at once its payment. */
export const newPayoutAccountKinds = (paidAtOnce: boolean): AccountKind[] =>
  paidAtOnce ? ['merchant_available', 'payout_clearing', 'fee_revenue'] : ['merchant_available', 'merchant_held'];

/** Entries planned against the accounts read, for the caller to write in its own statement (entriesCtes, src/ledger/statement.ts). */
export interface PlannedEntries {
  entries: store.NewEntry[];
  lines: store.NewLine[];
}

/**
 * The accounts a caller read in a statement of its own (for planNewPayout), completed when the merchant
 * has none yet: they are created here.
 */
export async function completeAccounts(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  kinds: AccountKind[],
  read: store.AccountRow[],
): Promise<store.AccountRow[]> {
  return read.length === kinds.length ? read : lockAccounts(tx, merchantId, environment, kinds);
}

/**
 * A new payout's entry: its hold, or when paid at once (Test mode, SPEC 3.3) its payment (payout_paid:
 * nothing is ever held for it), planned against the accounts the caller read or locked (newPayoutAccountKinds).
 * InsufficientFundsError when amount plus fee is not available in those balances ('balances' read); a
 * caller that did not lock them relies on the merchant balance CHECK when it writes (entriesCtes),
 * and one that has only the account ids ('balances unknown') relies on it alone. Nothing can have been
 * posted for a payout that did not exist before this transaction, so no earlier entries are read; the
 * unique constraints still refuse a second hold or resolution when written.
 */
export function planNewPayout(
  p: PayoutMoney,
  accounts: readonly store.AccountRow[],
  paidAtOnce: boolean,
  funds: 'balances read' | 'balances unknown' = 'balances read',
): PlannedEntries {
  const sums =
    funds === 'balances read' ? new Map(accounts.map((account) => [account.kind, account.balance_minor])) : null;
  const { planned, lines } = planOn(
    paidAtOnce ? payoutEntry(p, 'payout_paid', payoutPaidLines(p)) : payoutEntry(p, 'payout_hold', payoutHoldLines(p)),
    sums,
    accounts,
  );
  return { entries: [planned], lines };
}

/** Phase two, failed or cancelled: held -> available. PayoutAlreadyResolvedError after a post or a void. */
export async function voidPayout(tx: Queryable, p: PayoutMoney): Promise<{ entryId: string }> {
  const holdId = await requireHold(tx, p);
  return post(tx, payoutEntry(p, 'payout_void', payoutVoidLines(p), holdId));
}

/**
 * A paid transfer came back: payout_clearing -> available (amount), fee_revenue -> available (fee).
 * Only after a post or a payment at once (LedgerEntryNotFoundError otherwise), exactly once
 * (LedgerDuplicateEntryError).
 */
export async function returnPayout(tx: Queryable, p: PayoutMoney): Promise<{ entryId: string }> {
  const paidAtOnce = await store.findEntry(tx, 'payout', p.payoutId, 'payout_paid');
  const posted = paidAtOnce ?? (await requireEntry(tx, p, 'payout', p.payoutId, 'payout_post'));
  if (posted.merchant_id !== p.merchantId || posted.environment !== p.environment) {
    throw new Error(`ledger assertion failed: payout ${p.payoutId} was paid for another merchant or environment`);
  }
  if (!sameLines(await store.entryLines(tx, posted.id), paidAtOnce ? payoutPaidLines(p) : payoutPostLines(p))) {
    throw new Error(
      `ledger assertion failed: payout ${p.payoutId} returned for ${payoutTotalMinor(p)}, which is not what was paid`,
    );
  }
  return post(tx, payoutEntry(p, 'payout_return', payoutReturnLines(p), posted.id));
}

// ---------- refunds: two-phase, like payouts (hold, then post or void exactly once) ----------

export interface RefundMoney {
  merchantId: string;
  environment: Environment;
  refundId: string;
  amountMinor: number;
}

const refundEntry = (r: RefundMoney, kind: EntryKind, lines: Line[], reversesEntryId: string | null = null) =>
  entryOf(r, 'refund', r.refundId, kind, lines, reversesEntryId);

/** A new refund's amount is held from available. InsufficientFundsError when available cannot cover it; exactly once. */
export function holdRefund(tx: Queryable, r: RefundMoney): Promise<{ entryId: string }> {
  return post(tx, refundEntry(r, 'refund_hold', refundHoldLines(r.amountMinor)));
}

async function requireRefundHold(tx: Queryable, r: RefundMoney): Promise<string> {
  const hold = await requireEntry(tx, r, 'refund', r.refundId, 'refund_hold');
  if (!sameLines(await store.entryLines(tx, hold.id), refundHoldLines(r.amountMinor))) {
    throw new Error(
      `ledger assertion failed: refund ${r.refundId} resolved for ${r.amountMinor}, which is not what was held`,
    );
  }
  return hold.id;
}

/** The refund was paid: the hold leaves through the provider's clearing. PayoutAlreadyResolvedError after a post or void. */
export async function postRefund(tx: Queryable, r: RefundMoney): Promise<{ entryId: string }> {
  const holdId = await requireRefundHold(tx, r);
  return post(tx, refundEntry(r, 'refund_post', refundPostLines(r.amountMinor), holdId));
}

/** The refund failed (or was declined): the hold goes back to available. PayoutAlreadyResolvedError after a post or void. */
export async function voidRefund(tx: Queryable, r: RefundMoney): Promise<{ entryId: string }> {
  const holdId = await requireRefundHold(tx, r);
  return post(tx, refundEntry(r, 'refund_void', refundVoidLines(r.amountMinor), holdId));
}

// ---------- reads ----------

export interface Balance {
  environment: Environment;
  currency: 'GHS';
  available_minor: number;
  held_minor: number;
  eligible_minor: number;
  /** Payments still clearing (issue 34). */
  pending_minor: number;
  /** The rolling reserve, released by itself. */
  reserved_minor: number;
}

/**
 * SPEC 2.11: eligible = available + held; held = amount + fee of payouts still requested or processing.
 * Not for a transaction that goes on to lock other rows: it takes the accounts' lock to apply waiting credits.
 */
export async function balance(db: Queryable, merchantId: string, environment: Environment): Promise<Balance> {
  // The credits still waiting are applied first, so the balance read is the one the balance transactions end at.
  await applyPendingCredits(db, merchantId, environment);
  const sums = await store.accountSums(db, merchantId, environment);
  const available = merchantBalanceOf(sums.get('merchant_available') ?? 0);
  const held = merchantBalanceOf(sums.get('merchant_held') ?? 0);
  return {
    environment,
    currency: 'GHS',
    available_minor: available,
    held_minor: held,
    eligible_minor: available + held,
    pending_minor: merchantBalanceOf(sums.get('merchant_pending') ?? 0),
    reserved_minor: merchantBalanceOf(sums.get('merchant_reserved') ?? 0),
  };
}

/**
 * Every invariant of the journal, as a list of problems (empty = healthy), for one merchant or all:
 * entries balance with at least two lines; cached balances equal the sum of their lines; no merchant
 * balance is negative; lines stay within their entry's merchant and environment; reversals, payout
 * resolutions and returns point at the right entry and cancel it exactly where they must; a line waiting
 * to be applied is a line of the journal; a payment's credit never exceeds what was received.
 */
export async function checkInvariants(db: Queryable, merchantId: string | null = null): Promise<string[]> {
  const problems: string[] = [];
  for (const row of await store.unbalancedEntries(db, merchantId)) {
    problems.push(`entry ${row.id} (${row.kind}) is unbalanced: ${row.lines} lines summing to ${row.total}`);
  }
  for (const row of await store.driftedAccounts(db, merchantId)) {
    problems.push(
      `account ${row.id} (${row.kind}) caches ${row.balance_minor} but its lines sum to ${row.lines_minor}`,
    );
  }
  for (const row of await store.negativeMerchantAccounts(db, merchantId)) {
    problems.push(`merchant account ${row.id} (${row.kind}) is negative: ${merchantBalanceOf(row.balance_minor)}`);
  }
  for (const row of await store.strayUnappliedLines(db, merchantId)) {
    problems.push(`unapplied line of entry ${row.entry_id} on account ${row.account_id} is not a line of the journal`);
  }
  for (const row of await store.crossedLines(db, merchantId)) {
    problems.push(`entry ${row.entry_id} has a line on account ${row.account_id} of another merchant or environment`);
  }
  for (const row of await store.misdirectedFollowUps(db, merchantId)) {
    problems.push(
      `entry ${row.id} (${row.kind}) does not point at the ${row.target_kind} of its ${row.kind.split('_')[0]}`,
    );
  }
  for (const row of await store.unbookedBalances(db, merchantId)) {
    problems.push(
      `available account ${row.id} holds ${row.balance_minor} but its ${row.rows} balance transactions (of ${row.lines} lines) move ${row.moved_minor} and end at ${row.last_after_minor}`,
    );
  }
  for (const row of await store.mismatchedFollowUps(db, merchantId)) {
    problems.push(`entry ${row.id} (${row.kind}) does not cancel its target on ${row.account} (net ${row.net_minor})`);
  }
  for (const row of await store.overCreditedPayments(db, merchantId)) {
    problems.push(
      `payment ${row.payment_id}: credit ${row.entry_id} books ${row.booked_minor} (merchant ${row.credited_minor}) but ${row.received_minor} was received`,
    );
  }
  return problems;
}
