// Invoice lines and revenue lines (service codes): limits, the shape of one line, and per-line error shapes.
import { Type, type Static } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';

export const INVOICE_LINES_PER_REQUEST_MAX = 500;
export const REVENUE_LINES_PER_SYNC_MAX = 1_000;
export const LINE_CODE_LENGTH_MAX = 64;
export const LINE_NAME_LENGTH_MAX = 200;
export const LINE_AMOUNT_MAX_MINOR = 100_000_000;
export const LINE_CODE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:/-]*$/;

/** One element of the errors array of an ingest or sync response: which line, why. */
export interface LineError {
  index: number;
  code: string;
  message: string;
}

/** A line of an invoice-lines ingest, as documented. Each line of a request is checked on its own (parseInvoiceLine). */
export const InvoiceLineInput = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: LINE_CODE_LENGTH_MAX, description: 'An active revenue line code.' }),
    name: Type.String({ minLength: 1, maxLength: LINE_NAME_LENGTH_MAX }),
    amount_minor: Type.Integer({ minimum: 1, maximum: LINE_AMOUNT_MAX_MINOR, description: 'Pesewas.' }),
  },
  { title: 'Invoice line' },
);
export type InvoiceLineInput = Static<typeof InvoiceLineInput>;

/** A line of a revenue-lines sync, as documented; checked line by line (parseRevenueLine). */
export const RevenueLineInput = Type.Object(
  {
    code: Type.String({
      minLength: 1,
      maxLength: LINE_CODE_LENGTH_MAX,
      description: 'Letters, digits and _ . : / -, starting with a letter or digit.',
    }),
    name: Type.String({ minLength: 1, maxLength: LINE_NAME_LENGTH_MAX }),
  },
  { title: 'Revenue line' },
);
export type RevenueLineInput = Static<typeof RevenueLineInput>;

export type Parsed<T> = { ok: true; line: T } | { ok: false; code: string; message: string };

// Bodies are strict (no type coercion), as the app's body validator is; lines are not changed by the check.
const lineAjv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });
const checkInvoiceLine = lineAjv.compile<InvoiceLineInput>(InvoiceLineInput);
const checkRevenueLine = lineAjv.compile<RevenueLineInput>(RevenueLineInput);

/** The first thing wrong with a line, worded as the app's 400 messages are ("code must NOT have fewer than 1 characters"). */
function describe(error: ErrorObject | undefined, fields: string): { field: string; message: string } {
  if (!error) return { field: '', message: 'is invalid' };
  if (error.keyword === 'required') {
    const missing = String(error.params.missingProperty);
    return { field: missing, message: `${missing} is required` };
  }
  const field = error.instancePath.slice(1).replace(/\//g, '.');
  if (!field) return { field, message: `a line must be an object with ${fields}` };
  return { field, message: `${field} ${error.message ?? 'is invalid'}` };
}

/** The fields a line schema names, from a line that passed it: unknown fields are ignored, as in every body. */
const known = <T extends object>(schema: { properties: object }, line: T): T =>
  Object.fromEntries(Object.keys(schema.properties).map((key) => [key, line[key as keyof T]])) as T;

/** An ingest line, or why it is refused: an amount problem is INVOICE_LINE_AMOUNT_INVALID, anything else INVALID_ARGUMENT (DESIGN §3). */
export function parseInvoiceLine(value: unknown): Parsed<InvoiceLineInput> {
  if (checkInvoiceLine(value)) return { ok: true, line: known(InvoiceLineInput, value) };
  const { field, message } = describe(checkInvoiceLine.errors?.[0], 'code, name and amount_minor');
  if (field === 'amount_minor') {
    return {
      ok: false,
      code: 'INVOICE_LINE_AMOUNT_INVALID',
      message: `amount_minor must be an integer from 1 to ${LINE_AMOUNT_MAX_MINOR} pesewas`,
    };
  }
  return { ok: false, code: 'INVALID_ARGUMENT', message };
}

/** A sync line, or why it is refused (INVALID_ARGUMENT). */
export function parseRevenueLine(value: unknown): Parsed<RevenueLineInput> {
  if (checkRevenueLine(value)) return { ok: true, line: known(RevenueLineInput, value) };
  return {
    ok: false,
    code: 'INVALID_ARGUMENT',
    message: describe(checkRevenueLine.errors?.[0], 'code and name').message,
  };
}

/** The code a line names, if it names one as text (a listed code is never deactivated, even when its line failed). */
export const lineCodeOf = (value: unknown): string | null => {
  const code = value !== null && typeof value === 'object' ? (value as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : null;
};

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
