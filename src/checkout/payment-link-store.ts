// Payment links' SQL (migration 040). The API's reads and writes are in payment-links.ts, the payer's in
// payment-link-checkout.ts.
import type { Queryable } from '../db/index.ts';
import { firstRow } from '../db/first-row.ts';
import { ownedRow } from '../db/owned-row.ts';
import type { PaymentLinkRow } from './payment-link-model.ts';

export const LINK_COLUMNS = `id, merchant_id, environment, slug, api_key_id, created_by_user_id, name, description, amount_minor,
  amount_min_minor, amount_max_minor, currency, custom_fields, single_use, max_payments, payments_count, active, expires_at,
  redirect_url, metadata, version, created_at, updated_at`;

export async function insertLink(tx: Queryable, link: PaymentLinkRow): Promise<void> {
  await tx.query(
    `INSERT INTO payment_links (id, merchant_id, environment, slug, api_key_id, created_by_user_id, name, description,
       amount_minor, amount_min_minor, amount_max_minor, currency, custom_fields, single_use, max_payments, payments_count,
       active, expires_at, redirect_url, metadata, version, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14, $15, $16, $17, $18, $19, $20::jsonb, $21, $22, $22)`,
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
    ],
  );
}

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
