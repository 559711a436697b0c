import type { ApiPrincipal, Environment } from '../lib/environment.ts';
import type { Db, Queryable } from '../db/index.ts';
import type { ProviderOutcome } from '../rails/index.ts';
import { simulateForSession } from './simulation.ts';
import { errors } from '../lib/errors.ts';
import { normaliseCurrency } from '../lib/currency.ts';
import { newId } from '../lib/ids.ts';
import { METADATA_BYTES_MAX, METADATA_KEYS_MAX, SESSION_LIFETIME_DEFAULT_S, type SessionRow } from './model.ts';
import * as store from './store.ts';
import { invoiceLinesOf } from '../invoicing/service.ts';
import { listEventsForObject } from '../events/outbox.ts';

export interface CreateSessionInput {
  amount_minor: number;
  invoice_ref: string;
  description?: string;
  currency?: string;
  customer?: { name?: string; email?: string };
  callback_url?: string;
  metadata?: Record<string, unknown>;
  expires_in_seconds?: number;
}

export { normaliseCurrency };

function checkCallbackUrl(url: string): void {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    /* handled below */
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw errors.invalidArgument('callback_url must be an absolute http or https URL.', [
      { field: 'callback_url', message: 'must be an http(s) URL' },
    ]);
  }
}

export function checkMetadata(metadata: Record<string, unknown>): void {
  if (
    Object.keys(metadata).length > METADATA_KEYS_MAX ||
    Buffer.byteLength(JSON.stringify(metadata)) > METADATA_BYTES_MAX
  ) {
    throw errors.invalidArgument(
      `metadata may have at most ${METADATA_KEYS_MAX} keys and ${METADATA_BYTES_MAX} bytes of JSON.`,
      [{ field: 'metadata', message: 'is too large' }],
    );
  }
}

/** Validates a create request and builds the new session row (nothing is written). */
export function newSession(principal: ApiPrincipal, input: CreateSessionInput, now = new Date()): SessionRow {
  const currency = normaliseCurrency(input.currency);
  if (input.invoice_ref.trim() === '') {
    throw errors.invalidArgument('invoice_ref must not be blank.', [
      { field: 'invoice_ref', message: 'must not be blank' },
    ]);
  }
  if (input.callback_url !== undefined) checkCallbackUrl(input.callback_url);
  const metadata = input.metadata ?? {};
  checkMetadata(metadata);
  return {
    id: newId('cs'),
    merchant_id: principal.merchantId,
    environment: principal.environment,
    api_key_id: principal.apiKeyId,
    status: 'open',
    amount_minor: input.amount_minor,
    currency,
    invoice_ref: input.invoice_ref,
    description: input.description ?? null,
    customer_name: input.customer?.name ?? null,
    customer_email: input.customer?.email ?? null,
    callback_url: input.callback_url ?? null,
    metadata,
    expires_at: new Date(now.getTime() + (input.expires_in_seconds ?? SESSION_LIFETIME_DEFAULT_S) * 1000),
    finalized_at: null,
    refunded_minor: 0,
    payment_link_id: null,
    custom_fields: null,
    receipt_number: null,
    method_rail: null,
    method_network: null,
    version: 1,
    created_at: now,
    updated_at: now,
  };
}

// ---- what the dashboard shows ----

export const recentSessions = (db: Queryable, merchantId: string, environment: Environment, limit: number) =>
  store.listRecentSessions(db, merchantId, environment, limit);

/** A session of the merchant's environment with its attempts, invoice lines and events; null for a foreign or unknown id. */
export async function sessionDetail(db: Queryable, merchantId: string, environment: Environment, id: string) {
  const session = await store.findSession(db, merchantId, environment, id);
  if (!session) return null;
  const [attempts, lines, events] = await Promise.all([
    store.listAttempts(db, session.id),
    invoiceLinesOf(db, session.merchant_id, session.environment, session.invoice_ref),
    listEventsForObject(db, session.id),
  ]);
  return { session, attempts, lines, events };
}

// ---- what the hosted payment page shows ----

export const sessionAttempts = (db: Queryable, sessionId: string) => store.listAttempts(db, sessionId);

export const slipOfAttempt = (db: Queryable, attemptId: string) => store.findSlipByAttempt(db, attemptId);

/** A cash slip by its reference, normalised (normaliseSlipReference); not locked. */
export const slipByReference = (db: Queryable, reference: string) => store.findSlipByReference(db, reference);

/** An attempt by its id; not locked. */
export const attemptById = (db: Queryable, id: string) => store.findAttempt(db, id);

/** Locks a session (FOR UPDATE) in the caller's transaction, as every change of its payments and refunds does first. */
export const lockSession = (tx: Queryable, id: string) => store.lockSession(tx, id);

/** The page's Test outcome buttons: the simulate endpoint's path, in one transaction. */
export const simulateFromPage = (
  db: Db,
  sessionId: string,
  attemptId: string,
  outcome: ProviderOutcome,
  checkoutUrlHost: string,
) => db.transaction((tx) => simulateForSession(tx, sessionId, attemptId, outcome, checkoutUrlHost));

// ---- the merchant API ----

/** Validates a create request and builds the session row and the one statement that inserts it (run by the caller's idempotent insert). */
export function prepareSession(principal: ApiPrincipal, input: CreateSessionInput) {
  const session = newSession(principal, input);
  return { session, insert: store.sessionInsert(session) };
}
