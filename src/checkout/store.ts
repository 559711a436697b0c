import { DbError, type Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';
import { ownedRow } from '../db/owned-row.ts';
import type { FailureReason } from '../lib/payment-failures.ts';
import { sqlList, type Transition } from '../lib/state-machine.ts';
import {
  attemptMachine,
  cashSlipMachine,
  sessionMachine,
  type AttemptRow,
  type AttemptStatus,
  type CashSlipStatus,
  type SessionRow,
  type SessionStatus,
} from './model.ts';

export const SESSION_COLUMNS = `id, merchant_id, environment, api_key_id, status, amount_minor, currency, invoice_ref, description,
  customer_name, customer_email, callback_url, metadata, expires_at, finalized_at, refunded_minor, payment_link_id, custom_fields, receipt_number, method_rail, method_network, version, created_at, updated_at`;

/** A session by id with its merchant's name (the payer endpoints); built once, not per request. */
const PUBLIC_SESSION_SELECT = `SELECT ${SESSION_COLUMNS.replace(/(\w+)/g, 's.$1')}, m.name AS merchant_name`;
const PUBLIC_SESSION_FROM = 'FROM checkout_sessions s JOIN merchants m ON m.id = s.merchant_id WHERE s.id = $1';
/** The lines of the session's invoice (s is the session). */
const SESSION_INVOICE_LINES =
  'FROM invoice_lines l WHERE l.merchant_id = s.merchant_id AND l.environment = s.environment AND l.invoice_ref = s.invoice_ref';

/**
 * The INSERT of a new session row, guarded by the Idempotency-Key claim (see insertClaimed in http/idempotency-store.ts): one
 * statement, so creating a session is one round trip to the database.
 */
export function sessionInsert(s: SessionRow): { sql: string; params: unknown[]; name: string } {
  sessionMachine.initialStatus(s.status);
  return {
    name: 'session_insert',
    sql: `INSERT INTO checkout_sessions (id, merchant_id, environment, api_key_id, status, amount_minor, currency, invoice_ref,
            description, customer_name, customer_email, callback_url, metadata, expires_at, version, created_at, updated_at)
          SELECT $1, $2::uuid, $3, $4::uuid, $5, $6::bigint, $7, $8, $9, $10, $11, $12, $13::jsonb, $14::timestamptz, $15::integer,
                 $16::timestamptz, $16::timestamptz
           WHERE EXISTS (SELECT 1 FROM idempotency_claim)
          RETURNING 1`,
    params: [
      s.id,
      s.merchant_id,
      s.environment,
      s.api_key_id,
      s.status,
      s.amount_minor,
      s.currency,
      s.invoice_ref,
      s.description,
      s.customer_name,
      s.customer_email,
      s.callback_url,
      JSON.stringify(s.metadata),
      s.expires_at,
      s.version,
      s.created_at,
    ],
  };
}

/** A session of this merchant and environment, or null: foreign ids look exactly like missing ones (by primary key, see ownedRow). */
export const findSession = (db: Queryable, merchantId: string, environment: string, id: string) =>
  ownedRow(
    firstRow(
      db.read<SessionRow>('session_by_id', `SELECT ${SESSION_COLUMNS} FROM checkout_sessions WHERE id = $1`, [id]),
    ),
    merchantId,
    environment,
  );

/** Any session by id (payer endpoints: the unguessable id is the capability), with its merchant's name. */
export const findPublicSession = (db: Queryable, id: string) =>
  firstRow(
    db.read<SessionRow & { merchant_name: string }>(
      'public_session_by_id',
      `${PUBLIC_SESSION_SELECT} ${PUBLIC_SESSION_FROM}`,
      [id],
    ),
  );

export const lockSession = (tx: Queryable, id: string) =>
  firstRow(
    tx.query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM checkout_sessions WHERE id = $1 FOR UPDATE`,
      [id],
      'session_lock',
    ),
  );

/** What a status UPDATE also writes: the method of the attempt that starts or pays (migration 042), a receipt number. */
export interface SessionStatusExtras {
  method?: { rail: string; network: string | null };
  /** Given unless the session has one or the number is taken (then the row comes back without one). */
  receiptNumber?: string;
}

export async function updateSessionStatus(
  tx: Queryable,
  id: string,
  move: Transition<SessionStatus>,
  finalized: boolean,
  extras: SessionStatusExtras = {},
): Promise<SessionRow> {
  // The receipt number in the same statement: a number another session holds (one chance in 32^8 per paid
  // session) leaves it NULL for the caller to retry behind a savepoint, rather than failing the transaction.
  const rows = await tx.query<SessionRow>(
    `UPDATE checkout_sessions SET status = $2, version = version + 1, updated_at = now(),
            finalized_at = CASE WHEN $3::boolean THEN coalesce(finalized_at, now()) ELSE NULL END,
            method_rail = coalesce($4::text, method_rail),
            method_network = CASE WHEN $4::text IS NULL THEN method_network ELSE $5::text END,
            receipt_number = CASE WHEN receipt_number IS NOT NULL OR $6::text IS NULL THEN receipt_number
                                  WHEN EXISTS (SELECT 1 FROM checkout_sessions r WHERE r.receipt_number = $6::text) THEN NULL
                                  ELSE $6::text END
      WHERE id = $1 RETURNING ${SESSION_COLUMNS}`,
    [
      id,
      sessionMachine.check(move).to,
      finalized,
      extras.method?.rail ?? null,
      extras.method?.network ?? null,
      extras.receiptNumber ?? null,
    ],
    'session_status_update',
  );
  return rows[0]!;
}

/** The session changed without changing status (a successful session's payment reversed): its version grows. */
export async function bumpSessionVersion(tx: Queryable, id: string): Promise<SessionRow> {
  const rows = await tx.query<SessionRow>(
    `UPDATE checkout_sessions SET version = version + 1, updated_at = now(), finalized_at = coalesce(finalized_at, now())
      WHERE id = $1 RETURNING ${SESSION_COLUMNS}`,
    [id],
  );
  return rows[0]!;
}

const ATTEMPT_COLUMNS = `id, session_id, merchant_id, environment, rail, provider, provider_reference, network, phone, account_name,
  status, raw_status, base_minor, fee_minor, bearer, amount_charged_minor, amount_received_minor, fee_received_minor, currency, verification_required, resend_count,
  instructions, version, created_at, updated_at, finalized_at, provider_transaction_id, card_brand, card_last4, failure_reason, abandoned_at`;

const ATTEMPT_INITIAL = attemptMachine.initialStatus('pending');

/** What was received on a held attempt (the provider's report, or an operator's decision) and the fee taken on it (null: none decided yet). */
export async function setAttemptReceived(
  tx: Queryable,
  id: string,
  receivedMinor: number,
  feeReceivedMinor: number | null,
): Promise<AttemptRow> {
  const rows = await tx.query<AttemptRow>(
    `UPDATE payment_attempts SET amount_received_minor = $2, fee_received_minor = $3 WHERE id = $1 RETURNING ${ATTEMPT_COLUMNS}`,
    [id, receivedMinor, feeReceivedMinor],
  );
  return rows[0]!;
}

export async function insertAttempt(
  tx: Queryable,
  a: Pick<
    AttemptRow,
    | 'id'
    | 'session_id'
    | 'merchant_id'
    | 'environment'
    | 'rail'
    | 'provider'
    | 'provider_reference'
    | 'network'
    | 'phone'
    | 'account_name'
    | 'raw_status'
    | 'base_minor'
    | 'fee_minor'
    | 'bearer'
    | 'amount_charged_minor'
    | 'currency'
  >,
): Promise<AttemptRow> {
  const rows = await tx.query<AttemptRow>(
    `INSERT INTO payment_attempts (id, session_id, merchant_id, environment, rail, provider, provider_reference, network, phone,
       account_name, status, raw_status, base_minor, fee_minor, bearer, amount_charged_minor, currency)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, '${ATTEMPT_INITIAL}', $11, $12, $13, $14, $15, $16)
     RETURNING ${ATTEMPT_COLUMNS}`,
    [
      a.id,
      a.session_id,
      a.merchant_id,
      a.environment,
      a.rail,
      a.provider,
      a.provider_reference,
      a.network,
      a.phone,
      a.account_name,
      a.raw_status,
      a.base_minor,
      a.fee_minor,
      a.bearer,
      a.amount_charged_minor,
      a.currency,
    ],
    'attempt_insert',
  );
  return rows[0]!;
}

/**
 * Claims pending attempts due a provider status check (DESIGN: 5 minutes after the start, then after
 * 5, 10, 20, 40 and every 60 minutes), counting the check and setting the next one in the same
 * statement; SKIP LOCKED, so two workers never claim one attempt.
 */
/**
 * Attempts due a provider status check: pending ones, and Live ones that expired, or were abandoned while the
 * provider had not answered (issue 31), within lateWindowS (a payer may still approve; money taken is never dropped).
 */
export const claimStatusChecks = (
  db: Queryable,
  firstAfterS: number,
  capS: number,
  limit: number,
  lateWindowS: number,
) =>
  db.query<AttemptRow>(
    `UPDATE payment_attempts SET status_checks = status_checks + 1,
            next_status_check_at = now() + make_interval(secs => least($1 * power(2, status_checks), $2))
      WHERE id IN (SELECT id FROM payment_attempts
                    WHERE (status = 'pending'
                           OR (status = 'expired' AND environment = 'live' AND created_at > now() - make_interval(secs => $4))
                           OR (status = 'cancelled' AND abandoned_at IS NOT NULL AND environment = 'live' AND created_at > now() - make_interval(secs => $4)))
                      AND created_at <= now() - make_interval(secs => $1)
                      AND (next_status_check_at IS NULL OR next_status_check_at <= now())
                    ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING ${ATTEMPT_COLUMNS}`,
    [firstAfterS, capS, limit, lateWindowS],
  );

export const findAttempt = (db: Queryable, id: string, forUpdate = false) =>
  firstRow(
    db.query<AttemptRow>(
      `SELECT ${ATTEMPT_COLUMNS} FROM payment_attempts WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
      [id],
      forUpdate ? 'attempt_lock' : 'attempt_by_id',
    ),
  );

