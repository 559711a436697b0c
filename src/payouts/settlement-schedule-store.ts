// A merchant's settlement schedule per environment (issue 34, migration 039's settlement_schedules) and its
// Test clearing switch (clearing_settings.test_clearing): their SQL.
import type { Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';
import type { SettlementInterval, Weekday } from '../lib/accra-calendar.ts';
import type { Environment } from '../lib/environment.ts';

/** The longest paused_reason the table keeps (its CHECK). */
export const PAUSED_REASON_LENGTH_MAX = 500;

/** A settlement_schedules row, every column. */
export interface ScheduleRow {
  merchant_id: string;
  environment: Environment;
  interval: SettlementInterval;
  weekly_anchor: Weekday;
  monthly_anchor: number;
  time_of_day: string;
  /** bigint: the driver may hand it over as a string; scheduleRow makes it a number. */
  minimum_minor: number;
  recipient_id: string | null;
  recipient_active_at: Date | null;
  next_run_at: Date | null;
  clock_at: Date | null;
  last_period_end: Date | null;
  paused_at: Date | null;
  paused_reason: string | null;
  paused_payout_id: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** What a save writes: the rule, the recipient and when it starts receiving, and the next run. */
export type ScheduleFields = Pick<
  ScheduleRow,
  | 'interval'
  | 'weekly_anchor'
  | 'monthly_anchor'
  | 'time_of_day'
  | 'minimum_minor'
  | 'recipient_id'
  | 'recipient_active_at'
  | 'next_run_at'
>;

const COLUMNS = `merchant_id, environment, interval, weekly_anchor, monthly_anchor, time_of_day, minimum_minor, recipient_id,
  recipient_active_at, next_run_at, clock_at, last_period_end, paused_at, paused_reason, paused_payout_id, version,
  created_at, updated_at`;

const scheduleRow = (row: ScheduleRow | null): ScheduleRow | null =>
  row ? { ...row, minimum_minor: Number(row.minimum_minor), version: Number(row.version) } : null;

/** The merchant's schedule in this environment, or null when none was saved yet. */
export async function findSchedule(
  db: Queryable,
  merchantId: string,
  environment: Environment,
): Promise<ScheduleRow | null> {
  return scheduleRow(
    await firstRow(
      db.query<ScheduleRow>(
        `SELECT ${COLUMNS} FROM settlement_schedules WHERE merchant_id = $1 AND environment = $2`,
        [merchantId, environment],
        'settlement_schedule',
      ),
    ),
  );
}

/**
 * The schedule locked for a save (FOR UPDATE), made first with the defaults when there is none, so two saves at
 * once take turns on one row and neither loses the other's change. `created`: the row was made by this call.
 */
export async function lockSchedule(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
): Promise<{ row: ScheduleRow; created: boolean }> {
  const inserted = await tx.query<{ merchant_id: string }>(
    `INSERT INTO settlement_schedules (merchant_id, environment, interval) VALUES ($1, $2, 'manual')
     ON CONFLICT (merchant_id, environment) DO NOTHING RETURNING merchant_id`,
    [merchantId, environment],
  );
  const row = scheduleRow(
    await firstRow(
      tx.query<ScheduleRow>(
        `SELECT ${COLUMNS} FROM settlement_schedules WHERE merchant_id = $1 AND environment = $2 FOR UPDATE`,
        [merchantId, environment],
      ),
    ),
  );
  if (!row) throw new Error(`assertion failed: the settlement schedule of ${merchantId} (${environment}) exists`);
  return { row, created: inserted.length > 0 };
}

/**
 * Writes a save over the locked row: the fields, the pause cleared (saving is how a merchant resumes), the version
 * moved on (kept at 1 for the row lockSchedule just made) and updated_at.
 */
export async function saveSchedule(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  fields: ScheduleFields,
  created: boolean,
): Promise<ScheduleRow> {
  const row = scheduleRow(
    await firstRow(
      tx.query<ScheduleRow>(
        `UPDATE settlement_schedules SET interval = $3, weekly_anchor = $4, monthly_anchor = $5, time_of_day = $6,
           minimum_minor = $7, recipient_id = $8, recipient_active_at = $9, next_run_at = $10,
           paused_at = NULL, paused_reason = NULL, paused_payout_id = NULL,
           version = CASE WHEN $11::boolean THEN version ELSE version + 1 END, updated_at = now()
         WHERE merchant_id = $1 AND environment = $2 RETURNING ${COLUMNS}`,
        [
          merchantId,
          environment,
          fields.interval,
          fields.weekly_anchor,
          fields.monthly_anchor,
          fields.time_of_day,
          fields.minimum_minor,
          fields.recipient_id,
          fields.recipient_active_at,
          fields.next_run_at,
          created,
        ],
      ),
    ),
  );
  if (!row) throw new Error(`assertion failed: the settlement schedule of ${merchantId} (${environment}) was locked`);
  return row;
}

/**
 * Pauses the schedule after a settlement failed or was returned (the settlement run calls it, in the transaction
 * that records the failure): no next run until the merchant saves the schedule again. `reason` is cut to the
 * column's 500 characters. A merchant without a schedule row has nothing to pause.
 */
export async function pauseSchedule(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  reason: string,
  payoutId: string | null,
): Promise<void> {
  await tx.query(
    `UPDATE settlement_schedules SET paused_at = now(), paused_reason = $3, paused_payout_id = $4, next_run_at = NULL,
       version = version + 1, updated_at = now()
     WHERE merchant_id = $1 AND environment = $2`,
    [merchantId, environment, reason.slice(0, PAUSED_REASON_LENGTH_MAX), payoutId],
  );
}
