import type { Environment } from '../accounts/model.ts';
import type { Rail } from '../checkout/fees.ts';
import { testSimulator } from './test-simulator.ts';
import type { CollectionRail } from './types.ts';

export * from './types.ts';

/** Cash is collected by our own branch tellers, so it needs no outside provider in either environment. */
const branchCash: CollectionRail = {
  ...testSimulator,
  provider: 'sika_branch',
  async initiate() {
    return { providerReference: '', rawStatus: 'AWAITING_DEPOSIT', verificationRequired: false, instructions: {} };
  },
  async status() {
    return { rawStatus: 'AWAITING_DEPOSIT', outcome: 'pending' };
  },
};

/**
 * The adapter for a rail in an environment, or null when none is configured. Test uses the simulator
 * for every rail. Live has no provider integration yet except cash at branches: the others answer
 * PROVIDER_RAIL_UNAVAILABLE honestly rather than pretend.
 */
export function railFor(environment: Environment, rail: Rail, liveAdapters: Partial<Record<Rail, CollectionRail>> = {}): CollectionRail | null {
  if (environment === 'test') return rail === 'cash' ? { ...branchCash, provider: 'sika_test' } : testSimulator;
  if (rail === 'cash') return branchCash;
  return liveAdapters[rail] ?? null;
}
