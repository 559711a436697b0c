// Payment links over the API and the dashboard (issue 35 item 1): create, read, list and change a link, each
// change announced as payment_link.created / payment_link.updated in its transaction. The payer's side (the
// page, its sessions) is payment-link-checkout.ts; SQL in payment-link-store.ts.
import type { Db, Queryable } from '../db/index.ts';
import type { Environment } from '../lib/environment.ts';
import { errors } from '../lib/errors.ts';
import { newId, randomToken } from '../lib/ids.ts';
import { parseCedis } from '../lib/ghana.ts';
import { listPage, listWindow, type CursorListQuery } from '../lib/list-paging.ts';
import { keysetPages } from '../db/keyset-pages.ts';
import { emitEvent } from '../events/outbox.ts';
import { CALLBACK_URL_LENGTH_MAX, SESSION_AMOUNT_MAX_MINOR } from './model.ts';
import {
  CUSTOM_FIELD_KEY_LENGTH_MAX,
  CUSTOM_FIELD_KEY_PATTERN,
  CUSTOM_FIELD_LABEL_LENGTH_MAX,
  CUSTOM_FIELD_TYPES,
  CUSTOM_FIELDS_MAX,
  LINK_AMOUNT_MAX_DEFAULT_MINOR,
  LINK_AMOUNT_MIN_DEFAULT_MINOR,
  LINK_DESCRIPTION_LENGTH_MAX,
  LINK_NAME_LENGTH_MAX,
  LINK_SLUG_LENGTH,
  linkAvailability,
  toPaymentLinkResponse,
  type CustomField,
  type CustomFieldType,
  type PaymentLinkResponse,
  type PaymentLinkRow,
} from './payment-link-model.ts';
import * as store from './payment-link-store.ts';
import { checkMetadata } from './service.ts';

export const LINK_LIST_LIMIT_DEFAULT = 20;
export const LINK_LIST_LIMIT_MAX = 100;

/** Who makes or changes a link: an API key (userId null) or a dashboard user (apiKeyId null). */
export interface LinkOwner {
  merchantId: string;
  environment: Environment;
  apiKeyId: string | null;
  userId: string | null;
}

export interface CreatePaymentLinkInput {
  name: string;
  description?: string;
  amount_minor?: number;
  amount_min_minor?: number;
  amount_max_minor?: number;
  custom_fields?: { key: string; label: string; type: CustomFieldType; required?: boolean }[];
  single_use?: boolean;
  max_payments?: number;
  expires_at?: string;
  redirect_url?: string;
  metadata?: Record<string, unknown>;
}

/** What POST /api/v1/payment-links/{id} may change; expires_at null clears it. */
export interface PaymentLinkChanges {
  name?: string;
  description?: string | null;
  active?: boolean;
  expires_at?: string | null;
}

const CHANGEABLE = ['name', 'description', 'active', 'expires_at'] as const;

export interface PaymentLinkListQuery extends CursorListQuery {}

const refuse = (field: string, message: string): never => {
  throw errors.invalidArgument(`${field} ${message}.`, [{ field, message }]);
};

/** Runs fn in a transaction of its own when handed the storage, else in the caller's (an Idempotency-Key's). */
const inTransaction = <T>(db: Db | Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> =>
  'transaction' in db && typeof db.transaction === 'function' ? db.transaction(fn) : fn(db);

function checkName(name: string): void {
  if (name.trim() === '' || name.length > LINK_NAME_LENGTH_MAX)
    refuse('name', `must be 1 to ${LINK_NAME_LENGTH_MAX} characters, not blank`);
}

function checkDescription(description: string | null | undefined): void {
  if (description && description.length > LINK_DESCRIPTION_LENGTH_MAX)
    refuse('description', `must be at most ${LINK_DESCRIPTION_LENGTH_MAX} characters`);
}

/** A future instant, else 400 naming expires_at. */
function futureDate(value: string, now: Date): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) refuse('expires_at', 'must be a date-time');
  if (at.getTime() <= now.getTime()) refuse('expires_at', 'must be in the future');
  return at;
}

function checkRedirectUrl(url: string): void {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    /* refused below */
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || url.length > CALLBACK_URL_LENGTH_MAX)
    refuse('redirect_url', 'must be an absolute http or https URL');
}

