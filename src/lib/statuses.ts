// The closed sets that more than one domain names: the statuses of attempts, payouts and refunds, with the
// payout and refund transition tables (the webhook payloads of src/events/event-schemas.ts read them, so
// events need not import the domains that emit them). Each domain's model.ts re-exports what it owns.
import { defineStateMachine, type Transitions } from './state-machine.ts';

export const ATTEMPT_STATUSES = [
  'pending',
  'paid',
  'failed',
  'expired',
  'cancelled',
  'reversed',
  'manual_review',
  'amount_mismatch',
] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

export const PAYOUT_STATUSES = ['requested', 'processing', 'paid', 'failed', 'cancelled', 'returned'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** requested -> processing on approval; processing -> paid/failed by the rail; paid -> returned. */
export const PAYOUT_TRANSITIONS: Transitions<PayoutStatus> = {
  requested: ['processing', 'cancelled'],
  processing: ['paid', 'failed', 'cancelled'],
  paid: ['returned'],
  failed: [],
  cancelled: [],
  returned: [],
};

/**
 * A Live payout is created requested (awaiting approval) or processing; a Test payout is created paid at
 * once (nothing is sent), so paid is an initial status too, or, when its test_outcome asks, requested or
 * processing (then moved on by the Test simulator, lifecycle.ts simulateTestPayout).
 */
export const payoutMachine = defineStateMachine({
  name: 'payout',
  statuses: PAYOUT_STATUSES,
  initial: ['requested', 'processing', 'paid'],
  transitions: PAYOUT_TRANSITIONS,
});

export const RECONCILIATION_STATUSES = ['not_required', 'unreconciled', 'matched', 'exception'] as const;
export type ReconciliationStatus = (typeof RECONCILIATION_STATUSES)[number];

export const REFUND_STATUSES = ['awaiting_approval', 'pending', 'succeeded', 'failed', 'cancelled'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/**
 * awaiting_approval (a Live refund of a merchant that requires a second person) -> pending | cancelled;
 * pending -> succeeded | failed. A refund is created awaiting_approval or pending.
 */
export const REFUND_TRANSITIONS: Transitions<RefundStatus> = {
  awaiting_approval: ['pending', 'cancelled'],
  pending: ['succeeded', 'failed'],
  succeeded: [],
  failed: [],
  cancelled: [],
};
export const refundMachine = defineStateMachine({
  name: 'refund',
  statuses: REFUND_STATUSES,
  initial: ['awaiting_approval', 'pending'],
  transitions: REFUND_TRANSITIONS,
});

export const WEBHOOK_ENDPOINT_STATUSES = ['active', 'disabled'] as const;
export type WebhookEndpointStatus = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];

/**
 * A webhook endpoint is created active; the merchant disables and enables it, a 410 Gone or five days of
 * failures disable it. Each status may be written over itself: disabling twice (two tabs, a 410 racing the
 * merchant) records the newer reason, enabling an active endpoint clears its failure record.
 */
export const webhookEndpointMachine = defineStateMachine({
  name: 'webhook endpoint',
  statuses: WEBHOOK_ENDPOINT_STATUSES,
  initial: ['active'],
  transitions: { active: ['disabled', 'active'], disabled: ['active', 'disabled'] },
});
