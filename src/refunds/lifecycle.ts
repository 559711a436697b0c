// A refund's status changes, each with its money and its event in the same transaction: succeeded posts
// the hold to the payer (and adds to the session's refunded_minor), failed and cancelled release it.
import type { Db, Queryable } from '../db/index.ts';
import { decideAsApprover, type ApproverDecision } from '../accounts/approver-decision.ts';
import { audit, type Actor } from '../audit/log.ts';
import { emitEvent } from '../events/outbox.ts';
import { postRefund, voidRefund } from '../ledger/service.ts';
import { errors } from '../lib/errors.ts';
import { approverRule } from '../lib/four-eyes.ts';
import {
  isDuplicateRefund,
  REFUND_FAILURE_REASON_LENGTH_MAX,
  refundMachine,
  toRefundResponse,
  type RefundRow,
  type RefundStatus,
} from './model.ts';
import { addRefundedToSession, findRefundById, sessionApiKeyOf, updateRefund, type RefundChange } from './store.ts';

export function emitRefundEvent(tx: Queryable, refund: RefundRow, apiKeyId: string | null, type: string) {
  return emitEvent(tx, {
    merchantId: refund.merchant_id,
    environment: refund.environment,
    apiKeyId,
    type,
    objectType: 'refund',
    objectId: refund.id,
    objectVersion: refund.version,
    data: { refund: toRefundResponse(refund) },
  });
}

/** Moves a refund through its table, with its money and its event. */
export async function moveRefund(
  tx: Queryable,
  refund: RefundRow,
  to: RefundStatus,
  change: RefundChange = {},
): Promise<RefundRow> {
  const updated = await updateRefund(
    tx,
    refund.id,
    {
      ...change,
      ...(change.failure_reason
        ? { failure_reason: change.failure_reason.slice(0, REFUND_FAILURE_REASON_LENGTH_MAX) }
        : {}),
    },
    refundMachine.transition(refund.status, to),
  );
  const money = {
    merchantId: refund.merchant_id,
    environment: refund.environment,
    refundId: refund.id,
    amountMinor: refund.amount_minor,
  };
  if (to === 'succeeded') {
    await postRefund(tx, money);
    // refunded_minor is what refunds of the session's payment gave back: a duplicate payment's refund is not one.
    if (!isDuplicateRefund(refund)) await addRefundedToSession(tx, refund.session_id, refund.amount_minor);
  } else if (to === 'failed' || to === 'cancelled') {
    await voidRefund(tx, money);
  }
  if (to !== 'pending')
    await emitRefundEvent(tx, updated, await sessionApiKeyOf(tx, refund.session_id), `refund.${to}`);
  return updated;
}

/** Who decides a refund awaiting approval: an approver of its merchant who did not request it. */
const REFUND_DECISION = approverRule<RefundStatus>('refund', 'awaiting_approval', (status) =>
  errors.conflict('REFUND_NOT_PENDING', `The refund is ${status}; only refunds awaiting approval take a decision.`),
);

/**
 * Four eyes, as for payouts: an approver who did not request the refund approves it (-> pending: sent to its
 * provider or operator queue) or rejects it (-> cancelled, the hold released).
 */
export const decideRefund = (db: Db, input: ApproverDecision & { refundId: string }) =>
  decideAsApprover(
    db,
    {
      what: 'refund',
      rule: REFUND_DECISION,
      findLocked: (tx) => findRefundById(tx, input.refundId, true),
      // A provider refund is sent at once; an operator's waits in their transfer queue.
      approve: (tx, refund, decidedBy) =>
        moveRefund(tx, refund, 'pending', {
          ...decidedBy,
          ...(refund.route === 'provider' ? { processing_step: 'send' as const, next_step_at: new Date() } : {}),
        }),
      reject: (tx, refund, decidedBy) =>
        moveRefund(tx, refund, 'cancelled', {
          ...decidedBy,
          failure_reason: input.reason ?? 'rejected by an approver',
        }),
    },
    input,
  );

/**
 * An operator's transfer to the payer of a cash or bank transfer payment (route operator): done, with where
 * the money went and the transfer's reference (succeeded), or impossible (failed, the hold released).
 */
export async function settleOperatorRefund(
  db: Db,
  actor: Actor,
  input:
    | { refundId: string; outcome: 'succeeded'; payerAccount: string; transferReference: string }
    | { refundId: string; outcome: 'failed'; reason: string },
) {
  return db.transaction(async (tx) => {
    const refund = await findRefundById(tx, input.refundId, true);
    if (refund?.route !== 'operator') throw errors.notFound('Refund');
    if (refund.status !== 'pending')
      throw errors.conflict(
        'REFUND_NOT_PENDING',
        `The refund is ${refund.status}; only a pending refund can be settled.`,
      );
    const after =
      input.outcome === 'succeeded'
        ? await moveRefund(tx, refund, 'succeeded', {
            payer_account: input.payerAccount,
            transfer_reference: input.transferReference,
            completed_by: actor.email ?? actor.id,
          })
        : await moveRefund(tx, refund, 'failed', {
            failure_reason: input.reason,
            completed_by: actor.email ?? actor.id,
          });
    await audit(tx, {
      actor,
      merchantId: refund.merchant_id,
      action: `refund.operator_${input.outcome}`,
      objectType: 'refund',
      objectId: refund.id,
      before: { status: refund.status },
      after:
        input.outcome === 'succeeded'
          ? { status: after.status, payer_account: input.payerAccount, transfer_reference: input.transferReference }
          : { status: after.status, reason: input.reason },
    });
    return after;
  });
}
