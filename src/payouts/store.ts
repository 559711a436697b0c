import type { Environment } from '../accounts/model.ts';
import type { Queryable } from '../db/index.ts';
import { DEFAULT_DAILY_LIMIT_MINOR, DEFAULT_PAYOUT_LIMIT_MINOR, type AccountType, type PayoutStatus, type ProcessingStep } from './model.ts';

export interface SettingsRow {
  merchant_id: string;
  environment: Environment;
  payout_access: boolean;
  paused: boolean;
  payout_limit_minor: number;
  daily_limit_minor: number;
}

/** The settings row, created with defaults on first use (payout access on in Test, off in Live); locked when asked. */
export async function settingsFor(tx: Queryable, merchantId: string, environment: Environment, lock = false): Promise<SettingsRow> {
  const select = () =>
    tx.query<SettingsRow>(
      `SELECT merchant_id, environment, payout_access, paused, payout_limit_minor, daily_limit_minor
         FROM payout_settings WHERE merchant_id = $1 AND environment = $2${lock ? ' FOR UPDATE' : ''}`,
      [merchantId, environment],
      lock ? 'payout_settings_lock' : 'payout_settings',
    );
  const [row] = await select();
  if (row) return row;
  await tx.query(
    `INSERT INTO payout_settings (merchant_id, environment, payout_access, payout_limit_minor, daily_limit_minor)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    [merchantId, environment, environment === 'test', DEFAULT_PAYOUT_LIMIT_MINOR, DEFAULT_DAILY_LIMIT_MINOR],
  );
  return (await select())[0]!;
}

export const updateSettings = (
  tx: Queryable,
  merchantId: string,
  environment: Environment,
  change: Partial<Pick<SettingsRow, 'payout_access' | 'paused' | 'payout_limit_minor' | 'daily_limit_minor'>>,
) =>
  tx.query(
    `UPDATE payout_settings SET payout_access = coalesce($3, payout_access), paused = coalesce($4, paused),
            payout_limit_minor = coalesce($5, payout_limit_minor), daily_limit_minor = coalesce($6, daily_limit_minor), updated_at = now()
      WHERE merchant_id = $1 AND environment = $2`,
    [merchantId, environment, change.payout_access ?? null, change.paused ?? null, change.payout_limit_minor ?? null, change.daily_limit_minor ?? null],
  );

/** What deciding a new payout needs besides the settings and the recipient, read in one statement (after the settings lock). */
export interface PayoutContext {
  /** The payout already made with this client_reference, if any. */
  existing_id: string | null;
  has_active_endpoint: boolean;
  paid_out_today_minor: number;
  approval_required: boolean;
  key_creator_user_id: string | null;
}

export async function payoutContext(tx: Queryable, merchantId: string, environment: Environment, apiKeyId: string, clientReference: string): Promise<PayoutContext> {
  const rows = await tx.query<PayoutContext>(
    `SELECT (SELECT id FROM payouts WHERE merchant_id = $1 AND environment = $2 AND client_reference = $4) AS existing_id,
            EXISTS (SELECT 1 FROM webhook_endpoints WHERE api_key_id = $3 AND status = 'active') AS has_active_endpoint,
            -- Paid out today (Africa/Accra day, UTC+0 all year): every payout not failed or cancelled counts.
            (SELECT coalesce(sum(amount_minor), 0)::bigint FROM payouts
              WHERE merchant_id = $1 AND environment = $2 AND status NOT IN ('failed', 'cancelled')
                AND created_at >= (date_trunc('day', now() AT TIME ZONE 'Africa/Accra') AT TIME ZONE 'Africa/Accra')) AS paid_out_today_minor,
            (SELECT payout_approval_required FROM merchants WHERE id = $1) AS approval_required,
            (SELECT created_by_user_id FROM api_keys WHERE id = $3) AS key_creator_user_id`,
    [merchantId, environment, apiKeyId, clientReference],
    'payout_context',
  );
  return rows[0]!;
}

export interface RecipientRow {
  id: string;
  merchant_id: string;
  environment: Environment;
  account_type: AccountType;
  bank_id: string | null;
  bank_name: string | null;
  bank_code: string | null;
  account_number: string | null;
  network: 'mtn' | 'telecel' | 'at' | null;
  phone: string | null;
  account_name: string;
  verification_status: 'pending_verification' | 'verified' | 'rejected';
  rejection_reason: string | null;
  active: boolean;
  previous_version_id: string | null;
  created_at: Date;
  updated_at: Date;
  verified_at: Date | null;
}

const RECIPIENT_SELECT = `SELECT r.id, r.merchant_id, r.environment, r.account_type, r.bank_id, b.name AS bank_name, b.code AS bank_code,
  r.account_number, r.network, r.phone, r.account_name, r.verification_status, r.rejection_reason, r.active, r.previous_version_id,
  r.created_at, r.updated_at, r.verified_at
  FROM recipients r LEFT JOIN banks b ON b.id = r.bank_id`;

export async function insertRecipient(
  tx: Queryable,
  r: Pick<RecipientRow, 'id' | 'merchant_id' | 'environment' | 'account_type' | 'bank_id' | 'account_number' | 'network' | 'phone' | 'account_name' | 'previous_version_id'> & {
    apiKeyId: string | null;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO recipients (id, merchant_id, environment, account_type, bank_id, account_number, network, phone, account_name,
       verification_status, previous_version_id, created_by_api_key_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending_verification', $10, $11)`,
    [r.id, r.merchant_id, r.environment, r.account_type, r.bank_id, r.account_number, r.network, r.phone, r.account_name, r.previous_version_id, r.apiKeyId],
  );
}

