// npm run bench: every figure the issues ask for, each next to a baseline measured in the same run, on
// PostgreSQL (a fresh database, dropped at the end) and on embedded PGlite (a fresh temp data dir).
// Tables on stdout; the same figures in bench/REPORT.md and bench/report.json.
//
//   BENCH_DURATION_S   seconds per measured run (default 10)
//   BENCH_CONNECTIONS  concurrent connections (default 50)
//   BENCH_WARMUP_S     un-measured warm-up before each run (default 2; 0 = none); its failures still count
//   BENCH_STORAGES     postgres,embedded (default both, in that order)
//   BENCH_PG_URL       server to create the bench database on (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_PAGE         off: skip the Chromium page measurement
//   BENCH_RUNS         full runs (default 1); with more, the report adds each check's range over the runs
//   BENCH_SCALE        year: PostgreSQL runs twice, on the empty database and then on one pre-filled by SQL with the
//                      checkout merchant's year (bench/year-data.ts: 5,000,000 sessions and their attempts, events,
//                      deliveries, tries, journal and balance transactions), and compares the two (issue 37)
//   BENCH_YEAR_FRACTION with BENCH_SCALE=year: scales the year's counts (default 1; e.g. 0.01 for a quick run)
//   BENCH_VACUUM_BEFORE_DELIVERY=1 runs VACUUM on the webhook tables before the delivery runs (autovacuum's work,
//                      when the server has it off), to tell the journeys' dead rows apart from the rest
//
// Per storage: (1) the service with its workers on: the payment journey with its webhook, the same
// journey while the receiver times out, and (PostgreSQL) webhook delivery of 1,000 events; (2) the
// service with workers off beside the baseline (a bare Fastify route doing one INSERT, one doing one
// SELECT, through the same driver), in this order: INSERT, session create, payouts, INSERT, SELECT,
// session read, the payer's session view, SELECT (each ratio against the mean of the baseline runs
// around it; on PostgreSQL each group is followed by the same bare route through pipelined
// connections, Sika's technique for its hot statements, for an informational ratio), then (first
// storage) the payer page in Chromium. Every non-2xx response, socket error, timeout and
// idempotent replay is counted; any makes that comparison INVALID and the exit code 1. Missed targets
// are reported, not an exit failure.
import pg from 'pg';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { failures, meanLoad, runLoad, type LoadResult, type LoadSettings, type LoadSpec } from './load.ts';
import { benchPayerPage, type PageResult } from './page.ts';
import { runPacedLoad } from './paced.ts';
import { ROOT, freePort, killAll, startServer, type Server } from './processes.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import {
  CHECK_HEADER,
  limitCheck,
  LOAD_HEADER,
  NOISY_OTHER_LOAD,
  checkRow,
  deliveryChecks,
  loadRow,
  markdownTable,
  rangeRows,
  p99Check,
  pct,
  percentile,
  pageRows,
  ratioCheck,
  table,
  type Check,
  type StorageKind,
} from './report.ts';
import {
  SESSION_BODY,
  checkoutRead,
  journey,
  payouts,
  sessionCreate,
  sessionRead,
  type JourneyTrack,
  type Target,
} from './scenarios.ts';
import { writeFixtures } from './setup.ts';
import { embeddedScratch, postgresScratch, type Scratch } from './storage.ts';
import { benchDelivery, describeDelivery, type DeliveryResult } from './webhooks.ts';
import { seedYear, timeSearches, yearFraction, type SearchTiming, type YearSeed } from './year-data.ts';

