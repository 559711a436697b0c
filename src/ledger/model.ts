// Ledger types, typed errors and the pure rules every entry keeps (no I/O here).
// Sign convention: debit positive, credit negative; the lines of an entry sum to zero.
// The merchant's accounts are liabilities (credit-normal): the merchant's balance is the negated
// account sum, and it is never negative. Platform accounts (clearing, fees) are unconstrained.
import type { Environment } from '../lib/environment.ts';

export type { Environment };

export const ACCOUNT_KINDS = [
  'merchant_available',
  'merchant_held',
  'merchant_pending',
  'merchant_reserved',
  'provider_clearing',
  'fee_revenue',
  'payout_clearing',
] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];
/** The accounts whose merchant balance (negated sum) may never go below zero (SQL CHECK ledger_merchant_balance_not_negative). */
export const MERCHANT_ACCOUNTS: readonly AccountKind[] = [
  'merchant_available',
  'merchant_held',
  'merchant_pending',
  'merchant_reserved',
];
/**
 * The merchant's balance (issue 34): available + pending. A balance transaction is a movement of it; a move
 * between the two (a payment clearing) is none. Reserved money has left it until released; held money is a
 * payout's or a refund's.
 */
export const BOOK_ACCOUNTS: readonly AccountKind[] = ['merchant_available', 'merchant_pending'];

// A payout is held then posted or voided; one paid the moment it is made (Test mode) is one payout_paid
// entry instead, from available straight to clearing and fees, as nothing was ever held for it.
// A refund is held from available while pending, then posted (paid to the payer through the provider's
// clearing) or voided (released), exactly once.
export const ENTRY_KINDS = [
  'payment_credit',
  'payment_reversal',
  'payment_cleared',
  'reserve_hold',
  'reserve_release',
  'payout_hold',
  'payout_post',
  'payout_void',
  'payout_return',
  'payout_paid',
  'refund_hold',
  'refund_post',
  'refund_void',
] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];
export type ReferenceType = 'payment' | 'payout' | 'refund';

/**
 * Kinds that settle what a payout owes (resolve its hold, or pay it at once); one payout takes at most one
 * of them (unique index journal_entries_one_payout_resolution).
 */
export const PAYOUT_RESOLUTION_KINDS: readonly EntryKind[] = ['payout_post', 'payout_void', 'payout_paid'];
/** Kinds that open a payout's money; one payout takes at most one of them (unique index journal_entries_one_payout_opening). */
export const PAYOUT_OPENING_KINDS: readonly EntryKind[] = ['payout_hold', 'payout_paid'];

/** Kinds that settle a refund's hold; one refund takes at most one of them (unique index journal_entries_one_refund_resolution). */
export const REFUND_RESOLUTION_KINDS: readonly EntryKind[] = ['refund_post', 'refund_void'];

/** Bounds on an entry's shape (TigerBeetle: a limit on everything). */
export const ENTRY_INPUT_LINES_MAX = 20;
export const REFERENCE_ID_LENGTH_MAX = 200; // as the SQL CHECK on journal_entries.reference_id

export interface Line {
  account: AccountKind;
  amountMinor: number;
}

export interface EntryInput {
  merchantId: string;
  environment: Environment;
  kind: EntryKind;
  referenceType: ReferenceType;
  referenceId: string;
  reversesEntryId?: string | null;
  lines: readonly Line[];
}

/** The same business event (reference, kind) was already posted. Nothing was written; the transaction is still usable. */
export class LedgerDuplicateEntryError extends Error {
  override name = 'LedgerDuplicateEntryError';
  constructor(
    readonly referenceType: string,
    readonly referenceId: string,
    /** The kind that was refused. */
    readonly kind: string,
    /** The kind already posted that blocks it (differs from kind for a second payout resolution). */
    readonly existingKind: string = kind,
  ) {
    super(
      existingKind === kind
        ? `ledger entry ${kind} for ${referenceType} ${referenceId} already exists`
        : `ledger entry ${kind} for ${referenceType} ${referenceId} refused: ${existingKind} already exists`,
    );
  }
}

