// Webhook delivery on PostgreSQL: events written the way the service writes them (the outbox, in a
// transaction), by this process, while the server's delivery worker sends them to the bench receiver,
// spread over ten endpoints (ten merchants, each with its own Test endpoint on its own path of the
// receiver). Latency runs from the moment the commit returned to the moment the receiver had the
// request. Two runs: paced (5,000 events offered at a steady 500/s, one small transaction every 10 ms:
// the issue's latency target) and burst (10,000 events committed at once: how fast the worker drains a
// backlog). Duplicates (at-least-once), how evenly the endpoints were served and the CPU per delivery
// are reported too.
//
// Standalone, the delivery part only (a fresh database, a server with its workers on, dropped at the end):
//   node --import tsx bench/webhooks.ts
//   BENCH_PG_URL               server to create the bench database on (as npm run bench)
//   BENCH_WEBHOOK_ROOTS        label=dir,... checkouts of Sika to run the server from, one after the other
//                              on the same database, e.g. before=/tmp/sika-old,after=. (default: this one)
//   BENCH_WEBHOOK_REPEAT       rounds over those checkouts (default 1)
//   BENCH_WEBHOOK_BARE         off: skip the bare baseline (a loop POSTing the same bodies to the same
//                              receiver with the worker's concurrency, in a process of its own)
//   BENCH_WEBHOOK_PROFILE      a directory: the server runs with --cpu-prof into it and its profile is
//                              summarised; with pg_stat_statements preloaded on BENCH_PG_URL's server (a
//                              private one), each run's statements are listed too
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMerchant } from '../src/accounts/service.ts';
import { openDb, type Db } from '../src/db/index.ts';
import { Statement } from '../src/db/statement.ts';
import { eventPayload, type EventInput } from '../src/events/outbox.ts';
import { eventCtes } from '../src/events/outbox-store.ts';
import { DELIVERIES_DUE_CHANNEL } from '../src/events/model.ts';
import { summariseCpuProfile } from './cpu-profile-summary.ts';
import { ROOT, freePort, killAll, startServer, type Server } from './processes.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { percentile } from './report.ts';
import type { Fixtures } from './setup.ts';
import { postgresScratch } from './storage.ts';

export interface DeliveryResult {
  label: string;
  events: number;
  /** Endpoints the events were spread over (round robin). */
  endpoints: number;
  offeredPerSec: number | null;
  deliveriesPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  undelivered: number;
  /** Events that arrived more than once (at-least-once; none in the normal case). */
  duplicates: number;
  /** Fairness: how far apart the endpoints received their last event (ms); near 0 when they share the worker evenly. */
  endpointFinishSpreadMs: number;
  /**
   * CPU per delivery (µs) of the server process and of the PostgreSQL backends serving it (the worker's claims
   * and records), when known (Linux, local server, serverPid given). Not other databases' backends (on a shared
   * server, other people's work), nor this process's, which writes the events: writing an event is the cost of
   * the change it announces (the journey's), given apart as writerCpuUsPerEvent.
   */
  serverCpuUsPerDelivery: number | null;
  postgresCpuUsPerDelivery: number | null;
  /** CPU per event (µs) of the PostgreSQL backends of this process: the outbox inserts and their NOTIFYs. */
  writerCpuUsPerEvent: number | null;
}

/** The application_name of this process's connections, so their backends' CPU is told apart from the server's. */
const WRITER_APPLICATION = 'sika_bench_writer';

export const DELIVERY_ENDPOINTS = 10;
const PACED_EVENTS = 5_000;
const PACED_RATE_PER_S = 500;
const BURST_EVENTS = 10_000;
/** Events per statement when the burst is written (one transaction in all). */
const BURST_STATEMENT_EVENTS = 1_000;
const ALL_IN_WAIT_MS = 60_000;

interface BenchEndpoint {
  merchantId: string;
  apiKeyId: string;
  path: string;
}