function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min} (got "${raw}")`);
  return n;
}

const settings: LoadSettings = {
  durationS: envNumber('BENCH_DURATION_S', 10, 1),
  connections: Math.round(envNumber('BENCH_CONNECTIONS', 50, 1)),
  warmupS: envNumber('BENCH_WARMUP_S', 2, 0),
};
const storages = (process.env.BENCH_STORAGES || 'postgres,embedded').split(',').map((s) => s.trim()) as StorageKind[];
for (const s of storages)
  if (s !== 'postgres' && s !== 'embedded') throw new Error(`BENCH_STORAGES: unknown storage "${s}"`);
const measurePage = process.env.BENCH_PAGE !== 'off';
const runs = Math.round(envNumber('BENCH_RUNS', 1, 1));
const yearScale = process.env.BENCH_SCALE === 'year';
if (process.env.BENCH_SCALE && !yearScale) throw new Error(`BENCH_SCALE: unknown scale "${process.env.BENCH_SCALE}"`);
/** Issue 37: on a year of data, the journey rate at least 0.9x the empty database's, reads and searches p99 within 20%. */
const YEAR_JOURNEY_RATIO_MIN = 0.9;
const YEAR_P99_RATIO_MAX = 1.2;

const now = new Date();
const stamp = now
  .toISOString()
  .replace(/[-:TZ.]/g, '')
  .slice(0, 17); // yyyymmddhhmmssmmm
const STORAGE_NAMES: Record<StorageKind, string> = { postgres: 'PostgreSQL', embedded: 'Embedded (PGlite)' };
const WEBHOOK_WAIT_MS = 15_000;
/** Issue 18's ceilings: start to ready and peak RSS, per storage. */
const STARTUP_MS_MAX = { postgres: 1_000, embedded: 2_000 };
const PEAK_RSS_MB_MAX = { postgres: 200, embedded: 350 };
const MB = 1024 * 1024;
/** Issue 18: session create to checkout.session.completed received, p99, at half the peak journey rate. */
const CREATE_TO_WEBHOOK_P99_MS_MAX = 250;
const EMBEDDED_HEAVY_CONNECTIONS = 10;

/** The environment the children start from: none of the caller's storage or Redis settings leak in. */
/**
 * The headings of the sections this run writes; every other section of bench/REPORT.md is another bench's. The
 * year's section is this run's only under BENCH_SCALE=year: a shorter run keeps the last year's figures.
 */
const OWN_SECTION = yearScale
  ? /^## (PostgreSQL|Embedded \(PGlite\)|How to regenerate)/
  : /^## (PostgreSQL|Embedded \(PGlite\)|How to regenerate)\s*\n/;

/**
 * The sections of the current bench/REPORT.md that other benches wrote (bench:profile, bench:export,
 * bench:settlement, bench:search and notes beside them), each from its ## heading to the next, in their order:
 * a full run rewrites its own sections and keeps these.
 */
function othersSections(): string[] {
  const path = join(ROOT, 'bench', 'REPORT.md');
  const report = existsSync(path) ? readFileSync(path, 'utf8') : '';
  return report
    .split(/\n(?=## )/)
    .slice(1)
    .filter((section) => !OWN_SECTION.test(section))
    .flatMap((section) => [...section.trimEnd().split('\n'), '']);
}

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'DATABASE_URL',
    'DATA_DIR',
    'REDIS_URL',
    'PORT',
    'BASE_URL',
    'LOG_LEVEL',
    'WORKERS',
    'NODE_OPTIONS',
  ])
    delete env[name];
  return { ...env, ...extra };
}

async function startSika(scratch: Scratch, workers: 'on' | 'off'): Promise<Server> {
  const port = await freePort();
  return startServer(
    `sika (workers ${workers})`,
    'src/main.ts',
    childEnv({
      ...scratch.env,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      WORKERS: workers,
      RATE_LIMIT_KEY_PER_S: '1000000',
      RATE_LIMIT_IP_PER_S: '1000000',
      RATE_LIMIT_SESSION_PER_S: '1000000',
    }),
    '/readyz',
  );
}

async function postJson(url: string, body: string, headers: Record<string, string>): Promise<{ id: string }> {
  const response = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text) as { id: string };
}

interface JourneyWebhooks {
  paid: number;
  received: number;
  createToWebhookP50Ms: number;
  createToWebhookP99Ms: number;
}

/** A journey run; afterwards waits for the checkout.session.completed webhook of every paid session. */
/**
 * Journeys and payouts on embedded storage run with fewer connections: PGlite executes one statement and
 * one transaction at a time in the server's own process, so 50 connections of multi-statement work queue
 * past autocannon's 10 s timeout.
 */
const heavyConnections = (usesPostgres: boolean) =>
  usesPostgres ? settings.connections : Math.min(settings.connections, EMBEDDED_HEAVY_CONNECTIONS);

async function runJourney(
  target: Target,
  keys: readonly string[],
  receiver: Receiver,
  label: string,
  journeysPerSec?: number,
): Promise<{ load: LoadResult; webhooks: JourneyWebhooks }> {
  const track: JourneyTrack = { starts: new Map(), paid: new Set() };
  const took: number[] = [];
  const seen = new Set<string>();
  receiver.onEvent = (receipt) => {
    if (receipt.type !== 'checkout.session.completed' || !receipt.objectId || seen.has(receipt.objectId)) return;
    const started = track.starts.get(receipt.objectId);
    if (started === undefined) return;
    seen.add(receipt.objectId);
    took.push(receipt.atMs - started);
  };
  const spec = journey(target, keys, track, label);
  // At a given rate the journeys start one by one, evenly spaced (bench/paced.ts says why not autocannon's rate).
  const load = journeysPerSec
    ? await runPacedLoad(spec, settings, journeysPerSec)
    : await runLoad(spec, { ...settings, connections: heavyConnections(target.usesPostgres) });
  const deadline = Date.now() + WEBHOOK_WAIT_MS;
  while (receiver.mode === 'ok' && [...track.paid].some((id) => !seen.has(id)) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  receiver.onEvent = null;
  took.sort((a, b) => a - b);
  const received = [...track.paid].filter((id) => seen.has(id)).length;
  return {
    load,
    webhooks: {
      paid: track.paid.size,
      received,
      createToWebhookP50Ms: percentile(took, 50),
      createToWebhookP99Ms: percentile(took, 99),
    },
  };
}

function webhookLatencyCheck(load: LoadResult, w: JourneyWebhooks, target: boolean): Check {
  const p99 = w.createToWebhookP99Ms;
  const lost = w.paid - w.received;
  return {
    name: 'session create to webhook, p99, at half the peak journey rate (#18, #37)',
    figure: `p99 ${p99} ms, p50 ${w.createToWebhookP50Ms} ms (${load.reqPerSec.toFixed(0)} journeys/s)`,
    value: p99,
    unit: 'ms',
    against: '-',
    target: target ? `p99 <= ${CREATE_TO_WEBHOOK_P99_MS_MAX} ms` : '-',
    ...(failures(load) > 0 || lost > 0
      ? {
          verdict: 'invalid' as const,
          why: failures(load) > 0 ? `${failures(load)} failed requests` : `${lost} webhooks missing`,
        }
      : !target
        ? { verdict: 'no target' as const, why: '' }
        : p99 > CREATE_TO_WEBHOOK_P99_MS_MAX
          ? { verdict: 'missed' as const, why: `p99 ${p99} ms > ${CREATE_TO_WEBHOOK_P99_MS_MAX} ms` }
          : { verdict: 'met' as const, why: '' }),
  };
}

const gb = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GB`;

