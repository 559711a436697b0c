// When a payment's money becomes available (issue 34): clearing times per rail and environment in
// Africa/Accra business days (the deployment's defaults, an operator's override per merchant), Test at
// once unless the merchant rehearses Live clearing, and the rolling reserve an operator may set. A
// credit that must wait goes to merchant_pending with a ledger_clearings row saying until when
// (service.ts creditPayment); clearDuePayments (service.ts) moves it to available when that time passes.
import type { Queryable } from '../db/index.ts';
import { clearingInstant } from '../lib/accra-calendar.ts';
import type { Environment } from '../lib/environment.ts';
import { findClearingSettings, upsertClearingSettings, type ClearingSettingsRow } from './clearing-store.ts';

export { findClearingSettings, upsertClearingSettings, type ClearingSettingsRow };

/** Live defaults, in business days: MoMo the next business day, card two; bank transfer and cash are credited only once matched. */
export const DEFAULT_LIVE_CLEARING_DAYS: Readonly<Record<string, number>> = Object.freeze({
  momo: 1,
  card: 2,
  bank_transfer: 0,
  cash: 0,
});
/** The most business days a clearing time may be (a setting or an override). */
export const CLEARING_DAYS_MAX = 30;
const BASIS_POINTS = 10_000;
const DAY_MS = 86_400_000;

let liveDefaults: Readonly<Record<string, number>> = DEFAULT_LIVE_CLEARING_DAYS;

/** The deployment's clearing times (CLEARING_DAYS), set once at start by every process that credits payments. */
export function configureClearingDefaults(days: Readonly<Record<string, number>>): void {
  liveDefaults = Object.freeze({ ...DEFAULT_LIVE_CLEARING_DAYS, ...days });
}

export interface EffectiveClearing {
  /** Business days per rail as they apply now to this merchant and environment (Test: 0 unless test_clearing). */
  days: Record<string, number>;
  /** An operator's overrides per rail. */
  overrides: Record<string, number>;
  test_clearing: boolean;
  reserve_bp: number;
  reserve_days: number;
}

function effectiveOf(environment: Environment, row: ClearingSettingsRow | null): EffectiveClearing {
  const overrides = row?.clearing_days ?? {};
  const testAtOnce = environment === 'test' && !row?.test_clearing;
  const days: Record<string, number> = {};
  for (const rail of new Set([...Object.keys(liveDefaults), ...Object.keys(overrides)])) {
    days[rail] = testAtOnce ? 0 : (overrides[rail] ?? liveDefaults[rail] ?? 0);
  }
  return {
    days,
    overrides: { ...overrides },
    test_clearing: row?.test_clearing ?? false,
    reserve_bp: row?.reserve_bp ?? 0,
    reserve_days: row?.reserve_days ?? 0,
  };
}

/** A merchant's clearing times and reserve in one environment, as they apply now. */
export async function effectiveClearing(
  db: Queryable,
  merchantId: string,
  environment: Environment,
): Promise<EffectiveClearing> {
  return effectiveOf(environment, await findClearingSettings(db, merchantId, environment));
}

/** When a credit becomes available and what of it the reserve keeps until when; null: available at once, nothing kept. */
export interface ClearingPlan {
  availableOn: Date;
  reserveMinor: number;
  reserveReleaseOn: Date | null;
}

/** The plan of a credit of netMinor by `rail` made at `at` (pure: the settings read by the caller). */
export function planClearing(
  clearing: EffectiveClearing,
  rail: string,
  netMinor: number,
  at: Date,
): ClearingPlan | null {
  const businessDays = clearing.days[rail] ?? 0;
  // Floor: the reserve never keeps more than the percentage says.
  const reserveMinor = clearing.reserve_bp > 0 ? Math.floor((netMinor * clearing.reserve_bp) / BASIS_POINTS) : 0;
  if (businessDays === 0 && reserveMinor === 0) return null;
  const availableOn = clearingInstant(at, businessDays);
  return {
    availableOn,
    reserveMinor,
    reserveReleaseOn: reserveMinor > 0 ? new Date(availableOn.getTime() + clearing.reserve_days * DAY_MS) : null,
  };
}
