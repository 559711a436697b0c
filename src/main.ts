// Process entry: config -> storage -> app -> workers -> graceful shutdown.
import { loadConfig, ConfigError } from './config.ts';
import { openDb } from './db/index.ts';
import { buildApp } from './http/app.ts';
import { createLiveProviders } from './rails/live-config.ts';
import { startWorkers } from './workers.ts';

const SHUTDOWN_TIMEOUT_MS = 15_000;
/** Connections of the background workers' own pool (delivery has at most 8 tries in flight per endpoint). */
const WORKER_POOL_SIZE = 6;

async function main(): Promise<void> {
  let config;
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
  const providers = createLiveProviders(config);
  const app = await buildApp({ config, db, providers });
  if (config.livePayoutSimulator) app.log.warn('LIVE_PAYOUT_SIMULATOR is on: Live payouts go to the simulator, no money moves');
  app.log.info({ providers: providers.ids() }, 'Live providers');
  // On PostgreSQL the workers get connections of their own: an API under full load must not starve
  // webhook delivery (measured: deliveries fell seconds behind while requests held the whole pool).
  const workerDb = config.workersEnabled && db.kind === 'postgres' ? await openDb(config, { migrate: false, poolSize: WORKER_POOL_SIZE }) : db;
  const workers = config.workersEnabled ? startWorkers({ db: workerDb, log: app.log, config, providers }) : null;

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
    if (workerDb !== db) await workerDb.close();
    await db.close();
    app.log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ host: config.host, port: config.port });
  app.log.info({ storage: db.kind, base_url: config.baseUrl, docs: `${config.baseUrl}/docs` }, 'Sika is ready');
  if (!config.metricsOnApiPort && config.metricsPort === null) app.log.info('/metrics is not served: set METRICS_TOKEN (Bearer on the API port) or METRICS_PORT (a port of its own)');
  if (config.webhookAllowPrivateTargets && !/^http:\/\/(127\.|localhost|\[::1\])/.test(config.baseUrl)) {
    app.log.warn('WEBHOOK_ALLOW_PRIVATE_TARGETS is on: merchants can aim webhooks at this network');
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
