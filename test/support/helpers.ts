// Test support: one migrated storage per test file (embedded in memory, a copy of one migrated template, or
// DATABASE_URL when set), one app on it, and a fresh merchant per test for isolation (no truncation between tests).
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { createMerchant, type CreatedMerchant, type WebhookTargetOptions } from '../../src/accounts/service.ts';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { openDb, type Db } from '../../src/db/index.ts';
import { openEmbeddedFromTemplate } from './embedded-template.ts';
import { systemResolver, type Resolver } from '../../src/lib/ssrf.ts';
import { buildApp } from '../../src/app.ts';
import type { LiveProviders } from '../../src/rails/live.ts';
import type { PayoutRail } from '../../src/rails/payouts.ts';

export const storageKind = process.env.DATABASE_URL ? 'postgres' : 'embedded';

export interface TestContext {
  app: FastifyInstance;
  db: Db;
  config: Config;
  /** How this app judges webhook URLs at creation (config.webhookAllowPrivateTargets and its resolver), for createMerchant. */
  webhookTargets: WebhookTargetOptions;
  /** A new merchant with Test and Live keys (and webhook endpoints when a URL is given). */
  merchant(options?: { webhookUrl?: string; payoutApproval?: boolean }): Promise<CreatedMerchant>;
  /** Starts listening on 127.0.0.1 (for real-concurrency tests); returns the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/**
 * options.payoutRail: the Live payout provider (e.g. the LivePayoutSimulator); none by default, as in production.
 * options.webhookResolver: the DNS that judges webhook URLs at creation (the system's by default).
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { payoutRail?: PayoutRail | null; webhookResolver?: Resolver; providers?: LiveProviders } = {},
): Promise<TestContext> {
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'silent',
    WORKERS: 'off',
    BASE_URL: 'http://sika.test',
    // Tests do not want to trip the rate limits unless they ask to.
    RATE_LIMIT_KEY_PER_S: '100000',
    RATE_LIMIT_IP_PER_S: '100000',
    RATE_LIMIT_SESSION_PER_S: '100000',
    REDIS_URL: '',
    // Webhook tests deliver to receivers on 127.0.0.1 while BASE_URL is not loopback; the SSRF tests turn it off.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on',
    // Live money clears at once in tests unless a test asks for clearing times (issue 34's tests do).
    CLEARING_DAYS: 'momo=0,card=0,bank_transfer=0,cash=0',
    ...env,
  });
  // Embedded: a copy of the suite's migrated template (./embedded-template.ts), not ~34 migrations again.
  const db = config.databaseUrl
    ? await openDb({ databaseUrl: config.databaseUrl, dataDir: null })
    : await openEmbeddedFromTemplate();
  const webhookResolver = options.webhookResolver ?? systemResolver;
  const webhookTargets: WebhookTargetOptions = {
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    resolver: webhookResolver,
  };
  const app = await buildApp({
    config,
    db,
    logger: false,
    payoutRail: options.payoutRail ?? null,
    webhookResolver,
    providers: options.providers,
  });
  await app.ready();
  let listening: string | null = null;
  return {
    app,
    db,
    config,
    webhookTargets,
    merchant: (options = {}) =>
      createMerchant(
        db,
        {
          name: `Test Merchant ${randomUUID().slice(0, 8)}`,
          email: `owner-${randomUUID()}@example.com`,
          webhookUrl: options.webhookUrl ?? null,
          payoutApproval: options.payoutApproval ?? false,
        },
        webhookTargets,
      ),
    async listen() {
      if (!listening) {
        // A test that told its providers where to call back (BASE_URL) gave the port too (env.PORT).
        await app.listen({ host: '127.0.0.1', port: env.PORT ? Number(env.PORT) : 0 });
        listening = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      }
      return listening;
    },
    async close() {
      await app.close();
      await db.close();
    },
  };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