/** A payout hold was already posted or voided: the second resolution is refused (two-phase transfers resolve once). */
export class PayoutAlreadyResolvedError extends LedgerDuplicateEntryError {
  override name = 'PayoutAlreadyResolvedError';
}

/** The entry would make a merchant balance negative. Nothing was written; the transaction is still usable. */
export class InsufficientFundsError extends Error {
  override name = 'InsufficientFundsError';
  constructor(
    readonly account: AccountKind | null = null,
    /** The merchant balance of that account before the entry (pesewas). */
    readonly balanceMinor: number | null = null,
    /** What the entry takes from it (pesewas). */
    readonly requiredMinor: number | null = null,
  ) {
    super(
      account === null
        ? 'the merchant balance would go negative'
        : `the merchant balance would go negative: ${account} holds ${balanceMinor} and the entry takes ${requiredMinor}`,
    );
  }
}

/** The entry an operation builds on (the credit to reverse, the hold to resolve, the post to return) does not exist. */
export class LedgerEntryNotFoundError extends Error {
  override name = 'LedgerEntryNotFoundError';
  constructor(
    readonly referenceType: string,
    readonly referenceId: string,
    readonly kind: EntryKind,
  ) {
    super(`no ledger entry ${kind} for ${referenceType} ${referenceId}`);
  }
}

/** A failed assertion: a bug in the caller or the ledger, never a business outcome. */
function fail(message: string): never {
  throw new Error(`ledger assertion failed: ${message}`);
}

export function assertAmount(amountMinor: number, what: string): void {
  if (!Number.isSafeInteger(amountMinor)) fail(`${what} ${amountMinor} is not a safe integer`);
}

/** Kinds whose presence refuses a new entry of this kind for the same reference. */
export function blockingKinds(kind: EntryKind): readonly EntryKind[] {
  const blocking = new Set<EntryKind>([kind]);
  if (PAYOUT_RESOLUTION_KINDS.includes(kind)) for (const k of PAYOUT_RESOLUTION_KINDS) blocking.add(k);
  if (PAYOUT_OPENING_KINDS.includes(kind)) for (const k of PAYOUT_OPENING_KINDS) blocking.add(k);
  if (REFUND_RESOLUTION_KINDS.includes(kind)) for (const k of REFUND_RESOLUTION_KINDS) blocking.add(k);
  return [...blocking];
}

export function duplicateError(
  entry: Pick<EntryInput, 'referenceType' | 'referenceId' | 'kind'>,
  existingKind: string,
): LedgerDuplicateEntryError {
  const ErrorClass =
    PAYOUT_RESOLUTION_KINDS.includes(entry.kind) || REFUND_RESOLUTION_KINDS.includes(entry.kind)
      ? PayoutAlreadyResolvedError
      : LedgerDuplicateEntryError;
  return new ErrorClass(entry.referenceType, entry.referenceId, entry.kind, existingKind);
}

/**
 * Merges lines per account, drops zeros and asserts the entry balances (an unbalanced entry is a
 * bug: it throws, loudly, before anything is written). Lines come back ordered by account kind.
 */
export function normaliseLines(lines: readonly Line[]): Line[] {
  if (lines.length > ENTRY_INPUT_LINES_MAX) fail(`an entry of ${lines.length} lines`);
  const sums = new Map<AccountKind, number>();
  for (const line of lines) {
    if (!ACCOUNT_KINDS.includes(line.account)) fail(`unknown account kind ${String(line.account)}`);
    assertAmount(line.amountMinor, 'line amount');
    const sum = (sums.get(line.account) ?? 0) + line.amountMinor;
    assertAmount(sum, `sum of ${line.account} lines`);
    sums.set(line.account, sum);
  }
  const merged = ACCOUNT_KINDS.filter((account) => (sums.get(account) ?? 0) !== 0).map((account) => ({
    account,
    amountMinor: sums.get(account)!,
  }));
  let total = 0;
  for (const line of merged) {
    total += line.amountMinor;
    assertAmount(total, 'running total of the entry');
  }
  if (total !== 0) throw new Error(`ledger assertion failed: unbalanced ledger entry, lines sum to ${total}`);
  if (merged.length < 2)
    throw new Error(
      `ledger assertion failed: unbalanced ledger entry, ${merged.length} non-zero line(s); an entry moves money between at least two accounts`,
    );
  return merged;
}

