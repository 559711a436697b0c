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
  /** The merchant's Live money (available and held), unapplied credits included. */
  live_balance_minor: number;
}

/** The merchants list's filters: Live payouts on or off, payouts paused in any environment, money held in Live. */
export interface MerchantListFilters {
  live_payouts?: 'on' | 'off';
  paused?: 'yes' | 'no';
  live_balance?: 'yes' | 'no';
}

export interface MerchantListQuery {
  /** Matched case-insensitively in the name and the emails (the merchant's and its users'), or exactly as the id. */
  q: string;
  /** The ILIKE pattern of q (wildcards escaped, backslash the escape character). */
  qPattern: string;
  filters: MerchantListFilters;
  /** The last row of the page before: (created_at, id); null for the first page. */
  cursor: { at: Date; id: string } | null;
  limit: number;
}

/**
 * Merchants, newest first (keyset on created_at, id), with their Live payout access, whether any environment's
 * payouts are paused and their Live balance; searched and filtered as the console list asks.
 */
export const listMerchants = (db: Queryable, query: MerchantListQuery) =>
  db.query<MerchantOverviewRow>(
    `SELECT * FROM (
       SELECT m.id, m.name, m.email, m.created_at,
              (SELECT payout_access FROM payout_settings s WHERE s.merchant_id = m.id AND s.environment = 'live') AS live_access,
              (SELECT bool_or(paused) FROM payout_settings s WHERE s.merchant_id = m.id) AS paused_any,
              (SELECT coalesce(-sum(a.balance_minor + coalesce((SELECT sum(l.amount_minor) FROM ledger_unapplied_lines l WHERE l.account_id = a.id), 0)), 0)::bigint
                 FROM ledger_accounts a WHERE a.merchant_id = m.id AND a.environment = 'live' AND a.kind IN ('merchant_available', 'merchant_held')) AS live_balance_minor
         FROM merchants m
        WHERE ($1 = '' OR m.id::text = lower($1) OR m.name ILIKE $2 ESCAPE '\\' OR m.email ILIKE $2 ESCAPE '\\'
               OR EXISTS (SELECT 1 FROM users u WHERE u.merchant_id = m.id AND u.email ILIKE $2 ESCAPE '\\'))
          AND ($3::timestamptz IS NULL OR (date_trunc('milliseconds', m.created_at), m.id) < ($3::timestamptz, $4::uuid))
     ) x
     WHERE ($5::text IS NULL OR coalesce(x.live_access, false) = ($5 = 'on'))
       AND ($6::text IS NULL OR coalesce(x.paused_any, false) = ($6 = 'yes'))
       AND ($7::text IS NULL OR (x.live_balance_minor <> 0) = ($7 = 'yes'))
     ORDER BY date_trunc('milliseconds', x.created_at) DESC, x.id DESC LIMIT $8`,
    [
      query.q,
      query.qPattern,
      query.cursor?.at ?? null,
      query.cursor?.id ?? null,
      query.filters.live_payouts ?? null,
      query.filters.paused ?? null,
      query.filters.live_balance ?? null,
      query.limit,
    ],
  );

export interface OpsMerchantRow {
  id: string;
  name: string;
  email: string;
  payout_approval_required: boolean;
  created_at: Date;
}

/** By the id as typed in the address (compared as text, so a malformed id is simply not found). */
export async function findMerchant(db: Queryable, merchantId: string): Promise<OpsMerchantRow | null> {
  const rows = await db.query<OpsMerchantRow>('SELECT id, name, email, payout_approval_required, created_at FROM merchants WHERE id::text = $1', [merchantId]);
  return rows[0] ?? null;
}

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
