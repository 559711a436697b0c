import type { Environment } from '../lib/environment.ts';
import type { MomoNetwork } from '../lib/ghana.ts';
import type { LiveProviders } from './live.ts';
import { findRail, type Rail } from './registry.ts';
import type { CollectionRail } from './types.ts';

export * from './types.ts';
export { LiveProviders } from './live.ts';

/**
 * The adapters that may take a new attempt on a rail (and network), in the order they are tried: its
 * descriptor's adapter in that environment (Test: the simulator; cash: our tellers), else in Live the
 * configured providers in LIVE_PROVIDER_ORDER. Empty when nobody serves it: the rail is then not offered.
 */
export function railsFor(
  environment: Environment,
  rail: Rail,
  providers: LiveProviders,
  network: MomoNetwork | null = null,
): CollectionRail[] {
  const descriptor = findRail(rail);
  if (!descriptor) return [];
  const own = descriptor.adapters[environment];
  if (own) return [own];
  return environment === 'live' ? providers.collectionFor(rail, network) : [];
}

/** The first adapter for a new attempt, or null when the rail is not offered there. */
export const railFor = (
  environment: Environment,
  rail: Rail,
  providers: LiveProviders,
  network: MomoNetwork | null = null,
): CollectionRail | null => railsFor(environment, rail, providers, network)[0] ?? null;

/** The adapter an existing attempt was recorded with (its provider), whatever the order says today. */
export function railOfAttempt(
  attempt: { environment: Environment; rail: Rail; provider: string },
  providers: LiveProviders,
): CollectionRail | null {
  const own = findRail(attempt.rail)?.adapters[attempt.environment];
  if (own && own.provider === attempt.provider) return own;
  return attempt.environment === 'live' ? providers.collectionByName(attempt.provider) : null;
}
