// The refunds' SQL. Every status write takes a Transition issued by refundMachine.
import type { Queryable } from '../db/index.ts';
import { firstRow, firstValue } from '../db/first-row.ts';
import { keysetOrder, ListWhere } from '../db/paging.ts';
import type { Transition } from '../lib/state-machine.ts';
import { refundMachine, type RefundRow, type RefundStatus } from './model.ts';

export const REFUND_COLUMNS = `id, merchant_id, environment, api_key_id, requested_by_user_id, session_id, attempt_id, amount_minor, currency,
  reason, metadata, status, route, provider, provider_reference, provider_refund_id, processing_step, next_step_at, status_checks,
  failure_reason, decided_by_user_id, decided_at, payer_account, transfer_reference, completed_by, version, created_at, updated_at,
  succeeded_at, failed_at, request_key`;

export type NewRefund = Pick<
  RefundRow,
  | 'id'
  | 'merchant_id'
  | 'environment'
  | 'api_key_id'
  | 'requested_by_user_id'
  | 'session_id'
  | 'attempt_id'
  | 'amount_minor'
  | 'currency'
  | 'reason'
  | 'metadata'
  | 'route'
  | 'provider'
  | 'provider_reference'
  | 'processing_step'
  | 'next_step_at'
  | 'request_key'
>;

export async function insertRefund(tx: Queryable, row: NewRefund, status: RefundStatus): Promise<RefundRow> {
  const rows = await tx.query<RefundRow>(
    `INSERT INTO refunds (id, merchant_id, environment, api_key_id, requested_by_user_id, session_id, attempt_id, amount_minor, currency,
       reason, metadata, status, route, provider, provider_reference, processing_step, next_step_at, request_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
     RETURNING ${REFUND_COLUMNS}`,
    [
      row.id,
      row.merchant_id,
      row.environment,
      row.api_key_id,
      row.requested_by_user_id,
      row.session_id,
      row.attempt_id,
      row.amount_minor,
      row.currency,
      row.reason,
      JSON.stringify(row.metadata),
      refundMachine.initialStatus(status),
      row.route,
      row.provider,
      row.provider_reference,
      row.processing_step,
      row.next_step_at,
      row.request_key,
    ],
  );
  return rows[0]!;
}

export const findRefund = (db: Queryable, merchantId: string, environment: string, id: string) =>
  firstRow(
    db.query<RefundRow>(
      `SELECT ${REFUND_COLUMNS} FROM refunds WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
      [id, merchantId, environment],
    ),
  );

export const findRefundById = (db: Queryable, id: string, forUpdate = false) =>
  firstRow(
    db.query<RefundRow>(`SELECT ${REFUND_COLUMNS} FROM refunds WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [id]),
  );

/** What the refunds of an attempt still count against it: every refund that has not failed or been cancelled. */
export async function committedRefundsMinor(tx: Queryable, attemptId: string): Promise<number> {
  const rows = await tx.query<{ total: number }>(
    `SELECT coalesce(sum(amount_minor), 0)::bigint AS total FROM refunds WHERE attempt_id = $1 AND status IN ('awaiting_approval', 'pending', 'succeeded')`,
    [attemptId],
  );
  return rows[0]!.total;
}

export type RefundChange = Partial<
  Pick<
    RefundRow,
    | 'processing_step'
    | 'next_step_at'
    | 'status_checks'
    | 'failure_reason'
    | 'provider_refund_id'
    | 'decided_by_user_id'
    | 'payer_account'
    | 'transfer_reference'
    | 'completed_by'
  >
> & { decided?: boolean };

const CHANGEABLE = [
  'processing_step',
  'next_step_at',
  'status_checks',
  'failure_reason',
  'provider_refund_id',
  'decided_by_user_id',
  'payer_account',
  'transfer_reference',
  'completed_by',
] as const;

