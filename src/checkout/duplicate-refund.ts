// The refund of a duplicate payment (a second payment of a session another attempt had already paid) is made
// in applyOutcome's transaction, but refunds are built on checkout's payments (src/refunds imports checkout), so
// checkout cannot import them without a loop. src/refunds hands its refund in here instead, once per process, from
// the composition roots that apply outcomes (src/app.ts for the server and its workers, the `sika statements
// import` command); an outcome applied in a process that has not would fail its transaction (nothing is
// credited) rather than keep a duplicate payment on the balance.
import type { Queryable } from '../db/index.ts';
import type { DUPLICATE_PAYMENT_REASONS } from '../events/event-schemas.ts';
import type { LiveProviders } from '../rails/live.ts';
import type { AttemptRow } from './model.ts';

/**
 * Why a payment is not kept: its session was already paid, or its payment link had already taken every payment
 * it may (payment-link-payments.ts). Refunded the same way; the reason is told to the merchant and the payer.
 */
export type DuplicatePaymentReason = (typeof DUPLICATE_PAYMENT_REASONS)[number];

/** Holds and announces the full refund of `amountMinor`, credited without fee by the caller; returns the refund. */
export type DuplicatePaymentRefund = (
  tx: Queryable,
  attempt: AttemptRow,
  amountMinor: number,
  providers: LiveProviders | undefined,
  reason: DuplicatePaymentReason,
) => Promise<{ id: string }>;

let handedIn: DuplicatePaymentRefund | null = null;

export function setDuplicatePaymentRefund(refund: DuplicatePaymentRefund): void {
  handedIn = refund;
}

export function duplicatePaymentRefund(): DuplicatePaymentRefund {
  if (!handedIn) throw new Error('no refund of duplicate payments was handed in (src/refunds/sika-refunds.ts)');
  return handedIn;
}
