// What a process keeps for payouts between requests, built once by the app (src/app.ts) and handed to the
// payout routes and pages as AppDeps.payouts: the recent decisions (decision-cache.ts, re-checked by every
// write) and the writer that puts each merchant's payouts arriving together in one statement
// (batch-writer.ts), with its metric.
import { Histogram, type Registry } from 'prom-client';
import type { Db } from '../db/index.ts';
import { PayoutBatchWriter, type BatchOutcome } from './batch-writer.ts';
import { PayoutDecisionCache } from './decision-cache.ts';

export interface PayoutsRuntime {
  /** Recent payout decisions of this process (re-checked by every write). */
  decisions: PayoutDecisionCache;
  /** Writes each merchant's payouts that arrive together in one statement. */
  writer: PayoutBatchWriter;
}

/** The payouts' runtime of one app, its batch sizes counted in `registry`. */
export function createPayoutsRuntime(db: Db, registry: Registry): PayoutsRuntime {
  return { decisions: new PayoutDecisionCache(), writer: new PayoutBatchWriter(db, payoutBatchMetric(registry)) };
}

/** How many payouts each payout statement was given (src/payouts/batch-writer.ts), and how it went. */
function payoutBatchMetric(registry: Registry): (size: number, outcome: BatchOutcome) => void {
  const sizes = new Histogram({
    name: 'sika_payout_batch_size',
    help: 'Payouts per payout-writing statement; outcome "one by one": the batch failed and was written singly; "failed": storage was unreachable',
    labelNames: ['outcome'] as const,
    buckets: [1, 2, 4, 8, 16, 32],
    registers: [registry],
  });
  return (size, outcome) => sizes.observe({ outcome }, size);
}
