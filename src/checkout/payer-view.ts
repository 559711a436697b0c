// What the hosted payment page reads (SPEC 4.2): the public view of a session, its quote, and the payment
// options (rails, Mobile Money operators, banks with branches). No API key: the session id is the capability.
import type { Environment } from '../lib/environment.ts';
import type { Db, Queryable } from '../db/index.ts';
import { errors } from '../lib/errors.ts';
import { MOMO_NETWORKS, NETWORK_LABELS, type MomoNetwork } from '../lib/ghana.ts';
import { newId } from '../lib/ids.ts';
import { railsFor, type LiveProviders } from '../rails/index.ts';
import { railDescriptors, railIds, type Rail } from '../rails/registry.ts';
import { feeSchedule } from './fee-settings.ts';
import { quoteRail, type RailQuote } from './fees.ts';
import { effectiveStatus, type SessionRow } from './model.ts';
import * as store from './store.ts';

export interface PayerContext {
  db: Db;
  checkoutUrlHost: string;
  /** The configured Live providers (none: Live offers only what Sika serves itself, cash at branches). */
  providers: LiveProviders;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export const sessionNotFound = () => errors.notFound('Checkout session');

export function allowedRails(environment: Environment, providers: LiveProviders): Rail[] {
  return railIds().filter((rail) => railsFor(environment, rail, providers).length > 0);
}

/** The Mobile Money networks a payer can pay from in this environment (Live: those a provider collects from). */
export function allowedNetworks(environment: Environment, providers: LiveProviders): MomoNetwork[] {
  return MOMO_NETWORKS.filter((network) => railsFor(environment, 'momo', providers, network).length > 0);
}

export async function quoteSession(
  db: Queryable,
  session: SessionRow,
  rails: Rail[],
): Promise<Partial<Record<Rail, RailQuote>>> {
  const schedule = await feeSchedule(db, session.merchant_id, session.environment);
  return Object.fromEntries(
    rails.map((rail) => [rail, quoteRail(session.amount_minor, schedule[rail], session.currency)]),
  );
}

/**
 * The payment options (SPEC 2.8). With an environment (the `livemode` query), only what is offered there:
 * in Live, the rails and networks a configured provider serves.
 */
export async function getOptions(db: Queryable, only?: { environment: Environment; providers: LiveProviders }) {
  const rows = await store.listActiveBankBranches(db);
  const banks = new Map<
    string,
    { id: string; name: string; code: string; branches: { id: string; name: string; code: string }[] }
  >();
  for (const row of rows) {
    let bank = banks.get(row.bank_id);
    if (!bank) {
      bank = { id: row.bank_id, name: row.bank_name, code: row.bank_code, branches: [] };
      banks.set(row.bank_id, bank);
    }
    if (row.branch_id) bank.branches.push({ id: row.branch_id, name: row.branch_name!, code: row.branch_code! });
  }
  return {
    payment_methods: railDescriptors()
      .filter((rail) => !only || railsFor(only.environment, rail.id, only.providers).length > 0)
      .map((rail) => ({ value: rail.id, label: rail.labels.payer })),
    mobile_money_operators: (only ? allowedNetworks(only.environment, only.providers) : MOMO_NETWORKS).map((value) => ({
      value,
      label: NETWORK_LABELS[value],
    })),
    branch_payment_methods: railDescriptors().flatMap((rail) =>
      rail.labels.branch ? [{ value: rail.id, label: rail.labels.branch }] : [],
    ),
    banks: [...banks.values()].filter((bank) => bank.branches.length > 0),
  };
}

export function returnToMerchantUrl(session: SessionRow, status: string): string | null {
  if (!session.callback_url) return null;
  const url = new URL(session.callback_url);
  url.searchParams.set('session_id', session.id);
  url.searchParams.set('status', status);
  return url.toString();
}

/**
 * The merchant and environment of a session (null: no such session): whether its Live merchant may take a new
 * payment is asked by the payer's steps that start one (issue 33, src/http/auth.ts).
 */
export async function sessionOwnerOf(db: Queryable, id: string) {
  const session = await store.findPublicSession(db, id);
  return session ? { merchantId: session.merchant_id, environment: session.environment } : null;
}

export async function getPublicSession(ctx: PayerContext, id: string) {
  const found = await store.findPublicSessionWithLines(ctx.db, id);
  if (!found) throw sessionNotFound();
  const { line_items: lineItems, ...session } = found;
  const status = effectiveStatus(session);
  return {
    session,
    view: {
      id: session.id,
      merchant_name: session.merchant_name,
      status,
      amount_minor: session.amount_minor,
      currency: session.currency,
      invoice_ref: session.invoice_ref,
      description: session.description ?? '',
      customer_name: session.customer_name ?? '',
      allowed_rails: allowedRails(session.environment, ctx.providers),
      allowed_operators: allowedNetworks(session.environment, ctx.providers),
      expires_at: session.expires_at.toISOString(),
      return_to_merchant_url: returnToMerchantUrl(session, status),
      card_collection_mode:
        session.environment === 'test' ? ('test_simulation' as const) : ('card_network_hosted_session' as const),
      line_items: lineItems,
      livemode: session.environment === 'live',
    },
  };
}

export async function getQuote(ctx: PayerContext, id: string) {
  const session = await store.findPublicSession(ctx.db, id);
  if (!session) throw sessionNotFound();
  const status = effectiveStatus(session);
  if (status !== 'open') throw errors.sessionNotPayable(status);
  const rails = allowedRails(session.environment, ctx.providers);
  return {
    id: newId('quo'),
    status: 'open',
    base_minor: session.amount_minor,
    currency: session.currency,
    expires_at: session.expires_at.toISOString(),
    allowed_rails: rails,
    surcharges: await quoteSession(ctx.db, session, rails),
  };
}
