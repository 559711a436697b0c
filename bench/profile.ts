// npm run bench:profile: where the payment journey's time goes. Starts a private PostgreSQL (its own
// data dir and port, pg_stat_statements preloaded, dropped at the end), the server with its workers on
// and a CPU profile, runs the journey load, then prints:
//   - per step (route): requests, mean and summed server time, from the server's own request histogram;
//   - per statement: calls per journey, mean and total execution time, share of PostgreSQL's time;
//   - the server's CPU by package or source file and its hottest functions (self time).
// The figures go to stdout and to bench/REPORT.md's "Where the journey's time goes" section.
//
//   BENCH_DURATION_S, BENCH_CONNECTIONS, BENCH_WARMUP_S   as for npm run bench (defaults 10, 50, 2)
//   BENCH_PROFILE_MERCHANTS   journeys spread over this many merchants (default 1)
//   BENCH_PROFILE_LABEL       heading suffix, e.g. "before" / "after" (default: none)
//   BENCH_PROFILE_SCENARIO    journey (default), session-create, session-read or payer-view
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createMerchant } from '../src/accounts/service.ts';
import { openDb } from '../src/db/index.ts';
import { runLoad } from './load.ts';
import { ROOT, freePort, startServer } from './processes.ts';
import { startReceiver } from './receiver.ts';
import { SESSION_BODY, checkoutRead, journey, sessionCreate, sessionRead, type JourneyTrack } from './scenarios.ts';
import { writeFixtures } from './setup.ts';

const PG_BIN = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].find((dir) =>
  existsSync(join(dir, 'initdb')),
);
const SECTION_HEADING = "## Where the journey's time goes (issue 18)";
const METRICS_TOKEN = 'bench-profile-metrics-token';
const TOP_STATEMENTS = 25;
const TOP_FUNCTIONS = 20;

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const settings = {
  durationS: num('BENCH_DURATION_S', 10),
  connections: num('BENCH_CONNECTIONS', 50),
  warmupS: num('BENCH_WARMUP_S', 2),
};
const merchants = num('BENCH_PROFILE_MERCHANTS', 1);
const label = process.env.BENCH_PROFILE_LABEL ? ` (${process.env.BENCH_PROFILE_LABEL})` : '';
const scenario = process.env.BENCH_PROFILE_SCENARIO ?? 'journey';
if (!['journey', 'session-create', 'session-read', 'payer-view'].includes(scenario))
  throw new Error(`BENCH_PROFILE_SCENARIO: unknown scenario ${scenario}`);
const unit = scenario === 'journey' ? 'journey' : 'request';

interface PrivatePostgres {
  url: string;
  stop(): void;
}

