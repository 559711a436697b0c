// The dashboard Refunds page's reads (issue 36): the filter of its query (the search fragment read as ids, an
// amount and an invoice reference; Accra days as instants), one keyset page of it, and every row of it for the
// CSV export, newest first as the page shows them.
import type { Queryable } from '../db/index.ts';
import { keysetPages } from '../db/keyset-pages.ts';
import { accraDayRange } from '../lib/accra-calendar.ts';
import { parseCedis } from '../lib/ghana.ts';
import { REFUND_STATUSES, type RefundRow } from './model.ts';
import { searchRefundList, type RefundListFilter } from './refund-list-store.ts';
import { findRefund } from './store.ts';

/** Rows on one page of the Refunds list. */
export const REFUNDS_PAGE_ROWS = 25;
/** Rows read a page at a time by the CSV export (memory stays one page, whatever it holds). */
export const REFUNDS_EXPORT_PAGE_ROWS = 500;
/** The longest search fragment read. */
export const REFUND_SEARCH_LENGTH_MAX = 100;

export type { RefundListFilter };

/** The Refunds page's query as its GET form sends it (every field optional; empty means "any"). */
export interface RefundsQuery {
  q?: string;
  status?: string;
  /** Accra days, YYYY-MM-DD: created on or after `from`, on or before `to`. */
  from?: string;
  to?: string;
}

/** The search fragment: trimmed, at most REFUND_SEARCH_LENGTH_MAX characters, or null when empty. */
export const cleanRefundFragment = (q: string | undefined): string | null =>
  q?.trim().slice(0, REFUND_SEARCH_LENGTH_MAX) || null;

/** The store's filter of a query: the fragment as text and amount, the Accra days as instants, empty choices left out. */
export function refundsFilter(
  owner: { merchantId: string; environment: string },
  query: RefundsQuery,
): RefundListFilter {
  const text = cleanRefundFragment(query.q);
  return {
    ...owner,
    text,
    amountMinor: text ? parseCedis(text.replace(/^GHS\s*/i, '')) : null,
    status: (REFUND_STATUSES as readonly string[]).includes(query.status ?? '') ? query.status : undefined,
    ...accraDayRange(query.from, query.to),
  };
}

/** One page of the filter's refunds after `afterId`, and the refund the next page starts after (null on the last). */
export async function refundsPage(
  db: Queryable,
  filter: RefundListFilter,
  afterId: string | null,
): Promise<{ rows: RefundRow[]; next: string | null }> {
  const rows = await searchRefundList(db, filter, afterId, REFUNDS_PAGE_ROWS + 1);
  if (rows.length <= REFUNDS_PAGE_ROWS) return { rows, next: null };
  rows.length = REFUNDS_PAGE_ROWS;
  return { rows, next: rows.at(-1)!.id };
}

/** Every refund of the filter, newest first as the page shows them, read in keyset pages (the CSV export). */
export const refundsExportRows = (db: Queryable, filter: RefundListFilter): AsyncIterable<RefundRow> =>
  keysetPages(
    REFUNDS_EXPORT_PAGE_ROWS,
    (after) => searchRefundList(db, filter, after?.id ?? null, REFUNDS_EXPORT_PAGE_ROWS),
    (refund) => ({ createdAt: refund.created_at, id: refund.id }),
  );

/** True when the refund is the merchant's in that environment (a page's cursor naming another's is not found). */
export const ownsRefund = async (db: Queryable, merchantId: string, environment: string, id: string) =>
  (await findRefund(db, merchantId, environment, id)) !== null;
