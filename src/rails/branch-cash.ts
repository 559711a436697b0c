// Cash at a bank branch: our own tellers collect it, so it needs no outside provider in either
// environment. The attempt waits for a teller to record the deposit against its slip.
import { testSimulator } from './test-simulator.ts';
import type { CollectionRail } from './types.ts';

export const branchCash: CollectionRail = {
  ...testSimulator,
  provider: 'sika_branch',
  async initiate() {
    return { providerReference: '', rawStatus: 'AWAITING_DEPOSIT', verificationRequired: false, instructions: {} };
  },
  async status() {
    return { rawStatus: 'AWAITING_DEPOSIT', outcome: 'pending' };
  },
};

/** Test cash slips are recorded the same way, under the Test provider's name. */
export const testBranchCash: CollectionRail = { ...branchCash, provider: 'sika_test' };