/** A throwaway cluster owned by the postgres user (initdb refuses root), on a free port. */
async function privatePostgres(): Promise<PrivatePostgres> {
  if (!PG_BIN) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'sika-profile-pg-'));
  const asPostgres = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  if (asPostgres.length) {
    const { uid, gid } = {
      uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
      gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
    };
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) => {
    const [bin, ...rest] = [...asPostgres, cmd, ...args];
    const result = spawnSync(bin!, rest, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${cmd} failed: ${result.stderr || result.stdout}`);
  };
  const port = await freePort();
  run(join(PG_BIN, 'initdb'), ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on -c max_connections=200`;
  run(join(PG_BIN, 'pg_ctl'), ['-D', join(dir, 'data'), '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('CREATE DATABASE sika');
  await client.end();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/sika`,
    stop() {
      spawnSync(asPostgres[0] ?? join(PG_BIN, 'pg_ctl'), [
        ...asPostgres.slice(1),
        ...(asPostgres.length ? [join(PG_BIN, 'pg_ctl')] : []),
        '-D',
        join(dir, 'data'),
        '-m',
        'fast',
        'stop',
      ]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** More checkout merchants paired with the receiver, for journeys spread over several balances. */
async function extraMerchants(databaseUrl: string, receiverUrl: string, stamp: string, count: number) {
  const db = await openDb({ databaseUrl, dataDir: null });
  try {
    const out: { merchantId: string; testKey: string; testKeyId: string }[] = [];
    for (let i = 0; i < count; i++) {
      const m = await createMerchant(
        db,
        {
          name: `Bench Checkout ${i + 2}`,
          email: `bench-checkout-${i + 2}-${stamp}@example.com`,
          webhookUrl: receiverUrl,
          payoutApproval: false,
        },
        { allowPrivateTargets: true },
      );
      out.push({ merchantId: m.merchant_id, testKey: m.test_api_key, testKeyId: '' });
    }
    return out;
  } finally {
    await db.close();
  }
}

interface StatementRow {
  query: string;
  calls: number;
  total_ms: number;
  plan_ms: number;
  mean_ms: number;
  rows: number;
}

async function statements(url: string): Promise<StatementRow[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<StatementRow>(
      `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls::int, total_exec_time::float8 AS total_ms, total_plan_time::float8 AS plan_ms, mean_exec_time::float8 AS mean_ms, rows::int
         FROM pg_stat_statements JOIN pg_database d ON d.oid = dbid WHERE d.datname = 'sika' ORDER BY total_exec_time DESC`,
    );
    return rows;
  } finally {
    await client.end();
  }
}

async function resetStatements(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await client.query('SELECT pg_stat_statements_reset()');
  await client.end();
}

interface RouteTime {
  route: string;
  count: number;
  meanMs: number;
  totalS: number;
}

/** The server's request-duration histogram (sum and count per route) read from /metrics. */
async function routeTimes(baseUrl: string): Promise<RouteTime[]> {
  const text = await (
    await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  ).text();
  const sums = new Map<string, { sum: number; count: number }>();
  for (const line of text.split('\n')) {
    const m = /^sika_http_request_duration_seconds_(sum|count)\{([^}]*)\} ([0-9.e+-]+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const route = `${labels.method ?? ''} ${labels.route ?? ''}`.trim();
    const entry = sums.get(route) ?? { sum: 0, count: 0 };
    if (m[1] === 'sum') entry.sum += Number(m[3]);
    else entry.count += Number(m[3]);
    sums.set(route, entry);
  }
  return [...sums.entries()]
    .filter(([, v]) => v.count > 0)
    .map(([route, v]) => ({ route, count: v.count, meanMs: (v.sum / v.count) * 1000, totalS: v.sum }))
    .sort((a, b) => b.totalS - a.totalS);
}

interface CpuNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** Self time per function and per package / source file, from a V8 .cpuprofile. */
function summariseProfile(path: string): {
  byPlace: [string, number][];
  byFunction: [string, number][];
  totalMs: number;
} {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as {
    nodes: CpuNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let totalMs = 0;
  for (const node of profile.nodes) {
    const ms = selfMs.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (ms === 0 || functionName === '(idle)' || functionName === '(program)') continue;
    totalMs += ms;
    const place = placeOf(url, functionName);
    byPlace.set(place, (byPlace.get(place) ?? 0) + ms);
    const fn =
      `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
  }
  const top = (m: Map<string, number>, n: number) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
  return { byPlace: top(byPlace, 20), byFunction: top(byFunction, TOP_FUNCTIONS), totalMs };
}

function placeOf(url: string, functionName: string): string {
  if (!url) return functionName === '(garbage collector)' ? '(garbage collector)' : '(native / V8)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `npm: ${pkg[1]}`;
  if (url.startsWith('node:')) return `node: ${url.slice(5).split('/')[0]}`;
  const src = /\/(src\/.*)$/.exec(url);
  return src ? src[1]!.replace(/\/[^/]+$/, '/') : url;
}

const pct = (part: number, whole: number) => `${whole > 0 ? ((100 * part) / whole).toFixed(1) : '0.0'}%`;
const short = (sql: string, n = 150) => (sql.length > n ? `${sql.slice(0, n)}…` : sql).replace(/\|/g, '\\|');

async function main(): Promise<void> {
  const cluster = await privatePostgres();
  const receiver = await startReceiver();
  const profileDir = mkdtempSync(join(tmpdir(), 'sika-cpuprof-'));
  const lines: string[] = [];
  try {
    const stamp = `prof${Date.now()}`;
    const first = await writeFixtures({ databaseUrl: cluster.url, dataDir: null }, receiver.url, stamp);
    const fixtures = [
      first,
      ...(await extraMerchants(cluster.url, receiver.url, stamp, merchants - 1)).map((checkout) => ({
        ...first,
        checkout,
      })),
    ];
    const port = await freePort();
    const server = await startServer(
      'sika (profiled)',
      'src/main.ts',
      {
        ...process.env,
        DATABASE_URL: cluster.url,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        WORKERS: 'on',
        METRICS_TOKEN,
        RATE_LIMIT_KEY_PER_S: '1000000',
        RATE_LIMIT_IP_PER_S: '1000000',
        RATE_LIMIT_SESSION_PER_S: '1000000',
        REDIS_URL: '',
        DATA_DIR: '',
      },
      '/readyz',
      ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
    );
    let journeys = 0;
    let webhooks = 0;
    const track: JourneyTrack = { starts: new Map(), paid: new Set() };
    receiver.onEvent = (receipt) => {
      if (receipt.type === 'checkout.session.completed') webhooks++;
    };
    try {
      // Warm-up outside the statistics, then the measured run.
      const target = { baseUrl: server.baseUrl, pid: server.pid, usesPostgres: true };
      const sessionId =
        scenario === 'journey'
          ? ''
          : (
              (await (
                await fetch(`${server.baseUrl}/api/v1/sessions`, {
                  method: 'POST',
                  headers: { authorization: `Bearer ${first.checkout.testKey}`, 'content-type': 'application/json' },
                  body: SESSION_BODY,
                })
              ).json()) as { id: string }
            ).id;
      const spec =
        scenario === 'session-create'
          ? sessionCreate(target, first, stamp)
          : scenario === 'session-read'
            ? sessionRead(target, first, sessionId)
            : scenario === 'payer-view'
              ? checkoutRead(target, sessionId)
              : journey(
                  target,
                  fixtures.map((f) => f.checkout.testKey),
                  track,
                );
      await runLoad(spec, { ...settings, durationS: Math.max(1, settings.warmupS), warmupS: 0 });
      await resetStatements(cluster.url);
      const before = await routeTimes(server.baseUrl);
      const result = await runLoad(spec, { ...settings, warmupS: 0 });
      journeys = Math.floor(result.responses2xx / (spec.requestsPerUnit ?? 1));
      const after = await routeTimes(server.baseUrl);
      const stats = await statements(cluster.url);
      const steps = after
        .map((a) => {
          const b = before.find((x) => x.route === a.route);
          const count = a.count - (b?.count ?? 0);
          const totalS = a.totalS - (b?.totalS ?? 0);
          return { route: a.route, count, totalS, meanMs: count > 0 ? (totalS / count) * 1000 : 0 };
        })
        .filter((s) => s.count > 0)
        .sort((x, y) => y.totalS - x.totalS);

      const pgTotalMs = stats.reduce((s, r) => s + r.total_ms, 0);
      lines.push(
        `${SECTION_HEADING.replace(' (issue 18)', `${label} (issue 18)`)}`,
        '',
        `Generated by \`npm run bench:profile\` at ${new Date().toISOString()}: a private PostgreSQL (pg_stat_statements) and the server with its workers on and \`--cpu-prof\`, ${settings.connections} connections for ${settings.durationS} s, scenario ${scenario}${scenario === 'journey' ? `, journeys spread over ${merchants} merchant(s)` : ''}. ${journeys} ${unit}s (${(journeys / settings.durationS).toFixed(1)}/s), ${result.non2xx + result.errors + result.timeouts} failures; CPU per ${unit}: server ${result.cpu?.serverUsPerReq.toFixed(0) ?? '-'} us, PostgreSQL ${result.cpu?.postgresUsPerReq.toFixed(0) ?? '-'} us, load driver ${result.cpu?.driverUsPerReq.toFixed(0) ?? '-'} us.`,
        '',
        "Per step (the server's own request timing: from the request read to the reply sent, waits included):",
        '',
        '| step | requests | mean ms | total s |',
        '|---|---|---|---|',
        ...steps
          .slice(0, 12)
          .map((s) => `| ${s.route} | ${s.count} | ${s.meanMs.toFixed(2)} | ${s.totalS.toFixed(1)} |`),
        '',
        `PostgreSQL statements (execution time only; ${(pgTotalMs / Math.max(1, journeys)).toFixed(2)} ms per ${unit} in all, ${stats.reduce((s, r) => s + r.calls, 0)} calls = ${(stats.reduce((s, r) => s + r.calls, 0) / Math.max(1, journeys)).toFixed(1)} per ${unit}):`,
        '',
        `| statement | calls/${unit} | mean ms | total ms | share | planning ms |`,
        '|---|---|---|---|---|---|',
        ...stats
          .slice(0, TOP_STATEMENTS)
          .map(
            (r) =>
              `| \`${short(r.query)}\` | ${(r.calls / Math.max(1, journeys)).toFixed(2)} | ${r.mean_ms.toFixed(3)} | ${r.total_ms.toFixed(0)} | ${pct(r.total_ms, pgTotalMs)} | ${r.plan_ms.toFixed(0)} |`,
          ),
        '',
        `Planning: ${(stats.reduce((sum, r) => sum + r.plan_ms, 0) / Math.max(1, journeys)).toFixed(2)} ms per ${unit} (statements sent unnamed are planned at every call).`,
        '',
      );
      receiver.onEvent = null;
      const problems = server.problemLines();
      lines.push(
        `Server warnings and errors logged: ${problems.length}${problems.length ? ` (first: ${short(problems[0]!, 200)})` : ''}.`,
        '',
      );
    } finally {
      await server.stop();
    }
    const profile = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
    if (profile) {
      const { byPlace, byFunction, totalMs } = summariseProfile(join(profileDir, profile));
      lines.push(
        `Server CPU profile (whole process life, warm-up and start included; ${(totalMs / 1000).toFixed(1)} s of samples), self time by place:`,
        '',
        '| place | self ms | share |',
        '|---|---|---|',
        ...byPlace.map(([p, ms]) => `| ${p} | ${ms.toFixed(0)} | ${pct(ms, totalMs)} |`),
        '',
        'Hottest functions (self time):',
        '',
        '| function | self ms | share |',
        '|---|---|---|',
        ...byFunction.map(([f, ms]) => `| \`${short(f, 110)}\` | ${ms.toFixed(0)} | ${pct(ms, totalMs)} |`),
        '',
      );
    }
    lines.push(`Webhooks received during the runs: ${webhooks}.`, '');
    const text = lines.join('\n');
    console.log(text);
    writeSection(text);
  } finally {
    await receiver.close();
    cluster.stop();
    rmSync(profileDir, { recursive: true, force: true });
  }
}

/** Replaces (or appends before "How to regenerate") this profile's section of bench/REPORT.md. */
function writeSection(text: string): void {
  const path = join(ROOT, 'bench', 'REPORT.md');
  const report = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const heading = text.split('\n')[0]!;
  const start = report.indexOf(heading);
  const section = `${text.trimEnd()}\n\n`;
  let next: string;
  if (start !== -1) {
    const end = report.indexOf('\n## ', start + heading.length);
    next = report.slice(0, start) + section + (end === -1 ? '' : report.slice(end + 1));
  } else {
    const at = report.indexOf('## How to regenerate');
    next = at === -1 ? `${report.trimEnd()}\n\n${section}` : report.slice(0, at) + section + report.slice(at);
  }
  writeFileSync(path, next);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
