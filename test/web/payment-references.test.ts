// Issue 31, references a payer and support can use, on the read side: over HTTP on both storages, a paid
// session's `payment` carries the provider's transaction id and the card (null until the provider names them),
// on GET and the list; the sessions and balance transactions CSV files gain provider_transaction_id, card_brand
// and card_last4 at their end (every earlier column where it was); the operator console's search finds a
// session by the provider's transaction id, our provider reference, an attempt id or a session id; the
// dashboard's session page shows the references and the card, and a second payment refunded automatically
// (a payer who changed course, then approved the old attempt too) as a plain notice. The Test simulator names
// no transaction id or card, so the Test cases record them through the store's write of a provider's answer
// (recordProviderFacts); the Live case gets them from the Paystack stand-in through the adapter.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { recordProviderFacts } from '../../src/checkout/store.ts';
import { createOperator } from '../../src/ops/service.ts';
import { around, csvRows } from '../support/books.ts';
import { createSession, momoBody, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import {
  eventually,
  freePort,
  liveSession,
  merchantSession,
  payerAttempt,
  startLiveApp,
  type LiveApp,
} from '../support/live.ts';
import { startPaystackStandIn, type PaystackStandIn } from '../support/standins/paystack.ts';

const PASSWORD = 'payment-references-password';

// The files' columns before issue 31, in order, written out here (not read from the code): they must stay put.
const SESSION_COLUMNS_BEFORE = [
  'id',
  'created_at',
  'status',
  'invoice_ref',
  'description',
  'customer_name',
  'customer_email',
  'amount_minor',
  'amount_ghs',
  'currency',
  'attempt_reference',
  'payment_status',
  'rail',
  'provider',
  'provider_reference',
  'amount_charged_minor',
  'fee_minor',
  'net_minor',
  'amount_charged_ghs',
  'fee_ghs',
  'net_ghs',
  'paid_at',
];
const BALANCE_TRANSACTION_COLUMNS_BEFORE = [
  'id',
  'created_at',
  'type',
  'source_type',
  'source_id',
  'session_id',
  'amount_minor',
  'fee_minor',
  'net_minor',
  'balance_after_minor',
  'amount_ghs',
  'fee_ghs',
  'net_ghs',
  'balance_after_ghs',
  'currency',
];
const APPENDED = ['provider_transaction_id', 'card_brand', 'card_last4'];

/** A CSV file's header names (the BOM dropped). */
const headerOf = (body: string): string[] =>
  body
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)[0]!
    .split(',');
/** The session ids an /ops page links to in its Payments table. */
const sessionsFoundIn = (body: string): string[] => {
  const table = /<table aria-label="Payments">([\s\S]*?)<\/table>/.exec(body)?.[1] ?? '';
  return [...table.matchAll(/<span class="mono wrap">(cs_[0-9a-z]+)<\/span>/g)].map((m) => m[1]!);
};
/** Text of a page with the tags dropped and entities the templates write decoded. */
const textOf = (body: string): string =>
  body
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

type Payment = {
  attempt_reference: string;
  provider_reference: string;
  provider_transaction_id: string | null;
  card: { brand: string; last4: string } | null;
};

