// npm run bench:settlement (issue 34): one settlement run over 10,000 merchants with 100 balance transactions
// each, on PostgreSQL (a fresh database, dropped at the end). Every merchant has a daily schedule whose period is
// due and a verified Test settlement account; the run is the worker's own pass (runDueSettlements, 200 merchants
// a pass) called until nothing is due, in this process, timed from the first pass to the last. Baselines in the
// same run, on the same database: the same number of plain single-row INSERTs of a payouts-sized row (each its
// own transaction), and the same number of single SELECTs summing one merchant's balance transactions.
// The figures go to stdout and to bench/REPORT.md's "Settlement run" section.
//
//   BENCH_SETTLEMENT_MERCHANTS     merchants (default 10000)
//   BENCH_SETTLEMENT_TRANSACTIONS  balance transactions per merchant (default 100)
//   BENCH_PG_URL                   server to create the bench database on (default postgres://postgres@127.0.0.1:5432/postgres)
//
// Seeding is SQL (generate_series) straight into merchants, recipients, ledger_accounts, journal_entries,
// journal_lines, balance_transactions and settlement_schedules, one payment credit per balance transaction
// (GHS 100.00 charged, GHS 2.50 fee), each table consistent with the others and the cached balances moved to
// match, so the ledger's invariants hold (checked after the run on a sample of merchants). Triggers are off while
// seeding (session_replication_role = replica), as in bench/export.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDb, type Db } from '../src/db/index.ts';
import { latestScheduledRun } from '../src/lib/accra-calendar.ts';
import { ACCOUNT_KINDS, checkInvariants } from '../src/ledger/service.ts';
import { runDueSettlements } from '../src/payouts/settlement-run.ts';
import { LiveProviders } from '../src/rails/live.ts';
import { ROOT } from './processes.ts';
import { postgresScratch } from './storage.ts';

const MERCHANTS = Number(process.env.BENCH_SETTLEMENT_MERCHANTS ?? 10_000);
const TRANSACTIONS = Number(process.env.BENCH_SETTLEMENT_TRANSACTIONS ?? 100);
if (!Number.isSafeInteger(MERCHANTS) || MERCHANTS < 1)
  throw new Error('BENCH_SETTLEMENT_MERCHANTS must be an integer >= 1');
if (!Number.isSafeInteger(TRANSACTIONS) || TRANSACTIONS < 1)
  throw new Error('BENCH_SETTLEMENT_TRANSACTIONS must be an integer >= 1');
const CHARGED_MINOR = 10_000;
const FEE_MINOR = 250;
const NET_MINOR = CHARGED_MINOR - FEE_MINOR;
const DAY_MS = 86_400_000;
/** Merchants whose ledger invariants are checked after the run (all of them would read 1,000,000 entries a query). */
const INVARIANT_SAMPLE = 50;
const SCHEDULE_TIME = '10:00';

const fmt = (n: number) => Math.round(n).toLocaleString('en');

