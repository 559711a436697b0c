// The ledger: money moves only through post(), inside the caller's transaction, as balanced,
// immutable journal entries. Cached balances are updated in the same transaction and checked by SQL.
import type { Queryable } from '../db/index.ts';
import { DbError } from '../db/index.ts';
import { newUuid } from '../lib/ids.ts';
import {
  ACCOUNT_KINDS,
  InsufficientFundsError,
  LedgerDuplicateEntryError,
  normaliseLines,
  type AccountKind,
  type EntryInput,
  type Line,
} from './model.ts';

export { InsufficientFundsError, LedgerDuplicateEntryError } from './model.ts';

type Environment = 'test' | 'live';

async function accountIds(tx: Queryable, merchantId: string, environment: Environment, kinds: AccountKind[]): Promise<Map<AccountKind, string>> {
  await tx.query(
    `INSERT INTO ledger_accounts (merchant_id, environment, kind) SELECT $1, $2, unnest($3::text[]) ON CONFLICT (merchant_id, environment, kind) DO NOTHING`,
    [merchantId, environment, kinds],
  );
  // Lock in a fixed order so concurrent posts never deadlock.
  const rows = await tx.query<{ id: string; kind: AccountKind }>(
    `SELECT id, kind FROM ledger_accounts WHERE merchant_id = $1 AND environment = $2 AND kind = ANY($3::text[]) ORDER BY id FOR UPDATE`,
    [merchantId, environment, kinds],
  );
  return new Map(rows.map((row) => [row.kind, row.id]));
}

async function findEntry(tx: Queryable, referenceType: string, referenceId: string, kind: string) {
  const rows = await tx.query<{ id: string }>('SELECT id FROM journal_entries WHERE reference_type = $1 AND reference_id = $2 AND kind = $3', [referenceType, referenceId, kind]);
  return rows[0]?.id ?? null;
}

