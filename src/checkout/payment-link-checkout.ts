// A payer's use of a payment link (issue 35): the page's facts, the form's rules, and the session the form
// starts. A link's session is an ordinary checkout session (every rail, fee, webhook and export), made by no
// API key: api_key_id NULL, with payment_link_id and what the payer entered in custom_fields.
import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../db/index.ts';
import { EMAIL_PATTERN } from '../lib/email-address.ts';
import { checkPayerPhone, formatGhs, parseCedis } from '../lib/ghana.ts';
import { newId } from '../lib/ids.ts';
import { CUSTOMER_NAME_LENGTH_MAX, SESSION_LIFETIME_DEFAULT_S, type SessionRow } from './model.ts';
import {
  CUSTOM_FIELD_VALUE_LENGTH_MAX,
  type CustomField,
  type LinkAvailability,
  linkAvailability,
  type PaymentLinkRow,
} from './payment-link-model.ts';
import { findLinkPageBySlug, insertLinkSession, lockLink } from './payment-link-store.ts';
import { RECEIPT_ALPHABET } from './receipt-number.ts';

/** The random characters of a link payment's invoice reference (32^8: about 10^12). */
const LINK_INVOICE_REF_RANDOM_LENGTH = 8;

/** A link's slug as the migration's CHECK allows it: anything else is a 404 without a lookup. */
export const LINK_SLUG_PATTERN = /^[A-Za-z0-9]{6,32}$/;
/** A number as a payer types it: digits, an optional sign and decimals ("12", "-3", "4.5"). */
const NUMBER_PATTERN = /^[+-]?\d+(?:\.\d+)?$/;

export interface LinkPage {
  link: PaymentLinkRow;
  merchantName: string;
}

/** The link behind /l/{slug} with its merchant's name, or null (an impossible slug is not looked up). */
export async function findLinkPage(db: Queryable, slug: string): Promise<LinkPage | null> {
  if (!LINK_SLUG_PATTERN.test(slug)) return null;
  const row = await findLinkPageBySlug(db, slug);
  if (!row) return null;
  const { merchant_name: merchantName, ...link } = row;
  return { link, merchantName };
}

/** What the payer typed, as typed (shown again beside the messages when the form is refused). */
export interface LinkForm {
  amount: string;
  customerName: string;
  fields: Record<string, string>;
}

/** Where a refusal is shown: 'amount', 'customer_name', or a custom field's key as `fields.KEY`. */
export type LinkFormErrors = Record<string, string>;

export const fieldErrorKey = (key: string) => `fields.${key}`;

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * The form's values from the parsed body (src/http/body.ts nests `fields[KEY]` into `fields`): only the
 * link's own custom fields are read, so unknown keys are ignored; a value sent twice reads as nothing.
 */
export function readLinkForm(link: Pick<PaymentLinkRow, 'custom_fields'>, body: unknown): LinkForm {
  const form = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const sent = (typeof form.fields === 'object' && form.fields !== null ? form.fields : {}) as Record<string, unknown>;
  const fields: Record<string, string> = {};
  for (const field of link.custom_fields) if (Object.hasOwn(sent, field.key)) fields[field.key] = text(sent[field.key]);
  return { amount: text(form.amount), customerName: text(form.customer_name), fields };
}

/** What a valid form starts: the amount, the payer's name and the custom fields' values (normalised). */
export interface LinkPayment {
  amountMinor: number;
  customerName: string | null;
  customFields: Record<string, string>;
}

export type LinkFormCheck = { ok: true; payment: LinkPayment } | { ok: false; errors: LinkFormErrors };

/** A custom field's value normalised, or the message shown beside it. */
function checkFieldValue(field: CustomField, value: string): { value: string } | { message: string } {
  if (value.length > CUSTOM_FIELD_VALUE_LENGTH_MAX)
    return { message: `${field.label} may have at most ${CUSTOM_FIELD_VALUE_LENGTH_MAX} characters.` };
  switch (field.type) {
    case 'number':
      return NUMBER_PATTERN.test(value)
        ? { value }
        : { message: `${field.label} must be a number, such as 12 or 4.5.` };
    case 'phone': {
      // A mobile number of some network (numbers are portable: the prefix names none for sure), as +233...
      const phone = checkPayerPhone(value);
      return phone.ok
        ? { value: phone.phone }
        : { message: `${field.label} must be a Ghana mobile number, such as 024 123 4567.` };
    }
    case 'email':
      return EMAIL_PATTERN.test(value)
        ? { value }
        : { message: `${field.label} must be an e-mail address, such as ama@example.com.` };
    default:
      return { value };
  }
}

