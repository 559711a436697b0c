// PostgreSQL failover (issue 20): the reference HA deployment of deploy/ha (Patroni 3.0.2, etcd, HAProxy; three
// PostgreSQL nodes) loses its primary under a mixed load through two Sika processes, and nothing a client was
// told is lost.
//
// The file brings the deployment up itself (deploy/ha/up.sh in a private SIKA_HA_DIR, synchronous_mode on),
// starts two server processes on its DATABASE_URL (HAProxy's 127.0.0.1:5440, always the current primary) and a
// counting webhook receiver. Six clients alternate between the two processes with payments (session create with
// an Idempotency-Key -> quote -> Mobile Money attempt -> simulate paid with an Idempotency-Key) and Test payouts
// (client_reference); every request is retried on 503 (after Retry-After, capped at 0.5 s) and on no answer, with
// the same key or client_reference, as the README tells merchants. Each run: 4 s warm-up, a 5 s "before" window,
// then deploy/ha/kill-primary.sh --wait SIGKILLs the primary's postmaster; Patroni promotes a standby, HAProxy
// moves 5440, the old primary is rewound and rejoins; load goes on through it all and for a 5 s "after" window
// once the killed node streams again. Then, from the new primary (cumulatively over the runs):
//   - every object a client got a 2xx for is stored exactly once (sessions by Idempotency-Key, attempts, paid
//     attempts, payouts by client_reference): "rows lost" counts the acknowledged ones missing, and must be 0;
//     nothing is stored that no client was told about, no client_reference has two payouts;
//   - the journal balances, every cached balance equals its lines (checkInvariants), and the balance is the
//     funding plus the paid credits less the payouts, each counted once;
//   - every committed event reaches the receiver (within 60 s), validly signed, and no event arrives that is not
//     stored;
//   - no answer other than 2xx, 503 and the retryable 409 IDEMPOTENCY_KEY_IN_FLIGHT (no 500, no hang), 2xx again
//     within 30 s of the kill, the test's own Db (pool and pipelines) answering again by itself, and the same two
//     server processes answering all along (never restarted);
//   - each process's /readyz (polled every 200 ms) turns 503 after the kill and 200 again by itself.
// One figures line per run: requests, 2xx, 503s, other 5xx, other unexpected answers, when the clients saw
// failures, seconds from the kill to 2xx for good (the first 2xx sent after the last failure: the dying primary's
// backends go on answering reads for a moment, so the first 2xx sent after the kill may precede the outage; both
// are printed), rows lost, p99 before and after (and their ratio), and kill-primary.sh's rw_back_seconds and
// rejoined_seconds. deploy/ha/switchover.sh then hands the primary back to the killed node, so the next run
// starts the same way. Each run's p99s are printed: with about 500 answers per 5 s window and 2 cores running
// the three PostgreSQL nodes, Patroni, etcd, HAProxy, both servers and the clients, one run's after/before ratio
// went from 0.45 to 1.63 with the same code while other tests shared the machine. Issue 20's target is asserted
// on the three plain kills pooled (about 1,500 answers a side), and one-sided: the API may not be more than 20%
// slower after the failovers than before them (a faster after window, as the rejoined cluster settles, passes).
//
// Runs 1-3 are plain kills. Runs 4 and 5 inject replication lag first, to show what synchronous_mode protects:
// the primary's walsender processes are SIGSTOPped, the load goes on for up to 1 s (or until the standbys are
// 512 KiB behind: Patroni refuses candidates more than maximum_lag_on_failover, 1 MiB, behind, and then no
// failover happens at all), and the primary is SIGKILLed together with its stopped walsenders. Run 4 does this
// with synchronous_mode on: a commit then waits for the standby that no longer receives, so nothing acknowledged
// can be lost (asserted: 0). Run 5 does it with SYNC_MODE=off (up.sh switches the running cluster): commits are
// acknowledged by the primary alone, and the rows lost are measured and printed by kind, not asserted; the rest
// of the checks (no 500, the ledger, events of what survived) still hold. A client step that answers 404 because
// the object an earlier 2xx announced is gone is counted with the losses, checked to be one.
// Why walsenders and not walreceivers: a SIGSTOPped walreceiver does not stop its kernel from taking the WAL the
// primary keeps sending into the socket's buffers (measured here: 6.8 MB and 26 MB in flight after a few seconds),
// and on SIGCONT it reads that WAL and the standby ends up with every acknowledged commit anyway. A stopped
// walsender sends nothing: the commits after the stop exist on the primary only.
//
// It does not read DATABASE_URL: PostgreSQL comes only from the cluster it starts, so it runs the same in both
// passes of the suite. It needs root or the postgres user (the scripts run PostgreSQL, Patroni, etcd and HAProxy
// as postgres) and patroni, etcd, haproxy, psql, curl and setpriv on PATH; otherwise it is skipped, saying so.
// The deployment's ports are fixed (5439-5443, 8010-8013, 23790, 23800): another deployment running on this
// machine (deploy/ha/drill.sh, /tmp/sika-ha) makes it fail at the start, naming the port. deploy/ha/down.sh
// --purge runs in the after hook, whatever happened.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { DbError, type Db } from '../../src/db/index.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { creditPayment } from '../../src/ledger/service.ts';
import { MTN_PHONE } from '../support/checkout.ts';
import { pgUser } from '../support/private-postgres.ts';
import { sleep, startCountingReceiver, waitFor, type CountingReceiver } from '../support/webhooks.ts';
import {
  assertTestBalance,
  assertTestPayoutsPaidOnce,
  call,
  journalEntryCounter,
  killAllServers,
  newMerchant,
  NoAnswer,
  quantile,
  ROOT,
  round1,
  startServer,
  storedTestPayouts,
  type Answer,
  type CallOptions,
  type Server,
} from './process-support.ts';

const HA = join(ROOT, 'deploy', 'ha');
// As in deploy/ha/lib.sh.
const NODES = ['node1', 'node2', 'node3'] as const;
type Node = (typeof NODES)[number];
const PG_PORT: Record<Node, number> = { node1: 5441, node2: 5442, node3: 5443 };
const REST_PORT: Record<Node, number> = { node1: 8011, node2: 8012, node3: 8013 };
const HA_PORTS = [5439, 5440, 5441, 5442, 5443, 8010, 8011, 8012, 8013, 23790, 23800];

