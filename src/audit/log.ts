// The audit log: every operator and approver action with who, what, when, before and after, written in
// the transaction of the action itself. Append-only in storage (a trigger refuses UPDATE and DELETE); its
// SQL is in store.ts.
import type { Queryable } from '../db/index.ts';
import { dayStart } from '../books/model.ts';
import { errors } from '../lib/errors.ts';
import { auditDiff } from './diff.ts';
import * as store from './store.ts';

export interface Actor {
  /** api_key: a merchant's API request (id: the key's id), e.g. an event replay (migration 026). */
  /** cli: a change made with the sika command (id: the OS user and host, user@host; migration 029). */
  type: 'operator' | 'user' | 'system' | 'api_key' | 'cli';
  id: string;
  email: string | null;
}

export const audit = (
  tx: Queryable,
  entry: {
    actor: Actor;
    merchantId: string | null;
    action: string;
    objectType: string;
    objectId: string;
    before: unknown;
    after: unknown;
  },
) =>
  store.insertAudit(tx, {
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    actorEmail: entry.actor.email,
    merchantId: entry.merchantId,
    action: entry.action,
    objectType: entry.objectType,
    objectId: entry.objectId,
    before: entry.before === undefined ? null : JSON.stringify(entry.before),
    after: entry.after === undefined ? null : JSON.stringify(entry.after),
  });

/** A change to a merchant's own account or settings, audited on the merchant itself. */
export const auditMerchant = (
  tx: Queryable,
  actor: Actor,
  merchantId: string,
  change: { action: string; before: unknown; after: unknown },
) => audit(tx, { actor, merchantId, objectType: 'merchant', objectId: merchantId, ...change });

// ---- the audit page's reads ----

export type { AuditLogRow } from './store.ts';

/** An audit page's filters as typed (each optional); days are Africa/Accra days, YYYY-MM-DD, both included. */
export interface AuditQuery {
  q: string;
  actor?: string;
  merchant?: string;
  action?: string;
  object_type?: string;
  object_id?: string;
  from?: string;
  to?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The start of an Accra day (YYYY-MM-DD, a real calendar day), or null when it is not one. */
function accraDayStart(day: string): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const at = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== day) return null;
  return dayStart(day);
}

/** The store's filter for a query, or a refusal naming the date that is not a day (or a range that ends before it starts). */
export function auditFilter(
  query: AuditQuery,
  cursor: { at: Date; id: string } | null,
  limit: number,
): store.AuditFilter {
  const from = query.from ? accraDayStart(query.from) : null;
  if (query.from && !from)
    throw errors.invalidArgument('The "From" date is not a calendar day.', [
      { field: 'from', message: 'is not a calendar day' },
    ]);
  const toStart = query.to ? accraDayStart(query.to) : null;
  if (query.to && !toStart)
    throw errors.invalidArgument('The "To" date is not a calendar day.', [
      { field: 'to', message: 'is not a calendar day' },
    ]);
  const before = toStart ? dayStart(new Date(toStart.getTime() + 36 * 3_600_000).toISOString().slice(0, 10)) : null;
  if (from && before && before <= from)
    throw errors.invalidArgument('The "To" date is before the "From" date.', [
      { field: 'to', message: 'is before from' },
    ]);
  const merchant = query.merchant ?? null;
  return {
    qPattern: query.q ? likePattern(query.q) : null,
    actor: query.actor ?? null,
    merchantId: merchant && UUID.test(merchant) ? merchant.toLowerCase() : null,
    merchantNamePattern: merchant && !UUID.test(merchant) ? likePattern(merchant) : null,
    action: query.action ?? null,
    objectType: query.object_type ?? null,
    objectId: query.object_id ?? null,
    from,
    before,
    // The cursor is opaque to the browser: one that does not name an audit row is the first page.
    cursor: cursor && /^\d{1,18}$/.test(cursor.id) ? cursor : null,
    limit,
  };
}

/** Audit rows matching the filter, newest first, each with its before/after as field changes. */
export async function auditEntries(db: Queryable, filter: store.AuditFilter) {
  const rows = await store.listAudit(db, filter);
  return rows.map((row) => ({ ...row, id: String(row.id), changes: auditDiff(row.before, row.after) }));
}
export type AuditEntry = Awaited<ReturnType<typeof auditEntries>>[number];

/** The actions and object types the log holds (the filters' choices). */
export async function auditChoices(db: Queryable) {
  return {
    actions: await store.distinctValues(db, 'action'),
    objectTypes: await store.distinctValues(db, 'object_type'),
  };
}
