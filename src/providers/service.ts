// What providers tell us on their own: Paystack's signed webhooks and MTN MoMo's unsigned callbacks.
// Neither changes anything by itself. A webhook is verified (HMAC) before it is read, and then, like a
// callback, it is only a reason to ask the provider about our reference (transaction or transfer verify)
// and apply what the provider answers: the same path as the payer's refresh and the status checks.
import type { Db } from '../db/index.ts';
import { findAttemptByProviderReference, findAttempt } from '../checkout/store.ts';
import { settleFromProvider, type ProviderStatusDeps } from '../checkout/provider-status.ts';
import { checkPayoutNow } from '../payouts/processing.ts';
import { findPayoutById, findPayoutByProviderReference } from '../payouts/payout-store.ts';
import { checkRefundsNamed } from '../refunds/processing.ts';
import { findRefundById } from '../refunds/store.ts';
import type { LiveProviders } from '../rails/live.ts';
import { providerEventSeen, recordProviderEvent } from './store.ts';

export interface ProviderEventDeps extends ProviderStatusDeps {
  db: Db;
  providers: LiveProviders;
}

export type WebhookVerdict = 'applied' | 'duplicate' | 'ignored';

/** A provider event that names our reference: ask about the attempt or payout it names and apply the answer. */
async function settleReference(
  deps: ProviderEventDeps,
  provider: string,
  reference: string,
  kind: 'charge' | 'transfer' | 'any',
): Promise<boolean> {
  if (kind !== 'transfer') {
    const attempt = await findAttemptByProviderReference(deps.db, provider, reference);
    const adapter = attempt ? deps.providers.collectionByName(provider) : null;
    if (attempt && adapter) {
      await settleFromProvider(deps, adapter, attempt, `${provider}_notification`);
      return true;
    }
  }
  if (kind !== 'charge') {
    const payout = await findPayoutByProviderReference(deps.db, provider, reference);
    if (payout) {
      await checkPayoutNow(deps.db, deps.providers, payout.id);
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
    const attempt = await findAttempt(deps.db, named.externalId);
    if (attempt && attempt.provider === 'mtn_momo' && attempt.provider_reference)
      return (await settleReference(deps, 'mtn_momo', attempt.provider_reference, 'charge')) ? 'applied' : 'ignored';
    const payout = await findPayoutById(deps.db, named.externalId);
    if (payout && payout.provider === 'mtn_momo' && payout.provider_reference)
      return (await settleReference(deps, 'mtn_momo', payout.provider_reference, 'transfer')) ? 'applied' : 'ignored';
    const refund = await findRefundById(deps.db, named.externalId);
    if (refund && refund.provider === 'mtn_momo' && refund.provider_reference) {
      return (await checkRefundsNamed(deps.db, deps.providers, 'mtn_momo', {
        refundReference: refund.provider_reference,
      }))
        ? 'applied'
        : 'ignored';
    }
  }
  return 'ignored';
}