/** The fixed amount, or the payer's range (its defaults filled in); 400 naming the field that does not fit. */
function amountsOf(input: CreatePaymentLinkInput) {
  const inRange = (field: string, value: number) => {
    if (!Number.isInteger(value) || value < 1 || value > SESSION_AMOUNT_MAX_MINOR)
      refuse(field, `must be an integer from 1 to ${SESSION_AMOUNT_MAX_MINOR} pesewas`);
  };
  if (input.amount_minor !== undefined) {
    inRange('amount_minor', input.amount_minor);
    // A fixed amount leaves the payer nothing to choose: a range beside it is a mistake, not a default.
    for (const field of ['amount_min_minor', 'amount_max_minor'] as const)
      if (input[field] !== undefined) refuse(field, 'must not be given with amount_minor');
    return {
      amount_minor: input.amount_minor,
      amount_min_minor: input.amount_minor,
      amount_max_minor: input.amount_minor,
    };
  }
  const min = input.amount_min_minor ?? LINK_AMOUNT_MIN_DEFAULT_MINOR;
  const max = input.amount_max_minor ?? LINK_AMOUNT_MAX_DEFAULT_MINOR;
  inRange('amount_min_minor', min);
  inRange('amount_max_minor', max);
  if (min > max) {
    if (input.amount_max_minor !== undefined) refuse('amount_max_minor', `must be at least amount_min_minor (${min})`);
    refuse('amount_min_minor', `must be at most amount_max_minor (${max})`);
  }
  return { amount_minor: null, amount_min_minor: min, amount_max_minor: max };
}

/** The custom fields with required filled in; at most CUSTOM_FIELDS_MAX, keys unique. */
function customFieldsOf(fields: CreatePaymentLinkInput['custom_fields'] = []): CustomField[] {
  if (fields.length > CUSTOM_FIELDS_MAX) refuse('custom_fields', `must have at most ${CUSTOM_FIELDS_MAX} fields`);
  const keys = new Set<string>();
  const keyPattern = new RegExp(CUSTOM_FIELD_KEY_PATTERN);
  return fields.map((field, i) => {
    if (!keyPattern.test(field.key) || field.key.length > CUSTOM_FIELD_KEY_LENGTH_MAX)
      refuse(`custom_fields.${i}.key`, `must be 1 to ${CUSTOM_FIELD_KEY_LENGTH_MAX} of a-z, 0-9 and _`);
    if (keys.has(field.key)) refuse(`custom_fields.${i}.key`, `repeats the key ${field.key}`);
    keys.add(field.key);
    if (field.label.trim() === '' || field.label.length > CUSTOM_FIELD_LABEL_LENGTH_MAX)
      refuse(`custom_fields.${i}.label`, `must be 1 to ${CUSTOM_FIELD_LABEL_LENGTH_MAX} characters, not blank`);
    if (!CUSTOM_FIELD_TYPES.includes(field.type))
      refuse(`custom_fields.${i}.type`, `must be one of ${CUSTOM_FIELD_TYPES.join(', ')}`);
    return { key: field.key, label: field.label, type: field.type, required: field.required ?? false };
  });
}

/** Validates a create request and builds the new link row (nothing is written). */
export function newPaymentLink(owner: LinkOwner, input: CreatePaymentLinkInput, now = new Date()): PaymentLinkRow {
  checkName(input.name);
  checkDescription(input.description);
  const amounts = amountsOf(input);
  const customFields = customFieldsOf(input.custom_fields);
  const singleUse = input.single_use ?? false;
  if (input.max_payments !== undefined && (!Number.isInteger(input.max_payments) || input.max_payments < 1))
    refuse('max_payments', 'must be an integer of at least 1');
  if (singleUse && input.max_payments !== undefined && input.max_payments !== 1)
    refuse('max_payments', 'must be 1 (or left out) on a single_use link');
  const expiresAt = input.expires_at === undefined ? null : futureDate(input.expires_at, now);
  if (input.redirect_url !== undefined) checkRedirectUrl(input.redirect_url);
  const metadata = input.metadata ?? {};
  checkMetadata(metadata);
  return {
    id: newId('pl'),
    merchant_id: owner.merchantId,
    environment: owner.environment,
    slug: randomToken(LINK_SLUG_LENGTH),
    api_key_id: owner.apiKeyId,
    created_by_user_id: owner.userId,
    name: input.name,
    description: input.description ?? null,
    ...amounts,
    currency: 'GHS',
    custom_fields: customFields,
    single_use: singleUse,
    // A single-use link takes one payment: said as max_payments 1, so the answer reads the same either way.
    max_payments: singleUse ? 1 : (input.max_payments ?? null),
    payments_count: 0,
    active: true,
    expires_at: expiresAt,
    redirect_url: input.redirect_url ?? null,
    metadata,
    version: 1,
    created_at: now,
    updated_at: now,
  };
}

