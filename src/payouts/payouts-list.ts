// The Payouts page's reads (issue 36, item 3): the filter of its query (the search read by payout-search.ts, Accra
// days as instants), one keyset page of it, and every row of it for the CSV export, newest first as the page shows
// them, with the columns an accountant reads (the account masked as the page shows it).
import type { Queryable } from '../db/index.ts';
import { keysetPages } from '../db/keyset-pages.ts';
import { accraDayRange } from '../lib/accra-calendar.ts';
import { csvColumn as col, type CsvColumn } from '../lib/csv-columns.ts';
import type { Environment } from '../lib/environment.ts';
import { maskAccountNumber } from './model.ts';
import { interpretPayoutFragment } from './payout-search.ts';
import { payoutIsOwned, searchPayouts, type PayoutListRow, type PayoutsFilter } from './payout-search-store.ts';

/** Rows on one page of the Payouts list. */
export const PAYOUTS_PAGE_ROWS = 25;
/** Rows read a page at a time by the CSV export (memory stays one page, whatever it holds). */
export const PAYOUTS_EXPORT_PAGE_ROWS = 500;

export type { PayoutListRow, PayoutsFilter };

/** The Payouts page's query as its GET form sends it (every field optional; empty means "any"). */
export interface PayoutsQuery {
  q?: string;
  status?: string;
  /** The recipient's account type: bank or momo. */
  method?: string;
  /** manual or settlement (issue 34). */
  type?: string;
  /** Accra days, YYYY-MM-DD: created on or after `from`, on or before `to`. */
  from?: string;
  to?: string;
}

/** The store's filter of a query: the search read, the Accra days as instants, empty choices left out. */
export function payoutsFilter(
  owner: { merchantId: string; environment: Environment },
  query: PayoutsQuery,
): PayoutsFilter {
  return {
    ...owner,
    terms: interpretPayoutFragment(query.q),
    status: query.status || undefined,
    method: query.method || undefined,
    type: query.type || undefined,
    ...accraDayRange(query.from, query.to),
  };
}

/** One page of the filter's rows after the payout `afterId`, and the payout the next page starts after (null on the last). */
export async function payoutsPage(
  db: Queryable,
  filter: PayoutsFilter,
  afterId: string | null,
): Promise<{ rows: PayoutListRow[]; next: string | null }> {
  const rows = await searchPayouts(db, filter, afterId, PAYOUTS_PAGE_ROWS + 1);
  if (rows.length <= PAYOUTS_PAGE_ROWS) return { rows, next: null };
  rows.length = PAYOUTS_PAGE_ROWS;
  return { rows, next: rows.at(-1)!.id };
}

/** Every row of the filter, newest first as the page shows them, read in keyset pages (the CSV export). */
export const payoutsExportRows = (db: Queryable, filter: PayoutsFilter): AsyncIterable<PayoutListRow> =>
  keysetPages(
    PAYOUTS_EXPORT_PAGE_ROWS,
    (after) => searchPayouts(db, filter, after?.id ?? null, PAYOUTS_EXPORT_PAGE_ROWS),
    (row) => ({ createdAt: row.created_at, id: row.id }),
  );

/** True when the payout is the merchant's in that environment (a page cursor naming another's is not found). */
export const ownsPayout = payoutIsOwned;

/** How a payout is sent: "Bank transfer" or the wallet's network ("MTN MoMo"). */
export const payoutMethodLabel = (row: Pick<PayoutListRow, 'recipient_account_type' | 'recipient_network'>): string =>
  row.recipient_account_type === 'bank'
    ? 'Bank transfer'
    : `${(row.recipient_network ?? 'Mobile').toUpperCase()} Mobile Money`;

/** The account a payout goes to, masked to its last four digits (the search takes them): the bank's name and the account, or the wallet's number as dialled (0…). */
export const maskedPayoutAccount = (
  row: Pick<
    PayoutListRow,
    'recipient_account_type' | 'recipient_bank_name' | 'recipient_account_number' | 'recipient_phone'
  >,
): string =>
  row.recipient_account_type === 'bank'
    ? `${row.recipient_bank_name ?? 'Bank'} ${maskAccountNumber(row.recipient_account_number ?? '')}`
    : maskAccountNumber(row.recipient_phone ? `0${row.recipient_phone.slice(-9)}` : '');

/** The Payouts page's export: what an accountant reconciles a statement with, in the page's order. */
export const PAYOUT_LIST_CSV_COLUMNS: CsvColumn<PayoutListRow>[] = [
  col.text('id', (row) => row.id),
  col.timestamp('created_at', (row) => row.created_at),
  col.text('reference', (row) => row.reference),
  col.text('recipient', (row) => row.recipient_name),
  col.text('method', (row) => row.recipient_account_type),
  col.text('network', (row) => row.recipient_network),
  col.text('account', maskedPayoutAccount),
  col.integer('amount_minor', (row) => Number(row.amount_minor)),
  col.ghs('amount_ghs', (row) => Number(row.amount_minor)),
  col.integer('fee_minor', (row) => Number(row.fee_minor)),
  col.ghs('fee_ghs', (row) => Number(row.fee_minor)),
  col.ghs('total_debit_ghs', (row) => Number(row.total_debit_minor)),
  col.text('currency', (row) => row.currency),
  col.text('status', (row) => row.status),
  col.text('client_reference', (row) => row.client_reference),
  col.text('bank_reference', (row) => row.bank_reference),
  col.timestamp('paid_at', (row) => row.paid_at),
  col.text('type', (row) => row.type ?? 'manual'),
];