describe(`payment references: API, exports, console search, dashboard (${storageKind})`, () => {
  let t: TestContext;
  let ops: ConsoleClient;
  before(async () => {
    t = await startTestApp();
    const operatorEmail = `operator-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: operatorEmail, password: PASSWORD });
    ops = await new ConsoleClient(t, '/ops').signedIn(operatorEmail, PASSWORD);
  });
  after(async () => t?.close());

  const getSession = async (m: CreatedMerchant, id: string) => {
    const res = await call(t, 'GET', `/api/v1/sessions/${id}`, { key: m.test_api_key });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { id: string; status: string; payment: Payment | null };
  };
  /** What a provider's answer records on an attempt (the write provider-status.ts makes). */
  const providerNamed = (
    attemptId: string,
    facts: { providerTransactionId?: string; card?: { brand: string; last4: string } },
  ) => t.db.transaction((tx) => recordProviderFacts(tx, attemptId, facts));

  async function paidCardSession(m: CreatedMerchant, amountMinor = 40_000) {
    const session = await createSession(t, m, { amount_minor: amountMinor });
    const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', amountMinor) });
    await simulate(t, m, attempt.attempt_reference, 'paid');
    return { session, attempt };
  }

  it("a paid session's payment carries the provider's transaction id and the card on GET and the list; null until the provider names them", async () => {
    const m = await t.merchant();
    const { session, attempt } = await paidCardSession(m);
    const before = (await getSession(m, session.id)).payment!;
    assert.equal(before.attempt_reference, attempt.attempt_reference);
    assert.equal(before.provider_reference, attempt.provider_reference);
    assert.equal(before.provider_transaction_id, null);
    assert.equal(before.card, null);

    await providerNamed(attempt.attempt_reference, {
      providerTransactionId: '4099260516',
      card: { brand: 'visa', last4: '4081' },
    });
    const named = (await getSession(m, session.id)).payment!;
    assert.equal(named.provider_transaction_id, '4099260516');
    assert.deepEqual(named.card, { brand: 'visa', last4: '4081' });
    assert.equal(named.provider_reference, attempt.provider_reference, 'our reference is kept beside it');
    const listed = (await call(t, 'GET', '/api/v1/sessions', { key: m.test_api_key })).json().data as {
      id: string;
      payment: Payment;
    }[];
    assert.deepEqual(listed.find((s) => s.id === session.id)!.payment, named, 'the list shows the same payment');

    // Mobile Money: a transaction id and no card.
    const momo = await createSession(t, m, { amount_minor: 10_000 });
    const momoAttempt = await startAttempt(t, momo.id, momoBody(10_000));
    await simulate(t, m, momoAttempt.attempt_reference, 'paid');
    await providerNamed(momoAttempt.attempt_reference, { providerTransactionId: '363440463' });
    const momoPayment = (await getSession(m, momo.id)).payment!;
    assert.equal(momoPayment.provider_transaction_id, '363440463');
    assert.equal(momoPayment.card, null);
    // A brand without its last four digits is never half a card.
    await t.db.query(`UPDATE payment_attempts SET card_brand = 'visa' WHERE id = $1`, [momoAttempt.attempt_reference]);
    assert.equal((await getSession(m, momo.id)).payment!.card, null);
  });

  it('the sessions and balance transactions CSV files append provider_transaction_id, card_brand and card_last4, every earlier column in place', async () => {
    const m = await t.merchant();
    const { session, attempt } = await paidCardSession(m, 20_000);
    await providerNamed(attempt.attempt_reference, {
      providerTransactionId: '5123456789',
      card: { brand: 'mastercard', last4: '0042' },
    });
    const open = await createSession(t, m, { amount_minor: 1_000 });

    const sessions = await call(t, 'GET', '/api/v1/sessions', {
      key: m.test_api_key,
      query: around(),
      headers: { accept: 'text/csv' },
    });
    assert.equal(sessions.statusCode, 200, sessions.body);
    // Issue 35 appends the payment link and the payer's custom fields after these (test/checkout/payment-links-api.test.ts).
    assert.deepEqual(headerOf(sessions.body), [
      ...SESSION_COLUMNS_BEFORE,
      ...APPENDED,
      'payment_link_id',
      'custom_fields',
    ]);
    const rows = csvRows(sessions.body);
    assert.deepEqual(
      rows.map((r) => r.id),
      [session.id, open.id],
    );
    assert.deepEqual(
      [rows[0]!.provider_reference, rows[0]!.provider_transaction_id, rows[0]!.card_brand, rows[0]!.card_last4],
      [attempt.provider_reference, '5123456789', 'mastercard', '0042'],
    );
    assert.deepEqual(
      [rows[1]!.provider_transaction_id, rows[1]!.card_brand, rows[1]!.card_last4],
      ['', '', ''],
      'an open session has no payment',
    );

    // The same file from the export operation.
    const exported = await call(t, 'GET', '/api/v1/exports/sessions', { key: m.test_api_key, query: around() });
    assert.equal(exported.statusCode, 200, exported.body);
    assert.equal(exported.body, sessions.body);

    const txns = await call(t, 'GET', '/api/v1/balance/transactions', {
      key: m.test_api_key,
      query: around(),
      headers: { accept: 'text/csv' },
    });
    assert.equal(txns.statusCode, 200, txns.body);
    assert.deepEqual(headerOf(txns.body), [
      ...BALANCE_TRANSACTION_COLUMNS_BEFORE,
      ...APPENDED,
      'available_on',
      'status',
      'payout_id',
    ]);
    const payment = csvRows(txns.body).filter((r) => r.type === 'payment');
    assert.equal(payment.length, 1);
    assert.deepEqual(
      [
        payment[0]!.source_id,
        payment[0]!.session_id,
        payment[0]!.provider_transaction_id,
        payment[0]!.card_brand,
        payment[0]!.card_last4,
      ],
      [attempt.attempt_reference, session.id, '5123456789', 'mastercard', '0042'],
    );
    // The JSON list is unchanged: no new fields on a balance transaction.
    const listed = (await call(t, 'GET', '/api/v1/balance/transactions', { key: m.test_api_key })).json()
      .data as Record<string, unknown>[];
    assert.ok(listed.every((row) => !('provider_transaction_id' in row)));
  });

  it("the operator console's search finds a session by the provider's transaction id, our provider reference, an attempt id or a session id", async () => {
    const m = await t.merchant();
    const other = await t.merchant();
    const { session, attempt } = await paidCardSession(m, 25_000);
    const transactionId = `${Date.now()}${Math.floor(Math.random() * 1_000)}`;
    await providerNamed(attempt.attempt_reference, {
      providerTransactionId: transactionId,
      card: { brand: 'visa', last4: '1234' },
    });
    const theirs = await paidCardSession(other, 25_000);
    const untouched = await createSession(t, m);

    for (const q of [
      transactionId,
      ` ${transactionId} `,
      attempt.provider_reference,
      attempt.provider_reference.toLowerCase(),
      attempt.attempt_reference,
      attempt.attempt_reference.toUpperCase(),
      session.id,
    ]) {
      const res = await ops.get(`/ops?q=${encodeURIComponent(q)}`);
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      assert.deepEqual(sessionsFoundIn(res.body), [session.id], `search ${JSON.stringify(q)}`);
      const text = textOf(res.body);
      assert.match(text, new RegExp(`${m.merchant_id}|Test Merchant`), 'the merchant is named');
      assert.ok(
        text.includes(transactionId) && text.includes(attempt.provider_reference) && text.includes('Visa ending 1234'),
        `the references and the card are shown for ${q}`,
      );
      assert.ok(res.body.includes(`href="/ops/merchants/${m.merchant_id}"`), 'the merchant is linked');
      assert.doesNotMatch(res.body, /No merchant matches/);
    }
    // A session without attempts is found by its id; another merchant's payment by its own reference only.
    assert.deepEqual(sessionsFoundIn((await ops.get(`/ops?q=${untouched.id}`)).body), [untouched.id]);
    assert.deepEqual(
      sessionsFoundIn((await ops.get(`/ops?q=${encodeURIComponent(theirs.attempt.provider_reference)}`)).body),
      [theirs.session.id],
    );
    // A fragment is not a reference (looked up, not searched in), and a merchant's name shows no payments.
    const fragment = await ops.get(`/ops?q=${encodeURIComponent(transactionId.slice(0, -2))}`);
    assert.deepEqual(sessionsFoundIn(fragment.body), []);
    assert.match(fragment.body, /No merchant matches/);
    assert.doesNotMatch((await ops.get(`/ops?q=${encodeURIComponent('Test Merchant')}`)).body, /aria-label="Payments"/);
    // The CSV of the list is still the merchants'.
    const csv = await ops.get(`/ops?q=${encodeURIComponent(transactionId)}&format=csv`);
    assert.equal(csv.statusCode, 200);
    assert.equal(csvRows(csv.body).length, 0);
  });

  it("the dashboard's session page shows the provider's reference and the card, and a second payment refunded automatically as a plain notice", async () => {
    const email = `owner-${randomUUID().slice(0, 8)}@example.com`;
    const m = await createMerchant(
      t.db,
      { name: `Ama Prints ${randomUUID().slice(0, 4)}`, email, password: PASSWORD, webhookUrl: null },
      t.webhookTargets,
    );
    const dashboard = await new ConsoleClient(t, '/dashboard').signedIn(email, PASSWORD);

    // The payer starts a card payment, gives up on it, pays by Mobile Money, then completes the card page too.
    const amountMinor = 30_000;
    const session = await createSession(t, m, { amount_minor: amountMinor });
    const card = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', amountMinor) });
    await simulate(t, m, card.attempt_reference, 'cancelled');
    const momo = await startAttempt(t, session.id, momoBody(amountMinor));
    await simulate(t, m, momo.attempt_reference, 'paid');
    await providerNamed(momo.attempt_reference, { providerTransactionId: '7700112233' });

    let page = await dashboard.get(`/dashboard/sessions/${session.id}`);
    assert.equal(page.statusCode, 200);
    let text = textOf(page.body);
    assert.match(text, /Provider's reference 7700112233 ours: /, 'the Payment card names the provider reference first');
    assert.ok(text.includes(momo.provider_reference));
    assert.doesNotMatch(text, /A second payment/);

    await simulate(t, m, card.attempt_reference, 'paid'); // the late success of the abandoned card page
    await providerNamed(card.attempt_reference, {
      providerTransactionId: '4099260517',
      card: { brand: 'visa ', last4: '4081' },
    });
    const refunds = await t.db.query<{ id: string; attempt_id: string; amount_minor: number; status: string }>(
      'SELECT id, attempt_id, amount_minor::int AS amount_minor, status FROM refunds WHERE session_id = $1',
      [session.id],
    );
    assert.deepEqual(
      refunds.map((r) => [r.attempt_id, r.amount_minor, r.status]),
      [[card.attempt_reference, totalOf('card', amountMinor), 'succeeded']],
      'the late card payment was refunded in full',
    );

    page = await dashboard.get(`/dashboard/sessions/${session.id}`);
    text = textOf(page.body);
    const charged = (totalOf('card', amountMinor) / 100).toFixed(2);
    assert.ok(
      text.includes(
        `A second payment of GHS ${charged} arrived after this checkout was paid. It was refunded automatically (${refunds[0]!.id}).`,
      ),
      text.slice(0, 2_000),
    );
    assert.ok(text.includes('Visa ending 4081'), 'the attempts table shows the card of the late payment');
    assert.ok(text.includes('4099260517'));
    // The session's payment is still the Mobile Money one, and all of it can still be refunded.
    assert.equal((await getSession(m, session.id)).payment!.attempt_reference, momo.attempt_reference);
    assert.match(text, /Provider's reference 7700112233/);
    assert.match(
      page.body,
      new RegExp(`Up to GHS ${(totalOf('momo', amountMinor) / 100).toFixed(2)} can still be refunded`),
    );
    assert.match(text, /Refunded GHS 0\.00/);
  });
});

describe(`payment references from a Live provider: the Paystack stand-in (${storageKind})`, () => {
  const SECRET = 'sk_test_standin_references';
  let paystack: PaystackStandIn;
  let app: LiveApp;

  before(async () => {
    const port = await freePort();
    paystack = await startPaystackStandIn({
      secretKey: SECRET,
      webhookUrl: `http://127.0.0.1:${port}/api/v1/providers/paystack/webhook`,
    });
    app = await startLiveApp(port, { PAYSTACK_SECRET_KEY: SECRET, PAYSTACK_BASE_URL: paystack.baseUrl });
  });
  after(async () => {
    await app?.t.close();
    await paystack?.close();
  });

  it("a card paid on Paystack's page: the session's payment, the sessions CSV and the console search carry Paystack's transaction id and the card", async () => {
    const m = await app.t.merchant();
    const session = await liveSession(app, m, 15_000);
    const res = await payerAttempt(app, session.id, { rail: 'card' });
    assert.equal(res.status, 201, res.text);
    const attempt = res.json;
    const charge = paystack.charge(attempt.provider_reference)!;
    const accessCode = new URL(attempt.instructions.redirect_url).pathname.split('/').pop();
    const back = await fetch(`${paystack.baseUrl}/checkout/${accessCode}/pay`, { method: 'POST', redirect: 'manual' });
    assert.equal(back.status, 303);
    await paystack.webhooksIdle();
    const paid = await eventually(async () => {
      const s = (await merchantSession(app, m, session.id)).json;
      return s.status === 'success' && s.payment?.provider_transaction_id ? s : undefined;
    });
    assert.equal(paid.payment.provider_transaction_id, String(charge.id), "Paystack's data.id");
    assert.deepEqual(paid.payment.card, { brand: 'visa', last4: '4081' });
    assert.equal(paid.payment.provider_reference, attempt.provider_reference);

    const file = await app.http('GET', `/api/v1/exports/sessions?${new URLSearchParams(around())}`, {
      key: m.live_api_key,
    });
    assert.equal(file.status, 200, file.text);
    const row = csvRows(file.text).find((r) => r.id === session.id)!;
    assert.deepEqual(
      [row.provider_transaction_id, row.card_brand, row.card_last4],
      [String(charge.id), 'visa', '4081'],
    );

    const operatorEmail = `operator-${randomUUID()}@example.com`;
    await createOperator(app.t.db, { email: operatorEmail, password: PASSWORD });
    const console_ = await new ConsoleClient(app.t, '/ops').signedIn(operatorEmail, PASSWORD);
    // Our reference is unique; the stand-in numbers its transactions from 1001 on each start, so a kept database
    // holds earlier runs' payments with the same id: this one is the newest found.
    assert.deepEqual(
      sessionsFoundIn((await console_.get(`/ops?q=${encodeURIComponent(attempt.provider_reference)}`)).body),
      [session.id],
    );
    assert.equal(sessionsFoundIn((await console_.get(`/ops?q=${charge.id}`)).body)[0], session.id);
  });
});
