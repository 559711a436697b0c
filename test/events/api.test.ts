// Issue 19 (parts 4 and 5, server): GET /api/v1/events/{id} with its deliveries and tries; replaying one
// event and a time range over the API (bounds, the per-key window, audit, isolation); and the Test event
// stream for `sika listen` (SSE): events committed after connect in commit order, resuming with
// Last-Event-ID with nothing lost or repeated, a transaction that commits late is not skipped, Live keys
// refused, and app.close() ends open streams. Over real HTTP, on both storages.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { Statement } from '../../src/db/statement.ts';
import { DeliveryWorker, defaultDeliveryOptions } from '../../src/events/delivery.ts';
import { emitEvent, eventPayload, type EventPayload } from '../../src/events/outbox.ts';
import { eventCtes } from '../../src/events/outbox-store.ts';
import {
  EVENT_REPLAY_INTERVAL_S,
  EVENT_REPLAY_RANGE_DAYS_MAX,
  EVENT_REPLAY_ROWS_MAX,
} from '../../src/events/replay.ts';
import {
  EVENT_STREAM_CLOSE_GRACE_MS,
  EVENT_STREAMS_PER_KEY_MAX,
  EventStreams,
  parseCursor,
} from '../../src/events/stream.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope, call } from '../support/http.ts';
import {
  captureLogger,
  deliveriesOf,
  emitTestEvent,
  endpointOf,
  isolatedTestApp,
  liveKeyId,
  sleep,
  startReceiver,
  testKeyId,
  waitFor,
  type Receiver,
} from '../support/webhooks.ts';

// ---------------------------------------------------------------------------------------------------
// A small SSE client (what `sika listen` does, read by the tests)

interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  retry?: number;
}

interface SseClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Every message, id-only ones included, in arrival order. */
  messages: SseMessage[];
  comments: string[];
  /** Messages that carry an event. */
  events(): SseMessage[];
  /** The last id received (an event's or an id-only message's). */
  lastId(): string | undefined;
  ended: Promise<void>;
  isEnded(): boolean;
  /** Drops the connection (a forced disconnect). */
  destroy(): void;
}

