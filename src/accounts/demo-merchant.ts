// The first run (issue 19): on a developer's own machine (a loopback BASE_URL, src/config/index.ts demoMerchant)
// and an empty database, the server creates a demo merchant once and prints its Test key and a one-time
// dashboard sign-in link (src/main.ts). The first_run row (migration 025) is the claim: written once, by
// one process even when two start at once on one PostgreSQL database; a database that already has
// merchants gets the row and no demo merchant.
import type { Db } from '../db/index.ts';
import { createMerchant } from './service.ts';
import { createSignInLink } from './sign-in-links.ts';
import * as store from './sign-in-link-store.ts';

export const DEMO_MERCHANT_NAME = 'Demo Shop';
export const DEMO_MERCHANT_EMAIL = 'demo@example.com';
/**
 * The demo merchant's Test webhook endpoint: a receiver on the developer's own machine (the usual port of a
 * local app; `sika listen --forward-to` uses the same example). Test payouts need an endpoint paired with the
 * key, and the printed signing secret is what a receiver verifies with. Deliveries to a port nothing listens
 * on fail fast and follow the retry schedule, logged once per outage (src/events/failing-endpoints.ts); the
 * dashboard changes or disables it. `sika listen` signs what it forwards with the same secret.
 */
export const DEMO_WEBHOOK_URL = 'http://localhost:3000/hooks';

export interface DemoMerchant {
  merchant_id: string;
  name: string;
  email: string;
  test_api_key: string;
  test_webhook_url: string;
  test_webhook_secret: string;
  /** The one-time dashboard sign-in link's token (src/accounts/sign-in-links.ts). */
  sign_in_token: string;
}

/** Creates the demo merchant when this is the database's first run and it has no merchants; null otherwise. */
export async function createDemoMerchantOnFirstRun(db: Db): Promise<DemoMerchant | null> {
  if (await store.firstRunDecided(db)) return null;
  const claimed = await db.transaction(async (tx) => (await store.claimFirstRun(tx)) && !(await store.anyMerchant(tx)));
  if (!claimed) return null;
  try {
    // Loopback is allowed here: this runs only when BASE_URL is loopback (the developer's own machine).
    const created = await createMerchant(
      db,
      { name: DEMO_MERCHANT_NAME, email: DEMO_MERCHANT_EMAIL, password: null, webhookUrl: DEMO_WEBHOOK_URL },
      { allowPrivateTargets: true },
    );
    if (!created.test_webhook_secret) throw new Error("the demo merchant's Test webhook endpoint was not created");
    const token = await createSignInLink(db, created.owner_user_id);
    await store.recordDemoMerchant(db, created.merchant_id);
    return {
      merchant_id: created.merchant_id,
      name: DEMO_MERCHANT_NAME,
      email: DEMO_MERCHANT_EMAIL,
      test_api_key: created.test_api_key,
      test_webhook_url: DEMO_WEBHOOK_URL,
      test_webhook_secret: created.test_webhook_secret,
      sign_in_token: token,
    };
  } catch (error) {
    // Not decided after all: the next start tries again.
    await store.releaseFirstRun(db).catch(() => {});
    throw error;
  }
}
