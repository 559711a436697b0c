// The Payments page's reads (issue 36): the filter of its query (the search read by session-search.ts, Accra days
// as instants), one keyset page of it, and every row of it for the CSV export, newest first as the page shows them.
import type { Queryable } from '../db/index.ts';
import { keysetPages } from '../db/keyset-pages.ts';
import { accraDayRange } from '../lib/accra-calendar.ts';
import { interpretFragment } from './session-search.ts';
import {
  listLinkChoices,
  searchPayments,
  sessionIsOwned,
  type PaymentsFilter,
  type PaymentsRow,
} from './session-search-store.ts';

/** Rows on one page of the Payments list. */
export const PAYMENTS_PAGE_ROWS = 25;
/** Rows read a page at a time by the CSV export (memory stays one page, whatever it holds). */
export const PAYMENTS_EXPORT_PAGE_ROWS = 500;
/** Payment links offered by the filter, newest first. */
export const LINK_CHOICES_MAX = 200;

export type { PaymentsRow };

/** The Payments page's query as its GET form sends it (every field optional; empty means "any"). */
export interface PaymentsQuery {
  q?: string;
  status?: string;
  rail?: string;
  network?: string;
  link?: string;
  /** Accra days, YYYY-MM-DD: created on or after `from`, on or before `to`. */
  from?: string;
  to?: string;
}

/** The store's filter of a query: the search read, the Accra days as instants, empty choices left out. */
export function paymentsFilter(
  owner: { merchantId: string; environment: string },
  query: PaymentsQuery,
): PaymentsFilter {
  return {
    ...owner,
    terms: interpretFragment(query.q),
    status: query.status || undefined,
    rail: query.rail || undefined,
    network: query.network || undefined,
    paymentLinkId: query.link || undefined,
    ...accraDayRange(query.from, query.to),
  };
}

/** One page of the filter's rows after the session `afterId`, and the session the next page starts after (null on the last). */
export async function paymentsPage(
  db: Queryable,
  filter: PaymentsFilter,
  afterId: string | null,
): Promise<{ rows: PaymentsRow[]; next: string | null }> {
  const rows = await searchPayments(db, filter, afterId, PAYMENTS_PAGE_ROWS + 1);
  if (rows.length <= PAYMENTS_PAGE_ROWS) return { rows, next: null };
  rows.length = PAYMENTS_PAGE_ROWS;
  return { rows, next: rows.at(-1)!.session.id };
}

/** Every row of the filter, newest first as the page shows them, read in keyset pages (the CSV export). */
export const paymentsExportRows = (db: Queryable, filter: PaymentsFilter): AsyncIterable<PaymentsRow> =>
  keysetPages(
    PAYMENTS_EXPORT_PAGE_ROWS,
    (after) => searchPayments(db, filter, after?.id ?? null, PAYMENTS_EXPORT_PAGE_ROWS),
    ({ session }) => ({ createdAt: session.created_at, id: session.id }),
  );

/** The merchant's payment links for the filter's select. */
export const paymentLinkChoices = (db: Queryable, merchantId: string, environment: string) =>
  listLinkChoices(db, merchantId, environment, LINK_CHOICES_MAX);

/** True when the session is the merchant's in that environment (a page cursor naming another's is not found). */
export const ownsSession = sessionIsOwned;