const WEBHOOK_TABLES = ['events', 'webhook_deliveries', 'webhook_delivery_tries'];

/**
 * The webhook tables' live and dead rows as the delivery runs find them (the journeys before them leave dead rows,
 * and this bench server runs without autovacuum); with BENCH_VACUUM_BEFORE_DELIVERY=1 they are vacuumed first.
 */
async function prepareWebhookTables(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const vacuumed = process.env.BENCH_VACUUM_BEFORE_DELIVERY === '1';
    if (vacuumed) await client.query(`VACUUM ${WEBHOOK_TABLES.join(', ')}`);
    await client.query('SELECT pg_stat_force_next_flush()').catch(() => {}); // PostgreSQL 15+: this session's counts
    const rows = await client.query<{ relname: string; live: string; dead: string }>(
      'SELECT relname, n_live_tup::text AS live, n_dead_tup::text AS dead FROM pg_stat_user_tables WHERE relname = ANY($1) ORDER BY relname',
      [WEBHOOK_TABLES],
    );
    const counts = rows.rows.map((r) => `${r.relname} ${r.live} live, ${r.dead} dead`).join('; ');
    return `${vacuumed ? 'vacuumed (BENCH_VACUUM_BEFORE_DELIVERY=1); ' : ''}${counts}`;
  } finally {
    await client.end();
  }
}

/** The seeding of a year: rows and time per table, VACUUM ANALYZE, disk. */
function yearSeedRows(y: YearSeed): { seeding: string[][]; disk: string[][] } {
  return {
    seeding: [
      ...y.tables.map((t) => [t.table, t.rows.toLocaleString('en'), `${(t.ms / 1000).toFixed(1)} s`]),
      ['VACUUM ANALYZE', '-', `${(y.vacuumMs / 1000).toFixed(1)} s`],
      ["total (with the chunks' temp tables and the balances)", '-', `${(y.totalMs / 1000).toFixed(1)} s`],
    ],
    disk: [
      ['database (pg_database_size)', gb(y.databaseBytes)],
      ...y.tableBytes.map((t) => [`${t.table} (pg_total_relation_size)`, gb(t.bytes)]),
    ],
  };
}

function yearSeedText(y: YearSeed): string {
  const { seeding, disk } = yearSeedRows(y);
  return [
    `  a year of ${y.sessions.toLocaleString('en')} sessions (fraction ${y.fraction}) seeded in ${(y.totalMs / 1000).toFixed(1)} s, database ${gb(y.databaseBytes)}`,
    table(['table', 'rows', 'seeding time'], seeding),
    table(['disk', 'size'], disk),
  ].join('\n');
}

/**
 * Issue 37: the year database against the empty one of the same run: the journey rate (>= 0.9x), and the p99
 * of the session read, the payer's view and each Payments search within 20% (at least 1 ms of slack:
 * autocannon's latencies are whole milliseconds).
 */
function yearChecks(empty: StorageRun, year: StorageRun): Check[] {
  const p99Within = (name: string, yearP99: number, emptyP99: number, bad: number): Check => {
    const limit = Math.max(emptyP99 * YEAR_P99_RATIO_MAX, emptyP99 + 1);
    return {
      name,
      figure: `p99 ${yearP99.toFixed(2)} ms (${emptyP99 > 0 ? pct(yearP99 / emptyP99) : '-'})`,
      value: yearP99,
      unit: 'ms',
      against: `empty database p99 ${emptyP99.toFixed(2)} ms`,
      target: `p99 <= ${pct(YEAR_P99_RATIO_MAX)} (or +1 ms)`,
      ...(bad > 0
        ? { verdict: 'invalid' as const, why: `${bad} failed requests` }
        : yearP99 > limit
          ? { verdict: 'missed' as const, why: `p99 ${yearP99.toFixed(2)} ms > ${limit.toFixed(2)} ms` }
          : { verdict: 'met' as const, why: '' }),
    };
  };
  const load = (key: string, name: string) =>
    p99Within(
      `${name} p99, a year of data vs empty (#37)`,
      year.loads[key]!.latencyP99Ms,
      empty.loads[key]!.latencyP99Ms,
      failures(year.loads[key]!) + failures(empty.loads[key]!),
    );
  const emptySearch = new Map((empty.searches ?? []).map((t) => [t.name, t]));
  return [
    ratioCheck(
      'payment journeys, one merchant, a year of data vs empty (#37)',
      year.loads.journey!,
      empty.loads.journey!,
      'empty database',
      { ratioMin: YEAR_JOURNEY_RATIO_MIN },
    ),
    load('sessionRead', 'session read'),
    load('checkoutRead', 'payer session view'),
    ...(year.searches ?? [])
      .filter((t) => emptySearch.has(t.name))
      .map((t) =>
        p99Within(`Payments search: ${t.name}, a year vs empty (#37)`, t.p99, emptySearch.get(t.name)!.p99, 0),
      ),
  ];
}

