// Rate limits per API key (DESIGN §3 "Errors and limits", SPEC 7): over the per-second budget a key gets
// 429 RATE_LIMITED with retry_after_seconds and Retry-After; other keys are unaffected; the budget
// refills after a second. With REDIS_URL, every instance shares one budget per key (DESIGN §2).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config/index.ts';
import { buildApp } from '../../src/app.ts';
import { MemoryWindowStore } from '../../src/http/memory-window-store.ts';
import { bearer, startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope } from '../support/http.ts';

const LIMIT = 5;
const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? '';

const list = (app: FastifyInstance, key: string) =>
  app.inject({ method: 'GET', url: '/api/v1/revenue-lines', headers: bearer(key) });

/** Sends the requests at once (so they all fall in one second) and splits the answers by status. */
async function burst(requests: (() => Promise<LightMyRequestResponse>)[]) {
  const responses = await Promise.all(requests.map((send) => send()));
  const ok = responses.filter((r) => r.statusCode === 200);
  const limited = responses.filter((r) => r.statusCode === 429);
  assert.equal(
    ok.length + limited.length,
    responses.length,
    `unexpected statuses: ${responses.map((r) => r.statusCode).join(', ')}`,
  );
  return { ok, limited, responses };
}

/**
 * Runs a burst and what follows it until one run took under 800 ms, inside the one-second window its assertions
 * assume, then checks what that run saw. On a loaded machine a burst can outlast its window, and the next window is
 * then rightly open; such a run proves nothing either way and is tried again with a fresh key.
 */
async function inOneWindow(run: () => Promise<{ elapsedMs: number; check: () => void }>): Promise<void> {
  for (let tries = 0; tries < 5; tries++) {
    const { elapsedMs, check } = await run();
    if (elapsedMs < 800) return check();
  }
  assert.fail('no run fitted in one window in 5 tries: the machine is too loaded to tell');
}

function assertRateLimited(res: LightMyRequestResponse): void {
  const error = assertErrorEnvelope(res, 429, 'RATE_LIMITED');
  assert.ok(
    Number.isInteger(error.retry_after_seconds) && error.retry_after_seconds! >= 1,
    `retry_after_seconds: ${error.retry_after_seconds}`,
  );
  assert.equal(
    res.headers['retry-after'],
    String(error.retry_after_seconds),
    'Retry-After header matches retry_after_seconds',
  );
}