export const listAttempts = (db: Queryable, sessionId: string) =>
  db.query<AttemptRow>(
    `SELECT ${ATTEMPT_COLUMNS} FROM payment_attempts WHERE session_id = $1 ORDER BY created_at, id`,
    [sessionId],
    'attempts_of_session',
  );

export async function updateAttemptStatus(
  tx: Queryable,
  id: string,
  move: Transition<AttemptStatus>,
  rawStatus: string,
  final: boolean,
): Promise<AttemptRow> {
  const rows = await tx.query<AttemptRow>(
    `UPDATE payment_attempts SET status = $2, raw_status = $3, version = version + 1, updated_at = now(),
            finalized_at = CASE WHEN $4::boolean THEN now() ELSE finalized_at END
      WHERE id = $1 RETURNING ${ATTEMPT_COLUMNS}`,
    [id, attemptMachine.check(move).to, rawStatus, final],
    'attempt_status_update',
  );
  return rows[0]!;
}

export interface AttemptProviderAnswer {
  providerReference?: string;
  rawStatus?: string;
  verificationRequired?: boolean;
  instructions?: Record<string, unknown>;
  resendCountDelta?: number;
}

// A provider answer that arrives after the attempt was decided (simulate, teller, operator) must not
// overwrite the decided raw_status with a stale "pending" one.
const ATTEMPT_PROVIDER_UPDATE = `UPDATE payment_attempts SET provider_reference = coalesce($2, provider_reference),
            raw_status = CASE WHEN status = 'pending' THEN coalesce($3, raw_status) ELSE raw_status END,
            verification_required = coalesce($4, verification_required), instructions = coalesce($5::jsonb, instructions),
            resend_count = resend_count + $6, updated_at = now()
      WHERE id = $1 RETURNING ${ATTEMPT_COLUMNS}`;

