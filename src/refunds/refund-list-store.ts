// The dashboard Refunds page's query (issue 36): a merchant's refunds in one environment, newest first in keyset
// pages on (created_at, id), narrowed by status, a created range and a search fragment that may be a refund id, a
// session id, an amount or the start of the session's invoice reference (in any case). The CSV export runs the
// same query page by page. Refunds are few beside sessions (at most a handful per paid session), so the kinds are
// OR-ed in one query over the merchant's refunds (refunds_list_idx, newest first); the invoice reference
// is read per refund by its session's primary key.
import type { Queryable } from '../db/index.ts';
import { likePrefix } from '../db/like-pattern.ts';
import type { RefundRow } from './model.ts';
import { REFUND_COLUMNS } from './store.ts';

export interface RefundListFilter {
  merchantId: string;
  environment: string;
  /** The search fragment as typed (trimmed), matched as a refund or session id and an invoice reference's start. */
  text: string | null;
  /** The fragment read as an amount in GHS (pesewas), when it is one. */
  amountMinor: number | null;
  status?: string;
  createdFrom?: Date;
  createdBefore?: Date;
}

const COLUMNS = REFUND_COLUMNS.replace(/(\w+)/g, 'r.$1');

/**
 * Up to `limit` refunds of the filter, newest first, after the refund `afterId` (the caller has checked it is
 * the merchant's in that environment). The position is read in SQL so its microseconds are kept.
 */
export function searchRefundList(
  db: Queryable,
  filter: RefundListFilter,
  afterId: string | null,
  limit: number,
): Promise<RefundRow[]> {
  const params: unknown[] = [filter.merchantId, filter.environment];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ['r.merchant_id = $1', 'r.environment = $2'];
  if (filter.status) where.push(`r.status = ${param(filter.status)}`);
  if (filter.createdFrom) where.push(`r.created_at >= ${param(filter.createdFrom)}`);
  if (filter.createdBefore) where.push(`r.created_at < ${param(filter.createdBefore)}`);
  if (filter.text || filter.amountMinor !== null) {
    const kinds: string[] = [];
    if (filter.text) {
      const text = param(filter.text);
      kinds.push(`r.id = ${text}`, `r.session_id = ${text}`);
      kinds.push(
        `EXISTS (SELECT 1 FROM checkout_sessions s WHERE s.id = r.session_id AND s.invoice_ref ILIKE ${param(likePrefix(filter.text))})`,
      );
    }
    if (filter.amountMinor !== null) kinds.push(`r.amount_minor = ${param(filter.amountMinor)}`);
    where.push(`(${kinds.join(' OR ')})`);
  }
  if (afterId)
    where.push(
      `(r.created_at, r.id) < (SELECT p.created_at, p.id FROM refunds p WHERE p.id = ${param(afterId)} AND p.merchant_id = $1 AND p.environment = $2)`,
    );
  return db.query<RefundRow>(
    `SELECT ${COLUMNS} FROM refunds r WHERE ${where.join(' AND ')} ORDER BY r.created_at DESC, r.id DESC LIMIT ${param(limit)}`,
    params,
  );
}
