// The ledger's SQL. Every function runs on the caller's Queryable (usually its transaction);
// nothing here opens a transaction. SQLSTATEs are mapped to ledger errors here, once.
import type { Environment } from '../accounts/model.ts';
import type { Queryable } from '../db/index.ts';
import { DbError } from '../db/index.ts';
import { ACCOUNT_KINDS, InsufficientFundsError, type AccountKind, type EntryKind, type Line, type ReferenceType } from './model.ts';

const MERCHANT_BALANCE_CONSTRAINT = 'ledger_merchant_balance_not_negative';

export interface AccountRow {
  id: string;
  kind: AccountKind;
  /** Stored sum of the account's lines (debit positive). */
  balance_minor: number;
}

export interface EntryRow {
  id: string;
  merchant_id: string;
  environment: Environment;
  kind: EntryKind;
  reference_type: string;
  reference_id: string;
  reverses_entry_id: string | null;
}

/** Creates all of a merchant's accounts for one environment, in a fixed order (concurrent creators never deadlock). */
export async function createAccounts(tx: Queryable, merchantId: string, environment: Environment): Promise<void> {
  await tx.query(
    `INSERT INTO ledger_accounts (merchant_id, environment, kind)
     SELECT $1, $2, kind FROM unnest($3::text[]) AS kind ORDER BY kind
     ON CONFLICT (merchant_id, environment, kind) DO NOTHING`,
    [merchantId, environment, [...ACCOUNT_KINDS].sort()],
  );
}

/**
 * Locks the given accounts in id order (every post locks in the same order, so concurrent posts
 * serialise per account and never deadlock) and returns their stored sums as of the lock.
 */
export function lockAccounts(tx: Queryable, merchantId: string, environment: Environment, kinds: readonly AccountKind[]): Promise<AccountRow[]> {
  return tx.query<AccountRow>(
    `SELECT id, kind, balance_minor FROM ledger_accounts
      WHERE merchant_id = $1 AND environment = $2 AND kind = ANY($3::text[])
      ORDER BY id FOR UPDATE`,
    [merchantId, environment, kinds],
  );
}

const ENTRY_COLUMNS = 'id, merchant_id, environment, kind, reference_type, reference_id, reverses_entry_id';

