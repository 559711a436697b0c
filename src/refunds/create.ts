// A new refund, in one transaction: the session is locked (refunds of one payment are decided one at a
// time, so concurrent refunds can never add up to more than was charged), the amount is held from the
// available balance (409 INSUFFICIENT_FUNDS when it cannot be, never a negative balance), refund.created is
// emitted, and a Test refund is settled at once. A Live refund is only recorded here, with its provider and
// our reference with it: the provider is asked after commit (processing.ts), never inside the transaction.
import type { Environment } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { holdRefund, InsufficientFundsError } from '../ledger/service.ts';
import { checkMetadata, lockSession } from '../checkout/service.ts';
import { errors, SikaError } from '../lib/errors.ts';
import { formatGhs } from '../lib/ghana.ts';
import { newId } from '../lib/ids.ts';
import type { LiveProviders } from '../rails/live.ts';
import { moveRefund, emitRefundEvent } from './lifecycle.ts';
import {
  REFUND_REASON_LENGTH_MAX,
  type RefundRoute,
  type RefundRow,
  type RefundStatus,
  type TestRefundOutcome,
  type TestRefundSimulation,
} from './model.ts';
import {
  approvalRequired,
  committedRefundsMinor,
  findPaidAttempt,
  findRefundById,
  findRefundByRequestKey,
  insertRefund,
} from './store.ts';

export interface RefundRequester {
  merchantId: string;
  environment: Environment;
  /** The API key that asked (null from the dashboard). */
  apiKeyId: string | null;
  /** The dashboard user who asked (null from the API). */
  userId: string | null;
}

export interface RefundRequest {
  session_id: string;
  /** Omitted: everything not yet refunded. */
  amount_minor?: number;
  reason?: string;
  metadata?: Record<string, unknown>;
  /** Test keys only: how the simulator settles the refund (default succeeded). */
  test_outcome?: TestRefundOutcome;
  /** A form's one-time key: sent again (a double click), it answers the refund it already made. */
  request_key?: string;
}

/** Rails whose payer account Sika does not know: their refunds are paid by an operator's transfer. */
const OPERATOR_RAILS: readonly string[] = ['cash', 'bank_transfer'];