function openStream(
  base: string,
  key: string,
  options: { lastEventId?: string; query?: Record<string, string> } = {},
): Promise<SseClient> {
  const url = new URL('/api/v1/events/stream', base);
  for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false }, (res) => {
      const messages: SseMessage[] = [];
      const comments: string[] = [];
      let buffer = '';
      let ended = false;
      const endedPromise = new Promise<void>((done) => {
        const finish = () => {
          ended = true;
          done();
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const message: SseMessage = {};
          let fields = 0;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) {
              comments.push(line.slice(1).trim());
              continue;
            }
            const colon = line.indexOf(':');
            const name = line.slice(0, colon);
            const value = line.slice(colon + 1).replace(/^ /, '');
            fields++;
            if (name === 'id') message.id = value;
            else if (name === 'event') message.event = value;
            else if (name === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`;
            else if (name === 'retry') message.retry = Number(value);
            else assert.fail(`unknown SSE field ${name}`);
          }
          if (fields > 0) messages.push(message);
        }
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        messages,
        comments,
        events: () => messages.filter((m) => m.data !== undefined),
        lastId: () => messages.filter((m) => m.id !== undefined).at(-1)?.id,
        ended: endedPromise,
        isEnded: () => ended,
        destroy: () => request.destroy(),
      });
    });
    request.on('error', (error) => {
      if ((error as { code?: string }).code !== 'ECONNRESET') reject(error);
    });
  });
}

/** Opens a stream and waits for its first message (the starting id), so events committed from here on are "after connect". */
async function connected(
  base: string,
  key: string,
  options: Parameters<typeof openStream>[2] = {},
): Promise<SseClient> {
  const client = await openStream(base, key, options);
  assert.equal(client.status, 200, 'the stream opened');
  await waitFor('the starting id', () => client.messages.length > 0, 5_000, 10);
  assert.ok(
    client.messages[0]!.id !== undefined && client.messages[0]!.retry === 1_000,
    'retry and the starting id come first',
  );
  return client;
}

const eventIds = (client: SseClient) => client.events().map((m) => JSON.parse(m.data!).id as string);

// ---------------------------------------------------------------------------------------------------

describe(`events API: deliveries, replays, stream (${storageKind})`, () => {
  let t: TestContext;
  let base: string;
  const receivers: Receiver[] = [];
  before(async () => {
    // Its own database on PostgreSQL: the delivery worker here must only claim this file's deliveries.
    t = await isolatedTestApp();
    base = await t.listen();
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await t?.close();
  });

  async function receiver(handler?: Parameters<typeof startReceiver>[0]) {
    const r = await startReceiver(handler);
    receivers.push(r);
    return r;
  }

  function worker(retryScheduleS: number[]) {
    const log = captureLogger();
    return new DeliveryWorker(
      t.db,
      log,
      defaultDeliveryOptions({
        retryScheduleS,
        timeoutMs: 2_000,
        claimTtlS: 10,
        pollIntervalMs: 20,
        allowPrivateTargets: true,
      }),
    );
  }

  async function liveEvent(m: CreatedMerchant): Promise<EventPayload> {
    const apiKeyId = await liveKeyId(t.db, m.merchant_id);
    return t.db.transaction((tx) =>
      emitEvent(tx, {
        merchantId: m.merchant_id,
        environment: 'live',
        apiKeyId,
        type: 'checkout.session.completed',
        objectType: 'checkout.session',
        objectId: `cs_live_${Date.now()}`,
        objectVersion: 1,
        data: {},
      }),
    );
  }

  const auditRows = (merchantId: string) =>
    t.db.query<{
      actor_type: string;
      actor_id: string;
      action: string;
      object_type: string;
      object_id: string;
      after: Record<string, unknown>;
    }>(
      'SELECT actor_type, actor_id, action, object_type, object_id, after FROM audit_log WHERE merchant_id = $1 ORDER BY id',
      [merchantId],
    );

  describe('GET /api/v1/events/{id}', () => {
    it("shows the deliveries to the merchant's endpoints and their tries, the webhook body unchanged; no secret; others 404", async () => {
      let answers = 0;
      const r = await receiver((_request, res) => {
        answers++;
        res.statusCode = answers === 1 ? 500 : 200;
        res.end(answers === 1 ? 'boom: internal detail' : 'ok');
      });
      const m = await t.merchant({ webhookUrl: r.url });
      const endpoint = await endpointOf(t.db, m.merchant_id);
      const event = await emitTestEvent(t.db, m);

      const fresh = (await call(t, 'GET', `/api/v1/events/${event.id}`, { key: m.test_api_key })).json();
      const { deliveries: none, ...body } = fresh;
      assert.deepEqual(body, event, 'exactly the webhook body besides deliveries');
      assert.equal(none.length, 1);
      assert.equal(none[0].status, 'pending');
      assert.equal(none[0].try_count, 0);
      assert.deepEqual(none[0].tries, []);

      const w = worker([1]);
      assert.equal(await w.runOnce(), 1);
      await waitFor(
        'the failed try recorded',
        async () =>
          (await deliveriesOf(t.db, event.id))[0]!.tries === 1 &&
          (await deliveriesOf(t.db, event.id))[0]!.last_http_status === 500,
      );
      const failed = await call(t, 'GET', `/api/v1/events/${event.id}`, { key: m.test_api_key });
      assert.equal(failed.statusCode, 200, failed.body);
      const [d] = failed.json().deliveries;
      assert.equal(d.endpoint_id, endpoint.id);
      assert.equal(d.url, r.url);
      assert.equal(d.status, 'pending');
      assert.equal(d.try_count, 1);
      assert.ok(Date.parse(d.next_try_at) > Date.now() - 1_000, 'waiting for its retry');
      assert.equal(d.tries.length, 1);
      assert.equal(d.tries[0].try_number, 1);
      assert.equal(d.tries[0].http_status, 500);
      assert.equal(typeof d.tries[0].latency_ms, 'number');
      assert.ok(d.tries[0].error);
      assert.doesNotMatch(failed.body, new RegExp(endpoint.secret), 'no secret');
      assert.doesNotMatch(failed.body, /boom: internal detail|response_excerpt/, 'no response bodies');

      await sleep(1_300);
      assert.equal(await w.runOnce(), 1);
      await waitFor('delivered', async () => (await deliveriesOf(t.db, event.id))[0]!.status === 'delivered');
      await w.stop();
      const done = (await call(t, 'GET', `/api/v1/events/${event.id}`, { key: m.test_api_key })).json().deliveries[0];
      assert.equal(done.status, 'delivered');
      assert.equal(done.next_try_at, null);
      assert.ok(done.delivered_at);
      assert.deepEqual(
        done.tries.map((x: { try_number: number; http_status: number }) => [x.try_number, x.http_status]),
        [
          [1, 500],
          [2, 200],
        ],
      );

      const stranger = await t.merchant();
      assertErrorEnvelope(
        await call(t, 'GET', `/api/v1/events/${event.id}`, { key: stranger.test_api_key }),
        404,
        'NOT_FOUND',
      );
      assertErrorEnvelope(
        await call(t, 'GET', `/api/v1/events/${event.id}`, { key: m.live_api_key }),
        404,
        'NOT_FOUND',
      );
      // The list stays the webhook bodies alone.
      const listed = (await call(t, 'GET', '/api/v1/events', { key: m.test_api_key })).json().data;
      assert.deepEqual(listed, [event]);
    });
  });

  describe('POST /api/v1/events/{id}/replay', () => {
    it("queues the event again (202, what was queued), audited with the key; other merchants' and environments' ids are 404 and change nothing", async () => {
      const r = await receiver();
      const m = await t.merchant({ webhookUrl: r.url });
      const endpoint = await endpointOf(t.db, m.merchant_id);
      const event = await emitTestEvent(t.db, m);
      const w = worker([]);
      assert.equal(await w.runOnce(), 1);
      await waitFor('delivered', async () => (await deliveriesOf(t.db, event.id))[0]!.status === 'delivered');

      const res = await call(t, 'POST', `/api/v1/events/${event.id}/replay`, {
        key: m.test_api_key,
        idempotencyKey: `replay-${event.id}`,
      });
      assert.equal(res.statusCode, 202, res.body);
      const body = res.json();
      assert.equal(body.object, 'event_replay');
      assert.equal(body.event_id, event.id);
      assert.equal(body.deliveries_queued, 1);
      const [delivery] = await deliveriesOf(t.db, event.id);
      assert.deepEqual(body.deliveries, [
        { id: delivery!.id, event_id: event.id, endpoint_id: endpoint.id, url: r.url },
      ]);
      assert.equal(delivery!.status, 'pending', 'due again, same event id');
      assert.ok(delivery!.next_try_at.getTime() <= Date.now() + 1_000);

      // The same Idempotency-Key replays the answer: no second replay, no second audit row.
      const again = await call(t, 'POST', `/api/v1/events/${event.id}/replay`, {
        key: m.test_api_key,
        idempotencyKey: `replay-${event.id}`,
      });
      assert.equal(again.statusCode, 202);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.json(), body);

      assert.equal(await w.runOnce(), 1, 'the worker sends it again');
      await waitFor('delivered again', async () => (await deliveriesOf(t.db, event.id))[0]!.status === 'delivered');
      await w.stop();
      assert.equal(r.requests.filter((q) => q.headers['webhook-id'] === event.id).length, 2);

      const audit = await auditRows(m.merchant_id);
      assert.deepEqual(
        audit.map((a) => [a.actor_type, a.actor_id, a.action, a.object_type, a.object_id]),
        [['api_key', await testKeyId(t.db, m.merchant_id), 'events.replay', 'event', event.id]],
      );
      assert.equal(audit[0]!.after.deliveries_queued, 1);

      // Another merchant's key, the owner's Live key, an unknown id: the same 404, nothing queued or audited.
      const stranger = await t.merchant();
      const before = await deliveriesOf(t.db, event.id);
      for (const key of [stranger.test_api_key, stranger.live_api_key, m.live_api_key]) {
        const refused = assertErrorEnvelope(
          await call(t, 'POST', `/api/v1/events/${event.id}/replay`, { key }),
          404,
          'NOT_FOUND',
        );
        assert.deepEqual(
          refused,
          assertErrorEnvelope(await call(t, 'POST', '/api/v1/events/evt_unknown/replay', { key }), 404, 'NOT_FOUND'),
        );
      }
      assert.deepEqual(await deliveriesOf(t.db, event.id), before);
      assert.equal((await auditRows(m.merchant_id)).length, 1);
      assert.equal((await auditRows(stranger.merchant_id)).length, 0);

      // A Live event: the Test key cannot replay it; the Live key can (its merchant has no Live endpoint here).
      const live = await liveEvent(m);
      assertErrorEnvelope(
        await call(t, 'POST', `/api/v1/events/${live.id}/replay`, { key: m.test_api_key }),
        404,
        'NOT_FOUND',
      );
      const liveReplay = await call(t, 'POST', `/api/v1/events/${live.id}/replay`, { key: m.live_api_key });
      assert.equal(liveReplay.statusCode, 202, liveReplay.body);
      assert.equal(liveReplay.json().deliveries_queued, 0);
      const lastAudit = (await auditRows(m.merchant_id)).at(-1)!;
      assert.deepEqual([lastAudit.actor_id, lastAudit.object_id], [await liveKeyId(t.db, m.merchant_id), live.id]);
    });
  });

  describe('POST /api/v1/events/replay', () => {
    it('replays the failed deliveries of a range by default, bounded, once per key per window (429), audited; the other environment untouched', async () => {
      const r = await receiver((request, res) => {
        res.statusCode = JSON.parse(request.body).data.fail ? 500 : 200;
        res.end();
      });
      const m = await t.merchant({ webhookUrl: r.url });
      const from = new Date(Date.now() - 60_000).toISOString();
      const ok = await emitTestEvent(t.db, m, { data: { fail: false } });
      const bad = await emitTestEvent(t.db, m, { data: { fail: true } });
      const refund = await emitTestEvent(t.db, m, { type: 'refund.failed', data: { fail: true } });
      const live = await liveEvent(m);
      const w = worker([]);
      assert.equal(await w.runOnce(), 3);
      await waitFor(
        'tried',
        async () =>
          (
            await Promise.all([ok, bad, refund].map(async (e) => (await deliveriesOf(t.db, e.id))[0]!.status))
          ).join() === 'delivered,failed,failed',
      );
      await w.stop();
      const to = new Date(Date.now() + 60_000).toISOString();

      // Bounds and an empty range are 400 before anything runs (they use no window).
      const wide = new Date(Date.parse(from) + (EVENT_REPLAY_RANGE_DAYS_MAX * 86_400 + 1) * 1000).toISOString();
      const tooWide = assertErrorEnvelope(
        await call(t, 'POST', '/api/v1/events/replay', {
          key: m.test_api_key,
          body: { created_gte: from, created_lt: wide },
        }),
        400,
        'INVALID_ARGUMENT',
      );
      assert.match(tooWide.message, new RegExp(`at most ${EVENT_REPLAY_RANGE_DAYS_MAX} days`));
      assertErrorEnvelope(
        await call(t, 'POST', '/api/v1/events/replay', {
          key: m.test_api_key,
          body: { created_gte: to, created_lt: from },
        }),
        400,
        'INVALID_ARGUMENT',
      );
      assertErrorEnvelope(
        await call(t, 'POST', '/api/v1/events/replay', { key: m.test_api_key, body: { created_gte: from } }),
        400,
        'INVALID_ARGUMENT',
      );

      const res = await call(t, 'POST', '/api/v1/events/replay', {
        key: m.test_api_key,
        body: { created_gte: from, created_lt: to },
        idempotencyKey: 'range-1',
      });
      assert.equal(res.statusCode, 202, res.body);
      const body = res.json();
      assert.deepEqual(body.event_ids, [bad.id, refund.id], 'only the failed ones, oldest first; not the Live event');
      assert.equal(body.deliveries_queued, 2);
      assert.equal(body.only_failed, true);
      assert.equal(body.has_more, false);
      assert.equal(body.next_starting_after, null);
      assert.deepEqual(
        await Promise.all([ok, bad, refund].map(async (e) => (await deliveriesOf(t.db, e.id))[0]!.status)),
        ['delivered', 'pending', 'pending'],
      );
      assert.deepEqual(await deliveriesOf(t.db, live.id), []);

      // The same Idempotency-Key replays the answer, even inside the window.
      const same = await call(t, 'POST', '/api/v1/events/replay', {
        key: m.test_api_key,
        body: { created_gte: from, created_lt: to },
        idempotencyKey: 'range-1',
      });
      assert.equal(same.statusCode, 202);
      assert.equal(same.headers['idempotent-replayed'], 'true');
      // Another range replay by the key within the window: 429 with Retry-After, nothing done.
      const limited = await call(t, 'POST', '/api/v1/events/replay', {
        key: m.test_api_key,
        body: { created_gte: from, created_lt: to, only_failed: false },
      });
      const error = assertErrorEnvelope(limited, 429, 'RATE_LIMITED');
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= EVENT_REPLAY_INTERVAL_S, `Retry-After ${retryAfter}`);
      assert.equal(error.retry_after_seconds, retryAfter);
      assert.equal((await deliveriesOf(t.db, ok.id))[0]!.status, 'delivered', 'the refused replay queued nothing');
      // Another key (the Live one) has its own window; it sees only Live events.
      const liveRes = await call(t, 'POST', '/api/v1/events/replay', {
        key: m.live_api_key,
        body: { created_gte: from, created_lt: to, only_failed: false },
      });
      assert.equal(liveRes.statusCode, 202, liveRes.body);
      assert.deepEqual(liveRes.json().event_ids, [live.id]);

      // The window passes (moved back here rather than waited for): a type filter, every delivery.
      await t.db.query('UPDATE event_replay_windows SET until = now() WHERE api_key_id = $1', [
        await testKeyId(t.db, m.merchant_id),
      ]);
      const typed = await call(t, 'POST', '/api/v1/events/replay', {
        key: m.test_api_key,
        body: { created_gte: from, created_lt: to, type: 'checkout.session.completed', only_failed: false },
      });
      assert.equal(typed.statusCode, 202, typed.body);
      assert.deepEqual(typed.json().event_ids, [ok.id, bad.id]);
      assert.equal((await deliveriesOf(t.db, ok.id))[0]!.status, 'pending', 'the delivered one too');

      const audit = (await auditRows(m.merchant_id)).filter((a) => a.object_type === 'event_range');
      assert.deepEqual(
        audit.map((a) => [a.actor_type, a.actor_id, a.action, a.after.events]),
        [
          ['api_key', await testKeyId(t.db, m.merchant_id), 'events.replay', 2],
          ['api_key', await liveKeyId(t.db, m.merchant_id), 'events.replay', 1],
          ['api_key', await testKeyId(t.db, m.merchant_id), 'events.replay', 2],
        ],
      );
    });

    it(`replays at most ${EVENT_REPLAY_ROWS_MAX} events per call, oldest first; has_more and next_starting_after continue the range`, async () => {
      const m = await t.merchant();
      const apiKeyId = await testKeyId(t.db, m.merchant_id);
      const start = Date.now() - 3_600_000;
      // EVENT_REPLAY_ROWS_MAX + 5 events in one statement (the outbox's own CTEs), one millisecond apart.
      const events = Array.from({ length: EVENT_REPLAY_ROWS_MAX + 5 }, (_, i) => {
        const input = {
          merchantId: m.merchant_id,
          environment: 'test' as const,
          apiKeyId,
          type: 'payout.paid',
          objectType: 'payout',
          objectId: `po_bulk_${i}`,
          objectVersion: 1,
          data: {},
        };
        const payload = { ...eventPayload(input), created_at: new Date(start + i).toISOString() };
        return { input, payload };
      });
      const s = new Statement();
      await t.db.transaction((tx) => tx.query(`WITH ${eventCtes(s, events)} SELECT 1`, s.params));
      const body = {
        created_gte: new Date(start).toISOString(),
        created_lt: new Date(start + 60_000).toISOString(),
        only_failed: false,
      };
      const first = await call(t, 'POST', '/api/v1/events/replay', { key: m.test_api_key, body });
      assert.equal(first.statusCode, 202, first.body);
      const page = first.json();
      assert.equal(page.event_ids.length, EVENT_REPLAY_ROWS_MAX);
      assert.deepEqual(
        page.event_ids,
        events.slice(0, EVENT_REPLAY_ROWS_MAX).map((e) => e.payload.id),
      );
      assert.equal(page.has_more, true);
      assert.equal(page.next_starting_after, events[EVENT_REPLAY_ROWS_MAX - 1]!.payload.id);
      await t.db.query('UPDATE event_replay_windows SET until = now() WHERE api_key_id = $1', [apiKeyId]);
      const second = (
        await call(t, 'POST', '/api/v1/events/replay', {
          key: m.test_api_key,
          body: { ...body, starting_after: page.next_starting_after },
        })
      ).json();
      assert.deepEqual(
        second.event_ids,
        events.slice(EVENT_REPLAY_ROWS_MAX).map((e) => e.payload.id),
      );
      assert.equal(second.has_more, false);
    });
  });

  describe('GET /api/v1/events/stream', () => {
    it("streams the Test events committed after connect, in commit order, as their webhook bodies; only its merchant's; types filter", async () => {
      const m = await t.merchant();
      const stranger = await t.merchant();
      const earlier = await emitTestEvent(t.db, m);
      const client = await connected(base, m.test_api_key);
      assert.match(String(client.headers['content-type']), /^text\/event-stream/);
      const refunds = await connected(base, m.test_api_key, { query: { types: 'refund.succeeded,refund.failed' } });

      const emitted: EventPayload[] = [];
      for (let i = 0; i < 3; i++) emitted.push(await emitTestEvent(t.db, m));
      const refund = await emitTestEvent(t.db, m, { type: 'refund.succeeded' });
      emitted.push(refund);
      await emitTestEvent(t.db, stranger);
      await liveEvent(m);
      await waitFor('four events', () => client.events().length >= 4, 10_000);
      await sleep(600); // nothing else arrives
      assert.deepEqual(
        eventIds(client),
        emitted.map((e) => e.id),
        "the four, in order, not the earlier one, the stranger's or the Live one",
      );
      assert.ok(!eventIds(client).includes(earlier.id));
      const stored = await t.db.query<{ id: string; payload: string }>(
        'SELECT id, payload FROM events WHERE id = ANY($1::text[])',
        [emitted.map((e) => e.id)],
      );
      for (const message of client.events()) {
        const id = JSON.parse(message.data!).id;
        assert.equal(message.data, stored.find((row) => row.id === id)!.payload, 'data is the exact webhook body');
        assert.equal(message.event, JSON.parse(message.data!).type);
        assert.ok(message.id);
      }
      await waitFor('the refund', () => refunds.events().length >= 1);
      assert.deepEqual(eventIds(refunds), [refund.id], 'types filter');
      client.destroy();
      refunds.destroy();
    });

    it('resumes with Last-Event-ID (or ?after=) after a forced disconnect: the events committed meanwhile once each, in order', async () => {
      const m = await t.merchant();
      const first = await connected(base, m.test_api_key);
      const a = [await emitTestEvent(t.db, m), await emitTestEvent(t.db, m)];
      await waitFor('two events', () => first.events().length >= 2);
      const cursor = first.lastId()!;
      first.destroy();
      await first.ended;
      const meanwhile = [await emitTestEvent(t.db, m), await emitTestEvent(t.db, m), await emitTestEvent(t.db, m)];

      const second = await connected(base, m.test_api_key, { lastEventId: cursor });
      assert.equal(second.messages[0]!.id, cursor, 'it starts where the client was');
      const later = await emitTestEvent(t.db, m);
      await waitFor('four events', () => second.events().length >= 4);
      await sleep(600);
      assert.deepEqual(
        eventIds(first),
        a.map((e) => e.id),
      );
      assert.deepEqual(
        eventIds(second),
        [...meanwhile, later].map((e) => e.id),
        'each once, in order',
      );
      second.destroy();

      // ?after= does the same, and a stream that saw no event yet resumes from its starting id.
      const third = await connected(base, m.test_api_key, { query: { after: cursor } });
      await waitFor('four events', () => third.events().length >= 4);
      assert.deepEqual(
        eventIds(third),
        [...meanwhile, later].map((e) => e.id),
      );
      third.destroy();
      const quiet = await connected(base, m.test_api_key);
      const start = quiet.lastId()!;
      quiet.destroy();
      const gap = [await emitTestEvent(t.db, m), await emitTestEvent(t.db, m)];
      const resumed = await connected(base, m.test_api_key, { lastEventId: start });
      await waitFor('two events', () => resumed.events().length >= 2);
      await sleep(400);
      assert.deepEqual(
        eventIds(resumed),
        gap.map((e) => e.id),
      );
      resumed.destroy();
    });

    it('a transaction that began before a later one but commits after it is not skipped', {
      skip: storageKind === 'embedded' ? 'embedded storage runs one transaction at a time' : false,
    }, async () => {
      const m = await t.merchant();
      const client = await connected(base, m.test_api_key);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let early!: EventPayload;
      let written!: () => void;
      const insertDone = new Promise<void>((resolve) => (written = resolve));
      const slow = t.db.transaction(async (tx) => {
        early = await emitTestEventIn(tx, m);
        written();
        await held;
      });
      await insertDone;
      const late = await emitTestEvent(t.db, m); // begins and commits after the slow one began
      assert.ok(Date.parse(late.created_at) >= Date.parse(early.created_at), 'the late event has the later created_at');
      await sleep(800);
      assert.deepEqual(eventIds(client), [], 'nothing is streamed past a transaction still running');
      release();
      await slow;
      await waitFor('both', () => client.events().length >= 2);
      assert.deepEqual(
        eventIds(client),
        [early.id, late.id],
        'the early one is not skipped; commit order is transaction order',
      );
      const cursor = client.lastId()!;
      client.destroy();
      const resumed = await connected(base, m.test_api_key, { lastEventId: cursor });
      await sleep(600);
      assert.deepEqual(eventIds(resumed), [], 'nothing repeated');
      resumed.destroy();
    });

    it('refuses Live keys (403), bad cursors and types (400), and more than the streams per key (429) with the envelope', async () => {
      const m = await t.merchant();
      const live = await call(t, 'GET', '/api/v1/events/stream', { key: m.live_api_key });
      assert.match(assertErrorEnvelope(live, 403, 'FORBIDDEN').message, /Test keys only/);
      assertErrorEnvelope(
        await call(t, 'GET', '/api/v1/events/stream', {
          key: m.test_api_key,
          headers: { 'last-event-id': 'nonsense' },
        }),
        400,
        'INVALID_ARGUMENT',
      );
      assertErrorEnvelope(
        await call(t, 'GET', '/api/v1/events/stream', {
          key: m.test_api_key,
          query: { after: '99999999999999999999.evt_x' },
        }),
        400,
        'INVALID_ARGUMENT',
      );
      assertErrorEnvelope(
        await call(t, 'GET', '/api/v1/events/stream', { key: m.test_api_key, query: { types: 'a,,b' } }),
        400,
        'INVALID_ARGUMENT',
      );
      assertErrorEnvelope(await call(t, 'GET', '/api/v1/events/stream', {}), 401, 'UNAUTHORIZED');
      // HEAD answers the headers and ends (no stream); a Live key is refused there too.
      const head = await t.app.inject({
        method: 'HEAD',
        url: '/api/v1/events/stream',
        headers: { authorization: `Bearer ${m.test_api_key}` },
      });
      assert.equal(head.statusCode, 200);
      assert.match(String(head.headers['content-type']), /^text\/event-stream/);
      assert.equal(
        (
          await t.app.inject({
            method: 'HEAD',
            url: '/api/v1/events/stream',
            headers: { authorization: `Bearer ${m.live_api_key}` },
          })
        ).statusCode,
        403,
      );

      const open: SseClient[] = [];
      for (let i = 0; i < EVENT_STREAMS_PER_KEY_MAX; i++) open.push(await connected(base, m.test_api_key));
      const sixth = await call(t, 'GET', '/api/v1/events/stream', { key: m.test_api_key });
      assertErrorEnvelope(sixth, 429, 'RATE_LIMITED');
      assert.ok(Number(sixth.headers['retry-after']) >= 1);
      open.pop()!.destroy();
      await waitFor(
        'a slot freed',
        async () =>
          (await openStream(base, m.test_api_key).then((c) => {
            c.destroy();
            return c.status;
          })) === 200,
        5_000,
        50,
      );
      for (const c of open) c.destroy();
    });
  });
});

/** emitTestEvent inside a transaction the test holds open. */
async function emitTestEventIn(
  tx: Parameters<Parameters<TestContext['db']['transaction']>[0]>[0],
  m: CreatedMerchant,
): Promise<EventPayload> {
  const rows = await tx.query<{ id: string }>(
    `SELECT id FROM api_keys WHERE merchant_id = $1 AND environment = 'test'`,
    [m.merchant_id],
  );
  return emitEvent(tx, {
    merchantId: m.merchant_id,
    environment: 'test',
    apiKeyId: rows[0]!.id,
    type: 'checkout.session.completed',
    objectType: 'checkout.session',
    objectId: `cs_slow_${Date.now()}`,
    objectVersion: 1,
    data: { slow: true },
  });
}

describe(`EventStreams heartbeats (${storageKind})`, () => {
  it('a heartbeat comment every heartbeatMs; with a types filter, an id-only message moves the cursor past the events it left out', async () => {
    const t = await startTestApp();
    try {
      const m = await t.merchant();
      const principal = {
        merchantId: m.merchant_id,
        environment: 'test' as const,
        apiKeyId: await testKeyId(t.db, m.merchant_id),
      };
      const streams = new EventStreams(t.db, { heartbeatMs: 150, pollMs: 20 });
      const body = await streams.start(principal, { types: ['refund.succeeded'], after: null });
      let text = '';
      body.setEncoding('utf8');
      body.on('data', (chunk: string) => (text += chunk));
      await waitFor('the starting id', () => /^retry: 1000\nid: (\S+)\n\n/.test(text));
      const startId = /^retry: 1000\nid: (\S+)\n\n/.exec(text)![1]!;
      const skipped = await emitTestEvent(t.db, m); // not a refund: left out
      await waitFor(
        'a heartbeat and a later id',
        () =>
          text.includes(': heartbeat') &&
          /\n\nid: (\S+)\n\n/.exec(text.slice(text.indexOf(': heartbeat')))?.[1] !== undefined,
        5_000,
      );
      const moved = /: heartbeat\n\nid: (\S+)\n\n/.exec(text)![1]!;
      assert.notEqual(moved, startId);
      assert.ok(!text.includes(skipped.id), 'the filtered-out event is not sent');
      // Resuming from the moved cursor with the same filter gets the next refund and nothing before it.
      const refund = await emitTestEvent(t.db, m, { type: 'refund.succeeded' });
      const resumed = await streams.start(principal, {
        types: ['refund.succeeded'],
        after: parseCursor(moved, 'after'),
      });
      let again = '';
      resumed.setEncoding('utf8');
      resumed.on('data', (chunk: string) => (again += chunk));
      await waitFor('the refund', () => again.includes(refund.id));
      assert.equal(again.match(/^event: /gm)?.length, 1);
      assert.equal(streams.size, 2);
      await streams.closeAll();
      assert.equal(streams.size, 0);
      await waitFor('closeAll ends every stream', () => body.readableEnded && resumed.readableEnded, 2_000);
      await assert.rejects(streams.start(principal, { types: null, after: null }), /shutting down/);
    } finally {
      await t.close();
    }
  });
});

describe(`EventStreams shutdown with a client that does not read (${storageKind})`, () => {
  it('closeAll cuts a stream nobody reads after the grace period instead of waiting for it', async () => {
    const t = await startTestApp();
    try {
      const m = await t.merchant();
      const principal = {
        merchantId: m.merchant_id,
        environment: 'test' as const,
        apiKeyId: await testKeyId(t.db, m.merchant_id),
      };
      const streams = new EventStreams(t.db, { pollMs: 20 });
      const body = await streams.start(principal, { types: null, after: null });
      await emitTestEvent(t.db, m);
      await sleep(200);
      const started = performance.now();
      await streams.closeAll();
      const tookMs = performance.now() - started;
      assert.ok(
        tookMs >= EVENT_STREAM_CLOSE_GRACE_MS - 50 && tookMs < EVENT_STREAM_CLOSE_GRACE_MS + 1_000,
        `closeAll took ${Math.round(tookMs)} ms`,
      );
      assert.ok(body.destroyed, 'cut');
    } finally {
      await t.close();
    }
  });
});

describe(`events stream and app.close() (${storageKind})`, () => {
  it('app.close() ends the open streams promptly; the clients see the end and can resume', async () => {
    const t = await startTestApp();
    let closed = false;
    try {
      const base = await t.listen();
      const m = await t.merchant();
      const clients = [
        await connected(base, m.test_api_key),
        await connected(base, m.test_api_key, { query: { types: 'refund.succeeded' } }),
      ];
      const event = await emitTestEvent(t.db, m);
      await waitFor('the event', () => clients[0]!.events().length === 1);
      const started = performance.now();
      await t.app.close();
      closed = true;
      const tookMs = performance.now() - started;
      assert.ok(tookMs < 2_000, `app.close() took ${Math.round(tookMs)} ms`);
      await Promise.all(clients.map((c) => c.ended));
      assert.ok(clients.every((c) => c.isEnded()));
      assert.deepEqual(eventIds(clients[0]!), [event.id]);
    } finally {
      if (!closed) await t.app.close();
      await t.db.close();
    }
  });
});
