// What a provider reports of its own transactions over a time window, for the operators' daily
// reconciliation (src/reconciliation/). Only providers with a list API have a report source: Paystack
// (GET /transaction, GET /transfer). MTN MoMo's Open API has none, and bank transfers are reconciled
// against imported statements instead.

/** A provider's word for a transaction, reduced to what Sika compares: money in (or out) or not. */
export type ReportedStatus = 'paid' | 'failed' | 'pending' | 'reversed';

export interface ReportedTransaction {
  /** collection: a charge from a payer; payout: a transfer to a recipient. */
  kind: 'collection' | 'payout';
  /** Our reference with the provider (what Sika stores as provider_reference). */
  reference: string;
  status: ReportedStatus;
  /** The provider's own status word, shown to operators as is. */
  rawStatus: string;
  amountMinor: number;
  currency: string;
  /** When the provider says it was paid (or, without that, when it was last changed or created). */
  settledAt: Date | null;
  createdAt: Date | null;
  /** The provider's own id or code (TRF_..., a transaction id): what its support asks for. */
  providerId: string | null;
}

export interface ReportWindow {
  from: Date;
  /** Exclusive. */
  to: Date;
}

export interface ProviderReports {
  /** Every transaction created in the window, all pages; throws when the provider cannot answer in full. */
  transactions(window: ReportWindow): Promise<ReportedTransaction[]>;
}