/** Writes one balanced entry and updates the cached balances. A duplicate (reference, kind) is refused before anything is written. */
export async function post(tx: Queryable, entry: EntryInput): Promise<{ entryId: string }> {
  const lines = normaliseLines(entry.lines);
  if (await findEntry(tx, entry.referenceType, entry.referenceId, entry.kind)) {
    throw new LedgerDuplicateEntryError(entry.referenceType, entry.referenceId, entry.kind);
  }
  if (entry.kind === 'payout_post' || entry.kind === 'payout_void') {
    const other = entry.kind === 'payout_post' ? 'payout_void' : 'payout_post';
    if (await findEntry(tx, entry.referenceType, entry.referenceId, other)) throw new LedgerDuplicateEntryError(entry.referenceType, entry.referenceId, other);
  }
  const ids = await accountIds(tx, entry.merchantId, entry.environment, lines.map((line) => line.account));
  const entryId = newUuid();
  try {
    await tx.query(
      `INSERT INTO journal_entries (id, merchant_id, environment, kind, reference_type, reference_id, reverses_entry_id) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [entryId, entry.merchantId, entry.environment, entry.kind, entry.referenceType, entry.referenceId, entry.reversesEntryId ?? null],
    );
    await tx.query(
      `INSERT INTO journal_lines (entry_id, account_id, amount_minor) SELECT $1, unnest($2::uuid[]), unnest($3::bigint[])`,
      [entryId, lines.map((line) => ids.get(line.account)), lines.map((line) => line.amountMinor)],
    );
    await tx.query(
      `UPDATE ledger_accounts a SET balance_minor = a.balance_minor + l.amount
         FROM (SELECT unnest($1::uuid[]) AS id, unnest($2::bigint[]) AS amount) l WHERE a.id = l.id`,
      [lines.map((line) => ids.get(line.account)), lines.map((line) => line.amountMinor)],
    );
  } catch (error) {
    const dbError = error instanceof DbError ? error : null;
    if (dbError?.sqlState === '23514' && (dbError.constraint === 'ledger_merchant_balance_not_negative' || dbError.message.includes('ledger_merchant_balance_not_negative'))) {
      throw new InsufficientFundsError();
    }
    if (dbError?.isUniqueViolation) throw new LedgerDuplicateEntryError(entry.referenceType, entry.referenceId, entry.kind);
    throw error;
  }
  return { entryId };
}

/** A successful payment: the payer paid chargedMinor; the merchant is credited that less every fee. */
export function creditPayment(
  tx: Queryable,
  p: { merchantId: string; environment: Environment; paymentId: string; chargedMinor: number; payerFeeMinor: number; merchantFeeMinor: number },
) {
  const feesMinor = p.payerFeeMinor + p.merchantFeeMinor;
  if (p.chargedMinor < 1 || p.payerFeeMinor < 0 || p.merchantFeeMinor < 0 || feesMinor > p.chargedMinor) {
    throw new Error(`bad payment credit: charged ${p.chargedMinor}, fees ${p.payerFeeMinor} + ${p.merchantFeeMinor}`);
  }
  return post(tx, {
    merchantId: p.merchantId,
    environment: p.environment,
    kind: 'payment_credit',
    referenceType: 'payment',
    referenceId: p.paymentId,
    lines: [
      { account: 'provider_clearing', amountMinor: p.chargedMinor },
      { account: 'merchant_available', amountMinor: -(p.chargedMinor - feesMinor) },
      { account: 'fee_revenue', amountMinor: -feesMinor },
    ],
  });
}

/**
 * The exact opposite of a payment's credit. Throws InsufficientFundsError when the merchant has already
 * paid the money out (the balance may not go negative): an operator must then recover it.
 */
export async function reversePayment(tx: Queryable, p: { merchantId: string; environment: Environment; paymentId: string }) {
  const creditId = await findEntry(tx, 'payment', p.paymentId, 'payment_credit');
  if (!creditId) throw new Error(`no credit to reverse for payment ${p.paymentId}`);
  const lines = await tx.query<{ kind: AccountKind; amount_minor: number }>(
    `SELECT a.kind, l.amount_minor FROM journal_lines l JOIN ledger_accounts a ON a.id = l.account_id WHERE l.entry_id = $1`,
    [creditId],
  );
  return post(tx, {
    merchantId: p.merchantId,
    environment: p.environment,
    kind: 'payment_reversal',
    referenceType: 'payment',
    referenceId: p.paymentId,
    reversesEntryId: creditId,
    lines: lines.map((line) => ({ account: line.kind, amountMinor: -line.amount_minor })),
  });
}

interface PayoutMoney {
  merchantId: string;
  environment: Environment;
  payoutId: string;
  amountMinor: number;
  feeMinor: number;
}

const payoutEntry = (p: PayoutMoney, kind: EntryInput['kind'], lines: Line[], reversesEntryId: string | null = null): EntryInput => ({
  merchantId: p.merchantId,
  environment: p.environment,
  kind,
  referenceType: 'payout',
  referenceId: p.payoutId,
  reversesEntryId,
  lines,
});

/** Phase one: reserve amount + fee (available -> held). InsufficientFundsError when not affordable. */
export function holdPayout(tx: Queryable, p: PayoutMoney) {
  const total = p.amountMinor + p.feeMinor;
  return post(tx, payoutEntry(p, 'payout_hold', [
    { account: 'merchant_available', amountMinor: total },
    { account: 'merchant_held', amountMinor: -total },
  ]));
}

async function holdEntryId(tx: Queryable, payoutId: string): Promise<string> {
  const id = await findEntry(tx, 'payout', payoutId, 'payout_hold');
  if (!id) throw new Error(`payout ${payoutId} has no hold to resolve`);
  return id;
}

/** Phase two, paid: the hold leaves to the recipient (amount) and to fees. Exactly once, never after a void. */
export async function postPayout(tx: Queryable, p: PayoutMoney) {
  const holdId = await holdEntryId(tx, p.payoutId);
  return post(tx, payoutEntry(p, 'payout_post', [
    { account: 'merchant_held', amountMinor: p.amountMinor + p.feeMinor },
    { account: 'payout_clearing', amountMinor: -p.amountMinor },
    { account: 'fee_revenue', amountMinor: -p.feeMinor },
  ], holdId));
}

/** Phase two, failed or cancelled: the hold goes back to available. Exactly once, never after a post. */
export async function voidPayout(tx: Queryable, p: PayoutMoney) {
  const holdId = await holdEntryId(tx, p.payoutId);
  return post(tx, payoutEntry(p, 'payout_void', [
    { account: 'merchant_held', amountMinor: p.amountMinor + p.feeMinor },
    { account: 'merchant_available', amountMinor: -(p.amountMinor + p.feeMinor) },
  ], holdId));
}

/** A paid transfer came back: amount and fee return to available. Only after a post, exactly once. */
export async function returnPayout(tx: Queryable, p: PayoutMoney) {
  const postId = await findEntry(tx, 'payout', p.payoutId, 'payout_post');
  if (!postId) throw new Error(`payout ${p.payoutId} was never paid; nothing to return`);
  return post(tx, payoutEntry(p, 'payout_return', [
    { account: 'payout_clearing', amountMinor: p.amountMinor },
    { account: 'fee_revenue', amountMinor: p.feeMinor },
    { account: 'merchant_available', amountMinor: -(p.amountMinor + p.feeMinor) },
  ], postId));
}

export interface Balance {
  environment: Environment;
  currency: 'GHS';
  available_minor: number;
  held_minor: number;
  eligible_minor: number;
}

/** SPEC 2.11: eligible = available + held. */
export async function balance(db: Queryable, merchantId: string, environment: Environment): Promise<Balance> {
  const rows = await db.query<{ kind: AccountKind; balance_minor: number }>(
    `SELECT kind, balance_minor FROM ledger_accounts WHERE merchant_id = $1 AND environment = $2 AND kind IN ('merchant_available', 'merchant_held')`,
    [merchantId, environment],
  );
  const of = (kind: AccountKind) => 0 - (rows.find((row) => row.kind === kind)?.balance_minor ?? 0) || 0; // no -0
  const available = of('merchant_available');
  const held = of('merchant_held');
  return { environment, currency: 'GHS', available_minor: available, held_minor: held, eligible_minor: available + held };
}

/** Every invariant of the journal, as a list of problems (empty = healthy). For tests and operators. */
export async function checkInvariants(db: Queryable, merchantId: string | null = null): Promise<string[]> {
  const problems: string[] = [];
  const unbalanced = await db.query<{ entry_id: string; total: number }>(
    `SELECT l.entry_id, sum(l.amount_minor)::bigint AS total FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
      WHERE ($1::uuid IS NULL OR e.merchant_id = $1) GROUP BY l.entry_id HAVING sum(l.amount_minor) <> 0 OR count(*) < 2`,
    [merchantId],
  );
  for (const row of unbalanced) problems.push(`entry ${row.entry_id} is unbalanced (sum ${row.total})`);
  const drifted = await db.query<{ id: string; kind: string; balance_minor: number; lines_minor: number }>(
    `SELECT a.id, a.kind, a.balance_minor, coalesce(sum(l.amount_minor), 0)::bigint AS lines_minor
       FROM ledger_accounts a LEFT JOIN journal_lines l ON l.account_id = a.id
      WHERE ($1::uuid IS NULL OR a.merchant_id = $1) GROUP BY a.id HAVING a.balance_minor <> coalesce(sum(l.amount_minor), 0)`,
    [merchantId],
  );
  for (const row of drifted) problems.push(`account ${row.id} (${row.kind}) caches ${row.balance_minor} but its lines sum to ${row.lines_minor}`);
  const negative = await db.query<{ id: string; kind: string }>(
    `SELECT id, kind FROM ledger_accounts WHERE kind IN ('merchant_available', 'merchant_held') AND balance_minor > 0 AND ($1::uuid IS NULL OR merchant_id = $1)`,
    [merchantId],
  );
  for (const row of negative) problems.push(`merchant account ${row.id} (${row.kind}) is negative`);
  return problems;
}

export { ACCOUNT_KINDS };