const attemptProviderParams = (id: string, p: AttemptProviderAnswer) => [
  id,
  p.providerReference ?? null,
  p.rawStatus ?? null,
  p.verificationRequired ?? null,
  p.instructions ? JSON.stringify(p.instructions) : null,
  p.resendCountDelta ?? 0,
];

export async function updateAttemptProvider(tx: Queryable, id: string, p: AttemptProviderAnswer): Promise<AttemptRow> {
  const rows = await tx.query<AttemptRow>(
    ATTEMPT_PROVIDER_UPDATE,
    attemptProviderParams(id, p),
    'attempt_provider_update',
  );
  return rows[0] ?? attemptGone(id);
}

/**
 * The attempt row to record an answer on is not there: only a database that lost committed writes (an
 * asynchronous replica promoted after a crash) does that. Thrown as a plain error, so the caller's
 * "could not be recorded" path answers 503 and status checks take over; never a 500.
 */
function attemptGone(id: string): never {
  throw new Error(`payment attempt ${id} is not in the database (a failover lost its commit)`);
}

/**
 * The same update as one self-contained write (db.write: pipelined on PostgreSQL, its own transaction),
 * for an answer that changes nothing else; null when the row was locked past the write's lock timeout
 * (the caller then takes a transaction on the pool).
 */
