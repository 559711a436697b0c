// Webhook delivery on PostgreSQL: events written the way the service writes them (emitEvent in a
// transaction, the outbox), by this process, while the server's delivery worker sends them to the
// bench receiver. Latency runs from the moment the commit returned to the moment the receiver had the
// request. Two runs: paced (1,000 events offered at a steady 500/s: the target rate) and
// burst (1,000 events committed at once: how fast the worker drains a backlog).
import { openDb, type Db } from '../src/db/index.ts';
import { emitEvent } from '../src/events/outbox.ts';
import type { Receiver } from './receiver.ts';
import { percentile } from './report.ts';
import type { Fixtures } from './setup.ts';

export interface DeliveryResult {
  label: string;
  events: number;
  offeredPerSec: number | null;
  deliveriesPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  undelivered: number;
}


async function emitBatch(db: Db, f: Fixtures, count: number, run: string, index: number): Promise<string[]> {
  return db.transaction(async (tx) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const objectId = `bench_${run}_${index + i}`;
      const event = await emitEvent(tx, {
        merchantId: f.checkout.merchantId,
        environment: 'test',
        apiKeyId: f.checkout.testKeyId,
        type: 'bench.delivery',
        objectType: 'bench',
        objectId,
        objectVersion: 1,
        data: { object: { id: objectId, run } },
      });
      ids.push(event.id);
    }
    return ids;
  });
}

async function measure(db: Db, f: Fixtures, receiver: Receiver, label: string, events: number, ratePerSec: number | null): Promise<DeliveryResult> {
  const run = `${label.replace(/\W+/g, '_')}_${Date.now()}`;
  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  /** Receipt times of events whose commit time is not known yet (the receipt won the race by microseconds). */
  const pending = new Map<string, number>();
  const recorded = new Set<string>();
  let lastReceipt = 0;
  let done: () => void = () => {};
  const allIn = new Promise<void>((resolve) => (done = resolve));
  receiver.mode = 'ok';
  receiver.onEvent = (receipt) => {
    if (receipt.type !== 'bench.delivery' || !receipt.objectId?.startsWith(`bench_${run}_`)) return;
    const committed = committedAt.get(receipt.eventId);
    if (committed !== undefined) record(receipt.eventId, committed, receipt.atMs);
    else pending.set(receipt.eventId, receipt.atMs);
  };
  function record(eventId: string, committed: number, atMs: number) {
    if (recorded.has(eventId)) return; // at-least-once: a duplicate is not a second delivery
    recorded.add(eventId);
    latencies.push(Math.max(0, atMs - committed));
    lastReceipt = Math.max(lastReceipt, atMs);
    if (recorded.size === events) done();
  }

  const started = Date.now();
  const batch = ratePerSec === null ? events : Math.max(1, Math.round(ratePerSec / 100)); // every 10 ms when paced
  for (let sent = 0; sent < events; sent += batch) {
    if (ratePerSec !== null) {
      const due = started + (sent / ratePerSec) * 1000;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    const ids = await emitBatch(db, f, Math.min(batch, events - sent), run, sent);
    const now = Date.now();
    for (const id of ids) {
      committedAt.set(id, now);
      const at = pending.get(id);
      if (at !== undefined) record(id, now, at);
    }
  }
  await Promise.race([allIn, new Promise((resolve) => setTimeout(resolve, 60_000))]);
  receiver.onEvent = null;
  latencies.sort((a, b) => a - b);
  const firstCommit = Math.min(...committedAt.values());
  return {
    label,
    events,
    offeredPerSec: ratePerSec,
    deliveriesPerSec: recorded.size / Math.max(0.001, (lastReceipt - firstCommit) / 1000),
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    latencyMaxMs: latencies.at(-1) ?? 0,
    undelivered: events - recorded.size,
  };
}

export async function benchDelivery(databaseUrl: string, f: Fixtures, receiver: Receiver): Promise<DeliveryResult[]> {
  const db = await openDb({ databaseUrl, dataDir: null }, { migrate: false });
  try {
    await measure(db, f, receiver, 'warm-up', 200, 500);
    const paced = await measure(db, f, receiver, 'paced', 1_000, 500);
    const burst = await measure(db, f, receiver, 'burst', 1_000, null);
    return [paced, burst];
  } finally {
    await db.close();
  }
}