/** The merchants and everything a settlement needs, written with SQL in one transaction. Returns the period due. */
async function seed(databaseUrl: string, stamp: string): Promise<{ periodEnd: Date; seedMs: number }> {
  // The latest daily run at or before now: every schedule's period is due, and the next one is in the future.
  const now = new Date();
  const periodEnd = latestScheduledRun(
    { interval: 'daily', weekly_anchor: 'monday', monthly_anchor: 1, time_of_day: SCHEDULE_TIME },
    new Date(now.getTime() - 10 * DAY_MS),
    now,
  );
  if (!periodEnd) throw new Error('no daily run in the last 10 days');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = performance.now();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    await client.query(
      `CREATE TEMP TABLE bm ON COMMIT DROP AS
       SELECT i, gen_random_uuid() AS id FROM generate_series(1, $1::int) AS i`,
      [MERCHANTS],
    );
    await client.query(
      `INSERT INTO merchants (id, name, email) SELECT id, 'Bench Settlement ' || i, 'bench-settlement-' || i || '-' || $1 || '@example.com' FROM bm`,
      [stamp],
    );
    await client.query(
      `INSERT INTO ledger_accounts (merchant_id, environment, kind)
       SELECT bm.id, 'test', kind FROM bm, unnest($1::text[]) AS kind ORDER BY bm.i, kind`,
      [[...ACCOUNT_KINDS].sort()],
    );
    await client.query(
      `INSERT INTO recipients (id, merchant_id, environment, account_type, network, phone, account_name, verification_status, verified_at)
       SELECT 'rcp_bench_' || i, id, 'test', 'momo', 'mtn', '0241234567', 'Bench Payee', 'verified', now() FROM bm`,
    );
    // The credits, spread over the week before the period's end.
    await client.query(
      `CREATE TEMP TABLE seed ON COMMIT DROP AS
       SELECT bm.i, bm.id AS merchant_id, k, gen_random_uuid() AS entry_id,
              $2::timestamptz - interval '7 days' + (k::double precision / ($1 + 1)) * interval '7 days' AS at
         FROM bm, generate_series(1, $1::int) AS k`,
      [TRANSACTIONS, periodEnd],
    );
    await client.query(
      `CREATE TEMP TABLE acct ON COMMIT DROP AS
       SELECT merchant_id,
              max(id::text) FILTER (WHERE kind = 'provider_clearing')::uuid AS clearing,
              max(id::text) FILTER (WHERE kind = 'merchant_available')::uuid AS available,
              max(id::text) FILTER (WHERE kind = 'fee_revenue')::uuid AS fee
         FROM ledger_accounts WHERE environment = 'test' AND merchant_id IN (SELECT id FROM bm) GROUP BY merchant_id`,
    );
    await client.query(
      `INSERT INTO journal_entries (id, merchant_id, environment, kind, reference_type, reference_id, created_at)
       SELECT entry_id, merchant_id, 'test', 'payment_credit', 'payment', 'att_bench_' || i || '_' || k, at FROM seed ORDER BY i, k`,
    );
    await client.query(
      `INSERT INTO journal_lines (entry_id, account_id, amount_minor)
       SELECT s.entry_id, v.account_id, v.amount_minor
         FROM seed s JOIN acct a ON a.merchant_id = s.merchant_id
        CROSS JOIN LATERAL (VALUES (a.clearing, $1::bigint), (a.available, $2::bigint), (a.fee, $3::bigint)) AS v (account_id, amount_minor)`,
      [CHARGED_MINOR, -NET_MINOR, -FEE_MINOR],
    );
    await client.query(
      `INSERT INTO balance_transactions (entry_id, merchant_id, environment, net_minor, balance_after_minor, created_at)
       SELECT entry_id, merchant_id, 'test', $1, k::bigint * $1, at FROM seed ORDER BY i, k`,
      [NET_MINOR],
    );
    await client.query(
      `UPDATE ledger_accounts SET balance_minor = CASE kind WHEN 'provider_clearing' THEN $1::bigint WHEN 'merchant_available' THEN -$2::bigint ELSE -$3::bigint END
        WHERE environment = 'test' AND kind IN ('provider_clearing', 'merchant_available', 'fee_revenue') AND merchant_id IN (SELECT id FROM bm)`,
      [CHARGED_MINOR * TRANSACTIONS, NET_MINOR * TRANSACTIONS, FEE_MINOR * TRANSACTIONS],
    );
    await client.query(
      `INSERT INTO settlement_schedules (merchant_id, environment, interval, time_of_day, recipient_id, recipient_active_at, next_run_at)
       SELECT id, 'test', 'daily', $1, 'rcp_bench_' || i, $2::timestamptz - interval '30 days', $2 FROM bm`,
      [SCHEDULE_TIME, periodEnd],
    );
    await client.query('COMMIT');
    await client.query(
      'ANALYZE merchants, recipients, ledger_accounts, journal_entries, journal_lines, balance_transactions, settlement_schedules, payouts',
    );
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    await client.end();
  }
  return { periodEnd, seedMs: performance.now() - started };
}

/** The run: the worker's pass until nothing is due. */
async function settlementRun(db: Db): Promise<{
  made: number;
  passes: number;
  ms: number;
  loadBefore: number;
  loadAfter: number;
  progress: string[];
  autovacuum: boolean;
}> {
  const deps = { db, providers: LiveProviders.none() };
  const autovacuum = (await db.query<{ on: string }>(`SELECT current_setting('autovacuum') AS on`))[0]!.on === 'on';
  const started = performance.now();
  const loadBefore = loadavg()[0]!;
  let made = 0;
  let passes = 0;
  const progress: string[] = [];
  for (;;) {
    const now = new Date();
    const settled = await runDueSettlements(deps, now);
    passes += 1;
    made += settled.length;
    if (settled.length === 0) break;
    if (passes % 10 === 0) {
      // Autovacuum may be off (it is on the test server): analyze what the run writes every 2,000 settlements, as
      // autoanalyze would, so no cached plan keeps treating settlement_transactions as the empty table it was.
      if (!autovacuum)
        await db.query('ANALYZE settlement_transactions, payouts, journal_entries, balance_transactions');
      const seconds = (performance.now() - started) / 1000;
      progress.push(`${fmt(made)} after ${seconds.toFixed(0)} s`);
      console.log(`  ${fmt(made)} settlements after ${passes} passes, ${seconds.toFixed(1)} s`);
    }
  }
  return { made, passes, ms: performance.now() - started, loadBefore, loadAfter: loadavg()[0]!, progress, autovacuum };
}

