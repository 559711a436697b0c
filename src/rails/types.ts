// One interface for every collection rail and provider. The Test-mode simulator is one adapter; the Live
// providers (src/rails/paystack/, src/rails/mtn-momo/, src/rails/bank-transfer/) are others. Adapters are
// called outside any database transaction: the caller records the intent (provider and our reference),
// commits, calls, then records the result. A lost answer is followed by status(), never a second initiate().
import type { Environment } from '../lib/environment.ts';
import type { MomoNetwork } from '../lib/ghana.ts';
import type { FailureReason } from '../lib/payment-failures.ts';
import type { Rail } from './registry.ts';

export interface AttemptForRail {
  /** Sika's attempt id (att_...). */
  reference: string;
  sessionId: string;
  environment: Environment;
  rail: Rail;
  amountMinor: number;
  currency: string;
  network: MomoNetwork | null;
  phone: string | null; // +233..., momo only
  /** Our reference with the provider: chosen by reference() and stored before initiate() is called. */
  providerReference: string | null;
  /** The payer's email when the merchant gave one (Paystack requires an email; the adapter invents one otherwise). */
  payerEmail: string | null;
  /** Where a provider's hosted page sends the payer back to (the payer page of this session). */
  returnUrl: string;
}

export type ProviderOutcome =
  | 'pending'
  | 'paid'
  | 'failed'
  | 'expired'
  | 'cancelled'
  | 'reversed'
  | 'manual_review'
  | 'amount_mismatch';

export interface Initiated {
  /** The provider's reference when it picks one (the Test simulator); omitted when ours was stored beforehand. */
  providerReference?: string;
  rawStatus: string;
  /** The payer must type a code (an OTP or voucher) before the provider asks for approval. */
  verificationRequired: boolean;
  /** The provider already reports the final outcome (a synchronous approval or decline). */
  outcome?: ProviderOutcome;
  /** Extra, rail-specific fields for the payer's instructions (never secrets, never full phone numbers). */
  instructions: Record<string, unknown>;
  /** Why it failed at once, when outcome is failed and the provider's code says. */
  failureReason?: FailureReason;
}

export interface StatusCheck {
  rawStatus: string;
  /**
   * What the provider says. 'unknown': it has no record of our reference (the initiate never reached it).
   * The adapter compares the amount and currency the provider took with the attempt's and answers
   * 'amount_mismatch' when they differ.
   */
  outcome: ProviderOutcome | 'unknown';
  /** The amount the provider reports taking, in pesewas, when it says. */
  amountMinor?: number;
  /** What the provider itself calls this transaction (MTN's financialTransactionId, Paystack's transaction id), when it says. */
  providerTransactionId?: string;
  /** The card that paid (Paystack's authorization.card_type / brand and last4), when it says. */
  card?: { brand: string; last4: string };
  /** Why it failed, mapped from the provider's code, when the outcome is failed and the code is known. */
  failureReason?: FailureReason;
}

/** The rail is not served (no provider configured, or the provider turned it off). */
export class RailUnavailableError extends Error {}
/** The provider refused the payer's verification code. */
export class VerificationRefusedError extends Error {}
/**
 * The provider certainly did not accept the request: the connection was refused, or it answered 5xx or
 * 429 to a create, or a 4xx saying it cannot serve this payment. Another provider may be tried.
 */
export class ProviderRefusedError extends Error {
  constructor(
    message: string,
    /** The provider's HTTP status, when it answered. */
    readonly httpStatus: number | null = null,
    /** The provider declined this payment for a reason of the payer's (bad number, limit): do not fail over. */
    readonly declined = false,
    /** Why, in the payer's terms, when the provider's code says (a decline only). */
    readonly failureReason: FailureReason | null = null,
  ) {
    super(message);
  }
}
/**
 * An amount a provider is asked to move, in pesewas: a positive whole number, else refused before any call as
 * a decline (no provider could take it, so no failover). `what` names it in the message ('refund amount').
 */
export function positiveAmountMinor(amountMinor: number, what: string): number {
  if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0)
    throw new ProviderRefusedError(`${what} ${amountMinor} is not a positive whole number of pesewas`, null, true);
  return amountMinor;
}

/**
 * The request was sent but no answer came back (timeout, connection reset): the provider may have
 * accepted it. Ask with status(); never send it again under a new reference.
 */
export class ProviderNoAnswerError extends Error {}

export interface CollectionRail {
  /** The provider's name as stored on attempts (`payment_attempts.provider`). */
  readonly provider: string;
  /** Rails and Mobile Money networks it collects (Live routing reads these; the Test simulator serves all). */
  readonly serves?: { rails: readonly Rail[]; networks?: readonly MomoNetwork[] };
  /**
   * Our reference for this attempt with the provider, chosen before the call and stored with the intent
   * (MTN's X-Reference-Id, Paystack's reference). Without it the provider's answer names the reference.
   */
  reference?(attempt: { reference: string; rail: Rail }): string;
  /** Throws ProviderRefusedError (not accepted) or ProviderNoAnswerError (maybe accepted). */
  initiate(attempt: AttemptForRail): Promise<Initiated>;
  status(attempt: AttemptForRail): Promise<StatusCheck>;
  /** Submits the payer's code (OTP or voucher); returns the provider's new state. */
  authorize(
    attempt: AttemptForRail,
    code: string,
  ): Promise<{
    rawStatus: string;
    outcome?: ProviderOutcome;
    verificationRequired?: boolean;
    failureReason?: FailureReason;
  }>;
  /** True when resend() can prompt the payer again without a second charge; false or absent: the page never offers it. */
  readonly resendSupported?: boolean;
  resend(attempt: AttemptForRail): Promise<{ rawStatus: string }>;
}
