// Provider status checks (DESIGN): an attempt still pending 5 minutes after it started is checked with
// its provider through the rail adapter, then on a backoff until it is final or expired. A late success,
// failure or reversal found this way is applied and announced like any other outcome. The provider is
// called outside any transaction; the claim has already set the next check, so a crash or a provider
// that does not answer only delays the attempt to its next turn.
import type { Db } from '../db/index.ts';
import { railFor, type CollectionRail } from '../rails/index.ts';
import type { AttemptRow } from './model.ts';
import { railInput } from './attempts.ts';
import { applyOutcome } from './payments.ts';
import * as store from './store.ts';

export const STATUS_CHECK_FIRST_AFTER_S = 5 * 60;
export const STATUS_CHECK_INTERVAL_MAX_S = 60 * 60;
const STATUS_CHECKS_PER_PASS = 50;

export interface StatusCheckDeps {
  db: Db;
  checkoutUrlHost: string;
  /** The adapter of an attempt's rail (default: railFor its environment, with no Live providers configured). */
  railOf?: (attempt: AttemptRow) => CollectionRail | null;
  log?: { warn(obj: object, msg: string): void };
}

/** One pass: claims due attempts and checks each with its provider. Returns how many outcomes were applied. */
export async function checkPendingAttempts(deps: StatusCheckDeps): Promise<number> {
  const railOf = deps.railOf ?? ((attempt: AttemptRow) => railFor(attempt.environment, attempt.rail));
  const due = await store.claimStatusChecks(deps.db, STATUS_CHECK_FIRST_AFTER_S, STATUS_CHECK_INTERVAL_MAX_S, STATUS_CHECKS_PER_PASS);
  let applied = 0;
  for (const attempt of due) {
    const adapter = railOf(attempt);
    if (!adapter) continue;
    try {
      const check = await adapter.status(railInput(attempt));
      const outcome = check.outcome;
      if (outcome === 'pending' || outcome === 'unknown') continue;
      await deps.db.transaction((tx) => applyOutcome(tx, attempt.id, outcome, { checkoutUrlHost: deps.checkoutUrlHost, source: 'status_check' }));
      applied++;
    } catch (error) {
      deps.log?.warn({ err: error, attempt_id: attempt.id }, 'provider status check failed; the attempt is checked again at its next turn');
    }
  }
  return applied;
}