/** A search's blocks per query, hit / read (SearchTiming.io). */
const blocks = (io: SearchTiming['io']) => (io ? `${io.blocksHit.toFixed(0)} / ${io.blocksRead.toFixed(1)}` : '-');

function yearSection(empty: StorageRun, year: StorageRun, format: 'text' | 'markdown'): string {
  const t = format === 'text' ? (h: string[], rows: string[][]) => table(h, rows) : markdownTable;
  const { seeding, disk } = yearSeedRows(year.year!);
  const y = year.year!;
  const emptySearch = new Map((empty.searches ?? []).map((s) => [s.name, s]));
  return [
    `The checkout merchant's year, written by SQL before the scenarios (bench/year-data.ts): ${y.sessions.toLocaleString('en')} sessions (BENCH_YEAR_FRACTION ${y.fraction}), seeded in ${(y.totalMs / 1000).toFixed(0)} s; database ${gb(y.databaseBytes)}.`,
    t(['table', 'rows', 'seeding time'], seeding),
    t(['disk', 'size'], disk),
    "Payments searches (the route's query, 100 timed per kind), empty database and a year. Per query, the blocks it found in PostgreSQL's shared buffers (hit) and read from outside them (the OS cache or the disk), and the time those reads took (track_io_timing):",
    t(
      [
        'search',
        'empty p50 ms',
        'empty p99 ms',
        'year p50 ms',
        'year p99 ms',
        'empty blocks hit / read',
        'year blocks hit / read',
        'year read ms',
      ],
      (year.searches ?? []).map((s) => [
        s.name,
        emptySearch.get(s.name)?.p50.toFixed(2) ?? '-',
        emptySearch.get(s.name)?.p99.toFixed(2) ?? '-',
        s.p50.toFixed(2),
        s.p99.toFixed(2),
        blocks(emptySearch.get(s.name)?.io),
        blocks(s.io),
        s.io ? s.io.readMs.toFixed(2) : '-',
      ]),
    ),
    'The comparisons with the empty database are the last rows of the checks below.',
  ].join('\n\n');
}

interface StorageRun {
  storage: StorageKind;
  description: string;
  startupMs: number;
  peakRssBytes: { workersOn: number | null; workersOff: number | null };
  loads: Record<string, LoadResult>;
  journeyWebhooks: JourneyWebhooks;
  deliveries: DeliveryResult[] | null;
  page: PageResult | { skipped: string } | null;
  checks: Check[];
  serverProblemLines: string[];
  /** BENCH_SCALE=year: the seeding of this run's database (none: the empty database), and the Payments searches. */
  year?: YearSeed;
  searches?: SearchTiming[];
}