export async function updateRefund(
  tx: Queryable,
  id: string,
  change: RefundChange,
  move?: Transition<RefundStatus>,
): Promise<RefundRow> {
  if ('status' in change) throw new Error('assertion failed: a refund status is written only through its transition');
  const sets: string[] = ['version = version + 1', 'updated_at = now()'];
  const params: unknown[] = [id];
  if (move) {
    const to = refundMachine.check(move).to;
    params.push(to);
    sets.push(`status = $${params.length}`);
    if (to === 'succeeded') sets.push('succeeded_at = now()');
    if (to === 'failed' || to === 'cancelled') sets.push('failed_at = now()');
  }
  for (const key of CHANGEABLE) {
    if (key in change) {
      params.push(change[key]);
      sets.push(`${key} = $${params.length}`);
    }
  }
  if (change.decided) sets.push('decided_at = now()');
  const rows = await tx.query<RefundRow>(
    `UPDATE refunds SET ${sets.join(', ')} WHERE id = $1 RETURNING ${REFUND_COLUMNS}`,
    params,
  );
  return rows[0]!;
}

/** A succeeded refund adds to its session's refunded_minor. */
export async function addRefundedToSession(tx: Queryable, sessionId: string, amountMinor: number): Promise<void> {
  await tx.query(
    `UPDATE checkout_sessions SET refunded_minor = refunded_minor + $2, updated_at = now() WHERE id = $1`,
    [sessionId, amountMinor],
  );
}

/** Provider refunds due a step, claimed (SKIP LOCKED) and pushed back while a worker handles them. */
export async function claimDueRefunds(tx: Queryable, limit: number, holdS: number): Promise<string[]> {
  const rows = await tx.query<{ id: string }>(
    `UPDATE refunds SET next_step_at = now() + make_interval(secs => $2)
      WHERE id IN (SELECT id FROM refunds WHERE status = 'pending' AND route = 'provider' AND next_step_at <= now()
                    ORDER BY next_step_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id`,
    [limit, holdS],
  );
  return rows.map((row) => row.id);
}

/** Moves a refund from `from` to `to` step only if it is still there (one sender wins). */
export async function advanceStep(
  db: Queryable,
  id: string,
  from: 'send',
  to: 'awaiting_result',
  nextStepAt: Date,
): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    `UPDATE refunds SET processing_step = $3, next_step_at = $4, version = version + 1, updated_at = now()
      WHERE id = $1 AND status = 'pending' AND processing_step = $2 RETURNING id`,
    [id, from, to, nextStepAt],
  );
  return rows.length === 1;
}

export interface RefundSearch {
  merchantId: string;
  environment: string;
  status?: RefundStatus;
  sessionId?: string;
  createdFrom?: Date;
  createdBefore?: Date;
  after?: { createdAt: Date; id: string };
  /** newest (the API list, the default) or oldest first (CSV exports); the cursor is read in that order. */
  order?: 'newest' | 'oldest';
}

/** The keyset of the refund list. */
const REFUND_KEYSET = ['created_at', 'id'] as const;

/** Up to `limit` refunds matching, newest first; keyset on (created_at, id) so paging never skips or repeats. */
export function searchRefunds(db: Queryable, search: RefundSearch, limit: number): Promise<RefundRow[]> {
  const where = new ListWhere({ merchant_id: search.merchantId, environment: search.environment });
  if (search.status) where.add((n) => `status = $${n}`, search.status);
  if (search.sessionId) where.add((n) => `session_id = $${n}`, search.sessionId);
  where.created('created_at', search);
  where.after(REFUND_KEYSET, search.after, search.order);
  const limitParam = where.limit(limit);
  return db.query<RefundRow>(
    `SELECT ${REFUND_COLUMNS} FROM refunds WHERE ${where.sql} ORDER BY ${keysetOrder(REFUND_KEYSET, search.order)} LIMIT ${limitParam}`,
    where.params,
  );
}

/** Live refunds of cash and bank transfer payments waiting for an operator's transfer, oldest first. */
export function operatorQueue(db: Queryable, limit: number): Promise<RefundRow[]> {
  return db.query<RefundRow>(
    `SELECT ${REFUND_COLUMNS} FROM refunds WHERE status = 'pending' AND route = 'operator' ORDER BY created_at, id LIMIT $1`,
    [limit],
  );
}

