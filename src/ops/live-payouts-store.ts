// SQL of the operator console's Live payouts list (console-list.ts paging): each payout with its merchant,
// environment, amounts, statuses, any operator hold (migration 032), and any return request waiting for a second operator.
import type { Queryable } from '../db/index.ts';
import { cursorParams, type ConsolePageQuery } from '../lib/list-paging.ts';

export interface LivePayoutRow {
  id: string;
  reference: string;
  merchant_name: string;
  environment: string;
  status: string;
  processing_step: string | null;
  amount_minor: number;
  fee_minor: number;
  bank_reference: string;
  return_reference: string;
  reconciliation_status: string;
  pending_approval_id: string | null;
  /** An operator's hold (migration 032): when, by whom, why; null when not held. */
  held_at: Date | null;
  held_by: string | null;
  hold_reason: string | null;
  updated_at: Date;
}

export interface LivePayoutQuery extends ConsolePageQuery {
  q: string;
  qPattern: string;
  status: string | null;
  reconciliation: string | null;
  /** held: open payouts an operator holds; not_held: the others. */
  hold: 'held' | 'not_held' | null;
}

/** Live payouts an operator may reconcile or record a return for, the most recently changed first (keyset on updated_at, id). */
export const listLivePayouts = (db: Queryable, query: LivePayoutQuery) =>
  db.query<LivePayoutRow>(
    `SELECT p.id, p.reference, m.name AS merchant_name, p.environment, p.status, p.processing_step, p.amount_minor, p.fee_minor, p.bank_reference, p.return_reference,
            p.reconciliation_status, p.held_at, p.held_by, p.hold_reason, p.updated_at,
            (SELECT r.id FROM operator_approvals r WHERE r.object_type = 'payout' AND r.object_id = p.id AND r.status = 'pending') AS pending_approval_id
       FROM payouts p JOIN merchants m ON m.id = p.merchant_id
      WHERE p.environment = 'live' AND p.status IN ('paid', 'returned', 'processing', 'requested')
        AND ($1 = '' OR p.id = $1 OR upper(p.reference) = upper($1) OR p.bank_reference ILIKE $2 ESCAPE '\\' OR m.name ILIKE $2 ESCAPE '\\')
        AND ($3::text IS NULL OR p.status = $3) AND ($4::text IS NULL OR p.reconciliation_status = $4)
        AND ($8::text IS NULL OR ($8 = 'held') = (p.held_at IS NOT NULL AND p.status IN ('requested', 'processing')))
        AND ($5::timestamptz IS NULL OR (date_trunc('milliseconds', p.updated_at), p.id) < ($5::timestamptz, $6::text))
      ORDER BY date_trunc('milliseconds', p.updated_at) DESC, p.id DESC LIMIT $7`,
    [
      query.q,
      query.qPattern,
      query.status,
      query.reconciliation,
      ...cursorParams(query.cursor),
      query.limit,
      query.hold,
    ],
  );