async function benchStorage(
  storage: StorageKind,
  receiver: Receiver,
  withPage: boolean,
  year = false,
): Promise<StorageRun> {
  const scratch = storage === 'postgres' ? await postgresScratch(year ? `${stamp}_year` : stamp) : embeddedScratch();
  activeScratch = scratch;
  console.log(`\n${STORAGE_NAMES[storage]}: ${scratch.description}`);
  const usesPostgres = storage === 'postgres';
  const loads: Record<string, LoadResult> = {};
  const problems: string[] = [];
  const run = async (key: string, work: () => Promise<LoadResult>) => {
    const result = await work();
    console.log(
      `  ${result.label}: ${result.reqPerSec.toFixed(1)}/s, p99 ${result.latencyP99Ms} ms${failures(result) ? `, ${failures(result)} FAILED` : ''}`,
    );
    loads[key] = result;
    return result;
  };
  try {
    const f = await writeFixtures(
      { databaseUrl: scratch.env.DATABASE_URL ?? null, dataDir: scratch.env.DATA_DIR ?? null },
      receiver.url,
      stamp,
    );
    let yearSeed: YearSeed | undefined;
    if (year) {
      console.log(`  seeding a year of data for the checkout merchant (fraction ${yearFraction()})`);
      yearSeed = await seedYear(scratch.env.DATABASE_URL!, f.checkout, yearFraction(), (line) => console.log(line));
      console.log(yearSeedText(yearSeed));
    }

    // (1) Workers on: journeys with their webhooks, a receiver that times out, webhook delivery.
    let server = await startSika(scratch, 'on');
    const startupMs = server.startupMs;
    let target: Target = { baseUrl: server.baseUrl, pid: server.pid, usesPostgres };
    let journeyWebhooks: JourneyWebhooks;
    let journeyHalfWebhooks: JourneyWebhooks;
    let deliveries: DeliveryResult[] | null = null;
    let peakOn: number | null;
    try {
      receiver.mode = 'ok';
      const oneMerchant = [f.checkout.testKey];
      const calm = await runJourney(target, oneMerchant, receiver, 'payment journey (one merchant)');
      loads.journey = calm.load;
      journeyWebhooks = calm.webhooks;
      console.log(
        `  payment journey (one merchant): ${calm.load.reqPerSec.toFixed(1)} journeys/s; webhooks ${calm.webhooks.received}/${calm.webhooks.paid}, create-to-webhook p99 ${calm.webhooks.createToWebhookP99Ms} ms`,
      );
      const spread = await runJourney(
        target,
        f.payouts.map((m) => m.testKey),
        receiver,
        `payment journey (${f.payouts.length} merchants)`,
      );
      loads.journeySpread = spread.load;
      console.log(`  payment journey (${f.payouts.length} merchants): ${spread.load.reqPerSec.toFixed(1)} journeys/s`);
      // Create-to-webhook at half the peak one-merchant rate: the latency a merchant sees on a busy, not saturated, day.
      const halfRate = Math.max(1, loads.journey.reqPerSec / 2);
      const paced = await runJourney(
        target,
        oneMerchant,
        receiver,
        `payment journey (one merchant) at ${halfRate.toFixed(0)}/s`,
        halfRate,
      );
      loads.journeyHalf = paced.load;
      journeyHalfWebhooks = paced.webhooks;
      console.log(
        `  payment journey at half the peak (${halfRate.toFixed(0)}/s offered): ${paced.load.reqPerSec.toFixed(1)}/s, create-to-webhook p99 ${paced.webhooks.createToWebhookP99Ms} ms`,
      );
      // Webhook delivery before the timing-out receiver: that run leaves its journeys' webhooks retrying, and
      // their retries (due 30 s and 2 min later) would be sent by the same worker during the delivery runs,
      // uncounted: until issue 37 they were, and the burst was measured at about half its rate.
      if (usesPostgres) {
        console.log(`  before the delivery runs: ${await prepareWebhookTables(scratch.env.DATABASE_URL!)}`);
        deliveries = await benchDelivery(scratch.env.DATABASE_URL!, f, receiver, server.pid);
        for (const d of deliveries) console.log(`  webhook delivery ${describeDelivery(d)}`);
      }
      receiver.mode = 'timeout';
      await run(
        'journeyReceiverTimeout',
        async () => (await runJourney(target, oneMerchant, receiver, 'payment journey, receiver timing out')).load,
      );
      receiver.mode = 'ok';
      peakOn = server.peakRssBytes();
      problems.push(...server.problemLines().filter((line) => !line.includes('webhook try failed')));
    } finally {
      await server.stop();
    }

    // (2) Workers off: the merchant and payer API under load, each ratio's baseline measured just before
    // and just after the runs compared with it (both servers up, one loaded at a time), so a machine that
    // changes speed over the minute between runs moves both sides alike.
    server = await startSika(scratch, 'off');
    target = { baseUrl: server.baseUrl, pid: server.pid, usesPostgres };
    const baselinePort = await freePort();
    const baseline = await startServer(
      'baseline',
      'bench/baseline.ts',
      childEnv({ ...scratch.baselineEnv, PORT: String(baselinePort) }),
      '/healthz',
    );
    let page: StorageRun['page'] = null;
    let peakOff: number | null;
    try {
      const session = await postJson(`${server.baseUrl}/api/v1/sessions`, SESSION_BODY, {
        authorization: `Bearer ${f.checkout.testKey}`,
      });
      const row = await postJson(`${baseline.baseUrl}/baseline/rows`, SESSION_BODY, {});
      const one = (label: string, method: 'GET' | 'POST', path: string, body?: string): LoadSpec => ({
        label,
        url: baseline.baseUrl,
        serverPid: baseline.pid,
        usesPostgres,
        method,
        path,
        requests: [body ? { method, path, headers: { 'content-type': 'application/json' }, body } : { method, path }],
      });
      const baselineInsert = (when: string) =>
        runLoad(one(`baseline INSERT (${when})`, 'POST', '/baseline/rows', SESSION_BODY), settings);
      const baselineSelect = (when: string) =>
        runLoad(one(`baseline SELECT (${when})`, 'GET', `/baseline/rows/${row.id}`), settings);
      // PostgreSQL: the same bare routes through pipelined connections, as Sika's hot statements go.
      const pipedRow = usesPostgres
        ? await postJson(`${baseline.baseUrl}/baseline/piped-rows`, SESSION_BODY, {})
        : null;

      await run('baselineInsertBefore', () => baselineInsert('before'));
      await run('sessionCreate', () => runLoad(sessionCreate(target, f, stamp), settings));
      await run('payouts', () =>
        runLoad(payouts(target, f, stamp), { ...settings, connections: heavyConnections(usesPostgres) }),
      );
      await run('baselineInsertAfter', () => baselineInsert('after'));
      loads.baselineInsert = meanLoad(
        loads.baselineInsertBefore!,
        loads.baselineInsertAfter!,
        'baseline INSERT (mean of before and after)',
      );
      if (usesPostgres)
        await run('baselineInsertPiped', () =>
          runLoad(one('baseline INSERT, pipelined', 'POST', '/baseline/piped-rows', SESSION_BODY), settings),
        );
      await run('baselineSelectBefore', () => baselineSelect('before'));
      await run('sessionRead', () => runLoad(sessionRead(target, f, session.id), settings));
      await run('checkoutRead', () => runLoad(checkoutRead(target, session.id), settings));
      await run('baselineSelectAfter', () => baselineSelect('after'));
      loads.baselineSelect = meanLoad(
        loads.baselineSelectBefore!,
        loads.baselineSelectAfter!,
        'baseline SELECT (mean of before and after)',
      );
      if (pipedRow)
        await run('baselineSelectPiped', () =>
          runLoad(one('baseline SELECT, pipelined', 'GET', `/baseline/piped-rows/${pipedRow.id}`), settings),
        );
      peakOff = server.peakRssBytes();
      if (withPage) {
        page = await benchPayerPage(server.baseUrl, session.id);
        if ('skipped' in page) console.log(`  payer page: skipped (${page.skipped})`);
        else
          console.log(
            `  payer page: ${page.bytesTransferred} B in ${page.requests} requests, DOMContentLoaded ${Math.round(page.domContentLoadedMs)} ms (3G ${Math.round(page.domContentLoaded3gMs)} ms)`,
          );
      }
      problems.push(...server.problemLines(), ...baseline.problemLines());
    } finally {
      await server.stop();
      await baseline.stop();
    }

    // BENCH_SCALE=year: the Payments page's searches, on both PostgreSQL databases (empty and a year).
    const searches =
      yearScale && usesPostgres ? await timeSearches(scratch.env.DATABASE_URL!, f.checkout.merchantId) : undefined;
    const pg = usesPostgres;
    const checks: Check[] = [
      ratioCheck(
        'session create vs INSERT (#2)',
        loads.sessionCreate!,
        loads.baselineInsert!,
        'INSERT',
        pg ? { ratioMin: 0.5, p99MaxMs: 50 } : null,
      ),
      ratioCheck(
        'session read vs SELECT (#2)',
        loads.sessionRead!,
        loads.baselineSelect!,
        'SELECT',
        pg ? { ratioMin: 0.7 } : null,
      ),
      ratioCheck(
        'payer session view vs SELECT (#3)',
        loads.checkoutRead!,
        loads.baselineSelect!,
        'SELECT',
        pg ? { ratioMin: 0.7 } : null,
      ),
      ...(loads.baselineInsertPiped && loads.baselineSelectPiped
        ? [
            ratioCheck(
              'session create vs pipelined INSERT (#18)',
              loads.sessionCreate!,
              loads.baselineInsertPiped,
              'pipelined INSERT',
              { ratioMin: 0.9, p99MaxMs: 50 },
            ),
            ratioCheck(
              'session read vs pipelined SELECT (#18)',
              loads.sessionRead!,
              loads.baselineSelectPiped,
              'pipelined SELECT',
              { ratioMin: 0.8, p99MaxMs: 50 },
            ),
            ratioCheck(
              'payer session view vs pipelined SELECT (#18)',
              loads.checkoutRead!,
              loads.baselineSelectPiped,
              'pipelined SELECT',
              { ratioMin: 0.8, p99MaxMs: 50 },
            ),
          ]
        : []),
      ratioCheck(
        'payment journeys, one merchant, vs INSERT (#18)',
        loads.journey!,
        loads.baselineInsert!,
        'INSERT',
        pg ? { ratioMin: 0.1 } : null,
      ),
      ratioCheck(
        `payment journeys, one merchant, vs ${f.payouts.length} merchants (#18)`,
        loads.journey!,
        loads.journeySpread!,
        `${f.payouts.length} merchants`,
        pg ? { ratioMin: 0.8 } : null,
      ),
      webhookLatencyCheck(loads.journeyHalf!, journeyHalfWebhooks!, pg),
      ratioCheck(
        'payouts vs session create (#5)',
        loads.payouts!,
        loads.sessionCreate!,
        'session create',
        pg ? { ratioMin: 0.4, p99MaxMs: 100 } : null,
      ),
      p99Check('journey API p99, receiver timing out (#4)', loads.journeyReceiverTimeout!, loads.journey!, pg),
      ...(deliveries ? deliveryChecks(deliveries[0]!, deliveries[1]!, pg) : []),
      limitCheck(
        'time from start to ready (#18)',
        startupMs,
        pg ? STARTUP_MS_MAX.postgres : STARTUP_MS_MAX.embedded,
        'ms',
      ),
      limitCheck(
        'peak RSS under the bench load (#18)',
        Math.max(peakOn ?? 0, peakOff ?? 0) / MB,
        pg ? PEAK_RSS_MB_MAX.postgres : PEAK_RSS_MB_MAX.embedded,
        'MB',
      ),
    ];
    if (journeyWebhooks.received < journeyWebhooks.paid) {
      checks.push({
        name: 'every paid journey got its webhook',
        figure: `${journeyWebhooks.received}/${journeyWebhooks.paid}`,
        against: '-',
        target: 'all',
        verdict: 'invalid',
        why: `${journeyWebhooks.paid - journeyWebhooks.received} missing after ${WEBHOOK_WAIT_MS / 1000} s`,
      });
    }
    return {
      storage,
      description: scratch.description,
      startupMs,
      peakRssBytes: { workersOn: peakOn, workersOff: peakOff },
      loads,
      journeyWebhooks,
      deliveries,
      page,
      checks,
      serverProblemLines: problems,
      ...(yearSeed ? { year: yearSeed } : {}),
      ...(searches ? { searches } : {}),
    };
  } finally {
    await scratch
      .drop()
      .catch((error: unknown) => console.error(`could not clean up ${scratch.description}: ${String(error)}`));
    activeScratch = null;
  }
}

