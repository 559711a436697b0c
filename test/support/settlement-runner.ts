// A child process of test/payouts/settlement-race.test.ts: opens DATABASE_URL (migrated by the parent), says
// "ready" on stdout, waits for "go" on stdin, then settles the merchants RUNNER_MERCHANTS names (comma-separated
// ids, Test) one by one with settleMerchant in an order of its own (RUNNER_SEED shuffles them, so the processes
// meet on different merchants), then calls the settlement worker's pass (runDueSettlements) in a loop until
// RUNNER_MS milliseconds have passed, as several server processes' workers would at once. At the end it prints
// one JSON line: {"passes": n, "made": [payout ids it created]}. Any error exits non-zero with the error on stderr.
import { createInterface } from 'node:readline';
import { openDb } from '../../src/db/index.ts';
import { runDueSettlements, settleMerchant } from '../../src/payouts/settlement-run.ts';
import { LiveProviders } from '../../src/rails/live.ts';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('settlement-runner: DATABASE_URL is required');
const runMs = Number(process.env.RUNNER_MS ?? 2_000);
const merchants = (process.env.RUNNER_MERCHANTS ?? '').split(',').filter(Boolean);
let seed = Number(process.env.RUNNER_SEED ?? 1) || 1;
/** A small LCG: the order is the seed's, the same on every run. */
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};
for (let i = merchants.length - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [merchants[i], merchants[j]] = [merchants[j]!, merchants[i]!];
}

const db = await openDb({ databaseUrl, dataDir: null }, { migrate: false, poolSize: 4 });
try {
  const lines = createInterface({ input: process.stdin });
  const go = new Promise<void>((resolve) => {
    lines.on('line', (line) => {
      if (line.trim() === 'go') resolve();
    });
  });
  process.stdout.write('ready\n');
  await go;
  lines.close();
  const deps = { db, providers: LiveProviders.none() };
  const made: string[] = [];
  let passes = 0;
  const until = Date.now() + runMs;
  for (const merchantId of merchants) {
    for (const payout of await settleMerchant(deps, { merchantId, environment: 'test' }, new Date()))
      made.push(payout.id);
  }
  while (Date.now() < until) {
    for (const payout of await runDueSettlements(deps, new Date())) made.push(payout.id);
    passes += 1;
  }
  process.stdout.write(`${JSON.stringify({ passes, made })}\n`);
} finally {
  await db.close();
}
