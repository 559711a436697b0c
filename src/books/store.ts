// The books' SQL: balance_transactions (written by the ledger, src/ledger/store.ts entriesCtes) read with the
// entry that made each row, its fee and its source. Per merchant and environment seq is the order the balance
// moved and created_at follows it, so a created range is one run of seq and keyset pages on seq never skip or
// repeat a row, whatever is posted meanwhile (a newer row never gets a smaller seq than a committed one).
import type { Queryable } from '../db/index.ts';
import { firstRow, firstValue } from '../db/first-row.ts';
import { ListWhere } from '../db/paging.ts';
import type { EntryKind } from '../ledger/model.ts';
import type { BalanceTransactionRow, PeriodKindTotal } from './model.ts';

export interface BalanceTransactionSearch {
  merchantId: string;
  environment: string;
  kinds?: readonly EntryKind[];
  /** The movements this settlement paid out (settlement_transactions), not the settlement's own (issue 34). */
  payoutId?: string;
  createdFrom?: Date;
  createdBefore?: Date;
  /** Keyset: rows after this seq in the order asked (smaller when newest first, larger when oldest first). */
  afterSeq?: number;
  /** Issue 36 (the dashboard's search): the movement of this journal entry (a transaction id's). */
  entryId?: string;
  /** Issue 36: the movements of this source, a payment's attempt or session, a payout or a refund, by its id. */
  sourceId?: string;
  /** Rows up to this seq only (an export stops where the balance stood when it began). */
  maxSeq?: number;
  order: 'newest' | 'oldest';
}

/**
 * What the provider named a payment by, on a payment's (or its reversal's) row for the exports (issue 31):
 * null on payouts and refunds, and until the provider names them.
 */
export interface PaymentReferenceColumns {
  provider_transaction_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
}

// The fee of a movement: what its entry gave fee_revenue (negated), or for a payout's hold and its release,
// which touch no fee account, the payout's fee. A payment's session and references are its attempt's.
// Issue 34 (migration 039): a payment credit that waits to clear has its ledger_clearings row (keyed by the
// credit's entry): available_on is that row's, pending until it comes unless it cleared sooner (a Test run
// as of a later day); every other movement is available when made. The settlement that paid a movement out
// is its settlement_transactions row's, except on the settlement's own hold or payment, recorded there too.
const ROW_SELECT = `
  SELECT b.seq, b.entry_id, e.kind, e.reference_type, e.reference_id, a.session_id, b.net_minor,
         a.provider_transaction_id, a.card_brand, a.card_last4,
         coalesce(c.available_on, b.created_at) AS available_on,
         (CASE WHEN c.cleared_at IS NULL AND c.reversed_at IS NULL AND c.available_on > now() THEN 'pending' ELSE 'available' END) AS status,
         (CASE WHEN e.reference_type = 'payout' AND e.reference_id = st.payout_id THEN NULL ELSE st.payout_id END) AS payout_id,
         (CASE e.kind WHEN 'payout_hold' THEN coalesce(p.fee_minor, 0)
                      WHEN 'payout_void' THEN -coalesce(p.fee_minor, 0)
                      ELSE coalesce(-(SELECT l.amount_minor FROM journal_lines l WHERE l.entry_id = b.entry_id AND l.account_id = fee.id), 0) END)::bigint AS fee_minor,
         b.balance_after_minor, b.created_at
    FROM balance_transactions b
    JOIN journal_entries e ON e.id = b.entry_id
    LEFT JOIN ledger_accounts fee ON fee.merchant_id = b.merchant_id AND fee.environment = b.environment AND fee.kind = 'fee_revenue'
    LEFT JOIN payouts p ON e.reference_type = 'payout' AND p.id = e.reference_id
    LEFT JOIN payment_attempts a ON e.reference_type = 'payment' AND a.id = e.reference_id
    LEFT JOIN ledger_clearings c ON c.entry_id = b.entry_id
    LEFT JOIN settlement_transactions st ON st.entry_id = b.entry_id`;

/**
 * The entries of a source named by its id (issue 36): a payout's or refund's, a payment's by its attempt, or
 * by the attempts of its session. Each lookup by its index: journal_entries_once (type, id) and
 * payment_attempts_session_idx, so no merchant's movements are walked.
 */
const sourceEntries = (n: number) =>
  `b.entry_id IN (SELECT j.id FROM journal_entries j WHERE j.reference_type IN ('payment', 'payout', 'refund') AND j.reference_id = $${n}
     UNION ALL SELECT j.id FROM payment_attempts pa JOIN journal_entries j ON j.reference_type = 'payment' AND j.reference_id = pa.id
      WHERE pa.session_id = $${n})`;