export async function writeAttemptProvider(
  db: Queryable,
  id: string,
  p: AttemptProviderAnswer,
): Promise<AttemptRow | null> {
  try {
    const rows = await db.write<AttemptRow>(
      'attempt_provider_write',
      ATTEMPT_PROVIDER_UPDATE,
      attemptProviderParams(id, p),
    );
    return rows[0] ?? attemptGone(id);
  } catch (error) {
    if (error instanceof DbError && error.isLockTimeout) return null;
    throw error;
  }
}

/**
 * Moves a pending attempt's intent to the next provider after the previous one refused it before
 * accepting; null when the attempt changed meanwhile (decided, or already switched by someone else).
 */
export const switchAttemptProvider = (
  tx: Queryable,
  id: string,
  fromProvider: string,
  toProvider: string,
  providerReference: string,
) =>
  firstRow(
    tx.query<AttemptRow>(
      `UPDATE payment_attempts SET provider = $3, provider_reference = $4, raw_status = 'CREATED', updated_at = now()
      WHERE id = $1 AND provider = $2 AND status = 'pending' RETURNING ${ATTEMPT_COLUMNS}`,
      [id, fromProvider, toProvider, providerReference],
    ),
  );

/** What the provider told about an attempt beyond its status (issue 31); a fact already known is kept when a later answer omits it. */
export interface AttemptProviderFacts {
  providerTransactionId?: string | null;
  card?: { brand: string; last4: string } | null;
  failureReason?: FailureReason | null;
  /** The attempt ended while its provider had given no final answer (a payer's change of course, Paystack's "abandoned"). */
  abandoned?: boolean;
}

export async function recordProviderFacts(tx: Queryable, id: string, f: AttemptProviderFacts): Promise<AttemptRow> {
  const rows = await tx.query<AttemptRow>(
    `UPDATE payment_attempts SET provider_transaction_id = coalesce($2, provider_transaction_id), card_brand = coalesce($3, card_brand),
            card_last4 = coalesce($4, card_last4), failure_reason = coalesce($5, failure_reason),
            abandoned_at = CASE WHEN $6::boolean THEN coalesce(abandoned_at, now()) ELSE abandoned_at END
      WHERE id = $1 RETURNING ${ATTEMPT_COLUMNS}`,
    [
      id,
      f.providerTransactionId ?? null,
      f.card?.brand ?? null,
      f.card?.last4 ?? null,
      f.failureReason ?? null,
      f.abandoned === true,
    ],
    'attempt_provider_facts',
  );
  return rows[0]!;
}

/** Whether an attempt's money was refunded automatically as a duplicate payment (src/refunds/sika-refunds.ts). */
export async function hasDuplicateRefund(tx: Queryable, attemptId: string): Promise<boolean> {
  const rows = await tx.query(
    `SELECT 1 FROM refunds WHERE attempt_id = $1 AND metadata->>'automatic' = 'duplicate_payment' LIMIT 1`,
    [attemptId],
  );
  return rows.length > 0;
}

/** The attempt a provider's webhook or callback names by our reference with it. */
export const findAttemptByProviderReference = (db: Queryable, provider: string, providerReference: string) =>
  firstRow(
    db.query<AttemptRow>(
      `SELECT ${ATTEMPT_COLUMNS} FROM payment_attempts WHERE provider = $1 AND provider_reference = $2 AND provider_reference <> ''`,
      [provider, providerReference],
    ),
  );