/** Ten merchants, each with a Test endpoint on its own path of the receiver (an event goes to its key's endpoints). */
async function benchEndpoints(db: Db, receiverUrl: string, stamp: string): Promise<BenchEndpoint[]> {
  const endpoints: BenchEndpoint[] = [];
  for (let i = 0; i < DELIVERY_ENDPOINTS; i++) {
    const url = `${receiverUrl}/e${i}`;
    const m = await createMerchant(
      db,
      {
        name: `Bench Webhooks ${i + 1}`,
        email: `bench-webhooks-${i}-${stamp}@example.com`,
        webhookUrl: url,
        payoutApproval: false,
      },
      { allowPrivateTargets: true },
    );
    const [key] = await db.query<{ id: string }>(
      "SELECT id FROM api_keys WHERE merchant_id = $1 AND environment = 'test'",
      [m.merchant_id],
    );
    endpoints.push({ merchantId: m.merchant_id, apiKeyId: key!.id, path: new URL(url).pathname });
  }
  return endpoints;
}

const eventInput = (endpoint: BenchEndpoint, run: string, n: number): EventInput => {
  const objectId = `bench_${run}_${n}`;
  return {
    merchantId: endpoint.merchantId,
    environment: 'test',
    apiKeyId: endpoint.apiKeyId,
    type: 'bench.delivery',
    objectType: 'bench',
    objectId,
    objectVersion: 1,
    data: { object: { id: objectId, run } },
  };
};

/** Events first..first+count-1 of a run, round robin over the endpoints, in one transaction; their ids. */
async function emitBatch(
  db: Db,
  endpoints: readonly BenchEndpoint[],
  run: string,
  first: number,
  count: number,
): Promise<string[]> {
  const events = Array.from({ length: count }, (_, i) => {
    const input = eventInput(endpoints[(first + i) % endpoints.length]!, run, first + i);
    return { input, payload: eventPayload(input) };
  });
  await db.transaction(async (tx) => {
    for (let start = 0; start < events.length; start += BURST_STATEMENT_EVENTS) {
      const s = new Statement();
      await tx.query(`WITH ${eventCtes(s, events.slice(start, start + BURST_STATEMENT_EVENTS))} SELECT 1`, s.params);
    }
    // As the service's outbox does (src/events/outbox-store.ts): the delivery worker is told at the commit.
    tx.signal(DELIVERIES_DUE_CHANNEL);
  });
  return events.map((e) => e.payload.id);
}

const CLOCK_TICKS_PER_S = 100; // USER_HZ

