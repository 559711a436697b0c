// The SQL of clearing (issue 34, migration 039): a merchant's clearing settings and reserve
// (clearing_settings), and the payment credits waiting to clear (ledger_clearings).
import type { Queryable } from '../db/index.ts';
import type { Environment } from '../lib/environment.ts';

export interface ClearingSettingsRow {
  merchant_id: string;
  environment: Environment;
  /** Per rail, business days (an operator's overrides of the deployment's defaults). */
  clearing_days: Record<string, number>;
  test_clearing: boolean;
  reserve_bp: number;
  reserve_days: number;
  updated_at: Date;
}

export async function findClearingSettings(
  db: Queryable,
  merchantId: string,
  environment: Environment,
): Promise<ClearingSettingsRow | null> {
  const rows = await db.query<ClearingSettingsRow>(
    'SELECT * FROM clearing_settings WHERE merchant_id = $1 AND environment = $2',
    [merchantId, environment],
    'clearing_settings_find',
  );
  return rows[0] ?? null;
}

/** Writes the given fields (others keep their value, or the defaults on a first write); returns the row. */
export async function upsertClearingSettings(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  change: Partial<Pick<ClearingSettingsRow, 'clearing_days' | 'test_clearing' | 'reserve_bp' | 'reserve_days'>>,
): Promise<ClearingSettingsRow> {
  const rows = await tx.query<ClearingSettingsRow>(
    `INSERT INTO clearing_settings (merchant_id, environment, clearing_days, test_clearing, reserve_bp, reserve_days)
     VALUES ($1, $2, coalesce($3::jsonb, '{}'::jsonb), coalesce($4, false), coalesce($5, 0), coalesce($6, 0))
     ON CONFLICT (merchant_id, environment) DO UPDATE SET
       clearing_days = coalesce($3::jsonb, clearing_settings.clearing_days),
       test_clearing = coalesce($4, clearing_settings.test_clearing),
       reserve_bp = coalesce($5, clearing_settings.reserve_bp),
       reserve_days = coalesce($6, clearing_settings.reserve_days),
       updated_at = now()
     RETURNING *`,
    [
      merchantId,
      environment,
      change.clearing_days === undefined ? null : JSON.stringify(change.clearing_days),
      change.test_clearing ?? null,
      change.reserve_bp ?? null,
      change.reserve_days ?? null,
    ],
  );
  return rows[0]!;
}

export interface ClearingRow {
  entry_id: string;
  merchant_id: string;
  environment: Environment;
  payment_id: string;
  rail: string;
  amount_minor: number;
  available_on: Date;
  reserve_minor: number;
  reserve_release_on: Date | null;
  cleared_at: Date | null;
  reversed_at: Date | null;
  reserve_released_at: Date | null;
}

/** A credit waiting to clear, written with the credit. */
export async function insertClearing(
  tx: Queryable,
  row: Pick<
    ClearingRow,
    | 'entry_id'
    | 'merchant_id'
    | 'environment'
    | 'payment_id'
    | 'rail'
    | 'amount_minor'
    | 'available_on'
    | 'reserve_minor'
    | 'reserve_release_on'
  >,
): Promise<void> {
  await tx.query(
    `INSERT INTO ledger_clearings (entry_id, merchant_id, environment, payment_id, rail, amount_minor, available_on, reserve_minor, reserve_release_on)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      row.entry_id,
      row.merchant_id,
      row.environment,
      row.payment_id,
      row.rail,
      row.amount_minor,
      row.available_on,
      row.reserve_minor,
      row.reserve_release_on,
    ],
    'ledger_clearing_insert',
  );
}

/** The clearing row of a credit entry (read after the merchant's balance accounts are locked). */
export async function clearingOf(tx: Queryable, creditEntryId: string): Promise<ClearingRow | null> {
  const rows = await tx.query<ClearingRow>('SELECT * FROM ledger_clearings WHERE entry_id = $1', [creditEntryId]);
  return rows[0] ?? null;
}

export async function markReversed(tx: Queryable, creditEntryId: string): Promise<void> {
  await tx.query('UPDATE ledger_clearings SET reversed_at = now() WHERE entry_id = $1 AND reversed_at IS NULL', [
    creditEntryId,
  ]);
}

/** Credits due to clear by asOf, oldest first (read under the merchant's balance locks). */
export function dueClearings(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  asOf: Date,
  limit: number,
): Promise<ClearingRow[]> {
  return tx.query<ClearingRow>(
    `SELECT * FROM ledger_clearings
      WHERE merchant_id = $1 AND environment = $2 AND cleared_at IS NULL AND reversed_at IS NULL AND available_on <= $3
      ORDER BY available_on, entry_id LIMIT $4`,
    [merchantId, environment, asOf, limit],
    'ledger_due_clearings',
  );
}

/** Reserves due to be released by asOf. */
export function dueReleases(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  asOf: Date,
  limit: number,
): Promise<ClearingRow[]> {
  return tx.query<ClearingRow>(
    `SELECT * FROM ledger_clearings
      WHERE merchant_id = $1 AND environment = $2 AND cleared_at IS NOT NULL AND reserve_minor > 0
        AND reserve_released_at IS NULL AND reserve_release_on <= $3
      ORDER BY reserve_release_on, entry_id LIMIT $4`,
    [merchantId, environment, asOf, limit],
    'ledger_due_releases',
  );
}

/** Marks credits cleared, or their reserves released (each once: a row already marked keeps its time). */
export async function markDone(
  tx: Queryable,
  column: 'cleared_at' | 'reserve_released_at',
  entryIds: readonly string[],
): Promise<void> {
  if (entryIds.length === 0) return;
  await tx.query(
    `UPDATE ledger_clearings SET ${column} = now() WHERE entry_id = ANY($1::uuid[]) AND ${column} IS NULL`,
    [entryIds],
  );
}

/** Merchants and environments with a credit to clear or a reserve to release by asOf (the worker's list). */
export function ownersWithDueClearings(db: Queryable, asOf: Date, limit: number) {
  return db.query<{ merchant_id: string; environment: Environment }>(
    `SELECT merchant_id, environment FROM ledger_clearings
      WHERE cleared_at IS NULL AND reversed_at IS NULL AND available_on <= $1
     UNION
     SELECT merchant_id, environment FROM ledger_clearings
      WHERE cleared_at IS NOT NULL AND reserve_minor > 0 AND reserve_released_at IS NULL AND reserve_release_on <= $1
     LIMIT $2`,
    [asOf, limit],
    'ledger_clearing_owners',
  );
}
