// What makes webhook delivery fast without changing what it promises (issue 18): successful tries are
// recorded in batches, each try still logged and the first answer still winning; a claim takes its share
// from every endpoint in turns; a target name's answers that passed the SSRF rule are reused for a few
// seconds, while a refused or failed answer is asked again at every try.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { DeliveryWorker, defaultDeliveryOptions } from '../../src/events/delivery.ts';
import { cachingResolver, type Resolver } from '../../src/lib/ssrf.ts';
import { claimDueDeliveries, markFailed, recordDeliveredBatch } from '../../src/events/store.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import {
  attemptsOf,
  captureLogger,
  deliveryOf,
  emitTestEvent,
  endpointOf,
  isolatedTestApp,
  startReceiver,
} from '../support/webhooks.ts';

describe('a caching resolver for delivery targets', () => {
  function countingResolver(table: Record<string, string[]>): Resolver & { asked: string[] } {
    const asked: string[] = [];
    const resolver: Resolver = async (hostname) => {
      asked.push(hostname);
      const addresses = table[hostname];
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    return Object.assign(resolver, { asked });
  }
  const TABLE = {
    'hooks.example.com': ['93.184.216.34'],
    'inside.example.com': ['10.0.0.7'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
  };

  it('reuses public answers within its time, and asks again after it', async () => {
    const dns = countingResolver(TABLE);
    const cached = cachingResolver(dns, { allowPrivateTargets: false }, 50);
    assert.deepEqual(await cached('hooks.example.com'), [{ address: '93.184.216.34', family: 4 }]);
    assert.deepEqual(await cached('HOOKS.example.com'), [{ address: '93.184.216.34', family: 4 }]);
    assert.deepEqual(dns.asked, ['hooks.example.com']);
    await new Promise((resolve) => setTimeout(resolve, 80));
    await cached('hooks.example.com');
    assert.deepEqual(dns.asked, ['hooks.example.com', 'hooks.example.com']);
  });

  it('asks again at every try for a name the rule refuses (a private answer among public ones too) and for one that does not resolve', async () => {
    const dns = countingResolver(TABLE);
    const cached = cachingResolver(dns, { allowPrivateTargets: false });
    for (let i = 0; i < 2; i++) {
      await cached('inside.example.com');
      await cached('mixed.example.com');
      await assert.rejects(cached('nowhere.example.com'));
    }
    assert.deepEqual(dns.asked, [
      'inside.example.com',
      'mixed.example.com',
      'nowhere.example.com',
      'inside.example.com',
      'mixed.example.com',
      'nowhere.example.com',
    ]);
  });

  it('with private targets allowed, private answers pass and are reused', async () => {
    const dns = countingResolver(TABLE);
    const cached = cachingResolver(dns, { allowPrivateTargets: true });
    await cached('inside.example.com');
    await cached('inside.example.com');
    assert.deepEqual(dns.asked, ['inside.example.com']);
  });
});

describe(`recording and claiming webhook deliveries in batches (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    // Its own database: a claim and a worker look at every endpoint's deliveries.
    t = await isolatedTestApp();
  });
  after(() => t.close());

  const clearPending = () =>
    t.db.query(
      `UPDATE webhook_deliveries SET status = 'failed', locked_until = NULL, last_error = 'left by an earlier test' WHERE status = 'pending'`,
    );

  it('a batch logs every try and delivers only the deliveries still pending: a failed one keeps its status and gets its late try logged', async () => {
    const m = await t.merchant({ webhookUrl: 'http://127.0.0.1:9/hook' });
    const events = [await emitTestEvent(t.db, m), await emitTestEvent(t.db, m), await emitTestEvent(t.db, m)];
    const rows = await Promise.all(events.map((e) => deliveryOf(t.db, e.id)));
    await t.db.transaction((tx) => markFailed(tx, rows[2]!.id, 'failed', 500, 'HTTP 500'));
    await recordDeliveredBatch(
      t.db,
      rows.map((row, i) => ({
        deliveryId: row.id,
        tryNumber: 1,
        httpStatus: 200 + i,
        latencyMs: 3,
        responseExcerpt: i === 0 ? 'ok' : null,
      })),
      'w_batch',
    );
    const after = await Promise.all(events.map((e) => deliveryOf(t.db, e.id)));
    assert.deepEqual(
      after.map((d) => d.status),
      ['delivered', 'delivered', 'failed'],
    );
    assert.deepEqual(
      after.map((d) => d.last_http_status),
      [200, 201, 500],
    );
    assert.ok(after[0]!.delivered_at && after[0]!.locked_until === null);
    for (const [i, event] of events.entries()) {
      const tries = await attemptsOf(t.db, event.id);
      assert.equal(tries.length, 1, `event ${i}: one try logged`);
      assert.deepEqual(
        [tries[0]!.http_status, tries[0]!.error, tries[0]!.worker_id, tries[0]!.response_excerpt],
        [200 + i, null, 'w_batch', i === 0 ? 'ok' : null],
      );
    }
  });

  it('a claim that cannot take everything due takes turns: every endpoint gets its share of the limit, earliest first', async () => {
    await clearPending();
    const merchants: CreatedMerchant[] = [];
    for (let i = 0; i < 3; i++) merchants.push(await t.merchant({ webhookUrl: `http://127.0.0.1:9/hook-${i}` }));
    // The first endpoint's five deliveries are all due before the others'.
    for (const m of merchants) for (let n = 0; n < 5; n++) await emitTestEvent(t.db, m);
    const claimed = await claimDueDeliveries(t.db, 6, 8, 30);
    const perEndpoint = new Map<string, number>();
    for (const c of claimed) perEndpoint.set(c.endpoint_id, (perEndpoint.get(c.endpoint_id) ?? 0) + 1);
    const endpoints = await Promise.all(merchants.map(async (m) => (await endpointOf(t.db, m.merchant_id)).id));
    assert.deepEqual(
      endpoints.map((id) => perEndpoint.get(id) ?? 0),
      [2, 2, 2],
    );
    await clearPending();
  });

  it("a worker sends a backlog over several endpoints once each, records every try and never exceeds an endpoint's limit", async () => {
    await clearPending();
    const PER_ENDPOINT_MAX = 3;
    const open = new Map<string, number>();
    let overLimit = 0;
    const r = await startReceiver((request, res) => {
      const path = request.url;
      const now = (open.get(path) ?? 0) + 1;
      open.set(path, now);
      if (now > PER_ENDPOINT_MAX) overLimit++;
      setTimeout(() => {
        open.set(path, (open.get(path) ?? 1) - 1);
        res.end('ok');
      }, 2);
    });
    const log = captureLogger();
    const worker = new DeliveryWorker(
      t.db,
      log,
      defaultDeliveryOptions({
        retryScheduleS: [60],
        timeoutMs: 2_000,
        claimTtlS: 10,
        pollIntervalMs: 20,
        inFlightMax: 8,
        perEndpointMax: PER_ENDPOINT_MAX,
        allowPrivateTargets: true,
      }),
    );
    try {
      const merchants = [
        await t.merchant({ webhookUrl: `${r.url}/a` }),
        await t.merchant({ webhookUrl: `${r.url}/b` }),
      ];
      const ids: string[] = [];
      for (let n = 0; n < 15; n++) for (const m of merchants) ids.push((await emitTestEvent(t.db, m)).id);
      worker.start();
      const deadline = Date.now() + 20_000;
      while (r.requests.length < ids.length && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      await worker.stop();
      const received = r.requests.map((q) => String(q.headers['webhook-id']));
      assert.deepEqual([...received].sort(), [...ids].sort(), 'every event once');
      assert.equal(overLimit, 0, 'never more than perEndpointMax open at one endpoint');
      for (const id of ids) {
        assert.equal((await deliveryOf(t.db, id)).status, 'delivered');
        assert.equal((await attemptsOf(t.db, id)).length, 1);
      }
      assert.deepEqual(log.errors(), []);
    } finally {
      await worker.stop();
      await r.close();
    }
  });
});