const CLIENTS = 6;
const WARMUP_MS = 4_000;
/** The "before" window, and the "after" window once the killed node streams again. */
const WINDOW_MS = 5_000;
const REQUEST_TIMEOUT_MS = 10_000; // a request unanswered after this is a hang
/** A 503's Retry-After (1 s today) is honoured up to this. */
const RETRY_AFTER_CAP_MS = 500;
const PAUSE_AFTER_NO_ANSWER_MS = 100;
/** A job step with no 2xx after this long is given up (and counted as unexpected). */
const STEP_DEADLINE_MS = 60_000;
const FIRST_2XX_AFTER_KILL_MAX_S = 30;
/** Issue 20's target: the after windows' p99 against the before windows', runs 1-3 pooled (asserted), and per run (printed). */
const P99_RATIO_TARGET = 1.2;
/** The before and after windows' latencies of the plain kills (runs 1-3), for the pooled p99 comparison. */
const pooledLatencies = { before: [] as number[], after: [] as number[] };
/** Replication lag injection: how long the walsenders stay stopped, at most, and the lag that ends it sooner. */
const LAG_MS = 1_000;
const LAG_BYTES_MAX = 512 * 1024;
const EVENTS_WAIT_MS = 60_000;
const READY_WAIT_MS = 30_000;
const FUNDING_MINOR = 50_000_000; // GHS 500,000: every payout of every run is covered from the first request
const RATE_LIMIT_UNREACHED = '1000000'; // per second: this suite measures failover, not the limiter
const SUITE_TIMEOUT_MS = 10 * 60_000;

const SERVER_ENV: Record<string, string> = {
  RATE_LIMIT_KEY_PER_S: RATE_LIMIT_UNREACHED,
  RATE_LIMIT_IP_PER_S: RATE_LIMIT_UNREACHED,
  RATE_LIMIT_SESSION_PER_S: RATE_LIMIT_UNREACHED,
  // The receiver listens on 127.0.0.1.
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on',
};

const now = () => performance.now();
const is2xx = (status: number) => status >= 200 && status < 300;
const errorCode = (answer: Answer): string | null =>
  typeof answer.body?.error?.code === 'string' ? answer.body.error.code : null;
const seconds = (ms: number) => round1(ms / 1000);

// ---------------------------------------------------------------------------------------------------
// Can it run here?

function onPath(program: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, program)));
}

function skipReason(): string | false {
  if (process.getuid?.() !== 0 && userInfo().username !== 'postgres') {
    return 'needs root or the postgres user: deploy/ha runs PostgreSQL, Patroni, etcd and HAProxy as postgres';
  }
  const missing = ['patroni', 'etcd', 'haproxy', 'psql', 'curl', 'setpriv'].filter((program) => !onPath(program));
  if (missing.length > 0)
    return `deploy/ha needs ${missing.join(', ')} on PATH (apt-get install patroni etcd-server haproxy postgresql-client curl util-linux)`;
  return false;
}

const SKIP = skipReason();

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

// ---------------------------------------------------------------------------------------------------
// The deployment, through its scripts

/** up.sh from nothing, at most this often (a cluster that does not come up is shown with its logs, then tried again). */
const UP_ATTEMPTS = 2;

/** A new base directory for deploy/ha, owned by postgres (mode 700) as up.sh wants it. */
async function newHaDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sika-failover-ha-'));
  const user = await pgUser();
  assert.ok(typeof user !== 'string', user as string);
  user.chown(dir);
  return dir;
}

/** The last lines of every log of the deployment (etcd, Patroni, PostgreSQL, HAProxy), for a failure's message. */
function clusterLogs(): string {
  const logDir = join(haDir, 'log');
  const files: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(path);
    }
  };
  walk(logDir);
  return files
    .map((file) => {
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-25).join('\n');
      return `--- ${file} (last lines)\n${lines}`;
    })
    .join('\n');
}

let haDir = '';
const haChildren = new Set<ChildProcess>();

const haEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  SIKA_HA_DIR: haDir,
  SIKA_HA_NO_INSTALL: '1',
  ...extra,
});

/** Runs a deploy/ha script to its end; its output, or an error carrying it. onLine sees each stdout line as it comes. */
function ha(
  script: string,
  args: string[] = [],
  extraEnv: Record<string, string> = {},
  onLine?: (line: string) => void,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(HA, script), args, { env: haEnv(extraEnv), stdio: ['ignore', 'pipe', 'pipe'] });
    haChildren.add(child);
    let output = '';
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      pending += chunk.toString('utf8');
      for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
        onLine?.(pending.slice(0, i));
        pending = pending.slice(i + 1);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('error', reject);
    child.once('close', (code) => {
      haChildren.delete(child);
      if (code === 0) resolve(output);
      else
        reject(
          new Error(
            `deploy/ha/${script} ${args.join(' ')} exited with ${code}:\n${output.split('\n').slice(-30).join('\n')}`,
          ),
        );
    });
  });
}

