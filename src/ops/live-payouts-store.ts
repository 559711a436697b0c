// SQL of the operator console's Live payouts list (console-list.ts paging): each payout with its merchant,
// environment, amounts, statuses, and any return request waiting for a second operator.
import type { Queryable } from '../db/index.ts';

export interface LivePayoutRow {
  id: string;
  reference: string;
  merchant_name: string;
  environment: string;
  status: string;
  amount_minor: number;
  fee_minor: number;
  bank_reference: string;
  return_reference: string;
  reconciliation_status: string;
  pending_approval_id: string | null;
  updated_at: Date;
}

export interface LivePayoutQuery {
  q: string;
  qPattern: string;
  status: string | null;
  reconciliation: string | null;
  cursor: { at: Date; id: string } | null;
  limit: number;
}

/** Live payouts an operator may reconcile or record a return for, the most recently changed first (keyset on updated_at, id). */
export const listLivePayouts = (db: Queryable, query: LivePayoutQuery) =>
  db.query<LivePayoutRow>(
    `SELECT p.id, p.reference, m.name AS merchant_name, p.environment, p.status, p.amount_minor, p.fee_minor, p.bank_reference, p.return_reference,
            p.reconciliation_status, p.updated_at,
            (SELECT r.id FROM operator_approvals r WHERE r.object_type = 'payout' AND r.object_id = p.id AND r.status = 'pending') AS pending_approval_id
       FROM payouts p JOIN merchants m ON m.id = p.merchant_id
      WHERE p.environment = 'live' AND p.status IN ('paid', 'returned', 'processing', 'requested')
        AND ($1 = '' OR p.id = $1 OR upper(p.reference) = upper($1) OR p.bank_reference ILIKE $2 ESCAPE '\\' OR m.name ILIKE $2 ESCAPE '\\')
        AND ($3::text IS NULL OR p.status = $3) AND ($4::text IS NULL OR p.reconciliation_status = $4)
        AND ($5::timestamptz IS NULL OR (date_trunc('milliseconds', p.updated_at), p.id) < ($5::timestamptz, $6::text))
      ORDER BY date_trunc('milliseconds', p.updated_at) DESC, p.id DESC LIMIT $7`,
    [query.q, query.qPattern, query.status, query.reconciliation, query.cursor?.at ?? null, query.cursor?.id ?? null, query.limit],
  );
