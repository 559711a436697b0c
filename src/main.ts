// Process entry: config -> storage -> app -> workers -> graceful shutdown.
import { createDemoMerchantOnFirstRun, type DemoMerchant } from './accounts/demo-merchant.ts';
import { SIGN_IN_LINK_LIFETIME_S, signInLinkUrl } from './accounts/sign-in-links.ts';
import { loadConfig, ConfigError, type Config } from './config/index.ts';
import { deploymentSettingsOf } from './cli/deployment.ts';
import { recordDeploymentSettings } from './db/deployment-settings.ts';
import { openDb } from './db/index.ts';
import { buildApp } from './app.ts';
import { storageAvailabilityMetrics } from './http/metrics.ts';
import { createLiveProviders } from './rails/live-config.ts';
import { startWorkers } from './workers.ts';

const SHUTDOWN_TIMEOUT_MS = 15_000;

/** The first run's demo merchant, printed once to stdout as a framed block (not a log line: it is for a person). */
function demoMerchantBanner(config: Config, demo: DemoMerchant): string {
  const rows = [
    'Sika is running. This is its first run, so it made you a demo merchant (shown once):',
    '',
    `  Merchant          ${demo.name}, ${demo.merchant_id}`,
    `  Test API key      ${demo.test_api_key}`,
    `  Webhook secret    ${demo.test_webhook_secret}`,
    `                    (Test events are signed with it and sent to ${demo.test_webhook_url})`,
    `  Dashboard         ${signInLinkUrl(config.baseUrl, demo.sign_in_token)}`,
    `                    (a sign-in link for ${demo.email}: it works once, within ${SIGN_IN_LINK_LIFETIME_S / 60} minutes)`,
    '',
    "Next: the README's Quickstart (export SIKA_API_KEY=<the Test API key>, then create a checkout session).",
    'Webhooks: change or disable the endpoint under Developers in the dashboard. For a Sika server that cannot',
    `  reach your machine: \`SIKA_API_KEY=<Test key> npx sika listen --forward-to ${demo.test_webhook_url}\``,
    "  (it signs with the same webhook secret). Until something listens there, the endpoint's failed tries",
    '  are logged once, not per try.',
    `Later: \`npx sika user set-password --email ${demo.email}\` gives the dashboard a password;`,
    `  \`npx sika user sign-in-link --email ${demo.email}\` makes another link. DEMO_MERCHANT=off skips this.`,
  ];
  // Only a top and a bottom rule: a frame's right edge breaks when the terminal wraps the link.
  const rule = '='.repeat(Math.min(100, Math.max(...rows.map((row) => row.length)) + 2));
  return `\n${rule}\n${rows.map((row) => (row ? `  ${row}` : '')).join('\n')}\n${rule}\n\n`;
}

/** Connections of the background workers' own pool (delivery has at most 8 tries in flight per endpoint). */
const WORKER_POOL_SIZE = 6;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const db = await openDb(config);
  // What this deployment runs with, for the `sika` CLI on the same storage (src/cli/deployment.ts).
  await recordDeploymentSettings(db, deploymentSettingsOf(config));
  // Before listening, so the key works as soon as it is printed; printed once the server is ready.
  const demo = config.demoMerchant ? await createDemoMerchantOnFirstRun(db) : null;
  const providers = createLiveProviders(config);
  const app = await buildApp({ config, db, providers });
  if (config.livePayoutSimulator)
    app.log.warn('LIVE_PAYOUT_SIMULATOR is on: Live payouts go to the simulator, no money moves');
  app.log.info({ providers: providers.ids() }, 'Live providers');
  // On PostgreSQL the workers get connections of their own: an API under full load must not starve
  // webhook delivery (measured: deliveries fell seconds behind while requests held the whole pool).
  const workerDb =
    config.workersEnabled && db.kind === 'postgres'
      ? await openDb(config, { migrate: false, poolSize: WORKER_POOL_SIZE })
      : db;
  const workers = config.workersEnabled ? startWorkers({ db: workerDb, log: app.log, config, providers }) : null;
  if (workers) storageAvailabilityMetrics(app.metrics, workers.availability);

  // Embedded storage is this process's alone: `sika` commands run while it runs are sent here (src/cli/forward.ts).
  const cli = db.kind === 'embedded' && config.dataDir ? await serveCliCommands(config, db, app.log) : null;

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests and jobs');
    const timer = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    await app.close(); // stops accepting, waits for in-flight requests
    await workers?.stop();
    await cli?.close();
    if (workerDb !== db) await workerDb.close();
    await db.close();
    app.log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ host: config.host, port: config.port });
  app.log.info({ storage: db.kind, base_url: config.baseUrl, docs: `${config.baseUrl}/docs` }, 'Sika is ready');
  if (demo) {
    app.log.info(
      { merchant_id: demo.merchant_id },
      'first run: demo merchant created (its key and sign-in link are printed, never logged)',
    );
    process.stdout.write(demoMerchantBanner(config, demo));
  }
  if (!config.metricsOnApiPort && config.metricsPort === null)
    app.log.info(
      '/metrics is not served: set METRICS_TOKEN (Bearer on the API port) or METRICS_PORT (a port of its own)',
    );
  if (config.webhookAllowPrivateTargets && !/^http:\/\/(127\.|localhost|\[::1\])/.test(config.baseUrl)) {
    app.log.warn('WEBHOOK_ALLOW_PRIVATE_TARGETS is on: merchants can aim webhooks at this network');
  }
}

/** The CLI's socket in the data dir; a failure to listen is logged, never fatal (the CLI then says the data dir is in use). */
async function serveCliCommands(
  config: Config,
  db: Awaited<ReturnType<typeof openDb>>,
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void },
) {
  const [{ serveCli }, { run }] = await Promise.all([import('./cli/forward.ts'), import('./cli/main.ts')]);
  try {
    return await serveCli({
      db,
      config,
      dataDir: config.dataDir,
      runCommand: run,
      onError: (error) => log.error({ err: error }, 'sika command failed in the server'),
    });
  } catch (error) {
    log.warn({ err: error }, 'sika commands cannot reach this server (no socket in the data dir): stop it to run them');
    return null;
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
