// One interface for payout providers (Paystack transfers, MTN MoMo disbursement, the rehearsal simulator).
// Called outside database transactions. The caller stores the provider and our reference (reference())
// before transfer() is called, so a payout whose answer was lost is asked about with status(), and sent
// again only when the provider says it never saw it (transfer() must be idempotent by that reference).
import type { MomoNetwork } from '../lib/ghana.ts';

export interface PayoutForRail {
  payoutId: string;
  /** The payout's own reference (the merchant sees it). */
  reference: string;
  /** Our reference with the provider, stored before transfer() (reference() made it). */
  providerReference: string | null;
  amountMinor: number;
  currency: string;
  recipient: {
    accountType: 'bank' | 'momo';
    bankCode: string | null;
    accountNumber: string | null;
    network: string | null;
    phone: string | null;
    accountName: string;
  };
}

/** ok with the name the provider holds (when it tells); a rejection names why (account_not_found, name_mismatch, ...). */
export type RecipientCheck = { ok: true; resolvedName?: string | null } | { ok: false; reason: string };
export type TransferOutcome =
  | { outcome: 'paid'; bankReference: string }
  | { outcome: 'pending'; bankReference: string }
  | { outcome: 'failed'; reason: string }
  | { outcome: 'returned'; bankReference: string; returnReference: string }
  | { outcome: 'unknown' };

export interface PayoutRail {
  readonly provider: string;
  /** Which recipients it pays (Live routing reads this); absent: every recipient. */
  readonly serves?: { bank: boolean; networks: readonly MomoNetwork[] };
  /** Our reference for the payout with this provider; stored before transfer(). Default: the payout id. */
  reference?(payout: { payoutId: string; reference: string }): string;
  checkRecipient(payout: PayoutForRail): Promise<RecipientCheck>;
  /** Throws ProviderRefusedError (not accepted) or ProviderNoAnswerError (maybe accepted: ask status()). */
  transfer(payout: PayoutForRail): Promise<TransferOutcome>;
  status(payout: PayoutForRail): Promise<TransferOutcome>;
}

/**
 * A Live payout simulator for tests and rehearsals: never on by default (LIVE_PAYOUT_SIMULATOR=on).
 * Outcomes by account: account numbers / phones ending in 13 are rejected at the recipient check,
 * ending in 22 fail at transfer, ending in 44 stay pending until `settle()`; the rest are paid.
 * `returnTransfer()` makes a paid transfer come back as returned.
 */
export class LivePayoutSimulator implements PayoutRail {
  readonly provider = 'live_simulator';
  private readonly transfers = new Map<string, TransferOutcome>();
  private readonly transferCalls = new Map<string, number>();

  private key(payout: PayoutForRail): string {
    return payout.recipient.accountNumber ?? payout.recipient.phone ?? '';
  }

  async checkRecipient(payout: PayoutForRail): Promise<RecipientCheck> {
    return this.key(payout).endsWith('13') ? { ok: false, reason: 'account_not_found' } : { ok: true };
  }

  async transfer(payout: PayoutForRail): Promise<TransferOutcome> {
    this.transferCalls.set(payout.payoutId, (this.transferCalls.get(payout.payoutId) ?? 0) + 1);
    const existing = this.transfers.get(payout.payoutId);
    if (existing) return existing; // idempotent by payout id
    const account = this.key(payout);
    const bankReference = `GIP${payout.reference.replace(/\W/g, '')}`;
    const outcome: TransferOutcome = account.endsWith('22')
      ? { outcome: 'failed', reason: 'recipient_bank_declined' }
      : account.endsWith('44')
        ? { outcome: 'pending', bankReference }
        : { outcome: 'paid', bankReference };
    this.transfers.set(payout.payoutId, outcome);
    return outcome;
  }

  /** How many times `transfer` was called for this payout: a count that other payouts' passes cannot change. */
  transferCallsFor(payoutId: string): number {
    return this.transferCalls.get(payoutId) ?? 0;
  }

  async status(payout: PayoutForRail): Promise<TransferOutcome> {
    return this.transfers.get(payout.payoutId) ?? { outcome: 'unknown' };
  }

  settle(payoutId: string, outcome: 'paid' | 'failed'): void {
    const current = this.transfers.get(payoutId);
    const bankReference = current && 'bankReference' in current ? current.bankReference : `GIP${payoutId}`;
    this.transfers.set(
      payoutId,
      outcome === 'paid'
        ? { outcome: 'paid', bankReference }
        : { outcome: 'failed', reason: 'recipient_bank_declined' },
    );
  }

  returnTransfer(payoutId: string, returnReference: string): void {
    const current = this.transfers.get(payoutId);
    const bankReference = current && 'bankReference' in current ? current.bankReference : `GIP${payoutId}`;
    this.transfers.set(payoutId, { outcome: 'returned', bankReference, returnReference });
  }
}
