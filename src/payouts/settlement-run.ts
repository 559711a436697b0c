// The settlement run (issue 34): for each merchant whose scheduled time has come, clear what is due, then
// pay out the whole available balance (less the reserve, which is not in available) when it reaches the
// schedule's minimum, as one payout of type "settlement" for that period, through the normal payout path
// (its hold, approval rule, Live provider by the payouts worker, payout.* events). Exactly one settlement
// per merchant, environment and period: the schedule row is locked for the run (every process waits there
// and then sees the period done) and a unique index on the period backs it. The balance transactions it
// pays out are recorded with it (settlement_transactions), and their net sum is its amount, to the pesewa.
import type { Db, Queryable } from '../db/index.ts';
import { DbError } from '../db/index.ts';
import { emitEventToMerchant } from '../events/outbox.ts';
import { scheduledRunAfter, type ScheduleRule } from '../lib/accra-calendar.ts';
import { canonicalJson, sha256Hex } from '../lib/canonical-json.ts';
import type { Environment } from '../lib/environment.ts';
import { errors, SikaError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import {
  applyPendingCredits,
  clearDuePayments,
  completeAccounts,
  newPayoutAccountKinds,
  ownersWithDueClearings,
  planNewPayout,
} from '../ledger/service.ts';
import type { LiveProviders } from '../rails/live.ts';
import { newPayoutReference } from './create.ts';
import { PAYOUT_CURRENCY, testBankReference, type PayoutStatus } from './model.ts';
import type { PayoutRow } from './payout-store.ts';
import { payoutEventInput } from './presenters.ts';
import { pauseSchedule } from './settlement-schedule-store.ts';
import * as store from './settlement-run-store.ts';

export interface SettlementRunDeps {
  db: Db;
  /** The Live providers: a Live settlement is made only when one pays its recipient. */
  providers: LiveProviders;
  /** Where one merchant's failure is told while the pass goes on (none: it is thrown). */
  log?: { warn(details: object, message: string): void };
}

/** The owner whose money is settled. */
export interface SettlementOwner {
  merchantId: string;
  environment: Environment;
}

/** Most periods one call settles for a merchant (a Test rehearsal of a year of daily runs is ~260). */
const PERIODS_PER_RUN_MAX = 400;
/** Merchants per pass of the worker. */
const OWNERS_PER_PASS = 200;

/**
 * The worker's pass: settles every schedule whose time has come (each period clearing what was due by its
 * own end), then clears what is due now for every merchant. Each merchant's clearing and each period is a
 * transaction of its own; one merchant's failure is logged and the pass goes on with the others.
 */
export async function runDueSettlements(deps: SettlementRunDeps, now = new Date()): Promise<PayoutRow[]> {
  const { db, log } = deps;
  const made: PayoutRow[] = [];
  for (const owner of await store.dueSchedules(db, now, OWNERS_PER_PASS)) {
    const o = { merchantId: owner.merchant_id, environment: owner.environment };
    try {
      made.push(...(await settleMerchant(deps, o, now)));
    } catch (error) {
      if (!log) throw error;
      log.warn({ err: error, merchant_id: o.merchantId, environment: o.environment }, 'settlement failed; will retry');
    }
  }
  for (const owner of await ownersWithDueClearings(db, now, OWNERS_PER_PASS)) {
    const o = { merchantId: owner.merchant_id, environment: owner.environment };
    try {
      await db.transaction((tx) => clearDuePayments(tx, o, now));
    } catch (error) {
      if (!log) throw error;
      log.warn({ err: error, merchant_id: o.merchantId, environment: o.environment }, 'clearing failed; will retry');
    }
  }
  return made;
}

/** Every period of one merchant due by asOf, in order, each in a transaction of its own. */
export async function settleMerchant(
  deps: SettlementRunDeps,
  owner: SettlementOwner,
  asOf: Date,
): Promise<PayoutRow[]> {
  const made: PayoutRow[] = [];
  for (let period = 0; period < PERIODS_PER_RUN_MAX; period++) {
    let step: PeriodStep;
    try {
      step = await deps.db.transaction((tx) => settleNextPeriod(tx, deps.providers, owner, asOf));
    } catch (error) {
      // Another process settled this period between our read and write: it is done, and so is this one.
      if (error instanceof DbError && error.isUniqueViolation && error.constraint === ONE_PER_PERIOD) continue;
      throw error;
    }
    if (step.payout) made.push(step.payout);
    if (!step.more) break;
  }
  return made;
}

const ONE_PER_PERIOD = 'payouts_one_settlement_per_period';

/**
 * POST /api/v1/test/settlements/run: clearing and the schedule of a Test merchant as if it were asOf, in the
 * caller's transaction (the Idempotency-Key's). The merchant's clock never moves backwards: an asOf before
 * the latest one is refused (409). Returns the settlements made.
 */
export async function rehearseSettlements(
  tx: Queryable,
  providers: LiveProviders,
  owner: SettlementOwner,
  asOf: Date,
): Promise<PayoutRow[]> {
  if (owner.environment !== 'test') throw errors.forbidden('Settlements can be rehearsed with Test keys only.');
  const { before } = await store.moveClock(tx, owner.merchantId, owner.environment, asOf);
  if (before && asOf.getTime() < before.getTime()) {
    throw new SikaError(
      'SETTLEMENT_CLOCK_BACKWARDS',
      `as_of must not be before ${before.toISOString()}, the latest time this merchant's settlements have run at: the clock never moves backwards.`,
    );
  }
  // Period by period, each clearing what was due by its own end, as the days would have passed; then what is due by asOf.
  const made: PayoutRow[] = [];
  for (let period = 0; period < PERIODS_PER_RUN_MAX; period++) {
    const step = await settleNextPeriod(tx, providers, owner, asOf);
    if (step.payout) made.push(step.payout);
    if (!step.more) break;
  }
  await applyPendingCredits(tx, owner.merchantId, owner.environment);
  await clearDuePayments(tx, owner, asOf);
  return made;
}

interface PeriodStep {
  /** The settlement made for the period, if one was. */
  payout: PayoutRow | null;
  /** Another period may be due. */
  more: boolean;
}

/** The schedule's rule (a non-manual schedule). */
const ruleOf = (s: store.ScheduleRunRow): ScheduleRule => ({
  interval: s.interval as ScheduleRule['interval'],
  weekly_anchor: s.weekly_anchor,
  monthly_anchor: s.monthly_anchor,
  time_of_day: s.time_of_day,
});

/** One period: under the schedule's lock, clear what is due by its end and settle the available balance. */
async function settleNextPeriod(
  tx: Queryable,
  providers: LiveProviders,
  owner: SettlementOwner,
  asOf: Date,
): Promise<PeriodStep> {
  const schedule = await store.lockScheduleForRun(tx, owner.merchantId, owner.environment);
  if (
    !schedule ||
    schedule.interval === 'manual' ||
    schedule.paused_at ||
    !schedule.next_run_at ||
    schedule.next_run_at.getTime() > asOf.getTime()
  ) {
    return { payout: null, more: false };
  }
  const rule = ruleOf(schedule);
  const periodEnd = schedule.next_run_at;
  const nextRunAt = scheduledRunAfter(rule, periodEnd);
  await applyPendingCredits(tx, owner.merchantId, owner.environment);
  await clearDuePayments(tx, owner, periodEnd);
  const payout = await settlePeriod(tx, providers, owner, schedule, periodEnd);
  await store.advanceSchedule(tx, owner.merchantId, owner.environment, {
    nextRunAt,
    clockAt: periodEnd,
    lastPeriodEnd: payout ? periodEnd : null,
  });
  return { payout, more: nextRunAt.getTime() <= asOf.getTime() };
}

/** The settlement of one period, or null when there is nothing to pay, or not yet to this account. */
async function settlePeriod(
  tx: Queryable,
  providers: LiveProviders,
  owner: SettlementOwner,
  schedule: store.ScheduleRunRow,
  periodEnd: Date,
): Promise<PayoutRow | null> {
  const recipientId = schedule.recipient_id;
  if (!recipientId) return null;
  // A new settlement account receives nothing for its first 24 hours (account-takeover protection).
  if (schedule.recipient_active_at && schedule.recipient_active_at.getTime() > periodEnd.getTime()) return null;
  const facts = await store.settlementFacts(tx, owner.merchantId, owner.environment, recipientId);
  if (facts.suspended && owner.environment === 'live') return null;
  const rows = await store.unsettledTransactions(tx, owner.merchantId, owner.environment);
  const amountMinor = rows.reduce((sum, row) => sum + row.net_minor, 0);
  if (amountMinor < Math.max(1, Number(schedule.minimum_minor))) return null;
  if (!facts.recipient_ok) {
    await pauseSchedule(
      tx,
      owner.merchantId,
      owner.environment,
      'The settlement account is no longer a verified, active recipient: choose another one to resume.',
      null,
    );
    return null;
  }
  const isTest = owner.environment === 'test';
  if (
    !isTest &&
    !providers.paysTo({ accountType: facts.account_type!, network: facts.network as 'mtn' | 'telecel' | 'at' | null })
  ) {
    return null; // no provider pays this account right now: the money waits for the next period
  }
  // Test: paid at once, as a Test payout is by default (SPEC 3.3). Live: held, then sent by the payouts worker,
  // or first approved when the merchant requires a second person for payouts.
  const status: PayoutStatus = isTest ? 'paid' : facts.approval_required ? 'requested' : 'processing';
  const paidAtOnce = status === 'paid';
  const id = newId('po');
  const accounts = await completeAccounts(
    tx,
    owner.merchantId,
    owner.environment,
    newPayoutAccountKinds(paidAtOnce),
    [],
  );
  const ledger = planNewPayout({ ...owner, payoutId: id, amountMinor, feeMinor: 0 }, accounts, paidAtOnce);
  const periodStart = schedule.last_period_end;
  const clientReference = `settlement:${periodEnd.toISOString()}`;
  const payout = await store.insertSettlement(tx, {
    row: {
      id,
      reference: newPayoutReference(),
      merchant_id: owner.merchantId,
      environment: owner.environment,
      api_key_id: null,
      requested_by_user_id: null,
      client_reference: clientReference,
      request_hash: sha256Hex(canonicalJson({ settlement: periodEnd.toISOString(), amount_minor: amountMinor })),
      recipient_id: recipientId,
      status,
      processing_step: status === 'processing' ? 'recipient_check' : null,
      amount_minor: amountMinor,
      fee_minor: 0,
      total_debit_minor: amountMinor,
      currency: PAYOUT_CURRENCY,
      notes: null,
      bank_reference: paidAtOnce ? testBankReference() : '',
      reconciliation_status: isTest ? 'not_required' : 'unreconciled',
      next_step_at: status === 'processing' ? new Date() : null,
      settlement_period_start: periodStart,
      settlement_period_end: periodEnd,
    },
    ledger,
    entryIds: rows.map((row) => row.entry_id),
  });
  await emitEventToMerchant(tx, payoutEventInput(payout, `payout.${status}`));
  return payout;
}
