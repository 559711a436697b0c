// An operator's clearing controls of one merchant (issue 34, items 1 and 5): the clearing time per rail and
// environment, overriding the deployment's defaults (CLEARING_DAYS), and the rolling reserve (a percentage of
// each credit held for a number of days). Every change is audited with its before and after in its own
// transaction; only the operator role may make one (the rule of payout settings: not tellers, not compliance).
// The rails are the caller's (src/ops does not import src/rails): the console hands in the registry's ids.
import { findAccount } from '../accounts/activation.ts';
import { audit, type Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import {
  CLEARING_DAYS_MAX,
  configureClearingDefaults,
  effectiveClearing,
  upsertClearingSettings,
  type EffectiveClearing,
} from '../ledger/clearing.ts';
import type { Environment } from '../lib/environment.ts';
import { errors } from '../lib/errors.ts';
import { operatorRole } from './approvals-store.ts';

// The `sika` command credits payments too (statements import) and may not import src/ledger: it hands its
// CLEARING_DAYS in through here.
export { configureClearingDefaults };
export type { EffectiveClearing };
/** An operator's override of a rail's clearing time: business days in Africa/Accra, 0 = at once. */
export { CLEARING_DAYS_MAX };
/** The rolling reserve: basis points of each credit (10,000 = all of it). */
export const RESERVE_BP_MAX = 10_000;
/** How long a reserve is held, in calendar days. */
export const RESERVE_DAYS_MIN = 1;
export const RESERVE_DAYS_MAX = 365;

/** What an operator sets for one environment: the overrides per rail (absent: the default) and the reserve. */
export interface ClearingChange {
  /** Business days per rail the operator overrides; a rail left out follows the deployment's default. */
  overrides: Record<string, number>;
  /** Basis points of each credit held; 0 turns the reserve off. */
  reserve_bp: number;
  /** Calendar days a reserve is held (1-365); ignored when reserve_bp is 0. */
  reserve_days: number;
}

/** The audited values of one merchant's clearing settings in one environment. */
interface ClearingValues {
  clearing_days: Record<string, number>;
  reserve_bp: number;
  reserve_days: number;
}

/** One merchant's effective clearing in Test and in Live; null when there is no such merchant. */
export async function merchantClearing(
  db: Queryable,
  merchantId: string,
): Promise<Record<Environment, EffectiveClearing> | null> {
  if (!(await findAccount(db, merchantId))) return null;
  const [test, live] = await Promise.all([
    effectiveClearing(db, merchantId, 'test'),
    effectiveClearing(db, merchantId, 'live'),
  ]);
  return { test, live };
}

const sorted = (days: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(days).sort(([a], [b]) => a.localeCompare(b)));

const sameValues = (a: ClearingValues, b: ClearingValues) =>
  JSON.stringify({ ...a, clearing_days: sorted(a.clearing_days) }) ===
  JSON.stringify({ ...b, clearing_days: sorted(b.clearing_days) });

/** The change as stored, or INVALID_ARGUMENT naming the field (days_<rail>, reserve_percent, reserve_days). */
function checkedChange(change: ClearingChange, rails: readonly string[]): ClearingValues {
  const clearing_days: Record<string, number> = {};
  for (const [rail, days] of Object.entries(change.overrides)) {
    if (!rails.includes(rail))
      throw errors.invalidArgument(`There is no rail "${rail.slice(0, 40)}"; the rails are ${rails.join(', ')}.`, [
        { field: `days_${rail.slice(0, 40)}`, message: 'is not a rail' },
      ]);
    if (!Number.isInteger(days) || days < 0 || days > CLEARING_DAYS_MAX)
      throw errors.invalidArgument(
        `The clearing time of ${rail} must be a whole number of business days from 0 to ${CLEARING_DAYS_MAX}.`,
        [{ field: `days_${rail}`, message: 'is out of range' }],
      );
    clearing_days[rail] = days;
  }
  if (!Number.isInteger(change.reserve_bp) || change.reserve_bp < 0 || change.reserve_bp > RESERVE_BP_MAX)
    throw errors.invalidArgument('The reserve must be a percentage from 0 to 100 with at most two decimals.', [
      { field: 'reserve_percent', message: 'is out of range' },
    ]);
  if (change.reserve_bp === 0) return { clearing_days, reserve_bp: 0, reserve_days: 0 };
  if (
    !Number.isInteger(change.reserve_days) ||
    change.reserve_days < RESERVE_DAYS_MIN ||
    change.reserve_days > RESERVE_DAYS_MAX
  )
    throw errors.invalidArgument(
      `A reserve is held for ${RESERVE_DAYS_MIN} to ${RESERVE_DAYS_MAX} days; give the reserve days (or a 0% reserve to turn it off).`,
      [{ field: 'reserve_days', message: 'is out of range' }],
    );
  return { clearing_days, reserve_bp: change.reserve_bp, reserve_days: change.reserve_days };
}

/**
 * Sets one merchant's clearing overrides and reserve in one environment, replacing the overrides as a whole
 * (a rail left out follows the default again). Audited (`clearing_settings.update`, before and after) in the
 * transaction of the change; an unchanged form writes nothing. Only an operator (not a teller, not compliance).
 */
export async function changeClearingSettings(
  db: Db,
  actor: Actor,
  merchantId: string,
  environment: Environment,
  change: ClearingChange,
  rails: readonly string[],
): Promise<{ changed: boolean; message: string }> {
  const after = checkedChange(change, rails);
  const name = environment === 'test' ? 'Test' : 'Live';
  return db.transaction(async (tx) => {
    if (!(await findAccount(tx, merchantId))) throw errors.notFound('Merchant');
    const role = actor.type === 'operator' ? await operatorRole(tx, actor.id) : null;
    if (role !== 'operator') throw errors.forbidden('Only an operator (not a teller) can change clearing settings.');
    // The row is written (or its updated_at touched) first so that it stays locked until this transaction ends:
    // two operators saving at once each audit the before the other left.
    const locked = await upsertClearingSettings(tx, merchantId, environment, {});
    const before: ClearingValues = {
      clearing_days: locked.clearing_days,
      reserve_bp: locked.reserve_bp,
      reserve_days: locked.reserve_days,
    };
    if (sameValues(before, after)) return { changed: false, message: `${name} clearing settings are unchanged.` };
    await upsertClearingSettings(tx, merchantId, environment, after);
    await audit(tx, {
      actor,
      merchantId,
      action: 'clearing_settings.update',
      objectType: 'clearing_settings',
      objectId: `${merchantId}:${environment}`,
      before,
      after,
    });
    return { changed: true, message: `${name} clearing settings saved.` };
  });
}
