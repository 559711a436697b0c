// The settlement run's SQL (issue 34, migration 039): schedules due, the schedule row locked while its
// merchant is settled, the balance transactions a settlement pays out, and the settlement's one statement
// (the payout, its journal entry, its event and the transactions it pays out).
import type { Queryable } from '../db/index.ts';
import { Statement } from '../db/statement.ts';
import type { Environment } from '../lib/environment.ts';
import type { PlannedEntries } from '../ledger/service.ts';
import {
  checkWritten,
  entriesCtes,
  ledgerWriteError,
  WRITTEN_COUNTS,
  type WrittenCounts,
} from '../ledger/statement.ts';
import { PAYOUT_COLUMNS, type PayoutRow } from './payout-store.ts';
import type { NewPayoutRow } from './new-payout-store.ts';
import type { ScheduleRow } from './settlement-schedule-store.ts';

/** The schedule row as the run reads it (locked). */
export type ScheduleRunRow = ScheduleRow;

/** Schedules whose next run is due by asOf and not paused, earliest first (the worker's list). */
export function dueSchedules(db: Queryable, asOf: Date, limit: number) {
  return db.query<{ merchant_id: string; environment: Environment }>(
    `SELECT merchant_id, environment FROM settlement_schedules
      WHERE next_run_at IS NOT NULL AND paused_at IS NULL AND next_run_at <= $1
      ORDER BY next_run_at LIMIT $2`,
    [asOf, limit],
    'settlement_due_schedules',
  );
}

/** The schedule row, locked for the run (every process settling this merchant waits here, then sees what the first did). */
export async function lockScheduleForRun(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
): Promise<ScheduleRunRow | null> {
  const rows = await tx.query<ScheduleRunRow>(
    'SELECT * FROM settlement_schedules WHERE merchant_id = $1 AND environment = $2 FOR UPDATE',
    [merchantId, environment],
    'settlement_lock_schedule',
  );
  return rows[0] ?? null;
}

/** After a run: the next run, the clock (never backwards), and the end of the last period settled. */
export async function advanceSchedule(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  change: { nextRunAt: Date | null; clockAt: Date; lastPeriodEnd: Date | null },
): Promise<void> {
  await tx.query(
    `UPDATE settlement_schedules
        SET next_run_at = $3, clock_at = greatest(coalesce(clock_at, $4), $4),
            last_period_end = coalesce($5, last_period_end), updated_at = now()
      WHERE merchant_id = $1 AND environment = $2`,
    [merchantId, environment, change.nextRunAt, change.clockAt, change.lastPeriodEnd],
  );
}

/**
 * Creates the Test schedule row's clock when a merchant without a schedule rehearses (manual, nothing due),
 * and moves the clock to asOf (never backwards). Returns the clock before, null when none was set.
 */
export async function moveClock(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  asOf: Date,
): Promise<{ before: Date | null }> {
  const rows = await tx.query<{ before: Date | null }>(
    `WITH before AS (SELECT clock_at FROM settlement_schedules WHERE merchant_id = $1 AND environment = $2 FOR UPDATE),
          upsert AS (
            INSERT INTO settlement_schedules (merchant_id, environment, interval, clock_at) VALUES ($1, $2, 'manual', $3)
            ON CONFLICT (merchant_id, environment) DO UPDATE
              SET clock_at = greatest(coalesce(settlement_schedules.clock_at, EXCLUDED.clock_at), EXCLUDED.clock_at)
            RETURNING 1)
     SELECT (SELECT clock_at FROM before) AS before, (SELECT count(*) FROM upsert) AS n`,
    [merchantId, environment, asOf],
  );
  return { before: rows[0]?.before ?? null };
}

/** A merchant's clock (the latest instant its runs saw), null when none. */
export async function clockOf(db: Queryable, merchantId: string, environment: Environment): Promise<Date | null> {
  const rows = await db.query<{ clock_at: Date | null }>(
    'SELECT clock_at FROM settlement_schedules WHERE merchant_id = $1 AND environment = $2',
    [merchantId, environment],
  );
  return rows[0]?.clock_at ?? null;
}

/**
 * The balance transactions a settlement now would pay out: every row no settlement has taken, except a
 * credit still clearing (a pending row whose credit has neither cleared nor been reversed: its money is not
 * in available). Read under the merchant's balance locks, after its waiting credits were applied.
 */
export function unsettledTransactions(tx: Queryable, merchantId: string, environment: Environment) {
  return tx.query<{ entry_id: string; net_minor: number }>(
    `SELECT b.entry_id, b.net_minor FROM balance_transactions b
      WHERE b.merchant_id = $1 AND b.environment = $2
        AND NOT EXISTS (SELECT 1 FROM settlement_transactions st WHERE st.entry_id = b.entry_id)
        AND (NOT b.pending OR EXISTS (
              SELECT 1 FROM journal_entries e JOIN ledger_clearings c ON c.entry_id = coalesce(e.reverses_entry_id, e.id)
               WHERE e.id = b.entry_id AND (c.cleared_at IS NOT NULL OR c.reversed_at IS NOT NULL)))
      ORDER BY b.seq`,
    [merchantId, environment],
    'settlement_unsettled_transactions',
  );
}