export async function countFailedAttempts(tx: Queryable, sessionId: string): Promise<number> {
  const rows = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM payment_attempts WHERE session_id = $1 AND status = 'failed'`,
    [sessionId],
    'attempts_failed_count',
  );
  return rows[0]?.n ?? 0;
}

/** Sessions past their expiry that still await a payment (the expiry worker's queue). */
export const dueSessionIds = (db: Queryable, limit: number) =>
  db.query<{ id: string }>(
    `SELECT s.id FROM checkout_sessions s
      WHERE s.status IN (${sqlList(sessionMachine.fromStatusesTo('expired'))}) AND s.expires_at <= now()
        AND NOT EXISTS (SELECT 1 FROM payment_attempts a WHERE a.session_id = s.id AND a.status IN ('manual_review', 'amount_mismatch'))
      ORDER BY s.expires_at LIMIT $1`,
    [limit],
  );

export interface CashSlipRow {
  id: string;
  slip_token: string;
  reference: string;
  session_id: string;
  attempt_id: string;
  merchant_id: string;
  environment: 'test' | 'live';
  amount_minor: number;
  currency: string;
  status: CashSlipStatus;
  expires_at: Date;
  recorded_at: Date | null;
  recorded_branch_id: string | null;
  created_at: Date;
}

const SLIP_COLUMNS =
  'id, slip_token, reference, session_id, attempt_id, merchant_id, environment, amount_minor, currency, status, expires_at, recorded_at, recorded_branch_id, created_at';

const SLIP_INITIAL = cashSlipMachine.initialStatus('active');

export async function insertCashSlip(
  tx: Queryable,
  s: Omit<CashSlipRow, 'status' | 'recorded_at' | 'recorded_branch_id' | 'created_at'>,
): Promise<CashSlipRow> {
  const rows = await tx.query<CashSlipRow>(
    `INSERT INTO cash_slips (id, slip_token, reference, session_id, attempt_id, merchant_id, environment, amount_minor, currency, status, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '${SLIP_INITIAL}', $10) RETURNING ${SLIP_COLUMNS}`,
    [
      s.id,
      s.slip_token,
      s.reference,
      s.session_id,
      s.attempt_id,
      s.merchant_id,
      s.environment,
      s.amount_minor,
      s.currency,
      s.expires_at,
    ],
  );
  return rows[0]!;
}

export const findSlipByAttempt = (db: Queryable, attemptId: string) =>
  firstRow(db.query<CashSlipRow>(`SELECT ${SLIP_COLUMNS} FROM cash_slips WHERE attempt_id = $1`, [attemptId]));

export const findSlipByReference = (db: Queryable, reference: string, forUpdate = false) =>
  firstRow(
    db.query<CashSlipRow>(
      `SELECT ${SLIP_COLUMNS} FROM cash_slips WHERE reference = $1${forUpdate ? ' FOR UPDATE' : ''}`,
      [reference],
    ),
  );

export const findSlipByToken = (db: Queryable, token: string) =>
  firstRow(db.query<CashSlipRow>(`SELECT ${SLIP_COLUMNS} FROM cash_slips WHERE slip_token = $1`, [token]));

export const updateSlipStatus = (tx: Queryable, id: string, move: Transition<CashSlipStatus>) =>
  tx.query(
    `UPDATE cash_slips SET status = $2, recorded_at = CASE WHEN $2 = 'used' THEN now() ELSE recorded_at END WHERE id = $1`,
    [id, cashSlipMachine.check(move).to],
  );

/** The branch a teller took the cash at, written before the deposit's outcome moves the slip. */
export const recordSlipBranch = (tx: Queryable, id: string, branchId: string) =>
  tx.query('UPDATE cash_slips SET recorded_branch_id = $2 WHERE id = $1', [id, branchId]);

export async function findFeeOverrides(db: Queryable, merchantId: string, environment: string) {
  return db.read<{
    rail: string;
    bearer: 'payer' | 'merchant';
    percent_bps: number;
    flat_minor: number;
    cap_minor: number | null;
  }>(
    'fee_overrides',
    'SELECT rail, bearer, percent_bps, flat_minor, cap_minor FROM fee_schedules WHERE merchant_id = $1 AND environment = $2',
    [merchantId, environment],
  );
}

/** A merchant's fee row for a rail, written or, when there is one, its bearer changed (the rates stay). */
export const upsertFeeBearer = (
  tx: Queryable,
  f: {
    merchantId: string;
    environment: string;
    rail: string;
    bearer: 'payer' | 'merchant';
    percentBps: number;
    flatMinor: number;
    capMinor: number | null;
  },
) =>
  tx.query(
    `INSERT INTO fee_schedules (merchant_id, environment, rail, bearer, percent_bps, flat_minor, cap_minor) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (merchant_id, environment, rail) DO UPDATE SET bearer = EXCLUDED.bearer, updated_at = now()`,
    [f.merchantId, f.environment, f.rail, f.bearer, f.percentBps, f.flatMinor, f.capMinor],
  );

export interface BankBranchRow {
  bank_id: string;
  bank_name: string;
  bank_code: string;
  branch_id: string | null;
  branch_name: string | null;
  branch_code: string | null;
}

/** Every active bank with each of its active branches (a bank without one appears once, branch fields null), by name. */
export const listActiveBankBranches = (db: Queryable) =>
  db.query<BankBranchRow>(
    `SELECT b.id AS bank_id, b.name AS bank_name, b.code AS bank_code, br.id AS branch_id, br.name AS branch_name, br.code AS branch_code
       FROM banks b LEFT JOIN bank_branches br ON br.bank_id = b.id AND br.active
      WHERE b.active ORDER BY b.name, br.name`,
  );

export async function isActiveBranch(db: Queryable, branchId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM bank_branches WHERE id = $1 AND active', [branchId]);
  return rows.length > 0;
}

export interface PublicLineItem {
  code: string;
  name: string;
  amount_minor: number;
  currency: string;
}

/** The payer view's data in one round trip: the session, its merchant's name and its invoice's lines. */
export const findPublicSessionWithLines = (db: Queryable, id: string) =>
  firstRow(
    db.read<SessionRow & { merchant_name: string; line_items: PublicLineItem[] }>(
      'public_session_with_lines',
      `${PUBLIC_SESSION_SELECT},
            -- The ordered aggregate costs more than the probe even over no rows: only aggregate when there are lines.
            CASE WHEN EXISTS (SELECT 1 ${SESSION_INVOICE_LINES})
                 THEN (SELECT json_agg(json_build_object('code', l.code, 'name', l.name, 'amount_minor', l.amount_minor, 'currency', l.currency)
                                       ORDER BY l.created_at, l.code) ${SESSION_INVOICE_LINES})
                 ELSE '[]'::json END AS line_items
       ${PUBLIC_SESSION_FROM}`,
      [id],
    ),
  );

/** The most recently changed sessions of a merchant's environment. */
export const listRecentSessions = (db: Queryable, merchantId: string, environment: string, limit: number) =>
  db.query<{ id: string; status: string; amount_minor: number; invoice_ref: string; updated_at: Date }>(
    'SELECT id, status, amount_minor, invoice_ref, updated_at FROM checkout_sessions WHERE merchant_id = $1 AND environment = $2 ORDER BY updated_at DESC LIMIT $3',
    [merchantId, environment, limit],
  );

/** Gives a session its receipt number unless it has one (migration 040's unique index refuses a number in use). */
export const setReceiptNumber = (tx: Queryable, id: string, receiptNumber: string) =>
  firstRow(
    tx.query<SessionRow>(
      `UPDATE checkout_sessions SET receipt_number = $2 WHERE id = $1 AND receipt_number IS NULL RETURNING ${SESSION_COLUMNS}`,
      [id, receiptNumber],
    ),
  );

export type ReceiptChannel = 'email' | 'sms';

/** Where a session's receipt was sent on a channel, oldest first. */
export const listReceiptRecipients = async (db: Queryable, sessionId: string, channel: ReceiptChannel) =>
  (
    await db.query<{ recipient: string }>(
      'SELECT recipient FROM receipt_deliveries WHERE session_id = $1 AND channel = $2 ORDER BY created_at, recipient',
      [sessionId, channel],
    )
  ).map((row) => row.recipient);

/** Records a receipt sent; false when this session, channel and recipient had one already. */
export async function insertReceiptDelivery(
  tx: Queryable,
  d: { sessionId: string; channel: ReceiptChannel; recipient: string; outboxId: string },
): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO receipt_deliveries (session_id, channel, recipient, outbox_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING RETURNING 1`,
    [d.sessionId, d.channel, d.recipient, d.outboxId],
  );
  return rows.length > 0;
}

/** A session of this merchant and environment by its receipt number (as stored), or null. */
export const findSessionIdByReceiptNumber = (
  db: Queryable,
  merchantId: string,
  environment: string,
  receiptNumber: string,
) =>
  firstRow(
    db.query<{ id: string }>(
      'SELECT id FROM checkout_sessions WHERE receipt_number = $1 AND merchant_id = $2 AND environment = $3',
      [receiptNumber, merchantId, environment],
    ),
  );
