import type { ApiKeyAuthenticator } from '../accounts/api-keys.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import type { Resolver } from '../events/ssrf.ts';
import type { PayoutBatchWriter } from '../payouts/batch-writer.ts';
import type { PayoutDecisionCache } from '../payouts/decision-cache.ts';
import type { PayoutRail } from '../rails/payouts.ts';
import type { RateLimiters } from './rate-limit.ts';

/** What route plugins need: handed to each domain's routes when the app is assembled. */
export interface AppDeps {
  db: Db;
  config: Config;
  authenticator: ApiKeyAuthenticator;
  limiters: RateLimiters;
  /** The Live payout provider; null until one is configured (Live payouts then answer PROVIDER_RAIL_UNAVAILABLE). */
  payoutRail: PayoutRail | null;
  /** Recent payout decisions of this process (re-checked by every write). */
  payoutDecisions: PayoutDecisionCache;
  /** Writes each merchant's payouts that arrive together in one statement. */
  payoutWriter: PayoutBatchWriter;
  /** The DNS that judges webhook URLs when an endpoint is created (with config.webhookAllowPrivateTargets). */
  webhookResolver: Resolver;
}
