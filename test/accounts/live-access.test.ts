// A suspension reaches every process within 1 s (issue 33): each process caches each merchant's standing
// for at most 500 ms and drops it when migration 036's trigger announces a change. Here a merchant in use by
// a second server — a real OS process on the same PostgreSQL database (src/main.ts), and a second app on the
// same storage (both storages) — is suspended from this process; its Live key is refused there within 1 s
// while requests keep arriving, never accepted again until reinstated, and Test keeps working throughout.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { reinstateMerchant, suspendMerchant } from '../../src/accounts/activation.ts';
import { ACTIVATION_CHANGED_CHANNEL, SUSPENSION_EFFECTIVE_MS } from '../../src/accounts/live-access.ts';
import { buildApp } from '../../src/app.ts';
import { openDb, type Db } from '../../src/db/index.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { killAllServers, startServer, type Server } from '../reliability/process-support.ts';

const OPERATOR = { type: 'operator' as const, id: 'op-live-access-test', email: null };
const POLL_MS = 10;

type Get = (key: string) => Promise<{ status: number; code: string | null }>;

/** Uses the Live key until it is refused; answers how long after the suspension committed. */
async function refusalDelay(t: TestContext, merchantId: string, liveKey: string, get: Get): Promise<number> {
  // Warm the other process's cache, as a busy merchant would.
  for (let i = 0; i < 5; i++) assert.equal((await get(liveKey)).status, 200);
  await suspendMerchant(t.db, merchantId, 'Suspected fraud', OPERATOR);
  const committed = performance.now();
  for (;;) {
    const answer = await get(liveKey);
    const elapsed = performance.now() - committed;
    if (answer.status === 403) {
      assert.equal(answer.code, 'ACCOUNT_SUSPENDED');
      return elapsed;
    }
    assert.equal(answer.status, 200);
    if (elapsed > 5_000) assert.fail('never refused');
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function afterwards(t: TestContext, merchantId: string, keys: { live: string; test: string }, get: Get) {
  for (let i = 0; i < 5; i++) assert.equal((await get(keys.live)).code, 'ACCOUNT_SUSPENDED', 'never accepted again');
  assert.equal((await get(keys.test)).status, 200, 'Test keeps working');
  await reinstateMerchant(t.db, merchantId, OPERATOR);
  const start = performance.now();
  while ((await get(keys.live)).status !== 200) {
    assert.ok(performance.now() - start < SUSPENSION_EFFECTIVE_MS, 'reinstated within 1 s');
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

describe(`suspension seen by another app on the same storage (${storageKind})`, () => {
  let t: TestContext;
  let other: FastifyInstance;
  let otherDb: Db;
  before(async () => {
    t = await startTestApp();
    otherDb = t.config.databaseUrl
      ? await openDb({ databaseUrl: t.config.databaseUrl, dataDir: null }, { migrate: false })
      : t.db;
    other = await buildApp({ config: t.config, db: otherDb, logger: false });
    await other.ready();
  });
  after(async () => {
    await other?.close();
    if (otherDb && otherDb !== t.db) await otherDb.close();
    await t?.close();
  });

  const get: Get = async (key) => {
    const res = await other.inject({
      method: 'GET',
      url: '/api/v1/sessions',
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: res.statusCode, code: res.statusCode === 200 ? null : res.json().error.code };
  };

  it(`refuses the Live key within ${SUSPENSION_EFFECTIVE_MS} ms, and opens it again when reinstated`, async () => {
    const m = await t.merchant();
    const delay = await refusalDelay(t, m.merchant_id, m.live_api_key, get);
    assert.ok(delay < SUSPENSION_EFFECTIVE_MS, `refused after ${Math.round(delay)} ms`);
    await afterwards(t, m.merchant_id, { live: m.live_api_key, test: m.test_api_key }, get);
  });

  it('hears the change announced by the trigger, not only the cache expiring (well under 500 ms)', async () => {
    const m = await t.merchant();
    // Several runs: the announcement drops the entry at once, so the refusal never waits for the cache's 500 ms.
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      delays.push(await refusalDelay(t, m.merchant_id, m.live_api_key, get));
      await reinstateMerchant(t.db, m.merchant_id, OPERATOR);
      await new Promise((resolve) => setTimeout(resolve, 600));
    }
    assert.ok(
      Math.max(...delays) < 400,
      `delays ${delays.map(Math.round).join(', ')} ms (channel ${ACTIVATION_CHANGED_CHANNEL})`,
    );
  });
});

describe(`suspension seen by a second server process within 1 s (${storageKind})`, {
  skip: storageKind === 'embedded' ? 'embedded storage allows one process per data dir' : false,
}, () => {
  let t: TestContext;
  let server: Server;
  before(async () => {
    t = await startTestApp();
    // The same database as this process (no workers: the shared database holds other files' deliveries).
    server = await startServer({ DATABASE_URL: t.config.databaseUrl! }, { WORKERS: 'off' });
  });
  after(async () => {
    await server?.stop();
    killAllServers();
    await t?.close();
  });

  const get: Get = async (key) => {
    const res = await fetch(`${server.base}/api/v1/sessions`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await res.json()) as { error?: { code?: string } };
    return { status: res.status, code: body.error?.code ?? null };
  };

  it(`the other process refuses the Live key within ${SUSPENSION_EFFECTIVE_MS} ms of the suspension`, async () => {
    const m = await t.merchant();
    const delay = await refusalDelay(t, m.merchant_id, m.live_api_key, get);
    assert.ok(delay < SUSPENSION_EFFECTIVE_MS, `refused after ${Math.round(delay)} ms`);
    await afterwards(t, m.merchant_id, { live: m.live_api_key, test: m.test_api_key }, get);
  });
});