export interface SettlementWrite {
  row: NewPayoutRow & { settlement_period_start: Date | null; settlement_period_end: Date };
  ledger: PlannedEntries;
  /** The journal entries of the balance transactions it pays out. */
  entryIds: readonly string[];
}

/**
 * The settlement in one statement: the payout (type settlement; exactly one per merchant, environment and
 * period end: a unique index), its hold (or Test payment) and the balance transactions it pays out with its own, so no later settlement counts them. No day total:
 * the merchant's own money to its own account is not a payout the daily limit guards.
 */
export async function insertSettlement(tx: Queryable, w: SettlementWrite): Promise<PayoutRow> {
  const s = new Statement();
  const r = w.row;
  const [m, e, id] = [s.p(r.merchant_id, 'uuid'), s.p(r.environment, 'text'), s.p(r.id, 'text')];
  const sql = `WITH payout AS (
       INSERT INTO payouts (id, reference, merchant_id, environment, api_key_id, requested_by_user_id, client_reference, request_hash,
         recipient_id, status, processing_step, amount_minor, fee_minor, total_debit_minor, currency, notes, bank_reference,
         reconciliation_status, next_step_at, paid_at, type, settlement_period_start, settlement_period_end)
       VALUES (${id}, ${s.p(r.reference)}, ${m}, ${e}, NULL, NULL, ${s.p(r.client_reference)}, ${s.p(r.request_hash)},
               ${s.p(r.recipient_id)}, ${s.p(r.status)}, ${s.p(r.processing_step)}, ${s.p(r.amount_minor, 'bigint')}, ${s.p(r.fee_minor, 'bigint')},
               ${s.p(r.total_debit_minor, 'bigint')}, ${s.p(r.currency)}, ${s.p(r.notes)}, ${s.p(r.bank_reference)},
               ${s.p(r.reconciliation_status)}, ${s.p(r.next_step_at, 'timestamptz')}, CASE WHEN ${s.p(r.status)} = 'paid' THEN now() END,
               'settlement', ${s.p(r.settlement_period_start, 'timestamptz')}, ${s.p(r.settlement_period_end, 'timestamptz')})
       RETURNING ${PAYOUT_COLUMNS}
     ), ${entriesCtes(s, w.ledger.entries, w.ledger.lines, { ifPosted: 'fail', onlyIf: 'given.reference_id IN (SELECT id FROM payout)' })},
     settled AS (
       INSERT INTO settlement_transactions (entry_id, payout_id, merchant_id, environment)
       SELECT entry_id, ${id}, ${m}, ${e}
         FROM (SELECT unnest(${s.p(w.entryIds, 'uuid[]')}) AS entry_id UNION SELECT id FROM ledger_entry) AS paid_out
        WHERE EXISTS (SELECT 1 FROM payout)
       RETURNING 1
     )
     SELECT payout.*, (SELECT count(*) FROM settled)::int AS settled_rows, ${WRITTEN_COUNTS} FROM payout`;
  let rows: (PayoutRow & WrittenCounts & { settled_rows: number })[];
  try {
    rows = await tx.query(sql, s.params, 'settlement_insert');
  } catch (error) {
    throw ledgerWriteError(error);
  }
  const written = rows[0];
  if (!written || !checkWritten(written, w.ledger.entries, w.ledger.lines)) {
    throw new Error('assertion failed: a settlement statement wrote no payout or no journal entry');
  }
  const { ledger_entries: _entries, ledger_accounts: _accounts, settled_rows: _settled, ...payout } = written;
  return payout as PayoutRow;
}

/** What a settlement of the merchant depends on besides its schedule: approvals, a suspension, the recipient's state. */
export async function settlementFacts(
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  recipientId: string,
) {
  const rows = await tx.query<{
    approval_required: boolean;
    suspended: boolean;
    recipient_ok: boolean;
    account_type: 'bank' | 'momo' | null;
    network: string | null;
  }>(
    `SELECT m.payout_approval_required AS approval_required, m.suspended_at IS NOT NULL AS suspended,
            coalesce(r.merchant_id = m.id AND r.environment = $2 AND r.active AND r.verification_status = 'verified', false) AS recipient_ok,
            r.account_type, r.network
       FROM merchants m LEFT JOIN recipients r ON r.id = $3
      WHERE m.id = $1`,
    [merchantId, environment, recipientId],
  );
  return rows[0]!;
}

/** The owner's address (the merchant's e-mail). */
export async function merchantEmail(tx: Queryable, merchantId: string): Promise<string | null> {
  const rows = await tx.query<{ email: string | null }>('SELECT email FROM merchants WHERE id = $1', [merchantId]);
  return rows[0]?.email ?? null;
}
