// One interface for refund providers: the provider that took a payment gives (part of) it back to the payer.
// Called outside database transactions, like collections and payouts: the caller stores the provider and our
// reference (reference()) with the refund before refund() is called, so a refund whose answer was lost is
// asked about with status(), and never sent a second time unless the provider says it has no record of it.

export interface RefundForRail {
  /** Sika's refund id (re_...). */
  refundId: string;
  /** Our reference for this refund with the provider, stored before refund() (reference() made it). */
  providerReference: string;
  /** The provider's reference of the paid charge (the paid attempt's provider_reference). */
  paymentProviderReference: string;
  /** The payer's wallet (+233...) when the payment was Mobile Money; some providers need it. */
  payerPhone: string | null;
  amountMinor: number;
  currency: string;
  /** The merchant's reason, shown to the payer where the provider passes a note on. */
  reason: string | null;
  /** The provider's own id of this refund, once it named one (Paystack's refund id). */
  providerRefundId: string | null;
  /**
   * When Sika recorded the refund, before refund() was called. Paystack takes no reference of ours, so a refund
   * whose answer was lost is looked for among the refunds it created since then; without it the search has no
   * lower bound in time (and gives up, rather than answer 'unknown', past a bounded number of pages).
   */
  createdAt?: Date;
}

/**
 * What the provider says about a refund. 'unknown': it has no record of our reference (the request never
 * reached it; the caller may send it again under the same reference). `providerRefundId` is the provider's
 * own id when it names one (store it: later status() calls may need it).
 */
export type RefundOutcome =
  | { outcome: 'pending'; providerRefundId: string | null; rawStatus: string }
  | { outcome: 'succeeded'; providerRefundId: string | null; rawStatus: string }
  | { outcome: 'failed'; providerRefundId: string | null; rawStatus: string; reason: string }
  | { outcome: 'unknown' };

export interface RefundRail {
  /** The provider's name, as stored on attempts and refunds. */
  readonly provider: string;
  /** Our reference for the refund with this provider, stored before refund() (MTN's X-Reference-Id). */
  reference(refund: { refundId: string }): string;
  /**
   * Asks the provider to refund. Throws ProviderRefusedError (certainly not accepted: nothing to undo) or
   * ProviderNoAnswerError (maybe accepted: ask status(), never refund() again unless it answers 'unknown').
   */
  refund(refund: RefundForRail): Promise<RefundOutcome>;
  /** Where the refund stands, found by our reference (or the provider's id when stored). */
  status(refund: RefundForRail): Promise<RefundOutcome>;
}
