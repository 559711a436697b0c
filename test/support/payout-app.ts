// The app of the payout test files (test/payouts/*.test.ts): one per describe block, the Live payout simulator its
// payout rail, and the steps those files share on it (./payouts-fixtures.ts payoutSteps).
import { LivePayoutSimulator } from '../../src/rails/payouts.ts';
import { payoutSteps } from './payouts-fixtures.ts';
import { useTestApp } from './hooks.ts';

/** Registers the hooks that start and close the app (./hooks.ts); `rail` is the simulator Live payouts go to. */
export function usePayoutApp(env: Record<string, string> = {}) {
  const rail = new LivePayoutSimulator();
  const t = useTestApp(env, { payoutRail: rail });
  return { t, rail, ...payoutSteps(() => t) };
}
