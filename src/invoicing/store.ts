import type { Queryable } from '../db/index.ts';
import type { InvoiceLineRow, RevenueLineRow } from './model.ts';

const REVENUE_COLUMNS = 'id, merchant_id, code, name, active, source, last_synced_at, created_at, updated_at';

/** Serialises syncs and ingests of one merchant and environment. */
export const lockMerchantLines = (tx: Queryable, merchantId: string, environment: string) =>
  tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`lines:${merchantId}:${environment}`]);

export const listRevenueLines = (db: Queryable, merchantId: string, environment: string, includeInactive: boolean) =>
  db.query<RevenueLineRow>(
    `SELECT ${REVENUE_COLUMNS} FROM revenue_lines WHERE merchant_id = $1 AND environment = $2 ${includeInactive ? '' : 'AND active'} ORDER BY code`,
    [merchantId, environment],
  );

export async function countRevenueLines(db: Queryable, merchantId: string, environment: string) {
  const rows = await db.query<{ total: number; active: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE active)::int AS active FROM revenue_lines WHERE merchant_id = $1 AND environment = $2`,
    [merchantId, environment],
  );
  const { total, active } = rows[0] ?? { total: 0, active: 0 };
  return { total, active, inactive: total - active };
}

export const insertRevenueLine = (
  tx: Queryable,
  r: { id: string; merchantId: string; environment: string; code: string; name: string },
) =>
  tx.query(`INSERT INTO revenue_lines (id, merchant_id, environment, code, name) VALUES ($1, $2, $3, $4, $5)`, [
    r.id,
    r.merchantId,
    r.environment,
    r.code,
    r.name,
  ]);

export const updateRevenueLine = (tx: Queryable, id: string, name: string, active: boolean, changed: boolean) =>
  tx.query(
    `UPDATE revenue_lines SET name = $2, active = $3, last_synced_at = now()${changed ? ', updated_at = now()' : ''} WHERE id = $1`,
    [id, name, active],
  );

export const activeRevenueCodes = async (db: Queryable, merchantId: string, environment: string, codes: string[]) =>
  new Set(
    (
      await db.query<{ code: string }>(
        `SELECT code FROM revenue_lines WHERE merchant_id = $1 AND environment = $2 AND active AND code = ANY($3::text[])`,
        [merchantId, environment, codes],
      )
    ).map((row) => row.code),
  );

export const listInvoiceLines = (db: Queryable, merchantId: string, environment: string, invoiceRef: string) =>
  db.query<InvoiceLineRow>(
    `SELECT code, name, amount_minor, currency, remitted FROM invoice_lines
      WHERE merchant_id = $1 AND environment = $2 AND invoice_ref = $3 ORDER BY created_at, code`,
    [merchantId, environment, invoiceRef],
  );

/** Upserts one line unless it is remitted; returns false when a remitted line blocked it. */
export async function upsertInvoiceLine(
  tx: Queryable,
  l: {
    merchantId: string;
    environment: string;
    invoiceRef: string;
    code: string;
    name: string;
    amountMinor: number;
    currency: string;
  },
): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO invoice_lines (merchant_id, environment, invoice_ref, code, name, amount_minor, currency)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (merchant_id, environment, invoice_ref, code)
     DO UPDATE SET name = EXCLUDED.name, amount_minor = EXCLUDED.amount_minor, currency = EXCLUDED.currency, updated_at = now()
       WHERE invoice_lines.remitted = false
     RETURNING 1`,
    [l.merchantId, l.environment, l.invoiceRef, l.code, l.name, l.amountMinor, l.currency],
  );
  return rows.length === 1;
}

/** Marks an invoice's lines remitted (called when a session with that invoice_ref succeeds). */
export const markInvoiceRemitted = (tx: Queryable, merchantId: string, environment: string, invoiceRef: string) =>
  tx.query(
    `UPDATE invoice_lines SET remitted = true, updated_at = now() WHERE merchant_id = $1 AND environment = $2 AND invoice_ref = $3 AND NOT remitted`,
    [merchantId, environment, invoiceRef],
    'invoice_lines_remitted',
  );
