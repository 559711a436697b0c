// Provider status checks (DESIGN): an attempt still pending 5 minutes after it started is checked with
// its provider through the rail adapter, then on a backoff until it is final or expired; a Live attempt that
// expired is still asked for a day (a payer may approve late: money taken is never dropped). A late success,
// failure or reversal found this way is applied and announced like any other outcome. The provider is
// called outside any transaction; the claim has already set the next check, so a crash or a provider
// that does not answer only delays the attempt to its next turn.
import type { Db } from '../db/index.ts';
import { LiveProviders, railOfAttempt, type CollectionRail } from '../rails/index.ts';
import type { AttemptRow } from './model.ts';
import { settleFromProvider, STATUS_CHECK_SOURCE } from './provider-status.ts';
import * as store from './store.ts';

export const STATUS_CHECK_FIRST_AFTER_S = 5 * 60;
export const STATUS_CHECK_INTERVAL_MAX_S = 60 * 60;
/** How long after it started an expired Live attempt is still asked about. */
export const LATE_SUCCESS_WINDOW_S = 24 * 60 * 60;
const STATUS_CHECKS_PER_PASS = 50;

export interface StatusCheckDeps {
  db: Db;
  checkoutUrlHost: string;
  /** The configured Live providers (an attempt is asked through the provider it was recorded with). */
  providers?: LiveProviders;
  /** The adapter of an attempt (default: the one it was recorded with). */
  railOf?: (attempt: AttemptRow) => CollectionRail | null;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** One pass: claims due attempts and checks each with its provider. Returns how many outcomes were applied. */
export async function checkPendingAttempts(deps: StatusCheckDeps): Promise<number> {
  const providers = deps.providers ?? LiveProviders.none();
  const railOf = deps.railOf ?? ((attempt: AttemptRow) => railOfAttempt(attempt, providers));
  const due = await store.claimStatusChecks(
    deps.db,
    STATUS_CHECK_FIRST_AFTER_S,
    STATUS_CHECK_INTERVAL_MAX_S,
    STATUS_CHECKS_PER_PASS,
    LATE_SUCCESS_WINDOW_S,
  );
  let applied = 0;
  for (const attempt of due) {
    const adapter = railOf(attempt);
    if (!adapter) continue;
    try {
      const after = await settleFromProvider(deps, adapter, attempt, STATUS_CHECK_SOURCE);
      if (after.status !== attempt.status) applied++;
    } catch (error) {
      deps.log?.warn(
        { err: error, attempt_id: attempt.id },
        'provider status check failed; the attempt is checked again at its next turn',
      );
    }
  }
  return applied;
}
