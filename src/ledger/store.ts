// The ledger's SQL. Every function runs on the caller's Queryable (usually its transaction);
// nothing here opens a transaction. SQLSTATEs are mapped to ledger errors here, once.
import type { Environment } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { DbError } from '../db/index.ts';
import { Statement } from '../db/statement.ts';
import {
  ACCOUNT_KINDS,
  InsufficientFundsError,
  type AccountKind,
  type EntryInput,
  type EntryKind,
  type Line,
  type ReferenceType,
} from './model.ts';

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

/**
 * A select-list item (for a read of another module's, in a statement of its own): the merchant's accounts of
 * the given kinds, as JSON (AccountRow[], id order), each balance with its unapplied lines; read, not locked.
 * merchant and environment are the statement's placeholders; the kinds become a parameter here.
 */
export const accountsJsonItem = (s: Statement, merchant: string, environment: string, kinds: readonly AccountKind[]) =>
  `(SELECT coalesce(json_agg(json_build_object('id', a.id, 'kind', a.kind, 'balance_minor',
                      a.balance_minor + coalesce((SELECT sum(u.amount_minor) FROM ledger_unapplied_lines u WHERE u.account_id = a.id), 0)) ORDER BY a.id), '[]') FROM ledger_accounts a
              WHERE a.merchant_id = ${merchant} AND a.environment = ${environment} AND a.kind = ANY(${s.p(kinds, 'text[]')}))`;

/**
 * A select-list item: a merchant's eligible balance in one environment (available + held, unapplied lines
 * included), for a list of merchants; merchant and environment are the statement's SQL expressions.
 */
export const merchantBalanceItem = (merchant: string, environment: string) =>
  `(SELECT coalesce(-sum(a.balance_minor + coalesce((SELECT sum(l.amount_minor) FROM ledger_unapplied_lines l WHERE l.account_id = a.id), 0)), 0)::bigint
                 FROM ledger_accounts a WHERE a.merchant_id = ${merchant} AND a.environment = ${environment} AND a.kind IN ('merchant_available', 'merchant_held'))`;

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
 * serialise per account and never deadlock) and returns their balances as of the lock, unapplied lines
 * included (credits written since are only missing: a balance can look lower, never higher). NO KEY UPDATE: a payment credit's lines (their foreign keys take
 * KEY SHARE on the account) are written while a post holds the lock.
 */
export async function lockAccounts(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  kinds: readonly AccountKind[],
): Promise<AccountRow[]> {
  const rows = await tx.query<AccountRow>(
    `SELECT id, kind, balance_minor FROM ledger_accounts
      WHERE merchant_id = $1 AND environment = $2 AND kind = ANY($3::text[])
      ORDER BY id FOR NO KEY UPDATE`,
    [merchantId, environment, kinds],
    'ledger_lock_accounts',
  );
  if (rows.length === 0) return rows;
  // Read after the lock, in a statement of its own (a snapshot taken after the lock was granted): lines a
  // writer applied while this one waited are in the balance and no longer unapplied, never both.
  const unapplied = await unappliedSums(
    tx,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({ ...row, balance_minor: row.balance_minor + (unapplied.get(row.id) ?? 0) }));
}

/** What an entry is for: the object it records money of, by type and id. */
type EntryReference = Pick<EntryInput, 'referenceType' | 'referenceId'>;

const ENTRY_COLUMNS = 'id, merchant_id, environment, kind, reference_type, reference_id, reverses_entry_id';