/** A session's refunds, oldest first (the dashboard's session page). */
export function refundsOfSession(db: Queryable, sessionId: string): Promise<RefundRow[]> {
  return db.query<RefundRow>(`SELECT ${REFUND_COLUMNS} FROM refunds WHERE session_id = $1 ORDER BY created_at, id`, [
    sessionId,
  ]);
}

/** The key whose webhook endpoints hear about a refund: the one that created its session. */
export const sessionApiKeyOf = (tx: Queryable, sessionId: string) =>
  firstValue(
    tx.query<{ api_key_id: string | null }>('SELECT api_key_id FROM checkout_sessions WHERE id = $1', [sessionId]),
    'api_key_id',
  );

/** The attempt whose payment stands for a session (status paid), the first paid if a session was paid twice. */
export const findPaidAttempt = (tx: Queryable, sessionId: string) =>
  firstRow(
    tx.query<{
      id: string;
      rail: string;
      provider: string;
      provider_reference: string;
      phone: string | null;
      amount_charged_minor: number;
      currency: string;
    }>(
      `SELECT id, rail, provider, provider_reference, phone, amount_charged_minor, currency FROM payment_attempts
      WHERE session_id = $1 AND status = 'paid'
        AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.attempt_id = payment_attempts.id AND r.metadata->>'automatic' = 'duplicate_payment')
      ORDER BY finalized_at NULLS LAST, id LIMIT 1`,
      [sessionId],
    ),
  );

/** Whether the merchant requires a second person for Live money leaving (the payouts setting, used for refunds too). */
export async function approvalRequired(tx: Queryable, merchantId: string): Promise<boolean> {
  const rows = await tx.query<{ required: boolean }>(
    'SELECT payout_approval_required AS required FROM merchants WHERE id = $1',
    [merchantId],
  );
  return rows[0]?.required ?? false;
}

/** A provider refund by our reference with its provider (MTN's X-Reference-Id). */
export const findRefundByProviderReference = (db: Queryable, provider: string, providerReference: string) =>
  firstRow(
    db.query<RefundRow>(`SELECT ${REFUND_COLUMNS} FROM refunds WHERE provider = $1 AND provider_reference = $2`, [
      provider,
      providerReference,
    ]),
  );

/** The pending provider refunds of the payment a provider names by its charge reference (Paystack's refund events). */
export function pendingRefundsOfCharge(db: Queryable, provider: string, chargeReference: string): Promise<RefundRow[]> {
  return db.query<RefundRow>(
    `SELECT ${REFUND_COLUMNS.replace(/(\w+)/g, 'r.$1')} FROM refunds r JOIN payment_attempts a ON a.id = r.attempt_id
      WHERE r.provider = $1 AND a.provider = $1 AND a.provider_reference = $2 AND r.status = 'pending' AND r.route = 'provider'
      ORDER BY r.created_at, r.id`,
    [provider, chargeReference],
  );
}

/** The refund a form's one-time key already made, if any. */
export const findRefundByRequestKey = (db: Queryable, merchantId: string, environment: string, requestKey: string) =>
  firstRow(
    db.query<RefundRow>(
      `SELECT ${REFUND_COLUMNS} FROM refunds WHERE merchant_id = $1 AND environment = $2 AND request_key = $3`,
      [merchantId, environment, requestKey],
    ),
  );

/** What a merchant's unfinished refunds hold from its balance (pending and awaiting approval: each holds its amount), in pesewas. */
export async function heldForRefunds(db: Queryable, merchantId: string, environment: 'test' | 'live'): Promise<number> {
  const rows = await db.query<{ held: number }>(
    `SELECT COALESCE(sum(amount_minor), 0)::bigint AS held FROM refunds WHERE merchant_id = $1 AND environment = $2 AND status IN ('pending', 'awaiting_approval')`,
    [merchantId, environment],
  );
  return Number(rows[0]?.held ?? 0);
}
