import type { Environment } from '../lib/environment.ts';
import { findRail, type Rail } from './registry.ts';
import type { CollectionRail } from './types.ts';

export * from './types.ts';

/**
 * The adapter for a rail in an environment, or null when none is configured: its descriptor's adapter
 * there, else (Live only) a configured Live provider. Test uses the simulator for every rail. Live has no
 * provider integration yet except cash at branches: the others answer PROVIDER_RAIL_UNAVAILABLE honestly
 * rather than pretend.
 */
export function railFor(environment: Environment, rail: Rail, liveAdapters: Partial<Record<Rail, CollectionRail>> = {}): CollectionRail | null {
  const descriptor = findRail(rail);
  if (!descriptor) return null;
  return descriptor.adapters[environment] ?? (environment === 'live' ? (liveAdapters[rail] ?? null) : null);
}
