// Finding a refund Paystack may hold when we do not know its id: the answer to POST /refund was lost, and
// Paystack's refunds carry no reference of ours. GET /refund lists refunds newest first, paged by `perPage` and
// `page`, bounded by `from` and `to` (date-times) [OAS GET /refund "List Refunds": perPage (default 50), page,
// from, to]; each row names its charge (`transaction_reference`), `amount`, `currency`, `status`,
// `merchant_note` and `createdAt` [OAS RefundListResponseArray]. Integrators also pass `transaction` and
// `currency` (https://rdrr.io/github/ebinabo/paystack/man/list_refunds.html [2nd]; whether `transaction` takes
// the charge's id or its reference is not settled), so they are not relied on: we filter the window ourselves.
import { field, text } from '../provider-http.ts';
import type { RefundForRail } from '../refunds.ts';
import { ProviderRefusedError } from '../types.ts';
import { amountOf, type PaystackClient } from './client.ts';

/** Rows asked for per page: the spec's default [OAS GET /refund perPage]. */
export const REFUND_LIST_PER_PAGE = 50;
/** Pages read before giving up rather than answer "none" (2,500 refunds in the window). */
export const REFUND_LIST_PAGES_MAX = 50;
/** How far Paystack's clock may be from ours: the window opens this long before our refund was recorded. */
export const REFUND_CLOCK_SKEW_MS = 5 * 60_000;

/** The mark Sika leaves in merchant_note (the merchant's own note, never shown to the payer) [OAS RefundCreate]. */
const MARK_PREFIX = 'sika:';
export const refundMark = (refundId: string): string => `${MARK_PREFIX}${refundId}`;
const markOf = (note: string | null): string | null => {
  const match = note ? /sika:(\S+)/.exec(note) : null;
  return match ? `${MARK_PREFIX}${match[1]}` : null;
};

/** The charge a refund row names: `transaction_reference` in lists [OAS], `transaction.reference` in create and fetch answers [SNIP api/refunds/fetch/response.json]. */
export const chargeReferenceOf = (row: unknown): string | null =>
  text(field(row, 'transaction_reference')) ?? text(field(row, 'transaction', 'reference'));
const createdAtOf = (row: unknown): number =>
  Date.parse(text(field(row, 'createdAt')) ?? text(field(row, 'created_at')) ?? '');

/**
 * Our refund among Paystack's, or null when Paystack certainly has none: a row of the same charge, amount and
 * currency, created in the window, that carries our mark; or, when no row carries a mark at all (a note Paystack
 * did not keep), the only such row. Throws when two rows could be ours or the window holds too many pages:
 * answering "none" then could send the money twice.
 */
export async function findRefund(
  client: PaystackClient,
  refund: RefundForRail,
  now: () => number = Date.now,
): Promise<unknown | null> {
  const fromMs = refund.createdAt ? refund.createdAt.getTime() - REFUND_CLOCK_SKEW_MS : null;
  const query = new URLSearchParams({
    perPage: String(REFUND_LIST_PER_PAGE),
    to: new Date(now() + REFUND_CLOCK_SKEW_MS).toISOString(),
  });
  if (fromMs !== null) query.set('from', new Date(fromMs).toISOString());

  const ours = refundMark(refund.refundId);
  const marked: unknown[] = [];
  const unmarked: unknown[] = [];
  for (let page = 1; ; page++) {
    if (page > REFUND_LIST_PAGES_MAX) {
      throw new Error(
        `Paystack lists more than ${REFUND_LIST_PAGES_MAX * REFUND_LIST_PER_PAGE} refunds since ${refund.refundId} was recorded: not looked through`,
      );
    }
    query.set('page', String(page));
    const answer = await client.call('GET', `/refund?${query.toString()}`);
    if (answer.httpStatus !== 200 || !answer.ok || !Array.isArray(answer.data)) {
      throw new ProviderRefusedError(
        `Paystack did not list refunds (HTTP ${answer.httpStatus}: ${answer.message})`,
        answer.httpStatus,
      );
    }
    for (const row of answer.data) {
      if (chargeReferenceOf(row) !== refund.paymentProviderReference) continue;
      if (amountOf(field(row, 'amount')) !== refund.amountMinor) continue;
      const currency = text(field(row, 'currency'));
      if (currency && currency !== refund.currency) continue;
      // The list filters by `from` already; checked again in case a filter was not applied.
      if (fromMs !== null && !(createdAtOf(row) >= fromMs)) continue;
      const mark = markOf(text(field(row, 'merchant_note')));
      if (mark === ours) marked.push(row);
      else if (mark === null) unmarked.push(row);
      // Another refund's mark: that one is not ours, whatever its amount.
    }
    if (answer.data.length < REFUND_LIST_PER_PAGE) break;
  }

  // Newest first means a row can move to a later page while we read (and be seen twice), never skip one.
  const distinct = (rows: unknown[]) => [
    ...new Map(rows.map((row) => [text(field(row, 'id')) ?? JSON.stringify(row), row])).values(),
  ];
  const mine = distinct(marked);
  if (mine.length === 1) return mine[0];
  if (mine.length > 1) throw new Error(`Paystack holds ${mine.length} refunds marked ${ours}`);
  const others = distinct(unmarked);
  if (others.length === 1) return others[0];
  if (others.length > 1)
    throw new Error(`Paystack holds ${others.length} unmarked refunds that could be ${refund.refundId}`);
  return null;
}