/** The entries of these kinds for what `reference` names (a payment, payout, refund…), oldest first. */
export function findEntries(
  db: Queryable,
  reference: EntryReference,
  kinds: readonly EntryKind[],
): Promise<EntryRow[]> {
  return db.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM journal_entries WHERE reference_type = $1 AND reference_id = $2 AND kind = ANY($3::text[]) ORDER BY created_at, id`,
    [reference.referenceType, reference.referenceId, kinds],
  );
}

export async function findEntry(
  db: Queryable,
  referenceType: ReferenceType,
  referenceId: string,
  kind: EntryKind,
): Promise<EntryRow | null> {
  return (await findEntries(db, { referenceType, referenceId }, [kind]))[0] ?? null;
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

export interface NewLine {
  entryId: string;
  accountId: string;
  amountMinor: number;
}

/**
 * The CTEs that write entries, their lines and the cached balances (ledger_entry, ledger_line,
 * ledger_moved), for a statement that may write other modules' rows too. All entries are of one merchant
 * and environment. An entry already posted for the same event is skipped with its lines (ifPosted
 * 'skip': ON CONFLICT DO NOTHING, which also waits out a concurrent writer of it; compare
 * WRITTEN_COUNTS with what was asked) or fails the statement ('fail'). onlyIf, a condition on the
 * statement's other parts, writes nothing when false (e.g. the row the entries are for was not inserted). Balance moves are summed per
 * account, so one statement can post several entries on one account; the accounts are locked in id order
 * first (ledger_locked), the order lockAccounts locks in, so a writer that did not lock first cannot
 * deadlock with one that did.
 * Under that lock the accounts' unapplied lines (payment credits written by writePendingEntry) are applied
 * first, in the order they were written (ledger_applied): their balance transactions come before this
 * statement's own, so seq still follows the order the balance moved.
 * The merchant balance CHECK refuses a move below zero whatever the caller read (ledgerWriteError). The accounts are also named by id: the planner cannot
 * estimate the rows of unnest and would otherwise scan every account (measured: a hash join over all
 * ledger_accounts rows per post).
 */
export function entriesCtes(
  s: Statement,
  entries: readonly NewEntry[],
  lines: readonly NewLine[],
  options: { ifPosted?: 'skip' | 'fail'; onlyIf?: string } = {},
): string {
  const { ifPosted = 'skip', onlyIf = 'true' } = options;
  const first = entries[0];
  if (!first || entries.some((e) => e.merchantId !== first.merchantId || e.environment !== first.environment)) {
    throw new Error('ledger assertion failed: one statement writes entries of one merchant and environment');
  }
  const entryColumn = (value: (e: NewEntry) => unknown, cast: string) => s.p(entries.map(value), cast);
  const lineColumn = (value: (l: NewLine) => unknown, cast: string) => s.p(lines.map(value), cast);
  return `ledger_entry AS (
       INSERT INTO journal_entries (id, merchant_id, environment, kind, reference_type, reference_id, reverses_entry_id)
       SELECT given.id, ${s.p(first.merchantId, 'uuid')}, ${s.p(first.environment, 'text')}, given.kind, given.reference_type, given.reference_id, given.reverses_entry_id
         FROM unnest(${entryColumn((e) => e.id, 'uuid[]')}, ${entryColumn((e) => e.kind, 'text[]')}, ${entryColumn((e) => e.referenceType, 'text[]')},
                     ${entryColumn((e) => e.referenceId, 'text[]')}, ${entryColumn((e) => e.reversesEntryId, 'uuid[]')})
              AS given (id, kind, reference_type, reference_id, reverses_entry_id)
        WHERE ${onlyIf}
       ${ifPosted === 'skip' ? 'ON CONFLICT DO NOTHING' : ''}
       RETURNING id
     ), ledger_line AS (
       INSERT INTO journal_lines (entry_id, account_id, amount_minor)
       SELECT given.entry_id, given.account_id, given.amount_minor
         FROM unnest(${lineColumn((l) => l.entryId, 'uuid[]')}, ${lineColumn((l) => l.accountId, 'uuid[]')}, ${lineColumn((l) => l.amountMinor, 'bigint[]')})
              AS given (entry_id, account_id, amount_minor)
        WHERE given.entry_id IN (SELECT id FROM ledger_entry)
       RETURNING entry_id, account_id, amount_minor
     ), ${applyCtes(s, first.merchantId, first.environment, [...new Set(lines.map((l) => l.accountId))], { newLines: entries.map((e) => e.id) })}`;
}

/**
 * Locks accounts in id order (ledger_locked), applies their unapplied lines (ledger_applied), moves the
 * cached balances by those and by this statement's new lines (ledger_line, when newLines names the
 * statement's entries in order) and writes the available balance's movements (balance_transactions), each
 * with the balance after it. skipLocked: accounts another writer holds are left alone (the worker).
 */
function applyCtes(
  s: Statement,
  merchantId: string,
  environment: string,
  accountIds: readonly string[],
  options: { newLines?: readonly string[]; skipLocked?: boolean },
): string {
  const newLines = options.newLines ?? [];
  const book = `('merchant_available', 'merchant_pending')`;
  const given = s.p(accountIds, 'uuid[]');
  return `ledger_locked AS (
       -- The accounts locked in id order, as lockAccounts does, before the UPDATE touches any of them: the
       -- UPDATE alone locks in whatever order its join yields rows (a hash join: the table's physical
       -- order), which deadlocked with a payment locking the same accounts in id order. Available and
       -- pending are locked together whenever either is (issue 34): a balance transaction's balance after
       -- is their sum, so both must hold still while it is drawn.
       SELECT id, kind, balance_minor FROM ledger_accounts
        WHERE id IN (SELECT unnest(${given})
                     UNION
                     SELECT pair.id FROM ledger_accounts pair
                      WHERE pair.merchant_id = ${s.p(merchantId, 'uuid')} AND pair.environment = ${s.p(environment, 'text')} AND pair.kind IN ${book}
                        AND EXISTS (SELECT 1 FROM ledger_accounts x WHERE x.id = ANY(${given}) AND x.kind IN ${book}))
        ORDER BY id FOR NO KEY UPDATE${options.skipLocked ? ' SKIP LOCKED' : ''}
     ), ledger_applicable AS (
       -- With SKIP LOCKED one of the pair may be held by another writer: then neither's lines are applied here.
       SELECT id FROM ledger_locked
        WHERE kind NOT IN ${book} OR (SELECT count(*) FROM ledger_locked WHERE kind IN ${book}) = 2
     ), ledger_applied AS (
       DELETE FROM ledger_unapplied_lines pending WHERE pending.account_id IN (SELECT id FROM ledger_applicable)
       RETURNING pending.seq, pending.entry_id, pending.account_id, pending.amount_minor
     ), ledger_moves AS (
       SELECT 0 AS part, applied.seq AS ord, applied.entry_id, applied.account_id, applied.amount_minor FROM ledger_applied applied
       ${
         newLines.length
           ? `UNION ALL
       SELECT 1, entry.ord, line.entry_id, line.account_id, line.amount_minor
         FROM ledger_line line JOIN unnest(${s.p(newLines, 'uuid[]')}) WITH ORDINALITY AS entry (id, ord) ON entry.id = line.entry_id`
           : ''
       }
     ), ledger_moved AS (
       UPDATE ledger_accounts account SET balance_minor = account.balance_minor + moves.amount_minor
         FROM (SELECT account_id, sum(amount_minor)::bigint AS amount_minor FROM ledger_moves GROUP BY account_id) AS moves
        WHERE account.id = moves.account_id AND account.id IN (SELECT id FROM ledger_locked)
       RETURNING account.id, account.kind, account.balance_minor
     ), ledger_book AS (
       -- Each entry's movement of the merchant's balance (available + pending): a clearing moves none.
       SELECT move.part, min(move.ord) AS ord, move.entry_id, sum(move.amount_minor)::bigint AS amount_minor,
              bool_or(acc.kind = 'merchant_pending') AS pending
         FROM ledger_moves move JOIN ledger_locked acc ON acc.id = move.account_id AND acc.kind IN ${book}
        GROUP BY move.part, move.entry_id
       HAVING sum(move.amount_minor) <> 0
     ), ledger_book_total AS (
       -- Available + pending once this statement's moves are in (as locked, plus what moved).
       SELECT coalesce(sum(acc.balance_minor + coalesce((SELECT sum(m.amount_minor) FROM ledger_moves m WHERE m.account_id = acc.id), 0)), 0)::bigint AS after
         FROM ledger_locked acc WHERE acc.kind IN ${book}
     ), ledger_balance_moves AS (
       -- The balance's movements (balance_transactions), drawn after the UPDATE above locked the accounts,
       -- so seq follows the order the balance moved: the applied lines in the order they were written, then
       -- this statement's entries in the order given. The balance after each is the balance the UPDATE left
       -- less what later movements moved.
       INSERT INTO balance_transactions (entry_id, merchant_id, environment, net_minor, balance_after_minor, pending)
       SELECT book.entry_id, ${s.p(merchantId, 'uuid')}, ${s.p(environment, 'text')}, -book.amount_minor,
              -((SELECT after FROM ledger_book_total) - coalesce(sum(book.amount_minor) OVER (ORDER BY book.part DESC, book.ord DESC
                                                                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)),
              book.pending
         FROM ledger_book book
        ORDER BY book.part, book.ord
     )`;
}

/**
 * Applies a merchant's unapplied lines to its cached balances in a statement of its own (the worker,
 * and the books before they are read). skipLocked: accounts a writer holds are left for it. Returns the
 * lines applied.
 */
export async function applyUnappliedLines(
  db: Queryable,
  merchantId: string,
  environment: Environment,
  options: { skipLocked?: boolean } = {},
): Promise<number> {
  const ids = await db.query<{ id: string }>(
    `SELECT DISTINCT pending.account_id AS id FROM ledger_unapplied_lines pending JOIN ledger_accounts a ON a.id = pending.account_id
      WHERE a.merchant_id = $1 AND a.environment = $2`,
    [merchantId, environment],
    'ledger_unapplied_accounts',
  );
  if (ids.length === 0) return 0;
  const apply = new Statement();
  const rows = await db.query<{ applied: number }>(
    `WITH ${applyCtes(
      apply,
      merchantId,
      environment,
      ids.map((row) => row.id),
      { skipLocked: options.skipLocked },
    )}
     SELECT (SELECT count(*) FROM ledger_applied)::int AS applied`,
    apply.params,
  );
  return rows[0]?.applied ?? 0;
}

/** Merchants and environments with lines waiting to be applied (the worker's list). */
export function ownersWithUnappliedLines(db: Queryable, limit: number) {
  return db.query<{ merchant_id: string; environment: Environment }>(
    `SELECT DISTINCT a.merchant_id, a.environment
       FROM (SELECT DISTINCT account_id FROM ledger_unapplied_lines LIMIT $1) pending JOIN ledger_accounts a ON a.id = pending.account_id`,
    [limit],
  );
}

/**
 * A payment credit's entry and lines without touching the cached balances (no account lock: concurrent
 * payments to one merchant do not wait on each other); its lines wait in ledger_unapplied_lines. False,
 * having written nothing, when the entry was already posted.
 */
export async function writePendingEntry(tx: Queryable, entry: NewEntry, lines: readonly NewLine[]): Promise<boolean> {
  const rows = await tx.query<{ written: number }>(
    `WITH ledger_entry AS (
       INSERT INTO journal_entries (id, merchant_id, environment, kind, reference_type, reference_id, reverses_entry_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT DO NOTHING
       RETURNING id
     ), ledger_line AS (
       INSERT INTO journal_lines (entry_id, account_id, amount_minor)
       SELECT given.entry_id, given.account_id, given.amount_minor
         FROM unnest($8::uuid[], $9::uuid[], $10::bigint[]) AS given (entry_id, account_id, amount_minor)
        WHERE given.entry_id IN (SELECT id FROM ledger_entry)
       RETURNING entry_id, account_id, amount_minor
     ), ledger_pending AS (
       INSERT INTO ledger_unapplied_lines (entry_id, account_id, amount_minor)
       SELECT entry_id, account_id, amount_minor FROM ledger_line ORDER BY account_id
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM ledger_pending)::int AS written`,
    [
      entry.id,
      entry.merchantId,
      entry.environment,
      entry.kind,
      entry.referenceType,
      entry.referenceId,
      entry.reversesEntryId,
      lines.map((l) => l.entryId),
      lines.map((l) => l.accountId),
      lines.map((l) => l.amountMinor),
    ],
    'ledger_write_pending',
  );
  const written = rows[0]?.written ?? 0;
  if (written === 0) return false;
  if (written !== lines.length)
    throw new Error(`ledger assertion failed: wrote ${written} of ${lines.length} pending lines`);
  return true;
}

/** The unapplied sums of some accounts (read after they were locked: nobody else can apply them meanwhile). */
export async function unappliedSums(tx: Queryable, accountIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await tx.query<{ account_id: string; amount_minor: number }>(
    `SELECT account_id, sum(amount_minor)::bigint AS amount_minor FROM ledger_unapplied_lines WHERE account_id = ANY($1::uuid[]) GROUP BY account_id`,
    [accountIds],
    'ledger_unapplied_sums',
  );
  return new Map(rows.map((row) => [row.account_id, row.amount_minor]));
}

/** A merchant's account ids by kind (they never change once created; no lock). */
export function accountIds(
  db: Queryable,
  merchantId: string,
  environment: Environment,
): Promise<{ id: string; kind: AccountKind }[]> {
  return db.query<{ id: string; kind: AccountKind }>(
    'SELECT id, kind FROM ledger_accounts WHERE merchant_id = $1 AND environment = $2',
    [merchantId, environment],
    'ledger_account_ids',
  );
}

/** Select-list items that count what entriesCtes wrote. */
export const WRITTEN_COUNTS =
  '(SELECT count(*) FROM ledger_entry)::int AS ledger_entries, (SELECT count(*) FROM ledger_moved)::int AS ledger_accounts';

export interface WrittenCounts {
  ledger_entries: number;
  ledger_accounts: number;
}

/** A merchant balance going negative fails the CHECK in SQL: that is InsufficientFundsError (a backstop; services check funds first). */
export function ledgerWriteError(error: unknown): unknown {
  if (error instanceof DbError && error.violatesCheck(MERCHANT_BALANCE_CONSTRAINT)) {
    return new InsufficientFundsError();
  }
  return error;
}

/**
 * True when every entry was written with all its balance moves; false, having written nothing, when
 * none was (every one already posted). Anything in between is a bug.
 */
export function checkWritten(written: WrittenCounts, entries: readonly NewEntry[], lines: readonly NewLine[]): boolean {
  if (written.ledger_entries === 0) return false;
  const accounts = new Set(lines.map((line) => line.accountId)).size;
  // Accounts moved may be more than the lines name: a locked account's waiting credits are applied too.
  if (written.ledger_entries !== entries.length || written.ledger_accounts < accounts) {
    throw new Error(
      `ledger assertion failed: wrote ${written.ledger_entries} of ${entries.length} entries moving ${written.ledger_accounts} of ${accounts} balances`,
    );
  }
  return true;
}

/**
 * Writes entries, their lines and the cached balances in one statement of their own. Returns false,
 * having written nothing and left the transaction usable, when they were already posted.
 * A merchant balance going negative becomes InsufficientFundsError (the transaction is then aborted
 * on PostgreSQL; services check funds first so this is only a backstop).
 */
export async function writeEntries(
  tx: Queryable,
  entries: readonly NewEntry[],
  lines: readonly NewLine[],
): Promise<boolean> {
  const s = new Statement();
  const sql = `WITH ${entriesCtes(s, entries, lines)} SELECT ${WRITTEN_COUNTS}`;
  let rows: WrittenCounts[];
  try {
    rows = await tx.query<WrittenCounts>(sql, s.params, 'ledger_write');
  } catch (error) {
    throw ledgerWriteError(error);
  }
  return checkWritten(rows[0]!, entries, lines);
}

/** Sums of a merchant's accounts in one environment, unapplied lines included (accounts not yet created are absent). */
export async function accountSums(
  db: Queryable,
  merchantId: string,
  environment: Environment,
): Promise<Map<AccountKind, number>> {
  const rows = await db.query<{ kind: AccountKind; balance_minor: number }>(
    `SELECT a.kind, (a.balance_minor + coalesce((SELECT sum(u.amount_minor) FROM ledger_unapplied_lines u WHERE u.account_id = a.id), 0))::bigint AS balance_minor
       FROM ledger_accounts a WHERE a.merchant_id = $1 AND a.environment = $2`,
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
    `SELECT a.id, a.kind, a.balance_minor + coalesce(u.minor, 0) AS balance_minor, coalesce(sum(l.amount_minor), 0)::bigint AS lines_minor
       FROM ledger_accounts a LEFT JOIN journal_lines l ON l.account_id = a.id
       LEFT JOIN LATERAL (SELECT sum(amount_minor) AS minor FROM ledger_unapplied_lines WHERE account_id = a.id) u ON true
      WHERE ($1::uuid IS NULL OR a.merchant_id = $1)
      GROUP BY a.id, a.kind, a.balance_minor, u.minor
     HAVING a.balance_minor + coalesce(u.minor, 0) <> coalesce(sum(l.amount_minor), 0)`,
    [merchantId],
  );
}

export function negativeMerchantAccounts(db: Queryable, merchantId: string | null) {
  return db.query<{ id: string; kind: string; balance_minor: number }>(
    `SELECT id, kind, balance_minor FROM ledger_accounts
      WHERE kind IN ('merchant_available', 'merchant_held', 'merchant_pending', 'merchant_reserved') AND balance_minor > 0 AND ($1::uuid IS NULL OR merchant_id = $1)`,
    [merchantId],
  );
}

/** Unapplied lines that are not a copy of a journal line (entry, account and amount), or of another merchant's account. */
export function strayUnappliedLines(db: Queryable, merchantId: string | null) {
  return db.query<{ entry_id: string; account_id: string }>(
    `SELECT u.entry_id, u.account_id
       FROM ledger_unapplied_lines u
       LEFT JOIN journal_lines l ON l.entry_id = u.entry_id AND l.account_id = u.account_id AND l.amount_minor = u.amount_minor
       LEFT JOIN ledger_accounts a ON a.id = u.account_id
      WHERE (l.entry_id IS NULL OR a.id IS NULL) AND ($1::uuid IS NULL OR a.merchant_id = $1 OR a.id IS NULL)`,
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
  ('payment_reversal', ARRAY['payment_credit'], ARRAY['provider_clearing', 'fee_revenue']),
  ('payment_cleared', ARRAY['payment_credit'], ARRAY[]::text[]),
  ('reserve_hold', ARRAY['payment_credit'], ARRAY[]::text[]),
  ('reserve_release', ARRAY['payment_credit'], ARRAY[]::text[]),
  ('payout_void', ARRAY['payout_hold'], NULL::text[]),
  ('payout_post', ARRAY['payout_hold'], ARRAY['merchant_held']),
  ('payout_return', ARRAY['payout_post', 'payout_paid'], ARRAY['payout_clearing', 'fee_revenue']),
  ('refund_void', ARRAY['refund_hold'], NULL::text[]),
  ('refund_post', ARRAY['refund_hold'], ARRAY['merchant_held'])
) AS rule (kind, target_kinds, accounts)`;

/** Follow-up entries that do not point at the right entry of the same event. */
export function misdirectedFollowUps(db: Queryable, merchantId: string | null) {
  return db.query<{ id: string; kind: string; target_kind: string }>(
    `SELECT e.id, e.kind, array_to_string(rule.target_kinds, ' or ') AS target_kind
       FROM journal_entries e JOIN ${FOLLOW_UP_RULES} ON rule.kind = e.kind
       LEFT JOIN journal_entries t ON t.id = e.reverses_entry_id
      WHERE ($1::uuid IS NULL OR e.merchant_id = $1)
        AND (t.id IS NULL OR NOT (t.kind = ANY(rule.target_kinds)) OR t.merchant_id <> e.merchant_id OR t.environment <> e.environment
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

/**
 * Merchants' balances (available + pending, issue 34) whose balance transactions do not add up: the sum of
 * their movements, or the balance after the last one, differs from the two accounts' applied balances, or an
 * applied entry that moved the balance has no row (waiting lines get theirs when applied).
 */
export function unbookedBalances(db: Queryable, merchantId: string | null) {
  return db.query<{
    id: string;
    balance_minor: number;
    moved_minor: number;
    last_after_minor: number | null;
    rows: number;
    lines: number;
    unapplied: number;
  }>(
    `WITH book AS (
       SELECT a.merchant_id, a.environment, min(a.id::text) AS id, -sum(a.balance_minor)::bigint AS balance_minor
         FROM ledger_accounts a
        WHERE a.kind IN ('merchant_available', 'merchant_pending') AND ($1::uuid IS NULL OR a.merchant_id = $1)
        GROUP BY a.merchant_id, a.environment
     ), moved_entries AS (
       SELECT e.merchant_id, e.environment, e.id
         FROM journal_entries e JOIN journal_lines l ON l.entry_id = e.id
         JOIN ledger_accounts a ON a.id = l.account_id AND a.kind IN ('merchant_available', 'merchant_pending')
        WHERE ($1::uuid IS NULL OR e.merchant_id = $1)
          AND NOT EXISTS (SELECT 1 FROM ledger_unapplied_lines u WHERE u.entry_id = l.entry_id AND u.account_id = l.account_id)
        GROUP BY e.merchant_id, e.environment, e.id
       HAVING sum(l.amount_minor) <> 0
     )
     SELECT book.id, book.balance_minor, coalesce(t.moved, 0)::bigint AS moved_minor, t.last_after AS last_after_minor,
            coalesce(t.rows, 0)::int AS rows,
            (SELECT count(*) FROM moved_entries m WHERE m.merchant_id = book.merchant_id AND m.environment = book.environment)::int AS lines,
            0 AS unapplied
       FROM book
       LEFT JOIN LATERAL (SELECT sum(net_minor) AS moved, count(*) AS rows,
                                 (SELECT balance_after_minor FROM balance_transactions b2 WHERE b2.merchant_id = book.merchant_id AND b2.environment = book.environment ORDER BY seq DESC LIMIT 1) AS last_after
                            FROM balance_transactions b WHERE b.merchant_id = book.merchant_id AND b.environment = book.environment) t ON true
      WHERE coalesce(t.moved, 0) <> book.balance_minor OR coalesce(t.last_after, 0) <> book.balance_minor
         OR coalesce(t.rows, 0) <> (SELECT count(*) FROM moved_entries m WHERE m.merchant_id = book.merchant_id AND m.environment = book.environment)`,
    [merchantId],
  );
}

/**
 * Payment credits that book more than the payment brought in (issue 30): the provider_clearing debit of a
 * payment_credit (what the credit says was received) above what the attempt records as received (its
 * amount_received_minor when an operator found another amount, else the amount charged), or a merchant
 * credit above it. Credits of ids that are no attempt (the ledger's own tests) are not payments of checkout.
 */
export function overCreditedPayments(db: Queryable, merchantId: string | null) {
  return db.query<{
    entry_id: string;
    payment_id: string;
    booked_minor: number;
    credited_minor: number;
    received_minor: number;
  }>(
    `SELECT e.id AS entry_id, e.reference_id AS payment_id,
            coalesce(sum(l.amount_minor) FILTER (WHERE a.kind = 'provider_clearing'), 0)::bigint AS booked_minor,
            coalesce(-sum(l.amount_minor) FILTER (WHERE a.kind IN ('merchant_available', 'merchant_pending')), 0)::bigint AS credited_minor,
            coalesce(p.amount_received_minor, p.amount_charged_minor) AS received_minor
       FROM journal_entries e
       JOIN journal_lines l ON l.entry_id = e.id JOIN ledger_accounts a ON a.id = l.account_id
       JOIN payment_attempts p ON p.id = e.reference_id
      WHERE e.kind = 'payment_credit' AND ($1::uuid IS NULL OR e.merchant_id = $1)
      GROUP BY e.id, e.reference_id, p.amount_received_minor, p.amount_charged_minor
     HAVING coalesce(sum(l.amount_minor) FILTER (WHERE a.kind = 'provider_clearing'), 0) > coalesce(p.amount_received_minor, p.amount_charged_minor)
         OR coalesce(-sum(l.amount_minor) FILTER (WHERE a.kind IN ('merchant_available', 'merchant_pending')), 0) > coalesce(p.amount_received_minor, p.amount_charged_minor)`,
    [merchantId],
  );
}
