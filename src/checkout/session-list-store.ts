// The merchant API's session search (GET /api/v1/sessions): keyset pages, newest first, and each session's
// payment (the attempt that paid it). Keyset on (created_at, id): a page never skips or repeats a row that
// existed when paging began, whatever is inserted meanwhile (offsets would shift).
import type { Queryable } from '../db/index.ts';
import { keysetOrder, ListWhere } from '../db/paging.ts';
import type { Rail } from '../rails/registry.ts';
import type { AttemptRow, SessionRow, SessionStatus } from './model.ts';
import { SESSION_COLUMNS } from './store.ts';

export interface SessionSearch {
  merchantId: string;
  environment: string;
  status?: SessionStatus;
  invoiceRef?: string;
  createdFrom?: Date;
  createdBefore?: Date;
  /** Sessions paid through this rail. */
  rail?: Rail;
  /** Sessions payers made from this payment link. */
  paymentLinkId?: string;
  /** The page starts after this session (its created_at and id). */
  after?: { createdAt: Date; id: string };
  /** Newest first (the default: the API's list) or oldest first (a CSV export). */
  order?: 'newest' | 'oldest';
}

export type SessionPayment = Pick<
  AttemptRow,
  | 'id'
  | 'rail'
  | 'provider'
  | 'provider_reference'
  | 'provider_transaction_id'
  | 'card_brand'
  | 'card_last4'
  | 'amount_charged_minor'
  | 'amount_received_minor'
  | 'fee_received_minor'
  | 'fee_minor'
  | 'bearer'
  | 'base_minor'
  | 'finalized_at'
  | 'status'
>;

/** The keyset of the session list. */
const KEYSET = ['s.created_at', 's.id'] as const;

/** The attempt that paid a session (a reversed payment still names it), as columns prefixed pay_ (also the Payments page's). */
export const PAYMENT_LATERAL = `LEFT JOIN LATERAL (
    SELECT a.id AS pay_id, a.rail AS pay_rail, a.provider AS pay_provider, a.provider_reference AS pay_provider_reference,
           a.provider_transaction_id AS pay_provider_transaction_id, a.card_brand AS pay_card_brand, a.card_last4 AS pay_card_last4,
           a.amount_charged_minor AS pay_amount_charged_minor, a.amount_received_minor AS pay_amount_received_minor, a.fee_received_minor AS pay_fee_received_minor, a.fee_minor AS pay_fee_minor, a.bearer AS pay_bearer,
           a.base_minor AS pay_base_minor, a.finalized_at AS pay_finalized_at, a.status AS pay_status
      FROM payment_attempts a WHERE a.session_id = s.id AND a.status IN ('paid', 'reversed')
     ORDER BY a.finalized_at NULLS LAST, a.id LIMIT 1) p ON true`;

export type Joined = SessionRow & { [K in keyof SessionPayment as `pay_${K & string}`]: SessionPayment[K] | null };

export function split(row: Joined): { session: SessionRow; payment: SessionPayment | null } {
  const session = {} as Record<string, unknown>;
  const payment = {} as Record<string, unknown>;
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith('pay_')) payment[key.slice(4)] = value;
    else session[key] = value;
  }
  return {
    session: session as unknown as SessionRow,
    payment: payment.id ? (payment as unknown as SessionPayment) : null,
  };
}

/** Up to `limit` sessions matching the search, newest first (or oldest first when asked). */
export async function searchSessions(db: Queryable, search: SessionSearch, limit: number) {
  const where = new ListWhere({ 's.merchant_id': search.merchantId, 's.environment': search.environment });
  if (search.status) where.add((n) => `s.status = $${n}`, search.status);
  if (search.invoiceRef) where.add((n) => `s.invoice_ref = $${n}`, search.invoiceRef);
  where.created('s.created_at', search);
  if (search.rail) where.add((n) => `p.pay_rail = $${n}`, search.rail);
  if (search.paymentLinkId) where.add((n) => `s.payment_link_id = $${n}`, search.paymentLinkId);
  where.after(KEYSET, search.after, search.order);
  const limitParam = where.limit(limit);
  const rows = await db.query<Joined>(
    `SELECT ${SESSION_COLUMNS.replace(/(\w+)/g, 's.$1')}, p.* FROM checkout_sessions s ${PAYMENT_LATERAL}
      WHERE ${where.sql} ORDER BY ${keysetOrder(KEYSET, search.order)} LIMIT ${limitParam}`,
    where.params,
  );
  return rows.map(split);
}

/** The attempt that paid this session, or null. */
export async function findSessionPayment(db: Queryable, sessionId: string): Promise<SessionPayment | null> {
  const rows = await db.query<Joined>(`SELECT p.* FROM (SELECT $1::text AS id) s ${PAYMENT_LATERAL}`, [sessionId]);
  return rows[0] ? split(rows[0]).payment : null;
}