/** Up to `limit` movements matching the search, in the order asked. */
export function searchBalanceTransactions(
  db: Queryable,
  search: BalanceTransactionSearch,
  limit: number,
): Promise<(BalanceTransactionRow & PaymentReferenceColumns)[]> {
  const where = new ListWhere({ 'b.merchant_id': search.merchantId, 'b.environment': search.environment });
  if (search.kinds) where.add((n) => `e.kind = ANY($${n}::text[])`, search.kinds);
  if (search.payoutId !== undefined)
    where.add(
      (n) => `st.payout_id = $${n} AND NOT (e.reference_type = 'payout' AND e.reference_id = st.payout_id)`,
      search.payoutId,
    );
  if (search.entryId !== undefined) where.add((n) => `b.entry_id = $${n}`, search.entryId);
  if (search.sourceId !== undefined) where.add(sourceEntries, search.sourceId);
  where.created('b.created_at', search);
  if (search.afterSeq !== undefined)
    where.add((n) => (search.order === 'newest' ? `b.seq < $${n}` : `b.seq > $${n}`), search.afterSeq);
  if (search.maxSeq !== undefined) where.add((n) => `b.seq <= $${n}`, search.maxSeq);
  const limitParam = where.limit(limit);
  return db.query<BalanceTransactionRow & PaymentReferenceColumns>(
    `${ROW_SELECT} WHERE ${where.sql} ORDER BY b.seq ${search.order === 'newest' ? 'DESC' : 'ASC'} LIMIT ${limitParam}`,
    where.params,
  );
}

/** A payout's owner and type, by its id (the caller checks the owner: src/db/owned-row.ts); null when none. */
export const findPayoutOwner = (db: Queryable, payoutId: string) =>
  firstRow(
    db.query<{ merchant_id: string; environment: string; type: 'manual' | 'settlement' }>(
      'SELECT merchant_id, environment, type FROM payouts WHERE id = $1',
      [payoutId],
    ),
  );

/** How many movements a settlement paid out and their sums (not its own movement); zeros when none. */
export async function settlementTotals(
  db: Queryable,
  merchantId: string,
  environment: string,
  payoutId: string,
): Promise<{ count: number; amount_minor: number; fee_minor: number; net_minor: number }> {
  const rows = await db.query<{ count: number; amount_minor: number; fee_minor: number; net_minor: number }>(
    `WITH paid AS (${ROW_SELECT}
      WHERE st.payout_id = $1 AND b.merchant_id = $2 AND b.environment = $3
        AND NOT (e.reference_type = 'payout' AND e.reference_id = st.payout_id))
     SELECT count(*)::int AS count, coalesce(sum(net_minor + fee_minor), 0)::bigint AS amount_minor,
            coalesce(sum(fee_minor), 0)::bigint AS fee_minor, coalesce(sum(net_minor), 0)::bigint AS net_minor FROM paid`,
    [payoutId, merchantId, environment],
  );
  return rows[0]!;
}

/** The seq of a movement of this merchant and environment, by its journal entry; null for anyone else's. */
export const findSeq = (db: Queryable, merchantId: string, environment: string, entryId: string) =>
  firstValue(
    db.query<{ seq: number }>(
      'SELECT seq FROM balance_transactions WHERE entry_id = $1 AND merchant_id = $2 AND environment = $3',
      [entryId, merchantId, environment],
    ),
    'seq',
  );

/**
 * The first and last seq of the movements created in [from, before) (null when none): created_at follows seq,
 * so the range is every seq between them. Read by created_at (its index), each end one index probe.
 */
export async function seqRange(
  db: Queryable,
  merchantId: string,
  environment: string,
  from: Date,
  before: Date,
): Promise<{ first: number; last: number } | null> {
  const rows = await db.query<{ first: number | null; last: number | null }>(
    `SELECT (SELECT seq FROM balance_transactions WHERE merchant_id = $1 AND environment = $2 AND created_at >= $3 AND created_at < $4
              ORDER BY created_at, seq LIMIT 1) AS first,
            (SELECT seq FROM balance_transactions WHERE merchant_id = $1 AND environment = $2 AND created_at >= $3 AND created_at < $4
              ORDER BY created_at DESC, seq DESC LIMIT 1) AS last`,
    [merchantId, environment, from, before],
  );
  const { first, last } = rows[0]!;
  return first === null || last === null ? null : { first, last };
}

/** The available balance just before an instant: the balance after the last movement before it, else 0. */
export async function balanceBefore(db: Queryable, merchantId: string, environment: string, at: Date): Promise<number> {
  const rows = await db.query<{ balance_after_minor: number }>(
    `SELECT balance_after_minor FROM balance_transactions WHERE merchant_id = $1 AND environment = $2 AND created_at < $3
      ORDER BY created_at DESC, seq DESC LIMIT 1`,
    [merchantId, environment, at],
  );
  return rows[0]?.balance_after_minor ?? 0;
}

/**
 * Movements between consecutive bounds summed per period and entry kind: period 1 is bounds[0] to bounds[1]
 * (from included, to excluded), and so on; movements outside bounds[0] to the last bound are not read.
 */
export async function periodTotals(
  db: Queryable,
  merchantId: string,
  environment: string,
  bounds: readonly Date[],
): Promise<PeriodKindTotal[]> {
  return db.query<PeriodKindTotal>(
    `WITH moved AS (${ROW_SELECT}
      WHERE b.merchant_id = $1 AND b.environment = $2 AND b.created_at >= $3 AND b.created_at < $4)
     SELECT width_bucket(created_at, $5::timestamptz[]) AS period, kind, count(*)::int AS count,
            sum(net_minor)::bigint AS net_minor, sum(fee_minor)::bigint AS fee_minor
       FROM moved GROUP BY 1, 2 ORDER BY 1, 2`,
    [merchantId, environment, bounds[0], bounds.at(-1), bounds],
  );
}
