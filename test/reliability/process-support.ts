// Support for the process-level reliability tests (crash, db-loss, receivers): the real server as a child
// process (node --import tsx src/main.ts) on a free port, a small HTTP client that tells a network failure
// (no answer: the outcome is unknown) from an HTTP answer, a seeded random generator, and the storage set-up
// of test/support/webhooks.ts (isolatedStorage: a private PostgreSQL database per file, or an embedded dir).
// (test/reliability/support.ts belongs to the in-process fuzz and security suites.)
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { openDb, type Db } from '../../src/db/index.ts';
import { balance, checkInvariants } from '../../src/ledger/service.ts';
import { isolatedStorage, waitFor, type IsolatedStorage } from '../support/webhooks.ts';
import { seededDataDir } from '../support/embedded-template.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---------------------------------------------------------------------------------------------------
// Storage: embedded in a temp DATA_DIR, or a private database on DATABASE_URL's server.

export interface Storage {
  kind: 'embedded' | 'postgres';
  databaseUrl: string | null;
  dataDir: string | null;
  /** The storage environment of a server child process. */
  env(): Record<string, string>;
  /** Opens the storage from the test process (embedded: only while no server runs on it). */
  open(options?: { migrate?: boolean }): Promise<Db>;
  /** Runs fn on an open storage, closed afterwards. */
  with<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  drop(): Promise<void>;
}

/**
 * databaseUrl omitted: isolatedStorage() (a fresh database next to DATABASE_URL, or a temp embedded dir).
 * databaseUrl given: that database as is (the caller owns it).
 */
/**
 * `seeded`: an embedded data dir starts as a copy of the test template (test/support/embedded-template.ts), for
 * tests whose subject is not the first start's migrations.
 */
export async function reliabilityStorage(
  prefix: string,
  databaseUrl?: string,
  { seeded = false }: { seeded?: boolean } = {},
): Promise<Storage> {
  let isolated: IsolatedStorage | null = null;
  let url: string | null;
  if (databaseUrl === undefined) {
    isolated = await isolatedStorage();
    url = isolated.databaseUrl;
  } else {
    url = databaseUrl;
  }
  const dataDir = url
    ? null
    : seeded
      ? await seededDataDir(`sika-${prefix}-`)
      : mkdtempSync(join(tmpdir(), `sika-${prefix}-`));
  const config = { databaseUrl: url, dataDir };
  const storage: Storage = {
    kind: url ? 'postgres' : 'embedded',
    databaseUrl: url,
    dataDir,
    env: (): Record<string, string> => (url ? { DATABASE_URL: url } : { DATA_DIR: dataDir! }),
    open: (options = {}) => openDb(config, options),
    async with(fn) {
      const db = await storage.open();
      try {
        return await fn(db);
      } finally {
        await db.close();
      }
    },
    async drop() {
      await isolated?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return storage;
}

/** A merchant with Test/Live keys and, when a URL is given, a webhook endpoint per key (created from the test process). */
export function newMerchant(db: Db, name: string, webhookUrl: string | null): Promise<CreatedMerchant> {
  const email = `${name.toLowerCase().replace(/\W+/g, '-')}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  // Receivers listen on 127.0.0.1, as do the servers (BASE_URL loopback: private targets allowed by default).
  return createMerchant(db, { name, email, webhookUrl }, { allowPrivateTargets: true });
}

// ---------------------------------------------------------------------------------------------------
// The server process

export interface Server {
  child: ChildProcess;
  base: string;
  /** The last lines the process printed (stdout and stderr). */
  output: string[];
  /** SIGKILL, resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (graceful), resolves with the exit code. */
  stop(): Promise<number | null>;
}

const children = new Set<ChildProcess>();
const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;
process.on('exit', () => {
  for (const child of children) if (running(child)) child.kill('SIGKILL');
});

/** Kills every server child of this file still running (its after() hook). */
export function killAllServers(): void {
  for (const child of children) if (running(child)) child.kill('SIGKILL');
}

/** Fast webhook retries and short claims, so a test sees deliveries (and their recovery) within seconds. */
export const FAST_WORKER_ENV: Record<string, string> = {
  WORKERS: 'on',
  WEBHOOK_CLAIM_TTL_S: '2',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_SCHEDULE_S: '1,1,1,1,1,1,1,1,1,1',
  WEBHOOK_POLL_MS: '20',
};

/** Spawns the server on a free port with the given storage and waits for /readyz. */
export async function startServer(
  storageEnv: Record<string, string>,
  extraEnv: Record<string, string> = {},
  readyTimeoutMs = 60_000,
): Promise<Server> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  Object.assign(env, {
    ...storageEnv,
    HOST: '127.0.0.1',
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    // Receivers listen on 127.0.0.1 (the default for a loopback BASE_URL, said here so a test can rely on it).
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on',
    LOG_LEVEL: 'warn',
    REDIS_URL: '',
    RATE_LIMIT_KEY_PER_S: '100000',
    RATE_LIMIT_IP_PER_S: '100000',
    RATE_LIMIT_SESSION_PER_S: '100000',
    // Live money clears at once here, as in test/support/helpers.ts (issue 34's clearing has its own tests).
    CLEARING_DAYS: 'momo=0,card=0,bank_transfer=0,cash=0',
    ...FAST_WORKER_ENV,
    ...extraEnv,
  });
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (output.length > 300) output.splice(0, output.length - 300);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const base = `http://127.0.0.1:${port}`;
  const server: Server = {
    child,
    base,
    output,
    async kill() {
      if (!running(child)) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!running(child)) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      return code as number | null;
    },
  };
  try {
    await waitFor(
      'the server to be ready',
      async () => {
        if (child.exitCode !== null) assert.fail(`the server exited with ${child.exitCode}:\n${output.join('\n')}`);
        return fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
          (res) => res.ok,
          () => false,
        );
      },
      readyTimeoutMs,
      50,
    );
  } catch (error) {
    await server.kill();
    throw error;
  }
  return server;
}

