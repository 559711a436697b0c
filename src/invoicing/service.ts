import type { ApiPrincipal } from '../lib/environment.ts';
import { normaliseCurrency } from '../lib/currency.ts';
import type { Queryable } from '../db/index.ts';
import { newUuid } from '../lib/ids.ts';
import { LINE_CODE_PATTERN, lineCodeOf, parseInvoiceLine, parseRevenueLine, type LineError } from './model.ts';
import * as store from './store.ts';

export interface IngestInput {
  invoice_ref: string;
  currency?: string;
  /** As sent: each line is checked here, on its own (parseInvoiceLine). */
  lines: readonly unknown[];
}

export interface IngestResult {
  object: 'invoice.line_items';
  invoice_ref: string;
  ingested: number;
  billed_minor: number;
  errors: LineError[];
}

/**
 * Stores the good lines and reports each bad one by index (DESIGN §3): a line must have the documented
 * shape (a code, a name, an amount of 1 pesewa or more), its code must be an active revenue line and
 * appear once; a remitted line is never changed.
 */
export async function ingestInvoiceLines(
  tx: Queryable,
  principal: ApiPrincipal,
  input: IngestInput,
): Promise<IngestResult> {
  const currency = normaliseCurrency(input.currency);
  const { merchantId, environment } = principal;
  const parsed = input.lines.map(parseInvoiceLine);
  await store.lockMerchantLines(tx, merchantId, environment);
  const active = await store.activeRevenueCodes(tx, merchantId, environment, [
    ...new Set(parsed.flatMap((p) => (p.ok ? [p.line.code] : []))),
  ]);
  const errors: LineError[] = [];
  const seen = new Set<string>();
  let ingested = 0;
  let billedMinor = 0;
  for (const [index, result] of parsed.entries()) {
    if (!result.ok) {
      errors.push({ index, code: result.code, message: result.message });
      continue;
    }
    const line = result.line;
    if (seen.has(line.code)) {
      errors.push({
        index,
        code: 'INVALID_ARGUMENT',
        message: `code ${line.code} appears more than once in this request`,
      });
      continue;
    }
    seen.add(line.code);
    if (!active.has(line.code)) {
      errors.push({
        index,
        code: 'INVALID_ARGUMENT',
        message: `code ${line.code} is not an active revenue line; sync revenue lines first`,
      });
      continue;
    }
    const stored = await store.upsertInvoiceLine(tx, {
      merchantId,
      environment,
      invoiceRef: input.invoice_ref,
      code: line.code,
      name: line.name,
      amountMinor: line.amount_minor,
      currency,
    });
    if (!stored) {
      errors.push({
        index,
        code: 'INVOICE_LINE_REMITTED',
        message: `line ${line.code} of this invoice is already paid and cannot change`,
      });
      continue;
    }
    ingested += 1;
    billedMinor += line.amount_minor;
  }
  return { object: 'invoice.line_items', invoice_ref: input.invoice_ref, ingested, billed_minor: billedMinor, errors };
}

export async function listInvoiceLines(db: Queryable, principal: ApiPrincipal, invoiceRef: string) {
  const lines = await store.listInvoiceLines(db, principal.merchantId, principal.environment, invoiceRef);
  return {
    object: 'invoice.line_items' as const,
    invoice_ref: invoiceRef,
    lines,
    total_minor: lines.reduce((sum, line) => sum + line.amount_minor, 0),
  };
}

export interface SyncInput {
  /** As sent: each line is checked here, on its own (parseRevenueLine). */
  lines: readonly unknown[];
  deactivate_missing?: boolean;
}

export interface SyncResult {
  object: 'revenue_lines.sync';
  created: number;
  updated: number;
  reactivated: number;
  deactivated: number;
  unchanged: number;
  total: number;
  errors: LineError[];
}

/** Makes the merchant's revenue lines match the list; `total` counts all its lines after the sync. */
export async function syncRevenueLines(tx: Queryable, principal: ApiPrincipal, input: SyncInput): Promise<SyncResult> {
  const { merchantId, environment } = principal;
  await store.lockMerchantLines(tx, merchantId, environment);
  const existing = new Map(
    (await store.listRevenueLines(tx, merchantId, environment, true)).map((row) => [row.code, row]),
  );
  const result: SyncResult = {
    object: 'revenue_lines.sync',
    created: 0,
    updated: 0,
    reactivated: 0,
    deactivated: 0,
    unchanged: 0,
    total: 0,
    errors: [],
  };
  const requested = new Set<string>();
  for (const [index, value] of input.lines.entries()) {
    const parsed = parseRevenueLine(value);
    if (!parsed.ok) {
      result.errors.push({ index, code: parsed.code, message: parsed.message });
      continue;
    }
    const line = parsed.line;
    const name = line.name.trim();
    if (!LINE_CODE_PATTERN.test(line.code)) {
      result.errors.push({
        index,
        code: 'INVALID_ARGUMENT',
        message: 'code must start with a letter or digit and use only letters, digits and _ . : / -',
      });
      continue;
    }
    if (name === '') {
      result.errors.push({ index, code: 'INVALID_ARGUMENT', message: 'name must not be blank' });
      continue;
    }
    if (requested.has(line.code)) {
      result.errors.push({
        index,
        code: 'INVALID_ARGUMENT',
        message: `code ${line.code} appears more than once in this request`,
      });
      continue;
    }
    requested.add(line.code);
    const row = existing.get(line.code);
    if (!row) {
      await store.insertRevenueLine(tx, { id: newUuid(), merchantId, environment, code: line.code, name });
      result.created += 1;
    } else if (!row.active) {
      await store.updateRevenueLine(tx, row.id, name, true, true);
      result.reactivated += 1;
    } else if (row.name !== name) {
      await store.updateRevenueLine(tx, row.id, name, true, true);
      result.updated += 1;
    } else {
      await store.updateRevenueLine(tx, row.id, name, true, false);
      result.unchanged += 1;
    }
  }
  if (input.deactivate_missing) {
    // A code named by any line stays active, even when its line failed: a typo in a name must not deactivate it.
    const requestedCodes = new Set(input.lines.map(lineCodeOf));
    for (const row of existing.values()) {
      if (row.active && !requestedCodes.has(row.code)) {
        await store.updateRevenueLine(tx, row.id, row.name, false, true);
        result.deactivated += 1;
      }
    }
  }
  result.total = (await store.countRevenueLines(tx, merchantId, environment)).total;
  return result;
}

export async function listRevenueLines(db: Queryable, principal: ApiPrincipal, includeInactive: boolean) {
  const [lines, counts] = await Promise.all([
    store.listRevenueLines(db, principal.merchantId, principal.environment, includeInactive),
    store.countRevenueLines(db, principal.merchantId, principal.environment),
  ]);
  return { lines, counts };
}

/** Every revenue line of a merchant's environment, inactive ones included (the dashboard's list). */
export const allRevenueLines = (db: Queryable, merchantId: string, environment: string) =>
  store.listRevenueLines(db, merchantId, environment, true);

/** An invoice's lines as stored, for another domain's reads (a session's detail). */
export const invoiceLinesOf = (db: Queryable, merchantId: string, environment: string, invoiceRef: string) =>
  store.listInvoiceLines(db, merchantId, environment, invoiceRef);

/** Marks an invoice's lines remitted, in the caller's transaction (a session with that invoice_ref succeeded). */
export const markInvoiceRemitted = (tx: Queryable, merchantId: string, environment: string, invoiceRef: string) =>
  store.markInvoiceRemitted(tx, merchantId, environment, invoiceRef);
