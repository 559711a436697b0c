// Issue 37: a commit that leaves deliveries due signals the delivery worker (Queryable.signal, src/db/signals.ts),
// so the webhook leaves within milliseconds of the commit instead of on the worker's next poll. The workers
// here poll once a minute: anything they send within a second was sent because of a signal.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { openDb, type Db } from '../../src/db/index.ts';
import { DeliveryWorker, defaultDeliveryOptions } from '../../src/events/delivery.ts';
import { DELIVERIES_DUE_CHANNEL } from '../../src/events/model.ts';
import { emitEvent } from '../../src/events/outbox.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import {
  captureLogger,
  emitTestEvent,
  isolatedStorage,
  sleep,
  startReceiver,
  testKeyId,
  waitFor,
  type IsolatedStorage,
  type Receiver,
} from '../support/webhooks.ts';

const POLL_MS = 60_000;
const SOON_MS = 1_000;

describe(`deliveries due are signalled at commit (${storageKind})`, () => {
  let storage: IsolatedStorage;
  let t: TestContext;
  const cleanups: (() => Promise<unknown>)[] = [];
  // Each test's worker stops when the test ends: one worker at a time, as one process runs one.
  const workers: (() => Promise<void>)[] = [];

  before(async () => {
    storage = await isolatedStorage();
    t = await startTestApp(storage.env);
  });
  afterEach(async () => {
    for (const stop of workers.splice(0)) await stop();
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await t?.close();
    await storage?.drop();
  });

  async function receiver(): Promise<Receiver> {
    const r = await startReceiver();
    cleanups.push(() => r.close());
    return r;
  }

  /** A worker polling once a minute on db, started, with its first (empty) claim and its LISTEN done. */
  async function slowWorker(db: Db): Promise<DeliveryWorker> {
    const log = captureLogger();
    const w = new DeliveryWorker(
      db,
      log,
      defaultDeliveryOptions({
        pollIntervalMs: POLL_MS,
        timeoutMs: 2_000,
        allowPrivateTargets: t.config.webhookAllowPrivateTargets,
      }),
    );
    w.start();
    workers.push(async () => {
      await w.stop();
      assert.deepEqual(log.errors(), [], 'the worker logged no error');
    });
    await sleep(300);
    return w;
  }

  /** Counts the signals on the deliveries channel that reach a listener of db. */
  async function counter(db: Db): Promise<() => number> {
    let n = 0;
    const subscription = await db.listen(DELIVERIES_DUE_CHANNEL, { message: () => n++, reset: () => {} });
    cleanups.push(() => subscription.close());
    await sleep(100);
    n = 0;
    return () => n;
  }

  /** Commits an event by `commit` and checks the receiver had it within SOON_MS of the commit returning. */
  async function sentSoonAfterCommit(r: Receiver, commit: () => Promise<{ id: string }>): Promise<void> {
    const event = await commit();
    const committedAt = performance.now();
    const sent = await waitFor(
      'the event was sent within a second of its commit',
      () => r.requests.find((q) => q.headers['webhook-id'] === event.id),
      SOON_MS,
    );
    assert.ok(sent.at - committedAt < SOON_MS, `sent ${Math.round(sent.at - committedAt)} ms after the commit`);
  }

  it('a committed event is sent within a second by a worker that polls once a minute', async () => {
    const r = await receiver();
    const m = await t.merchant({ webhookUrl: r.url });
    await slowWorker(t.db);
    await sentSoonAfterCommit(r, () => emitTestEvent(t.db, m));
  });

  it('the signal comes after COMMIT, never before it, and never from a transaction that rolled back', async () => {
    const r = await receiver();
    const m = await t.merchant({ webhookUrl: r.url });
    const keyId = await testKeyId(t.db, m.merchant_id);
    const signals = await counter(t.db);
    const input = (objectId: string) => ({
      merchantId: m.merchant_id,
      environment: 'test' as const,
      apiKeyId: keyId,
      type: 'checkout.session.completed',
      objectType: 'checkout.session',
      objectId,
      objectVersion: 1,
      data: { objectId },
    });
    await assert.rejects(
      t.db.transaction(async (tx) => {
        await emitEvent(tx, input('cs_rolled_back'));
        throw new Error('the change is refused');
      }),
      /the change is refused/,
    );
    let seenBeforeCommit = -1;
    await t.db.transaction(async (tx) => {
      await emitEvent(tx, input('cs_committed'));
      await sleep(100);
      seenBeforeCommit = signals();
    });
    assert.equal(
      seenBeforeCommit,
      0,
      'no listener was told while the transaction was open, nor by the rolled-back one',
    );
    await waitFor('the commit was signalled', () => signals() >= 1, SOON_MS);
  });

  it('an event committed by another process is sent within a second (NOTIFY after the commit)', {
    skip: storageKind === 'postgres' ? false : 'embedded storage is one process: its only listeners are told directly',
  }, async () => {
    const r = await receiver();
    const m = await t.merchant({ webhookUrl: r.url });
    await slowWorker(t.db);
    // Another process's storage handle: its signal has no listener of its own, so only the NOTIFY reaches the worker.
    const other = await openDb({ databaseUrl: storage.databaseUrl, dataDir: null }, { migrate: false });
    cleanups.push(() => other.close());
    await sentSoonAfterCommit(r, () => emitTestEvent(other, m));
  });

  it('a burst of 40 commits is sent without waiting for a poll, each event claimed once', async () => {
    const r = await receiver();
    const m = await t.merchant({ webhookUrl: r.url });
    await slowWorker(t.db);
    const events = await Promise.all(Array.from({ length: 40 }, () => emitTestEvent(t.db, m)));
    await waitFor(
      'all 40 events were sent without waiting for a poll',
      () => events.every((e) => r.requests.some((q) => q.headers['webhook-id'] === e.id)),
      5_000,
    );
    const rows = await t.db.query<{ tries: number }>(
      'SELECT tries FROM webhook_deliveries WHERE event_id = ANY($1::text[])',
      [events.map((e) => e.id)],
    );
    assert.deepEqual(
      rows.map((row) => row.tries),
      events.map(() => 1),
      'each event was claimed once',
    );
  });
});