describe(`rate limit per API key, in memory (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ RATE_LIMIT_KEY_PER_S: String(LIMIT) });
  });
  after(() => t.close());

  it('a key over its per-second budget gets 429 RATE_LIMITED with retry_after_seconds and Retry-After', async () => {
    await inOneWindow(async () => {
      const m = await t.merchant();
      const started = performance.now();
      const { ok, limited } = await burst(Array.from({ length: LIMIT + 3 }, () => () => list(t.app, m.test_api_key)));
      // Still limited right after: the refused requests did not open a new window.
      const rightAfter = await list(t.app, m.test_api_key);
      return {
        elapsedMs: performance.now() - started,
        check() {
          assert.equal(ok.length, LIMIT, `exactly ${LIMIT} requests pass in one second`);
          assert.equal(limited.length, 3);
          for (const res of limited) assertRateLimited(res);
          assertRateLimited(rightAfter);
        },
      };
    });
  });

  it('another key, of another merchant or of the same merchant in the other environment, is unaffected', async () => {
    const other = await t.merchant();
    await inOneWindow(async () => {
      const m = await t.merchant();
      const started = performance.now();
      await burst(Array.from({ length: LIMIT }, () => () => list(t.app, m.test_api_key)));
      const sameKey = await list(t.app, m.test_api_key);
      const otherMerchant = await list(t.app, other.test_api_key);
      const liveKey = await list(t.app, m.live_api_key);
      return {
        elapsedMs: performance.now() - started,
        check() {
          assertRateLimited(sameKey);
          assert.equal(otherMerchant.statusCode, 200, otherMerchant.body);
          assert.equal(liveKey.statusCode, 200, liveKey.body);
        },
      };
    });
  });

  it('the key works again once the second has passed', async () => {
    let m = await t.merchant();
    await inOneWindow(async () => {
      m = await t.merchant();
      const started = performance.now();
      await burst(Array.from({ length: LIMIT }, () => () => list(t.app, m.test_api_key)));
      const limited = await list(t.app, m.test_api_key);
      return { elapsedMs: performance.now() - started, check: () => assertRateLimited(limited) };
    });
    await sleep(1_100);
    const { ok } = await burst(Array.from({ length: LIMIT }, () => () => list(t.app, m.test_api_key)));
    assert.equal(ok.length, LIMIT, 'the whole budget is back after a second');
  });

  it('requests without a valid key are refused as 401, not counted against a key', async () => {
    const m = await t.merchant();
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/v1/revenue-lines',
        headers: bearer(`${m.test_api_key}x`),
      });
      assertErrorEnvelope(res, 401, 'UNAUTHORIZED');
    }
    const { ok } = await burst(Array.from({ length: LIMIT }, () => () => list(t.app, m.test_api_key)));
    assert.equal(ok.length, LIMIT);
  });
});

const NO_REDIS = TEST_REDIS_URL ? false : 'TEST_REDIS_URL is not set: no Redis to share the budget through';

describe(`rate limit per API key shared through Redis by two instances (${storageKind})`, () => {
  let t: TestContext;
  let apps: FastifyInstance[] = [];
  let redis: Redis;
  before(async () => {
    if (NO_REDIS) return;
    t = await startTestApp();
    // Two instances on the same storage, as two processes behind a load balancer would be.
    const config = loadConfig({
      ...process.env,
      LOG_LEVEL: 'silent',
      WORKERS: 'off',
      BASE_URL: 'http://sika.test',
      RATE_LIMIT_KEY_PER_S: String(LIMIT),
      REDIS_URL: TEST_REDIS_URL,
    });
    apps = await Promise.all([0, 1].map(() => buildApp({ config, db: t.db, logger: false })));
    await Promise.all(apps.map((app) => app.ready()));
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    // Both instances must really be connected, or a skipped (failed-open) limit would pass for a shared one.
    assert.equal(await redis.ping(), 'PONG');
  });
  after(async () => {
    for (const app of apps) await app.close();
    redis?.disconnect();
    await t?.close();
  });

  const keyId = async (merchantId: string, environment: 'test' | 'live') =>
    (
      await t.db.query<{ id: string }>(
        'SELECT id::text AS id FROM api_keys WHERE merchant_id = $1 AND environment = $2',
        [merchantId, environment],
      )
    )[0]!.id;

  /** Sends requests through one instance until its counter for the key shows up in Redis (at most ~3 s). */
  async function waitUntilCounted(app: FastifyInstance, key: string, id: string): Promise<void> {
    for (let i = 0; i < 60; i++) {
      assert.equal((await list(app, key)).statusCode, 200);
      if ((await redis.keys(`*${id}*`)).length > 0) return;
      await sleep(50);
    }
    assert.fail('the instance never counted a request in Redis');
  }

  it('requests split across both instances hit 429 at the one shared limit', { skip: NO_REDIS }, async () => {
    const m = await t.merchant(); // a fresh key: its counter in Redis is new on every run
    const [a, b] = apps as [FastifyInstance, FastifyInstance];
    // Both instances' Redis clients must be connected: while connecting, the limit fails open.
    const warmUp = await t.merchant();
    await waitUntilCounted(a, warmUp.test_api_key, await keyId(warmUp.merchant_id, 'test'));
    await waitUntilCounted(b, warmUp.live_api_key, await keyId(warmUp.merchant_id, 'live'));
    const { ok, limited } = await burst([
      ...Array.from({ length: 4 }, () => () => list(a, m.test_api_key)),
      ...Array.from({ length: 4 }, () => () => list(b, m.test_api_key)),
    ]);
    assert.equal(
      ok.length,
      LIMIT,
      `8 requests over two instances: ${ok.length} passed, ${limited.length} limited; in-memory limits would pass all 8`,
    );
    assert.equal(limited.length, 8 - LIMIT);
    for (const res of limited) assertRateLimited(res);
    // Each instance now refuses the key, whichever one took the requests.
    assertRateLimited(await list(a, m.test_api_key));
    assertRateLimited(await list(b, m.test_api_key));
    // Another key is unaffected on both.
    const other = await t.merchant();
    assert.equal((await list(a, other.test_api_key)).statusCode, 200);
    assert.equal((await list(b, other.test_api_key)).statusCode, 200);

    // The counter lives in Redis under the key's id.
    const stored = await redis.keys(`*${await keyId(m.merchant_id, 'test')}*`);
    assert.equal(stored.length, 1, `one Redis counter for the key: ${stored.join(', ')}`);

    // After the second the shared budget is back, again across both instances.
    await sleep(1_100);
    const again = await burst([
      ...Array.from({ length: 3 }, () => () => list(a, m.test_api_key)),
      ...Array.from({ length: 3 }, () => () => list(b, m.test_api_key)),
    ]);
    assert.equal(again.ok.length, LIMIT);
    assert.equal(again.limited.length, 1);
  });
});

describe('the in-memory window store', () => {
  const count = (store: MemoryWindowStore, key: string, windowMs = 1_000) => {
    let answer: { current: number; ttl: number } | undefined;
    store.incr(key, (_error, result) => (answer = result), windowMs, LIMIT);
    return answer!;
  };

  it('answers each request with its own count, not a window object later requests move', () => {
    const store = new MemoryWindowStore();
    const answers = Array.from({ length: 8 }, () => count(store, 'key:a'));
    assert.deepEqual(
      answers.map((a) => a.current),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    for (const a of answers) assert.ok(a.ttl > 0 && a.ttl <= 1_000, `ttl ${a.ttl}`);
    assert.equal(count(store, 'key:b').current, 1, 'another key has its own window');
  });

  it('starts a new window once the old one has ended', async () => {
    const store = new MemoryWindowStore();
    count(store, 'key:a', 50);
    assert.equal(count(store, 'key:a', 50).current, 2);
    await sleep(60);
    assert.equal(count(store, 'key:a', 50).current, 1);
  });

  it('stays within its size: ended windows go first, then the oldest live ones', async () => {
    const store = new MemoryWindowStore(undefined, 4);
    for (const key of ['a', 'b']) count(store, key, 30);
    await sleep(40);
    for (const key of ['c', 'd']) count(store, key, 1_000);
    count(store, 'c', 1_000);
    count(store, 'e', 1_000); // full: a and b (ended) are dropped
    assert.equal(count(store, 'c', 1_000).current, 3, 'live windows survive when ended ones make room');
    count(store, 'f', 1_000);
    count(store, 'g', 1_000); // full of live windows: the oldest half (c, d) goes
    assert.equal(count(store, 'c', 1_000).current, 1);
    assert.equal(count(store, 'f', 1_000).current, 2);
  });
});