export async function createRefund(
  tx: Queryable,
  who: RefundRequester,
  request: RefundRequest,
  providers: LiveProviders,
): Promise<RefundRow> {
  if (request.test_outcome !== undefined && who.environment !== 'test') {
    throw errors.invalidArgument('test_outcome is for Test keys only.', [
      { field: 'test_outcome', message: 'is only accepted with a Test key' },
    ]);
  }
  if (request.metadata) checkMetadata(request.metadata);
  const session = await lockSession(tx, request.session_id);
  if (!session || session.merchant_id !== who.merchantId || session.environment !== who.environment)
    throw errors.notFound('Checkout session');
  // After the session lock: a first submission of the same form has committed, or has not begun.
  if (request.request_key) {
    const made = await findRefundByRequestKey(tx, who.merchantId, who.environment, request.request_key);
    if (made && made.session_id !== session.id)
      throw errors.invalidArgument('This form key was used for another session.', [
        { field: 'request_key', message: 'belongs to another refund' },
      ]);
    if (made) return made;
  }
  if (session.status !== 'success')
    throw errors.conflict(
      'SESSION_NOT_REFUNDABLE',
      `The session is ${session.status}; only a paid (success) session can be refunded.`,
    );
  const attempt = await findPaidAttempt(tx, session.id);
  if (!attempt)
    throw errors.conflict('SESSION_NOT_REFUNDABLE', "The session's payment was reversed; there is nothing to refund.");

  const remaining = attempt.amount_charged_minor - (await committedRefundsMinor(tx, attempt.id));
  const amount = request.amount_minor ?? remaining;
  if (remaining <= 0 || amount > remaining) {
    throw errors.conflict(
      'REFUND_EXCEEDS_PAYMENT',
      remaining <= 0
        ? `The payment of ${formatGhs(attempt.amount_charged_minor)} is already refunded in full (or being refunded).`
        : `At most ${formatGhs(remaining)} of the payment of ${formatGhs(attempt.amount_charged_minor)} can still be refunded.`,
    );
  }

  let route: RefundRoute = 'test';
  let provider: string | null = null;
  let providerReference: string | null = null;
  const id = newId('re');
  if (who.environment === 'live') {
    if (OPERATOR_RAILS.includes(attempt.rail)) route = 'operator';
    else {
      const rail = providers.refundsByName(attempt.provider);
      if (!rail) {
        throw new SikaError(
          'PROVIDER_RAIL_UNAVAILABLE',
          `The provider that took this payment (${attempt.provider}) is not configured for refunds right now; retry later.`,
          {
            retryAfterSeconds: 60,
          },
        );
      }
      route = 'provider';
      provider = rail.provider;
      providerReference = rail.reference({ refundId: id });
    }
  }
  // Test: only when asked for (test_outcome awaiting_approval); the simulator approves or cancels it.
  const awaitsApproval =
    who.environment === 'live'
      ? await approvalRequired(tx, who.merchantId)
      : request.test_outcome === 'awaiting_approval';
  const refund = await insertRefund(
    tx,
    {
      id,
      merchant_id: who.merchantId,
      environment: who.environment,
      api_key_id: who.apiKeyId,
      requested_by_user_id: who.userId,
      session_id: session.id,
      attempt_id: attempt.id,
      amount_minor: amount,
      currency: attempt.currency,
      reason: request.reason?.slice(0, REFUND_REASON_LENGTH_MAX) ?? null,
      metadata: request.metadata ?? {},
      route,
      provider,
      provider_reference: providerReference,
      processing_step: route === 'provider' && !awaitsApproval ? 'send' : null,
      next_step_at: route === 'provider' && !awaitsApproval ? new Date() : null,
      request_key: request.request_key ?? null,
    },
    awaitsApproval ? 'awaiting_approval' : 'pending',
  );
  try {
    await holdRefund(tx, {
      merchantId: who.merchantId,
      environment: who.environment,
      refundId: id,
      amountMinor: amount,
    });
  } catch (error) {
    if (error instanceof InsufficientFundsError) {
      throw errors.conflict(
        'INSUFFICIENT_FUNDS',
        `Your available balance does not cover this refund of ${formatGhs(amount)} (the fee of the original payment is not returned; payments still clearing, pending_minor, are not available yet).`,
      );
    }
    throw error;
  }
  await emitRefundEvent(tx, refund, session.api_key_id, 'refund.created');
  if (route !== 'test') return refund;
  const outcome = request.test_outcome ?? 'succeeded';
  if (outcome === 'pending' || outcome === 'awaiting_approval') return refund;
  return moveRefund(
    tx,
    refund,
    outcome,
    outcome === 'failed' ? { failure_reason: 'simulated failure (Test mode)' } : {},
  );
}

/** The status a simulated outcome needs the refund in. */
const SIMULATION_FROM: Record<TestRefundSimulation, RefundStatus> = {
  succeeded: 'pending',
  failed: 'pending',
  approved: 'awaiting_approval',
  cancelled: 'awaiting_approval',
};

/**
 * Test mode (POST /api/v1/test/refunds/{id}/simulate): the simulator settles a pending Test refund
 * (succeeded or failed, as a provider report settles a Live one), or decides one awaiting approval as an
 * approver would: approved (-> pending, where it waits to be simulated succeeded or failed) or cancelled
 * (the hold released, refund.cancelled). Through moveRefund, with its money and events.
 */
export async function simulateTestRefund(
  tx: Queryable,
  who: Pick<RefundRequester, 'merchantId' | 'environment'>,
  id: string,
  outcome: TestRefundSimulation,
): Promise<RefundRow> {
  const refund = await findRefundById(tx, id, true);
  if (!refund || refund.merchant_id !== who.merchantId || refund.environment !== who.environment)
    throw errors.notFound('Refund');
  if (refund.route !== 'test') throw errors.forbidden('Only Test refunds can be simulated.');
  const from = SIMULATION_FROM[outcome];
  if (refund.status !== from) {
    throw errors.conflict(
      'REFUND_NOT_PENDING',
      `The refund is ${refund.status}; only a Test refund that is ${from.replace('_', ' ')} can be simulated ${outcome}.`,
    );
  }
  switch (outcome) {
    case 'approved':
      return moveRefund(tx, refund, 'pending');
    case 'cancelled':
      return moveRefund(tx, refund, 'cancelled', { failure_reason: 'cancelled by the simulator (Test mode)' });
    case 'failed':
      return moveRefund(tx, refund, 'failed', { failure_reason: 'simulated failure (Test mode)' });
    case 'succeeded':
      return moveRefund(tx, refund, 'succeeded');
  }
}
