// Payment links (issue 35): a page a payer opens at {CHECKOUT_URL_HOST}/l/{slug} to start an ordinary checkout
// session of the merchant. The types, limits and the pure rules; SQL in payment-link-store.ts.
import type { Environment } from '../lib/environment.ts';
import { SESSION_AMOUNT_MAX_MINOR } from './model.ts';

export const LINK_NAME_LENGTH_MAX = 120;
export const LINK_DESCRIPTION_LENGTH_MAX = 240;
export const CUSTOM_FIELDS_MAX = 5;
export const CUSTOM_FIELD_KEY_LENGTH_MAX = 40;
export const CUSTOM_FIELD_KEY_PATTERN = '^[a-z0-9_]+$';
export const CUSTOM_FIELD_LABEL_LENGTH_MAX = 80;
/** What a payer may type into one custom field, in characters. */
export const CUSTOM_FIELD_VALUE_LENGTH_MAX = 200;
export const CUSTOM_FIELD_TYPES = ['text', 'number', 'phone', 'email'] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];
/** The least a payer may choose when the link leaves the amount open and sets no minimum: GHS 1.00. */
export const LINK_AMOUNT_MIN_DEFAULT_MINOR = 100;
/** The most a payer may choose when the link sets no maximum: a session's maximum. */
export const LINK_AMOUNT_MAX_DEFAULT_MINOR = SESSION_AMOUNT_MAX_MINOR;
/** A link's slug: random base62 characters (src/lib/ids.ts randomToken). */
export const LINK_SLUG_LENGTH = 10;

export interface CustomField {
  key: string;
  label: string;
  type: CustomFieldType;
  required: boolean;
}

export interface PaymentLinkRow {
  id: string;
  merchant_id: string;
  environment: Environment;
  slug: string;
  api_key_id: string | null;
  created_by_user_id: string | null;
  name: string;
  description: string | null;
  /** The fixed amount, or null when the payer chooses between amount_min_minor and amount_max_minor. */
  amount_minor: number | null;
  amount_min_minor: number;
  amount_max_minor: number;
  currency: string;
  custom_fields: CustomField[];
  single_use: boolean;
  max_payments: number | null;
  payments_count: number;
  active: boolean;
  expires_at: Date | null;
  redirect_url: string | null;
  metadata: Record<string, unknown>;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** Why a payer may not pay a link now (each a 410 page), or 'available'. */
export type LinkAvailability = 'available' | 'inactive' | 'expired' | 'used_up';

/** How many payments a link takes in all: 1 for a single-use link, else max_payments (null: no limit). */
export const paymentsLimitOf = (link: Pick<PaymentLinkRow, 'single_use' | 'max_payments'>): number | null =>
  link.single_use ? 1 : link.max_payments;

/** True once the link has taken every payment it may. */
export const isUsedUp = (link: Pick<PaymentLinkRow, 'single_use' | 'max_payments' | 'payments_count'>): boolean => {
  const limit = paymentsLimitOf(link);
  return limit !== null && link.payments_count >= limit;
};

/** Whether a payer may start a payment on the link at `now`. */
export function linkAvailability(
  link: Pick<PaymentLinkRow, 'active' | 'expires_at' | 'single_use' | 'max_payments' | 'payments_count'>,
  now = new Date(),
): LinkAvailability {
  if (!link.active) return 'inactive';
  if (link.expires_at && link.expires_at.getTime() <= now.getTime()) return 'expired';
  if (isUsedUp(link)) return 'used_up';
  return 'available';
}

/** The link's page for payers. */
export const linkUrlOf = (checkoutUrlHost: string, slug: string): string => `${checkoutUrlHost}/l/${slug}`;

/** A link as the API, its events and the dashboard show it (issue 35's fields, and livemode as sessions have it). */
export function toPaymentLinkResponse(row: PaymentLinkRow, checkoutUrlHost: string) {
  const url = linkUrlOf(checkoutUrlHost, row.slug);
  return {
    object: 'payment_link' as const,
    id: row.id,
    url,
    qr_svg_url: `${url}/qr.svg`,
    active: row.active,
    name: row.name,
    description: row.description,
    amount_minor: row.amount_minor === null ? null : Number(row.amount_minor),
    amount_min_minor: Number(row.amount_min_minor),
    amount_max_minor: Number(row.amount_max_minor),
    custom_fields: row.custom_fields,
    single_use: row.single_use,
    max_payments: row.max_payments,
    payments_count: row.payments_count,
    expires_at: row.expires_at ? row.expires_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
    livemode: row.environment === 'live',
    metadata: row.metadata,
  };
}
export type PaymentLinkResponse = ReturnType<typeof toPaymentLinkResponse>;