let activeScratch: Scratch | null = null;

function onSignal(signal: NodeJS.Signals) {
  console.error(`\n${signal}: stopping servers and dropping the bench storage`);
  killAll();
  const scratch = activeScratch as Scratch | null;
  const timer = setTimeout(() => process.exit(130), 10_000);
  void (scratch ? scratch.drop().catch(() => {}) : Promise.resolve()).then(() => {
    clearTimeout(timer);
    process.exit(130);
  });
}

const mb = (bytes: number | null) => (bytes === null ? '?' : `${(bytes / 1024 / 1024).toFixed(0)} MB`);
const LOAD_ORDER = [
  'sessionCreate',
  'sessionRead',
  'checkoutRead',
  'journey',
  'journeySpread',
  'journeyHalf',
  'journeyReceiverTimeout',
  'payouts',
  'baselineInsertBefore',
  'baselineInsertAfter',
  'baselineSelectBefore',
  'baselineSelectAfter',
  'baselineInsertPiped',
  'baselineSelectPiped',
];

/**
 * Issue 37: what one payment costs, the figure an operator sizes machines by: the CPU of the server and of
 * PostgreSQL per journey at the peak one-merchant rate (the load driver's left out), and the journeys one
 * core can carry.
 */
function costPerPayment(r: StorageRun): string[][] {
  const cpu = r.loads.journey?.cpu;
  if (!cpu) return [];
  const ms = (cpu.serverUsPerReq + (r.storage === 'postgres' ? cpu.postgresUsPerReq : 0)) / 1000;
  return [
    [
      'cost per payment (one journey at the peak rate): CPU per journey',
      `${ms.toFixed(2)} ms (server ${(cpu.serverUsPerReq / 1000).toFixed(2)} ms${r.storage === 'postgres' ? `, PostgreSQL ${(cpu.postgresUsPerReq / 1000).toFixed(2)} ms` : ', PostgreSQL in the server'})`,
    ],
    ['cost per payment: journeys per core-second', (1000 / ms).toFixed(0)],
  ];
}

