// Shared setup for the payout test files (test/payouts/*.test.ts): funding a balance, recipients,
// payouts through the API, extra users and keys, driving Live processing with the simulator, and the steps the
// payout creation files share (payoutSteps).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { issueApiKey } from '../../src/accounts/api-keys.ts';
import type { ApiPrincipal, Environment } from '../../src/lib/environment.ts';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { insertWebhookEndpoint } from '../../src/accounts/store.ts';
import { statusOf } from '../../src/http/errors.ts';
import {
  applyPendingCredits,
  balance,
  checkInvariants,
  creditPayment,
  type Balance,
} from '../../src/ledger/service.ts';
import { SikaError } from '../../src/lib/errors.ts';
import { processDuePayouts } from '../../src/payouts/processing.ts';
import { verifyTestRecipients } from '../../src/payouts/recipients.ts';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import type { PayoutRail } from '../../src/rails/payouts.ts';
import type { TestContext } from './helpers.ts';

export const WEBHOOK_URL = 'https://example.com/hook';

export type JsonBody = Record<string, unknown>;

/** One API call through inject with a Bearer key and an optional JSON body. */
export function api(
  t: TestContext,
  key: string,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  body?: JsonBody,
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Credits the merchant's balance directly in the ledger, as a settled payment with no fees would. */
/** Funds a merchant with a payment credit, applied to its balance as the worker would by the time the merchant acts. */
export async function fund(
  t: TestContext,
  merchantId: string,
  environment: Environment,
  amountMinor: number,
): Promise<void> {
  await t.db.transaction((tx) =>
    creditPayment(tx, {
      merchantId,
      environment,
      paymentId: `fund-${randomUUID()}`,
      chargedMinor: amountMinor,
      payerFeeMinor: 0,
      merchantFeeMinor: 0,
    }),
  );
  await applyPendingCredits(t.db, merchantId, environment);
}

export const balanceOf = (t: TestContext, merchantId: string, environment: Environment): Promise<Balance> =>
  balance(t.db, merchantId, environment);

/** A merchant with Test and Live keys, each paired with an active HTTPS webhook endpoint. */
export function merchantWithHooks(
  t: TestContext,
  options: { payoutApproval?: boolean } = {},
): Promise<CreatedMerchant> {
  return t.merchant({ webhookUrl: WEBHOOK_URL, payoutApproval: options.payoutApproval ?? false });
}

/** A merchant ready for Live payouts: webhook endpoints, Live payout access on, and a Live balance. */
export async function liveMerchant(
  t: TestContext,
  options: { payoutApproval?: boolean; fundMinor?: number } = {},
): Promise<CreatedMerchant> {
  const m = await merchantWithHooks(t, options);
  await setPayoutAccess(t.db, m.merchant_id, 'live', { payout_access: true });
  if (options.fundMinor !== 0) await fund(t, m.merchant_id, 'live', options.fundMinor ?? 1_000_000);
  return m;
}

let bankIdsCache: string[] | null = null;

/** The bank ids offered by GET /api/v1/payouts/capabilities. */
export async function bankIds(t: TestContext, key: string): Promise<string[]> {
  if (!bankIdsCache) {
    const res = await api(t, key, 'GET', '/api/v1/payouts/capabilities');
    assert.equal(res.statusCode, 200, res.body);
    bankIdsCache = (res.json().banks as { id: string }[]).map((bank) => bank.id);
  }
  return bankIdsCache;
}

export interface RecipientJson {
  id: string;
  account_type: string;
  account_number: string | null;
  phone: string | null;
  verification_status: string;
  verified: boolean;
  active: boolean;
  previous_version_id: string | null;
  rejection_reason?: string;
  [key: string]: unknown;
}

export async function bankRecipient(
  t: TestContext,
  key: string,
  accountNumber = '1234567890',
  extra: JsonBody = {},
): Promise<RecipientJson> {
  const [bankId] = await bankIds(t, key);
  const res = await api(t, key, 'POST', '/api/v1/payouts/recipients', {
    bank_id: bankId,
    account_number: accountNumber,
    account_name: 'Kofi Mensah',
    ...extra,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

export async function momoRecipient(
  t: TestContext,
  key: string,
  phone = '0241234567',
  network = 'mtn',
  extra: JsonBody = {},
): Promise<RecipientJson> {
  const res = await api(t, key, 'POST', '/api/v1/payouts/recipients', {
    account_type: 'momo',
    network,
    phone,
    account_name: 'Ama Owusu',
    ...extra,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

export interface PayoutJson {
  id: string;
  reference: string;
  client_reference: string;
  status: string;
  amount_minor: number;
  fee_minor: number;
  total_debit_minor: number;
  bank_reference: string;
  return_reference: string;
  reconciliation_status: string;
  can_cancel: boolean;
  [key: string]: unknown;
}

export const newClientReference = (): string => `ref-${randomUUID()}`;

/** POST /api/v1/payouts; the raw response. */
export function postPayout(t: TestContext, key: string, body: JsonBody): Promise<LightMyRequestResponse> {
  return api(t, key, 'POST', '/api/v1/payouts', body);
}

/** POST /api/v1/payouts that must succeed with 201; the payout. */
export async function createPayout(
  t: TestContext,
  key: string,
  recipientId: string,
  amountMinor: number,
  extra: JsonBody = {},
): Promise<PayoutJson> {
  const res = await postPayout(t, key, {
    recipient_id: recipientId,
    amount_minor: amountMinor,
    client_reference: newClientReference(),
    ...extra,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

export async function getPayout(t: TestContext, key: string, id: string): Promise<PayoutJson> {
  const res = await api(t, key, 'GET', `/api/v1/payouts/${id}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

/** The principal a key authenticates as (for calling services directly). */
export async function principalOf(t: TestContext, key: string): Promise<ApiPrincipal> {
  const principal = await t.app.deps.authenticator.authenticate(`Bearer ${key}`);
  assert.ok(principal, 'the key authenticates');
  return principal;
}

/** A dashboard user of the merchant with a role (approver, viewer, ...). */
export async function addUser(
  t: TestContext,
  merchantId: string,
  role: 'owner' | 'admin' | 'developer' | 'approver' | 'viewer',
): Promise<string> {
  const id = randomUUID();
  await t.db.query('INSERT INTO users (id, merchant_id, email, role) VALUES ($1, $2, $3, $4)', [
    id,
    merchantId,
    `${role}-${id}@example.com`,
    role,
  ]);
  return id;
}

/** A second key of the merchant in an environment (created by createdByUserId), optionally with its own active webhook endpoint. */
export async function extraKey(
  t: TestContext,
  merchantId: string,
  environment: Environment,
  options: { createdByUserId?: string | null; webhook?: boolean } = {},
): Promise<{ id: string; key: string }> {
  return t.db.transaction(async (tx) => {
    const integration = await tx.query<{ id: string }>(
      'SELECT id FROM integrations WHERE merchant_id = $1 AND environment = $2 LIMIT 1',
      [merchantId, environment],
    );
    const issued = await issueApiKey(tx, {
      merchantId,
      integrationId: integration[0]!.id,
      environment,
      createdByUserId: options.createdByUserId ?? null,
    });
    if (options.webhook !== false) {
      await insertWebhookEndpoint(tx, {
        id: randomUUID(),
        merchantId,
        environment,
        apiKeyId: issued.id,
        url: WEBHOOK_URL,
        secret: `whsec_${randomUUID()}`,
      });
    }
    return { id: issued.id, key: issued.key };
  });
}

export interface StoredEvent {
  type: string;
  payload: {
    id: string;
    type: string;
    environment: string;
    livemode: boolean;
    data: Record<string, unknown>;
    [key: string]: unknown;
  };
}

/** The events written to the outbox for an object, oldest first. */
export async function eventsFor(t: TestContext, objectId: string): Promise<StoredEvent[]> {
  const rows = await t.db.query<{ type: string; payload: string }>(
    'SELECT type, payload FROM events WHERE object_id = $1 ORDER BY created_at, object_version, id',
    [objectId],
  );
  return rows.map((row) => ({ type: row.type, payload: JSON.parse(row.payload) }));
}

export async function payoutStatus(
  t: TestContext,
  payoutId: string,
): Promise<{ status: string; processing_step: string | null }> {
  const rows = await t.db.query<{ status: string; processing_step: string | null }>(
    'SELECT status, processing_step FROM payouts WHERE id = $1',
    [payoutId],
  );
  assert.ok(rows[0], `payout ${payoutId} exists`);
  return rows[0];
}

/** Makes a Live payout's next processing step due now (instead of waiting for its backoff). */
export const makeDue = (t: TestContext, payoutId: string) =>
  t.db.query('UPDATE payouts SET next_step_at = now() WHERE id = $1', [payoutId]);

/** Runs the Live payout processor until the payout leaves processing (or stays pending at the provider); its final status. */
export async function drive(t: TestContext, rail: PayoutRail, payoutId: string, stepsMax = 10): Promise<string> {
  for (let step = 0; step < stepsMax; step++) {
    const { status } = await payoutStatus(t, payoutId);
    if (status !== 'processing') return status;
    await makeDue(t, payoutId);
    await processDuePayouts(t.db, rail, { only: [payoutId] });
  }
  return (await payoutStatus(t, payoutId)).status;
}

/** Funds a Test balance the way a merchant's money really arrives: a card payment through checkout (card: 2.5% merchant-borne). */
export async function fundThroughCheckout(t: TestContext, testKey: string, amountMinor: number): Promise<void> {
  const session = await api(t, testKey, 'POST', '/api/v1/sessions', {
    amount_minor: amountMinor,
    invoice_ref: `INV-${randomUUID().slice(0, 8)}`,
  });
  assert.equal(session.statusCode, 201, session.body);
  const sessionId = session.json().id as string;
  const attempt = await t.app.inject({
    method: 'POST',
    url: `/api/v1/checkout/sessions/${sessionId}/provider-attempts`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ rail: 'card', amount_minor: amountMinor }),
  });
  assert.equal(attempt.statusCode, 201, attempt.body);
  const simulated = await api(
    t,
    testKey,
    'POST',
    `/api/v1/test/payment-attempts/${attempt.json().attempt_reference}/simulate`,
    { outcome: 'paid' },
  );
  assert.equal(simulated.statusCode, 200, simulated.body);
  assert.equal(simulated.json().session_status, 'success');
}

/**
 * Runs the Test verifier for these recipients now: their creation is moved back past the verifier's
 * delay (2 s), then the verifier runs until none of them is pending (it takes the oldest 100 per pass,
 * and a shared PostgreSQL may hold other pending recipients).
 */
export async function verifyRecipientsNow(t: TestContext, ...ids: string[]): Promise<void> {
  await t.db.query(`UPDATE recipients SET created_at = now() - interval '3 seconds' WHERE id = ANY($1::text[])`, [ids]);
  for (let pass = 0; pass < 100; pass++) {
    await verifyTestRecipients(t.db);
    const pending = await t.db.query(
      `SELECT 1 FROM recipients WHERE id = ANY($1::text[]) AND verification_status = 'pending_verification'`,
      [ids],
    );
    if (pending.length === 0) return;
  }
  assert.fail(`recipients ${ids.join(', ')} are still pending verification`);
}

/** The HTTP status the API would answer a use case's refusal with (undefined for anything else). */
export const httpStatusOf = (error: unknown) => (error instanceof SikaError ? statusOf(error) : undefined);

/**
 * The steps of the payout creation and processing files on one app's storage; `app` is read when a step runs,
 * after the test file's before hook started it.
 */
export function payoutSteps(app: () => TestContext) {
  /** A Test merchant with webhook endpoints and a funded Test balance. */
  async function testMerchant(fundMinor = 1_000_000): Promise<CreatedMerchant> {
    const m = await merchantWithHooks(app());
    if (fundMinor > 0) await fund(app(), m.merchant_id, 'test', fundMinor);
    return m;
  }

  const payoutRows = async (merchantId: string) =>
    (
      await app().db.query<{ n: number }>('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [merchantId])
    )[0]!.n;

  async function assertHealthy(merchantId: string) {
    assert.deepEqual(await checkInvariants(app().db, merchantId), []);
  }

  return { testMerchant, payoutRows, assertHealthy };
}
