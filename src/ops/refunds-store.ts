// SQL of the operator console's Refunds page: what an operator needs beside each queued refund to make the
// transfer (the merchant, the payment's rail and reference, the payer's contact and method: wallet and
// network, the statement line's sender for a bank transfer), the provider refunds stuck pending, and the
// history of finished refunds (keyset pages, console-list.ts).
import type { Queryable } from '../db/index.ts';
import type { ConsolePageQuery } from '../lib/list-paging.ts';

export interface QueuedRefundPayment {
  refund_id: string;
  merchant_name: string;
  environment: 'test' | 'live';
  rail: string;
  payment_reference: string;
  amount_charged_minor: number;
  /** MoMo: the payer's wallet (E.164) and its network. */
  phone: string | null;
  network: string | null;
  /** The name the payer gave with the payment (a bank transfer's account name, when asked). */
  account_name: string | null;
  customer_name: string | null;
  customer_email: string | null;
  /** Bank transfer: the statement line that paid it (the sender's name and account are in its narration and reference). */
  statement_narration: string | null;
  statement_reference: string | null;
  statement_bank_code: string | null;
  statement_value_date: string | null;
}

/** The merchant, payment and payer of each of these refunds. */
export const paymentsOfRefunds = (db: Queryable, refundIds: readonly string[]) =>
  db.query<QueuedRefundPayment>(
    `SELECT r.id AS refund_id, m.name AS merchant_name, r.environment, a.rail, a.provider_reference AS payment_reference, a.amount_charged_minor,
            a.phone, a.network, a.account_name, s.customer_name, s.customer_email,
            l.narration AS statement_narration, l.bank_reference AS statement_reference, l.bank_code AS statement_bank_code, l.value_date AS statement_value_date
       FROM refunds r JOIN merchants m ON m.id = r.merchant_id JOIN payment_attempts a ON a.id = r.attempt_id JOIN checkout_sessions s ON s.id = r.session_id
       LEFT JOIN LATERAL (SELECT narration, bank_reference, bank_code, value_date::text AS value_date FROM statement_lines
                           WHERE attempt_id = a.id AND status = 'matched' ORDER BY created_at LIMIT 1) l ON true
      WHERE r.id = ANY($1)`,
    [refundIds],
  );

export interface StuckRefundRow {
  id: string;
  environment: 'test' | 'live';
  merchant_id: string;
  merchant_name: string;
  session_id: string;
  amount_minor: number;
  provider: string;
  provider_reference: string;
  provider_refund_id: string | null;
  processing_step: string | null;
  status_checks: number;
  rail: string;
  created_at: Date;
}

/** Live refunds through a provider still pending after `before` (the oldest first). */
export const stuckProviderRefunds = (db: Queryable, before: Date, limit: number) =>
  db.query<StuckRefundRow>(
    `SELECT r.id, r.environment, r.merchant_id, m.name AS merchant_name, r.session_id, r.amount_minor, r.provider, r.provider_reference, r.provider_refund_id,
            r.processing_step, r.status_checks, a.rail, r.created_at
       FROM refunds r JOIN merchants m ON m.id = r.merchant_id JOIN payment_attempts a ON a.id = r.attempt_id
      WHERE r.status = 'pending' AND r.route = 'provider' AND r.environment = 'live' AND r.created_at < $1
      ORDER BY r.created_at, r.id LIMIT $2`,
    [before, limit],
  );

export interface FinishedRefundRow {
  id: string;
  environment: 'test' | 'live';
  status: 'succeeded' | 'failed';
  route: string;
  provider: string | null;
  merchant_id: string;
  merchant_name: string;
  session_id: string;
  amount_minor: number;
  payer_account: string | null;
  transfer_reference: string | null;
  completed_by: string | null;
  failure_reason: string | null;
  created_at: Date;
  finished_at: Date;
}

export interface FinishedRefundsQuery extends ConsolePageQuery {
  q: string;
  filters: { status?: string; environment?: string };
}

/** A LIKE pattern matching the text anywhere, its own % and _ taken literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
/** When a refund finished, to the millisecond: the cursor carries a JavaScript Date, so the keyset compares at its precision. */
const FINISHED_AT = "date_trunc('milliseconds', COALESCE(r.succeeded_at, r.failed_at, r.updated_at))";

/** Finished refunds (succeeded or failed), the latest finished first, searched (id, merchant, payer account, transfer reference) and filtered. */
export const finishedRefunds = (db: Queryable, query: FinishedRefundsQuery) =>
  db.query<FinishedRefundRow>(
    `SELECT r.id, r.environment, r.status, r.route, r.provider, r.merchant_id, m.name AS merchant_name, r.session_id, r.amount_minor, r.payer_account,
            r.transfer_reference, r.completed_by, r.failure_reason, r.created_at, ${FINISHED_AT} AS finished_at
       FROM refunds r JOIN merchants m ON m.id = r.merchant_id
      WHERE r.status IN ('succeeded', 'failed')
        AND ($1::text IS NULL OR r.status = $1) AND ($2::text IS NULL OR r.environment = $2)
        AND ($3::text IS NULL OR r.id = $4 OR r.session_id = $4 OR m.name ILIKE $3 OR r.payer_account ILIKE $3 OR r.transfer_reference ILIKE $3 OR r.completed_by ILIKE $3)
        AND ($5::timestamptz IS NULL OR (${FINISHED_AT}, r.id) < ($5::timestamptz, $6::text))
      ORDER BY ${FINISHED_AT} DESC, r.id DESC LIMIT $7`,
    [
      query.filters.status ?? null,
      query.filters.environment ?? null,
      query.q ? containing(query.q) : null,
      query.q,
      query.cursor?.at ?? null,
      query.cursor?.id ?? '',
      query.limit,
    ],
  );