function sections(r: StorageRun, format: 'text' | 'markdown'): string {
  const t = format === 'text' ? (h: string[], rows: string[][]) => table(h, rows) : markdownTable;
  const loads = LOAD_ORDER.filter((k) => r.loads[k]).map((k) =>
    loadRow(r.loads[k]!, k.startsWith('journey') ? 'journeys/s' : 'req/s'),
  );
  const w = r.journeyWebhooks;
  const facts = [
    ['time from start to ready (as `npm start` runs it, migrated storage)', `${Math.round(r.startupMs)} ms`],
    ['peak RSS of the server (workers on: journeys and webhooks)', mb(r.peakRssBytes.workersOn)],
    ['peak RSS of the server (workers off: sessions, payouts)', mb(r.peakRssBytes.workersOff)],
    ['payment journeys: checkout.session.completed webhooks received', `${w.received} of ${w.paid} paid`],
    [
      'payment journey at full load: session create to webhook received',
      `p50 ${w.createToWebhookP50Ms} ms, p99 ${w.createToWebhookP99Ms} ms`,
    ],
    ...costPerPayment(r),
  ];
  const deliveries = (r.deliveries ?? []).map((d) => [
    d.label,
    String(d.events),
    d.offeredPerSec ? `${d.offeredPerSec}/s` : 'all at once',
    d.deliveriesPerSec.toFixed(0),
    String(d.latencyP50Ms),
    String(d.latencyP99Ms),
    String(d.latencyMaxMs),
    String(d.undelivered),
  ]);
  const parts = [
    t(CHECK_HEADER, r.checks.map(checkRow)),
    `Load runs (latency per request; a journey is 4 requests${r.storage === 'embedded' ? `; journeys and payouts run with ${EMBEDDED_HEAVY_CONNECTIONS} connections on embedded storage` : ''}; CPU in microseconds per request or journey):`,
    t(LOAD_HEADER, loads),
    t(['fact', 'figure'], facts),
  ];
  if (deliveries.length)
    parts.push(
      'Webhook delivery (commit of the event to receipt by the local receiver):',
      t(['run', 'events', 'offered', 'deliveries/s', 'p50 ms', 'p99 ms', 'max ms', 'undelivered'], deliveries),
    );
  if (r.page && !('skipped' in r.page))
    parts.push(
      `Payer page ${r.page.path.replace(/cs_\w+/, '{id}')} in Chromium (phone viewport, cold cache, median of 5):`,
      t(['measure', 'figure'], pageRows(r.page)),
    );
  const noisy = Object.values(r.loads).filter((l) => l.cpu && l.cpu.otherBusy > NOISY_OTHER_LOAD);
  if (noisy.length)
    parts.push(
      `Caution: other work used more than ${NOISY_OTHER_LOAD * 100}% of the machine during: ${noisy.map((l) => l.label).join('; ')}. Those figures are noisy.`,
    );
  return parts.join('\n\n');
}

