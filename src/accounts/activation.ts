// A merchant's activation and suspension, the one way they change (issue 33): the Go-Live review's
// decisions, the CLI's activate/suspend/reinstate and a submitted application all come through here, so
// every change is locked, checked against the table (activation-model.ts), audited, announced to the
// merchant (an account.updated event) and e-mailed to its owner in the same transaction.
import { auditMerchant, type Actor } from '../audit/log.ts';
import type { Queryable } from '../db/index.ts';
import { SikaError } from '../lib/errors.ts';
import { activationMachine, type ActivationStatus } from './activation-model.ts';
import * as store from './activation-store.ts';

export interface ActivationChange {
  merchantId: string;
  to: ActivationStatus;
  actor: Actor;
  /** Shown to the merchant: why it was rejected, or what to change. */
  reason?: string | null;
  /**
   * The status the deciding person saw; when the merchant has moved on since (another operator decided
   * first), the change is refused with ACTIVATION_DECIDED rather than applied over theirs.
   */
  expectedFrom?: ActivationStatus;
}

/**
 * Changes a merchant's activation status in tx (the merchant row locked first). Answers the status before.
 * NOT_FOUND for no such merchant; ACTIVATION_DECIDED when expectedFrom no longer holds or the table does not allow it.
 */
export async function changeActivation(tx: Queryable, change: ActivationChange): Promise<ActivationStatus> {
  const row = await store.lockActivation(tx, change.merchantId);
  if (!row) throw new SikaError('NOT_FOUND', 'No such merchant.');
  const from = row.activation_status;
  if (change.expectedFrom !== undefined && change.expectedFrom !== from)
    throw new SikaError('ACTIVATION_DECIDED', `The merchant's activation is now ${from}; nothing was changed.`);
  if (!activationMachine.canTransition(from, change.to))
    throw new SikaError('ACTIVATION_DECIDED', `The merchant's activation cannot move from ${from} to ${change.to}.`);
  await store.updateActivationStatus(tx, change.merchantId, activationMachine.transition(from, change.to));
  await auditMerchant(tx, change.actor, change.merchantId, {
    action: `merchant.activation.${change.to}`,
    before: { activation_status: from },
    after: { activation_status: change.to, reason: change.reason ?? null },
  });
  return from;
}
