// Payouts once written: reads, changes (a status only through its table), the day's total a failed or
// cancelled payout releases, and the Live processor's queue. A new payout is written by new-payout-store.ts.
import type { Environment } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';
import { ownedRow } from '../db/owned-row.ts';
import type { Transition } from '../lib/state-machine.ts';
import {
  payoutMachine,
  reconciliationMachine,
  type PayoutStatus,
  type ProcessingStep,
  type ReconciliationStatus,
} from './model.ts';

export interface PayoutRow {
  id: string;
  reference: string;
  merchant_id: string;
  environment: Environment;
  api_key_id: string | null;
  requested_by_user_id: string | null;
  client_reference: string;
  request_hash: string;
  recipient_id: string;
  status: PayoutStatus;
  processing_step: ProcessingStep | null;
  amount_minor: number;
  fee_minor: number;
  total_debit_minor: number;
  currency: string;
  notes: string | null;
  bank_reference: string;
  return_reference: string;
  reconciliation_status: ReconciliationStatus;
  failure_reason: string | null;
  cancel_reason: string | null;
  decided_by_user_id: string | null;
  decided_at: Date | null;
  next_step_at: Date | null;
  /** The Live provider the transfer goes to, and our reference with it: written before the transfer is sent. */
  provider: string | null;
  provider_reference: string | null;
  /** How many times a pending transfer was asked about (the next question waits longer). */
  status_checks: number;
  /**
   * An operator's hold (migration 032, holds.ts): when, by whom (the operator's email) and why; null when not
   * held. A flag, not a status: the Live worker skips a held payout and the API shows it as before.
   */
  held_at: Date | null;
  held_by: string | null;
  hold_reason: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
  paid_at: Date | null;
  /**
   * Migration 039 (issue 34): a payout the merchant asked for, or a scheduled settlement of the period
   * (settlement_period_start, null for a merchant's first settlement, to settlement_period_end). Always read
   * (PAYOUT_COLUMNS); optional so that a new payout's row may leave them to the columns' defaults, a manual payout.
   */
  type?: 'manual' | 'settlement';
  settlement_period_start?: Date | null;
  settlement_period_end?: Date | null;
}

export const PAYOUT_COLUMNS = `id, reference, merchant_id, environment, api_key_id, requested_by_user_id, client_reference, request_hash, recipient_id,
  status, processing_step, amount_minor, fee_minor, total_debit_minor, currency, notes, bank_reference, return_reference,
  reconciliation_status, failure_reason, cancel_reason, decided_by_user_id, decided_at, next_step_at, provider, provider_reference, status_checks, held_at, held_by, hold_reason, version, created_at, updated_at, paid_at,
  type, settlement_period_start, settlement_period_end`;

export const hasOpenPayouts = async (db: Queryable, recipientId: string): Promise<boolean> =>
  (
    await db.query(`SELECT 1 FROM payouts WHERE recipient_id = $1 AND status IN ('requested', 'processing') LIMIT 1`, [
      recipientId,
    ])
  ).length > 0;

/**
 * A payout failed or was cancelled: its amount no longer counts toward the total of the Accra day it was
 * created on. Call it before the ledger moves the payout's money: every writer takes the day's total
 * before the accounts (insertNewPayout), so a cancel and a new payout cannot deadlock.
 */
export const releaseDayTotal = (
  tx: Queryable,
  p: Pick<PayoutRow, 'merchant_id' | 'environment' | 'created_at' | 'amount_minor'>,
) =>
  tx.query(
    `UPDATE payout_day_totals SET committed_minor = committed_minor - $4
      WHERE merchant_id = $1 AND environment = $2 AND day = ($3::timestamptz AT TIME ZONE 'Africa/Accra')::date`,
    [p.merchant_id, p.environment, p.created_at, p.amount_minor],
  );

/** A payout of this merchant and environment, or null (by primary key, see ownedRow). */
export const findPayout = (db: Queryable, merchantId: string, environment: Environment, id: string, lock = false) =>
  ownedRow(findPayoutById(db, id, lock), merchantId, environment);

export const findPayoutById = (db: Queryable, id: string, lock = false) =>
  firstRow(
    db.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]),
  );