/** Announces a link's new state: to the key's endpoints, or every endpoint of the merchant for a dashboard's change. */
const announce = (tx: Queryable, owner: LinkOwner, type: string, link: PaymentLinkRow, body: PaymentLinkResponse) =>
  emitEvent(tx, {
    merchantId: link.merchant_id,
    environment: link.environment,
    apiKeyId: owner.apiKeyId,
    type,
    objectType: 'payment_link',
    objectId: link.id,
    objectVersion: link.version,
    data: { payment_link: body },
  });

/**
 * Makes a link and its payment_link.created event in one transaction (the given one, or its own). `formKey`: the
 * dashboard form's one-time key; a second create with it makes nothing and answers the link the first one made.
 */
export async function createPaymentLink(
  db: Db | Queryable,
  owner: LinkOwner,
  input: CreatePaymentLinkInput,
  checkoutUrlHost: string,
  formKey?: string,
): Promise<PaymentLinkResponse> {
  const link = newPaymentLink(owner, input);
  const body = toPaymentLinkResponse(link, checkoutUrlHost);
  return inTransaction(db, async (tx) => {
    if (!(await store.insertLink(tx, link, formKey || undefined))) {
      // The key was claimed by a link made before (or committed while this insert waited for it).
      const made = formKey ? await store.findLinkByFormKey(tx, owner.merchantId, owner.environment, formKey) : null;
      if (!made)
        throw errors.invalidArgument('form_key was already used.', [
          { field: 'form_key', message: 'was already used' },
        ]);
      return toPaymentLinkResponse(made, checkoutUrlHost);
    }
    await announce(tx, owner, 'payment_link.created', link, body);
    return body;
  });
}

/** Changes a link's name, description, active or expires_at under its lock, with payment_link.updated; 404 when not the owner's. */
export async function updatePaymentLink(
  db: Db | Queryable,
  owner: LinkOwner,
  id: string,
  changes: PaymentLinkChanges,
  checkoutUrlHost: string,
): Promise<PaymentLinkResponse> {
  if (CHANGEABLE.every((field) => changes[field] === undefined))
    refuse('body', `must change at least one of ${CHANGEABLE.join(', ')}`);
  if (changes.name !== undefined) checkName(changes.name);
  checkDescription(changes.description);
  const now = new Date();
  // undefined: unchanged; null: no expiry any more.
  const expiresAt =
    changes.expires_at === undefined || changes.expires_at === null
      ? changes.expires_at
      : futureDate(changes.expires_at, now);
  return inTransaction(db, async (tx) => {
    const current = await store.lockLink(tx, id);
    if (!current || current.merchant_id !== owner.merchantId || current.environment !== owner.environment)
      throw errors.notFound('Payment link');
    const link = await store.updateLink(tx, id, {
      name: changes.name ?? current.name,
      description: changes.description === undefined ? current.description : changes.description,
      active: changes.active ?? current.active,
      expires_at: expiresAt === undefined ? current.expires_at : expiresAt,
    });
    const body = toPaymentLinkResponse(link, checkoutUrlHost);
    await announce(tx, owner, 'payment_link.updated', link, body);
    return body;
  });
}

/** A link of the merchant and environment, or null (another's looks missing). */
export async function getPaymentLink(
  db: Queryable,
  merchantId: string,
  environment: Environment,
  id: string,
  checkoutUrlHost: string,
): Promise<PaymentLinkResponse | null> {
  const link = await store.findLink(db, merchantId, environment, id);
  return link ? toPaymentLinkResponse(link, checkoutUrlHost) : null;
}

/** One page of the merchant's links, newest first; `has_more` says whether to ask again with starting_after. */
export async function listPaymentLinks(
  db: Queryable,
  merchantId: string,
  environment: Environment,
  query: PaymentLinkListQuery,
  checkoutUrlHost: string,
) {
  const { limit, search } = await listWindow({ merchantId, environment }, query, {
    limitDefault: LINK_LIST_LIMIT_DEFAULT,
    what: 'a payment link',
    find: (id) => store.findLink(db, merchantId, environment, id),
  });
  const rows = await store.searchLinks(db, search, Math.min(limit, LINK_LIST_LIMIT_MAX) + 1);
  return listPage(rows, Math.min(limit, LINK_LIST_LIMIT_MAX), (row) => toPaymentLinkResponse(row, checkoutUrlHost));
}

