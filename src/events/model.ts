// The webhook delivery state machine (DESIGN "Webhooks"): one delivery per event and endpoint.
import type { Environment } from '../lib/environment.ts';
import { defineStateMachine } from '../lib/state-machine.ts';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * A delivery is written pending, or skipped when its endpoint is disabled. A claimed pending delivery is
 * delivered, failed (tries used up, or a 410) or skipped (its endpoint disabled since); retries keep it
 * pending without a status write. A replay puts any delivery back to pending, due now, a waiting one too.
 * No status is final: every delivery can be replayed.
 */
export const deliveryMachine = defineStateMachine({
  name: 'webhook delivery',
  statuses: DELIVERY_STATUSES,
  initial: ['pending', 'skipped'],
  transitions: {
    pending: ['delivered', 'failed', 'skipped', 'pending'],
    delivered: ['pending'],
    failed: ['pending'],
    skipped: ['pending'],
  },
});

/**
 * The channel a transaction signals (Queryable.signal) when it leaves deliveries due now: new events, replays.
 * The delivery worker listens and claims at once instead of on its next poll (src/events/delivery.ts).
 */
export const DELIVERIES_DUE_CHANNEL = 'sika_deliveries_due';

/** What a change announces, written to the outbox in the change's transaction (see outbox.ts). */
export interface EventInput {
  merchantId: string;
  environment: Environment;
  /** The key that created the object: its paired webhook endpoint(s) receive the event. */
  apiKeyId: string | null;
  type: string;
  objectType: string;
  objectId: string;
  /** Grows with each state change of the object, so receivers can drop stale, out-of-order events. */
  objectVersion: number;
  data: Record<string, unknown>;
}

export interface EventPayload {
  id: string;
  type: string;
  created_at: string;
  environment: Environment;
  livemode: boolean;
  version: number;
  data: Record<string, unknown>;
}
