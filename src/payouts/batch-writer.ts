// Writes new payouts of one merchant and environment together when they arrive together. Their
// statements would queue on the same rows anyway (the merchant's ledger accounts and the day's total,
// locked until each commits), so while one statement of a merchant runs, the payouts that arrive for it
// wait and are then written in one statement: one round trip, one plan, one commit for all of them.
// Nothing waits on a timer: a payout that finds its merchant idle is written at once.
//
// A batch statement writes all of its payouts or none (insertNewPayouts). When it fails (a taken
// client_reference, a balance or the day's limit that does not cover them all, anything but storage
// being unreachable, which fails them all at once), each payout is written again on its own, in arrival
// order, so each request gets exactly the answer it would have had alone, and a payout that fits is
// never refused for one that did not.
import { DbError, type Db } from '../db/index.ts';
import { insertNewPayout, insertNewPayouts, type NewPayoutWrite } from './new-payout-store.ts';
import type { PayoutRow } from './payout-store.ts';

/** Payouts per statement at most (the statement's arrays grow with it). */
export const PAYOUT_BATCH_MAX = 32;

export type BatchOutcome = 'together' | 'one by one' | 'failed';

interface Pending {
  write: NewPayoutWrite;
  resolve: (payout: PayoutRow | null) => void;
  reject: (error: unknown) => void;
}

export class PayoutBatchWriter {
  /** The payouts waiting per merchant and environment while that merchant's statement runs. */
  private readonly queues = new Map<string, Pending[]>();

  constructor(
    private readonly db: Db,
    /** Told each batch's size and how it went: written together, one by one after the statement failed, or failed (storage unreachable). */
    private readonly observe: (size: number, outcome: BatchOutcome) => void = () => {},
  ) {}

  /** Resolves with the payout written, or null (nothing written) when what its decision saw has changed. */
  write(write: NewPayoutWrite): Promise<PayoutRow | null> {
    const key = `${write.row.merchant_id} ${write.row.environment}`;
    return new Promise((resolve, reject) => {
      const waiting = this.queues.get(key);
      if (waiting) {
        waiting.push({ write, resolve, reject });
        return;
      }
      this.queues.set(key, [{ write, resolve, reject }]);
      void this.drain(key);
    });
  }

  private async drain(key: string): Promise<void> {
    const queue = this.queues.get(key)!;
    while (queue.length > 0) {
      const batch = takeBatch(queue);
      try {
        await this.writeBatch(batch);
      } catch (error) {
        for (const p of batch) p.reject(error); // those already answered keep their answer
      }
    }
    this.queues.delete(key);
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    if (batch.length === 1) {
      this.observe(1, 'together');
      return this.writeOneByOne(batch);
    }
    let written: PayoutRow[];
    try {
      written = await insertNewPayouts(
        this.db,
        batch.map((p) => p.write),
      );
    } catch (error) {
      // Storage unreachable: each payout alone would wait for it as long, one after the other.
      if (error instanceof DbError && error.isUnavailable) {
        this.observe(batch.length, 'failed');
        for (const p of batch) p.reject(error);
        return;
      }
      // Anything else: each payout gets the answer it would have had alone.
      this.observe(batch.length, 'one by one');
      return this.writeOneByOne(batch);
    }
    this.observe(batch.length, 'together');
    const byId = new Map(written.map((payout) => [payout.id, payout]));
    for (const p of batch) p.resolve(byId.get(p.write.row.id) ?? null);
  }

  private async writeOneByOne(batch: Pending[]): Promise<void> {
    for (const p of batch) {
      try {
        p.resolve(await insertNewPayout(this.db, p.write));
      } catch (error) {
        p.reject(error);
      }
    }
  }
}

/**
 * The next batch, in arrival order: at most PAYOUT_BATCH_MAX payouts, and one per client_reference (a
 * retry racing its original would fail the whole statement; it waits for the next one instead).
 */
function takeBatch(queue: Pending[]): Pending[] {
  const batch: Pending[] = [];
  const later: Pending[] = [];
  const references = new Set<string>();
  for (const p of queue) {
    if (batch.length < PAYOUT_BATCH_MAX && !references.has(p.write.row.client_reference)) {
      references.add(p.write.row.client_reference);
      batch.push(p);
    } else later.push(p);
  }
  queue.splice(0, queue.length, ...later);
  return batch;
}
