// Reading refunds: one by id (the caller's merchant and environment only; others are 404), and the
// keyset-paged list (GET /api/v1/refunds), newest first.
import type { ApiPrincipal } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { keysetPages } from '../db/keyset-pages.ts';
import { errors } from '../lib/errors.ts';
import { createdRange, cursorPosition } from '../lib/list-paging.ts';
import { REFUND_LIST_LIMIT_DEFAULT, toRefundResponse, type RefundRow, type RefundStatus } from './model.ts';
import {
  findRefund,
  heldForRefunds,
  operatorQueue as operatorQueueRows,
  refundsOfSession,
  searchRefunds,
} from './store.ts';

export interface RefundListQuery {
  limit?: number;
  starting_after?: string;
  status?: RefundStatus;
  session_id?: string;
  created_gte?: string;
  created_lt?: string;
}

export async function getRefund(
  db: Queryable,
  principal: Pick<ApiPrincipal, 'merchantId' | 'environment'>,
  id: string,
): Promise<RefundRow> {
  const refund = await findRefund(db, principal.merchantId, principal.environment, id);
  if (!refund) throw errors.notFound('Refund');
  return refund;
}

/** The search behind the list (and its CSV): filters checked, the cursor resolved to its position. */
export async function refundSearch(
  db: Queryable,
  principal: Pick<ApiPrincipal, 'merchantId' | 'environment'>,
  query: RefundListQuery,
) {
  const after = await cursorPosition(query.starting_after, 'a refund', (id) =>
    findRefund(db, principal.merchantId, principal.environment, id),
  );
  const { createdFrom, createdBefore } = createdRange(query);
  return {
    merchantId: principal.merchantId,
    environment: principal.environment,
    status: query.status,
    sessionId: query.session_id,
    createdFrom,
    createdBefore,
    after,
  };
}

export async function listRefunds(
  db: Queryable,
  principal: Pick<ApiPrincipal, 'merchantId' | 'environment'>,
  query: RefundListQuery,
) {
  const limit = query.limit ?? REFUND_LIST_LIMIT_DEFAULT;
  const rows = await searchRefunds(db, await refundSearch(db, principal, query), limit + 1);
  return { object: 'list' as const, data: rows.slice(0, limit).map(toRefundResponse), has_more: rows.length > limit };
}

/** A session's refunds (the dashboard). */
export const sessionRefunds = (db: Queryable, sessionId: string) => refundsOfSession(db, sessionId);

/** Refunds created in [from, before), oldest first, read in keyset pages of pageRows (a CSV export's rows: constant memory). */
export function refundsCreatedBetween(
  db: Queryable,
  owner: Pick<ApiPrincipal, 'merchantId' | 'environment'>,
  from: Date,
  before: Date,
  pageRows: number,
): AsyncIterable<RefundRow> {
  return keysetPages(
    pageRows,
    (after) =>
      searchRefunds(
        db,
        {
          merchantId: owner.merchantId,
          environment: owner.environment,
          createdFrom: from,
          createdBefore: before,
          after,
          order: 'oldest',
        },
        pageRows,
      ),
    (refund) => ({ createdAt: refund.created_at, id: refund.id }),
  );
}

/** What the merchant's unfinished refunds hold from its balance: the dashboard names it apart from what payouts hold. */
export const refundHolds = (db: Queryable, merchantId: string, environment: 'test' | 'live') =>
  heldForRefunds(db, merchantId, environment);

/** Live refunds an operator must transfer (route operator, still pending), oldest first, at most limit. */
export const operatorQueue = (db: Queryable, limit: number) => operatorQueueRows(db, limit);
