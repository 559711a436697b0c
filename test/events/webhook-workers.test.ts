// Several delivery workers on one PostgreSQL (DESIGN §2 scale-out: workers claim with FOR UPDATE SKIP
// LOCKED): two DeliveryWorker instances, each with its own connection pool, drain a backlog together
// and no delivery is ever handed to both. Embedded storage is one process with one connection, so
// these tests need DATABASE_URL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDb, type Db } from '../../src/db/index.ts';
import { DeliveryWorker, defaultDeliveryOptions } from '../../src/events/delivery.ts';
import { claimDueDeliveries } from '../../src/events/store.ts';
import { verifyWebhook } from '../../src/index.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import {
  captureLogger,
  emitTestEvent,
  isolatedStorage,
  startReceiver,
  testKeyId,
  waitFor,
  type IsolatedStorage,
} from '../support/webhooks.ts';
import { emitEvent } from '../../src/events/outbox.ts';

const SKIP =
  storageKind === 'postgres'
    ? false
    : 'needs PostgreSQL (set DATABASE_URL): embedded storage is a single connection in one process, so there is no second worker to race';

describe(`two delivery workers on one PostgreSQL (${storageKind})`, () => {
  let storage: IsolatedStorage;
  let t: TestContext;
  let poolA: Db;
  let poolB: Db;

  before(async () => {
    if (SKIP) return;
    storage = await isolatedStorage();
    t = await startTestApp(storage.env);
    poolA = await openDb({ databaseUrl: storage.databaseUrl, dataDir: null });
    poolB = await openDb({ databaseUrl: storage.databaseUrl, dataDir: null }, { migrate: false });
  });
  after(async () => {
    await poolA?.close();
    await poolB?.close();
    await t?.close();
    await storage?.drop();
  });

  /** n committed events for the merchant's Test key, 20 to a transaction; returns their ids. */
  async function emitMany(merchantId: string, n: number): Promise<string[]> {
    const keyId = await testKeyId(t.db, merchantId);
    const ids: string[] = [];
    for (let start = 0; start < n; start += 20) {
      await t.db.transaction(async (tx) => {
        for (let i = start; i < Math.min(n, start + 20); i++) {
          const event = await emitEvent(tx, {
            merchantId,
            environment: 'test',
            apiKeyId: keyId,
            type: 'checkout.session.completed',
            objectType: 'checkout.session',
            objectId: `cs_bulk_${i}`,
            objectVersion: 1,
            data: { i },
          });
          ids.push(event.id);
        }
      });
    }
    return ids;
  }

  it('two workers drain 200 events to one receiver: each event arrives exactly once, never twice in flight, with 200 tries in all', {
    skip: SKIP,
  }, async () => {
    const inFlight = new Map<string, number>();
    let overlaps = 0;
    const r = await startReceiver((request, res) => {
      const id = String(request.headers['webhook-id']);
      const now = (inFlight.get(id) ?? 0) + 1;
      inFlight.set(id, now);
      if (now > 1) overlaps++;
      // Quick, but long enough that both workers hold claims at the same time.
      setTimeout(
        () => {
          inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
          res.end('ok');
        },
        2 + (request.n % 5),
      );
    });
    const logA = captureLogger();
    const logB = captureLogger();
    const options = defaultDeliveryOptions({
      retryScheduleS: [1, 1, 1],
      timeoutMs: 5_000,
      claimTtlS: 30,
      pollIntervalMs: 5,
      inFlightMax: 16,
      perEndpointMax: 8,
      allowPrivateTargets: t.config.webhookAllowPrivateTargets,
    });
    const workerA = new DeliveryWorker(poolA, logA, options);
    const workerB = new DeliveryWorker(poolB, logB, options);
    try {
      const m = await t.merchant({ webhookUrl: r.url });
      const ids = await emitMany(m.merchant_id, 200);
      workerA.start();
      workerB.start();
      await waitFor(
        'all 200 deliveries to be delivered',
        async () =>
          (
            await t.db.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM webhook_deliveries WHERE merchant_id = $1 AND status = 'delivered'`,
              [m.merchant_id],
            )
          )[0]!.n === 200,
        60_000,
        50,
      );
      await Promise.all([workerA.stop(), workerB.stop()]);

      // The receiver: every event exactly once, each validly signed, none overlapping itself.
      const received = r.requests.map((q) => String(q.headers['webhook-id']));
      assert.equal(received.length, 200, `${received.length} requests for 200 events`);
      assert.deepEqual([...new Set(received)].sort(), [...ids].sort());
      assert.equal(overlaps, 0);
      for (const q of r.requests) verifyWebhook(q.body, q.headers, m.test_webhook_secret!);

      // The log: 200 tries, one per delivery, by the two workers, both of which did part of the work.
      const tries = await t.db.query<{
        delivery_id: string;
        worker_id: string;
        try_number: number;
        http_status: number;
      }>(
        `SELECT a.delivery_id, a.worker_id, a.try_number, a.http_status FROM webhook_delivery_tries a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.merchant_id = $1`,
        [m.merchant_id],
      );
      assert.equal(tries.length, 200);
      assert.equal(new Set(tries.map((a) => a.delivery_id)).size, 200);
      assert.ok(tries.every((a) => a.try_number === 1 && a.http_status === 200));
      const byWorker = new Map<string, number>();
      for (const a of tries) byWorker.set(a.worker_id, (byWorker.get(a.worker_id) ?? 0) + 1);
      assert.deepEqual(
        [...byWorker.keys()].sort(),
        [workerA.workerId, workerB.workerId].sort(),
        `tries per worker: ${JSON.stringify([...byWorker])}`,
      );
      const counts = await t.db.query<{ tries: number; n: number }>(
        `SELECT tries, count(*)::int AS n FROM webhook_deliveries WHERE merchant_id = $1 GROUP BY tries`,
        [m.merchant_id],
      );
      assert.deepEqual(counts, [{ tries: 1, n: 200 }]);
      assert.deepEqual([...logA.errors(), ...logB.errors()], []);
    } finally {
      await Promise.all([workerA.stop(), workerB.stop()]);
      await r.close();
    }
  });

  it('claims racing from two pools never hand out the same delivery twice, and each claim takes the delivery for the TTL', {
    skip: SKIP,
  }, async () => {
    const r = await startReceiver();
    try {
      const m = await t.merchant({ webhookUrl: r.url });
      const ids = await emitMany(m.merchant_id, 300);
      // Rounds of 40 concurrent claims of up to 10 each, half on each pool, until the backlog is gone.
      const claimRounds = async () => {
        const all = [];
        for (let round = 0; round < 30; round++) {
          const batch = (
            await Promise.all(
              Array.from({ length: 40 }, (_, i) => claimDueDeliveries(i % 2 === 0 ? poolA : poolB, 10, 1_000, 60)),
            )
          ).flat();
          if (batch.length === 0) break;
          all.push(...batch);
        }
        return all;
      };
      const claimed = await claimRounds();
      const deliveryIds = claimed.map((c) => c.id);
      assert.equal(new Set(deliveryIds).size, deliveryIds.length, 'no delivery was claimed twice');
      assert.equal(claimed.length, 300, 'and together they took the whole backlog');
      assert.deepEqual([...new Set(claimed.map((c) => c.event_id))].sort(), [...ids].sort());
      assert.ok(claimed.every((c) => c.tries === 1 && c.url === r.url && c.endpoint_status === 'active'));
      // While claimed, nobody gets them again.
      assert.deepEqual(await claimDueDeliveries(poolA, 100, 1_000, 60), []);
      assert.deepEqual(await claimDueDeliveries(poolB, 100, 1_000, 60), []);
      // Once the claim lapses (a crashed worker) they are due again, once.
      await t.db.query(
        `UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE merchant_id = $1`,
        [m.merchant_id],
      );
      const again = await claimRounds();
      assert.equal(again.length, 300);
      assert.equal(new Set(again.map((c) => c.id)).size, 300);
      assert.ok(again.every((c) => c.tries === 2));
    } finally {
      await t.db.query(`UPDATE webhook_deliveries SET status = 'failed', locked_until = NULL WHERE status = 'pending'`);
      await r.close();
    }
  });

  it('a claim takes at most perEndpointMax deliveries of one endpoint, leaving the rest to the next claim', {
    skip: SKIP,
  }, async () => {
    const r = await startReceiver();
    try {
      const m = await t.merchant({ webhookUrl: r.url });
      const other = await t.merchant({ webhookUrl: r.url });
      for (let i = 0; i < 10; i++) {
        await emitTestEvent(t.db, m);
        await emitTestEvent(t.db, other);
      }
      const first = await claimDueDeliveries(poolA, 50, 3, 60);
      const perEndpoint = new Map<string, number>();
      for (const c of first) perEndpoint.set(c.endpoint_id, (perEndpoint.get(c.endpoint_id) ?? 0) + 1);
      assert.deepEqual([...perEndpoint.values()], [3, 3]);
      const second = await claimDueDeliveries(poolB, 50, 3, 60);
      assert.equal(second.length, 6);
      assert.equal(new Set([...first, ...second].map((c) => c.id)).size, 12);
    } finally {
      await t.db.query(`UPDATE webhook_deliveries SET status = 'failed', locked_until = NULL WHERE status = 'pending'`);
      await r.close();
    }
  });
});
