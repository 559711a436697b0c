// At-least-once delivery across a crash (DESIGN §3 Webhooks, §2 "an outbox row carries the call across a
// crash"): the real server process (node --import tsx src/main.ts) with its delivery worker, events made
// through the API (sessions, MoMo attempts, simulated outcomes), SIGKILL while deliveries are in flight,
// restart, and every event of the merchant reaches the receiver. WEBHOOK_CLAIM_TTL_S=2 lets the claims of
// the killed process lapse quickly.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { openDb } from '../../src/db/index.ts';
import { storageKind } from '../support/helpers.ts';
import {
  isolatedStorage,
  startCountingReceiver,
  waitFor,
  type CountingReceiver,
  type IsolatedStorage,
  type Receiver,
} from '../support/webhooks.ts';
import { seededDataDir } from '../support/embedded-template.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RECEIVER_DELAY_MS = 300;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Server {
  child: ChildProcess;
  base: string;
  output: string[];
}

describe(`webhook delivery across a server crash (${storageKind})`, () => {
  let storage: IsolatedStorage;
  let dataDir: string | null = null;
  const children = new Set<ChildProcess>();

  before(async () => {
    storage = await isolatedStorage();
    if (!storage.databaseUrl) dataDir = await seededDataDir('sika-webhook-crash-');
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await storage.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const storageConfig = () => ({ databaseUrl: storage.databaseUrl, dataDir });

  async function startServer(): Promise<Server> {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.DATABASE_URL;
    delete env.DATA_DIR;
    Object.assign(env, {
      ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl } : { DATA_DIR: dataDir! }),
      HOST: '127.0.0.1',
      PORT: String(port),
      BASE_URL: `http://127.0.0.1:${port}`,
      // The receiver listens on 127.0.0.1 (the default for a loopback BASE_URL, said here so the test can rely on it).
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on',
      LOG_LEVEL: 'warn',
      WORKERS: 'on',
      REDIS_URL: '',
      WEBHOOK_CLAIM_TTL_S: '2',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_SCHEDULE_S: '1,1,1,1,1,1,1,1,1,1',
      WEBHOOK_POLL_MS: '20',
      RATE_LIMIT_KEY_PER_S: '100000',
      RATE_LIMIT_IP_PER_S: '100000',
      RATE_LIMIT_SESSION_PER_S: '100000',
    });
    const child = spawn(process.execPath, ['scripts/start.mjs'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    const output: string[] = [];
    const keep = (chunk: Buffer) => {
      output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      if (output.length > 200) output.splice(0, output.length - 200);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const base = `http://127.0.0.1:${port}`;
    await waitFor(
      'the server to be ready',
      async () => {
        if (child.exitCode !== null) assert.fail(`the server exited with ${child.exitCode}:\n${output.join('\n')}`);
        return fetch(`${base}/readyz`).then(
          (res) => res.ok,
          () => false,
        );
      },
      60_000,
      100,
    );
    return { child, base, output };
  }

  async function kill(server: Server): Promise<void> {
    const exited = once(server.child, 'exit');
    server.child.kill('SIGKILL');
    await exited;
  }

  async function api(server: Server, method: 'GET' | 'POST', path: string, key: string | null, body?: unknown) {
    const res = await fetch(`${server.base}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text);
  }

  /**
   * One hosted-checkout payment through the API. Paid first time: pending + completed events. Failed
   * first: pending, then (back to open, no event) a second attempt pending + completed. Returns the count.
   */
  async function payment(server: Server, merchant: CreatedMerchant, i: number, failFirst: boolean): Promise<number> {
    const key = merchant.test_api_key;
    const session = await api(server, 'POST', '/api/v1/sessions', key, {
      amount_minor: 1_000 + i,
      invoice_ref: `INV-CRASH-${i}`,
    });
    const quote = await api(server, 'GET', `/api/v1/checkout/sessions/${session.id}/quote`, null);
    const attempt = () =>
      api(server, 'POST', `/api/v1/checkout/sessions/${session.id}/provider-attempts`, null, {
        rail: 'momo',
        amount_minor: quote.surcharges.momo.total_minor,
        operator: 'mtn',
        phone: '0241234567',
      });
    const simulate = (reference: string, outcome: string) =>
      api(server, 'POST', `/api/v1/test/payment-attempts/${reference}/simulate`, key, { outcome });
    if (failFirst) {
      const first = await attempt();
      assert.equal((await simulate(first.attempt_reference, 'failed')).status, 'failed');
    }
    const paid = await attempt();
    const result = await simulate(paid.attempt_reference, 'paid');
    assert.equal(result.session_status, 'success');
    return failFirst ? 3 : 2;
  }

  const produce = async (server: Server, merchant: CreatedMerchant, from: number, count: number) =>
    (
      await Promise.all(
        Array.from({ length: count }, (_, k) => payment(server, merchant, from + k, (from + k) % 2 === 0)),
      )
    ).reduce((a, b) => a + b, 0);

  it('events committed before a SIGKILL mid-delivery all reach the receiver after a restart, each validly signed', {
    timeout: 180_000,
  }, async (t) => {
    let merchant!: CreatedMerchant;
    let receiver!: Receiver;
    let counting!: CountingReceiver;
    try {
      counting = await startCountingReceiver(
        () => merchant.test_webhook_secret!,
        (res) => void setTimeout(() => res.end('ok'), RECEIVER_DELAY_MS),
      );
      receiver = counting.receiver;
      const { arrivals } = counting;
      // The merchant exists before the server starts (embedded storage allows one process at a time).
      const db = await openDb(storageConfig());
      try {
        merchant = await createMerchant(
          db,
          { name: 'Crash Test Shop', email: `crash-${Date.now()}@example.com`, webhookUrl: receiver.url },
          { allowPrivateTargets: true },
        );
      } finally {
        await db.close();
      }

      // Phase 1: events committed through the API, then SIGKILL while deliveries are in flight.
      const first = await startServer();
      const phase1 = await produce(first, merchant, 0, 8);
      await waitFor('a delivery in flight at the receiver', () => receiver.inFlight() > 0, 10_000, 5);
      const atKill = { inFlight: receiver.inFlight(), received: arrivals.size, events: phase1 };
      await kill(first);
      t.diagnostic(`at SIGKILL: ${atKill.inFlight} in flight, ${atKill.received} of ${atKill.events} events received`);
      // Those in flight were answered by nobody the worker could hear: their tries were never recorded.
      assert.ok(atKill.inFlight > 0, 'the kill came while deliveries were in flight');

      // Phase 2: restart, more events, then wait until the receiver has been quiet for a while.
      const second = await startServer();
      const phase2 = await produce(second, merchant, 8, 8);
      const expected = phase1 + phase2;
      let lastCount = -1;
      let quietSince = performance.now();
      await waitFor(
        `${expected} distinct events at the receiver and 3 s of quiet`,
        () => {
          const count = [...arrivals.values()].reduce((a, b) => a + b, 0);
          if (count !== lastCount || receiver.inFlight() > 0) {
            lastCount = count;
            quietSince = performance.now();
          }
          return arrivals.size >= expected && performance.now() - quietSince > 3_000;
        },
        60_000,
        50,
      );

      // A graceful stop, then the storage is ours to read (embedded: one process at a time).
      const stopped = once(second.child, 'exit');
      second.child.kill('SIGTERM');
      const [code] = await stopped;
      assert.equal(code, 0, `graceful shutdown exit code; output:\n${second.output.join('\n')}`);

      const check = await openDb(storageConfig(), { migrate: false });
      try {
        const events = await check.query<{ id: string; type: string }>(
          'SELECT id, type FROM events WHERE merchant_id = $1 ORDER BY created_at, id',
          [merchant.merchant_id],
        );
        assert.ok(events.length >= expected, `${events.length} events stored, ${expected} expected from the API calls`);
        const missing = events.filter((e) => !arrivals.has(e.id));
        assert.deepEqual(missing, [], `events that never reached the receiver (of ${events.length})`);
        const deliveries = await check.query<{ status: string; n: number }>(
          'SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE merchant_id = $1 GROUP BY status',
          [merchant.merchant_id],
        );
        assert.deepEqual(deliveries, [{ status: 'delivered', n: events.length }]);
        const stray = [...arrivals.keys()].filter((id) => !events.some((e) => e.id === id));
        assert.deepEqual(stray, [], 'the receiver got nothing but this merchant’s events');
        const duplicates = [...arrivals.values()].filter((n) => n > 1).length;
        t.diagnostic(`${events.length} events, ${duplicates} received more than once (at least once allows it)`);
      } finally {
        await check.close();
      }
      assert.equal(counting.badSignatures(), 0, 'every request verified with the endpoint secret');
    } finally {
      await receiver?.close();
    }
  });
});
