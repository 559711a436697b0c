// The operator console's SQL: merchants, banks and branches (payouts read the active ones: payouts/bank-store.ts), operators, and the lists the console shows.
import type { Queryable } from '../db/index.ts';
import { cursorParams, type ConsolePageQuery } from '../lib/list-paging.ts';
import { firstRow } from '../db/first-row.ts';
import { merchantBalanceItem } from '../ledger/statement.ts';

/** Rows on one console list (merchants, held attempts, Live payouts, the audit log): the newest or oldest first, no paging. */
export const CONSOLE_LIST_ROWS_MAX = 200;

export type BankTable = 'banks' | 'bank_branches';

export const insertOperator = (
  tx: Queryable,
  o: { id: string; email: string; passwordHash: string; role: 'operator' | 'teller' | 'compliance' },
) =>
  tx.query('INSERT INTO operators (id, email, password_hash, role) VALUES ($1, $2, $3, $4)', [
    o.id,
    o.email,
    o.passwordHash,
    o.role,
  ]);

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

export interface MerchantListQuery extends ConsolePageQuery {
  /** Matched case-insensitively in the name and the emails (the merchant's and its users'), or exactly as the id. */
  q: string;
  /** The ILIKE pattern of q (wildcards escaped, backslash the escape character). */
  qPattern: string;
  filters: MerchantListFilters;
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
              ${merchantBalanceItem('m.id', "'live'")} AS live_balance_minor
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
      ...cursorParams(query.cursor),
      query.filters.live_payouts ?? null,
      query.filters.paused ?? null,
      query.filters.live_balance ?? null,
      query.limit,
    ],
  );

/** A checkout session found by a reference a payer or a provider's support reads out, with one of its attempts (any merchant, either environment). */
export interface PaymentSearchRow {
  session_id: string;
  merchant_id: string;
  merchant_name: string;
  environment: 'test' | 'live';
  session_status: string;
  amount_minor: number;
  invoice_ref: string;
  session_created_at: Date;
  /** The attempt that matched (or, for a session found by its id, each of its attempts); null: a session without attempts. */
  attempt_id: string | null;
  rail: string | null;
  network: string | null;
  provider: string | null;
  provider_reference: string | null;
  provider_transaction_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
  attempt_status: string | null;
  amount_charged_minor: number | null;
  attempt_created_at: Date | null;
}

const PAYMENT_SEARCH_COLUMNS = `s.id AS session_id, s.merchant_id, m.name AS merchant_name, s.environment, s.status AS session_status, s.amount_minor,
       s.invoice_ref, s.created_at AS session_created_at, a.id AS attempt_id, a.rail, a.network, a.provider, a.provider_reference,
       a.provider_transaction_id, a.card_brand, a.card_last4, a.status AS attempt_status, a.amount_charged_minor, a.created_at AS attempt_created_at`;

/**
 * Sessions named by one of `references` (a search text as typed and in upper and lower case: our ids are lower
 * case, Test and bank transfer references upper case): through an attempt whose provider transaction id, provider
 * reference or id it is, or by the session's own id or receipt number (then with each of its attempts). Newest attempt first. Every
 * arm is an equality, never a pattern (a reference is looked up, not searched in), on an indexed column: ids,
 * provider_transaction_id (migration 033) and provider_reference (which needs its own index across providers:
 * 019 and 020 index it per Live provider only).
 */
export const findPaymentsByReference = (db: Queryable, references: readonly string[], limit: number) =>
  db.query<PaymentSearchRow>(
    `(SELECT ${PAYMENT_SEARCH_COLUMNS}
        FROM payment_attempts a JOIN checkout_sessions s ON s.id = a.session_id JOIN merchants m ON m.id = s.merchant_id
       WHERE a.provider_transaction_id = ANY($1::text[]) OR (a.provider_reference = ANY($1::text[]) AND a.provider_reference <> '') OR a.id = ANY($1::text[]))
     UNION
     (SELECT ${PAYMENT_SEARCH_COLUMNS}
        FROM checkout_sessions s JOIN merchants m ON m.id = s.merchant_id LEFT JOIN payment_attempts a ON a.session_id = s.id
       WHERE s.id = ANY($1::text[]) OR s.receipt_number = ANY($1::text[]))
     ORDER BY attempt_created_at DESC NULLS LAST, session_created_at DESC, attempt_id DESC LIMIT $2`,
    [references, limit],
  );

export interface OpsMerchantRow {
  id: string;
  name: string;
  email: string;
  payout_approval_required: boolean;
  created_at: Date;
}

/** By the id as typed in the address (compared as text, so a malformed id is simply not found). */
export const findMerchant = (db: Queryable, merchantId: string) =>
  firstRow(
    db.query<OpsMerchantRow>(
      'SELECT id, name, email, payout_approval_required, created_at FROM merchants WHERE id::text = $1',
      [merchantId],
    ),
  );

export const listBanks = (db: Queryable) =>
  db.query<{ id: string; name: string; code: string; active: boolean }>(
    'SELECT id, name, code, active FROM banks ORDER BY name',
  );

export const listBranches = (db: Queryable) =>
  db.query<{ id: string; bank_id: string; name: string; code: string; active: boolean }>(
    'SELECT id, bank_id, name, code, active FROM bank_branches ORDER BY name',
  );

/** Active branches of active banks, labelled "Bank · Branch", for the teller's choice. */
export const listActiveBranchOptions = (db: Queryable) =>
  db.query<{ id: string; label: string }>(
    `SELECT br.id, b.name || ' · ' || br.name AS label FROM bank_branches br JOIN banks b ON b.id = br.bank_id WHERE br.active AND b.active ORDER BY b.name, br.name`,
  );

export async function insertBank(tx: Queryable, b: { name: string; code: string }): Promise<string> {
  const rows = await tx.query<{ id: string }>('INSERT INTO banks (name, code) VALUES ($1, $2) RETURNING id', [
    b.name,
    b.code,
  ]);
  return rows[0]!.id;
}

export async function bankExists(tx: Queryable, bankId: string): Promise<boolean> {
  const rows = await tx.query('SELECT 1 FROM banks WHERE id = $1', [bankId]);
  return rows.length > 0;
}

export async function insertBranch(tx: Queryable, b: { bankId: string; name: string; code: string }): Promise<string> {
  const rows = await tx.query<{ id: string }>(
    'INSERT INTO bank_branches (bank_id, name, code) VALUES ($1, $2, $3) RETURNING id',
    [b.bankId, b.name, b.code],
  );
  return rows[0]!.id;
}

/** A bank or branch locked for a change of its active flag; `table` is one of two fixed names, never input. */
export const lockBankOrBranch = (tx: Queryable, table: BankTable, id: string) =>
  firstRow(
    tx.query<{ active: boolean; name: string }>(`SELECT active, name FROM ${table} WHERE id = $1 FOR UPDATE`, [id]),
  );

export const setBankOrBranchActive = (tx: Queryable, table: BankTable, id: string, active: boolean) =>
  tx.query(`UPDATE ${table} SET active = $2 WHERE id = $1`, [id, active]);
