// The payout settings of a merchant's environment, as Sika sets them (the CLI, audited as its user@host;
// the operator console changes them through ops/approvals.ts changePayoutSettings).
import type { Environment } from '../lib/environment.ts';
import { audit, type Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { settingsFor, updateSettings, type SettingsRow } from './settings-store.ts';

export type { SettingsRow } from './settings-store.ts';

/** The settings of a merchant's environment, created with the defaults on first use; locked (FOR UPDATE) when asked. */
export const payoutSettingsOf = (tx: Queryable, merchantId: string, environment: Environment, lock = false) =>
  settingsFor(tx, merchantId, environment, lock);

/** Changes the settings in the caller's transaction (the fields given; unaudited: the caller audits). */
export const updatePayoutSettings = (
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  change: Partial<Pick<SettingsRow, 'payout_access' | 'paused' | 'payout_limit_minor' | 'daily_limit_minor'>>,
) => updateSettings(tx, merchantId, environment, change);

/** The audit log's record of a change of a merchant's payout settings, in the caller's transaction. */
export const auditSettingsChange = (
  tx: Queryable,
  actor: Actor,
  merchantId: string,
  environment: Environment,
  before: unknown,
  after: unknown,
) =>
  audit(tx, {
    actor,
    merchantId,
    action: 'payout_settings.update',
    objectType: 'payout_settings',
    objectId: `${merchantId}:${environment}`,
    before,
    after,
  });

/** Sets a merchant's payout settings; with an actor (the CLI's), audited in the same transaction with before and after. */
export async function setPayoutAccess(
  db: Db,
  merchantId: string,
  environment: Environment,
  change: Parameters<typeof updateSettings>[3],
  actor: Actor | null = null,
) {
  return db.transaction(async (tx) => {
    const before = await settingsFor(tx, merchantId, environment, true);
    await updateSettings(tx, merchantId, environment, change);
    const after = await settingsFor(tx, merchantId, environment);
    if (actor) await auditSettingsChange(tx, actor, merchantId, environment, before, after);
    return after;
  });
}
