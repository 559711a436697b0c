// Webhook delivery (DESIGN §3 Webhooks; SPEC 6): the outbox fans an event out to the endpoint paired with
// the key that created it; the DeliveryWorker signs, POSTs with a timeout, logs every try, retries on the
// schedule, fails after it, honours 410 Gone, skips disabled endpoints, replays with the same event id
// and signs with both secrets during a rotation. Each test has its own receiver on 127.0.0.1.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { insertWebhookEndpoint, setEndpointStatus } from '../../src/accounts/store.ts';
import { rotateWebhookSecret } from '../../src/accounts/webhook-endpoints.ts';
import { RETRY_JITTER_SHARE_MAX } from '../../src/events/retry-schedule.ts';
import {
  DeliveryWorker,
  defaultDeliveryOptions,
  RESPONSE_EXCERPT_BYTES_MAX,
  type DeliveryOptions,
} from '../../src/events/delivery.ts';
import { emitEvent } from '../../src/events/outbox.ts';
import * as store from '../../src/events/store.ts';
import { verifyWebhook, WebhookVerificationError } from '../../src/index.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import {
  attemptsOf,
  captureLogger,
  deliveriesOf,
  deliveryOf,
  emitTestEvent,
  endpointOf,
  isolatedTestApp,
  liveKeyId,
  sleep,
  testKeyId,
  startReceiver,
  waitFor,
  type Receiver,
} from '../support/webhooks.ts';