/** The link form's rules; every failing field gets its own message, so the payer fixes them all at once. */
export function checkLinkForm(link: PaymentLinkRow, form: LinkForm): LinkFormCheck {
  const errors: LinkFormErrors = {};
  let amountMinor = link.amount_minor ?? 0;
  if (link.amount_minor === null) {
    const typed = form.amount.trim();
    const parsed = typed === '' ? null : parseCedis(typed);
    if (typed === '') errors.amount = 'Enter the amount you want to pay, in cedis.';
    else if (parsed === null) errors.amount = 'Enter an amount in cedis with at most 2 decimals, such as 25.50.';
    else if (parsed < link.amount_min_minor || parsed > link.amount_max_minor)
      errors.amount = `Enter an amount between ${formatGhs(link.amount_min_minor)} and ${formatGhs(link.amount_max_minor)}.`;
    else amountMinor = parsed;
  }
  const customerName = form.customerName.trim();
  if (customerName.length > CUSTOMER_NAME_LENGTH_MAX)
    errors.customer_name = `Your name may have at most ${CUSTOMER_NAME_LENGTH_MAX} characters.`;
  const customFields: Record<string, string> = {};
  for (const field of link.custom_fields) {
    const value = (form.fields[field.key] ?? '').trim();
    if (value === '') {
      if (field.required) errors[fieldErrorKey(field.key)] = `Enter ${field.label}.`;
      continue;
    }
    const checked = checkFieldValue(field, value);
    if ('message' in checked) errors[fieldErrorKey(field.key)] = checked.message;
    else customFields[field.key] = checked.value;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, payment: { amountMinor, customerName: customerName || null, customFields } };
}

/** A link payment's invoice reference: `PL-` and 8 random Crockford base32 characters (no I, L, O or U). */
export function linkInvoiceRef(): string {
  // 256 is a multiple of 32: each byte's low 5 bits are uniform.
  return `PL-${[...randomBytes(LINK_INVOICE_REF_RANDOM_LENGTH)].map((byte) => RECEIPT_ALPHABET[byte & 0x1f]).join('')}`;
}

/** The session row a link's payment starts (nothing is written). */
export function newLinkSession(link: PaymentLinkRow, payment: LinkPayment, now = new Date()): SessionRow {
  return {
    id: newId('cs'),
    merchant_id: link.merchant_id,
    environment: link.environment,
    api_key_id: null,
    status: 'open',
    amount_minor: payment.amountMinor,
    currency: link.currency,
    // A reference of this payment's own that a payer can read and quote ("PL-7K2M9QXD"), where the link's id
    // would be an opaque code on the payer page and the receipt; payment_link_id groups a link's payments.
    invoice_ref: linkInvoiceRef(),
    description: link.name,
    customer_name: payment.customerName,
    customer_email: null,
    callback_url: link.redirect_url,
    metadata: link.metadata,
    expires_at: new Date(now.getTime() + SESSION_LIFETIME_DEFAULT_S * 1000),
    finalized_at: null,
    refunded_minor: 0,
    payment_link_id: link.id,
    custom_fields: payment.customFields,
    receipt_number: null,
    method_rail: null,
    method_network: null,
    version: 1,
    created_at: now,
    updated_at: now,
  };
}

export type LinkSessionStart =
  | { kind: 'created'; session: SessionRow }
  | { kind: 'unavailable'; reason: Exclude<LinkAvailability, 'available'> };

/**
 * Starts a link's session in one transaction, with the link locked and its availability asked again: a
 * link deactivated, expired or used up since the page was read never gets a new session. No event: the API
 * emits none for a new session either (checkout.session.* events start with its payment).
 */
export async function startLinkSession(db: Db, linkId: string, payment: LinkPayment): Promise<LinkSessionStart> {
  return db.transaction(async (tx) => {
    const link = await lockLink(tx, linkId);
    if (!link) throw new Error(`payment link ${linkId} vanished while locked`);
    const availability = linkAvailability(link);
    if (availability !== 'available') return { kind: 'unavailable', reason: availability };
    const session = newLinkSession(link, payment);
    await insertLinkSession(tx, session);
    return { kind: 'created', session };
  });
}