async function main(): Promise<number> {
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killAll); // never leave a server behind, whatever ends this process
  const machine = `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${(totalmem() / 1024 ** 3).toFixed(1)} GB, Node ${process.version}`;
  console.log(
    `Sika benchmark: ${settings.connections} connections, ${settings.durationS} s per run (+${settings.warmupS} s warm-up), ${machine}`,
  );
  const receiver = await startReceiver();
  // BENCH_RUNS full runs; the tables below are the last run's, the range table every run's.
  const everyRun: StorageRun[][] = [];
  try {
    for (let n = 1; n <= runs; n++) {
      if (runs > 1) console.log(`\n##### run ${n} of ${runs}`);
      const thisRun: StorageRun[] = [];
      for (const [i, storage] of storages.entries()) {
        thisRun.push(await benchStorage(storage, receiver, measurePage && i === 0 && n === runs));
        if (yearScale && storage === 'postgres') {
          const year = await benchStorage(storage, receiver, false, true);
          year.checks.push(...yearChecks(thisRun.at(-1)!, year));
          thisRun.push(year);
        }
      }
      everyRun.push(thisRun);
    }
  } finally {
    await receiver.close();
  }
  const results = everyRun.at(-1)!;
  const rangeOf = (storage: StorageKind) => {
    if (everyRun.length < 2) return '';
    const header = ['check', ...everyRun.map((_, i) => `run ${i + 1}`), 'range', 'target'];
    return [
      `Range over ${everyRun.length} full runs (each run: every scenario above, in the same order; the tables above are the last run's):`,
      '',
      markdownTable(header, rangeRows(everyRun.map((run) => run.find((r) => r.storage === storage)?.checks ?? []))),
    ].join('\n');
  };

  for (const r of results) {
    if (everyRun.length > 1) console.log(`\n${rangeOf(r.storage)}`);
    console.log(
      `\n=== ${STORAGE_NAMES[r.storage]}${r.year ? ' with a year of data' : ''} (${settings.connections} connections, ${settings.durationS} s per run)${r.storage === 'postgres' ? '' : ' - the targets are stated for PostgreSQL'}\n`,
    );
    if (r.year) console.log(`${yearSection(results.find((e) => e.storage === r.storage && !e.year)!, r, 'text')}\n`);
    console.log(sections(r, 'text'));
    if (r.serverProblemLines.length > 0)
      console.log(
        `\n  servers logged ${r.serverProblemLines.length} warning/error lines, first: ${r.serverProblemLines[0]!.slice(0, 300)}`,
      );
  }
  const checks = everyRun.flat().flatMap((r) => r.checks);
  const invalid = checks.filter((c) => c.verdict === 'invalid');
  const missed = checks.filter((c) => c.verdict === 'missed');
  const summary =
    invalid.length > 0
      ? `INVALID: ${invalid.map((c) => `${c.name} (${c.why})`).join('; ')}. A benchmark with errors is not a result.`
      : missed.length > 0
        ? `Targets missed: ${missed.map((c) => `${c.name} (${c.why})`).join('; ')}`
        : 'All targets met.';
  console.log(`\n${summary}`);

  const markdown = [
    '# Sika benchmark report',
    '',
    `Generated by \`npm run bench\` at ${now.toISOString()} on ${machine}; ${settings.connections} connections, ${settings.durationS} s per run after ${settings.warmupS} s of warm-up, load from autocannon on the same machine. Every figure has its baseline from the same run, measured just before and just after it (the mean is the baseline): a machine whose speed drifts moves both sides alike. Targets are the issues' and apply to PostgreSQL; embedded figures are for comparison.`,
    '',
    `**${summary}**`,
    ...results.flatMap((r) => [
      '',
      `## ${STORAGE_NAMES[r.storage]}${r.year ? ' with a year of data (issue 37)' : ''}`,
      '',
      ...(r.year ? [yearSection(results.find((e) => e.storage === r.storage && !e.year)!, r, 'markdown'), ''] : []),
      `${r.description.replace(/ in \/.*$/, '').replace(/, database .*$/, '')}.`,
      '',
      ...(everyRun.length > 1 ? [rangeOf(r.storage), ''] : []),
      sections(r, 'markdown'),
    ]),
    '',
    // The other benches' sections (bench:profile, bench:export, bench:settlement, bench:search): kept.
    ...othersSections(),
    '## How to regenerate',
    '',
    '`npm run bench` (PostgreSQL on 127.0.0.1:5432 or `BENCH_PG_URL`; Chromium at /usr/bin/chromium for the page figures). See the header of bench/run.ts for the settings. On a 2-core machine the load driver, the server and PostgreSQL share the CPUs: the "other load" column says when something else did too.',
    '',
  ].join('\n');
  writeFileSync(join(ROOT, 'bench', 'REPORT.md'), markdown);
  const json = {
    generated_at: now.toISOString(),
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? null,
      memory_bytes: totalmem(),
      node: process.version,
      platform: process.platform,
    },
    settings: { duration_s: settings.durationS, connections: settings.connections, warmup_s: settings.warmupS },
    summary,
    storages: results.map((r) => ({
      storage: r.storage,
      startup_ms: Math.round(r.startupMs),
      peak_rss_bytes: { workers_on: r.peakRssBytes.workersOn, workers_off: r.peakRssBytes.workersOff },
      checks: r.checks,
      loads: r.loads,
      journey_webhooks: r.journeyWebhooks,
      webhook_delivery: r.deliveries,
      payer_page: r.page,
      server_problem_lines: r.serverProblemLines.slice(0, 20),
      ...(r.year ? { year_of_data: r.year } : {}),
      ...(r.searches ? { payments_searches: r.searches } : {}),
    })),
  };
  writeFileSync(join(ROOT, 'bench', 'report.json'), `${JSON.stringify(json, null, 2)}\n`);
  console.log('Report written to bench/REPORT.md and bench/report.json');
  return invalid.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    killAll();
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
