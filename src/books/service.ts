// The merchant's books (issue 17): the balance transactions list (GET /api/v1/balance/transactions), its
// export, and the daily settlement summary (GET /api/v1/balance/summary). Reads only.
import type { ApiPrincipal, Environment } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { errors } from '../lib/errors.ts';
import { ownedRow } from '../db/owned-row.ts';
import { createdRange } from '../lib/list-paging.ts';
import { applyPendingCredits } from '../ledger/service.ts';
import {
  BALANCE_TRANSACTION_LIMIT_DEFAULT,
  BOOKS_TIME_ZONE,
  chainPeriods,
  EXPORT_PAGE_ROWS,
  entryIdOf,
  kindsOfType,
  parseDayRange,
  toBalanceTransaction,
  type BalanceTransactionRow,
  type BalanceTransactionType,
  type DayRange,
  type SummaryPeriod,
} from './model.ts';
import * as store from './store.ts';

export interface BalanceTransactionListQuery {
  limit?: number;
  starting_after?: string;
  type?: BalanceTransactionType;
  created_gte?: string;
  created_lt?: string;
  /** Issue 34: the balance transactions this settlement paid out, oldest first (a manual payout's: none). */
  payout_id?: string;
}

/** The merchant and environment whose books are read (an API key's, or a dashboard session's). */
export interface BooksOwner {
  merchantId: string;
  environment: Environment;
}

export const ownerOf = (principal: ApiPrincipal): BooksOwner => ({
  merchantId: principal.merchantId,
  environment: principal.environment,
});

/** The payout, the owner's in its environment, else 404 (another merchant's or environment's looks missing). */
async function ownPayout(db: Queryable, owner: BooksOwner, payoutId: string) {
  const payout = await ownedRow(store.findPayoutOwner(db, payoutId), owner.merchantId, owner.environment);
  if (!payout) throw errors.notFound('Payout');
  return payout;
}

/**
 * One page of the merchant's balance transactions, newest first (the order the balance moved, reversed); with
 * payout_id, the ones that settlement paid out, oldest first (their net_minor add up to its amount_minor).
 */
export async function listBalanceTransactions(db: Queryable, owner: BooksOwner, query: BalanceTransactionListQuery) {
  await applyPendingCredits(db, owner.merchantId, owner.environment);
  const limit = query.limit ?? BALANCE_TRANSACTION_LIMIT_DEFAULT;
  if (query.payout_id !== undefined) await ownPayout(db, owner, query.payout_id);
  const order = query.payout_id === undefined ? 'newest' : 'oldest';
  let afterSeq: number | undefined;
  if (query.starting_after !== undefined) {
    const entryId = entryIdOf(query.starting_after);
    const seq = entryId ? await store.findSeq(db, owner.merchantId, owner.environment, entryId) : null;
    if (seq === null) {
      throw errors.invalidArgument(
        'starting_after must be the id of a balance transaction of this key (the last id of the previous page).',
        [{ field: 'starting_after', message: 'is not a balance transaction of this merchant and environment' }],
      );
    }
    afterSeq = seq;
  }
  const rows = await store.searchBalanceTransactions(
    db,
    {
      ...owner,
      kinds: query.type ? kindsOfType(query.type) : undefined,
      ...createdRange(query),
      payoutId: query.payout_id,
      afterSeq,
      order,
    },
    limit + 1,
  );
  return {
    object: 'list' as const,
    data: rows.slice(0, limit).map(toBalanceTransaction),
    has_more: rows.length > limit,
  };
}

/**
 * The movements created in [from, before), oldest first, read in keyset pages of EXPORT_PAGE_ROWS: the range
 * is fixed to the seqs it held when this was called, so rows posted while the file streams are not in it.
 */
export async function balanceTransactionsBetween(
  db: Queryable,
  owner: BooksOwner,
  from: Date,
  before: Date,
  type?: BalanceTransactionType,
): Promise<AsyncIterable<BalanceTransactionRow>> {
  await applyPendingCredits(db, owner.merchantId, owner.environment);
  const range = await store.seqRange(db, owner.merchantId, owner.environment, from, before);
  const kinds = type ? kindsOfType(type) : undefined;
  if (!range) return rowsOfNone();
  return keysetRows(db, { ...owner, kinds, maxSeq: range.last }, range.first - 1);
}

async function* rowsOfNone(): AsyncIterable<BalanceTransactionRow> {}

/** Rows of a search read oldest first in keyset pages of EXPORT_PAGE_ROWS, from afterSeq on (constant memory). */
function keysetRows(
  db: Queryable,
  search: Omit<store.BalanceTransactionSearch, 'afterSeq' | 'order'>,
  afterSeq: number,
): AsyncIterable<BalanceTransactionRow> {
  return {
    async *[Symbol.asyncIterator]() {
      let after = afterSeq;
      for (;;) {
        const rows = await store.searchBalanceTransactions(
          db,
          { ...search, afterSeq: after, order: 'oldest' },
          EXPORT_PAGE_ROWS,
        );
        yield* rows;
        if (rows.length < EXPORT_PAGE_ROWS) return;
        after = rows.at(-1)!.seq;
      }
    },
  };
}

/**
 * Every balance transaction a settlement paid out, oldest first, read in keyset pages (a CSV file's rows):
 * the payout is checked first (404 when not the owner's), so a refusal comes before any row.
 */
export async function settlementTransactions(
  db: Queryable,
  owner: BooksOwner,
  payoutId: string,
): Promise<AsyncIterable<BalanceTransactionRow>> {
  await ownPayout(db, owner, payoutId);
  return keysetRows(db, { ...owner, payoutId }, -1);
}

/** How many balance transactions a settlement paid out, and their amounts, fees and nets summed (404 when not the owner's). */
export async function settlementTotals(db: Queryable, owner: BooksOwner, payoutId: string) {
  await ownPayout(db, owner, payoutId);
  return store.settlementTotals(db, owner.merchantId, owner.environment, payoutId);
}

/**
 * The available balance over consecutive periods (bounds[i] to bounds[i + 1]): each one's opening (the
 * balance just before it), movements by type, fees, net and closing. Closings chain into the next openings.
 */
export async function summariseBetween(
  db: Queryable,
  owner: BooksOwner,
  bounds: readonly Date[],
): Promise<SummaryPeriod[]> {
  if (bounds.length < 2) throw new Error('books assertion failed: a summary needs at least one period');
  await applyPendingCredits(db, owner.merchantId, owner.environment);
  const [opening, totals] = await Promise.all([
    store.balanceBefore(db, owner.merchantId, owner.environment, bounds[0]!),
    store.periodTotals(db, owner.merchantId, owner.environment, bounds),
  ]);
  return chainPeriods(opening, bounds.length - 1, totals);
}

/** The daily settlement summary of Accra days from..to. */
export async function settlementSummary(db: Queryable, owner: BooksOwner, query: { from?: string; to?: string }) {
  const range: DayRange = parseDayRange(query.from, query.to);
  const periods = await summariseBetween(db, owner, range.bounds);
  return {
    object: 'balance_summary' as const,
    environment: owner.environment,
    currency: 'GHS' as const,
    from: range.from,
    to: range.to,
    time_zone: BOOKS_TIME_ZONE,
    days: periods.map((period, i) => ({ day: range.days[i]!, ...period })),
  };
}
export type SettlementSummary = Awaited<ReturnType<typeof settlementSummary>>;
