// A payout after it is made: cancel, the approver's decision, returns and reconciliation. Each status
// change goes through the payout table (movePayout), with its money and its event in the same transaction.
import type { ApiPrincipal } from '../lib/environment.ts';
import { decideAsApprover, type ApproverDecision } from '../accounts/approver-decision.ts';
import { audit, type Actor } from '../audit/log.ts';
import { emitEvent, emitEventToMerchant } from '../events/outbox.ts';
import type { Db, Queryable } from '../db/index.ts';
import { errors } from '../lib/errors.ts';
import { approverRule } from '../lib/four-eyes.ts';
import { postPayout, returnPayout, voidPayout } from '../ledger/service.ts';
import {
  CANCEL_REASON_LENGTH_MAX,
  canCancel,
  payoutMachine,
  reconciliationMachine,
  testBankReference,
  testReturnReference,
  type PayoutStatus,
  type TestPayoutSimulation,
} from './model.ts';
import {
  findPayout,
  findPayoutById,
  releaseDayTotal,
  updatePayout,
  updateReconciliation,
  type PayoutRow,
} from './payout-store.ts';
import { payoutEventInput } from './presenters.ts';
import { settlementFailed } from './settlement-failure.ts';

const { conflict } = errors;

/** Queues a payout event, in the transaction of the change that causes it. */
const emitPayoutEvent = (tx: Queryable, p: PayoutRow, type: string) =>
  p.type === 'settlement'
    ? emitEventToMerchant(tx, payoutEventInput(p, type)) // no key made it: every endpoint of the merchant hears
    : emitEvent(tx, payoutEventInput(p, type));

/** The status move the payout table allows, with what it moves in the ledger and its payout.<status> event. */
export async function movePayout(
  tx: Queryable,
  payout: PayoutRow,
  to: PayoutStatus,
  change: Parameters<typeof updatePayout>[2] = {},
): Promise<PayoutRow> {
  const updated = await updatePayout(tx, payout.id, change, payoutMachine.transition(payout.status, to));
  const money = {
    merchantId: payout.merchant_id,
    environment: payout.environment,
    payoutId: payout.id,
    amountMinor: payout.amount_minor,
    feeMinor: payout.fee_minor,
  };
  if (to === 'paid') await postPayout(tx, money);
  else if (to === 'failed' || to === 'cancelled') {
    // A settlement never counted in the day's total (settlement-run-store.ts).
    if (payout.type !== 'settlement') await releaseDayTotal(tx, payout);
    await voidPayout(tx, money);
  } else if (to === 'returned') await returnPayout(tx, money);
  if (to !== 'requested') await emitPayoutEvent(tx, updated, `payout.${to}`);
  // A settlement that failed or came back pauses the schedule and tells the owner; the money is available again.
  if (payout.type === 'settlement' && (to === 'failed' || to === 'returned')) await settlementFailed(tx, updated);
  return updated;
}

/** SPEC 3.3 cancel: repeating a successful cancel returns the cancelled record; otherwise 409 once money may have moved. */
export const cancelPayout = (db: Db, principal: ApiPrincipal, id: string, reason: string | null) =>
  db.transaction((tx) => cancelPayoutIn(tx, principal, id, reason));

/** cancelPayout in the caller's transaction (the API's, with its Idempotency-Key). */
export async function cancelPayoutIn(tx: Queryable, principal: ApiPrincipal, id: string, reason: string | null) {
  const payout = await findPayout(tx, principal.merchantId, principal.environment, id, true);
  if (!payout) throw errors.notFound('Payout');
  if (payout.status === 'cancelled') return payout;
  if (!canCancel(payout.status, payout.processing_step)) {
    throw conflict(
      'PAYOUT_NOT_CANCELLABLE',
      `The payout is ${payout.status}${payout.processing_step ? ` (${payout.processing_step})` : ''} and can no longer be cancelled.`,
    );
  }
  return movePayout(tx, payout, 'cancelled', {
    cancel_reason: reason?.slice(0, CANCEL_REASON_LENGTH_MAX) ?? 'cancelled by the merchant',
    processing_step: null,
    next_step_at: null,
  });
}

/** Who decides a requested payout: an approver of its merchant who did not request it. */
const PAYOUT_DECISION = approverRule<PayoutStatus>('payout', 'requested', (status) =>
  conflict('PAYOUT_NOT_REQUESTED', `The payout is ${status}; only requested payouts await a decision.`),
);

/** Four eyes: an approver who is not the requester approves (-> processing) or rejects (-> cancelled). API keys cannot call this. */
export const decidePayout = (db: Db, input: ApproverDecision & { payoutId: string }) =>
  decideAsApprover(
    db,
    {
      what: 'payout',
      rule: PAYOUT_DECISION,
      findLocked: (tx) => findPayoutById(tx, input.payoutId, true),
      approve: (tx, payout, decidedBy) =>
        movePayout(tx, payout, 'processing', {
          processing_step: 'recipient_check',
          next_step_at: new Date(),
          ...decidedBy,
        }),
      reject: (tx, payout, decidedBy) =>
        movePayout(tx, payout, 'cancelled', {
          ...decidedBy,
          cancel_reason: input.reason?.slice(0, CANCEL_REASON_LENGTH_MAX) ?? 'rejected by an approver',
        }),
    },
    input,
  );

