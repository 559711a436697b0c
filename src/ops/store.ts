// The operator console's SQL: merchants, banks and branches (which the payout services read too), operators, and the lists the console shows.
import type { Queryable } from '../db/index.ts';

/** Rows on one console list (merchants, held attempts, Live payouts, the audit log): the newest or oldest first, no paging. */
export const CONSOLE_LIST_ROWS_MAX = 200;

export type BankTable = 'banks' | 'bank_branches';

export const insertOperator = (tx: Queryable, o: { id: string; email: string; passwordHash: string; role: 'operator' | 'teller' }) =>
  tx.query('INSERT INTO operators (id, email, password_hash, role) VALUES ($1, $2, $3, $4)', [o.id, o.email, o.passwordHash, o.role]);

export interface MerchantOverviewRow {
  id: string;
  name: string;
  email: string;
  created_at: Date;
  live_access: boolean | null;
  paused_any: boolean | null;
}

/** Merchants, newest first, with their Live payout access and whether any environment's payouts are paused. */
export const listMerchants = (db: Queryable, limit: number) =>
  db.query<MerchantOverviewRow>(
    `SELECT m.id, m.name, m.email, m.created_at,
            (SELECT payout_access FROM payout_settings s WHERE s.merchant_id = m.id AND s.environment = 'live') AS live_access,
            (SELECT bool_or(paused) FROM payout_settings s WHERE s.merchant_id = m.id) AS paused_any
       FROM merchants m ORDER BY m.created_at DESC LIMIT $1`,
    [limit],
  );

export interface OpsMerchantRow {
  id: string;
  name: string;
  email: string;
  payout_approval_required: boolean;
}

/** By the id as typed in the address (compared as text, so a malformed id is simply not found). */
export async function findMerchant(db: Queryable, merchantId: string): Promise<OpsMerchantRow | null> {
  const rows = await db.query<OpsMerchantRow>('SELECT id, name, email, payout_approval_required FROM merchants WHERE id::text = $1', [merchantId]);
  return rows[0] ?? null;
}

export interface HeldAttemptRow {
  id: string;
  session_id: string;
  merchant_name: string;
  environment: string;
  rail: string;
  status: string;
  amount_charged_minor: number;
  raw_status: string;
  updated_at: Date;
}

/** Attempts an operator must decide (manual_review, amount_mismatch), the longest waiting first. */
export const listHeldAttempts = (db: Queryable, limit: number) =>
  db.query<HeldAttemptRow>(
    `SELECT a.id, a.session_id, m.name AS merchant_name, a.environment, a.rail, a.status, a.amount_charged_minor, a.raw_status, a.updated_at
       FROM payment_attempts a JOIN merchants m ON m.id = a.merchant_id
      WHERE a.status IN ('manual_review', 'amount_mismatch') ORDER BY a.updated_at LIMIT $1`,
    [limit],
  );

export interface LivePayoutRow {
  id: string;
  reference: string;
  merchant_name: string;
  status: string;
  amount_minor: number;
  bank_reference: string;
  reconciliation_status: string;
  updated_at: Date;
}

/** Live payouts an operator may reconcile or record a return for, the most recently changed first. */
export const listLivePayouts = (db: Queryable, limit: number) =>
  db.query<LivePayoutRow>(
    `SELECT p.id, p.reference, m.name AS merchant_name, p.status, p.amount_minor, p.bank_reference, p.reconciliation_status, p.updated_at
       FROM payouts p JOIN merchants m ON m.id = p.merchant_id
      WHERE p.environment = 'live' AND p.status IN ('paid', 'returned', 'processing', 'requested') ORDER BY p.updated_at DESC LIMIT $1`,
    [limit],
  );

export const listBanks = (db: Queryable) =>
  db.query<{ id: string; name: string; code: string; active: boolean }>('SELECT id, name, code, active FROM banks ORDER BY name');

export const listBranches = (db: Queryable) =>
  db.query<{ id: string; bank_id: string; name: string; code: string; active: boolean }>('SELECT id, bank_id, name, code, active FROM bank_branches ORDER BY name');

/** Active branches of active banks, labelled "Bank · Branch", for the teller's choice. */
export const listActiveBranchOptions = (db: Queryable) =>
  db.query<{ id: string; label: string }>(
    `SELECT br.id, b.name || ' · ' || br.name AS label FROM bank_branches br JOIN banks b ON b.id = br.bank_id WHERE br.active AND b.active ORDER BY b.name, br.name`,
  );

export async function bankIsActive(db: Queryable, bankId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM banks WHERE id = $1 AND active', [bankId]);
  return rows.length > 0;
}

/** Active banks with their codes (the payout capabilities). */
export const listActiveBanksWithCode = (db: Queryable) =>
  db.query<{ id: string; name: string; code: string }>('SELECT id, name, code FROM banks WHERE active ORDER BY name');

/** Active banks for a recipient's bank choice in the dashboard. */
export const listActiveBanks = (db: Queryable) => db.query<{ id: string; name: string }>('SELECT id, name FROM banks WHERE active ORDER BY name');

export async function insertBank(tx: Queryable, b: { name: string; code: string }): Promise<string> {
  const rows = await tx.query<{ id: string }>('INSERT INTO banks (name, code) VALUES ($1, $2) RETURNING id', [b.name, b.code]);
  return rows[0]!.id;
}

export async function bankExists(tx: Queryable, bankId: string): Promise<boolean> {
  const rows = await tx.query('SELECT 1 FROM banks WHERE id = $1', [bankId]);
  return rows.length > 0;
}

export async function insertBranch(tx: Queryable, b: { bankId: string; name: string; code: string }): Promise<string> {
  const rows = await tx.query<{ id: string }>('INSERT INTO bank_branches (bank_id, name, code) VALUES ($1, $2, $3) RETURNING id', [b.bankId, b.name, b.code]);
  return rows[0]!.id;
}

/** A bank or branch locked for a change of its active flag; `table` is one of two fixed names, never input. */
export async function lockBankOrBranch(tx: Queryable, table: BankTable, id: string): Promise<{ active: boolean; name: string } | null> {
  const rows = await tx.query<{ active: boolean; name: string }>(`SELECT active, name FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
  return rows[0] ?? null;
}

export const setBankOrBranchActive = (tx: Queryable, table: BankTable, id: string, active: boolean) =>
  tx.query(`UPDATE ${table} SET active = $2 WHERE id = $1`, [id, active]);
