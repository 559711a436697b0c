// SQL for a merchant's activation and suspension (migration 036).
import type { Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';
import { activationMachine, type ActivationStatus } from './activation-model.ts';
import type { Transition } from '../lib/state-machine.ts';

export interface ActivationRow {
  id: string;
  name: string;
  email: string;
  activation_status: ActivationStatus;
  activated_at: Date | null;
  suspended_at: Date | null;
  suspension_reason: string | null;
  created_at: Date;
}

const COLUMNS = 'id, name, email, activation_status, activated_at, suspended_at, suspension_reason, created_at';

export const findActivation = async (db: Queryable, merchantId: string): Promise<ActivationRow | null> =>
  firstRow(db.query<ActivationRow>(`SELECT ${COLUMNS} FROM merchants WHERE id = $1`, [merchantId]));

/** The row, locked for the rest of tx: two operators deciding at once are served one after the other. */
export const lockActivation = async (tx: Queryable, merchantId: string): Promise<ActivationRow | null> =>
  firstRow(tx.query<ActivationRow>(`SELECT ${COLUMNS} FROM merchants WHERE id = $1 FOR UPDATE`, [merchantId]));

/** Moves the status by a Transition the table issued; activated_at is set the first time it is approved. */
export async function updateActivationStatus(
  tx: Queryable,
  merchantId: string,
  transition: Transition<ActivationStatus>,
): Promise<void> {
  const { from, to } = activationMachine.check(transition);
  const rows = await tx.query(
    `UPDATE merchants SET activation_status = $3,
       activated_at = CASE WHEN $3 = 'approved' THEN coalesce(activated_at, now()) ELSE activated_at END
     WHERE id = $1 AND activation_status = $2 RETURNING id`,
    [merchantId, from, to],
  );
  if (rows.length !== 1) throw new Error(`assertion failed: merchant ${merchantId} was not ${from}`);
}

export async function updateSuspension(
  tx: Queryable,
  merchantId: string,
  suspension: { reason: string } | null,
): Promise<void> {
  await tx.query(
    `UPDATE merchants SET suspended_at = CASE WHEN $2 THEN now() END, suspension_reason = $3 WHERE id = $1`,
    [merchantId, suspension !== null, suspension?.reason ?? null],
  );
}