export async function findRecipient(db: Queryable, merchantId: string, environment: Environment, id: string, lock = false): Promise<RecipientRow | null> {
  // By primary key, owner checked here: with owner columns in the WHERE, a planner without statistics
  // picks the merchant index and scans all of the merchant's rows (measured on sessions: 1.4 ms vs 0.09 ms).
  const row = (
    await db.query<RecipientRow>(`${RECIPIENT_SELECT} WHERE r.id = $1${lock ? ' FOR UPDATE OF r' : ''}`, [id], lock ? 'recipient_lock' : 'recipient_by_id')
  )[0];
  return row && row.merchant_id === merchantId && row.environment === environment ? row : null;
}

export const listRecipients = (db: Queryable, merchantId: string, environment: Environment) =>
  db.query<RecipientRow>(`${RECIPIENT_SELECT} WHERE r.merchant_id = $1 AND r.environment = $2 ORDER BY r.created_at, r.id`, [merchantId, environment]);

export const deactivateRecipient = (tx: Queryable, id: string) =>
  tx.query('UPDATE recipients SET active = false, updated_at = now() WHERE id = $1', [id]);

export const setRecipientVerification = (tx: Queryable, id: string, status: 'verified' | 'rejected', reason: string | null) =>
  tx.query(
    `UPDATE recipients SET verification_status = $2, rejection_reason = $3, verified_at = CASE WHEN $2 = 'verified' THEN now() ELSE verified_at END, updated_at = now()
      WHERE id = $1 AND verification_status = 'pending_verification'`,
    [id, status, reason],
  );

/** Test-mode recipients still waiting for verification after a short delay (the Test verifier's queue). */
export const pendingRecipients = (db: Queryable, olderThanS: number, limit: number) =>
  db.query<{ id: string; merchant_id: string; environment: Environment }>(
    `SELECT id, merchant_id, environment FROM recipients WHERE verification_status = 'pending_verification' AND environment = 'test'
       AND created_at <= now() - make_interval(secs => $1) ORDER BY created_at LIMIT $2`,
    [olderThanS, limit],
  );

export const hasOpenPayouts = async (db: Queryable, recipientId: string): Promise<boolean> =>
  (await db.query(`SELECT 1 FROM payouts WHERE recipient_id = $1 AND status IN ('requested', 'processing') LIMIT 1`, [recipientId])).length > 0;

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
  reconciliation_status: 'not_required' | 'unreconciled' | 'matched' | 'exception';
  failure_reason: string | null;
  cancel_reason: string | null;
  decided_by_user_id: string | null;
  decided_at: Date | null;
  next_step_at: Date | null;
  version: number;
  created_at: Date;
  updated_at: Date;
  paid_at: Date | null;
}

const PAYOUT_COLUMNS = `id, reference, merchant_id, environment, api_key_id, requested_by_user_id, client_reference, request_hash, recipient_id,
  status, processing_step, amount_minor, fee_minor, total_debit_minor, currency, notes, bank_reference, return_reference,
  reconciliation_status, failure_reason, cancel_reason, decided_by_user_id, decided_at, next_step_at, version, created_at, updated_at, paid_at`;

export async function insertPayout(
  tx: Queryable,
  p: Omit<PayoutRow, 'version' | 'created_at' | 'updated_at' | 'paid_at' | 'failure_reason' | 'cancel_reason' | 'decided_by_user_id' | 'decided_at' | 'return_reference'>,
): Promise<PayoutRow> {
  const rows = await tx.query<PayoutRow>(
    `INSERT INTO payouts (id, reference, merchant_id, environment, api_key_id, requested_by_user_id, client_reference, request_hash,
       recipient_id, status, processing_step, amount_minor, fee_minor, total_debit_minor, currency, notes, bank_reference,
       reconciliation_status, next_step_at, paid_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, CASE WHEN $10 = 'paid' THEN now() END)
     RETURNING ${PAYOUT_COLUMNS}`,
    [p.id, p.reference, p.merchant_id, p.environment, p.api_key_id, p.requested_by_user_id, p.client_reference, p.request_hash, p.recipient_id, p.status, p.processing_step, p.amount_minor, p.fee_minor, p.total_debit_minor, p.currency, p.notes, p.bank_reference, p.reconciliation_status, p.next_step_at],
  );
  return rows[0]!;
}

