// The operator console's merchants: the list (search, filters, keyset pages, every row for the CSV) and one
// merchant's page (balances per environment from the ledger, recent sessions and payouts, users, API key
// prefixes, webhook endpoints, payout settings). Reads only; every object carries its environment.
import { listApiKeys, listEndpoints } from '../accounts/integrations.ts';
import { listUsers } from '../accounts/service.ts';
import { recentSessions } from '../checkout/service.ts';
import { isValidReceiptNumber, normaliseReceiptNumber } from '../checkout/receipt-number.ts';
import type { Db, Queryable } from '../db/index.ts';
import { ENVIRONMENTS, type Environment } from '../lib/environment.ts';
import { balance } from '../ledger/service.ts';
import { recentPayouts } from '../payouts/queries.ts';
import { merchantPayoutControls } from './service.ts';
import * as store from './store.ts';

export type { MerchantOverviewRow, PaymentSearchRow } from './store.ts';

/** The list's filters and their choices (the values the console's schema accepts). */
export const MERCHANT_FILTERS = {
  live_payouts: ['on', 'off'],
  paused: ['yes', 'no'],
  live_balance: ['yes', 'no'],
} as const;
export type MerchantFilterName = keyof typeof MERCHANT_FILTERS;
export const MERCHANT_FILTER_NAMES = Object.keys(MERCHANT_FILTERS) as MerchantFilterName[];

/** Recent sessions and payouts on a merchant's page. */
export const MERCHANT_RECENT_ROWS = 10;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** A page of merchants (limit rows after the cursor) matching the search and filters; unknown filter values are ignored. */
export function merchantsPage(
  db: Queryable,
  q: string,
  filters: Record<string, string>,
  cursor: { at: Date; id: string } | null,
  limit: number,
) {
  const chosen: store.MerchantListFilters = {};
  for (const name of MERCHANT_FILTER_NAMES) {
    const value = filters[name];
    if (value && (MERCHANT_FILTERS[name] as readonly string[]).includes(value))
      (chosen as Record<string, string>)[name] = value;
  }
  return store.listMerchants(db, {
    q,
    qPattern: likePattern(q),
    filters: chosen,
    // The cursor is opaque to the browser: one that does not name a merchant row is the first page.
    cursor: cursor && UUID.test(cursor.id) ? cursor : null,
    limit,
  });
}

/** Payments shown for one search of the merchants list (a reference names one session; a few attempts each at most). */
export const PAYMENT_SEARCH_ROWS_MAX = 20;

/**
 * What a payment reference looks like: one token of letters, digits and - _ . : (our ids, TEST-…, SK…, the
 * providers' numeric ids and references), 4 to 100 characters. Other searches (names, emails, phrases) are
 * never looked up as references.
 */
const PAYMENT_REFERENCE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{3,99}$/;

/**
 * The checkout sessions a reference names (issue 31: what a payer or a provider's support reads out): the
 * provider's transaction id (MTN's financialTransactionId, Paystack's transaction id), our reference with the
 * provider, an attempt id or a session id, in any merchant and either environment. Empty for a search that
 * is not shaped like a reference.
 */
export function paymentsMatching(db: Queryable, q: string): Promise<store.PaymentSearchRow[]> {
  const reference = q.trim();
  // A payer's receipt number (issue 35) as read out: spaced, dashed, in lower case, O for 0 and I or L for 1.
  const receiptNumber = normaliseReceiptNumber(reference);
  const receipt = isValidReceiptNumber(receiptNumber) ? [receiptNumber] : [];
  if (!PAYMENT_REFERENCE_PATTERN.test(reference) && receipt.length === 0) return Promise.resolve([]);
  return store.findPaymentsByReference(
    db,
    [...new Set([reference, reference.toUpperCase(), reference.toLowerCase(), ...receipt])],
    PAYMENT_SEARCH_ROWS_MAX,
  );
}

/** Everything the merchant page shows, or null when there is no such merchant. */
export async function merchantOverview(db: Db, merchantId: string) {
  const controls = await merchantPayoutControls(db, merchantId);
  if (!controls) return null;
  const id = controls.merchant.id;
  const perEnvironment = async <T>(read: (environment: Environment) => Promise<T[]>) =>
    (
      await Promise.all(
        ENVIRONMENTS.map(async (environment) => (await read(environment)).map((row) => ({ ...row, environment }))),
      )
    ).flat();
  const balances = [];
  for (const environment of ENVIRONMENTS) balances.push(await balance(db, id, environment));
  const newestFirst = <T extends { updated_at: Date }>(rows: T[]) =>
    rows.sort((a, b) => b.updated_at.getTime() - a.updated_at.getTime()).slice(0, MERCHANT_RECENT_ROWS);
  const sessions = newestFirst(
    await perEnvironment((environment) => recentSessions(db, id, environment, MERCHANT_RECENT_ROWS)),
  );
  const payouts = newestFirst(
    await perEnvironment((environment) => recentPayouts(db, id, environment, MERCHANT_RECENT_ROWS)),
  );
  const users = (await listUsers(db, id)).map((u) => ({
    id: u.id,
    email: u.email,
    role: u.role,
    active: u.active,
    second_factor: u.second_factor,
    created_at: u.created_at,
  }));
  // The prefix only (the key itself is never stored, its hash is never read here).
  const apiKeys = (await perEnvironment((environment) => listApiKeys(db, id, environment))).map((k) => ({
    id: k.id,
    prefix: k.prefix,
    environment: k.environment,
    integration_name: k.integration_name,
    created_at: k.created_at,
    revoked_at: k.revoked_at,
    last_used_at: k.last_used_at,
  }));
  // URL and state only: the signing secret is not read.
  const endpoints = (await perEnvironment((environment) => listEndpoints(db, id, environment))).map((w) => ({
    id: w.id,
    url: w.url,
    status: w.status,
    environment: w.environment,
    key_prefix: w.key_prefix,
  }));
  return { ...controls, balances, sessions, payouts, users, apiKeys, endpoints };
}
export type MerchantOverview = NonNullable<Awaited<ReturnType<typeof merchantOverview>>>;
