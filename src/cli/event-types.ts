// The event types Sika emits (README "Webhooks"; emitted through src/events/outbox.ts by checkout/payments.ts,
// refunds/create.ts and lifecycle.ts, payouts/create.ts and lifecycle.ts). `sika listen --events` checks
// names against it, `sika trigger` makes the ones a Test key can reach.
export const WEBHOOK_EVENT_TYPES = [
  'checkout.session.pending',
  'checkout.session.completed',
  'checkout.session.failed',
  'checkout.session.expired',
  'checkout.session.reopened',
  'checkout.session.reversed',
  'refund.created',
  'refund.succeeded',
  'refund.failed',
  'refund.cancelled',
  'payout.requested',
  'payout.processing',
  'payout.paid',
  'payout.failed',
  'payout.cancelled',
  'payout.returned',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (name: string): name is WebhookEventType => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(name);
