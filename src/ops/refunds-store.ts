// SQL of the operator console's Refunds page: what an operator needs beside each queued refund to make
// the transfer (the merchant's name, the payment's rail and reference).
import type { Queryable } from '../db/index.ts';

export interface QueuedRefundPayment {
  refund_id: string;
  merchant_name: string;
  rail: string;
  payment_reference: string;
  amount_charged_minor: number;
}

/** The merchant and payment of each of these refunds. */
export const paymentsOfRefunds = (db: Queryable, refundIds: readonly string[]) =>
  db.query<QueuedRefundPayment>(
    `SELECT r.id AS refund_id, m.name AS merchant_name, a.rail, a.provider_reference AS payment_reference, a.amount_charged_minor
       FROM refunds r JOIN merchants m ON m.id = r.merchant_id JOIN payment_attempts a ON a.id = r.attempt_id
      WHERE r.id = ANY($1)`,
    [refundIds],
  );
