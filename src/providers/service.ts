// What providers tell us on their own: Paystack's signed webhooks and MTN MoMo's unsigned callbacks.
// Neither changes anything by itself. A webhook is verified (HMAC) before it is read, and then, like a
// callback, it is only a reason to ask the provider about our reference (transaction or transfer verify)
// and apply what the provider answers: the same path as the payer's refresh and the status checks.
import type { Db } from '../db/index.ts';
import type { AttemptRow } from '../checkout/model.ts';
import { attemptNamedBy, settleFromProvider, type ProviderStatusDeps } from '../checkout/provider-status.ts';
import { checkPayoutNow, payoutNamedBy } from '../payouts/processing.ts';
import { checkRefundsNamed } from '../refunds/processing.ts';
import type { LiveProviders } from '../rails/live.ts';
import { providerEventSeen, recordProviderEvent } from './store.ts';

export interface ProviderEventDeps extends ProviderStatusDeps {
  db: Db;
  providers: LiveProviders;
}

export type WebhookVerdict = 'applied' | 'duplicate' | 'ignored';

/** Asks about an attempt a provider named (as just read) and applies the answer; false when that provider is not configured. */
async function settleAttempt(deps: ProviderEventDeps, provider: string, attempt: AttemptRow): Promise<boolean> {
  const adapter = deps.providers.collectionByName(provider);
  if (!adapter) return false;
  await settleFromProvider(deps, adapter, attempt, `${provider}_notification`);
  return true;
}

/**
 * A provider event that names our reference: ask about the attempt or payout it names and apply the answer.
 * Each row is read once here and passed on; only the transaction applying the answer reads it again, locked.
 */
async function settleReference(
  deps: ProviderEventDeps,
  provider: string,
  reference: string,
  kind: 'charge' | 'transfer' | 'any',
): Promise<boolean> {
  if (kind !== 'transfer') {
    const attempt = await attemptNamedBy(deps.db, provider, { providerReference: reference });
    if (attempt && (await settleAttempt(deps, provider, attempt))) return true;
  }
  if (kind !== 'charge') {
    const payout = await payoutNamedBy(deps.db, provider, { providerReference: reference });
    if (payout) {
      await checkPayoutNow(deps.db, deps.providers, payout);
      return true;
    }
  }
  return false;
}

/**
 * A Paystack webhook whose signature was already checked. Duplicates are answered without a second
 * verify call; an event is recorded as handled only after the provider was asked and the answer applied,
 * so a failure (answered 5xx, Paystack retries) is retried in full.
 */
export async function handlePaystackEvent(
  deps: ProviderEventDeps,
  event: { kind: string; event: string; reference: string | null; eventKey: string },
): Promise<WebhookVerdict> {
  if (!event.reference || (event.kind !== 'charge' && event.kind !== 'transfer' && event.kind !== 'refund'))
    return 'ignored';
  if (await providerEventSeen(deps.db, 'paystack', event.eventKey)) return 'duplicate';
  const known =
    event.kind === 'refund'
      ? await checkRefundsNamed(deps.db, deps.providers, 'paystack', { chargeReference: event.reference })
      : await settleReference(deps, 'paystack', event.reference, event.kind);
  await recordProviderEvent(deps.db, {
    provider: 'paystack',
    eventKey: event.eventKey,
    eventType: event.event,
    reference: event.reference,
  });
  return known ? 'applied' : 'ignored';
}

/**
 * An MTN MoMo callback (unsigned, sent once, maybe never): it names the transaction by its reference id or
 * our external id; we only ask MTN about that reference. Anyone can send one, so it costs them a status
 * query at most.
 */
export async function handleMtnCallback(
  deps: ProviderEventDeps,
  named: { referenceId: string | null; externalId: string | null },
): Promise<WebhookVerdict> {
  if (named.referenceId && (await settleReference(deps, 'mtn_momo', named.referenceId, 'any'))) return 'applied';
  if (
    named.referenceId &&
    (await checkRefundsNamed(deps.db, deps.providers, 'mtn_momo', { refundReference: named.referenceId }))
  )
    return 'applied';
  if (named.externalId) {
    // Our id: an attempt, a payout or a refund this provider holds under a reference of ours.
    const attempt = await attemptNamedBy(deps.db, 'mtn_momo', { attemptId: named.externalId });
    if (attempt) return (await settleAttempt(deps, 'mtn_momo', attempt)) ? 'applied' : 'ignored';
    const payout = await payoutNamedBy(deps.db, 'mtn_momo', { payoutId: named.externalId });
    if (payout) {
      await checkPayoutNow(deps.db, deps.providers, payout);
      return 'applied';
    }
    if (await checkRefundsNamed(deps.db, deps.providers, 'mtn_momo', { refundId: named.externalId })) return 'applied';
  }
  return 'ignored';
}