export async function listPayouts(
  db: Queryable,
  merchantId: string,
  environment: Environment,
  page: number,
  limit: number,
  clientReference: string | null,
) {
  const filter = clientReference === null ? '' : 'AND client_reference = $5';
  const params: unknown[] = [merchantId, environment, limit, (page - 1) * limit];
  if (clientReference !== null) params.push(clientReference);
  const [rows, counts] = await Promise.all([
    db.query<PayoutRow>(
      `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE merchant_id = $1 AND environment = $2 ${filter} ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
      params,
    ),
    db.query<{ total: number }>(
      `SELECT count(*)::int AS total FROM payouts WHERE merchant_id = $1 AND environment = $2 ${clientReference === null ? '' : 'AND client_reference = $3'}`,
      clientReference === null ? [merchantId, environment] : [merchantId, environment, clientReference],
    ),
  ]);
  return { rows, total: counts[0]?.total ?? 0 };
}

/** The payout a CSV export lists, with its recipient's name and account type. */
export type PayoutExportRow = PayoutRow & { recipient_name: string; recipient_account_type: string };

/**
 * Up to `limit` payouts created in [from, before), oldest first, after the keyset (created_at, id) given
 * (issue 17 exports: keyset pages never skip or repeat a payout, whatever is created meanwhile).
 */
export function payoutsCreatedBetween(
  db: Queryable,
  merchantId: string,
  environment: Environment,
  range: { from: Date; before: Date; after: { createdAt: Date; id: string } | null },
  limit: number,
): Promise<PayoutExportRow[]> {
  const params: unknown[] = [merchantId, environment, range.from, range.before, limit];
  if (range.after) params.push(range.after.createdAt, range.after.id);
  return db.query<PayoutExportRow>(
    `SELECT ${PAYOUT_COLUMNS.replace(/(\w+)/g, 'p.$1')}, r.account_name AS recipient_name, r.account_type AS recipient_account_type
       FROM payouts p JOIN recipients r ON r.id = p.recipient_id
      WHERE p.merchant_id = $1 AND p.environment = $2 AND p.created_at >= $3 AND p.created_at < $4
        ${range.after ? 'AND (p.created_at, p.id) > ($6, $7)' : ''}
      ORDER BY p.created_at, p.id LIMIT $5`,
    params,
  );
}

/**
 * Changes a payout; its status only with `move`, a Transition the payout table allowed (a status in
 * `change` is refused: it would skip the table; so is a reconciliation status: see updateReconciliation).
 */
export async function updatePayout(
  tx: Queryable,
  id: string,
  change: Partial<
    Pick<
      PayoutRow,
      | 'processing_step'
      | 'bank_reference'
      | 'return_reference'
      | 'failure_reason'
      | 'cancel_reason'
      | 'decided_by_user_id'
      | 'next_step_at'
      | 'provider'
      | 'provider_reference'
      | 'status_checks'
    >
  > & {
    decided?: boolean;
    paid?: boolean;
  },
  move?: Transition<PayoutStatus>,
): Promise<PayoutRow> {
  if ('status' in change) throw new Error('assertion failed: a payout status is written only through its transition');
  if ('reconciliation_status' in change)
    throw new Error(
      'assertion failed: a reconciliation status is written only through its transition (updateReconciliation)',
    );
  const sets: string[] = ['version = version + 1', 'updated_at = now()'];
  const params: unknown[] = [id];
  if (move) {
    params.push(payoutMachine.check(move).to);
    sets.push(`status = $${params.length}`);
  }
  for (const key of [
    'processing_step',
    'bank_reference',
    'return_reference',
    'failure_reason',
    'cancel_reason',
    'decided_by_user_id',
    'next_step_at',
    'provider',
    'provider_reference',
    'status_checks',
  ] as const) {
    if (key in change) {
      params.push(change[key]);
      sets.push(`${key} = $${params.length}`);
    }
  }
  if (change.decided) sets.push('decided_at = now()');
  if (change.paid) sets.push('paid_at = now()');
  const rows = await tx.query<PayoutRow>(
    `UPDATE payouts SET ${sets.join(', ')} WHERE id = $1 RETURNING ${PAYOUT_COLUMNS}`,
    params,
  );
  return rows[0]!;
}

/** Records a payout's reconciliation: only with `move`, a Transition the reconciliation table allowed. */
export async function updateReconciliation(
  tx: Queryable,
  id: string,
  move: Transition<ReconciliationStatus>,
): Promise<PayoutRow> {
  const to = reconciliationMachine.check(move).to;
  const rows = await tx.query<PayoutRow>(
    `UPDATE payouts SET version = version + 1, updated_at = now(), reconciliation_status = $2 WHERE id = $1 RETURNING ${PAYOUT_COLUMNS}`,
    [id, to],
  );
  return rows[0]!;
}

/**
 * Moves a processing payout from one step to the next only if it is still at that step and not held: false
 * when a cancel, an outcome, an operator's hold or another processor got there first (then the caller does
 * nothing). On PostgreSQL a hold committed while this waits for the row is seen here (the WHERE is checked
 * again on the locked row), so a transfer is never sent for a payout held before it left.
 */
export async function advanceProcessingStep(
  db: Queryable,
  id: string,
  from: ProcessingStep,
  to: ProcessingStep,
  nextStepAt: Date,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE payouts SET processing_step = $3, next_step_at = $4, version = version + 1, updated_at = now()
      WHERE id = $1 AND status = 'processing' AND processing_step = $2 AND held_at IS NULL RETURNING id`,
    [id, from, to, nextStepAt],
  );
  return rows.length === 1;
}

const DUE_PAYOUTS = `SELECT id FROM payouts WHERE status = 'processing' AND environment = 'live' AND next_step_at <= now()
  AND held_at IS NULL`;

/**
 * Live payouts whose next processing step is due (the payout processor's queue), claimed without blocking
 * others; a payout an operator holds is never claimed (holds.ts). `only` narrows the queue to those payouts.
 */
export const duePayoutIds = (tx: Queryable, limit: number, only?: readonly string[]) =>
  only
    ? tx.query<{ id: string }>(
        `${DUE_PAYOUTS} AND id = ANY($2) ORDER BY next_step_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit, only],
      )
    : tx.query<{ id: string }>(`${DUE_PAYOUTS} ORDER BY next_step_at LIMIT $1 FOR UPDATE SKIP LOCKED`, [limit]);

/** The payout a provider's webhook or callback names by our reference with it. */
export const findPayoutByProviderReference = (db: Queryable, provider: string, providerReference: string) =>
  firstRow(
    db.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE provider = $1 AND provider_reference = $2`, [
      provider,
      providerReference,
    ]),
  );

/** The most recently changed payouts of a merchant's environment. */
export const listRecentPayouts = (db: Queryable, merchantId: string, environment: Environment, limit: number) =>
  db.query<{ id: string; reference: string; status: string; amount_minor: number; updated_at: Date }>(
    'SELECT id, reference, status, amount_minor, updated_at FROM payouts WHERE merchant_id = $1 AND environment = $2 ORDER BY updated_at DESC LIMIT $3',
    [merchantId, environment, limit],
  );

/** Pushes a claimed payout's next step back while a worker advances it (another worker skips it meanwhile). */
export const holdForClaim = (tx: Queryable, id: string, holdS: number) =>
  tx.query(`UPDATE payouts SET next_step_at = now() + make_interval(secs => $2) WHERE id = $1`, [id, holdS]);

/**
 * Sets an operator's hold on a payout (who and why, now) or clears it (null), in the caller's transaction,
 * on a row it locked. Neither the status nor the version changes: a hold is not part of the payout the
 * merchant sees.
 */
export async function setPayoutHold(
  tx: Queryable,
  id: string,
  hold: { by: string; reason: string } | null,
): Promise<PayoutRow> {
  const rows = await tx.query<PayoutRow>(
    hold
      ? `UPDATE payouts SET held_at = now(), held_by = $2, hold_reason = $3 WHERE id = $1 RETURNING ${PAYOUT_COLUMNS}`
      : `UPDATE payouts SET held_at = NULL, held_by = NULL, hold_reason = NULL WHERE id = $1 RETURNING ${PAYOUT_COLUMNS}`,
    hold ? [id, hold.by, hold.reason] : [id],
  );
  return rows[0]!;
}
