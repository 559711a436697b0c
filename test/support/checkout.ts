// Shared steps for the hosted-checkout payer tests (checkout-payer, checkout-simulate, checkout-races,
// checkout-state.property): a session through the merchant API, attempts through the payer API, outcomes
// through the simulate endpoint, and independent fee arithmetic to check the service against.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { expireDueSessions, EXPIRY_BATCH_MAX } from '../../src/checkout/expiry.ts';
import type { TestContext } from './helpers.ts';
import { call, type Json } from './http.ts';

export const OUTCOMES = [
  'pending',
  'paid',
  'failed',
  'expired',
  'cancelled',
  'reversed',
  'manual_review',
  'amount_mismatch',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const MTN_PHONE = '0241234567'; // 24: MTN
export const TELECEL_PHONE = '0201234567'; // 20: Telecel
export const AT_PHONE = '0261234567'; // 26: AT

/** Creates a session with a merchant key (Test unless `live`) and returns its merchant view. */
export async function createSession(
  t: TestContext,
  m: CreatedMerchant,
  body: Record<string, Json> = {},
  options: { live?: boolean } = {},
) {
  const res = await call(t, 'POST', '/api/v1/sessions', {
    key: options.live ? m.live_api_key : m.test_api_key,
    body: { amount_minor: 50000, invoice_ref: `INV-${randomUUID().slice(0, 8)}`, ...body },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as {
    id: string;
    status: string;
    amount_minor: number;
    invoice_ref: string;
    expires_at: string;
    created_at: string;
  };
}

export const getPublic = (t: TestContext, sessionId: string) =>
  call(t, 'GET', `/api/v1/checkout/sessions/${sessionId}`);
export const getQuote = (t: TestContext, sessionId: string) =>
  call(t, 'GET', `/api/v1/checkout/sessions/${sessionId}/quote`);

export const postAttempt = (t: TestContext, sessionId: string, body: Record<string, Json>) =>
  call(t, 'POST', `/api/v1/checkout/sessions/${sessionId}/provider-attempts`, { body });

export const getAttempt = (t: TestContext, sessionId: string, ref: string, refresh = false) =>
  call(
    t,
    'GET',
    `/api/v1/checkout/sessions/${sessionId}/provider-attempts/${ref}`,
    refresh ? { query: { refresh: '1' } } : {},
  );

/** The body of a momo attempt for a session of `base` pesewas under the default schedule. */
export const momoBody = (base: number, phone = MTN_PHONE, operator = 'mtn'): Record<string, Json> => ({
  rail: 'momo',
  amount_minor: totalOf('momo', base),
  operator,
  phone,
});

/** Starts an attempt and checks it was created (201); returns the initiation body. */
export async function startAttempt(t: TestContext, sessionId: string, body: Record<string, Json>) {
  const res = await postAttempt(t, sessionId, body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as {
    attempt_reference: string;
    status: string;
    amount_charged_minor: number;
    instructions: Record<string, unknown>;
    replayed: boolean;
    provider_reference: string;
  };
}

export const simulateRaw = (t: TestContext, key: string, ref: string, outcome: string, idempotencyKey?: string) =>
  call(t, 'POST', `/api/v1/test/payment-attempts/${ref}/simulate`, { key, body: { outcome }, idempotencyKey });

/** Simulates an outcome with the merchant's Test key and checks it was accepted (200). */
export async function simulate(t: TestContext, m: CreatedMerchant, ref: string, outcome: Outcome) {
  const res = await simulateRaw(t, m.test_api_key, ref, outcome);
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as {
    status: string;
    session_status: string;
    finalized: boolean;
    attempt_reference: string;
    raw_status: string;
  };
}

// ---- independent fee arithmetic (DESIGN §3 "Quotes and fees"), written out here, not imported ----

export type RailName = 'momo' | 'card' | 'bank_transfer' | 'cash';

/** base * bps / 10000 rounded half up to the pesewa, in integers (x.5 -> x+1). */
const percentOf = (base: number, bps: number) => Math.floor((base * bps + 5_000) / 10_000);

export function feeOf(rail: RailName, base: number): number {
  switch (rail) {
    case 'momo':
      return percentOf(base, 150);
    case 'card':
      return percentOf(base, 250);
    case 'bank_transfer':
      return Math.min(percentOf(base, 100), 1_000);
    case 'cash':
      return 200;
  }
}
export const payerBears = (rail: RailName) => rail === 'momo' || rail === 'cash';
export const totalOf = (rail: RailName, base: number) => base + (payerBears(rail) ? feeOf(rail, base) : 0);
/** What the merchant keeps of a paid attempt: the base, less the fee when the merchant bears it. */
export const creditOf = (rail: RailName, base: number) => base - (payerBears(rail) ? 0 : feeOf(rail, base));

// ---- storage look-ups ----

export const sessionRow = async (t: TestContext, id: string) =>
  (
    await t.db.query<{ status: string; version: number; finalized_at: Date | null; expires_at: Date }>(
      'SELECT status, version, finalized_at, expires_at FROM checkout_sessions WHERE id = $1',
      [id],
    )
  )[0]!;

export const attemptRows = (t: TestContext, sessionId: string) =>
  t.db.query<{
    id: string;
    status: string;
    rail: RailName;
    base_minor: number;
    fee_minor: number;
    bearer: string;
    amount_charged_minor: number;
    version: number;
  }>(
    'SELECT id, status, rail, base_minor, fee_minor, bearer, amount_charged_minor, version FROM payment_attempts WHERE session_id = $1 ORDER BY created_at, id',
    [sessionId],
  );

export const eventTypes = async (t: TestContext, objectId: string) =>
  (
    await t.db.query<{ type: string }>(
      'SELECT type FROM events WHERE object_id = $1 ORDER BY object_version, created_at',
      [objectId],
    )
  ).map((r) => r.type);

export const journalKinds = async (t: TestContext, attemptId: string) =>
  (
    await t.db.query<{ kind: string }>(
      `SELECT kind FROM journal_entries WHERE reference_type = 'payment' AND reference_id = $1 ORDER BY created_at, kind`,
      [attemptId],
    )
  ).map((r) => r.kind);

/**
 * Lets a session's time pass: its expires_at, and that of its cash slips (a slip expires with its session),
 * move into the past. The session's status is left for the expiry worker.
 */
export async function backdate(t: TestContext, sessionId: string): Promise<void> {
  await t.db.query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [sessionId]);
  await t.db.query(`UPDATE cash_slips SET expires_at = now() - interval '1 second' WHERE session_id = $1`, [sessionId]);
}

/**
 * Runs the expiry worker until it has looked at every due session. On a shared PostgreSQL other files'
 * sessions may be due too; one batch is at most EXPIRY_BATCH_MAX, so keep going while batches are full.
 */
export async function runExpiry(t: TestContext): Promise<void> {
  for (let round = 0; round < 50; round++) {
    if ((await expireDueSessions(t.db, t.config.checkoutUrlHost)) < EXPIRY_BATCH_MAX) return;
  }
}
