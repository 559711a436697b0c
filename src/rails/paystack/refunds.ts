// Refunds through Paystack: POST /refund { transaction, amount } queues one, answered pending; it is
// processed later (refund.processed or refund.failed webhook, or GET /refund/{id}). Sources as in
// docs/providers/paystack.md: [OAS] RefundCreate, [SNIP] doc/payments/refunds/*.
//
// POST /refund takes no reference of ours, so Paystack cannot tell a retry from a second refund: after a lost
// answer (ProviderNoAnswerError) the caller must look before asking again (GET /refund lists refunds).
import { field, text } from '../provider-http.ts';
import { ProviderRefusedError } from '../types.ts';
import { refusal, type PaystackClient } from './client.ts';

export interface RefundInput {
  /** Our reference of the paid charge (the attempt's provider reference). */
  providerReference: string;
  amountMinor: number;
  reason?: string;
}

export interface RefundResult {
  refundId: string;
  status: 'pending' | 'processed' | 'failed';
}

/** Refund statuses pending, processing, processed, failed, needs-attention [SNIP doc/payments/refunds/events.js]. */
export function refundStatus(raw: string | null): RefundResult['status'] {
  if (raw === 'processed') return 'processed';
  if (raw === 'failed') return 'failed';
  // processing is on its way; needs-attention waits for the customer's account details
  // (POST /refund/retry_with_customer_details/{id} [OAS]): neither has moved money yet.
  return 'pending';
}

export async function refund(client: PaystackClient, input: RefundInput): Promise<RefundResult> {
  if (!Number.isSafeInteger(input.amountMinor) || input.amountMinor <= 0) throw new ProviderRefusedError(`refund amount ${input.amountMinor} is not a positive whole number of pesewas`, null, true);
  // transaction: "the reference or id of the completed transaction"; amount in the subunit, not above the
  // original [OAS RefundCreate]. merchant_note is the merchant's own note [OAS].
  const answer = await client.call('POST', '/refund', {
    transaction: input.providerReference,
    amount: input.amountMinor,
    ...(input.reason ? { merchant_note: input.reason } : {}),
  });
  // "Refund has been queued for processing" [SNIP doc/payments/refunds/create-refund.js].
  if (!(answer.httpStatus === 200 || answer.httpStatus === 201) || !answer.ok) throw refusal('the refund', answer);
  const refundId = text(field(answer.data, 'id'));
  if (!refundId) throw new ProviderRefusedError('Paystack queued the refund but named no id', answer.httpStatus);
  return { refundId, status: refundStatus(text(field(answer.data, 'status'))) };
}
