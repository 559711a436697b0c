// A second payment of a checkout that another attempt had already paid (issue 31: a payer who changed course
// and then approved the old prompt too, or paid twice): the money is refunded automatically, in the same
// transaction as its credit, so it never sits on the merchant's balance to be paid out. The credit takes no
// fee and the refund gives back everything charged, so the merchant neither gains nor loses by it.
// Route: Test settles at once; Live goes back through the provider that took it, or, for money Sika holds no
// payer account for (bank transfer, cash) or a provider not configured in this process, to the operators'
// transfer queue (/ops/refunds). Never waits for the merchant's four-eyes approval: it is Sika's correction.
import type { Queryable } from '../db/index.ts';
import type { Environment } from '../lib/environment.ts';
import { holdRefund } from '../ledger/service.ts';
import { newId } from '../lib/ids.ts';
import type { LiveProviders } from '../rails/live.ts';
import { emitRefundEvent, moveRefund } from './lifecycle.ts';
import { DUPLICATE_REFUND_MARK, type RefundRoute, type RefundRow } from './model.ts';
import { insertRefund, sessionApiKeyOf } from './store.ts';

export const DUPLICATE_REFUND_REASON = 'Duplicate payment: this checkout had already been paid by another payment, so this one was refunded automatically.';

/** Rails whose payer account Sika does not know: an operator pays the refund by transfer. */
const OPERATOR_RAILS: readonly string[] = ['cash', 'bank_transfer'];

export interface DuplicatePayment {
  id: string;
  session_id: string;
  merchant_id: string;
  environment: Environment;
  rail: string;
  provider: string;
  amount_charged_minor: number;
  currency: string;
}

/** The refund of a duplicate payment, held (and in Test settled) in the caller's transaction; the caller has credited it. */
export async function refundDuplicatePayment(tx: Queryable, attempt: DuplicatePayment, providers: LiveProviders | undefined): Promise<RefundRow> {
  const id = newId('re');
  let route: RefundRoute = 'test';
  let provider: string | null = null;
  let providerReference: string | null = null;
  if (attempt.environment === 'live') {
    const rail = OPERATOR_RAILS.includes(attempt.rail) ? null : (providers?.refundsByName(attempt.provider) ?? null);
    if (rail) {
      route = 'provider';
      provider = rail.provider;
      providerReference = rail.reference({ refundId: id });
    } else {
      route = 'operator';
    }
  }
  const refund = await insertRefund(
    tx,
    {
      id,
      merchant_id: attempt.merchant_id,
      environment: attempt.environment,
      api_key_id: null,
      requested_by_user_id: null,
      session_id: attempt.session_id,
      attempt_id: attempt.id,
      amount_minor: attempt.amount_charged_minor,
      currency: attempt.currency,
      reason: DUPLICATE_REFUND_REASON,
      metadata: { automatic: DUPLICATE_REFUND_MARK },
      route,
      provider,
      provider_reference: providerReference,
      processing_step: route === 'provider' ? 'send' : null,
      next_step_at: route === 'provider' ? new Date() : null,
      request_key: null,
    },
    'pending',
  );
  await holdRefund(tx, { merchantId: attempt.merchant_id, environment: attempt.environment, refundId: id, amountMinor: attempt.amount_charged_minor });
  await emitRefundEvent(tx, refund, await sessionApiKeyOf(tx, attempt.session_id), 'refund.created');
  return route === 'test' ? moveRefund(tx, refund, 'succeeded') : refund;
}
