// The payout settings of a merchant's environment, as Sika sets them (the CLI; the operator console
// changes them with an audit row, ops/service.ts changePayoutSettings).
import type { Environment } from '../accounts/model.ts';
import type { Db } from '../db/index.ts';
import { settingsFor, updateSettings } from './settings-store.ts';

export async function setPayoutAccess(db: Db, merchantId: string, environment: Environment, change: Parameters<typeof updateSettings>[3]) {
  return db.transaction(async (tx) => {
    await settingsFor(tx, merchantId, environment, true);
    await updateSettings(tx, merchantId, environment, change);
    return settingsFor(tx, merchantId, environment);
  });
}