/** Baseline 1: as many plain single-row INSERTs of a payouts-sized row, each its own transaction. */
async function insertBaseline(db: Db, rows: number): Promise<number> {
  await db.query(
    `CREATE TABLE bench_payout_rows (id text PRIMARY KEY, reference text NOT NULL, merchant_id uuid NOT NULL, environment text NOT NULL,
       client_reference text, recipient_id text NOT NULL, status text NOT NULL, amount_minor bigint NOT NULL, fee_minor bigint NOT NULL,
       total_debit_minor bigint NOT NULL, currency text NOT NULL, bank_reference text NOT NULL, reconciliation_status text NOT NULL,
       type text NOT NULL, settlement_period_start timestamptz, settlement_period_end timestamptz, created_at timestamptz NOT NULL DEFAULT now())`,
  );
  const merchantId = '00000000-0000-4000-8000-000000000000';
  const end = new Date();
  const started = performance.now();
  for (let i = 0; i < rows; i++) {
    await db.query(
      `INSERT INTO bench_payout_rows (id, reference, merchant_id, environment, client_reference, recipient_id, status, amount_minor, fee_minor,
         total_debit_minor, currency, bank_reference, reconciliation_status, type, settlement_period_start, settlement_period_end)
       VALUES ($1, $2, $3, 'test', $4, $5, 'paid', $6, 0, $6, 'GHS', $7, 'not_required', 'settlement', NULL, $8)`,
      [
        `po_bench_${i}`,
        `SKP${i}`,
        merchantId,
        `settlement:${i}`,
        `rcp_bench_${i}`,
        NET_MINOR * TRANSACTIONS,
        `TB${i}`,
        end,
      ],
    );
  }
  const ms = performance.now() - started;
  await db.query('DROP TABLE bench_payout_rows');
  return ms;
}

/** Baseline 2: one SELECT per merchant summing its balance transactions (the read a settlement's amount needs). */
async function selectBaseline(db: Db): Promise<number> {
  const merchants = await db.query<{ id: string }>(`SELECT id FROM merchants WHERE name LIKE 'Bench Settlement %'`);
  const started = performance.now();
  for (const m of merchants) {
    await db.query(
      `SELECT coalesce(sum(net_minor), 0)::bigint AS total, count(*)::int AS n FROM balance_transactions WHERE merchant_id = $1 AND environment = 'test'`,
      [m.id],
    );
  }
  return performance.now() - started;
}

function writeReport(markdown: string): void {
  const path = join(ROOT, 'bench', 'REPORT.md');
  const report = readFileSync(path, 'utf8');
  const heading = '## Settlement run (issue 34)';
  const start = report.indexOf(heading);
  let next: string;
  if (start === -1) {
    const anchor = report.indexOf('## How to regenerate');
    next =
      anchor === -1
        ? `${report.trimEnd()}\n\n${markdown}\n`
        : `${report.slice(0, anchor)}${markdown}\n\n${report.slice(anchor)}`;
  } else {
    const end = report.indexOf('\n## ', start + heading.length);
    next = `${report.slice(0, start)}${markdown}\n${end === -1 ? '' : report.slice(end)}`;
  }
  writeFileSync(path, next);
}

