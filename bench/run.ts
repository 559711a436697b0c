// npm run bench: Sika's session create and read against a bare Fastify + one-statement baseline on
// the same storage driver, on PostgreSQL (a fresh database, dropped at the end) and on embedded PGlite
// (a fresh temp data dir). Tables on stdout, the same figures in bench/out/results.json.
//
//   BENCH_DURATION_S   seconds per measured run (default 10)
//   BENCH_CONNECTIONS  concurrent connections (default 50)
//   BENCH_WARMUP_S     un-measured warm-up before each run (default 2; 0 = none); its failures still count
//   BENCH_STORAGES     postgres,embedded (default both, in that order)
//   BENCH_PG_URL       server to create the bench database on (default postgres://postgres@127.0.0.1:5432/postgres)
//
// Every non-2xx response, socket error, timeout and idempotent replay is counted and printed; any of
// them makes the comparison INVALID and the exit code 1 (a benchmark with errors is not a result).
// Missed targets are reported, not an exit failure. A second table gives CPU per request (server,
// PostgreSQL, load driver) and flags runs that shared the machine with other work (Linux only).
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { failures, runLoad, type LoadResult, type LoadSettings, type LoadSpec } from './load.ts';
import { ROOT, freePort, killAll, runCommand, startServer, type Server } from './processes.ts';
import { NOISY_OTHER_LOAD, TARGETS, compare, formatStorage, type Comparison, type StorageKind } from './report.ts';
import { embeddedScratch, postgresScratch, type Scratch } from './storage.ts';

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
for (const s of storages) if (s !== 'postgres' && s !== 'embedded') throw new Error(`BENCH_STORAGES: unknown storage "${s}"`);

const now = new Date();
const stamp = now.toISOString().replace(/[-:TZ.]/g, '').slice(0, 17); // yyyymmddhhmmssmmm
const STORAGE_NAMES: Record<StorageKind, string> = { postgres: 'PostgreSQL', embedded: 'Embedded (PGlite)' };

