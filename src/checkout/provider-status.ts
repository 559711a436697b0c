// What a provider says about an attempt, applied: one path for the payer's refresh, the status-check
// worker, Paystack's webhooks and MTN's callbacks (each of those only tells us to ask). The provider is
// asked outside any transaction; the answer is applied in one.
import type { Db, Queryable } from '../db/index.ts';
import type { CollectionRail, LiveProviders, StatusCheck } from '../rails/index.ts';
import { railInput } from './attempt-rail-input.ts';
import { attemptMachine, type AttemptRow } from './model.ts';
import { applyOutcome, outcomeTarget } from './payments.ts';
import * as store from './store.ts';

/**
 * An attempt whose create answer was lost and which its provider still has no record of after this long
 * never reached it: it is cancelled (the payer may try again; it counts as no failed try).
 */
export const UNCONFIRMED_GRACE_S = 120;

/** How long the status checks leave a payer on a provider's card page before its "abandoned" ends the attempt. */
export const CARD_PAGE_GRACE_S = 30 * 60;
/** The source the status-check worker applies outcomes under. */
export const STATUS_CHECK_SOURCE = 'status_check';

export interface ProviderStatusDeps {
  db: Db;
  checkoutUrlHost: string;
  /** The configured Live providers (a duplicate payment is refunded through the one that took it). */
  providers?: LiveProviders;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** Asks the attempt's provider and applies a final answer. Throws when the provider cannot be asked. */
export async function settleFromProvider(
  deps: ProviderStatusDeps,
  adapter: CollectionRail,
  attempt: AttemptRow,
  source: string,
): Promise<AttemptRow> {
  const check = await adapter.status(railInput(attempt));
  let outcome = check.outcome;
  // A hosted card page reads "abandoned" from its creation until it is paid: the background checks leave the
  // payer this long on it; the payer's own return to our page (a refresh) ends it at once.
  if (
    outcome === 'cancelled' &&
    attempt.rail === 'card' &&
    source === STATUS_CHECK_SOURCE &&
    Date.now() - attempt.created_at.getTime() < CARD_PAGE_GRACE_S * 1000
  )
    outcome = 'pending';
  if (outcome === 'unknown') {
    const age = Date.now() - attempt.created_at.getTime();
    if (attempt.status !== 'pending' || age < UNCONFIRMED_GRACE_S * 1000) return attempt;
    outcome = 'cancelled';
    source = 'provider_has_no_record';
  }
  if (outcome === 'pending') {
    if (attempt.status === 'pending' && check.rawStatus && check.rawStatus !== attempt.raw_status) {
      return deps.db.transaction((tx) => store.updateAttemptProvider(tx, attempt.id, { rawStatus: check.rawStatus }));
    }
    return attempt;
  }
  const target = outcomeTarget(attempt.status, outcome);
  if (attempt.status !== target && !attemptMachine.canTransition(attempt.status, target)) {
    // A provider that changes its mind about a closed attempt (e.g. paid after it had said failed): nothing is
    // applied automatically; money taken on it needs an operator.
    if (outcome === 'paid' || outcome === 'amount_mismatch') {
      deps.log?.error(
        { attempt_id: attempt.id, status: attempt.status, provider: attempt.provider, raw_status: check.rawStatus },
        'provider reports money taken on a closed attempt; an operator must review it',
      );
    }
    return attempt;
  }
  const providerStatus = check.outcome === 'unknown' ? undefined : check.rawStatus;
  const ctx = {
    checkoutUrlHost: deps.checkoutUrlHost,
    source,
    providerStatus,
    receivedMinor: check.amountMinor,
    facts: factsOf(check),
    providers: deps.providers,
  };
  return (await deps.db.transaction((tx) => applyOutcome(tx, attempt.id, outcome, ctx, attempt))).attempt;
}

/** How a provider's notification names an attempt: by the provider's reference, or by our attempt id. */
export type AttemptNamed = { providerReference: string } | { attemptId: string };

/**
 * The attempt a provider's notification names, read once (the caller passes it on to settleFromProvider,
 * which locks it again only in the transaction that applies the answer). By our id, only an attempt that
 * provider holds under a reference of ours; null when there is none.
 */
export async function attemptNamedBy(db: Queryable, provider: string, named: AttemptNamed): Promise<AttemptRow | null> {
  if ('providerReference' in named) return store.findAttemptByProviderReference(db, provider, named.providerReference);
  const attempt = await store.findAttempt(db, named.attemptId);
  return attempt && attempt.provider === provider && attempt.provider_reference ? attempt : null;
}

/**
 * What a status answer tells beyond the outcome. A provider's own "cancelled" (Paystack's abandoned card page)
 * is not final there: the payer may still complete it, so the attempt is kept under watch (abandoned).
 */
export const factsOf = (check: StatusCheck) => ({
  ...(check.providerTransactionId ? { providerTransactionId: check.providerTransactionId } : {}),
  ...(check.card ? { card: check.card } : {}),
  ...(check.failureReason ? { failureReason: check.failureReason } : {}),
  abandoned: check.outcome === 'cancelled',
});