// ---------------------------------------------------------------------------------------------------
// HTTP client

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON answer, read loosely by the checks that follow
  body: any;
  text: string;
  headers: Headers;
  ms: number;
}

/** Thrown when no HTTP answer came (connection refused or reset, timeout): the outcome is unknown. */
export class NoAnswer extends Error {
  constructor(
    readonly what: string,
    readonly reason: unknown,
    readonly ms: number,
  ) {
    const r = reason as { name?: string; cause?: { code?: string } };
    super(`${what}: no answer after ${Math.round(ms)} ms (${r?.cause?.code ?? r?.name ?? String(reason)})`);
  }
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  idempotencyKey?: string;
  timeoutMs?: number;
}

/** One request; an Answer for any HTTP status, NoAnswer when the server did not answer. */
export async function call(
  base: string,
  method: 'GET' | 'POST',
  path: string,
  options: CallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  const started = performance.now();
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
    text = await res.text();
  } catch (error) {
    throw new NoAnswer(`${method} ${path}`, error, performance.now() - started);
  }
  const ms = performance.now() - started;
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  return { status: res.status, body, text, headers: res.headers, ms };
}

// ---------------------------------------------------------------------------------------------------
// Numbers

/** mulberry32: a small seeded generator, [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The q-quantile (0..1) of a list of numbers, nearest rank. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export const median = (values: number[]) => quantile(values, 0.5);

export const round1 = (n: number) => Math.round(n * 10) / 10;

/**
 * Every payout the client was told about (2xx) is stored once under its client_reference, with its amount,
 * nothing extra is stored, and each Test payout was paid exactly once: Test payouts are paid as they are made,
 * so one payout_paid entry and nothing held, posted or voided.
 */
export function assertTestPayoutsPaidOnce(
  stored: { id: string; client_reference: string; status: string; amount_minor: number }[],
  acked: Map<string, { id: string; amount: number }>,
  jobs: number,
  entryCount: (kind: string, referenceId: string) => number,
): void {
  for (const [clientReference, payout] of acked) {
    const rows = stored.filter((p) => p.client_reference === clientReference);
    assert.equal(rows.length, 1, `one payout for client_reference ${clientReference}`);
    assert.equal(
      rows[0]!.id,
      payout.id,
      `payout ${payout.id} acknowledged with 2xx is stored under its client_reference`,
    );
    assert.equal(rows[0]!.amount_minor, payout.amount);
  }
  assert.equal(stored.length, jobs, 'one payout per payout job, none extra');
  for (const p of stored) {
    assert.equal(p.status, 'paid');
    assert.equal(entryCount('payout_paid', p.id), 1, `payout ${p.id}: paid once`);
    for (const kind of ['payout_hold', 'payout_post', 'payout_void'])
      assert.equal(entryCount(kind, p.id), 0, `payout ${p.id}: no ${kind}`);
  }
}

/**
 * The ledger is healthy (checkInvariants) and the merchant's Test balance is the funding plus the paid attempts'
 * credits less the payouts' debits, each counted once, with nothing held. Returns the balance.
 */
export async function assertTestBalance(
  db: Db,
  merchantId: string,
  fundingMinor: number,
  attempts: { status: string; base_minor: number; fee_minor: number; bearer: string }[],
  payouts: { total_debit_minor: number }[],
): Promise<{ available_minor: number }> {
  assert.deepEqual(
    await checkInvariants(db, merchantId),
    [],
    'ledger invariants (balanced entries, cached balances equal their lines, no negative balance)',
  );
  const credits = attempts
    .filter((a) => a.status === 'paid')
    .reduce((sum, a) => sum + a.base_minor - (a.bearer === 'merchant' ? a.fee_minor : 0), 0);
  const debits = payouts.reduce((sum, p) => sum + p.total_debit_minor, 0);
  const ledger = await balance(db, merchantId, 'test');
  assert.deepEqual(
    { available: ledger.available_minor, held: ledger.held_minor },
    { available: fundingMinor + credits - debits, held: 0 },
    'balance = funding + paid credits - paid payouts, each counted once',
  );
  return ledger;
}

/** How many journal entries of a kind point at an object, among a merchant's Test entries. */
export async function journalEntryCounter(
  db: Db,
  merchantId: string,
): Promise<(kind: string, referenceId: string) => number> {
  const entries = await db.query<{ kind: string; reference_id: string; n: number }>(
    `SELECT kind, reference_id, count(*)::int AS n FROM journal_entries WHERE merchant_id = $1 AND environment = 'test' GROUP BY 1, 2`,
    [merchantId],
  );
  return (kind, referenceId) => entries.find((e) => e.kind === kind && e.reference_id === referenceId)?.n ?? 0;
}

/** A merchant's Test payouts as stored. */
export const storedTestPayouts = (db: Db, merchantId: string) =>
  db.query<{ id: string; client_reference: string; status: string; amount_minor: number; total_debit_minor: number }>(
    `SELECT id, client_reference, status, amount_minor, total_debit_minor FROM payouts WHERE merchant_id = $1 AND environment = 'test'`,
    [merchantId],
  );
