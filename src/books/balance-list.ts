// The dashboard's Balance page (issue 36): the merchant's balance transactions in one environment, newest first
// (the order the balance moved, reversed) in keyset pages on seq, narrowed by type, a created range (Accra days)
// and a search that is a transaction id (txn_…) or a source's id (a session, attempt, payout or refund); and
// every row of the same filter for the CSV export, newest first as the page shows them, in keyset pages.
import type { Queryable } from '../db/index.ts';
import { applyPendingCredits } from '../ledger/service.ts';
import { accraDayRange } from '../lib/accra-calendar.ts';
import {
  BALANCE_TRANSACTION_TYPES,
  entryIdOf,
  kindsOfType,
  type BalanceTransactionRow,
  type BalanceTransactionType,
} from './model.ts';
import type { BooksOwner } from './service.ts';
import * as store from './store.ts';

/** Rows on one page of the Balance list. */
export const BALANCE_PAGE_ROWS = 25;
/** Rows read a page at a time by the CSV export (memory stays one page, whatever it holds). */
export const BALANCE_EXPORT_PAGE_ROWS = 500;
/** The longest search fragment read (an id). */
export const BALANCE_SEARCH_LENGTH_MAX = 100;

/** The Balance page's query as its GET form sends it (every field optional; empty means "any"). */
export interface BalanceQuery {
  q?: string;
  type?: string;
  /** Accra days, YYYY-MM-DD: created on or after `from`, on or before `to`. */
  from?: string;
  to?: string;
}

/** The store's search of a query, without its keyset and order. */
export type BalanceFilter = Omit<store.BalanceTransactionSearch, 'afterSeq' | 'maxSeq' | 'order'> & BooksOwner;

/** The search fragment: trimmed, at most BALANCE_SEARCH_LENGTH_MAX characters, or null when empty. */
export const cleanBalanceFragment = (q: string | undefined): string | null =>
  q?.trim().slice(0, BALANCE_SEARCH_LENGTH_MAX) || null;

/**
 * The filter of a query: a txn_ id read as its journal entry (one that is not a well-formed id finds nothing),
 * any other fragment as a source's id; the type as its entry kinds; the Accra days as instants.
 */
export function balanceFilter(owner: BooksOwner, query: BalanceQuery): BalanceFilter {
  const q = cleanBalanceFragment(query.q);
  const type = (BALANCE_TRANSACTION_TYPES as readonly string[]).includes(query.type ?? '')
    ? (query.type as BalanceTransactionType)
    : undefined;
  const search: BalanceFilter = {
    ...owner,
    kinds: type ? kindsOfType(type) : undefined,
    ...accraDayRange(query.from, query.to),
  };
  if (q && /^txn_/i.test(q)) {
    const entryId = entryIdOf(q.toLowerCase());
    // A txn_ fragment that is no transaction's id matches no source either (source ids never start with txn_).
    return entryId ? { ...search, entryId } : { ...search, sourceId: q };
  }
  return q ? { ...search, sourceId: q } : search;
}

/** The seq of the transaction an `after` cursor names, when it is the owner's; null otherwise (not found). */
export async function positionOf(db: Queryable, owner: BooksOwner, transactionId: string): Promise<number | null> {
  const entryId = entryIdOf(transactionId);
  return entryId ? store.findSeq(db, owner.merchantId, owner.environment, entryId) : null;
}

/** One page of the filter's movements after the seq `afterSeq`, and the seq the next page starts after (null on the last). */
export async function balancePage(
  db: Queryable,
  filter: BalanceFilter,
  afterSeq: number | null,
): Promise<{ rows: BalanceTransactionRow[]; next: BalanceTransactionRow | null }> {
  await applyPendingCredits(db, filter.merchantId, filter.environment);
  const rows = await store.searchBalanceTransactions(
    db,
    { ...filter, afterSeq: afterSeq ?? undefined, order: 'newest' },
    BALANCE_PAGE_ROWS + 1,
  );
  if (rows.length <= BALANCE_PAGE_ROWS) return { rows, next: null };
  rows.length = BALANCE_PAGE_ROWS;
  return { rows, next: rows.at(-1)! };
}

/** Every movement of the filter, newest first as the page shows them, read in keyset pages on seq (the CSV export). */
export function balanceExportRows(db: Queryable, filter: BalanceFilter): AsyncIterable<BalanceTransactionRow> {
  return {
    async *[Symbol.asyncIterator]() {
      await applyPendingCredits(db, filter.merchantId, filter.environment);
      let afterSeq: number | undefined;
      for (;;) {
        const rows = await store.searchBalanceTransactions(
          db,
          { ...filter, afterSeq, order: 'newest' },
          BALANCE_EXPORT_PAGE_ROWS,
        );
        yield* rows;
        if (rows.length < BALANCE_EXPORT_PAGE_ROWS) return;
        afterSeq = rows.at(-1)!.seq;
      }
    },
  };
}
