// The app of the ledger test files (test/ledger/*.test.ts): one per describe block, and the steps those files share
// on its storage (./ledger.ts ledgerSteps).
import { ledgerSteps } from './ledger.ts';
import { useTestApp } from './hooks.ts';

/** Registers the hooks that start and close the app (./hooks.ts); the steps read it when a test runs them. */
export function useLedgerApp() {
  const t = useTestApp();
  return { t, ...ledgerSteps(() => t) };
}
