// SQL of the operator approval requests (migration 028) and of what the review page decides on.
import type { Queryable } from '../db/index.ts';
import { cursorParams, type ConsolePageQuery } from '../lib/list-paging.ts';
import { firstRow, firstValue } from '../db/first-row.ts';
import type { Transition } from '../lib/state-machine.ts';
import { approvalMachine, type ApprovalKind, type ApprovalStatus } from './approvals-model.ts';

export interface ApprovalRow {
  id: string;
  kind: ApprovalKind;
  object_type: string;
  object_id: string;
  payload: Record<string, unknown>;
  reason: string;
  merchant_id: string;
  merchant_name: string;
  environment: 'test' | 'live';
  status: ApprovalStatus;
  requested_by: string;
  requested_by_email: string;
  decided_by: string | null;
  decided_by_email: string | null;
  decision_note: string | null;
  created_at: Date;
  decided_at: Date | null;
}

const COLUMNS = `r.id, r.kind, r.object_type, r.object_id, r.payload, r.reason, r.merchant_id, m.name AS merchant_name, r.environment, r.status,
  r.requested_by, r.requested_by_email, r.decided_by, r.decided_by_email, r.decision_note, r.created_at, r.decided_at`;

/** What a filed request is about: its kind, the object it changes, what it would do and why. */
export interface ApprovalRequest {
  kind: ApprovalKind;
  objectType: string;
  objectId: string;
  payload: unknown;
  reason: string;
  merchantId: string;
  environment: string;
}

export async function insertApproval(
  tx: Queryable,
  a: ApprovalRequest & { id: string; requestedBy: string; requestedByEmail: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO operator_approvals (id, kind, object_type, object_id, payload, reason, merchant_id, environment, status, requested_by, requested_by_email)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      a.id,
      a.kind,
      a.objectType,
      a.objectId,
      JSON.stringify(a.payload),
      a.reason,
      a.merchantId,
      a.environment,
      approvalMachine.initialStatus('pending'),
      a.requestedBy,
      a.requestedByEmail,
    ],
  );
}

/** A request by its id as typed (compared as text: a malformed id is simply not found), locked when asked. */
export const findApproval = (db: Queryable, id: string, lock = false) =>
  firstRow(
    db.query<ApprovalRow>(
      `SELECT ${COLUMNS} FROM operator_approvals r JOIN merchants m ON m.id = r.merchant_id WHERE r.id::text = $1${lock ? ' FOR UPDATE OF r' : ''}`,
      [id],
    ),
  );

export const pendingApprovalFor = (db: Queryable, objectType: string, objectId: string) =>
  firstValue(
    db.query<{ id: string }>(
      `SELECT id FROM operator_approvals WHERE object_type = $1 AND object_id = $2 AND status = 'pending'`,
      [objectType, objectId],
    ),
    'id',
  );

export async function decideApproval(
  tx: Queryable,
  id: string,
  move: Transition<ApprovalStatus>,
  d: { by: string; email: string; note: string | null },
): Promise<void> {
  await tx.query(
    `UPDATE operator_approvals SET status = $2, decided_by = $3, decided_by_email = $4, decision_note = $5, decided_at = now() WHERE id = $1`,
    [id, approvalMachine.check(move).to, d.by, d.email, d.note],
  );
}

/** Pending requests, oldest first, and decided ones, the latest first. */
export const listApprovals = (db: Queryable, which: 'pending' | 'decided', limit: number) =>
  db.query<ApprovalRow>(
    `SELECT ${COLUMNS} FROM operator_approvals r JOIN merchants m ON m.id = r.merchant_id
      WHERE ${which === 'pending' ? `r.status = 'pending' ORDER BY r.created_at, r.id` : `r.status <> 'pending' ORDER BY r.decided_at DESC, r.id DESC`} LIMIT $1`,
    [limit],
  );

export const operatorRole = (db: Queryable, operatorId: string) =>
  firstValue(db.query<{ role: string }>('SELECT role FROM operators WHERE id::text = $1', [operatorId]), 'role');

// ---- what a held attempt's decision is made on ----

export interface HeldAttemptDetail {
  id: string;
  session_id: string;
  merchant_id: string;
  merchant_name: string;
  environment: 'test' | 'live';
  rail: string;
  provider: string;
  provider_reference: string;
  status: string;
  raw_status: string;
  amount_charged_minor: number;
  fee_minor: number;
  bearer: 'payer' | 'merchant';
  version: number;
  /** What was received: the statement credit held with it, else what the attempt records. */
  received_minor: number | null;
  line_id: string | null;
  line_bank_code: string | null;
  line_value_date: string | null;
  line_number: number | null;
  line_narration: string | null;
  line_bank_reference: string | null;
  slip_reference: string | null;
  slip_recorded_at: Date | null;
  slip_branch: string | null;
  pending_approval_id: string | null;
  updated_at: Date;
}

const HELD_SELECT = `SELECT a.id, a.session_id, a.merchant_id, m.name AS merchant_name, a.environment, a.rail, a.provider, a.provider_reference, a.status, a.raw_status,
         a.amount_charged_minor, a.fee_minor, a.bearer, a.version, a.updated_at,
         coalesce(l.amount_minor, a.amount_received_minor) AS received_minor,
         l.id AS line_id, l.bank_code AS line_bank_code, to_char(l.value_date, 'YYYY-MM-DD') AS line_value_date, l.line_number, l.narration AS line_narration,
         l.bank_reference AS line_bank_reference,
         cs.reference AS slip_reference, cs.recorded_at AS slip_recorded_at, (b.name || ' · ' || br.name) AS slip_branch,
         (SELECT r.id FROM operator_approvals r WHERE r.object_type = 'payment_attempt' AND r.object_id = a.id AND r.status = 'pending') AS pending_approval_id
    FROM payment_attempts a JOIN merchants m ON m.id = a.merchant_id
    LEFT JOIN LATERAL (SELECT * FROM statement_lines sl WHERE sl.attempt_id = a.id AND sl.status = 'amount_mismatch' ORDER BY sl.created_at DESC LIMIT 1) l ON true
    LEFT JOIN cash_slips cs ON cs.attempt_id = a.id
    LEFT JOIN bank_branches br ON br.id = cs.recorded_branch_id LEFT JOIN banks b ON b.id = br.bank_id`;

export interface HeldQuery extends ConsolePageQuery {
  q: string;
  qPattern: string;
  environment: string | null;
  status: string | null;
}

/** Attempts held for an operator, the longest waiting first (keyset on updated_at, id), searched by id, reference or merchant. */
export const listHeldAttempts = (db: Queryable, query: HeldQuery) =>
  db.query<HeldAttemptDetail>(
    `SELECT * FROM (${HELD_SELECT}
      WHERE a.status IN ('manual_review', 'amount_mismatch')
        AND ($1 = '' OR a.id = $1 OR a.session_id = $1 OR upper(a.provider_reference) = upper($1) OR m.name ILIKE $2 ESCAPE '\\')
        AND ($3::text IS NULL OR a.environment = $3) AND ($4::text IS NULL OR a.status = $4)
        AND ($5::timestamptz IS NULL OR (date_trunc('milliseconds', a.updated_at), a.id) > ($5::timestamptz, $6::text))) x
      ORDER BY date_trunc('milliseconds', x.updated_at), x.id LIMIT $7`,
    [query.q, query.qPattern, query.environment, query.status, ...cursorParams(query.cursor), query.limit],
  );

export const findHeldAttempt = (db: Queryable, attemptId: string) =>
  firstRow(db.query<HeldAttemptDetail>(`${HELD_SELECT} WHERE a.id = $1`, [attemptId]));
