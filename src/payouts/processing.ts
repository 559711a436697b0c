// Live processing (DESIGN §3 Payouts): a worker claims due payouts and moves each one step on, the
// recipient check, then the transfer, then waiting for its result. No transaction spans a provider call.
import type { Db, Queryable } from '../db/index.ts';
import type { PayoutForRail, PayoutRail, TransferOutcome } from '../rails/payouts.ts';
import { movePayout } from './lifecycle.ts';
import { advanceProcessingStep, duePayoutIds, findPayoutById, holdForClaim, updatePayout, type PayoutRow } from './payout-store.ts';
import { findRecipient, setRecipientVerification } from './recipient-store.ts';

/** How long a claimed payout is pushed back while a worker advances it (another worker skips it meanwhile). */
const CLAIM_HOLD_S = 60;
/** A transfer the provider reports pending is asked about again after this long. */
const PAYOUT_STATUS_POLL_MS = 5_000;
/** Live payouts a worker pass claims at most. */
const DUE_PAYOUTS_PER_PASS_MAX = 20;

async function railPayout(db: Queryable, payout: PayoutRow): Promise<PayoutForRail> {
  const recipient = (await findRecipient(db, payout.merchant_id, payout.environment, payout.recipient_id))!;
  return {
    payoutId: payout.id,
    reference: payout.reference,
    providerReference: null,
    amountMinor: payout.amount_minor,
    currency: payout.currency,
    recipient: {
      accountType: recipient.account_type,
      bankCode: recipient.bank_code,
      accountNumber: recipient.account_number,
      network: recipient.network,
      phone: recipient.phone,
      accountName: recipient.account_name,
    },
  };
}

async function applyTransferOutcome(db: Db, payoutId: string, outcome: TransferOutcome): Promise<void> {
  await db.transaction(async (tx) => {
    const payout = (await findPayoutById(tx, payoutId, true))!;
    if (payout.status !== 'processing') return;
    switch (outcome.outcome) {
      case 'paid':
        await movePayout(tx, payout, 'paid', { bank_reference: outcome.bankReference, processing_step: null, next_step_at: null, paid: true });
        return;
      case 'returned':
        await movePayout(tx, payout, 'paid', { bank_reference: outcome.bankReference, processing_step: null, next_step_at: null, paid: true });
        await movePayout(tx, (await findPayoutById(tx, payoutId))!, 'returned', { return_reference: outcome.returnReference });
        return;
      case 'failed':
        await movePayout(tx, payout, 'failed', { failure_reason: outcome.reason, processing_step: null, next_step_at: null });
        return;
      case 'pending':
        await updatePayout(tx, payoutId, { bank_reference: outcome.bankReference, next_step_at: new Date(Date.now() + PAYOUT_STATUS_POLL_MS) });
        return;
      case 'unknown':
        // The provider never saw the transfer (lost before it arrived): send it again; transfer() is idempotent by payout id.
        await updatePayout(tx, payoutId, { processing_step: 'transfer', next_step_at: new Date() });
    }
  });
}

/** One step of one Live payout: recipient check, then transfer, then waiting for the result. No transaction spans a provider call. */
async function processPayout(db: Db, rail: PayoutRail, payoutId: string): Promise<void> {
  const payout = await findPayoutById(db, payoutId);
  if (!payout || payout.status !== 'processing') return;
  const forRail = await railPayout(db, payout);
  if (payout.processing_step === 'recipient_check') {
    const check = await rail.checkRecipient(forRail);
    await db.transaction(async (tx) => {
      const current = (await findPayoutById(tx, payoutId, true))!;
      if (current.status !== 'processing' || current.processing_step !== 'recipient_check') return; // cancelled meanwhile
      if (!check.ok) {
        await setRecipientVerification(tx, current.recipient_id, 'rejected', check.reason);
        await movePayout(tx, current, 'failed', { failure_reason: `recipient rejected: ${check.reason}`, processing_step: null, next_step_at: null });
        return;
      }
      await setRecipientVerification(tx, current.recipient_id, 'verified', null);
      // The intent to transfer is recorded before the call: from here the payout can no longer be cancelled.
      await updatePayout(tx, payoutId, { processing_step: 'transfer', next_step_at: new Date() });
    });
    return;
  }
  if (payout.processing_step === 'transfer') {
    // Only one processor sends the transfer: the step moves on before the call, if it is still at transfer.
    if (!(await advanceProcessingStep(db, payoutId, 'transfer', 'awaiting_result', new Date(Date.now() + CLAIM_HOLD_S * 1000)))) return;
    await applyTransferOutcome(db, payoutId, await rail.transfer(forRail));
    return;
  }
  await applyTransferOutcome(db, payoutId, await rail.status(forRail));
}

/** Worker pass: claims due Live payouts (SKIP LOCKED, pushed back while worked on) and advances each one step. */
export async function processDuePayouts(db: Db, rail: PayoutRail | null, log?: { warn(obj: object, msg: string): void }): Promise<number> {
  if (!rail) return 0;
  const ids = await db.transaction(async (tx) => {
    const due = await duePayoutIds(tx, DUE_PAYOUTS_PER_PASS_MAX);
    for (const { id } of due) await holdForClaim(tx, id, CLAIM_HOLD_S);
    return due.map((row) => row.id);
  });
  for (const id of ids) {
    try {
      await processPayout(db, rail, id);
    } catch (error) {
      log?.warn({ err: error, payout_id: id }, 'payout step failed; it will be retried');
    }
  }
  return ids.length;
}