describe(`webhook delivery (${storageKind})`, () => {
  let t: TestContext;
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  before(async () => {
    t = await isolatedTestApp();
  });
  after(() => t.close());
  afterEach(async () => {
    // Every cleanup runs (workers stop before their receivers close) even when one of them fails.
    const problems: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse())
      await Promise.resolve()
        .then(cleanup)
        .catch((error: unknown) => problems.push(error));
    // What a test leaves waiting for a retry must not be sent by the next test's worker.
    await t.db.query(
      `UPDATE webhook_deliveries SET status = 'failed', last_error = 'left by an earlier test' WHERE status = 'pending'`,
    );
    if (problems.length > 0) throw problems[0];
  });

  async function receiver(handler?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
    const r = await startReceiver(handler);
    cleanups.push(() => r.close());
    return r;
  }

  function worker(options: Partial<DeliveryOptions> = {}) {
    const log = captureLogger();
    const w = new DeliveryWorker(
      t.db,
      log,
      defaultDeliveryOptions({
        retryScheduleS: [1],
        timeoutMs: 2_000,
        claimTtlS: 10,
        pollIntervalMs: 20,
        allowPrivateTargets: t.config.webhookAllowPrivateTargets,
        ...options,
      }),
    );
    cleanups.push(async () => {
      await w.stop();
      assert.deepEqual(log.errors(), [], 'the worker logged no error');
    });
    return w;
  }

  async function merchantWith(r: Receiver): Promise<CreatedMerchant> {
    const m = await t.merchant({ webhookUrl: r.url });
    assert.ok(m.test_webhook_secret, 'a Test endpoint (and its secret) is created for an http://127.0.0.1 URL');
    return m;
  }

  const seconds = (a: Date, b: Date) => (b.getTime() - a.getTime()) / 1000;

  describe('fan-out', () => {
    it('an event goes only to the endpoint paired with the key that created it, as one pending delivery; a keyless one to every endpoint of its merchant', async () => {
      const r = await receiver();
      const m = await merchantWith(r);
      const other = await merchantWith(r);
      assert.equal(m.live_webhook_secret, null, 'no Live endpoint for an http URL');
      const endpoint = await endpointOf(t.db, m.merchant_id);

      const event = await emitTestEvent(t.db, m);
      const [delivery, ...more] = await deliveriesOf(t.db, event.id);
      assert.equal(more.length, 0);
      assert.equal(delivery!.endpoint_id, endpoint.id);
      assert.equal(delivery!.status, 'pending');
      assert.equal(delivery!.tries, 0);

      // The Live key has no endpoint here. An event no key caused (a payer's session from a payment link, issue
      // 35) goes to every endpoint of its merchant and environment: this merchant's one, not the other's.
      const live = await emitTestEvent(t.db, m, { apiKeyId: await liveKeyId(t.db, m.merchant_id) });
      assert.deepEqual(await deliveriesOf(t.db, live.id), []);
      const keyless = await emitTestEvent(t.db, m, { apiKeyId: null });
      assert.deepEqual(
        (await deliveriesOf(t.db, keyless.id)).map((d) => [d.endpoint_id, d.status]),
        [[endpoint.id, 'pending']],
      );

      assert.equal(await worker().runOnce(), 2);
      assert.equal(r.requests.length, 2);
      assert.deepEqual(
        r.requests.map((request) => request.headers['webhook-id']).sort(),
        [event.id, keyless.id].sort(),
      );
      assert.equal((await deliveryOf(t.db, event.id)).status, 'delivered');
      assert.equal((await endpointOf(t.db, other.merchant_id)).status, 'active');
    });

    it('an event is written only if its transaction commits, and so is its delivery', async () => {
      const r = await receiver();
      const m = await merchantWith(r);
      const before = await t.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM webhook_deliveries WHERE merchant_id = $1',
        [m.merchant_id],
      );
      const keyId = await testKeyId(t.db, m.merchant_id);
      await assert.rejects(
        t.db.transaction(async (tx) => {
          await emitEvent(tx, {
            merchantId: m.merchant_id,
            environment: 'test',
            apiKeyId: keyId,
            type: 'checkout.session.completed',
            objectType: 'checkout.session',
            objectId: 'cs_rolled_back',
            objectVersion: 1,
            data: {},
          });
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      assert.deepEqual(
        await t.db.query(`SELECT id FROM events WHERE object_id = 'cs_rolled_back' AND merchant_id = $1`, [
          m.merchant_id,
        ]),
        [],
      );
      const afterRows = await t.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM webhook_deliveries WHERE merchant_id = $1',
        [m.merchant_id],
      );
      assert.equal(afterRows[0]!.n, before[0]!.n);
      assert.equal(await worker().runOnce(), 0);
      assert.equal(r.requests.length, 0);
    });
  });

  describe('signing', () => {
    it('each request carries webhook-id (the event id), webhook-timestamp and a webhook-signature that verifyWebhook accepts with the endpoint secret', async () => {
      const r = await receiver();
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m, {
        data: { session: { id: 'cs_sig', note: 'Akwaaba, ₵ 10.00 — "quoted"' } },
      });
      const sentAt = Math.floor(Date.now() / 1000);
      assert.equal(await worker().runOnce(), 1);

      assert.equal(r.requests.length, 1);
      const request = r.requests[0]!;
      assert.equal(request.method, 'POST');
      assert.equal(request.url, '/webhooks/sika');
      assert.match(String(request.headers['content-type']), /^application\/json/);
      assert.equal(request.headers['webhook-id'], event.id);
      const timestamp = Number(request.headers['webhook-timestamp']);
      assert.ok(
        Number.isInteger(timestamp) && Math.abs(timestamp - sentAt) <= 5,
        `webhook-timestamp ${request.headers['webhook-timestamp']} is now in seconds`,
      );
      assert.match(
        String(request.headers['webhook-signature']),
        /^v1,[A-Za-z0-9+/]{43}=$/,
        'one signature while there is no rotation',
      );

      const verified = verifyWebhook<typeof event>(request.body, request.headers, m.test_webhook_secret!);
      assert.deepEqual(verified, event, 'the body is the event payload');
      assert.equal(verified.id, event.id);
      assert.equal(verified.livemode, false);
      assert.equal(verified.environment, 'test');
      assert.equal(typeof verified.version, 'number');
      assert.ok(!Number.isNaN(Date.parse(verified.created_at)));

      // Another endpoint's secret does not verify it, and neither does a tampered body.
      const other = await t.merchant({ webhookUrl: 'https://hooks.example.com/sika' });
      assert.throws(
        () => verifyWebhook(request.body, request.headers, other.test_webhook_secret!),
        WebhookVerificationError,
      );
      assert.throws(
        () => verifyWebhook(request.body.replace('cs_sig', 'cs_sih'), request.headers, m.test_webhook_secret!),
        WebhookVerificationError,
      );
    });

    it('after rotateWebhookSecret the receiver gets two signatures and either secret verifies; with no overlap only the new one signs', async () => {
      const r = await receiver();
      const m = await merchantWith(r);
      const endpoint = await endpointOf(t.db, m.merchant_id);
      const oldSecret = m.test_webhook_secret!;
      const rotated = await t.db.transaction((tx) => rotateWebhookSecret(tx, endpoint.id, 3_600));
      assert.match(rotated.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      assert.notEqual(rotated.secret, oldSecret);
      assert.ok(Math.abs(Date.parse(rotated.previous_secret_expires_at) - (Date.now() + 3_600_000)) < 60_000);

      const event = await emitTestEvent(t.db, m);
      const w = worker();
      assert.equal(await w.runOnce(), 1);
      const request = r.requests[0]!;
      const signatures = String(request.headers['webhook-signature']).split(' ');
      assert.equal(signatures.length, 2, `two signatures during the overlap: ${request.headers['webhook-signature']}`);
      assert.equal(verifyWebhook<{ id: string }>(request.body, request.headers, rotated.secret).id, event.id);
      assert.equal(verifyWebhook<{ id: string }>(request.body, request.headers, oldSecret).id, event.id);
      assert.throws(
        () =>
          verifyWebhook(
            request.body,
            request.headers,
            'whsec_' + Buffer.from('not the endpoint secret at all!').toString('base64'),
          ),
        WebhookVerificationError,
      );

      // A second rotation with no overlap: only the newest secret signs; the two before it no longer verify.
      const again = await t.db.transaction((tx) => rotateWebhookSecret(tx, endpoint.id, 0));
      const second = await emitTestEvent(t.db, m);
      assert.equal(await w.runOnce(), 1);
      const next = r.requests[1]!;
      assert.equal(next.headers['webhook-id'], second.id);
      assert.equal(String(next.headers['webhook-signature']).split(' ').length, 1);
      assert.equal(verifyWebhook<{ id: string }>(next.body, next.headers, again.secret).id, second.id);
      assert.throws(() => verifyWebhook(next.body, next.headers, rotated.secret), WebhookVerificationError);
      assert.throws(() => verifyWebhook(next.body, next.headers, oldSecret), WebhookVerificationError);
    });

    it('rotating the secret of an unknown endpoint, or with an overlap beyond seven days, is refused', async () => {
      const r = await receiver();
      const m = await merchantWith(r);
      const endpoint = await endpointOf(t.db, m.merchant_id);
      await assert.rejects(
        t.db.transaction((tx) => rotateWebhookSecret(tx, '00000000-0000-4000-8000-000000000000')),
        { code: 'NOT_FOUND' },
      );
      await assert.rejects(
        t.db.transaction((tx) => rotateWebhookSecret(tx, endpoint.id, 7 * 24 * 3_600 + 1)),
        { code: 'INVALID_ARGUMENT' },
      );
      await assert.rejects(
        t.db.transaction((tx) => rotateWebhookSecret(tx, endpoint.id, -1)),
        { code: 'INVALID_ARGUMENT' },
      );
      const other = await t.merchant();
      await assert.rejects(
        t.db.transaction((tx) => rotateWebhookSecret(tx, endpoint.id, 60, other.merchant_id)),
        { code: 'NOT_FOUND' },
        'another merchant cannot rotate it',
      );
      assert.equal((await endpointOf(t.db, m.merchant_id)).secret, m.test_webhook_secret, 'the secret is unchanged');
    });
  });

  describe('retries', () => {
    it('a receiver failing three times with 500 gets the event on the fourth try, the tries spaced per the schedule and each one logged', async () => {
      const r = await receiver((request, res) => {
        if (request.n <= 3) {
          res.statusCode = 500;
          res.end(`boom ${request.n}`);
        } else res.end('thanks');
      });
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m);
      const schedule = [1, 1, 2];
      const w = worker({ retryScheduleS: schedule });
      w.start();
      await waitFor(
        'the delivery to succeed',
        async () => (await deliveryOf(t.db, event.id)).status === 'delivered',
        15_000,
      );

      // The receiver: four requests of the same event, same id and body, each validly signed.
      assert.equal(r.requests.length, 4);
      for (const request of r.requests) {
        assert.equal(request.headers['webhook-id'], event.id);
        assert.equal(request.body, r.requests[0]!.body);
        assert.equal(verifyWebhook<{ id: string }>(request.body, request.headers, m.test_webhook_secret!).id, event.id);
      }

      // The delivery log: every try with its status, latency, error and response excerpt.
      const attempts = await attemptsOf(t.db, event.id);
      assert.deepEqual(
        attempts.map((a) => [a.try_number, a.http_status, a.error, a.response_excerpt]),
        [
          [1, 500, 'HTTP 500', 'boom 1'],
          [2, 500, 'HTTP 500', 'boom 2'],
          [3, 500, 'HTTP 500', 'boom 3'],
          [4, 200, null, 'thanks'],
        ],
      );
      for (const a of attempts) {
        assert.ok(
          Number.isInteger(a.latency_ms) && a.latency_ms >= 0 && a.latency_ms < 2_000,
          `latency ${a.latency_ms} ms`,
        );
        assert.ok((a.response_excerpt ?? '').length <= 1024);
        assert.equal(a.worker_id, w.workerId);
      }

      // Spacing: try n+1 comes schedule[n] seconds after try n (plus the poll interval and the round trip).
      for (let i = 0; i < schedule.length; i++) {
        const gap = seconds(attempts[i]!.tried_at, attempts[i + 1]!.tried_at);
        assert.ok(
          gap >= schedule[i]! - 0.05 && gap < schedule[i]! + 0.75,
          `gap between try ${i + 1} and ${i + 2}: ${gap} s, schedule says ${schedule[i]} s`,
        );
        const seen = (r.requests[i + 1]!.at - r.requests[i]!.at) / 1000;
        assert.ok(
          seen >= schedule[i]! - 0.05 && seen < schedule[i]! + 0.75,
          `the receiver saw a gap of ${seen} s, schedule says ${schedule[i]} s`,
        );
      }

      const delivery = await deliveryOf(t.db, event.id);
      assert.equal(delivery.tries, 4);
      assert.equal(delivery.last_http_status, 200);
      assert.equal(delivery.last_error, null);
      assert.equal(delivery.locked_until, null);
      assert.ok(delivery.delivered_at instanceof Date);

      // Nothing more is sent once delivered.
      await sleep(1_200);
      assert.equal(r.requests.length, 4);
    });

    it("a receiver's Retry-After longer than the schedule's wait is honoured; the try count stays the schedule's", async () => {
      const r = await receiver((request, res) => {
        if (request.n === 1) {
          res.statusCode = 503;
          res.setHeader('retry-after', '3');
          res.end('busy');
        } else res.end('thanks');
      });
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m);
      const w = worker({ retryScheduleS: [1] });
      w.start();
      await waitFor(
        'the delivery to succeed',
        async () => (await deliveryOf(t.db, event.id)).status === 'delivered',
        15_000,
      );
      const attempts = await attemptsOf(t.db, event.id);
      assert.deepEqual(
        attempts.map((a) => a.http_status),
        [503, 200],
      );
      const gap = seconds(attempts[0]!.tried_at, attempts[1]!.tried_at);
      assert.ok(gap >= 2.95 && gap < 3.75, `the second try came ${gap} s after the first; the receiver asked for 3 s`);
    });

    it('once the schedule runs out the delivery is failed, nothing more is sent, and the event is listed for replay', async () => {
      const r = await receiver((_request, res) => {
        res.statusCode = 503;
        res.end('down for maintenance');
      });
      const m = await merchantWith(r);
      const endpoint = await endpointOf(t.db, m.merchant_id);
      const event = await emitTestEvent(t.db, m);
      const w = worker({ retryScheduleS: [1, 1] });
      w.start();
      await waitFor('the delivery to fail', async () => (await deliveryOf(t.db, event.id)).status === 'failed', 15_000);
      await sleep(1_500);
      assert.equal(r.requests.length, 3, 'the first try and one per scheduled retry');
      const delivery = await deliveryOf(t.db, event.id);
      assert.equal(delivery.tries, 3);
      assert.equal(delivery.last_http_status, 503);
      assert.equal(delivery.last_error, 'HTTP 503');
      assert.equal(delivery.locked_until, null);
      assert.deepEqual(
        (await attemptsOf(t.db, event.id)).map((a) => [a.try_number, a.http_status, a.response_excerpt]),
        [1, 2, 3].map((n) => [n, 503, 'down for maintenance']),
      );
      assert.deepEqual(await store.failedEventIdsForEndpoint(t.db, endpoint.id), [{ event_id: event.id }]);
      const since = await store.failedEventIdsSince(t.db, new Date(Date.now() - 60_000), m.merchant_id);
      assert.deepEqual(since, [{ event_id: event.id }]);
      assert.equal(
        (await endpointOf(t.db, m.merchant_id)).status,
        'active',
        'failures alone do not disable the endpoint',
      );
    });

    it('a 3xx, 4xx or 5xx answer is a failed try and a 2xx other than 200 is a success', async () => {
      const statuses = [204, 202, 301, 400, 404, 429, 502];
      const r = await receiver((request, res) => {
        res.statusCode = statuses[request.n - 1]!;
        res.end();
      });
      const m = await merchantWith(r);
      const events = [];
      const w = worker({ retryScheduleS: [600] });
      for (const status of statuses) {
        const event = await emitTestEvent(t.db, m);
        assert.equal(await w.runOnce(), 1);
        events.push({ status, delivery: await deliveryOf(t.db, event.id) });
      }
      assert.deepEqual(
        events.map((e) => [e.status, e.delivery.status, e.delivery.last_http_status]),
        [
          [204, 'delivered', 204],
          [202, 'delivered', 202],
          [301, 'pending', 301],
          [400, 'pending', 400],
          [404, 'pending', 404],
          [429, 'pending', 429],
          [502, 'pending', 502],
        ],
      );
      for (const e of events.filter((e) => e.delivery.status === 'pending')) {
        const wait = seconds(new Date(), e.delivery.next_try_at);
        // The schedule's 600 s, lengthened by the jitter (at most RETRY_JITTER_SHARE_MAX), less the time since it was set.
        assert.ok(wait > 590 && wait <= 600 * (1 + RETRY_JITTER_SHARE_MAX), `retry scheduled ${wait} s ahead`);
      }
    });

    it('a receiver that does not answer within timeoutMs is a failed try with a timeout error, retried later', async () => {
      const r = await receiver(() => {
        /* never answers */
      });
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m);
      const w = worker({ timeoutMs: 300, retryScheduleS: [30] });
      const started = performance.now();
      assert.equal(await w.runOnce(), 1);
      const elapsed = performance.now() - started;
      assert.ok(elapsed >= 290 && elapsed < 1_500, `the try ended after ${elapsed} ms`);
      assert.equal(r.requests.length, 1);
      const [attempt, ...more] = await attemptsOf(t.db, event.id);
      assert.equal(more.length, 0);
      assert.equal(attempt!.http_status, null);
      assert.match(attempt!.error ?? '', /timed out after 300 ms/);
      assert.ok(attempt!.latency_ms >= 290 && attempt!.latency_ms < 1_500, `latency ${attempt!.latency_ms} ms`);
      const delivery = await deliveryOf(t.db, event.id);
      assert.equal(delivery.status, 'pending');
      assert.match(delivery.last_error ?? '', /timed out/);
      assert.equal(delivery.locked_until, null);
      const wait = seconds(new Date(), delivery.next_try_at);
      assert.ok(wait > 25 && wait <= 30 * (1 + RETRY_JITTER_SHARE_MAX), `retry in ${wait} s`);
    });

    it('a receiver that answers its headers and then trickles the body past timeoutMs is cut off at the timeout', async () => {
      const r = await receiver((_request, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => res.write('.'), 50);
        res.on('close', () => clearInterval(timer));
        setTimeout(() => {
          clearInterval(timer);
          res.end();
        }, 3_000);
      });
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m);
      const w = worker({ timeoutMs: 300, retryScheduleS: [30] });
      const started = performance.now();
      assert.equal(await w.runOnce(), 1);
      const elapsed = performance.now() - started;
      // The timeout bounds the whole try (the claim TTL relies on it), not only silence on the socket.
      assert.ok(elapsed < 1_500, `the try lasted ${elapsed} ms with a 300 ms timeout`);
      const [attempt] = await attemptsOf(t.db, event.id);
      assert.match(attempt!.error ?? '', /timed out after 300 ms/);
      assert.equal((await deliveryOf(t.db, event.id)).status, 'pending', 'an unfinished answer is not a delivery');
    });

    it('a connection reset by the receiver is a failed try with the socket error', async () => {
      const r = await receiver((_request, _res, req) => {
        req.socket.resetAndDestroy();
      });
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m);
      assert.equal(await worker({ retryScheduleS: [30] }).runOnce(), 1);
      assert.equal(r.requests.length, 1);
      const [attempt] = await attemptsOf(t.db, event.id);
      assert.equal(attempt!.http_status, null);
      assert.match(attempt!.error ?? '', /ECONNRESET|socket hang up/);
      const delivery = await deliveryOf(t.db, event.id);
      assert.equal(delivery.status, 'pending');
      assert.equal(delivery.last_error, attempt!.error);
    });

    it('a refused connection (nothing listening) is a failed try with the socket error', async () => {
      const r = await receiver();
      const m = await merchantWith(r);
      await r.close();
      const event = await emitTestEvent(t.db, m);
      assert.equal(await worker({ retryScheduleS: [30] }).runOnce(), 1);
      const [attempt] = await attemptsOf(t.db, event.id);
      assert.equal(attempt!.http_status, null);
      assert.match(attempt!.error ?? '', /ECONNREFUSED/);
    });
  });

  describe('response excerpts', () => {
    it('the stored response excerpt is at most 1 KB when the receiver answers with megabytes', async () => {
      const huge = 'a'.repeat(5 * 1024 * 1024);
      const r = await receiver((_request, res) => res.end(huge));
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m);
      const started = performance.now();
      assert.equal(await worker().runOnce(), 1);
      assert.ok(performance.now() - started < 5_000);
      const [attempt] = await attemptsOf(t.db, event.id);
      assert.equal(attempt!.http_status, 200);
      assert.equal(RESPONSE_EXCERPT_BYTES_MAX, 1024);
      assert.equal(attempt!.response_excerpt, 'a'.repeat(1024));
      assert.equal((await deliveryOf(t.db, event.id)).status, 'delivered');
      // The delivery log shows the same excerpt.
      const [logged] = await store.endpointDeliveries(t.db, (await endpointOf(t.db, m.merchant_id)).id, 10);
      assert.equal(logged!.response_excerpt, 'a'.repeat(1024));
    });

    it('a response with multi-byte characters is cut to at most 1024 characters and still recorded', async () => {
      const r = await receiver((_request, res) => res.end('₵'.repeat(2_000)));
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m);
      assert.equal(await worker().runOnce(), 1);
      const [attempt] = await attemptsOf(t.db, event.id);
      assert.ok(attempt!.response_excerpt!.length <= 1024);
      assert.ok(attempt!.response_excerpt!.startsWith('₵'.repeat(300)));
      assert.equal((await deliveryOf(t.db, event.id)).status, 'delivered');
    });

    it('a response body with NUL bytes (binary) is still recorded and the 2xx counts as delivered', async () => {
      const r = await receiver((_request, res) => {
        res.setHeader('content-type', 'application/octet-stream');
        res.end(Buffer.from([0x6f, 0x6b, 0x00, 0x01, 0xff, 0x00, 0x21]));
      });
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m);
      const w = worker({ claimTtlS: 2 });
      assert.equal(await w.runOnce(), 1);
      const delivery = await deliveryOf(t.db, event.id);
      assert.equal(delivery.status, 'delivered', 'the try was recorded');
      const [attempt, ...more] = await attemptsOf(t.db, event.id);
      assert.equal(more.length, 0);
      assert.equal(attempt!.http_status, 200);
      assert.ok(attempt!.response_excerpt!.startsWith('ok'));
      assert.ok(!attempt!.response_excerpt!.includes('\u0000'));
      // It is not sent again when the claim would have lapsed.
      await sleep(2_200);
      assert.equal(await w.runOnce(), 0);
      assert.equal(r.requests.length, 1);
    });
  });

  describe('410 Gone and disabled endpoints', () => {
    it('a 410 Gone answer disables the endpoint; its later events are logged as skipped and never sent', async () => {
      const r = await receiver((_request, res) => {
        res.statusCode = 410;
        res.end('gone');
      });
      const m = await merchantWith(r);
      const endpoint = await endpointOf(t.db, m.merchant_id);
      const first = await emitTestEvent(t.db, m);
      const w = worker({ retryScheduleS: [1, 1, 1] });
      assert.equal(await w.runOnce(), 1);

      const delivery = await deliveryOf(t.db, first.id);
      assert.equal(delivery.status, 'failed', '410 is final, not retried');
      assert.equal(delivery.last_http_status, 410);
      const disabled = await endpointOf(t.db, m.merchant_id);
      assert.equal(disabled.status, 'disabled');
      assert.match(disabled.disabled_reason ?? '', /410/);

      const later = await emitTestEvent(t.db, m);
      const skipped = await deliveryOf(t.db, later.id);
      assert.equal(skipped.status, 'skipped');
      assert.match(skipped.last_error ?? '', /disabled/);
      w.start();
      await sleep(1_300);
      assert.equal(r.requests.length, 1, 'nothing else reached the receiver');
      assert.equal((await deliveryOf(t.db, first.id)).tries, 1);

      // The endpoint's delivery log shows both.
      const log = await store.endpointDeliveries(t.db, endpoint.id, 10);
      assert.deepEqual(
        log.map((d) => [d.event_id, d.status]).sort(),
        [
          [first.id, 'failed'],
          [later.id, 'skipped'],
        ].sort(),
      );
      // Its events stay replayable once the endpoint is active again.
      assert.equal(
        await t.db.transaction((tx) => store.replayEvent(tx, first.id)),
        0,
        'nothing is queued for a disabled endpoint',
      );
    });

    it('an endpoint whose tries have all failed for 5 days is disabled; a success in those days keeps it, and enabling starts it afresh', async () => {
      let answer = 500;
      const r = await receiver((_request, res) => {
        res.statusCode = answer;
        res.end('x');
      });
      const w = worker({ retryScheduleS: [] }); // each failure final: one try per event
      const failingSince = async (endpointId: string) =>
        (
          await t.db.query<{ failing_since: Date | null }>(
            'SELECT failing_since FROM webhook_endpoints WHERE id = $1',
            [endpointId],
          )
        )[0]!.failing_since;
      const backdate = (endpointId: string, days: number) =>
        t.db.query(`UPDATE webhook_endpoints SET failing_since = now() - make_interval(days => $2) WHERE id = $1`, [
          endpointId,
          days,
        ]);
      const tryOnce = async (m: CreatedMerchant) => {
        await emitTestEvent(t.db, m);
        assert.equal(await w.runOnce(), 1);
      };

      // Failing, with a success in between: never disabled.
      const busy = await merchantWith(r);
      const busyEndpoint = await endpointOf(t.db, busy.merchant_id);
      await tryOnce(busy); // the first failure starts the record
      assert.ok(await failingSince(busyEndpoint.id));
      await backdate(busyEndpoint.id, 4);
      await tryOnce(busy);
      assert.equal((await endpointOf(t.db, busy.merchant_id)).status, 'active', 'failing for 4 days: still active');
      answer = 200;
      await tryOnce(busy); // a success, 4 days into the failures
      answer = 503;
      await backdate(busyEndpoint.id, 6);
      await tryOnce(busy);
      assert.equal((await endpointOf(t.db, busy.merchant_id)).status, 'active', 'a success within the 5 days keeps it');
      const since = await failingSince(busyEndpoint.id);
      assert.ok(since && Date.now() - since.getTime() < 60_000, 'the record now starts at that success');

      // Every try failed for 5 days: disabled by the next failure.
      const dead = await merchantWith(r);
      const deadEndpoint = await endpointOf(t.db, dead.merchant_id);
      await tryOnce(dead);
      await backdate(deadEndpoint.id, 5);
      await tryOnce(dead);
      const disabled = await endpointOf(t.db, dead.merchant_id);
      assert.equal(disabled.status, 'disabled');
      assert.match(disabled.disabled_reason ?? '', /5 days/);
      const skipped = await emitTestEvent(t.db, dead);
      assert.equal((await deliveryOf(t.db, skipped.id)).status, 'skipped');

      await setEndpointStatus(t.db, deadEndpoint.id, 'active', null);
      assert.equal(await failingSince(deadEndpoint.id), null, 'enabled again with a clean record');
      await tryOnce(dead);
      assert.equal(
        (await endpointOf(t.db, dead.merchant_id)).status,
        'active',
        'one failure after enabling does not disable it again',
      );
    });

    it('a delivery claimed after its endpoint was disabled is skipped, with the skip logged as a try and nothing sent', async () => {
      const r = await receiver();
      const m = await merchantWith(r);
      const endpoint = await endpointOf(t.db, m.merchant_id);
      const event = await emitTestEvent(t.db, m);
      assert.equal((await deliveryOf(t.db, event.id)).status, 'pending');
      await t.db.transaction((tx) => store.disableEndpoint(tx, endpoint.id, 'disabled by the merchant'));

      assert.equal(await worker().runOnce(), 1);
      assert.equal(r.requests.length, 0);
      const delivery = await deliveryOf(t.db, event.id);
      assert.equal(delivery.status, 'skipped');
      const [attempt] = await attemptsOf(t.db, event.id);
      assert.equal(attempt!.http_status, null);
      assert.match(attempt!.error ?? '', /endpoint disabled/);
    });
  });

  describe('replay', () => {
    it('replaying an event resends it with the same event id and body and a fresh valid signature', async () => {
      const r = await receiver();
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m);
      const w = worker();
      assert.equal(await w.runOnce(), 1);
      assert.equal((await deliveryOf(t.db, event.id)).status, 'delivered');

      assert.equal(await t.db.transaction((tx) => store.replayEvent(tx, event.id)), 1);
      const queued = await deliveryOf(t.db, event.id);
      assert.equal(queued.status, 'pending');
      await sleep(1_100); // a new timestamp second
      assert.equal(await w.runOnce(), 1);

      assert.equal(r.requests.length, 2);
      const [original, replayed] = r.requests as [(typeof r.requests)[0], (typeof r.requests)[0]];
      assert.equal(replayed.headers['webhook-id'], event.id);
      assert.equal(replayed.headers['webhook-id'], original.headers['webhook-id']);
      assert.equal(replayed.body, original.body);
      assert.ok(Number(replayed.headers['webhook-timestamp']) > Number(original.headers['webhook-timestamp']));
      assert.equal(verifyWebhook<{ id: string }>(replayed.body, replayed.headers, m.test_webhook_secret!).id, event.id);
      const delivery = await deliveryOf(t.db, event.id);
      assert.equal(delivery.status, 'delivered');
      assert.equal(delivery.tries, 2);
      assert.deepEqual(
        (await attemptsOf(t.db, event.id)).map((a) => a.try_number),
        [1, 2],
      );
      assert.equal(await t.db.transaction((tx) => store.replayEvent(tx, 'evt_does_not_exist')), -1);
    });

    it('a failed delivery replayed after the receiver recovers is delivered under the same event id', async () => {
      let healthy = false;
      const r = await receiver((_request, res) => {
        res.statusCode = healthy ? 200 : 500;
        res.end();
      });
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m);
      const w = worker({ retryScheduleS: [] });
      assert.equal(await w.runOnce(), 1);
      assert.equal((await deliveryOf(t.db, event.id)).status, 'failed', 'an empty schedule fails after the first try');

      healthy = true;
      assert.equal(await t.db.transaction((tx) => store.replayEvent(tx, event.id)), 1);
      assert.equal(await w.runOnce(), 1);
      assert.equal((await deliveryOf(t.db, event.id)).status, 'delivered');
      assert.deepEqual(
        r.requests.map((q) => q.headers['webhook-id']),
        [event.id, event.id],
      );
    });

    it('a replay also sends to an endpoint paired with the key after the event was written', async () => {
      const r = await receiver();
      const m = await t.merchant(); // no endpoint yet
      const event = await emitTestEvent(t.db, m);
      assert.deepEqual(await deliveriesOf(t.db, event.id), []);
      const keyId = await testKeyId(t.db, m.merchant_id);
      const secret = 'whsec_' + Buffer.from('an endpoint added after the event').toString('base64');
      await t.db.transaction((tx) =>
        insertWebhookEndpoint(tx, {
          id: randomUUID(),
          merchantId: m.merchant_id,
          environment: 'test',
          apiKeyId: keyId,
          url: r.url,
          secret,
        }),
      );
      assert.equal(await t.db.transaction((tx) => store.replayEvent(tx, event.id)), 1);
      assert.equal(await worker().runOnce(), 1);
      assert.equal(r.requests.length, 1);
      assert.equal(verifyWebhook<{ id: string }>(r.requests[0]!.body, r.requests[0]!.headers, secret).id, event.id);
    });
  });

  describe('worker lifecycle', () => {
    it('stop() waits for the try in flight to finish and be recorded', async () => {
      let arrived!: () => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      const r = await receiver((_request, res) => {
        arrived();
        setTimeout(() => res.end('slow but fine'), 400);
      });
      const m = await merchantWith(r);
      const event = await emitTestEvent(t.db, m);
      const w = worker();
      w.start();
      await arrival;
      await w.stop();
      const delivery = await deliveryOf(t.db, event.id);
      assert.equal(delivery.status, 'delivered');
      assert.equal((await attemptsOf(t.db, event.id))[0]!.response_excerpt, 'slow but fine');
    });

    it('a running worker picks up a new event within a few poll intervals', async () => {
      const r = await receiver();
      const m = await merchantWith(r);
      const w = worker({ pollIntervalMs: 20 });
      w.start();
      await sleep(100);
      const emitted = performance.now();
      const event = await emitTestEvent(t.db, m);
      await waitFor('the event to arrive', () => r.requests.length === 1, 3_000, 5);
      assert.ok(r.requests[0]!.at - emitted < 1_000, `arrived after ${r.requests[0]!.at - emitted} ms`);
      assert.equal(r.requests[0]!.headers['webhook-id'], event.id);
    });
  });
});