/** The key=value lines a script ends with. */
function keyValues(output: string): Record<string, string> {
  return Object.fromEntries([...output.matchAll(/^(\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
}

interface Member {
  name: Node;
  role: string;
  state: string;
}

async function members(): Promise<Member[]> {
  for (const node of NODES) {
    try {
      const res = await fetch(`http://127.0.0.1:${REST_PORT[node]}/cluster`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return ((await res.json()) as { members: Member[] }).members;
    } catch {
      // the next node answers
    }
  }
  throw new Error('no Patroni REST API answers /cluster');
}

async function leaderName(): Promise<Node> {
  const leader = (await members()).find((m) => m.role === 'leader');
  assert.ok(leader, 'the cluster has a leader');
  return leader.name;
}

/** Child processes of a node's postmaster whose title holds `word` (walsender, walreceiver). */
function postgresChildren(node: Node, word: string): number[] {
  const postmaster = Number(readFileSync(join(haDir, node, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync(`/proc/${postmaster}/task`).flatMap((task) =>
    readFileSync(`/proc/${postmaster}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  );
  return children.filter((pid) => titleOf(pid).includes(word));
}

function titleOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ESRCH') throw error;
  }
}

/** Bytes of WAL from "0/5868C70". */
const lsnBytes = (lsn: string): bigint => {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
};

interface Kill {
  killed: Node;
  newLeader: Node;
  rwBackS: number;
  rejoinedS: number;
  /** performance.now() of the SIGKILL (kill-primary.sh's killed_at). */
  killAt: number;
}

/** deploy/ha/kill-primary.sh --wait: returns once 5440 takes writes again and the killed node streams again. */
async function killPrimary(onKilled: () => void = () => {}): Promise<Kill> {
  let fired = false;
  const output = await ha('kill-primary.sh', ['--wait'], {}, (line) => {
    if (!fired && line.startsWith('killed=')) {
      fired = true;
      onKilled();
    }
  });
  const kv = keyValues(output);
  for (const key of ['killed', 'killed_at', 'new_leader', 'rw_back_seconds', 'rejoined_seconds'])
    assert.ok(kv[key], `kill-primary.sh printed ${key}=:\n${output}`);
  return {
    killed: kv.killed as Node,
    newLeader: kv.new_leader as Node,
    rwBackS: Number(kv.rw_back_seconds),
    rejoinedS: Number(kv.rejoined_seconds),
    killAt: Number(kv.killed_at) * 1000 - performance.timeOrigin,
  };
}

interface Lag {
  bytes: number;
  ms: number;
}

/**
 * Replication lag, then the kill: SIGSTOP the primary's walsenders, let the load run until LAG_MS passed or the
 * standbys are LAG_BYTES_MAX behind, then kill-primary.sh, and SIGKILL the stopped walsenders as soon as the
 * postmaster is dead (they would send their WAL once continued, and a postmaster cannot restart on that data
 * directory while they hold its shared memory). Whatever fails, walsenders not killed are continued.
 */
async function killWithLag(databaseUrl: string, onKilled: () => void): Promise<Kill & { lag: Lag }> {
  const leader = await leaderName();
  const standbys = NODES.filter((n) => n !== leader);
  const walsenders = postgresChildren(leader, 'walsender');
  assert.equal(walsenders.length, 2, `${leader} streams to two standbys: ${walsenders.map(titleOf).join('; ')}`);
  const clients = new Map<Node, pg.Client>();
  const open = async (node: Node) => {
    const url = new URL(databaseUrl);
    url.port = String(PG_PORT[node]);
    const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 2_000 });
    client.on('error', () => {});
    await client.connect();
    clients.set(node, client);
    return client;
  };
  let killed = false;
  try {
    const primary = await open(leader);
    const replicas = await Promise.all(standbys.map(open));
    const position = async (client: pg.Client, fn: string) =>
      lsnBytes((await client.query<{ lsn: string }>(`SELECT ${fn} AS lsn`)).rows[0]!.lsn);
    const lagBytes = async () => {
      const received = await Promise.all(replicas.map((c) => position(c, 'pg_last_wal_receive_lsn()')));
      // biome-ignore lint/complexity/useMathMinMax: LSNs are bigints, which Math.max does not take
      const newest = received.reduce((a, b) => (a > b ? a : b));
      return Number((await position(primary, 'pg_current_wal_lsn()')) - newest);
    };
    for (const pid of walsenders) signal(pid, 'SIGSTOP');
    const stoppedAt = now();
    let bytes = 0;
    while (now() - stoppedAt < LAG_MS) {
      bytes = await lagBytes();
      if (bytes >= LAG_BYTES_MAX) break;
      await sleep(20);
    }
    bytes = await lagBytes();
    const ms = now() - stoppedAt;
    await Promise.all([...clients.values()].map((c) => c.end().catch(() => {})));
    clients.clear();
    const kill = await killPrimary(() => {
      for (const pid of walsenders) if (titleOf(pid).includes('walsender')) signal(pid, 'SIGKILL');
      killed = true;
      onKilled();
    });
    return { ...kill, lag: { bytes, ms } };
  } finally {
    if (!killed) for (const pid of walsenders) signal(pid, 'SIGCONT');
    await Promise.all([...clients.values()].map((c) => c.end().catch(() => {})));
  }
}

// ---------------------------------------------------------------------------------------------------
// What the clients sent and were told

interface Process {
  name: 'A' | 'B';
  server: Server;
  pid: number;
}

type Step = 'session' | 'quote' | 'attempt' | 'simulate' | 'payout';

interface Sent {
  run: number;
  step: Step;
  process: string;
  sentAt: number;
  answeredAt: number;
  ms: number;
  /** 0: no answer. */
  status: number;
  code: string | null;
  detail: string;
}

interface Acked {
  run: number;
  /** performance.now() of the 2xx. */
  at: number;
}

interface Run {
  n: number;
  label: string;
  sync: boolean;
  inject: boolean;
  stop: boolean;
  sent: Sent[];
  /** Answers no job may get (any 5xx but 503, a 4xx it does not expect, no answer, no 2xx in time). */
  unexpected: string[];
  /** 404s on an object an earlier 2xx announced, after a kill that may have lost it (checked against storage). */
  lossEchoes: { kind: 'session' | 'attempt'; id: string; what: string }[];
  killAt: number;
}

class GiveUp extends Error {}

// ---------------------------------------------------------------------------------------------------

// Each run is skipped (and counted so) rather than the suite, so the closing line shows the skip.
describe('failover: the PostgreSQL primary of deploy/ha is SIGKILLed under a mixed load through two Sika processes', {
  timeout: SUITE_TIMEOUT_MS,
}, () => {
  let databaseUrl = '';
  let db: Db | null = null;
  let counting: CountingReceiver | null = null;
  let merchant!: CreatedMerchant;
  let recipientId = '';
  const processes: Process[] = [];
  let startFailure: unknown = null;

  const sessionsAcked = new Map<string, Acked & { id: string; amount: number; createKey: string }>(); // invoice_ref ->
  const attemptsAcked = new Map<string, Acked & { sessionId: string; total: number }>(); // attempt reference ->
  const paidAcked = new Map<string, Acked>(); // attempt reference answered paid ->
  const payoutsAcked = new Map<string, Acked & { id: string; amount: number }>(); // client_reference ->
  /** Acknowledged objects found missing by an earlier run's check (run 5 only, by design): not counted again. */
  const knownLost = new Set<string>();

  before(
    async () => {
      if (SKIP) return;
      try {
        const taken = [];
        for (const port of HA_PORTS) if (await portOpen(port)) taken.push(port);
        assert.deepEqual(
          taken,
          [],
          `ports of deploy/ha already in use (another deployment, e.g. /tmp/sika-ha or a drill, runs on this machine): ${taken.join(', ')}`,
        );
        // A cluster that fails to come up is started once more from nothing, its logs kept in the error either way
        // (the after hook removes the directory).
        for (let attempt = 1; ; attempt++) {
          haDir = await newHaDir();
          try {
            await ha('up.sh');
            break;
          } catch (error) {
            const logs = clusterLogs();
            await ha('down.sh', ['--purge']).catch(() => {});
            rmSync(haDir, { recursive: true, force: true });
            if (attempt >= UP_ATTEMPTS) throw new Error(`${String(error)}\n${logs}`);
            console.error(
              `deploy/ha/up.sh failed (attempt ${attempt}), starting again from nothing:\n${String(error)}\n${logs}`,
            );
          }
        }
        databaseUrl = /^DATABASE_URL=(.*)$/m.exec(readFileSync(join(haDir, 'env'), 'utf8'))?.[1] ?? '';
        assert.match(databaseUrl, /^postgres:\/\/.*:5440\//, `DATABASE_URL in ${haDir}/env`);

        counting = await startCountingReceiver(() => merchant.test_webhook_secret!);
        // The first process migrates; the second starts on a migrated database.
        for (const name of ['A', 'B'] as const) {
          const server = await startServer({ DATABASE_URL: databaseUrl }, SERVER_ENV);
          processes.push({ name, server, pid: server.child.pid! });
        }
        db = await openPostgres(databaseUrl, 4);
        merchant = await newMerchant(db, 'Failover Shop', counting.receiver.url);
        await db.transaction((tx) =>
          creditPayment(tx, {
            merchantId: merchant.merchant_id,
            environment: 'test',
            paymentId: `fund-${randomUUID()}`,
            chargedMinor: FUNDING_MINOR,
            payerFeeMinor: 0,
            merchantFeeMinor: 0,
          }),
        );
        const answer = await call(processes[0]!.server.base, 'POST', '/api/v1/payouts/recipients', {
          key: merchant.test_api_key,
          body: { account_type: 'momo', network: 'mtn', phone: MTN_PHONE, account_name: 'Ama Owusu' },
        });
        assert.equal(answer.status, 201, answer.text);
        recipientId = answer.body.id;
      } catch (error) {
        // Kept for the runs, which then fail with it (a failing before hook alone is easy to overlook).
        startFailure = error;
      }
    },
    { timeout: 240_000 },
  );

  after(
    async () => {
      killAllServers();
      for (const child of haChildren) child.kill('SIGKILL');
      await counting?.receiver.close();
      await db?.close().catch(() => {});
      if (haDir) {
        await ha('down.sh', ['--purge']).catch((error: unknown) => console.error(String(error)));
        rmSync(haDir, { recursive: true, force: true });
      }
    },
    { timeout: 120_000 },
  );

  // ---- the clients

  function record(run: Run, step: Step, process: Process, sentAt: number, result: Answer | NoAnswer): Sent {
    const answer = result instanceof NoAnswer ? null : result;
    const sent: Sent = {
      run: run.n,
      step,
      process: process.name,
      sentAt,
      answeredAt: now(),
      ms: result.ms,
      status: answer?.status ?? 0,
      code: answer ? errorCode(answer) : null,
      detail:
        result instanceof NoAnswer
          ? result.message
          : `${result.status} ${result.text.slice(0, 300)} (x-request-id ${result.headers.get('x-request-id')})`,
    };
    run.sent.push(sent);
    return sent;
  }

  const sentWhen = (run: Run, at: number) =>
    run.killAt === Infinity ? 'sent before the kill' : `sent ${seconds(at - run.killAt)} s after the kill`;

  function unexpected(run: Run, what: string, sent: Sent): never {
    run.unexpected.push(`${what} on ${sent.process} ${sentWhen(run, sent.sentAt)}: ${sent.detail}`);
    throw new GiveUp(what);
  }

  /** A 2xx whose body is not what the step promises. */
  function wrongBody(run: Run, what: string, answer: Answer): never {
    run.unexpected.push(`${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
    throw new GiveUp(what);
  }

  /**
   * One job step until a 2xx: each try goes to the next process (the client alternates), a 503 is retried after
   * its Retry-After (capped), no answer and 409 IDEMPOTENCY_KEY_IN_FLIGHT (a try still running) after a pause,
   * with the same request: the same Idempotency-Key, the same client_reference. Anything else gives the job up.
   * `lost` says which acknowledged object a 404 refers to: after the asynchronous kill that is a loss, checked later.
   */
  async function step(
    run: Run,
    next: () => Process,
    what: string,
    kind: Step,
    method: 'GET' | 'POST',
    path: string,
    options: CallOptions,
    lost?: { kind: 'session' | 'attempt'; id: string },
  ): Promise<Answer> {
    const deadline = now() + STEP_DEADLINE_MS;
    for (;;) {
      const process = next();
      const sentAt = now();
      let result: Answer | NoAnswer;
      try {
        result = await call(process.server.base, method, path, { ...options, timeoutMs: REQUEST_TIMEOUT_MS });
      } catch (error) {
        if (!(error instanceof NoAnswer)) throw error;
        result = error;
      }
      const sent = record(run, kind, process, sentAt, result);
      if (result instanceof NoAnswer) {
        // Counted as unexpected (the processes never stop: no answer is a hang or a reset), retried all the same.
        run.unexpected.push(`${what}: no answer from ${process.name} ${sentWhen(run, sentAt)}: ${result.message}`);
        await sleep(PAUSE_AFTER_NO_ANSWER_MS);
      } else if (is2xx(result.status)) {
        return result;
      } else if (result.status === 503) {
        const retryAfterMs = Number(result.headers.get('retry-after') ?? '1') * 1000;
        await sleep(Math.min(Number.isFinite(retryAfterMs) ? retryAfterMs : RETRY_AFTER_CAP_MS, RETRY_AFTER_CAP_MS));
      } else if (result.status === 409 && sent.code === 'IDEMPOTENCY_KEY_IN_FLIGHT') {
        await sleep(PAUSE_AFTER_NO_ANSWER_MS);
      } else if (result.status === 404 && lost && !run.sync && sentAt > run.killAt) {
        run.lossEchoes.push({ ...lost, what: `${what}: ${sent.detail}` });
        throw new GiveUp(what);
      } else {
        unexpected(run, what, sent);
      }
      if (now() > deadline) unexpected(run, `${what}: no 2xx within ${STEP_DEADLINE_MS / 1000} s`, sent);
    }
  }

  async function payment(run: Run, next: () => Process, n: string): Promise<void> {
    const key = merchant.test_api_key;
    const amount = 5_000 + Math.floor(Math.random() * 20_000);
    const invoiceRef = `INV-FAILOVER-${n}`;
    const createKey = `failover-create-${randomUUID()}`;
    const created = await step(run, next, `session create ${invoiceRef}`, 'session', 'POST', '/api/v1/sessions', {
      key,
      idempotencyKey: createKey,
      body: { amount_minor: amount, invoice_ref: invoiceRef },
    });
    if (created.status !== 201) wrongBody(run, `session create ${invoiceRef}: 201 expected`, created);
    const sessionId = created.body.id as string;
    sessionsAcked.set(invoiceRef, { id: sessionId, amount, createKey, run: run.n, at: now() });
    const lostSession = { kind: 'session' as const, id: invoiceRef };

    const quote = await step(
      run,
      next,
      `quote of ${sessionId}`,
      'quote',
      'GET',
      `/api/v1/checkout/sessions/${sessionId}/quote`,
      {},
      lostSession,
    );
    const total = quote.body.surcharges.momo.total_minor as number;

    // 201 a new attempt; 200 the same pending attempt (an earlier try committed but its answer was a 503).
    const attempt = await step(
      run,
      next,
      `attempt on ${sessionId}`,
      'attempt',
      'POST',
      `/api/v1/checkout/sessions/${sessionId}/provider-attempts`,
      {
        body: { rail: 'momo', amount_minor: total, operator: 'mtn', phone: MTN_PHONE },
      },
      lostSession,
    );
    const reference = attempt.body.attempt_reference as string;
    attemptsAcked.set(reference, { sessionId, total, run: run.n, at: now() });

    const simulated = await step(
      run,
      next,
      `simulate ${reference}`,
      'simulate',
      'POST',
      `/api/v1/test/payment-attempts/${reference}/simulate`,
      {
        key,
        idempotencyKey: `failover-simulate-${randomUUID()}`,
        body: { outcome: 'paid' },
      },
      { kind: 'attempt', id: reference },
    );
    if (simulated.status !== 200 || simulated.body.status !== 'paid' || simulated.body.session_status !== 'success')
      wrongBody(run, `simulate ${reference}: 200 paid expected`, simulated);
    paidAcked.set(reference, { run: run.n, at: now() });
  }

  async function payout(run: Run, next: () => Process, n: string): Promise<void> {
    const amount = 500 + Math.floor(Math.random() * 2_500);
    const clientReference = `failover-${n}-${randomUUID().slice(0, 8)}`;
    const answer = await step(run, next, `payout ${clientReference}`, 'payout', 'POST', '/api/v1/payouts', {
      key: merchant.test_api_key,
      body: { recipient_id: recipientId, amount_minor: amount, client_reference: clientReference },
    });
    if (answer.body.client_reference !== clientReference || answer.body.status !== 'paid')
      wrongBody(run, `payout ${clientReference}: a paid Test payout expected`, answer);
    const known = payoutsAcked.get(clientReference);
    if (known)
      assert.equal(answer.body.id, known.id, `client_reference ${clientReference} answered with two payout ids`);
    payoutsAcked.set(clientReference, { id: answer.body.id, amount, run: run.n, at: now() });
  }

  async function client(run: Run, c: number): Promise<void> {
    let turn = c;
    const next = () => processes[turn++ % processes.length]!;
    for (let job = 0; !run.stop; job++) {
      const n = `${run.n}-${c}-${job}`;
      try {
        if ((job + c) % 2 === 0) await payment(run, next, n);
        else await payout(run, next, n);
      } catch (error) {
        if (!(error instanceof GiveUp))
          run.unexpected.push(`job ${n}: ${error instanceof Error ? error.stack : String(error)}`);
      }
    }
  }

  // ---- the checks Db (the test's own pool and pipelines) across the failover

  interface Beat {
    sentAt: number;
    at: number;
    path: 'query' | 'read';
    ok: boolean;
    detail: string;
  }

  function heartbeat(): { beats: Beat[]; stop: () => Promise<void> } {
    const beats: Beat[] = [];
    let stopped = false;
    const loop = async (path: 'query' | 'read') => {
      while (!stopped) {
        const sentAt = now();
        try {
          await (path === 'query' ? db!.query('SELECT 1') : db!.read('failover_heartbeat', 'SELECT 1'));
          beats.push({ sentAt, at: now(), path, ok: true, detail: '' });
        } catch (error) {
          const e = DbError.from(error);
          beats.push({ sentAt, at: now(), path, ok: false, detail: `${e.sqlState ?? 'no SQLSTATE'} ${e.message}` });
        }
        await sleep(200);
      }
    };
    const loops = [loop('query'), loop('read')];
    return {
      beats,
      async stop() {
        stopped = true;
        await Promise.all(loops);
      },
    };
  }

  /** Each process's /readyz every 200 ms: readiness must turn false while no primary answers, and true again by itself. */
  function readinessPoll(): { polls: { process: string; at: number; status: number }[]; stop: () => Promise<void> } {
    const polls: { process: string; at: number; status: number }[] = [];
    let stopped = false;
    const loop = async (p: Process) => {
      while (!stopped) {
        const status = await call(p.server.base, 'GET', '/readyz', { timeoutMs: 5_000 }).then(
          (a) => a.status,
          () => 0,
        );
        polls.push({ process: p.name, at: now(), status });
        await sleep(200);
      }
    };
    const loops = processes.map(loop);
    return {
      polls,
      async stop() {
        stopped = true;
        await Promise.all(loops);
      },
    };
  }

  // ---- the checks, from storage (the new primary), over everything acknowledged so far

  interface Loss {
    sessions: string[];
    attempts: string[];
    paid: string[];
    payouts: string[];
  }

  async function checkStorage(run: Run): Promise<{ lost: Loss; lostNow: Loss; summary: string }> {
    const m = merchant.merchant_id;
    const q = db!;
    const sessions = await q.query<{ id: string; invoice_ref: string; amount_minor: number; status: string }>(
      `SELECT id, invoice_ref, amount_minor, status FROM checkout_sessions WHERE merchant_id = $1 AND environment = 'test'`,
      [m],
    );
    const attempts = await q.query<{
      id: string;
      session_id: string;
      status: string;
      base_minor: number;
      fee_minor: number;
      bearer: string;
      amount_charged_minor: number;
    }>(
      `SELECT id, session_id, status, base_minor, fee_minor, bearer, amount_charged_minor FROM payment_attempts WHERE merchant_id = $1`,
      [m],
    );
    const payouts = await storedTestPayouts(q, m);
    const lost: Loss = { sessions: [], attempts: [], paid: [], payouts: [] };

    const sessionsByRef = new Map<string, typeof sessions>();
    for (const s of sessions) sessionsByRef.set(s.invoice_ref, [...(sessionsByRef.get(s.invoice_ref) ?? []), s]);
    for (const [ref, acked] of sessionsAcked) {
      const rows = sessionsByRef.get(ref) ?? [];
      assert.ok(rows.length <= 1, `Idempotency-Key ${acked.createKey} made ${rows.length} sessions`);
      if (rows.length === 0) {
        lost.sessions.push(ref);
        continue;
      }
      assert.equal(
        rows[0]!.id,
        acked.id,
        `the session stored for Idempotency-Key ${acked.createKey} is the one answered`,
      );
      assert.equal(rows[0]!.amount_minor, acked.amount);
    }
    assert.deepEqual(
      sessions.filter((s) => !sessionsAcked.has(s.invoice_ref)).map((s) => s.invoice_ref),
      [],
      'no session that no client was told about',
    );
    const keys = await q.query<{ key: string; response_status: number; response_body: string }>(
      `SELECT key, response_status, response_body FROM idempotency_keys WHERE merchant_id = $1 AND environment = 'test' AND key = ANY($2)`,
      [m, [...sessionsAcked.values()].map((s) => s.createKey)],
    );
    for (const [ref, acked] of sessionsAcked) {
      if (lost.sessions.includes(ref)) continue;
      const stored = keys.filter((k) => k.key === acked.createKey);
      assert.equal(stored.length, 1, `Idempotency-Key ${acked.createKey} stored once`);
      assert.equal(
        JSON.parse(stored[0]!.response_body).id,
        acked.id,
        `Idempotency-Key ${acked.createKey} replays session ${acked.id}`,
      );
    }

    const attemptsBySession = new Map<string, number>();
    for (const a of attempts) attemptsBySession.set(a.session_id, (attemptsBySession.get(a.session_id) ?? 0) + 1);
    assert.deepEqual(
      [...attemptsBySession].filter(([, n]) => n > 1),
      [],
      'one attempt per session (a retried attempt is answered with the pending one)',
    );
    for (const [ref, acked] of attemptsAcked) {
      const row = attempts.find((a) => a.id === ref);
      if (!row) {
        lost.attempts.push(ref);
        continue;
      }
      assert.equal(row.session_id, acked.sessionId);
      assert.equal(row.amount_charged_minor, acked.total);
    }
    assert.deepEqual(
      attempts.filter((a) => !attemptsAcked.has(a.id)).map((a) => a.id),
      [],
      'no attempt that no client was told about',
    );
    for (const ref of paidAcked.keys()) {
      const row = attempts.find((a) => a.id === ref);
      if (row?.status !== 'paid') {
        lost.paid.push(ref);
        continue;
      }
      assert.equal(
        sessions.find((s) => s.id === row.session_id)?.status,
        'success',
        `the session of paid attempt ${ref} succeeded`,
      );
    }

    for (const [ref] of payoutsAcked) if (!payouts.some((p) => p.client_reference === ref)) lost.payouts.push(ref);
    const doubled = await q.query<{ client_reference: string; n: number }>(
      `SELECT client_reference, count(*)::int AS n FROM payouts WHERE merchant_id = $1 GROUP BY 1 HAVING count(*) > 1`,
      [m],
    );
    assert.deepEqual(doubled, [], 'no client_reference with two payouts');
    const entryCount = await journalEntryCounter(q, m);
    const surviving = new Map([...payoutsAcked].filter(([ref]) => !lost.payouts.includes(ref)));
    // Every stored payout was answered 2xx, is stored once with its amount, and was paid exactly once.
    assertTestPayoutsPaidOnce(payouts, surviving, surviving.size, entryCount);
    for (const a of attempts)
      assert.equal(
        entryCount('payment_credit', a.id),
        a.status === 'paid' ? 1 : 0,
        `payment credits of attempt ${a.id} (${a.status})`,
      );

    const ledger = await assertTestBalance(q, m, FUNDING_MINOR, attempts, payouts);

    const lostNow: Loss = {
      sessions: lost.sessions.filter((id) => !knownLost.has(`s:${id}`)),
      attempts: lost.attempts.filter((id) => !knownLost.has(`a:${id}`)),
      paid: lost.paid.filter((id) => !knownLost.has(`p:${id}`)),
      payouts: lost.payouts.filter((id) => !knownLost.has(`o:${id}`)),
    };
    // A 404 the clients took for a loss must be one.
    for (const echo of run.lossEchoes) {
      const list = echo.kind === 'session' ? lost.sessions : lost.attempts;
      assert.ok(list.includes(echo.id), `a 404 on an object still stored: ${echo.what}`);
    }
    const summary = `${sessions.length} sessions, ${attempts.filter((a) => a.status === 'paid').length} paid, ${payouts.length} payouts stored; balance ${ledger.available_minor}`;
    return { lost, lostNow, summary };
  }

  async function checkEvents(): Promise<{ delivered: number; stray: string[]; duplicates: number }> {
    const m = merchant.merchant_id;
    const events = await db!.query<{ id: string; type: string; object_id: string }>(
      'SELECT id, type, object_id FROM events WHERE merchant_id = $1',
      [m],
    );
    const [counts] = await db!.query<{ attempted: number; success: number; payouts: number }>(
      `SELECT (SELECT count(DISTINCT session_id)::int FROM payment_attempts WHERE merchant_id = $1) AS attempted,
              (SELECT count(*)::int FROM checkout_sessions WHERE merchant_id = $1 AND status = 'success') AS success,
              (SELECT count(*)::int FROM payouts WHERE merchant_id = $1) AS payouts`,
      [m],
    );
    const byType = (type: string) => events.filter((e) => e.type === type);
    // A session announces pending at its attempt and completed when paid; a Test payout announces payout.paid.
    assert.equal(
      byType('checkout.session.pending').length,
      counts!.attempted,
      'one checkout.session.pending per session with an attempt',
    );
    assert.equal(
      byType('checkout.session.completed').length,
      counts!.success,
      'one checkout.session.completed per paid session',
    );
    assert.equal(byType('payout.paid').length, counts!.payouts, 'one payout.paid per payout');
    for (const type of ['checkout.session.pending', 'checkout.session.completed', 'payout.paid']) {
      assert.equal(new Set(byType(type).map((e) => e.object_id)).size, byType(type).length, `one ${type} per object`);
    }
    assert.equal(events.length, counts!.attempted + counts!.success + counts!.payouts, 'no other events');
    const { arrivals, receiver } = counting!;
    const missing = () => events.filter((e) => !arrivals.has(e.id));
    await waitFor(
      `${events.length} events at the receiver`,
      () => missing().length === 0 && receiver.inFlight() === 0,
      EVENTS_WAIT_MS,
      100,
    ).catch(() => {});
    assert.deepEqual(
      missing().map((e) => `${e.id} ${e.type}`),
      [],
      `committed events never delivered (of ${events.length})`,
    );
    assert.equal(counting!.badSignatures(), 0, 'every delivery verified with the endpoint secret');
    const stored = new Set(events.map((e) => e.id));
    const stray = [...arrivals.keys()].filter((id) => !stored.has(id));
    return { delivered: events.length, stray, duplicates: [...arrivals.values()].filter((n) => n > 1).length };
  }

  // ---- one run

  /** The two server processes started in before() still run: a failover must not take one down. */
  function assertProcessesRunning(): void {
    for (const p of processes) {
      const { exitCode, signalCode } = p.server.child;
      assert.ok(
        exitCode === null && signalCode === null,
        `server ${p.name} (pid ${p.pid}) exited (code ${exitCode}, signal ${signalCode}); its last lines:\n${p.server.output.slice(-60).join('\n')}`,
      );
    }
  }

  async function failoverRun(
    t: { diagnostic: (message: string) => void },
    n: number,
    options: { sync: boolean; inject: boolean; switchBack: boolean },
  ): Promise<void> {
    if (startFailure) throw startFailure;
    const run: Run = {
      n,
      label: `${options.sync ? 'synchronous' : 'asynchronous'}, ${options.inject ? 'replication lag then kill' : 'kill'}`,
      sync: options.sync,
      inject: options.inject,
      stop: false,
      sent: [],
      unexpected: [],
      lossEchoes: [],
      killAt: Infinity,
    };
    const leaderBefore = await leaderName();
    // Both processes answer from storage before the load starts (the previous run's switchover cut their connections).
    assertProcessesRunning();
    for (const p of processes)
      await waitFor(
        `${p.name} ready`,
        () =>
          call(p.server.base, 'GET', '/readyz', { timeoutMs: 2_000 }).then(
            (a) => a.status === 200,
            () => false,
          ),
        READY_WAIT_MS,
        100,
      );

    const beat = heartbeat();
    const readiness = readinessPoll();
    const load = Array.from({ length: CLIENTS }, (_, c) => client(run, c));
    let kill: (Kill & { lag?: Lag }) | null = null;
    let beforeFrom = 0;
    let beforeTo = 0;
    let afterFrom = 0;
    let afterTo = 0;
    try {
      await sleep(WARMUP_MS);
      beforeFrom = now();
      await sleep(WINDOW_MS);
      beforeTo = now();
      // The clients' answers are placed against the kill as it happens; kill-primary.sh's own time replaces it after.
      const killed = () => {
        run.killAt = now();
      };
      kill = options.inject ? await killWithLag(databaseUrl, killed) : await killPrimary(killed);
      run.killAt = kill.killAt;
      afterFrom = now();
      await sleep(WINDOW_MS);
      afterTo = now();
    } finally {
      run.stop = true;
      await Promise.all(load);
      await beat.stop();
      await readiness.stop();
    }
    assert.ok(kill);
    for (const p of processes) {
      const polls = readiness.polls.filter((r) => r.process === p.name);
      const notReady = polls.filter((r) => r.at > run.killAt && r.status !== 200);
      assert.ok(notReady.length > 0, `${p.name}'s /readyz turned 503 after the kill (${polls.length} polls)`);
      assert.deepEqual(
        [...new Set(notReady.map((r) => r.status))],
        [503],
        `${p.name}'s /readyz answered 503 while not ready, never an error or a hang`,
      );
      assert.equal(polls.at(-1)?.status, 200, `${p.name}'s /readyz is 200 again by itself`);
      t.diagnostic(
        `run ${n}: ${p.name}'s /readyz 503 from ${seconds(notReady[0]!.at - run.killAt)} to ${seconds(notReady.at(-1)!.at - run.killAt)} s after the kill, 200 again after`,
      );
    }
    // The primary goes back where it was for the next run, whatever this one's checks say.
    try {
      await checkRun(t, run, kill, beat.beats, { beforeFrom, beforeTo, afterFrom, afterTo });
    } finally {
      if (options.switchBack) {
        await ha('switchover.sh', [kill.killed]);
        assert.equal(await leaderName(), kill.killed, `the primary is back on ${kill.killed}`);
      }
    }
    assert.equal(kill.killed, leaderBefore, 'kill-primary.sh killed the leader');
  }

  async function checkRun(
    t: { diagnostic: (message: string) => void },
    run: Run,
    kill: Kill & { lag?: Lag },
    beats: Beat[],
    w: { beforeFrom: number; beforeTo: number; afterFrom: number; afterTo: number },
  ): Promise<void> {
    const n = run.n;
    const inWindow = (from: number, to: number) =>
      run.sent.filter((s) => s.sentAt >= from && s.answeredAt <= to).map((s) => s.ms);
    const p99Before = quantile(inWindow(w.beforeFrom, w.beforeTo), 0.99);
    const p99After = quantile(inWindow(w.afterFrom, w.afterTo), 0.99);
    if (!kill.lag) {
      pooledLatencies.before.push(...inWindow(w.beforeFrom, w.beforeTo));
      pooledLatencies.after.push(...inWindow(w.afterFrom, w.afterTo));
    }
    const twoxx = run.sent.filter((s) => is2xx(s.status));
    const unavailable = run.sent.filter((s) => s.status === 503);
    const other5xx = run.sent.filter((s) => s.status >= 500 && s.status !== 503);
    const inFlight409 = run.sent.filter((s) => s.status === 409 && s.code === 'IDEMPOTENCY_KEY_IN_FLIGHT');
    // The dying primary's backends go on answering for a moment (a PostgreSQL backend notices its postmaster's
    // death only when it waits), so the first 2xx after the kill may come before the outage: service is back
    // with the first 2xx to a request sent after the last failure (503 or no answer).
    const failures = run.sent.filter((s) => (s.status === 503 || s.status === 0) && s.answeredAt > run.killAt);
    const lastFailure = failures.reduce((max, s) => Math.max(max, s.answeredAt), run.killAt);
    const firstOkS = seconds(
      twoxx.filter((s) => s.sentAt >= run.killAt).reduce((min, s) => Math.min(min, s.answeredAt), Infinity) -
        run.killAt,
    );
    const backS = seconds(
      twoxx.filter((s) => s.sentAt >= lastFailure).reduce((min, s) => Math.min(min, s.answeredAt), Infinity) -
        run.killAt,
    );
    const outage =
      failures.length === 0
        ? 'none seen'
        : `${seconds(Math.min(...failures.map((s) => s.answeredAt)) - run.killAt)} to ${seconds(lastFailure - run.killAt)} s after the kill`;
    const codes503 = Object.fromEntries(
      [...new Set(unavailable.map((s) => s.code ?? 'no envelope'))].map((code) => [
        code,
        unavailable.filter((s) => (s.code ?? 'no envelope') === code).length,
      ]),
    );
    const beatsOf = (path: 'query' | 'read') => beats.filter((b) => b.path === path);
    const firstBeatOk = (path: 'query' | 'read') => {
      const lastError = beatsOf(path)
        .filter((b) => !b.ok)
        .reduce((max, b) => Math.max(max, b.at), run.killAt);
      return seconds(
        beatsOf(path)
          .filter((b) => b.ok && b.sentAt >= lastError)
          .reduce((min, b) => Math.min(min, b.at), Infinity) - run.killAt,
      );
    };
    const beatErrors = beats.filter((b) => !b.ok);

    // Storage and events are checked before anything is asserted, so the figures are printed whatever fails.
    const storage = await checkStorage(run).catch((error: unknown) => error as Error);
    const events = await checkEvents().catch((error: unknown) => error as Error);
    const lostNow = storage instanceof Error ? null : storage.lostNow;
    const lostCount = lostNow
      ? lostNow.sessions.length + lostNow.attempts.length + lostNow.paid.length + lostNow.payouts.length
      : NaN;
    for (const id of lostNow?.sessions ?? []) knownLost.add(`s:${id}`);
    for (const id of lostNow?.attempts ?? []) knownLost.add(`a:${id}`);
    for (const id of lostNow?.paid ?? []) knownLost.add(`p:${id}`);
    for (const id of lostNow?.payouts ?? []) knownLost.add(`o:${id}`);

    const lag = kill.lag
      ? `; WAL lag at the kill ${Math.round(kill.lag.bytes / 1024)} KiB after ${Math.round(kill.lag.ms)} ms of stopped walsenders`
      : '';
    t.diagnostic(
      `figures run ${n} (${run.label}): requests ${run.sent.length}, 2xx ${twoxx.length}, 503 ${unavailable.length} ${JSON.stringify(codes503)}, ` +
        `5xx other than 503 ${other5xx.length}, other unexpected ${run.unexpected.length - other5xx.length}, 409 in flight ${inFlight409.length}; ` +
        `failures ${outage}; 2xx for good ${backS} s after the kill (first 2xx sent after it: ${firstOkS} s); rows lost ${lostCount}; p99 before ${round1(p99Before)} ms, after ${round1(p99After)} ms ` +
        `(ratio ${Math.round((p99After / p99Before) * 100) / 100}, ${Math.max(p99Before, p99After) / Math.min(p99Before, p99After) <= P99_RATIO_TARGET ? 'within' : 'outside'} issue 20's 20%); ` +
        `rw_back_seconds ${kill.rwBackS}, rejoined_seconds ${kill.rejoinedS}; ${kill.killed} killed, ${kill.newLeader} leads${lag}`,
    );
    t.diagnostic(
      `run ${n}: ${storage instanceof Error ? 'storage check failed' : storage.summary}; ` +
        (events instanceof Error
          ? 'event check failed; '
          : `${events.delivered} events delivered (${events.duplicates} more than once, ${events.stray.length} delivered but not stored); `) +
        `checks Db: query answering ${firstBeatOk('query')} s and read ${firstBeatOk('read')} s after the kill, ${beatErrors.length} errors meanwhile` +
        (beatErrors.length > 0
          ? ` (${[...new Set(beatErrors.map((b) => `${b.path}: ${b.detail}`))].slice(0, 4).join(' | ')})`
          : ''),
    );
    if (!run.sync && lostNow) {
      const ackedAt = [
        ...lostNow.sessions.map((id) => sessionsAcked.get(id)!.at),
        ...lostNow.attempts.map((id) => attemptsAcked.get(id)!.at),
        ...lostNow.paid.map((id) => paidAcked.get(id)!.at),
        ...lostNow.payouts.map((id) => payoutsAcked.get(id)!.at),
      ].map((at) => Math.round(at - run.killAt));
      t.diagnostic(
        lostCount === 0
          ? `run ${n} (asynchronous): no acknowledged object was lost this time (without synchronous_mode that is luck, not a guarantee)`
          : `run ${n} (asynchronous): ${lostCount} acknowledged objects lost: ${lostNow.sessions.length} sessions, ${lostNow.attempts.length} attempts, ` +
              `${lostNow.paid.length} payments (answered paid), ${lostNow.payouts.length} payouts; their 2xx came from ${Math.min(...ackedAt)} to ${Math.max(...ackedAt)} ms after the kill (negative: before it); ` +
              `${run.lossEchoes.length} later steps answered 404 for them` +
              (events instanceof Error
                ? ''
                : `; ${events.stray.length} webhooks announced objects that no longer exist`),
      );
    }
    if (run.unexpected.length > 0) {
      for (const p of processes)
        t.diagnostic(`server ${p.name} (pid ${p.pid}), last lines:\n${p.server.output.slice(-40).join('\n')}`);
    }

    assertProcessesRunning();
    assert.deepEqual(
      other5xx.map((s) => `${s.step} on ${s.process}: ${s.detail}`),
      [],
      'no 5xx other than 503',
    );
    assert.deepEqual(run.unexpected, [], 'only 2xx, 503 and retryable 409s: no other answer, no hang, every job done');
    assert.ok(
      backS <= FIRST_2XX_AFTER_KILL_MAX_S,
      `2xx again ${backS} s after the kill, after the last 503 (at most ${FIRST_2XX_AFTER_KILL_MAX_S} s)`,
    );
    for (const path of ['query', 'read'] as const) {
      assert.ok(
        firstBeatOk(path) <= FIRST_2XX_AFTER_KILL_MAX_S,
        `the test's own Db (${path}) answers again after the failover by itself (${firstBeatOk(path)} s after the kill)`,
      );
    }
    if (storage instanceof Error) throw storage;
    if (events instanceof Error) throw events;
    if (run.sync) {
      assert.deepEqual(
        storage.lostNow,
        { sessions: [], attempts: [], paid: [], payouts: [] },
        'rows lost: no acknowledged object is missing with synchronous_mode on',
      );
      assert.deepEqual(events.stray, [], 'no webhook for an object that is not stored');
    }
  }

  it(
    'run 1: the primary is SIGKILLed under load; nothing acknowledged is lost, only 503s meanwhile',
    { skip: SKIP, timeout: 150_000 },
    (t) => failoverRun(t, 1, { sync: true, inject: false, switchBack: true }),
  );
  it(
    'run 2: the same again after a switchover back, on the same server processes',
    { skip: SKIP, timeout: 150_000 },
    (t) => failoverRun(t, 2, { sync: true, inject: false, switchBack: true }),
  );
  it('run 3: the same a third time', { skip: SKIP, timeout: 150_000 }, (t) =>
    failoverRun(t, 3, { sync: true, inject: false, switchBack: true }),
  );
  it("the API's p99 after the three failovers is not more than 20% above its p99 before them (runs 1-3 pooled)", {
    skip: SKIP,
  }, (t) => {
    if (startFailure) throw startFailure;
    const { before, after } = pooledLatencies;
    assert.ok(
      before.length >= 300 && after.length >= 300,
      `enough answers to compare (${before.length} before, ${after.length} after)`,
    );
    const p99Before = quantile(before, 0.99);
    const p99After = quantile(after, 0.99);
    t.diagnostic(
      `p99 over runs 1-3: before ${round1(p99Before)} ms (${before.length} answers), after ${round1(p99After)} ms (${after.length} answers), ratio ${Math.round((p99After / p99Before) * 100) / 100}`,
    );
    assert.ok(
      p99After <= p99Before * P99_RATIO_TARGET,
      `p99 after ${round1(p99After)} ms is within ${Math.round((P99_RATIO_TARGET - 1) * 100)}% of before (${round1(p99Before)} ms)`,
    );
  });
  it(
    'run 4: replication lag, then the kill, synchronous_mode on: commits wait for the standby, nothing acknowledged is lost',
    { skip: SKIP, timeout: 150_000 },
    (t) => failoverRun(t, 4, { sync: true, inject: true, switchBack: true }),
  );
  it('run 5: the same with SYNC_MODE=off: what is lost is measured; no 500, the ledger and the events of what survived are consistent', {
    skip: SKIP,
    timeout: 180_000,
  }, async (t) => {
    if (startFailure) throw startFailure;
    await ha('up.sh', [], { SYNC_MODE: 'off' });
    await failoverRun(t, 5, { sync: false, inject: true, switchBack: false });
  });
});
