// Refunds Sika makes itself, not at the merchant's request: held from the balance in the caller's
// transaction (which credited the money), announced with refund.created, settled at once in Test, and never
// waiting for the merchant's four-eyes approval. Live ones go to the operators' transfer queue (/ops/refunds),
// or back through the provider that took the money when it can refund on its own.
//
// - A payer return (issue 30): money an operator decided to give back to the payer of a held attempt (a payment
//   of another amount returned in full, or the excess of an overpayment), approved by a second operator. Live:
//   an operator's transfer (Sika knows no payer account to send it back through a provider on its own).
// - A duplicate payment (issue 31): a second payment of a checkout another attempt had already paid (a payer
//   who changed course and approved the old prompt too, or paid twice). Refunded in full in the same
//   transaction as its credit, so it never sits on the balance to be paid out; the credit takes no fee, so the
//   merchant neither gains nor loses by it. Live: through the provider that took it, or for money Sika holds
//   no payer account for (bank transfer, cash) or a provider not configured in this process, an operator.
import type { Queryable } from '../db/index.ts';
import type { Environment } from '../lib/environment.ts';
import { holdRefund } from '../ledger/service.ts';
import { newId } from '../lib/ids.ts';
import type { DuplicatePaymentReason } from '../checkout/duplicate-refund.ts';
import type { LiveProviders } from '../rails/live.ts';
import { emitRefundEvent, moveRefund } from './lifecycle.ts';
import { DUPLICATE_REFUND_MARK, REFUND_REASON_LENGTH_MAX, type RefundRoute, type RefundRow } from './model.ts';
import { insertRefund, sessionApiKeyOf } from './store.ts';

export const DUPLICATE_REFUND_REASON =
  'Duplicate payment: this checkout had already been paid by another payment, so this one was refunded automatically.';
/** The refund's reason for a payment on a payment link that had already taken every payment it may (issue 35). */
export const LINK_USED_UP_REFUND_REASON =
  'Payment link used up: the link had already taken every payment it accepts, so this payment was refunded automatically.';

/** Rails whose payer account Sika does not know: an operator pays the refund by transfer. */
const OPERATOR_RAILS: readonly string[] = ['cash', 'bank_transfer'];

interface RefundedAttempt {
  id: string;
  session_id: string;
  merchant_id: string;
  environment: Environment;
  currency: string;
}

interface SikaRefund {
  amountMinor: number;
  reason: string;
  metadata: Record<string, unknown>;
  /** Live only: the provider that sends it back and our reference with it; without one, an operator's transfer. */
  provider: { name: string; reference: string } | null;
}

async function refundToPayer(
  tx: Queryable,
  attempt: RefundedAttempt,
  refundId: string,
  r: SikaRefund,
): Promise<RefundRow> {
  const route: RefundRoute = attempt.environment === 'test' ? 'test' : r.provider ? 'provider' : 'operator';
  const refund = await insertRefund(
    tx,
    {
      id: refundId,
      merchant_id: attempt.merchant_id,
      environment: attempt.environment,
      api_key_id: null,
      requested_by_user_id: null,
      session_id: attempt.session_id,
      attempt_id: attempt.id,
      amount_minor: r.amountMinor,
      currency: attempt.currency,
      reason: r.reason.slice(0, REFUND_REASON_LENGTH_MAX),
      metadata: r.metadata,
      route,
      provider: route === 'provider' ? r.provider!.name : null,
      provider_reference: route === 'provider' ? r.provider!.reference : null,
      processing_step: route === 'provider' ? 'send' : null,
      next_step_at: route === 'provider' ? new Date() : null,
      request_key: null,
    },
    'pending',
  );
  await holdRefund(tx, {
    merchantId: attempt.merchant_id,
    environment: attempt.environment,
    refundId,
    amountMinor: r.amountMinor,
  });
  await emitRefundEvent(tx, refund, await sessionApiKeyOf(tx, attempt.session_id), 'refund.created');
  return route === 'test' ? moveRefund(tx, refund, 'succeeded') : refund;
}

/** A payer return decided by operators (see the top). The caller has locked the session and checked amountMinor against what was received. */
export const createPayerReturn = (
  tx: Queryable,
  attempt: RefundedAttempt,
  amountMinor: number,
  reason: string,
): Promise<RefundRow> => refundToPayer(tx, attempt, newId('re'), { amountMinor, reason, metadata: {}, provider: null });

/**
 * The refund of a duplicate payment (see the top); the caller has credited amountMinor without fee. A payment on
 * a used-up payment link is refunded the same way, its metadata saying so (`because`) for the dashboard.
 */
export async function refundDuplicatePayment(
  tx: Queryable,
  attempt: RefundedAttempt & { rail: string; provider: string },
  amountMinor: number,
  providers: LiveProviders | undefined,
  reason: DuplicatePaymentReason = 'session_already_paid',
): Promise<RefundRow> {
  const id = newId('re');
  const rail =
    attempt.environment === 'live' && !OPERATOR_RAILS.includes(attempt.rail)
      ? (providers?.refundsByName(attempt.provider) ?? null)
      : null;
  return refundToPayer(tx, attempt, id, {
    amountMinor,
    reason: reason === 'payment_link_used_up' ? LINK_USED_UP_REFUND_REASON : DUPLICATE_REFUND_REASON,
    metadata:
      reason === 'payment_link_used_up'
        ? { automatic: DUPLICATE_REFUND_MARK, because: reason }
        : { automatic: DUPLICATE_REFUND_MARK },
    provider: rail ? { name: rail.provider, reference: rail.reference({ refundId: id }) } : null,
  });
}
