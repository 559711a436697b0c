// One interface for every collection rail and provider. The Test-mode simulator is one adapter; Live
// providers (MTN MoMo Open API, GhIPSS, card acquirers) plug in here. Adapters are called outside any
// database transaction: the caller records the intent, commits, calls, then records the result.
import type { Environment } from '../lib/environment.ts';
import type { MomoNetwork } from '../lib/ghana.ts';
import type { Rail } from './registry.ts';

export interface AttemptForRail {
  reference: string;
  sessionId: string;
  environment: Environment;
  rail: Rail;
  amountMinor: number;
  currency: string;
  network: MomoNetwork | null;
  phone: string | null; // +233..., momo only
  providerReference: string | null;
}

export type ProviderOutcome = 'pending' | 'paid' | 'failed' | 'expired' | 'cancelled' | 'reversed' | 'manual_review' | 'amount_mismatch';

export interface Initiated {
  providerReference: string;
  rawStatus: string;
  verificationRequired: boolean;
  /** Extra, rail-specific fields for the payer's instructions (never secrets, never full phone numbers). */
  instructions: Record<string, unknown>;
}

export interface StatusCheck {
  rawStatus: string;
  outcome: ProviderOutcome;
}

export class RailUnavailableError extends Error {}
export class VerificationRefusedError extends Error {}

export interface CollectionRail {
  readonly provider: string;
  initiate(attempt: AttemptForRail): Promise<Initiated>;
  status(attempt: AttemptForRail): Promise<StatusCheck>;
  authorize(attempt: AttemptForRail, code: string): Promise<{ rawStatus: string }>;
  resend(attempt: AttemptForRail): Promise<{ rawStatus: string }>;
}