/** The audit row of someone's action on a payout; none without an actor (e.g. a provider's notice of a return). */
async function auditPayoutAction(
  tx: Queryable,
  actor: Actor | null,
  payout: PayoutRow,
  action: string,
  change: { before: unknown; after: unknown },
): Promise<void> {
  if (!actor) return;
  await audit(tx, {
    actor,
    merchantId: payout.merchant_id,
    action,
    objectType: 'payout',
    objectId: payout.id,
    ...change,
  });
}

/** An operator reconciles a Live payout with the bank statement. */
export async function reconcilePayout(
  db: Db,
  payoutId: string,
  result: 'matched' | 'exception',
  actor: Actor | null = null,
) {
  return db.transaction(async (tx) => {
    const payout = await findPayoutById(tx, payoutId, true);
    if (!payout) throw errors.notFound('Payout');
    if (payout.environment !== 'live' || payout.status !== 'paid') {
      throw conflict(
        'PAYOUT_NOT_RECONCILABLE',
        payout.status === 'returned'
          ? 'The payout was returned: its money is back on the balance, so it is not reconciled as Matched or Exception.'
          : 'Only paid Live payouts are reconciled.',
      );
    }
    // Unreconciled, or already settled with this same result (written again); never flipped.
    if (!reconciliationMachine.canTransition(payout.reconciliation_status, result)) {
      throw conflict('PAYOUT_ALREADY_RECONCILED', `The payout is already ${payout.reconciliation_status}.`);
    }
    const after = await updateReconciliation(
      tx,
      payoutId,
      reconciliationMachine.transition(payout.reconciliation_status, result),
    );
    await auditPayoutAction(tx, actor, payout, `payout.reconcile_${result}`, {
      before: { reconciliation_status: payout.reconciliation_status },
      after: { reconciliation_status: result },
    });
    return after;
  });
}

/** A paid transfer came back (provider notice or operator): the payout is returned and the money goes back to the balance. */
export async function markPayoutReturned(
  db: Db,
  payoutId: string,
  returnReference: string,
  actor: Actor | null = null,
) {
  return db.transaction((tx) => returnPayoutIn(tx, payoutId, returnReference, actor));
}

/**
 * The return inside the caller's transaction (an operator's, approved by a second operator: src/ops/approvals.ts).
 * audit: what the audit row adds (the request and its reason).
 */
export async function returnPayoutIn(
  tx: Queryable,
  payoutId: string,
  returnReference: string,
  actor: Actor | null,
  audited: Record<string, unknown> = {},
) {
  const payout = await findPayoutById(tx, payoutId, true);
  if (!payout) throw errors.notFound('Payout');
  if (payout.status === 'returned') return payout;
  if (payout.status !== 'paid')
    throw conflict('PAYOUT_NOT_RETURNABLE', `The payout is ${payout.status}; only paid payouts can be returned.`);
  const after = await movePayout(tx, payout, 'returned', { return_reference: returnReference });
  await auditPayoutAction(tx, actor, payout, 'payout.returned', {
    before: { status: 'paid' },
    after: { status: 'returned', return_reference: returnReference, ...audited },
  });
  return after;
}

/** A payout by its id, for an operator's request about it (null: none). */
export const payoutForOperator = (db: Queryable, payoutId: string) => findPayoutById(db, payoutId);

/**
 * Test mode: the simulator moves a Test payout on (POST /api/v1/test/payouts/{id}/simulate) through the
 * payout table, by movePayout, with the money and the event a Live payout's provider outcome or return
 * brings: processing (as an approval does), paid (the hold posted), failed (amount and fee released),
 * returned (the paid amount and fee back to the balance). A move the table does not allow is refused (409).
 */
export async function simulateTestPayout(
  tx: Queryable,
  principal: Pick<ApiPrincipal, 'merchantId' | 'environment'>,
  id: string,
  outcome: TestPayoutSimulation,
): Promise<PayoutRow> {
  if (principal.environment !== 'test') throw errors.forbidden('Payouts can be simulated with Test keys only.');
  const payout = await findPayout(tx, principal.merchantId, principal.environment, id, true);
  if (!payout) throw errors.notFound('Payout');
  if (!payoutMachine.canTransition(payout.status, outcome)) {
    const next = payoutMachine.transitions[payout.status];
    throw conflict(
      'PAYOUT_TRANSITION_NOT_ALLOWED',
      `The payout is ${payout.status}; it ${next.length > 0 ? `can only move to ${next.join(' or ')}` : 'cannot move any more'}, not to ${outcome}.`,
    );
  }
  switch (outcome) {
    case 'processing':
      return movePayout(tx, payout, 'processing', { processing_step: 'recipient_check', next_step_at: null });
    case 'paid':
      return movePayout(tx, payout, 'paid', {
        bank_reference: testBankReference(),
        processing_step: null,
        next_step_at: null,
        paid: true,
      });
    case 'failed':
      return movePayout(tx, payout, 'failed', {
        failure_reason: 'simulated failure (Test mode)',
        processing_step: null,
        next_step_at: null,
      });
    case 'returned':
      return movePayout(tx, payout, 'returned', { return_reference: testReturnReference() });
  }
}
