// Refunds through Paystack: POST /refund { transaction, amount } queues one, answered pending; it is
// processed later (refund.processed or refund.failed webhook, or GET /refund/{id}). Sources as in
// docs/providers/paystack.md §6: [OAS] RefundCreate, GET /refund/{id}, [SNIP] doc/payments/refunds/*.
//
// POST /refund takes no reference of ours, so Paystack cannot tell a retry from a second refund: after a lost
// answer (ProviderNoAnswerError) the caller must look before asking again. The refund rail looks with status():
// by Paystack's id when it named one, else through the list of refunds (refund-lookup.ts), which finds ours by
// the mark we leave in merchant_note.
import { field, text } from '../provider-http.ts';
import type { RefundForRail, RefundOutcome, RefundRail } from '../refunds.ts';
import { positiveAmountMinor, ProviderRefusedError } from '../types.ts';
import { amountOf, isNotFound, refusal, type PaystackAnswer, type PaystackClient } from './client.ts';
import { chargeReferenceOf, findRefund, refundMark } from './refund-lookup.ts';

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

/**
 * POST /refund: "Refund has been queued for processing" [SNIP doc/payments/refunds/create-refund.js], answered
 * 200 or 201. 5xx, 429 and 401 are refused without a decline; any other 4xx (more than is left, a charge not
 * paid) is declined.
 */
async function queueRefund(client: PaystackClient, body: Record<string, unknown>): Promise<PaystackAnswer> {
  const answer = await client.call('POST', '/refund', body);
  if (!(answer.httpStatus === 200 || answer.httpStatus === 201) || !answer.ok) throw refusal('the refund', answer);
  return answer;
}

export async function refund(client: PaystackClient, input: RefundInput): Promise<RefundResult> {
  // transaction: "the reference or id of the completed transaction"; amount in the subunit, not above the
  // original [OAS RefundCreate]. merchant_note is the merchant's own note [OAS].
  const answer = await queueRefund(client, {
    transaction: input.providerReference,
    amount: positiveAmountMinor(input.amountMinor, 'refund amount'),
    ...(input.reason ? { merchant_note: input.reason } : {}),
  });
  const refundId = text(field(answer.data, 'id'));
  if (!refundId) throw new ProviderRefusedError('Paystack queued the refund but named no id', answer.httpStatus);
  return { refundId, status: refundStatus(text(field(answer.data, 'status'))) };
}

/** Longest failure reason we copy from Paystack (its `reason` is free text [OAS RefundListResponseArray]). */
const REASON_LENGTH_MAX = 200;

/** A refund object of Paystack's (create, fetch or list) as Sika's outcome: processed, failed, or on its way. */
export function refundOutcome(data: unknown): RefundOutcome {
  const rawStatus = text(field(data, 'status')) ?? '';
  const providerRefundId = text(field(data, 'id'));
  const status = refundStatus(rawStatus);
  if (status === 'processed') return { outcome: 'succeeded', providerRefundId, rawStatus };
  if (status === 'failed') {
    const reason = text(field(data, 'reason'))?.trim().slice(0, REASON_LENGTH_MAX) || 'refund_failed';
    return { outcome: 'failed', providerRefundId, rawStatus, reason };
  }
  return { outcome: 'pending', providerRefundId, rawStatus };
}

/** The refund rail: reference() is our refund id (kept for our records; Paystack takes no reference of ours). */
export function createRefunds(client: PaystackClient, options: { now?: () => number } = {}): RefundRail {
  return {
    provider: 'paystack',
    reference: ({ refundId }) => refundId,

    async refund(refund: RefundForRail): Promise<RefundOutcome> {
      // transaction: the charge's reference; amount in pesewas, not above what is left; customer_note "Customer
      // reason", merchant_note "Merchant reason" [OAS RefundCreate]: our mark goes in the merchant's note.
      const answer = await queueRefund(client, {
        transaction: refund.paymentProviderReference,
        amount: positiveAmountMinor(refund.amountMinor, 'refund amount'),
        currency: refund.currency,
        merchant_note: refundMark(refund.refundId),
        ...(refund.reason ? { customer_note: refund.reason } : {}),
      });
      // Queued: data.status pending [SNIP doc/payments/refunds/create-refund.js].
      return refundOutcome(answer.data);
    },

    async status(refund: RefundForRail): Promise<RefundOutcome> {
      if (!refund.providerRefundId) {
        const found = await findRefund(client, refund, options.now);
        return found === null ? { outcome: 'unknown' } : refundOutcome(found);
      }
      // GET /refund/{id}: 200 with the refund, 404 when Paystack has none [OAS /refund/{id} "Fetch Refund"].
      const answer = await client.call('GET', `/refund/${encodeURIComponent(refund.providerRefundId)}`);
      if (isNotFound(answer)) {
        // Paystack named this id itself: "none" now is not a reason to send the money again.
        throw new ProviderRefusedError(
          `Paystack has no refund ${refund.providerRefundId}, which it named for ${refund.refundId}`,
          answer.httpStatus,
        );
      }
      if (answer.httpStatus !== 200 || !answer.ok)
        throw new ProviderRefusedError(
          `Paystack did not answer for refund ${refund.providerRefundId} (HTTP ${answer.httpStatus})`,
          answer.httpStatus,
        );
      const charge = chargeReferenceOf(answer.data);
      const amount = amountOf(field(answer.data, 'amount'));
      if (
        (charge !== null && charge !== refund.paymentProviderReference) ||
        (amount !== null && amount !== refund.amountMinor)
      ) {
        throw new Error(
          `Paystack refund ${refund.providerRefundId} is of ${charge ?? '?'} for ${amount ?? '?'}, not of ${refund.paymentProviderReference} for ${refund.amountMinor}`,
        );
      }
      return refundOutcome(answer.data);
    },
  };
}