export function findEntries(db: Queryable, referenceType: ReferenceType, referenceId: string, kinds: readonly EntryKind[]): Promise<EntryRow[]> {
  return db.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM journal_entries WHERE reference_type = $1 AND reference_id = $2 AND kind = ANY($3::text[]) ORDER BY created_at, id`,
    [referenceType, referenceId, kinds],
  );
}

export async function findEntry(db: Queryable, referenceType: ReferenceType, referenceId: string, kind: EntryKind): Promise<EntryRow | null> {
  return (await findEntries(db, referenceType, referenceId, [kind]))[0] ?? null;
}

export async function entryLines(db: Queryable, entryId: string): Promise<Line[]> {
  const rows = await db.query<{ account: AccountKind; amount_minor: number }>(
    `SELECT a.kind AS account, l.amount_minor FROM journal_lines l JOIN ledger_accounts a ON a.id = l.account_id WHERE l.entry_id = $1 ORDER BY a.kind`,
    [entryId],
  );
  return rows.map((row) => ({ account: row.account, amountMinor: row.amount_minor }));
}

export interface NewEntry {
  id: string;
  merchantId: string;
  environment: Environment;
  kind: EntryKind;
  referenceType: ReferenceType;
  referenceId: string;
  reversesEntryId: string | null;
}

/**
 * Writes the entry, its lines and the cached balances in one statement. Returns false, having
 * written nothing and left the transaction usable, when an entry for the same event already exists
 * (ON CONFLICT DO NOTHING also waits out a concurrent writer of it). A merchant balance going
 * negative fails the statement's CHECK and becomes InsufficientFundsError (the transaction is then
 * aborted on PostgreSQL; the service checks funds first so this is only a backstop).
 */
export async function writeEntry(tx: Queryable, entry: NewEntry, lines: readonly { accountId: string; amountMinor: number }[]): Promise<boolean> {
  let rows: { entries: number; accounts: number }[];
  try {
    rows = await tx.query<{ entries: number; accounts: number }>(
      `WITH entry AS (
         INSERT INTO journal_entries (id, merchant_id, environment, kind, reference_type, reference_id, reverses_entry_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT DO NOTHING
         RETURNING id
       ), line AS (
         INSERT INTO journal_lines (entry_id, account_id, amount_minor)
         SELECT entry.id, given.account_id, given.amount_minor FROM entry, unnest($8::uuid[], $9::bigint[]) AS given (account_id, amount_minor)
         RETURNING account_id, amount_minor
       ), moved AS (
         UPDATE ledger_accounts account SET balance_minor = account.balance_minor + line.amount_minor
           FROM line WHERE account.id = line.account_id
         RETURNING account.id
       )
       SELECT (SELECT count(*) FROM entry)::int AS entries, (SELECT count(*) FROM moved)::int AS accounts`,
      [
        entry.id,
        entry.merchantId,
        entry.environment,
        entry.kind,
        entry.referenceType,
        entry.referenceId,
        entry.reversesEntryId,
        lines.map((line) => line.accountId),
        lines.map((line) => line.amountMinor),
      ],
    );
  } catch (error) {
    if (error instanceof DbError && error.sqlState === '23514' && (error.constraint === MERCHANT_BALANCE_CONSTRAINT || error.message.includes(MERCHANT_BALANCE_CONSTRAINT))) {
      throw new InsufficientFundsError();
    }
    throw error;
  }
  const result = rows[0]!;
  if (result.entries === 0) return false;
  if (result.accounts !== lines.length) throw new Error(`ledger assertion failed: entry ${entry.id} moved ${result.accounts} balances for ${lines.length} lines`);
  return true;
}

/** Stored sums of a merchant's accounts in one environment (accounts not yet created are absent). */
export async function accountSums(db: Queryable, merchantId: string, environment: Environment): Promise<Map<AccountKind, number>> {
  const rows = await db.query<{ kind: AccountKind; balance_minor: number }>(
    `SELECT kind, balance_minor FROM ledger_accounts WHERE merchant_id = $1 AND environment = $2`,
    [merchantId, environment],
  );
  return new Map(rows.map((row) => [row.kind, row.balance_minor]));
}

// ---------- invariants (read-only; merchantId null = every merchant) ----------

export function unbalancedEntries(db: Queryable, merchantId: string | null) {
  return db.query<{ id: string; kind: string; total: number; lines: number }>(
    `SELECT e.id, e.kind, coalesce(sum(l.amount_minor), 0)::bigint AS total, count(l.entry_id)::int AS lines
       FROM journal_entries e LEFT JOIN journal_lines l ON l.entry_id = e.id
      WHERE ($1::uuid IS NULL OR e.merchant_id = $1)
      GROUP BY e.id, e.kind
     HAVING coalesce(sum(l.amount_minor), 0) <> 0 OR count(l.entry_id) < 2`,
    [merchantId],
  );
}

export function driftedAccounts(db: Queryable, merchantId: string | null) {
  return db.query<{ id: string; kind: string; balance_minor: number; lines_minor: number }>(
    `SELECT a.id, a.kind, a.balance_minor, coalesce(sum(l.amount_minor), 0)::bigint AS lines_minor
       FROM ledger_accounts a LEFT JOIN journal_lines l ON l.account_id = a.id
      WHERE ($1::uuid IS NULL OR a.merchant_id = $1)
      GROUP BY a.id, a.kind, a.balance_minor
     HAVING a.balance_minor <> coalesce(sum(l.amount_minor), 0)`,
    [merchantId],
  );
}

export function negativeMerchantAccounts(db: Queryable, merchantId: string | null) {
  return db.query<{ id: string; kind: string; balance_minor: number }>(
    `SELECT id, kind, balance_minor FROM ledger_accounts
      WHERE kind IN ('merchant_available', 'merchant_held') AND balance_minor > 0 AND ($1::uuid IS NULL OR merchant_id = $1)`,
    [merchantId],
  );
}

/** Lines posted to an account of another merchant or environment than their entry's. */
export function crossedLines(db: Queryable, merchantId: string | null) {
  return db.query<{ entry_id: string; account_id: string }>(
    `SELECT l.entry_id, l.account_id
       FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id JOIN ledger_accounts a ON a.id = l.account_id
      WHERE (a.merchant_id <> e.merchant_id OR a.environment <> e.environment) AND ($1::uuid IS NULL OR e.merchant_id = $1)`,
    [merchantId],
  );
}

// What each follow-up entry must point at, and on which accounts it must cancel its target exactly
// (null = every account: a reversal or a void is the exact opposite of its target).
const FOLLOW_UP_RULES = `(VALUES
  ('payment_reversal', 'payment_credit', NULL::text[]),
  ('payout_void', 'payout_hold', NULL::text[]),
  ('payout_post', 'payout_hold', ARRAY['merchant_held']),
  ('payout_return', 'payout_post', ARRAY['payout_clearing', 'fee_revenue'])
) AS rule (kind, target_kind, accounts)`;

/** Follow-up entries that do not point at the right entry of the same event. */
export function misdirectedFollowUps(db: Queryable, merchantId: string | null) {
  return db.query<{ id: string; kind: string; target_kind: string }>(
    `SELECT e.id, e.kind, rule.target_kind
       FROM journal_entries e JOIN ${FOLLOW_UP_RULES} ON rule.kind = e.kind
       LEFT JOIN journal_entries t ON t.id = e.reverses_entry_id
      WHERE ($1::uuid IS NULL OR e.merchant_id = $1)
        AND (t.id IS NULL OR t.kind <> rule.target_kind OR t.merchant_id <> e.merchant_id OR t.environment <> e.environment
             OR t.reference_type <> e.reference_type OR t.reference_id <> e.reference_id)`,
    [merchantId],
  );
}

/** Follow-up entries that do not cancel their target exactly on the accounts they must. */
export function mismatchedFollowUps(db: Queryable, merchantId: string | null) {
  return db.query<{ id: string; kind: string; account: string; net_minor: number }>(
    `SELECT e.id, e.kind, a.kind AS account, sum(l.amount_minor)::bigint AS net_minor
       FROM journal_entries e JOIN ${FOLLOW_UP_RULES} ON rule.kind = e.kind
       JOIN journal_lines l ON l.entry_id = e.id OR l.entry_id = e.reverses_entry_id
       JOIN ledger_accounts a ON a.id = l.account_id
      WHERE ($1::uuid IS NULL OR e.merchant_id = $1) AND (rule.accounts IS NULL OR a.kind = ANY(rule.accounts))
      GROUP BY e.id, e.kind, a.kind
     HAVING sum(l.amount_minor) <> 0`,
    [merchantId],
  );
}
