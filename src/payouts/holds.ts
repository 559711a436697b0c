// Operator holds on Live payouts (issue 30): an operator holds a payout that has not been sent to its
// provider yet, with a reason, and releases it later, with a reason; each audited in its transaction. A hold
// is a flag on the payout (held_at, held_by, hold_reason; migration 032), not a payout status: the merchant's
// API shape and SPEC's payout statuses stay as they are, and the merchant can still cancel a held payout.
// The Live worker never claims a held payout (payout-store.ts duePayoutIds) and never sends its transfer
// (advanceProcessingStep moves to awaiting_result only while not held), so no provider call is made for it.
// Race with the worker: the hold locks the payout row (FOR UPDATE) and is refused once the worker has moved
// it to awaiting_result (the transfer is sent or on its way); a worker that reaches the transfer after a hold
// committed finds it held and sends nothing. Releasing needs no second operator: the payout was approved
// already and only goes on as it would have.
import { audit, type Actor } from '../audit/log.ts';
import type { Db } from '../db/index.ts';
import { errors } from '../lib/errors.ts';
import { canHold, HOLD_REASON_LENGTH_MAX } from './model.ts';
import { findPayoutById, setPayoutHold, type PayoutRow } from './payout-store.ts';

const { conflict } = errors;

function reasonOf(reason: string, what: 'hold' | 'release'): string {
  const trimmed = reason.trim();
  if (!trimmed) throw errors.invalidArgument(`Give a reason to ${what} the payout.`);
  if (trimmed.length > HOLD_REASON_LENGTH_MAX)
    throw errors.invalidArgument(`The reason is at most ${HOLD_REASON_LENGTH_MAX} characters.`);
  return trimmed;
}

const holdOf = (payout: PayoutRow) => ({
  held_at: payout.held_at?.toISOString() ?? null,
  held_by: payout.held_by,
  hold_reason: payout.hold_reason,
});

/** An operator holds a Live payout not yet sent to its provider (refused with PAYOUT_NOT_HOLDABLE otherwise). */
export async function holdPayout(db: Db, actor: Actor, payoutId: string, reason: string): Promise<PayoutRow> {
  const why = reasonOf(reason, 'hold');
  return db.transaction(async (tx) => {
    const payout = await findPayoutById(tx, payoutId, true);
    if (!payout) throw errors.notFound('Payout');
    if (payout.environment !== 'live')
      throw conflict('PAYOUT_NOT_HOLDABLE', 'Only Live payouts are held: a Test payout sends no money.');
    if (payout.held_at)
      throw conflict('PAYOUT_NOT_HOLDABLE', `The payout ${payout.reference} is already held by ${payout.held_by}.`);
    if (!canHold(payout.status, payout.processing_step)) {
      throw conflict(
        'PAYOUT_NOT_HOLDABLE',
        payout.status === 'processing'
          ? `The transfer of payout ${payout.reference} was already sent to the provider; it can no longer be held.`
          : `The payout ${payout.reference} is ${payout.status}; only a payout not yet sent can be held.`,
      );
    }
    const after = await setPayoutHold(tx, payoutId, { by: actor.email ?? actor.id, reason: why });
    await audit(tx, {
      actor,
      merchantId: payout.merchant_id,
      action: 'payout.hold',
      objectType: 'payout',
      objectId: payoutId,
      before: { status: payout.status, processing_step: payout.processing_step, held: false },
      after: { status: after.status, processing_step: after.processing_step, held: true, ...holdOf(after) },
    });
    return after;
  });
}

/** An operator releases a held payout that is still open: the worker takes it up again at its next pass. */
export async function releasePayout(db: Db, actor: Actor, payoutId: string, reason: string): Promise<PayoutRow> {
  const why = reasonOf(reason, 'release');
  return db.transaction(async (tx) => {
    const payout = await findPayoutById(tx, payoutId, true);
    if (!payout) throw errors.notFound('Payout');
    if (!payout.held_at) throw conflict('PAYOUT_NOT_HELD', `The payout ${payout.reference} is not held.`);
    if (payout.status !== 'requested' && payout.status !== 'processing') {
      throw conflict(
        'PAYOUT_NOT_HELD',
        `The payout ${payout.reference} is ${payout.status}; there is no hold left to release.`,
      );
    }
    const after = await setPayoutHold(tx, payoutId, null);
    await audit(tx, {
      actor,
      merchantId: payout.merchant_id,
      action: 'payout.release',
      objectType: 'payout',
      objectId: payoutId,
      before: { status: payout.status, held: true, ...holdOf(payout) },
      after: { status: after.status, held: false, release_reason: why },
    });
    return after;
  });
}