/** True when the link is the merchant's in that environment (the session search's payment_link_id filter). */
export const ownsPaymentLink = async (db: Queryable, merchantId: string, environment: string, id: string) =>
  (await store.findLink(db, merchantId, environment, id)) !== null;

/** The dashboard's list (issue 36): the states its filter offers, as the link's page names them. */
export const LINK_LIST_STATES = ['active', 'inactive', 'expired', 'used_up'] as const;
export type { LinkListState } from './payment-link-store.ts';
/** Links on one page of the dashboard's list. */
export const LINK_LIST_PAGE_ROWS = 25;
/** Links read a page at a time by the list's CSV export. */
export const LINK_EXPORT_PAGE_ROWS = 500;
/** The longest one-time key the New link form sends (its own are 29 characters). */
export const LINK_FORM_KEY_LENGTH_MAX = 100;
/** The longest search fragment read. */
export const LINK_SEARCH_LENGTH_MAX = 100;

/** The dashboard list's query as its GET form sends it (empty means "any"). */
export interface LinkListQuery {
  q?: string;
  status?: store.LinkListState;
}

/** A row of the dashboard's list and its export: the link, its state now, and what its payments collected. */
export interface LinkListItem {
  link: PaymentLinkResponse;
  state: store.LinkListState;
  collected_minor: number;
}

/**
 * What a typed fragment can be: part of a name, a link id (pl_…), a slug or the link's url (its /l/ path), or a
 * fixed amount in GHS ("25" or "25.00"). Each reading is asked; a link matching any is listed.
 */
export function linkSearchOf(q: string | undefined): store.LinkListFilter['search'] {
  const fragment = (q ?? '').trim().slice(0, LINK_SEARCH_LENGTH_MAX);
  if (!fragment) return undefined;
  const slug = /(?:^|\/l\/)([A-Za-z0-9]{6,32})\/?$/.exec(fragment)?.[1];
  const amountMinor = parseCedis(fragment);
  return {
    nameContains: fragment,
    ...(/^pl_\w+$/.test(fragment) ? { id: fragment } : {}),
    ...(slug ? { slug } : {}),
    ...(amountMinor !== null ? { amountMinor } : {}),
  };
}

/** The store's filter of the dashboard's query at `now`. */
export const linkListFilter = (
  owner: { merchantId: string; environment: string },
  query: LinkListQuery,
  now: Date,
): store.LinkListFilter => ({
  ...owner,
  search: linkSearchOf(query.q),
  ...(query.status ? { state: query.status } : {}),
  now,
});

const listItem = (row: store.LinkListRow, now: Date, checkoutUrlHost: string): LinkListItem => {
  const availability = linkAvailability(row, now);
  return {
    link: toPaymentLinkResponse(row, checkoutUrlHost),
    state: availability === 'available' ? 'active' : availability,
    collected_minor: row.collected_minor,
  };
};

/** The keyset position of a link of the merchant's (a page cursor), or null when it is not theirs. */
export async function linkListPosition(db: Queryable, merchantId: string, environment: string, id: string) {
  const link = await store.findLink(db, merchantId, environment, id);
  return link ? { createdAt: link.created_at, id: link.id } : null;
}

/** One page of the dashboard's list after `after`, and the link the next page starts after (null on the last). */
export async function linkListPage(
  db: Queryable,
  filter: store.LinkListFilter,
  after: { createdAt: Date; id: string } | null,
  checkoutUrlHost: string,
): Promise<{ rows: LinkListItem[]; next: string | null }> {
  const rows = await store.listLinksWithTotals(db, { ...filter, ...(after ? { after } : {}) }, LINK_LIST_PAGE_ROWS + 1);
  const more = rows.length > LINK_LIST_PAGE_ROWS;
  if (more) rows.length = LINK_LIST_PAGE_ROWS;
  return {
    rows: rows.map((row) => listItem(row, filter.now, checkoutUrlHost)),
    next: more ? rows.at(-1)!.id : null,
  };
}

/** Every link of the filter, newest first as the list shows them, read in keyset pages (the CSV export). */
export async function* linkListExport(
  db: Queryable,
  filter: store.LinkListFilter,
  checkoutUrlHost: string,
): AsyncIterable<LinkListItem> {
  const rows = keysetPages(
    LINK_EXPORT_PAGE_ROWS,
    (after) => store.listLinksWithTotals(db, { ...filter, ...(after ? { after } : {}) }, LINK_EXPORT_PAGE_ROWS),
    (row) => ({ createdAt: row.created_at, id: row.id }),
  );
  for await (const row of rows) yield listItem(row, filter.now, checkoutUrlHost);
}
