// Payment links' SQL (migrations 040, 043). The API's reads and writes are in payment-links.ts, the payer's in
// payment-link-checkout.ts.
import { likeContaining } from '../db/like-pattern.ts';
import type { Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';
import { ownedRow } from '../db/owned-row.ts';
import { keysetOrder, ListWhere } from '../db/paging.ts';
import { sessionMachine, type SessionRow } from './model.ts';
import type { PaymentLinkRow } from './payment-link-model.ts';
import { SESSION_COLUMNS } from './store.ts';

export const LINK_COLUMNS = `id, merchant_id, environment, slug, api_key_id, created_by_user_id, name, description, amount_minor,
  amount_min_minor, amount_max_minor, currency, custom_fields, single_use, max_payments, payments_count, active, expires_at,
  redirect_url, metadata, version, created_at, updated_at`;

/**
 * Writes a new link; true. `formKey`: the dashboard form's one-time key (migration 043), claimed by this very insert:
 * when a link of the merchant and environment already holds it, nothing is written, false. A second insert with a
 * key in flight waits for the first transaction, then sees its row (or, rolled back, writes its own).
 */
export async function insertLink(tx: Queryable, link: PaymentLinkRow, formKey?: string): Promise<boolean> {
  const inserted = await tx.query(
    `INSERT INTO payment_links (id, merchant_id, environment, slug, api_key_id, created_by_user_id, name, description,
       amount_minor, amount_min_minor, amount_max_minor, currency, custom_fields, single_use, max_payments, payments_count,
       active, expires_at, redirect_url, metadata, version, created_at, updated_at, form_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14, $15, $16, $17, $18, $19, $20::jsonb, $21, $22, $22, $23)
     ON CONFLICT (merchant_id, environment, form_key) WHERE form_key IS NOT NULL DO NOTHING RETURNING 1`,
    [
      link.id,
      link.merchant_id,
      link.environment,
      link.slug,
      link.api_key_id,
      link.created_by_user_id,
      link.name,
      link.description,
      link.amount_minor,
      link.amount_min_minor,
      link.amount_max_minor,
      link.currency,
      JSON.stringify(link.custom_fields),
      link.single_use,
      link.max_payments,
      link.payments_count,
      link.active,
      link.expires_at,
      link.redirect_url,
      JSON.stringify(link.metadata),
      link.version,
      link.created_at,
      formKey ?? null,
    ],
  );
  return inserted.length > 0;
}

/** The link of this merchant and environment that a dashboard form key made (payment_links_form_key_idx), or null. */
export const findLinkByFormKey = (db: Queryable, merchantId: string, environment: string, formKey: string) =>
  firstRow(
    db.query<PaymentLinkRow>(
      `SELECT ${LINK_COLUMNS} FROM payment_links WHERE merchant_id = $1 AND environment = $2 AND form_key = $3`,
      [merchantId, environment, formKey],
    ),
  );

/** A link of this merchant and environment, or null (a foreign id looks exactly like a missing one). */
export const findLink = (db: Queryable, merchantId: string, environment: string, id: string) =>
  ownedRow(
    firstRow(db.query<PaymentLinkRow>(`SELECT ${LINK_COLUMNS} FROM payment_links WHERE id = $1`, [id])),
    merchantId,
    environment,
  );

/** A link by its public slug (the payer's page), any merchant; not locked. */
export const findLinkBySlug = (db: Queryable, slug: string) =>
  firstRow(db.query<PaymentLinkRow>(`SELECT ${LINK_COLUMNS} FROM payment_links WHERE slug = $1`, [slug]));

/** A link by id, locked (FOR UPDATE) in the caller's transaction: a payment counting itself, a change. */
export const lockLink = (tx: Queryable, id: string) =>
  firstRow(tx.query<PaymentLinkRow>(`SELECT ${LINK_COLUMNS} FROM payment_links WHERE id = $1 FOR UPDATE`, [id]));

export interface LinkSearch {
  merchantId: string;
  environment: string;
  createdFrom?: Date;
  createdBefore?: Date;
  /** The page starts after this link (its created_at and id). */
  after?: { createdAt: Date; id: string };
}

/** The keyset of the link list, as payment_links_merchant_idx orders it. */
const LINK_KEYSET = ['created_at', 'id'] as const;

/** Up to `limit` links of the merchant and environment, newest first, after the cursor's position. */
export async function searchLinks(db: Queryable, search: LinkSearch, limit: number): Promise<PaymentLinkRow[]> {
  const where = new ListWhere({ merchant_id: search.merchantId, environment: search.environment });
  where.created('created_at', search);
  where.after(LINK_KEYSET, search.after);
  const limitParam = where.limit(limit);
  return db.query<PaymentLinkRow>(
    `SELECT ${LINK_COLUMNS} FROM payment_links WHERE ${where.sql} ORDER BY ${keysetOrder(LINK_KEYSET)} LIMIT ${limitParam}`,
    where.params,
  );
}

/** A link's state as the dashboard's list filters it (linkAvailability's reasons, and active for an available one). */
export type LinkListState = 'active' | 'inactive' | 'expired' | 'used_up';

/** The dashboard's list of links (issue 36): the search's readings of one fragment, OR-ed, and the state. */
export interface LinkListFilter {
  merchantId: string;
  environment: string;
  /** Each is a reading of the typed fragment; a link matching any of them is listed. None given: every link. */
  search?: { nameContains?: string; id?: string; slug?: string; amountMinor?: number };
  state?: LinkListState;
  /** The instant the state is judged at (expired: expires_at at or before it). */
  now: Date;
  after?: { createdAt: Date; id: string };
}

/** A link of the dashboard's list with what it collected: the sum of its successful sessions. */
export type LinkListRow = PaymentLinkRow & { collected_minor: number };

/** The payments a link takes (single use: one), NULL for no limit; as isUsedUp reads it. */
const LIMIT_SQL = '(CASE WHEN single_use THEN 1 ELSE max_payments END)';

/**
 * Up to `limit` links of the filter, newest first after the cursor (payment_links_merchant_idx; a merchant's links
 * are few, so the search's conditions are checked on that walk), each with its collected sum read through
 * checkout_sessions_link_idx.
 */
export async function listLinksWithTotals(
  db: Queryable,
  filter: LinkListFilter,
  limit: number,
): Promise<LinkListRow[]> {
  const where = new ListWhere({ merchant_id: filter.merchantId, environment: filter.environment });
  const search = filter.search;
  if (search) {
    // One parameter holds every reading (ListWhere numbers one value a condition), each compared by its own key.
    const value = {
      name: search.nameContains ? likeContaining(search.nameContains) : undefined,
      id: search.id,
      slug: search.slug,
      amount: search.amountMinor,
    };
    where.add((n) => {
      const reading = (key: keyof typeof value) => `($${n}::jsonb ->> '${key}')`;
      const readings = [
        value.name !== undefined && `name ILIKE ${reading('name')}`,
        value.id !== undefined && `id = ${reading('id')}`,
        value.slug !== undefined && `slug = ${reading('slug')}`,
        value.amount !== undefined && `amount_minor = ${reading('amount')}::bigint`,
      ].filter((r): r is string => typeof r === 'string');
      return `(${readings.length ? readings.join(' OR ') : 'false'})`;
    }, JSON.stringify(value));
  }
  if (filter.state === 'inactive') where.add((n) => `active = $${n}`, false);
  else if (filter.state) {
    const usedUp = `(${LIMIT_SQL} IS NOT NULL AND payments_count >= ${LIMIT_SQL})`;
    const clause = {
      expired: (n: number) => `active AND expires_at IS NOT NULL AND expires_at <= $${n}`,
      used_up: (n: number) => `active AND (expires_at IS NULL OR expires_at > $${n}) AND ${usedUp}`,
      active: (n: number) => `active AND (expires_at IS NULL OR expires_at > $${n}) AND NOT ${usedUp}`,
    }[filter.state];
    where.add(clause, filter.now);
  }
  where.after(LINK_KEYSET, filter.after);
  const limitParam = where.limit(limit);
  const rows = await db.query<LinkListRow>(
    `SELECT ${LINK_COLUMNS},
       (SELECT coalesce(sum(s.amount_minor), 0) FROM checkout_sessions s
         WHERE s.payment_link_id = payment_links.id AND s.status = 'success')::bigint AS collected_minor
     FROM payment_links WHERE ${where.sql} ORDER BY ${keysetOrder(LINK_KEYSET)} LIMIT ${limitParam}`,
    where.params,
  );
  return rows.map((row) => ({ ...row, collected_minor: Number(row.collected_minor) }));
}

/** What the API may change on a link (POST /api/v1/payment-links/{id}); the caller holds its lock. */
export interface LinkChanges {
  name: string;
  description: string | null;
  active: boolean;
  expires_at: Date | null;
}

/** Writes a locked link's changeable fields and bumps its version; the row as it now is. */
export const updateLink = async (tx: Queryable, id: string, changes: LinkChanges): Promise<PaymentLinkRow> => {
  const rows = await tx.query<PaymentLinkRow>(
    `UPDATE payment_links SET name = $2, description = $3, active = $4, expires_at = $5, version = version + 1, updated_at = now()
      WHERE id = $1 RETURNING ${LINK_COLUMNS}`,
    [id, changes.name, changes.description, changes.active, changes.expires_at],
  );
  return rows[0]!;
};

/** One of a link's sessions as its dashboard page lists it (payment-link-summary.ts). */
export interface LinkSessionRow {
  id: string;
  status: string;
  amount_minor: number;
  customer_name: string | null;
  custom_fields: Record<string, string> | null;
  receipt_number: string | null;
  refunded_minor: number;
  expires_at: Date;
  created_at: Date;
}

/** A link's sessions, newest first (checkout_sessions_link_idx), at most `limit`. */
export const linkSessions = (db: Queryable, linkId: string, limit: number) =>
  db.query<LinkSessionRow>(
    `SELECT id, status, amount_minor, customer_name, custom_fields, receipt_number, refunded_minor, expires_at, created_at
     FROM checkout_sessions WHERE payment_link_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    [linkId, limit],
  );

/** What a link has collected: its sessions, those that succeeded and their sum, and what refunds gave back. */
export interface LinkTotalsRow {
  sessions_count: number;
  succeeded_count: number;
  succeeded_minor: number;
  refunded_minor: number;
}

export async function linkTotals(db: Queryable, linkId: string): Promise<LinkTotalsRow> {
  const [row] = await db.query<LinkTotalsRow>(
    `SELECT count(*)::int AS sessions_count,
       count(*) FILTER (WHERE status = 'success')::int AS succeeded_count,
       coalesce(sum(amount_minor) FILTER (WHERE status = 'success'), 0)::bigint AS succeeded_minor,
       coalesce(sum(refunded_minor), 0)::bigint AS refunded_minor
     FROM checkout_sessions WHERE payment_link_id = $1`,
    [linkId],
  );
  return row!;
}

/** A link by its public slug with its merchant's name (the payer's page and poster), any merchant; not locked. */
export const findLinkPageBySlug = (db: Queryable, slug: string) =>
  firstRow(
    db.query<PaymentLinkRow & { merchant_name: string }>(
      `SELECT ${LINK_COLUMNS.replace(/(\w+)/g, 'l.$1')}, m.name AS merchant_name
         FROM payment_links l JOIN merchants m ON m.id = l.merchant_id WHERE l.slug = $1`,
      [slug],
    ),
  );

/** The INSERT of a session a payer made from a link: api_key_id NULL, with the link and what the payer entered. */
export async function insertLinkSession(tx: Queryable, session: SessionRow): Promise<void> {
  sessionMachine.initialStatus(session.status);
  await tx.query(
    `INSERT INTO checkout_sessions (id, merchant_id, environment, api_key_id, status, amount_minor, currency, invoice_ref,
       description, customer_name, customer_email, callback_url, metadata, expires_at, payment_link_id, custom_fields,
       version, created_at, updated_at)
     VALUES ($1, $2, $3, NULL, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $15::jsonb, $16, $17, $17)`,
    [
      session.id,
      session.merchant_id,
      session.environment,
      session.status,
      session.amount_minor,
      session.currency,
      session.invoice_ref,
      session.description,
      session.customer_name,
      session.customer_email,
      session.callback_url,
      JSON.stringify(session.metadata),
      session.expires_at,
      session.payment_link_id,
      session.custom_fields === null ? null : JSON.stringify(session.custom_fields),
      session.version,
      session.created_at,
    ],
  );
}

/**
 * Counts a payment on a link the caller has locked (lockLink): payments_count + 1, the row as it now is. The
 * CHECK on payments_count and the lock make the count exact; whether the link still takes the payment is the
 * caller's rule (payment-link-payments.ts).
 */
export const addLinkPayment = async (tx: Queryable, id: string): Promise<PaymentLinkRow> => {
  const rows = await tx.query<PaymentLinkRow>(
    `UPDATE payment_links SET payments_count = payments_count + 1, updated_at = now() WHERE id = $1 RETURNING ${LINK_COLUMNS}`,
    [id],
  );
  return rows[0]!;
};

/**
 * A link's other sessions still open, locked, at most `limit`: FOR UPDATE SKIP LOCKED, so a session another
 * transaction holds (its own payment being applied, an attempt starting) is passed over instead of waited for.
 */
export const lockOpenLinkSessions = (tx: Queryable, linkId: string, exceptSessionId: string, limit: number) =>
  tx.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM checkout_sessions
      WHERE payment_link_id = $1 AND status = 'open' AND id <> $2
      ORDER BY created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED`,
    [linkId, exceptSessionId, limit],
  );
