// The Payouts page's query (issue 36, item 3): a merchant's payouts with their recipients, newest first in keyset
// pages, narrowed by the filters and by a search fragment read as every kind it can be (payout-search.ts). The
// list walks payouts_list_idx (merchant, environment, created_at DESC) backwards and stops after a page; the
// recipient kinds (name, account, wallet, last four digits) are one lookup of the merchant's recipients through
// recipients_merchant_idx, read once as an array. The CSV export runs the same query page by page.
import type { Queryable } from '../db/index.ts';
import { likeContaining, likePrefix } from '../db/like-pattern.ts';
import type { Environment } from '../lib/environment.ts';
import { PAYOUT_COLUMNS, type PayoutRow } from './payout-store.ts';
import type { PayoutSearchTerms } from './payout-search.ts';

export interface PayoutsFilter {
  merchantId: string;
  environment: Environment;
  terms: PayoutSearchTerms | null;
  status?: string;
  /** The recipient's account type: bank or momo. */
  method?: string;
  /** manual or settlement. */
  type?: string;
  createdFrom?: Date;
  createdBefore?: Date;
}

/** A row of the Payouts page and its export: the payout and the recipient it goes to. */
export type PayoutListRow = PayoutRow & {
  recipient_name: string;
  recipient_account_type: 'bank' | 'momo';
  recipient_bank_name: string | null;
  recipient_account_number: string | null;
  recipient_network: string | null;
  recipient_phone: string | null;
};

/** The search's conditions, OR-ed; `param` numbers each value. Null for no search. */
function searchCondition(terms: PayoutSearchTerms | null, param: (value: unknown) => string): string | null {
  if (!terms) return null;
  const any: string[] = [];
  if (terms.payoutId) any.push(`p.id = ${param(terms.payoutId)}`);
  if (terms.reference) {
    const reference = param(terms.reference);
    any.push(`p.reference = ${reference}`, `p.client_reference = ${reference}`);
  }
  if (terms.clientReferencePrefix)
    any.push(`p.client_reference LIKE ${param(likePrefix(terms.clientReferencePrefix))}`);
  if (terms.amountMinor !== null) any.push(`p.amount_minor = ${param(terms.amountMinor)}`);
  const recipient: string[] = [];
  if (terms.recipientName) recipient.push(`r2.account_name ILIKE ${param(likeContaining(terms.recipientName))}`);
  if (terms.accountNumber) recipient.push(`r2.account_number = ${param(terms.accountNumber)}`);
  if (terms.phone) recipient.push(`r2.phone = ${param(terms.phone)}`);
  if (terms.last4) {
    const last4 = param(terms.last4);
    recipient.push(`right(r2.account_number, 4) = ${last4}`, `right(r2.phone, 4) = ${last4}`);
  }
  if (recipient.length > 0)
    any.push(
      `p.recipient_id = ANY(ARRAY(SELECT r2.id FROM recipients r2 WHERE r2.merchant_id = $1 AND r2.environment = $2 AND (${recipient.join(' OR ')})))`,
    );
  return any.length > 0 ? `(${any.join(' OR ')})` : 'false';
}

/** Where a page starts: the payout's creation time as PostgreSQL keeps it (microseconds, as text) and its id. */
async function positionOf(db: Queryable, filter: PayoutsFilter, id: string) {
  const rows = await db.query<{ created_at: string }>(
    'SELECT created_at::text AS created_at FROM payouts WHERE id = $1 AND merchant_id = $2 AND environment = $3',
    [id, filter.merchantId, filter.environment],
  );
  return rows[0] ? { createdAt: rows[0].created_at, id } : null;
}

/** Up to `limit` payouts of the filter, newest first, after the payout `afterId` (none when it is not the merchant's). */
export async function searchPayouts(
  db: Queryable,
  filter: PayoutsFilter,
  afterId: string | null,
  limit: number,
): Promise<PayoutListRow[]> {
  const after = afterId ? await positionOf(db, filter, afterId) : null;
  if (afterId && !after) return [];
  const params: unknown[] = [filter.merchantId, filter.environment];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ['p.merchant_id = $1', 'p.environment = $2'];
  if (filter.status) where.push(`p.status = ${param(filter.status)}`);
  if (filter.method) where.push(`r.account_type = ${param(filter.method)}`);
  if (filter.type) where.push(`p.type = ${param(filter.type)}`);
  if (filter.createdFrom) where.push(`p.created_at >= ${param(filter.createdFrom)}`);
  if (filter.createdBefore) where.push(`p.created_at < ${param(filter.createdBefore)}`);
  if (after) where.push(`(p.created_at, p.id) < (${param(after.createdAt)}::timestamptz, ${param(after.id)})`);
  const search = searchCondition(filter.terms, param);
  if (search) where.push(search);
  return db.query<PayoutListRow>(
    `SELECT ${PAYOUT_COLUMNS.replace(/(\w+)/g, 'p.$1')}, r.account_name AS recipient_name, r.account_type AS recipient_account_type,
            b.name AS recipient_bank_name, r.account_number AS recipient_account_number, r.network AS recipient_network,
            r.phone AS recipient_phone
       FROM payouts p JOIN recipients r ON r.id = p.recipient_id LEFT JOIN banks b ON b.id = r.bank_id
      WHERE ${where.join(' AND ')}
      ORDER BY p.created_at DESC, p.id DESC LIMIT ${param(limit)}`,
    params,
  );
}

/** True when the payout is the merchant's in that environment (a page's cursor). */
export const payoutIsOwned = async (db: Queryable, merchantId: string, environment: string, id: string) =>
  (
    await db.query('SELECT 1 FROM payouts WHERE id = $1 AND merchant_id = $2 AND environment = $3', [
      id,
      merchantId,
      environment,
    ])
  ).length > 0;