export async function findPayout(db: Queryable, merchantId: string, environment: Environment, id: string, lock = false): Promise<PayoutRow | null> {
  // By primary key, owner checked here (see findRecipient).
  const row = await findPayoutById(db, id, lock);
  return row && row.merchant_id === merchantId && row.environment === environment ? row : null;
}

export async function findPayoutById(db: Queryable, id: string, lock = false): Promise<PayoutRow | null> {
  const rows = await db.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0] ?? null;
}

export async function listPayouts(db: Queryable, merchantId: string, environment: Environment, page: number, limit: number, clientReference: string | null) {
  const filter = clientReference === null ? '' : 'AND client_reference = $5';
  const params: unknown[] = [merchantId, environment, limit, (page - 1) * limit];
  if (clientReference !== null) params.push(clientReference);
  const [rows, counts] = await Promise.all([
    db.query<PayoutRow>(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE merchant_id = $1 AND environment = $2 ${filter} ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, params),
    db.query<{ total: number }>(
      `SELECT count(*)::int AS total FROM payouts WHERE merchant_id = $1 AND environment = $2 ${clientReference === null ? '' : 'AND client_reference = $3'}`,
      clientReference === null ? [merchantId, environment] : [merchantId, environment, clientReference],
    ),
  ]);
  return { rows, total: counts[0]?.total ?? 0 };
}

export async function updatePayout(
  tx: Queryable,
  id: string,
  change: Partial<Pick<PayoutRow, 'status' | 'processing_step' | 'bank_reference' | 'return_reference' | 'reconciliation_status' | 'failure_reason' | 'cancel_reason' | 'decided_by_user_id' | 'next_step_at'>> & {
    decided?: boolean;
    paid?: boolean;
  },
): Promise<PayoutRow> {
  const sets: string[] = ['version = version + 1', 'updated_at = now()'];
  const params: unknown[] = [id];
  for (const key of ['status', 'processing_step', 'bank_reference', 'return_reference', 'reconciliation_status', 'failure_reason', 'cancel_reason', 'decided_by_user_id', 'next_step_at'] as const) {
    if (key in change) {
      params.push(change[key]);
      sets.push(`${key} = $${params.length}`);
    }
  }
  if (change.decided) sets.push('decided_at = now()');
  if (change.paid) sets.push('paid_at = now()');
  const rows = await tx.query<PayoutRow>(`UPDATE payouts SET ${sets.join(', ')} WHERE id = $1 RETURNING ${PAYOUT_COLUMNS}`, params);
  return rows[0]!;
}

/** Live payouts whose next processing step is due (the payout processor's queue), claimed without blocking others. */
export const duePayoutIds = (tx: Queryable, limit: number) =>
  tx.query<{ id: string }>(
    `SELECT id FROM payouts WHERE status = 'processing' AND environment = 'live' AND next_step_at <= now()
      ORDER BY next_step_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );

export interface EvidenceRow {
  id: string;
  payout_id: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  filename: string | null;
  created_at: Date;
}

export const insertEvidence = (
  tx: Queryable,
  e: { id: string; payoutId: string; merchantId: string; environment: Environment; contentType: string; data: Buffer; sha256: string; filename: string | null; uploadedBy: string },
) =>
  tx.query(
    `INSERT INTO payout_evidence (id, payout_id, merchant_id, environment, content_type, size_bytes, sha256, filename, data, uploaded_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [e.id, e.payoutId, e.merchantId, e.environment, e.contentType, e.data.length, e.sha256, e.filename, e.data, e.uploadedBy],
  );

export const listEvidence = (db: Queryable, payoutId: string) =>
  db.query<EvidenceRow>('SELECT id, payout_id, content_type, size_bytes, sha256, filename, created_at FROM payout_evidence WHERE payout_id = $1 ORDER BY created_at', [payoutId]);

export async function findEvidence(db: Queryable, payoutId: string, evidenceId: string) {
  const rows = await db.query<EvidenceRow & { data: Uint8Array }>(
    'SELECT id, payout_id, content_type, size_bytes, sha256, filename, created_at, data FROM payout_evidence WHERE id = $1 AND payout_id = $2',
    [evidenceId, payoutId],
  );
  return rows[0] ?? null;
}
