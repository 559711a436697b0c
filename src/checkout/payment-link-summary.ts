// A payment link's payments and totals, for its dashboard page (issue 35, item 5): its sessions newest first with
// what the payer entered, and what the link has collected. SQL in payment-link-store.ts.
import type { Queryable } from '../db/index.ts';
import type { Environment } from '../lib/environment.ts';
import { isPastExpiry } from './model.ts';
import { findLink, linkSessions, linkTotals, type LinkTotalsRow } from './payment-link-store.ts';

/** The link's sessions the page lists (the newest); the totals count them all. */
export const LINK_SUMMARY_SESSIONS_MAX = 100;

export interface LinkPayment {
  id: string;
  /** The session's status, an open session past its time shown expired (as the payer sees it). */
  status: string;
  amount_minor: number;
  customer_name: string | null;
  custom_fields: Record<string, string>;
  receipt_number: string | null;
  refunded_minor: number;
  created_at: Date;
}

export interface LinkSummary {
  payments: LinkPayment[];
  /** More sessions than the page lists. */
  has_more: boolean;
  totals: LinkTotalsRow;
}

/** The link's payments and totals, or null when the link is not this merchant's in this environment. */
export async function paymentLinkSummary(
  db: Queryable,
  merchantId: string,
  environment: Environment,
  linkId: string,
): Promise<LinkSummary | null> {
  const link = await findLink(db, merchantId, environment, linkId);
  if (!link) return null;
  const [rows, totals] = await Promise.all([
    linkSessions(db, link.id, LINK_SUMMARY_SESSIONS_MAX + 1),
    linkTotals(db, link.id),
  ]);
  const payments = rows.slice(0, LINK_SUMMARY_SESSIONS_MAX).map((row) => ({
    id: row.id,
    status: row.status === 'open' && isPastExpiry(row) ? 'expired' : row.status,
    amount_minor: row.amount_minor,
    customer_name: row.customer_name,
    custom_fields: row.custom_fields ?? {},
    receipt_number: row.receipt_number,
    refunded_minor: row.refunded_minor,
    created_at: row.created_at,
  }));
  return { payments, has_more: rows.length > LINK_SUMMARY_SESSIONS_MAX, totals };
}
