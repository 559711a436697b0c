// The real process (DESIGN §1 "Runtime contract"): `node --import tsx src/main.ts` and the `sika` CLI as
// a user runs them, on one data dir (or on DATABASE_URL when set). JSON logs with request ids, graceful
// shutdown on SIGTERM with in-flight requests finished, data kept across restarts, the CLI's output (sent to
// the server while it holds the data dir), and config validation at start.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { storageKind } from '../support/helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const START_TIMEOUT_MS = 60_000;

interface LogLine {
  level: number;
  time: number;
  msg: string;
  reqId?: string;
  req?: { method: string; url: string };
  res?: { statusCode: number };
  [key: string]: unknown;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** One running `src/main.ts`: its stdout lines (all expected to be pino JSON), stderr, and exit. */
class ServerProcess {
  readonly lines: string[] = [];
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private partial = '';
  private waiters: (() => void)[] = [];

  constructor(
    env: NodeJS.ProcessEnv,
    readonly port: number,
  ) {
    this.child = spawn(process.execPath, ['scripts/start.mjs'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.partial + chunk).split('\n');
      this.partial = parts.pop()!;
      this.lines.push(...parts.filter((line) => line.length > 0));
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    void this.exited.then(() => {
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The parsed log lines; fails on any stdout line that is not JSON. */
  logs(): LogLine[] {
    return this.lines.map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        return assert.fail(`stdout line is not JSON: ${line.slice(0, 200)}`);
      }
    });
  }

  /** Waits for a log line matching `match` (fails if the process exits first or time runs out). */
  async waitForLog(match: (line: LogLine) => boolean, what: string, timeoutMs = 10_000): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.logs().find(match);
      if (found) return found;
      if (!this.running) assert.fail(`the server exited before logging ${what}; stderr: ${this.stderr.slice(0, 500)}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) assert.fail(`no log line for ${what} within ${timeoutMs} ms`);
      await Promise.race([new Promise<void>((resolve) => this.waiters.push(resolve)), sleep(Math.min(remaining, 250))]);
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/sika.mjs', ...args],
      { cwd: ROOT, env, timeout: 90_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** An HTTP/1.1 request over a raw socket, so its body can arrive in parts; resolves with status and body. */
function rawRequest(port: number, head: string, body: string) {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk;
  });
  const done = new Promise<{ status: number; body: string }>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
      resolve({ status, body: received.slice(received.indexOf('\r\n\r\n') + 4) });
    });
  });
  const send = (text: string) =>
    new Promise<void>((resolve, reject) => socket.write(text, (error) => (error ? reject(error) : resolve())));
  return {
    ready: new Promise<void>((resolve) => socket.once('connect', () => resolve())),
    send,
    done,
    head: `${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
  };
}

describe(`the sika process and CLI (${storageKind})`, { timeout: 240_000 }, () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess | null = null;
  const started: ServerProcess[] = [];
  let merchant: Record<string, string | null>;
  let session: Record<string, unknown>;
  let slowSession: Record<string, unknown>;

  async function startServer(): Promise<ServerProcess> {
    const port = await freePort();
    const proc = new ServerProcess({ ...env, PORT: String(port) }, port);
    started.push(proc);
    await proc.waitForLog((line) => line.msg === 'Sika is ready', 'Sika is ready', START_TIMEOUT_MS);
    return proc;
  }

  async function stopServer(proc: ServerProcess): Promise<void> {
    proc.signal('SIGTERM');
    const exit = await proc.exited;
    assert.deepEqual(
      exit,
      { code: 0, signal: null },
      `the server did not exit 0 on SIGTERM; stderr: ${proc.stderr.slice(0, 500)}`,
    );
  }

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'sika-process-'));
    env = {
      ...process.env,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      REDIS_URL: '',
      BASE_URL: 'http://sika.process.test',
      CHECKOUT_URL_HOST: '',
      // Webhook URLs here (shop.example.com) are not looked up: this machine has no public DNS to ask.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on',
      // On a private data dir the workers run as in production. A PostgreSQL database is shared with the
      // other test files running at the same time: this server's workers would claim their webhook
      // deliveries (and wait on them at shutdown), so they stay off there.
      WORKERS: storageKind === 'postgres' ? 'off' : 'on',
    };
  });
  after(async () => {
    for (const proc of started) {
      if (proc.running) {
        proc.signal('SIGKILL');
        await proc.exited;
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sika merchant create --json prints exactly the five keys, webhook secrets null without a URL', async () => {
    const email = `owner-${randomUUID()}@example.com`;
    const res = await runCli(['merchant', 'create', '--name', 'Process Test Shop', '--email', email, '--json'], env);
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.trim().split('\n');
    assert.equal(lines.length, 1, `one JSON line on stdout: ${res.stdout}`);
    merchant = JSON.parse(lines[0]!);
    assert.deepEqual(Object.keys(merchant).sort(), [
      'live_api_key',
      'live_webhook_secret',
      'merchant_id',
      'test_api_key',
      'test_webhook_secret',
    ]);
    assert.match(merchant.merchant_id!, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.match(merchant.test_api_key!, /^ak_test_\w+$/);
    assert.match(merchant.live_api_key!, /^ak_live_\w+$/);
    assert.equal(merchant.test_webhook_secret, null);
    assert.equal(merchant.live_webhook_secret, null);
  });

  it('sika merchant create with an https --webhook-url prints a whsec_ secret for each environment', async () => {
    const res = await runCli(
      [
        'merchant',
        'create',
        '--name',
        'Hooked Shop',
        '--email',
        `hooks-${randomUUID()}@example.com`,
        '--webhook-url',
        'https://shop.example.com/sika/webhooks',
        '--json',
      ],
      env,
    );
    assert.equal(res.code, 0, res.stderr);
    const created = JSON.parse(res.stdout) as Record<string, string | null>;
    assert.deepEqual(Object.keys(created).sort(), [
      'live_api_key',
      'live_webhook_secret',
      'merchant_id',
      'test_api_key',
      'test_webhook_secret',
    ]);
    assert.match(created.test_api_key!, /^ak_test_/);
    assert.match(created.live_api_key!, /^ak_live_/);
    assert.match(created.test_webhook_secret!, /^whsec_[A-Za-z0-9+/=]+$/);
    assert.match(created.live_webhook_secret!, /^whsec_[A-Za-z0-9+/=]+$/);
    assert.notEqual(created.test_webhook_secret, created.live_webhook_secret);
    assert.notEqual(created.merchant_id, merchant.merchant_id);
  });

  it('the server logs pino JSON on stdout and every request log line carries its reqId', async () => {
    server = await startServer();
    const ready = await server.waitForLog((line) => line.msg === 'Sika is ready', 'ready');
    assert.equal(ready.storage, storageKind);

    const created = await fetch(`${server.base}/api/v1/sessions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${merchant.test_api_key}`,
        'content-type': 'application/json',
        'x-request-id': 'proc-create-1',
      },
      body: JSON.stringify({
        amount_minor: 25000,
        invoice_ref: 'INV-PROC-1',
        description: 'kept across restarts',
        metadata: { order: 'P1' },
      }),
    });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('x-request-id'), 'proc-create-1');
    session = (await created.json()) as Record<string, unknown>;
    const refused = await fetch(`${server.base}/api/v1/sessions/${String(session.id)}`, {
      headers: { 'x-request-id': 'proc-401' },
    });
    assert.equal(refused.status, 401);
    await server.waitForLog(
      (line) => line.reqId === 'proc-401' && line.msg === 'request completed',
      'the 401 completion',
    );

    const logs = server.logs();
    for (const line of logs) {
      assert.equal(typeof line.level, 'number', `pino level on ${JSON.stringify(line)}`);
      assert.equal(typeof line.time, 'number');
      assert.equal(typeof line.msg, 'string');
    }
    const requestLines = logs.filter(
      (line) => line.req || line.res || line.msg === 'incoming request' || line.msg === 'request completed',
    );
    assert.ok(requestLines.length >= 4, `request log lines: ${requestLines.length}`);
    for (const line of requestLines)
      assert.equal(typeof line.reqId, 'string', `request log line without reqId: ${JSON.stringify(line)}`);
    for (const id of ['proc-create-1', 'proc-401']) {
      const mine = logs.filter((line) => line.reqId === id).map((line) => line.msg);
      assert.ok(mine.includes('incoming request') && mine.includes('request completed'), `${id}: ${mine.join(' | ')}`);
    }
    // The 401's own log line (the error handler's) is tied to the request too.
    assert.ok(logs.some((line) => line.reqId === 'proc-401' && line.code === 'UNAUTHORIZED'));
    // Keys never reach the logs.
    assert.ok(!server.lines.some((line) => line.includes(merchant.test_api_key!)), 'an API key was logged');
  });

  it('the CLI run while the server holds the data dir is sent to the server and runs there (issue 19)', {
    skip: storageKind === 'postgres' ? 'PostgreSQL is shared by design: no data dir lock' : false,
  }, async () => {
    assert.ok(server?.running, 'the server from the previous test is running');
    const res = await runCli(
      ['merchant', 'create', '--name', 'While Running', '--email', `running-${randomUUID()}@example.com`, '--json'],
      env,
    );
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stderr, '');
    const created = JSON.parse(res.stdout) as Record<string, string | null>;
    assert.deepEqual(Object.keys(created).sort(), [
      'live_api_key',
      'live_webhook_secret',
      'merchant_id',
      'test_api_key',
      'test_webhook_secret',
    ]);
    // The server is unharmed, and the new key works on it at once.
    assert.equal((await fetch(`${server!.base}/readyz`)).status, 200);
    const list = await fetch(`${server!.base}/api/v1/sessions`, {
      headers: { authorization: `Bearer ${created.test_api_key}` },
    });
    assert.equal(list.status, 200);
  });

  it('SIGTERM during a slow in-flight request lets it finish, refuses new connections, then exits 0', async () => {
    assert.ok(server?.running, 'the server from the previous test is running');
    const proc = server!;
    const body = JSON.stringify({ amount_minor: 777, invoice_ref: 'INV-PROC-SLOW' });
    const slow = rawRequest(
      proc.port,
      `POST /api/v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${merchant.test_api_key}\r\nContent-Type: application/json\r\nX-Request-Id: proc-slow-1\r\nConnection: close\r\n`,
      body,
    );
    await slow.ready;
    await slow.send(slow.head + body.slice(0, 10)); // headers and a first piece of the body
    await proc.waitForLog(
      (line) => line.reqId === 'proc-slow-1' && line.msg === 'incoming request',
      'the slow request arriving',
    );

    proc.signal('SIGTERM');
    await proc.waitForLog((line) => line.msg.startsWith('shutting down'), 'shutting down');
    await sleep(300);
    assert.ok(proc.running, 'the process must wait for the in-flight request');
    // No new work is taken while closing.
    const late = await fetch(`${proc.base}/healthz`).then(
      (res) => res.status,
      () => 'refused',
    );
    assert.ok(late === 'refused' || late === 503, `a new request during shutdown got ${late}`);

    await slow.send(body.slice(10)); // the rest of the body
    const response = await slow.done;
    assert.equal(response.status, 201, `the in-flight request did not complete: ${response.body.slice(0, 300)}`);
    slowSession = JSON.parse(response.body) as Record<string, unknown>;
    assert.equal(slowSession.amount_minor, 777);

    const exit = await proc.exited;
    assert.deepEqual(exit, { code: 0, signal: null }, `stderr: ${proc.stderr.slice(0, 500)}`);
    const order = proc.logs().map((line) => line.msg);
    assert.ok(
      order.indexOf('stopped') > order.lastIndexOf('request completed'),
      'stopped only after the last request completed',
    );
    server = null;
  });

  it('sika migrate on a migrated data dir says there is nothing to apply', async () => {
    const res = await runCli(['migrate'], env);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /nothing to apply/);
  });

  it('a restart keeps the data: sessions created before SIGTERM read back identically', async () => {
    assert.ok(session && slowSession, 'the sessions from the previous tests exist');
    const proc = await startServer();
    for (const before of [session, slowSession]) {
      const res = await fetch(`${proc.base}/api/v1/sessions/${String(before.id)}`, {
        headers: { authorization: `Bearer ${merchant.test_api_key}` },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), before);
    }
    await stopServer(proc);
  });

  it('a bad config value (PORT=abc) stops the server at start with a non-zero exit and a message naming PORT', async () => {
    // What `npm start` runs.
    const res = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, ['scripts/start.mjs'], {
        cwd: ROOT,
        env: { ...env, PORT: 'abc' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      child.once('exit', (code) => resolve({ code, output }));
    });
    assert.notEqual(res.code, 0, res.output);
    assert.match(res.output, /invalid configuration/);
    assert.match(res.output, /PORT must be a whole number/);
    assert.match(res.output, /"abc"/);
    assert.doesNotMatch(res.output, /Sika is ready/);
  });
});