export function assertEntry(entry: EntryInput): Line[] {
  if (!ENTRY_KINDS.includes(entry.kind)) fail(`unknown entry kind ${String(entry.kind)}`);
  if (entry.environment !== 'test' && entry.environment !== 'live')
    fail(`unknown environment ${String(entry.environment)}`);
  if (entry.referenceId.length < 1 || entry.referenceId.length > REFERENCE_ID_LENGTH_MAX)
    fail(`reference id of length ${entry.referenceId.length}`);
  return normaliseLines(entry.lines);
}

/** The merchant-facing balance of an account from its stored (debit-positive) sum; never -0. */
export const merchantBalanceOf = (storedSumMinor: number): number => (storedSumMinor === 0 ? 0 : -storedSumMinor);

/**
 * The first merchant account the lines would take below zero, given the locked stored sums, or null.
 * Checked in code before writing so the refusal leaves the caller's transaction usable; the SQL
 * CHECK stays as the backstop.
 */
export function findShortfall(
  storedSums: ReadonlyMap<AccountKind, number>,
  lines: readonly Line[],
): InsufficientFundsError | null {
  for (const line of lines) {
    if (!MERCHANT_ACCOUNTS.includes(line.account) || line.amountMinor <= 0) continue;
    const stored = storedSums.get(line.account) ?? 0;
    const after = stored + line.amountMinor;
    assertAmount(after, `balance of ${line.account}`);
    if (after > 0) return new InsufficientFundsError(line.account, merchantBalanceOf(stored), line.amountMinor);
  }
  return null;
}

// ---------- the entries of each business event (pure) ----------

export interface PaymentCredit {
  chargedMinor: number;
  merchantFeeMinor: number;
  payerFeeMinor: number;
}

/** What a payment credit leaves the merchant: charged less every fee. */
export const paymentNetMinor = (p: PaymentCredit): number => p.chargedMinor - p.payerFeeMinor - p.merchantFeeMinor;

/** The payer paid chargedMinor (base + payer-borne fee); the merchant gets that less every fee. */
export function paymentCreditLines(
  p: PaymentCredit,
  to: 'merchant_available' | 'merchant_pending' = 'merchant_available',
): Line[] {
  assertAmount(p.chargedMinor, 'chargedMinor');
  assertAmount(p.merchantFeeMinor, 'merchantFeeMinor');
  assertAmount(p.payerFeeMinor, 'payerFeeMinor');
  const feesMinor = p.payerFeeMinor + p.merchantFeeMinor;
  if (p.chargedMinor < 1 || p.payerFeeMinor < 0 || p.merchantFeeMinor < 0 || feesMinor > p.chargedMinor) {
    fail(`payment credit of ${p.chargedMinor} with fees ${p.payerFeeMinor} (payer) + ${p.merchantFeeMinor} (merchant)`);
  }
  return [
    { account: 'provider_clearing', amountMinor: p.chargedMinor },
    { account: to, amountMinor: -(p.chargedMinor - feesMinor) },
    { account: 'fee_revenue', amountMinor: -feesMinor },
  ].filter((line): line is Line => line.amountMinor !== 0);
}

/** A payment's net clears: pending -> available. */
export const paymentClearedLines = (netMinor: number): Line[] =>
  moveLines('merchant_pending', 'merchant_available', netMinor);
/** The rolling reserve keeps part of a cleared payment: available -> reserved. */
export const reserveHoldLines = (reserveMinor: number): Line[] =>
  moveLines('merchant_available', 'merchant_reserved', reserveMinor);
/** The reserve's days have passed: reserved -> available. */
export const reserveReleaseLines = (reserveMinor: number): Line[] =>
  moveLines('merchant_reserved', 'merchant_available', reserveMinor);

/** The exact opposite of an entry's lines. */
export const oppositeLines = (lines: readonly Line[]): Line[] =>
  lines.map((line) => ({ account: line.account, amountMinor: -line.amountMinor }));

