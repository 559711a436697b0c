import type { ApiKeyAuthenticator } from '../accounts/api-keys.ts';
import type { LiveAccessGate } from '../accounts/live-access.ts';
import type { Config } from '../config/index.ts';
import type { Db } from '../db/index.ts';
import type { Resolver } from '../lib/ssrf.ts';
import type { PayoutsRuntime } from '../payouts/runtime.ts';
import type { LiveProviders } from '../rails/live.ts';
import type { RateLimiters } from './rate-limit.ts';

/** What route plugins need: handed to each domain's routes when the app is assembled. */
export interface AppDeps {
  db: Db;
  config: Config;
  authenticator: ApiKeyAuthenticator;
  /** Whether a merchant may do Live work now: approved and not suspended (issue 33). */
  liveAccess: LiveAccessGate;
  limiters: RateLimiters;
  /** The configured Live providers: collection by rail and network, payouts by recipient (none: Live offers cash only, payouts answer PROVIDER_RAIL_UNAVAILABLE). */
  providers: LiveProviders;
  /** The payouts' decision cache and batch writer (payouts/runtime.ts). */
  payouts: PayoutsRuntime;
  /** The DNS that judges webhook URLs when an endpoint is created (with config.webhookAllowPrivateTargets). */
  webhookResolver: Resolver;
}
