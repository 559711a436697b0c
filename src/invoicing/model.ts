// Invoice lines and revenue lines (service codes): limits and per-line error shapes.

export const INVOICE_LINES_PER_REQUEST_MAX = 500;
export const REVENUE_LINES_PER_SYNC_MAX = 1_000;
export const LINE_CODE_LENGTH_MAX = 64;
export const LINE_NAME_LENGTH_MAX = 200;
export const LINE_AMOUNT_MAX_MINOR = 100_000_000;
export const LINE_CODE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:\/-]*$/;

/** One element of the errors array of an ingest or sync response: which line, why. */
export interface LineError {
  index: number;
  code: string;
  message: string;
}

export interface InvoiceLineRow {
  code: string;
  name: string;
  amount_minor: number;
  currency: string;
  remitted: boolean;
}

export interface RevenueLineRow {
  id: string;
  merchant_id: string;
  code: string;
  name: string;
  active: boolean;
  source: string;
  last_synced_at: Date;
  created_at: Date;
  updated_at: Date;
}

export const toRevenueLineResponse = (row: RevenueLineRow) => ({
  id: row.id,
  merchant_id: row.merchant_id,
  code: row.code,
  name: row.name,
  active: row.active,
  source: row.source,
  last_synced_at: row.last_synced_at.toISOString(),
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});