export interface PayoutAmounts {
  amountMinor: number;
  feeMinor: number;
}

export function payoutTotalMinor(p: PayoutAmounts): number {
  assertAmount(p.amountMinor, 'payout amountMinor');
  assertAmount(p.feeMinor, 'payout feeMinor');
  if (p.amountMinor < 1 || p.feeMinor < 0) fail(`payout of ${p.amountMinor} with fee ${p.feeMinor}`);
  const total = p.amountMinor + p.feeMinor;
  assertAmount(total, 'payout total');
  return total;
}

/** amountMinor leaves `from` for `to` (debit positive: `from` is debited, `to` credited). */
const moveLines = (from: AccountKind, to: AccountKind, amountMinor: number): Line[] => [
  { account: from, amountMinor },
  { account: to, amountMinor: -amountMinor },
];

/** Phase one: reserve amount + fee (available -> held). */
export const payoutHoldLines = (p: PayoutAmounts): Line[] =>
  moveLines('merchant_available', 'merchant_held', payoutTotalMinor(p));

/** Amount plus fee leave `from` to the recipient (amount) and to our fees (fee). */
function payoutPaymentLines(p: PayoutAmounts, from: 'merchant_held' | 'merchant_available'): Line[] {
  return [
    { account: from, amountMinor: payoutTotalMinor(p) },
    { account: 'payout_clearing', amountMinor: -p.amountMinor },
    { account: 'fee_revenue', amountMinor: -p.feeMinor },
  ].filter((line): line is Line => line.amountMinor !== 0);
}

/** Phase two, paid: the hold leaves to the recipient (amount) and to our fees (fee). */
export const payoutPostLines = (p: PayoutAmounts): Line[] => payoutPaymentLines(p, 'merchant_held');

/** Paid the moment it is made (Test mode): from available, nothing held. */
export const payoutPaidLines = (p: PayoutAmounts): Line[] => payoutPaymentLines(p, 'merchant_available');

/** Phase two, failed or cancelled: the hold goes back to available. */
export const payoutVoidLines = (p: PayoutAmounts): Line[] => oppositeLines(payoutHoldLines(p));

/** A paid transfer came back: amount and fee return to available. */
export function payoutReturnLines(p: PayoutAmounts): Line[] {
  const total = payoutTotalMinor(p);
  return [
    { account: 'payout_clearing', amountMinor: p.amountMinor },
    { account: 'fee_revenue', amountMinor: p.feeMinor },
    { account: 'merchant_available', amountMinor: -total },
  ].filter((line): line is Line => line.amountMinor !== 0);
}

/** A refund's amount, asserted a positive safe integer. */
function refundMinor(amountMinor: number): number {
  assertAmount(amountMinor, 'refund amountMinor');
  if (amountMinor < 1) fail(`refund of ${amountMinor}`);
  return amountMinor;
}

/** A refund while pending: its amount is held (available -> held). */
export const refundHoldLines = (amountMinor: number): Line[] =>
  moveLines('merchant_available', 'merchant_held', refundMinor(amountMinor));

/** A refund paid: the hold leaves to the payer through the provider's clearing (the payment came in there). */
export const refundPostLines = (amountMinor: number): Line[] =>
  moveLines('merchant_held', 'provider_clearing', refundMinor(amountMinor));

/** A refund failed or was not approved: the hold goes back to available. */
export const refundVoidLines = (amountMinor: number): Line[] => oppositeLines(refundHoldLines(amountMinor));

/** Two line lists move the same money (order and zero lines aside). */
export function sameLines(a: readonly Line[], b: readonly Line[]): boolean {
  const key = (lines: readonly Line[]) =>
    normaliseLinesLoose(lines)
      .map((line) => `${line.account}:${line.amountMinor}`)
      .join(',');
  return key(a) === key(b);
}

function normaliseLinesLoose(lines: readonly Line[]): Line[] {
  return ACCOUNT_KINDS.map((account) => ({
    account,
    amountMinor: lines.filter((line) => line.account === account).reduce((sum, line) => sum + line.amountMinor, 0),
  })).filter((line) => line.amountMinor !== 0);
}