async function main(): Promise<void> {
  const stamp = `settlement_${Date.now()}`;
  const scratch = await postgresScratch(stamp);
  const databaseUrl = scratch.env.DATABASE_URL!;
  try {
    // Migrates the fresh database.
    await (await openDb({ databaseUrl, dataDir: null })).close();
    const rows = MERCHANTS * TRANSACTIONS;
    console.log(
      `seeding ${fmt(MERCHANTS)} merchants x ${fmt(TRANSACTIONS)} balance transactions (${fmt(rows)}) on ${scratch.description} ...`,
    );
    const seeded = await seed(databaseUrl, stamp);
    console.log(`seeded in ${(seeded.seedMs / 1000).toFixed(1)} s; period due ${seeded.periodEnd.toISOString()}`);

    const db = await openDb({ databaseUrl, dataDir: null }, { migrate: false });
    let report: string[];
    try {
      console.log('settlement run ...');
      const run = await settlementRun(db);
      console.log(`${fmt(run.made)} settlements in ${(run.ms / 1000).toFixed(1)} s (${run.passes} passes)`);
      const [check] = await db.query<{ settlements: number; amounts: string; rows: number; due: number; left: string }>(
        `SELECT (SELECT count(*)::int FROM payouts WHERE type = 'settlement') AS settlements,
                (SELECT coalesce(sum(amount_minor), 0)::text FROM payouts WHERE type = 'settlement') AS amounts,
                (SELECT count(*)::int FROM settlement_transactions) AS rows,
                (SELECT count(*)::int FROM settlement_schedules WHERE next_run_at <= now()) AS due,
                (SELECT coalesce(sum(-balance_minor), 0)::text FROM ledger_accounts WHERE kind = 'merchant_available') AS left`,
      );
      const sample = await db.query<{ id: string }>(
        `SELECT merchant_id AS id FROM settlement_schedules ORDER BY random() LIMIT ${INVARIANT_SAMPLE}`,
      );
      const problems: string[] = [];
      for (const m of sample) problems.push(...(await checkInvariants(db, m.id)));
      const complete =
        check!.settlements === MERCHANTS &&
        check!.amounts === String(NET_MINOR * rows) &&
        check!.rows === MERCHANTS * (TRANSACTIONS + 1) &&
        check!.due === 0 &&
        check!.left === '0';
      console.log(
        `check: ${check!.settlements} settlements, ${check!.amounts} pesewas, ${check!.rows} settlement rows, ${check!.due} still due, ${check!.left} left available; invariants on ${sample.length}: ${problems.length === 0 ? 'hold' : problems.slice(0, 5).join('; ')}`,
      );

      console.log('baselines ...');
      const selectMs = await selectBaseline(db);
      const insertMs = await insertBaseline(db, MERCHANTS);
      const perSecond = run.made / (run.ms / 1000);
      const insertRate = MERCHANTS / (insertMs / 1000);
      const selectRate = MERCHANTS / (selectMs / 1000);
      report = [
        '## Settlement run (issue 34)',
        '',
        `Generated by \`npm run bench:settlement\` at ${new Date().toISOString()} on ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), ${(totalmem() / 1024 ** 3).toFixed(1)} GB, Node ${process.version}; ${scratch.description.replace(/, database .*/, '')}. ` +
          `${fmt(MERCHANTS)} Test merchants with ${fmt(TRANSACTIONS)} balance transactions each (${fmt(rows)} payment credits of GHS 97.50 net) seeded with SQL (generate_series) in ${(seeded.seedMs / 1000).toFixed(1)} s, ` +
          `each with a verified settlement account and a daily schedule (10:00 Africa/Accra) whose period ${seeded.periodEnd.toISOString()} is due. ` +
          "The run is the worker's own pass, `runDueSettlements` (src/payouts/settlement-run.ts: 200 merchants a pass, each merchant's period a transaction of its own: the schedule locked, its balance read, its unsettled balance transactions listed, one statement writing the payout, its journal entry, its event and its settlement_transactions rows), called in the bench process until a pass settles nothing. " +
          "Baselines in the same run on the same database, one connection, one statement each: as many single-row INSERTs of a payouts-sized row (each its own transaction), and as many SELECTs summing one merchant's balance transactions.",
        '',
        '| figure | value |',
        '|---|---|',
        `| settlement run | ${fmt(run.made)} settlements in ${(run.ms / 1000).toFixed(1)} s (${run.passes} passes): **${perSecond.toFixed(0)} settlements/s**, ${(run.ms / run.made || 0).toFixed(1)} ms each |`,
        `| progress (settlements after seconds) | ${run.progress.join('; ')} |`,
        `| autovacuum on the server | ${run.autovacuum ? 'on' : 'off: the bench runs ANALYZE on the tables the run writes every 10 passes, inside the timed run, as autoanalyze would'} |`,
        `| 1-minute load average before / after the run (2 CPUs; other work on the machine shows here) | ${run.loadBefore.toFixed(1)} / ${run.loadAfter.toFixed(1)} |`,
        `| balance transactions paid out | ${fmt(check!.rows - check!.settlements)} (+ ${fmt(check!.settlements)} settlements' own entries) |`,
        `| baseline: single-row INSERT of a payouts-sized row | ${fmt(MERCHANTS)} in ${(insertMs / 1000).toFixed(1)} s: ${insertRate.toFixed(0)}/s |`,
        `| baseline: one SELECT sum over a merchant's ${fmt(TRANSACTIONS)} balance transactions | ${fmt(MERCHANTS)} in ${(selectMs / 1000).toFixed(1)} s: ${selectRate.toFixed(0)}/s |`,
        `| settlement / INSERT | ${(perSecond / insertRate).toFixed(2)} |`,
        `| every merchant settled once, amounts = the balances, nothing left available or due; invariants on ${sample.length} merchants | ${complete ? 'yes' : 'NO'}; ${problems.length === 0 ? 'hold' : 'BROKEN'} |`,
      ];
    } finally {
      await db.close();
    }
    console.log(`\n${report.join('\n')}\n`);
    writeReport(report.join('\n'));
  } finally {
    await scratch.drop();
  }
}

await main();
