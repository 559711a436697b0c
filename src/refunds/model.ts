// Refunds: types, the status table and the API shape (no I/O here). DESIGN §4: only a success session's
// payment can be refunded, partial refunds add up to at most what the payer was charged, the fee the
// merchant paid on the payment is not returned, and the amount is held from available while pending.
import type { Environment } from '../lib/environment.ts';

import { REFUND_STATUSES, type RefundStatus } from '../lib/statuses.ts';

export { REFUND_STATUSES, type RefundStatus };
export type RefundRoute = 'test' | 'provider' | 'operator';
export type RefundStep = 'send' | 'awaiting_result';

export { REFUND_TRANSITIONS, refundMachine } from '../lib/statuses.ts';

export const REFUND_REASON_LENGTH_MAX = 500;
export const REFUND_FAILURE_REASON_LENGTH_MAX = 500;
/** A form's one-time key (refunds.request_key CHECK). */
export const REFUND_REQUEST_KEY_LENGTH_MAX = 100;
export const REFUND_LIST_LIMIT_DEFAULT = 20;
export const REFUND_LIST_LIMIT_MAX = 100;
/**
 * Test refunds only: how the simulator settles it (default succeeded, at once), or where it waits: pending
 * (for POST /api/v1/test/refunds/{id}/simulate) or awaiting_approval (as a Live refund of an account that
 * requires a second person; the hold is taken).
 */
export const TEST_REFUND_OUTCOMES = ['succeeded', 'failed', 'pending', 'awaiting_approval'] as const;
export type TestRefundOutcome = (typeof TEST_REFUND_OUTCOMES)[number];

/**
 * What the Test simulator does to a Test refund: a pending one succeeds or fails; one awaiting approval is
 * approved (-> pending, where it waits for succeeded or failed, as an approved Live refund waits for its
 * provider) or cancelled (the hold released, refund.cancelled).
 */
export const TEST_REFUND_SIMULATIONS = ['succeeded', 'failed', 'approved', 'cancelled'] as const;
export type TestRefundSimulation = (typeof TEST_REFUND_SIMULATIONS)[number];

export interface RefundRow {
  id: string;
  merchant_id: string;
  environment: Environment;
  api_key_id: string | null;
  requested_by_user_id: string | null;
  session_id: string;
  attempt_id: string;
  amount_minor: number;
  currency: string;
  reason: string | null;
  metadata: Record<string, unknown>;
  status: RefundStatus;
  route: RefundRoute;
  provider: string | null;
  provider_reference: string | null;
  provider_refund_id: string | null;
  processing_step: RefundStep | null;
  next_step_at: Date | null;
  status_checks: number;
  failure_reason: string | null;
  decided_by_user_id: string | null;
  decided_at: Date | null;
  payer_account: string | null;
  transfer_reference: string | null;
  completed_by: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
  succeeded_at: Date | null;
  failed_at: Date | null;
  /** The dashboard form's one-time key (null from the API). */
  request_key: string | null;
}

/** The merchant's view of a refund (API, webhooks, dashboard). */
export function toRefundResponse(row: RefundRow) {
  return {
    id: row.id,
    object: 'refund' as const,
    status: row.status,
    session_id: row.session_id,
    attempt_reference: row.attempt_id,
    amount_minor: row.amount_minor,
    currency: row.currency,
    reason: row.reason,
    metadata: row.metadata,
    // How it reaches the payer: test (at once), provider (the one that took the payment), operator (a transfer by Sika's operators).
    method: row.route,
    provider: row.provider,
    provider_refund_id: row.provider_refund_id,
    failure_reason: row.failure_reason,
    livemode: row.environment === 'live',
    created_at: row.created_at.toISOString(),
    succeeded_at: row.succeeded_at ? row.succeeded_at.toISOString() : null,
    failed_at: row.failed_at ? row.failed_at.toISOString() : null,
    version: row.version,
  };
}
export type RefundResponse = ReturnType<typeof toRefundResponse>;

/** The automatic refund of a duplicate payment (src/refunds/sika-refunds.ts), marked in its metadata. */
export const DUPLICATE_REFUND_MARK = 'duplicate_payment';
export const isDuplicateRefund = (refund: Pick<RefundRow, 'metadata'>): boolean =>
  (refund.metadata as Record<string, unknown> | null)?.automatic === DUPLICATE_REFUND_MARK;
