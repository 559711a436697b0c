// The payout settings of a merchant's environment (access, pause, limits): its SQL.
import type { Environment } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { DEFAULT_DAILY_LIMIT_MINOR, DEFAULT_PAYOUT_LIMIT_MINOR } from './model.ts';

export interface SettingsRow {
  merchant_id: string;
  environment: Environment;
  payout_access: boolean;
  paused: boolean;
  payout_limit_minor: number;
  daily_limit_minor: number;
}

/** The settings row, created with defaults on first use (payout access on in Test, off in Live); locked when asked. */
export async function settingsFor(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  lock = false,
): Promise<SettingsRow> {
  const select = () =>
    tx.query<SettingsRow>(
      `SELECT merchant_id, environment, payout_access, paused, payout_limit_minor, daily_limit_minor
         FROM payout_settings WHERE merchant_id = $1 AND environment = $2${lock ? ' FOR UPDATE' : ''}`,
      [merchantId, environment],
      lock ? 'payout_settings_lock' : 'payout_settings',
    );
  const [row] = await select();
  if (row) return row;
  await tx.query(
    `INSERT INTO payout_settings (merchant_id, environment, payout_access, payout_limit_minor, daily_limit_minor)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    [merchantId, environment, environment === 'test', DEFAULT_PAYOUT_LIMIT_MINOR, DEFAULT_DAILY_LIMIT_MINOR],
  );
  return (await select())[0]!;
}

export const updateSettings = (
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  change: Partial<Pick<SettingsRow, 'payout_access' | 'paused' | 'payout_limit_minor' | 'daily_limit_minor'>>,
) =>
  tx.query(
    `UPDATE payout_settings SET payout_access = coalesce($3, payout_access), paused = coalesce($4, paused),
            payout_limit_minor = coalesce($5, payout_limit_minor), daily_limit_minor = coalesce($6, daily_limit_minor), updated_at = now()
      WHERE merchant_id = $1 AND environment = $2`,
    [
      merchantId,
      environment,
      change.payout_access ?? null,
      change.paused ?? null,
      change.payout_limit_minor ?? null,
      change.daily_limit_minor ?? null,
    ],
  );
