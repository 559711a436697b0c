// Paystack's own record of a time window, for the daily reconciliation: its transactions (GET /transaction,
// charges from payers) and its transfers (GET /transfer, payouts), every page. Sources:
// [OAS] PaystackOSS/openapi dist/paystack.yaml paths /transaction get (transaction_list) and /transfer get
// (transfer_list), schemas TransactionListResponse(Array) and TransferListResponse(Array);
// [PAG] https://paystack.com/docs/api/pagination/ ("Offset Pagination": page and perPage, default 50).
import { field, text } from '../provider-http.ts';
import type { ReportedStatus, ReportedTransaction, ReportWindow } from '../reports.ts';
import { ProviderRefusedError } from '../types.ts';
import { amountOf, refusal, type PaystackClient } from './client.ts';

/** Records asked for per page ([PAG] perPage; Paystack's default is 50). */
export const REPORT_PAGE_SIZE = 100;
/** Pages read per list at most: a day beyond 100 x 100 records is reported unavailable, never cut short. */
export const REPORT_PAGES_MAX = 100;

type ListPath = '/transaction' | '/transfer';

/**
 * Transaction statuses: success, failed, abandoned, reversed are the list's filter values [OAS /transaction
 * get, status enum]; anything else (ongoing, pending, ...) is still in flight.
 */
function transactionStatus(raw: string): ReportedStatus {
  if (raw === 'success') return 'paid';
  if (raw === 'failed' || raw === 'abandoned') return 'failed';
  if (raw === 'reversed') return 'reversed';
  return 'pending';
}

/** Transfer statuses: pending, success, failed, otp, abandoned, reversed, blocked, rejected, received [OAS /transfer get, status enum]. */
function transferStatus(raw: string): ReportedStatus {
  if (raw === 'success') return 'paid';
  if (raw === 'failed' || raw === 'abandoned' || raw === 'blocked' || raw === 'rejected') return 'failed';
  if (raw === 'reversed') return 'reversed';
  return 'pending';
}

function dateOf(value: unknown): Date | null {
  const raw = text(value);
  if (!raw) return null;
  const date = new Date(raw);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** One record of GET /transaction [OAS TransactionListResponseArray: reference, amount, currency, status, paid_at, created_at, id]. */
function readTransaction(item: unknown): ReportedTransaction | null {
  const reference = text(field(item, 'reference'));
  const amountMinor = amountOf(field(item, 'amount'));
  if (!reference || amountMinor === null) return null;
  const rawStatus = text(field(item, 'status')) ?? 'unknown';
  const createdAt = dateOf(field(item, 'created_at')) ?? dateOf(field(item, 'createdAt'));
  return {
    kind: 'collection',
    reference,
    status: transactionStatus(rawStatus),
    rawStatus,
    amountMinor,
    currency: text(field(item, 'currency')) ?? '',
    settledAt: dateOf(field(item, 'paid_at')) ?? createdAt,
    createdAt,
    providerId: text(field(item, 'id')),
  };
}

/** One record of GET /transfer [OAS TransferListResponseArray: reference, amount, currency, status, transfer_code, createdAt, updatedAt, transferred_at]. */
function readTransfer(item: unknown): ReportedTransaction | null {
  const reference = text(field(item, 'reference'));
  const amountMinor = amountOf(field(item, 'amount'));
  if (!reference || amountMinor === null) return null;
  const rawStatus = text(field(item, 'status')) ?? 'unknown';
  const status = transferStatus(rawStatus);
  const createdAt = dateOf(field(item, 'createdAt'));
  // transferred_at is null until the money left [OAS: nullable]; a failed or reversed transfer is dated by its last change.
  const settledAt =
    dateOf(field(item, 'transferred_at')) ??
    (status === 'pending' ? null : dateOf(field(item, 'updatedAt'))) ??
    createdAt;
  return {
    kind: 'payout',
    reference,
    status,
    rawStatus,
    amountMinor,
    currency: text(field(item, 'currency')) ?? '',
    settledAt,
    createdAt,
    providerId: text(field(item, 'transfer_code')),
  };
}

/**
 * Every page of a list for the window. from and to are date-times [OAS from, to: format date-time]; the
 * answer's meta carries total, page and pageCount [OAS TransactionListResponse.meta, TransferListResponse.meta].
 * The spec spells the page size per_page while the pagination guide and every sample say perPage [PAG]: perPage
 * is sent, and paging stops on a short page as well as on pageCount, so either reading ends.
 */
async function listAll(
  client: PaystackClient,
  path: ListPath,
  window: ReportWindow,
  read: (item: unknown) => ReportedTransaction | null,
): Promise<ReportedTransaction[]> {
  const out: ReportedTransaction[] = [];
  // `to` is read as inclusive: the window's last millisecond.
  const to = new Date(window.to.getTime() - 1).toISOString();
  for (let page = 1; page <= REPORT_PAGES_MAX; page++) {
    const query = new URLSearchParams({
      perPage: String(REPORT_PAGE_SIZE),
      page: String(page),
      from: window.from.toISOString(),
      to,
    });
    const answer = await client.call('GET', `${path}?${query}`);
    if (answer.httpStatus !== 200 || !answer.ok)
      throw refusal(`the ${path === '/transaction' ? 'transactions' : 'transfers'} list`, answer);
    if (!Array.isArray(answer.data))
      throw new ProviderRefusedError(`Paystack's ${path} list answered without a data array`, answer.httpStatus);
    for (const item of answer.data) {
      const reported = read(item);
      if (!reported)
        throw new ProviderRefusedError(
          `Paystack's ${path} list holds a record without a reference or a whole amount`,
          answer.httpStatus,
        );
      out.push(reported);
    }
    const pageCount = field(answer.meta, 'pageCount');
    const last = typeof pageCount === 'number' ? page >= pageCount : answer.data.length < REPORT_PAGE_SIZE;
    if (last || answer.data.length === 0) return out;
  }
  throw new ProviderRefusedError(
    `Paystack's ${path} list has more than ${REPORT_PAGES_MAX} pages of ${REPORT_PAGE_SIZE} for the window: not read in part`,
  );
}

export const listTransactions = (client: PaystackClient, window: ReportWindow) =>
  listAll(client, '/transaction', window, readTransaction);
export const listTransfers = (client: PaystackClient, window: ReportWindow) =>
  listAll(client, '/transfer', window, readTransfer);

/** Charges and transfers of the window together. */
export async function listAllTransactions(
  client: PaystackClient,
  window: ReportWindow,
): Promise<ReportedTransaction[]> {
  const [charges, transfers] = await Promise.all([listTransactions(client, window), listTransfers(client, window)]);
  return [...charges, ...transfers];
}
