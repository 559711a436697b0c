// The banks payouts go to, as payouts read them: which are active (a recipient may name one), with their
// codes for the capabilities. The operators keep the list (src/ops: adding banks and branches, activating them).
import type { Queryable } from '../db/index.ts';

export async function bankIsActive(db: Queryable, bankId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM banks WHERE id = $1 AND active', [bankId]);
  return rows.length > 0;
}

/** Active banks with their codes (the payout capabilities). */
export const listActiveBanksWithCode = (db: Queryable) =>
  db.query<{ id: string; name: string; code: string }>('SELECT id, name, code FROM banks WHERE active ORDER BY name');

/** Active banks for a recipient's bank choice in the dashboard. */
export const listActiveBanks = (db: Queryable) =>
  db.query<{ id: string; name: string }>('SELECT id, name FROM banks WHERE active ORDER BY name');
