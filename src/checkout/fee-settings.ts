// A merchant's checkout fee schedule: each rail's default fee (the registry's) unless the merchant's own
// row overrides it. The owner chooses who bears each rail's fee; the rates stay the schedule's (audited).
import { audit, type Actor } from '../audit/log.ts';
import type { Environment } from '../lib/environment.ts';
import type { Db, Queryable } from '../db/index.ts';
import { railIds, type Rail } from '../rails/registry.ts';
import { defaultFees, type Bearer, type RailFee } from './fees.ts';
import * as store from './store.ts';

export async function feeSchedule(
  db: Queryable,
  merchantId: string,
  environment: Environment,
): Promise<Record<Rail, RailFee>> {
  const schedule = defaultFees();
  for (const row of await store.findFeeOverrides(db, merchantId, environment)) {
    schedule[row.rail as Rail] = {
      bearer: row.bearer,
      percentBps: row.percent_bps,
      flatMinor: row.flat_minor,
      capMinor: row.cap_minor,
    };
  }
  return schedule;
}

export async function setFeeBearers(
  db: Db,
  actor: Actor,
  merchantId: string,
  environment: Environment,
  bearers: Partial<Record<Rail, Bearer>>,
) {
  return db.transaction(async (tx) => {
    const before = await feeSchedule(tx, merchantId, environment);
    for (const rail of railIds()) {
      const bearer = bearers[rail];
      if (!bearer) continue;
      const fee = before[rail];
      await store.upsertFeeBearer(tx, {
        merchantId,
        environment,
        rail,
        bearer,
        percentBps: fee.percentBps,
        flatMinor: fee.flatMinor,
        capMinor: fee.capMinor,
      });
    }
    const after = await feeSchedule(tx, merchantId, environment);
    await audit(tx, {
      actor,
      merchantId,
      action: 'fees.update',
      objectType: 'fee_schedule',
      objectId: `${merchantId}:${environment}`,
      before,
      after,
    });
    return after;
  });
}