/** utime + stime of a local process, in seconds; undefined when it cannot be read (not Linux, gone). */
function processCpuS(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds so far of the server and of each backend connected to the bench database (by pid). A
 * backend that ends during a run takes its CPU with it: the pools involved keep theirs open while busy.
 */
async function cpuSeconds(
  db: Db,
  serverPid: number,
): Promise<{ serverS: number | undefined; backendS: Map<number, number>; writerS: Map<number, number> }> {
  const backends = await db.query<{ pid: number; application_name: string }>(
    'SELECT pid, application_name FROM pg_stat_activity WHERE datname = current_database()',
  );
  const backendS = new Map<number, number>();
  const writerS = new Map<number, number>();
  for (const { pid, application_name } of backends) {
    const cpuS = processCpuS(pid);
    if (cpuS !== undefined) (application_name === WRITER_APPLICATION ? writerS : backendS).set(pid, cpuS);
  }
  return { serverS: processCpuS(serverPid), backendS, writerS };
}

function cpuPerDeliveryUs(
  before: Awaited<ReturnType<typeof cpuSeconds>> | null,
  after: Awaited<ReturnType<typeof cpuSeconds>> | null,
  deliveries: number,
) {
  if (!before || !after || deliveries === 0) return { server: null, postgres: null, writer: null };
  const us = (s: number) => Math.round((s * 1e6) / deliveries);
  const spent = (was: Map<number, number>, is: Map<number, number>) => {
    let sum = 0;
    for (const [pid, cpuS] of is) sum += cpuS - (was.get(pid) ?? 0);
    return sum;
  };
  return {
    server: before.serverS === undefined || after.serverS === undefined ? null : us(after.serverS - before.serverS),
    postgres: after.backendS.size === 0 ? null : us(spent(before.backendS, after.backendS)),
    writer: after.writerS.size === 0 ? null : us(spent(before.writerS, after.writerS)),
  };
}

async function measure(
  db: Db,
  endpoints: readonly BenchEndpoint[],
  receiver: Receiver,
  label: string,
  events: number,
  ratePerSec: number | null,
  serverPid?: number,
): Promise<DeliveryResult> {
  const run = `${label.replace(/\W+/g, '_')}_${Date.now()}`;
  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  /** Receipt times of events whose commit time is not known yet (the receipt won the race by microseconds). */
  const early = new Map<string, number>();
  const recorded = new Set<string>();
  let duplicates = 0;
  let lastReceipt = 0;
  const lastReceiptByPath = new Map<string, number>();
  let done: () => void = () => {};
  const allIn = new Promise<void>((resolve) => (done = resolve));
  receiver.mode = 'ok';
  receiver.onEvent = (receipt) => {
    if (receipt.type !== 'bench.delivery' || !receipt.objectId?.startsWith(`bench_${run}_`)) return;
    lastReceiptByPath.set(receipt.path, receipt.atMs);
    const committed = committedAt.get(receipt.eventId);
    if (committed !== undefined) record(receipt.eventId, committed, receipt.atMs);
    else if (early.has(receipt.eventId)) duplicates++;
    else early.set(receipt.eventId, receipt.atMs);
  };
  function record(eventId: string, committed: number, atMs: number) {
    if (recorded.has(eventId)) return void duplicates++; // at-least-once: a duplicate is not a second delivery
    recorded.add(eventId);
    latencies.push(Math.max(0, atMs - committed));
    lastReceipt = Math.max(lastReceipt, atMs);
    if (recorded.size === events) done();
  }

  const cpuBefore = serverPid === undefined ? null : await cpuSeconds(db, serverPid);
  const started = Date.now();
  const batch = ratePerSec === null ? events : Math.max(1, Math.round(ratePerSec / 100)); // every 10 ms when paced
  for (let sent = 0; sent < events; sent += batch) {
    if (ratePerSec !== null) {
      const due = started + (sent / ratePerSec) * 1000;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    const ids = await emitBatch(db, endpoints, run, sent, Math.min(batch, events - sent));
    const now = Date.now();
    for (const id of ids) {
      committedAt.set(id, now);
      const at = early.get(id);
      if (at !== undefined) {
        early.delete(id);
        record(id, now, at);
      }
    }
  }
  const timer = { id: undefined as NodeJS.Timeout | undefined };
  await Promise.race([allIn, new Promise((resolve) => (timer.id = setTimeout(resolve, ALL_IN_WAIT_MS)))]);
  clearTimeout(timer.id);
  // A moment for a late duplicate to show.
  await new Promise((resolve) => setTimeout(resolve, 200));
  receiver.onEvent = null;
  const cpuAfter = serverPid === undefined ? null : await cpuSeconds(db, serverPid);
  const cpu = cpuPerDeliveryUs(cpuBefore, cpuAfter, recorded.size);
  latencies.sort((a, b) => a - b);
  const finishes = [...lastReceiptByPath.values()];
  let firstCommit = Infinity;
  for (const at of committedAt.values()) firstCommit = Math.min(firstCommit, at);
  return {
    label,
    events,
    endpoints: endpoints.length,
    offeredPerSec: ratePerSec,
    deliveriesPerSec: recorded.size / Math.max(0.001, (lastReceipt - firstCommit) / 1000),
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    latencyMaxMs: latencies.at(-1) ?? 0,
    undelivered: events - recorded.size,
    duplicates,
    endpointFinishSpreadMs: finishes.length ? Math.max(...finishes) - Math.min(...finishes) : 0,
    serverCpuUsPerDelivery: cpu.server,
    postgresCpuUsPerDelivery: cpu.postgres,
    writerCpuUsPerEvent: cpu.writer,
  };
}

export interface RunObserver {
  before(label: string): Promise<void>;
  after(label: string, result: DeliveryResult): Promise<void>;
}

/**
 * The delivery runs against a server (workers on) already using databaseUrl and sending to `receiver`:
 * [paced, burst]. The endpoints are its own (ten new merchants), so the fixtures are not needed; with
 * the server's pid the results carry CPU per delivery. observer, when given, is called around each
 * measured run (the standalone run's statement statistics and profile windows).
 */
export async function benchDelivery(
  databaseUrl: string,
  _f: Fixtures | null,
  receiver: Receiver,
  serverPid?: number,
  observer?: RunObserver,
): Promise<DeliveryResult[]> {
  const writerUrl = new URL(databaseUrl);
  writerUrl.searchParams.set('application_name', WRITER_APPLICATION);
  const db = await openDb({ databaseUrl: writerUrl.toString(), dataDir: null }, { migrate: false });
  try {
    const endpoints = await benchEndpoints(db, receiver.url, `${Date.now()}`);
    await measure(db, endpoints, receiver, 'warm-up', 500, PACED_RATE_PER_S);
    const results: DeliveryResult[] = [];
    for (const [label, events, rate] of [
      ['paced', PACED_EVENTS, PACED_RATE_PER_S],
      ['burst', BURST_EVENTS, null],
    ] as const) {
      await observer?.before(label);
      results.push(await measure(db, endpoints, receiver, label, events, rate, serverPid));
      await observer?.after(label, results.at(-1)!);
    }
    return results;
  } finally {
    await db.close();
  }
}

export const describeDelivery = (d: DeliveryResult) =>
  `${d.label}: ${d.events} events over ${d.endpoints} endpoints${d.offeredPerSec ? ` at ${d.offeredPerSec}/s` : ' at once'}: ${d.deliveriesPerSec.toFixed(0)} deliveries/s, ` +
  `p50 ${d.latencyP50Ms} ms, p99 ${d.latencyP99Ms} ms, max ${d.latencyMaxMs} ms, undelivered ${d.undelivered}, duplicates ${d.duplicates}, endpoints finished within ${d.endpointFinishSpreadMs} ms` +
  (d.serverCpuUsPerDelivery === null
    ? ''
    : `; CPU per delivery: server ${d.serverCpuUsPerDelivery} µs, PostgreSQL ${d.postgresCpuUsPerDelivery} µs (writing each event: PostgreSQL ${d.writerCpuUsPerEvent} µs)`);

// ---------------------------------------------------------------------------------------------------
// Standalone

/** A bare client in a process of its own: POSTs `count` bodies like the worker's, `concurrency` at once, keep-alive. */
async function barePosts(receiverUrl: string, count: number, concurrency: number): Promise<number> {
  const script = `
    import http from 'node:http';
    const [url, count, concurrency] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    const body = JSON.stringify({ id: 'evt_bare', type: 'bare.post', created_at: new Date().toISOString(), environment: 'test', livemode: false, version: 1, data: { object: { id: 'bare' } } });
    let next = 0;
    const one = (i) => new Promise((resolve, reject) => {
      const request = http.request(url + '/e' + (i % 10), { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'webhook-id': 'evt_bare' } }, (response) => {
        response.resume();
        response.on('end', resolve);
      });
      request.on('error', reject);
      request.end(body);
    });
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => { while (next < count) await one(next++); }));
    console.log(count / ((performance.now() - started) / 1000));
  `;
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', script, receiverUrl, String(count), String(concurrency)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await once(child, 'exit');
  return Number(out.trim());
}

/** pg_stat_statements of the bench database, when the server preloads it: reset before a run, the top statements after. */
async function statementStats(databaseUrl: string): Promise<{
  reset(): Promise<void>;
  print(label: string, deliveries: number): Promise<void>;
  close(): Promise<void>;
} | null> {
  const db = await openDb({ databaseUrl, dataDir: null }, { migrate: false, poolSize: 1 });
  try {
    await db.exec('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await db.query('SELECT pg_stat_statements_reset()');
  } catch {
    await db.close();
    return null;
  }
  return {
    reset: async () => void (await db.query('SELECT pg_stat_statements_reset()')),
    close: () => db.close(),
    async print(label, deliveries) {
      const rows = await db.query<{ calls: number; total_ms: number; mean_ms: number; rows: number; query: string }>(
        `SELECT calls, total_exec_time AS total_ms, mean_exec_time AS mean_ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          ORDER BY total_exec_time DESC LIMIT 10`,
      );
      const totalMs = rows.reduce((sum, r) => sum + r.total_ms, 0);
      console.log(
        `  statements of the ${label} run (top 10, ${totalMs.toFixed(0)} ms in all; per delivery: calls, µs):`,
      );
      for (const r of rows) {
        console.log(
          `    ${(r.calls / deliveries).toFixed(2).padStart(6)} ${((r.total_ms * 1000) / deliveries).toFixed(0).padStart(5)} µs  mean ${r.mean_ms.toFixed(2)} ms  rows/call ${(r.rows / Math.max(1, r.calls)).toFixed(1)}  ${r.query}`,
        );
      }
    },
  };
}

async function startSika(root: string, databaseUrl: string, profileDir: string | null): Promise<Server> {
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
  const port = await freePort();
  return startServer(
    `sika (${root})`,
    resolvePath(root, 'src/main.ts'),
    { ...env, DATABASE_URL: databaseUrl, PORT: String(port), LOG_LEVEL: 'warn', WORKERS: 'on' },
    '/readyz',
    profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
  );
}

async function main(): Promise<void> {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:TZ.]/g, '')
    .slice(0, 17);
  const roots = (process.env.BENCH_WEBHOOK_ROOTS || `current=${ROOT}`).split(',').map((entry) => {
    const [label, dir] = entry.includes('=') ? (entry.split('=', 2) as [string, string]) : [entry, entry];
    return { label, dir: resolvePath(ROOT, dir) };
  });
  const repeat = Math.max(1, Number(process.env.BENCH_WEBHOOK_REPEAT || 1));
  const profileRoot = process.env.BENCH_WEBHOOK_PROFILE ? resolvePath(process.env.BENCH_WEBHOOK_PROFILE) : null;
  const scratch = await postgresScratch(stamp);
  process.on('SIGINT', () => {
    killAll();
    void scratch.drop().finally(() => process.exit(130));
  });
  console.log(scratch.description);
  const receiver = await startReceiver();
  try {
    await (await openDb({ databaseUrl: scratch.env.DATABASE_URL!, dataDir: null })).close(); // migrations
    const statements = profileRoot ? await statementStats(scratch.env.DATABASE_URL!) : null;
    /** Each measured run's span on the monotonic clock V8's profiles use (µs), to cut the server's profile to it. */
    const windows: { label: string; fromUs: number; toUs: number }[] = [];
    const nowUs = () => Number(process.hrtime.bigint() / 1000n);
    const observer: RunObserver = {
      async before(label) {
        await statements?.reset();
        windows.push({ label, fromUs: nowUs(), toUs: Infinity });
      },
      async after(label, result) {
        windows.at(-1)!.toUs = nowUs();
        await statements?.print(label, result.events);
      },
    };
    for (let round = 1; round <= repeat; round++) {
      if (process.env.BENCH_WEBHOOK_BARE !== 'off') {
        console.log(
          `bare POST loop (64 at once, keep-alive, own process): ${(await barePosts(receiver.url, BURST_EVENTS, 64)).toFixed(0)} posts/s`,
        );
      }
      for (const { label, dir } of roots) {
        const profileDir = profileRoot ? join(profileRoot, `${label}-${round}`) : null;
        if (profileDir) mkdirSync(profileDir, { recursive: true });
        const server = await startSika(dir, scratch.env.DATABASE_URL!, profileDir);
        try {
          windows.length = 0;
          for (const d of await benchDelivery(scratch.env.DATABASE_URL!, null, receiver, server.pid, observer))
            console.log(`[${label}, round ${round}] ${describeDelivery(d)}`);
          const problems = server.problemLines().filter((line) => !line.includes('webhook try failed'));
          if (problems.length) console.log(`  server problems:\n  ${problems.slice(0, 10).join('\n  ')}`);
        } finally {
          await server.stop();
        }
        const profile = profileDir ? readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile')) : undefined;
        if (profileDir && profile)
          for (const w of windows)
            console.log([`  ${w.label} run:`, ...summariseCpuProfile(join(profileDir, profile), w)].join('\n'));
      }
    }
    await statements?.close();
  } finally {
    await receiver.close();
    await scratch.drop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolvePath(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error);
    killAll();
    process.exitCode = 1;
  });
}
