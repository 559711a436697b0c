// Shared support for the API reliability suites (fuzz.test.ts, security.test.ts): the envelope check with a
// status and code in context (the envelope itself is checked by ../http.ts), real objects of a merchant in Test
// and Live (session, attempt, recipient, payout, evidence) and small request helpers.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { Environment } from '../../src/lib/environment.ts';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { recordCashDeposit } from '../../src/checkout/cash-slips.ts';
import { creditPayment } from '../../src/ledger/service.ts';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import type { TestContext } from '../support/helpers.ts';
import { checkEnvelope, multipartFile, type ErrorBody } from '../support/http.ts';

export const WEBHOOK_URL = 'https://example.com/hook';

export { checkEnvelope, LEAK_PATTERNS, multipartFile, type ErrorBody } from '../support/http.ts';

/** The response is the envelope with this status and code. */
export function expectError(res: LightMyRequestResponse, status: number, code: string, context: string): ErrorBody {
  assert.equal(
    res.statusCode,
    status,
    `${context}: expected ${status} ${code}, got ${res.statusCode}: ${res.body.slice(0, 300)}`,
  );
  const error = checkEnvelope(res, context);
  assert.equal(error.code, code, `${context}: expected code ${code}, got ${error.code}`);
  return error;
}

/** A 1x1 PNG: evidence files are sniffed by content. */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/** One request through inject with a Bearer key (or none) and an optional JSON body. */
export function api(
  t: TestContext,
  key: string | null,
  method: string,
  url: string,
  body?: unknown,
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function ok(
  res: LightMyRequestResponse | Promise<LightMyRequestResponse>,
  status: number,
  what: string,
  // biome-ignore lint/suspicious/noExplicitAny: a JSON answer, read loosely by the checks that follow
): Promise<Record<string, any>> {
  const r = await res;
  assert.equal(r.statusCode, status, `${what}: ${r.statusCode} ${r.body.slice(0, 300)}`);
  return r.json();
}

export const keyOf = (m: CreatedMerchant, environment: Environment) =>
  environment === 'test' ? m.test_api_key : m.live_api_key;
export const otherEnvironment = (environment: Environment): Environment => (environment === 'test' ? 'live' : 'test');

/** Real objects of one merchant in one environment, and the payer-visible data they carry. */
export interface Objects {
  environment: Environment;
  session: string;
  attempt: string;
  recipient: string;
  payout: string;
  evidence: string;
  /** A pending refund of a paid (cash) session: Test (settled by the simulator) or Live (the operator queue). */
  refund: string;
  /** One of this environment's events. */
  event: string;
  /** A payment link (issue 35). */
  paymentLink: string;
  /** Strings that belong to this environment's objects only (customer, invoice, amount, ids). */
  secrets: string[];
  customerName: string;
  customerEmail: string;
  invoiceRef: string;
  amountMinor: number;
}

export interface Merchant extends CreatedMerchant {
  email: string;
  password: string;
}

/**
 * A merchant whose keys each have an active HTTPS webhook endpoint (needed for payouts), with Live payout
 * access and balances in both environments; with a password, its owner can sign in to the dashboard.
 */
export async function payoutReadyMerchant(t: TestContext, options: { password?: boolean } = {}): Promise<Merchant> {
  const tag = randomUUID().slice(0, 8);
  const email = `owner-${randomUUID()}@example.com`;
  const password = options.password ? `pw-${randomUUID()}` : '';
  const m = await createMerchant(
    t.db,
    { name: `Reliability ${tag}`, email, password: password || null, webhookUrl: WEBHOOK_URL },
    t.webhookTargets,
  );
  await setPayoutAccess(t.db, m.merchant_id, 'live', { payout_access: true });
  for (const environment of ['test', 'live'] as const) {
    await t.db.transaction((tx) =>
      creditPayment(tx, {
        merchantId: m.merchant_id,
        environment,
        paymentId: `fund-${randomUUID()}`,
        chargedMinor: 10_000_000,
        payerFeeMinor: 0,
        merchantFeeMinor: 0,
      }),
    );
  }
  return { ...m, email, password };
}

let uniqueAmount = 31_000 + Math.floor(Math.random() * 1_000) * 7;

/**
 * A session (with customer data), an attempt on it (Test: momo; Live: a cash slip, the one Live rail),
 * a bank recipient, a payout (Test: paid; Live: processing, needs the Live payout rail) and an evidence
 * file on it. Everything through the public API, as a merchant and a payer would.
 */
export async function createObjects(
  t: TestContext,
  m: CreatedMerchant,
  environment: Environment,
  options: { invoiceRef?: string; rail?: 'momo' | 'cash' } = {},
): Promise<Objects> {
  const key = keyOf(m, environment);
  const tag = randomUUID().slice(0, 8);
  const customerName = `Payer ${tag} Asante`;
  const customerEmail = `payer-${tag}@example.com`;
  const invoiceRef = options.invoiceRef ?? `INV-${environment}-${tag}`;
  const rail = options.rail ?? (environment === 'test' ? 'momo' : 'cash');
  uniqueAmount += 13;
  const amountMinor = uniqueAmount;
  // First, so the refund's event stays this environment's latest (event below).
  const paymentLink = await ok(
    api(t, key, 'POST', '/api/v1/payment-links', { name: `Link ${tag}`, amount_minor: amountMinor }),
    201,
    `create a ${environment} payment link`,
  );
  const session = await ok(
    api(t, key, 'POST', '/api/v1/sessions', {
      amount_minor: amountMinor,
      invoice_ref: invoiceRef,
      description: `Order ${tag}`,
      customer: { name: customerName, email: customerEmail },
      metadata: { order: tag },
    }),
    201,
    `create ${environment} session`,
  );
  const quote = await ok(api(t, null, 'GET', `/api/v1/checkout/sessions/${session.id}/quote`), 200, 'quote');
  let attempt: string;
  if (rail === 'momo') {
    const started = await ok(
      api(t, null, 'POST', `/api/v1/checkout/sessions/${session.id}/provider-attempts`, {
        rail: 'momo',
        operator: 'mtn',
        phone: '0241234567',
        amount_minor: quote.surcharges.momo.total_minor,
      }),
      201,
      'start a momo attempt',
    );
    attempt = started.attempt_reference;
  } else {
    const slip = await ok(
      api(t, null, 'POST', '/api/v1/checkout/cash-slips', {
        session_id: session.id,
        amount_minor: quote.surcharges.cash.total_minor,
      }),
      201,
      'create a cash slip',
    );
    const status = await ok(api(t, null, 'GET', `/api/v1/checkout/sessions/${session.id}`), 200, 'public session');
    assert.equal(status.status, 'pending');
    const rows = await t.db.query<{ id: string }>('SELECT id FROM payment_attempts WHERE session_id = $1', [
      session.id,
    ]);
    assert.equal(rows.length, 1, `one attempt for the slip ${slip.reference}`);
    attempt = rows[0]!.id;
  }
  const capabilities = await ok(api(t, key, 'GET', '/api/v1/payouts/capabilities'), 200, 'capabilities');
  const recipient = await ok(
    api(t, key, 'POST', '/api/v1/payouts/recipients', {
      bank_id: capabilities.banks[0].id,
      account_number: `90${String(amountMinor).padStart(8, '0')}`,
      account_name: `Recipient ${tag}`,
    }),
    201,
    'create a recipient',
  );
  const payout = await ok(
    api(t, key, 'POST', '/api/v1/payouts', {
      recipient_id: recipient.id,
      amount_minor: 1_000 + (amountMinor % 1000),
      client_reference: `rel-${tag}`,
      notes: `Notes ${tag}`,
    }),
    201,
    `create a ${environment} payout`,
  );
  const file = multipartFile('file', `proof-${tag}.png`, 'image/png', TINY_PNG);
  const evidence = await ok(
    t.app.inject({
      method: 'POST',
      url: `/api/v1/payouts/${payout.id}/evidence`,
      headers: { authorization: `Bearer ${key}`, 'content-type': file.contentType },
      payload: file.payload,
    }),
    201,
    'upload evidence',
  );
  // A paid cash session (a teller's deposit) and a pending refund of part of it.
  const paid = await ok(
    api(t, key, 'POST', '/api/v1/sessions', { amount_minor: 5_000, invoice_ref: `INV-R-${tag}` }),
    201,
    'create a session to refund',
  );
  const paidQuote = await ok(api(t, null, 'GET', `/api/v1/checkout/sessions/${paid.id}/quote`), 200, 'quote');
  const slip = await ok(
    api(t, null, 'POST', '/api/v1/checkout/cash-slips', {
      session_id: paid.id,
      amount_minor: paidQuote.surcharges.cash.total_minor,
    }),
    201,
    'a cash slip to pay',
  );
  const [branch] = await t.db.query<{ id: string }>('SELECT id FROM bank_branches WHERE active ORDER BY id LIMIT 1');
  if (environment === 'live') {
    await recordCashDeposit(t.db, t.config.checkoutUrlHost, {
      reference: slip.reference,
      branchId: branch!.id,
      amountMinor: paidQuote.surcharges.cash.total_minor,
    });
  } else {
    // A teller never records a Test slip: Test deposits are recorded through the Test simulator.
    const [paidAttempt] = await t.db.query<{ id: string }>('SELECT id FROM payment_attempts WHERE session_id = $1', [
      paid.id,
    ]);
    await ok(
      api(t, key, 'POST', `/api/v1/test/payment-attempts/${paidAttempt!.id}/simulate`, { outcome: 'paid' }),
      200,
      'simulate the Test cash deposit',
    );
  }
  const refund = await ok(
    api(t, key, 'POST', '/api/v1/refunds', {
      session_id: paid.id,
      amount_minor: 100,
      ...(environment === 'test' ? { test_outcome: 'pending' } : {}),
    }),
    201,
    `refund a ${environment} session`,
  );
  const [event] = await t.db.query<{ id: string }>(
    'SELECT id FROM events WHERE merchant_id = $1 AND environment = $2 ORDER BY created_at DESC LIMIT 1',
    [m.merchant_id, environment],
  );
  return {
    environment,
    session: session.id,
    attempt,
    recipient: recipient.id,
    payout: payout.id,
    evidence: evidence.id,
    refund: refund.id,
    event: event!.id,
    paymentLink: paymentLink.id,
    secrets: [
      session.id,
      attempt,
      recipient.id,
      payout.id,
      evidence.id,
      refund.id,
      event!.id,
      paid.id,
      customerName,
      customerEmail,
      ...(options.invoiceRef ? [] : [invoiceRef]),
      `Order ${tag}`,
      `Recipient ${tag}`,
      `rel-${tag}`,
      paymentLink.id,
      `Link ${tag}`,
    ],
    customerName,
    customerEmail,
    invoiceRef,
    amountMinor,
  };
}

/** Percent-encodes a path segment, leaving nothing that could end the path. */
export const segment = (value: string) => encodeURIComponent(value);