/** The environment the children start from: none of the caller's storage or Redis settings leak in. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'REDIS_URL', 'PORT', 'BASE_URL', 'LOG_LEVEL', 'WORKERS', 'NODE_OPTIONS']) delete env[name];
  return { ...env, ...extra };
}

const SESSION_BODY = JSON.stringify({
  amount_minor: 50_000,
  invoice_ref: 'INV-BENCH-0001',
  description: 'Benchmark session',
  currency: 'GHS',
  customer: { name: 'Ama Mensah', email: 'ama@example.com' },
  callback_url: 'https://merchant.example.com/return',
  metadata: { source: 'bench', order: '1001' },
});

async function postJson(url: string, body: string, headers: Record<string, string>): Promise<{ id: string }> {
  const response = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text) as { id: string };
}

interface StorageResult {
  storage: StorageKind;
  description: string;
  create: Comparison;
  read: Comparison;
  serverProblemLines: { service: string[]; baseline: string[] };
}

async function benchService(storage: StorageKind, scratch: Scratch): Promise<{ create: LoadResult; read: LoadResult; problems: string[] }> {
  // With embedded storage the CLI must run before the server: one process owns the data dir.
  const cliOut = await runCommand(
    ['bin/sika.mjs', 'merchant', 'create', '--name', 'Bench', '--email', `bench-${stamp}@example.com`, '--json'],
    childEnv({ ...scratch.env, LOG_LEVEL: 'warn' }),
  );
  const merchant = JSON.parse(cliOut.trim().split('\n').at(-1)!) as { test_api_key: string };
  const auth = { authorization: `Bearer ${merchant.test_api_key}` };

  const port = await freePort();
  let server: Server | null = null;
  try {
    server = await startServer(
      'sika',
      'src/main.ts',
      childEnv({
        ...scratch.env,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        WORKERS: 'off',
        RATE_LIMIT_KEY_PER_S: '1000000',
        RATE_LIMIT_IP_PER_S: '1000000',
      }),
      '/readyz',
    );
    const session = await postJson(`${server.baseUrl}/api/v1/sessions`, SESSION_BODY, { ...auth, 'idempotency-key': `bench-${stamp}-seed` });

    let counter = 0;
    const createSpec: LoadSpec = {
      label: 'POST /api/v1/sessions',
      url: server.baseUrl,
      serverPid: server.pid,
      usesPostgres: storage === 'postgres',
      method: 'POST',
      path: '/api/v1/sessions',
      headers: { ...auth, 'content-type': 'application/json' },
      body: SESSION_BODY,
      perRequestHeaders: () => ({ 'idempotency-key': `bench-${stamp}-${storage}-${++counter}` }),
    };
    console.log(`  ${createSpec.label} ...`);
    const create = await runLoad(createSpec, settings);
    const readSpec: LoadSpec = {
      label: 'GET /api/v1/sessions/{id}',
      url: server.baseUrl,
      serverPid: server.pid,
      usesPostgres: storage === 'postgres',
      method: 'GET',
      path: `/api/v1/sessions/${session.id}`,
      headers: auth,
    };
    console.log(`  ${readSpec.label} ...`);
    const read = await runLoad(readSpec, settings);
    return { create, read, problems: server.problemLines() };
  } finally {
    await server?.stop();
  }
}

async function benchBaseline(storage: StorageKind, scratch: Scratch): Promise<{ insert: LoadResult; select: LoadResult; problems: string[] }> {
  const port = await freePort();
  let server: Server | null = null;
  try {
    server = await startServer('baseline', 'bench/baseline.ts', childEnv({ ...scratch.baselineEnv, PORT: String(port) }), '/healthz');
    const row = await postJson(`${server.baseUrl}/baseline/rows`, SESSION_BODY, {});
    const insertSpec: LoadSpec = {
      label: 'baseline INSERT',
      url: server.baseUrl,
      serverPid: server.pid,
      usesPostgres: storage === 'postgres',
      method: 'POST',
      path: '/baseline/rows',
      headers: { 'content-type': 'application/json' },
      body: SESSION_BODY,
    };
    console.log(`  ${insertSpec.label} ...`);
    const insert = await runLoad(insertSpec, settings);
    const selectSpec: LoadSpec = {
      label: 'baseline SELECT',
      url: server.baseUrl,
      serverPid: server.pid,
      usesPostgres: storage === 'postgres',
      method: 'GET',
      path: `/baseline/rows/${row.id}`,
      headers: {},
    };
    console.log(`  ${selectSpec.label} ...`);
    const select = await runLoad(selectSpec, settings);
    return { insert, select, problems: server.problemLines() };
  } finally {
    await server?.stop();
  }
}

let activeScratch: Scratch | null = null;

async function benchStorage(storage: StorageKind): Promise<StorageResult> {
  const scratch = storage === 'postgres' ? await postgresScratch(stamp) : embeddedScratch();
  activeScratch = scratch;
  console.log(`\n${STORAGE_NAMES[storage]}: ${scratch.description}`);
  try {
    const service = await benchService(storage, scratch);
    const baseline = await benchBaseline(storage, scratch);
    const targets = TARGETS[storage];
    return {
      storage,
      description: scratch.description,
      create: compare(service.create, baseline.insert, targets?.create ?? null),
      read: compare(service.read, baseline.select, targets?.read ?? null),
      serverProblemLines: { service: service.problems, baseline: baseline.problems },
    };
  } finally {
    await scratch.drop().catch((error: unknown) => console.error(`could not clean up ${scratch.description}: ${String(error)}`));
    activeScratch = null;
  }
}

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

async function main(): Promise<number> {
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killAll); // never leave a server behind, whatever ends this process
  console.log(
    `Sika benchmark: ${settings.connections} connections, ${settings.durationS} s per run (+${settings.warmupS} s warm-up), ` +
      `${cpus().length} CPUs, Node ${process.version}`,
  );
  const results: StorageResult[] = [];
  for (const storage of storages) results.push(await benchStorage(storage));

  for (const r of results) {
    const title = `${STORAGE_NAMES[r.storage]} (${settings.connections} connections, ${settings.durationS} s)` + (TARGETS[r.storage] ? '' : ' - the targets are stated for PostgreSQL only');
    console.log(formatStorage(title, r.storage, r.create, r.read));
    for (const [who, lines] of Object.entries(r.serverProblemLines)) {
      if (lines.length > 0) console.log(`  ${who} logged ${lines.length} warning/error lines, first: ${lines[0]!.slice(0, 300)}`);
    }
  }

  const invalid = results.flatMap((r) => [r.create, r.read]).filter((c) => c.verdict === 'invalid');
  const missed = results.flatMap((r) => [r.create, r.read]).filter((c) => c.verdict === 'missed');
  console.log(
    invalid.length > 0
      ? `\nINVALID: ${invalid.length} comparison(s) had failed requests; a benchmark with errors is not a result.`
      : missed.length > 0
        ? `\nTargets missed: ${missed.map((c) => `${c.service.label} (${c.why})`).join('; ')}`
        : '\nAll targets met.',
  );

  const noisy = results.flatMap((r) => [r.create.service, r.create.baseline, r.read.service, r.read.baseline]).filter((l) => l.cpu && l.cpu.otherBusy > NOISY_OTHER_LOAD);
  if (noisy.length > 0) console.log(`Caution: ${noisy.length} of ${results.length * 4} runs shared the machine with other work (see the warnings above).`);

  const outDir = join(ROOT, 'bench', 'out');
  mkdirSync(outDir, { recursive: true });
  const json = {
    generated_at: now.toISOString(),
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? null, memory_bytes: totalmem(), node: process.version, platform: process.platform },
    settings: { duration_s: settings.durationS, connections: settings.connections, warmup_s: settings.warmupS },
    noisy_runs: noisy.map((l) => l.label),
    storages: results.map((r) => ({
      storage: r.storage,
      description: r.description,
      session_create: { ...r.create.service, baseline: r.create.baseline, ratio: r.create.ratio, target: r.create.target, verdict: r.create.verdict, why: r.create.why },
      session_read: { ...r.read.service, baseline: r.read.baseline, ratio: r.read.ratio, target: r.read.target, verdict: r.read.verdict, why: r.read.why },
      failed_requests: failures(r.create.service) + failures(r.create.baseline) + failures(r.read.service) + failures(r.read.baseline),
      server_problem_lines: r.serverProblemLines,
    })),
  };
  const outFile = join(outDir, 'results.json');
  writeFileSync(outFile, `${JSON.stringify(json, null, 2)}\n`);
  console.log(`Results written to ${outFile}`);
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
