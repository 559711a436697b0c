// Recipients (the accounts payouts are sent to) and their verification: their SQL.
import type { Environment } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';
import { ownedRow } from '../db/owned-row.ts';
import { sqlList } from '../lib/state-machine.ts';
import { recipientMachine, type AccountType, type VerificationStatus } from './model.ts';

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
  verification_status: VerificationStatus;
  rejection_reason: string | null;
  active: boolean;
  previous_version_id: string | null;
  created_at: Date;
  updated_at: Date;
  verified_at: Date | null;
}

export const RECIPIENT_SELECT = `SELECT r.id, r.merchant_id, r.environment, r.account_type, r.bank_id, b.name AS bank_name, b.code AS bank_code,
  r.account_number, r.network, r.phone, r.account_name, r.verification_status, r.rejection_reason, r.active, r.previous_version_id,
  r.created_at, r.updated_at, r.verified_at
  FROM recipients r LEFT JOIN banks b ON b.id = r.bank_id`;

const RECIPIENT_INITIAL = recipientMachine.initialStatus('pending_verification');

export async function insertRecipient(
  tx: Queryable,
  r: Pick<
    RecipientRow,
    | 'id'
    | 'merchant_id'
    | 'environment'
    | 'account_type'
    | 'bank_id'
    | 'account_number'
    | 'network'
    | 'phone'
    | 'account_name'
    | 'previous_version_id'
  > & {
    apiKeyId: string | null;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO recipients (id, merchant_id, environment, account_type, bank_id, account_number, network, phone, account_name,
       verification_status, previous_version_id, created_by_api_key_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, '${RECIPIENT_INITIAL}', $10, $11)`,
    [
      r.id,
      r.merchant_id,
      r.environment,
      r.account_type,
      r.bank_id,
      r.account_number,
      r.network,
      r.phone,
      r.account_name,
      r.previous_version_id,
      r.apiKeyId,
    ],
  );
}

/** A recipient of this merchant and environment, or null (by primary key, see ownedRow). */
export const findRecipient = (db: Queryable, merchantId: string, environment: Environment, id: string, lock = false) =>
  ownedRow(
    firstRow(
      db.query<RecipientRow>(
        `${RECIPIENT_SELECT} WHERE r.id = $1${lock ? ' FOR UPDATE OF r' : ''}`,
        [id],
        lock ? 'recipient_lock' : 'recipient_by_id',
      ),
    ),
    merchantId,
    environment,
  );

export const listRecipients = (db: Queryable, merchantId: string, environment: Environment) =>
  db.query<RecipientRow>(
    `${RECIPIENT_SELECT} WHERE r.merchant_id = $1 AND r.environment = $2 ORDER BY r.created_at, r.id`,
    [merchantId, environment],
  );

export const deactivateRecipient = (tx: Queryable, id: string) =>
  tx.query('UPDATE recipients SET active = false, updated_at = now() WHERE id = $1', [id]);

/** The verdict on a recipient, written only over a status that may move to it (else nothing changes). */
export const setRecipientVerification = (
  tx: Queryable,
  id: string,
  status: 'verified' | 'rejected',
  reason: string | null,
) =>
  tx.query(
    `UPDATE recipients SET verification_status = $2, rejection_reason = $3, verified_at = CASE WHEN $2 = 'verified' THEN now() ELSE verified_at END, updated_at = now()
      WHERE id = $1 AND verification_status IN (${sqlList(recipientMachine.fromStatusesTo(status))})`,
    [id, status, reason],
  );

/** Test-mode recipients still waiting for verification after a short delay (the Test verifier's queue). */
export const pendingRecipients = (db: Queryable, olderThanS: number, limit: number) =>
  db.query<{ id: string; merchant_id: string; environment: Environment }>(
    `SELECT id, merchant_id, environment FROM recipients WHERE verification_status = 'pending_verification' AND environment = 'test'
       AND created_at <= now() - make_interval(secs => $1) ORDER BY created_at LIMIT $2`,
    [olderThanS, limit],
  );
