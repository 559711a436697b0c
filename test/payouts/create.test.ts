// Payout creation, fees, retries, refusals, Live processing, returns, reconciliation, approval and lists
// (SPEC 2.10-2.12, 3.3, 4.3, 5, 6.2, 7; DESIGN §3 Payouts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import { DbError } from '../../src/db/index.ts';
import { createPayout as createPayoutDirectly } from '../../src/payouts/create.ts';
import { decidePayout, markPayoutReturned, reconcilePayout } from '../../src/payouts/lifecycle.ts';
import { processDuePayouts } from '../../src/payouts/processing.ts';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import { advanceProcessingStep } from '../../src/payouts/payout-store.ts';
import { LivePayoutSimulator } from '../../src/rails/payouts.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope } from '../support/http.ts';
import {
  addUser,
  api,
  balanceOf,
  bankRecipient,
  createPayout,
  drive,
  eventsFor,
  extraKey,
  fund,
  fundThroughCheckout,
  getPayout,
  liveMerchant,
  makeDue,
  merchantWithHooks,
  momoRecipient,
  newClientReference,
  payoutStatus,
  postPayout,
  verifyRecipientsNow,
  type PayoutJson,
} from '../support/payouts-fixtures.ts';
import { statusOf } from '../../src/http/errors.ts';
import { SikaError } from '../../src/lib/errors.ts';
import { LiveProviders } from '../../src/rails/live.ts';

/** The HTTP status the API would answer a use case's refusal with (undefined for anything else). */
const httpStatusOf = (error: unknown) => (error instanceof SikaError ? statusOf(error) : undefined);

const PAYLOAD_PAYOUT_KEYS = [
  'amount_minor',
  'bank_reference',
  'currency',
  'fee_minor',
  'id',
  'reconciliation_status',
  'reference',
  'return_reference',
  'status',
];
const PAYLOAD_KEYS = ['created_at', 'data', 'environment', 'id', 'livemode', 'type', 'version'];

describe(`payout creation and processing (${storageKind})`, () => {
  let t: TestContext;
  const rail = new LivePayoutSimulator();
  before(async () => {
    t = await startTestApp({}, { payoutRail: rail });
  });
  after(() => t.close());

  /** A Test merchant with webhook endpoints and a funded Test balance. */
  async function testMerchant(fundMinor = 1_000_000): Promise<CreatedMerchant> {
    const m = await merchantWithHooks(t);
    if (fundMinor > 0) await fund(t, m.merchant_id, 'test', fundMinor);
    return m;
  }

  const payoutRows = async (merchantId: string) =>
    (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [merchantId]))[0]!
      .n;

  async function assertHealthy(merchantId: string) {
    assert.deepEqual(await checkInvariants(t.db, merchantId), []);
  }

  // ---------- Test payouts ----------

  it('a Test payout is paid at once with a TEST- bank reference, no reconciliation, no cancel and a receipt', async () => {
    const m = await testMerchant(50_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    const clientReference = newClientReference();
    const res = await postPayout(t, m.test_api_key, {
      recipient_id: recipient.id,
      amount_minor: 10_000,
      client_reference: clientReference,
      notes: 'June rent',
    });
    assert.equal(res.statusCode, 201, res.body);
    const payout = res.json();
    assert.match(payout.id, /^po_/);
    assert.equal(typeof payout.reference, 'string');
    assert.ok(payout.reference.length > 0);
    assert.equal(payout.client_reference, clientReference);
    assert.equal(payout.status, 'paid');
    assert.equal(payout.status_label, 'Paid');
    assert.equal(payout.amount_minor, 10_000);
    assert.equal(payout.fee_minor, 100);
    assert.equal(payout.total_debit_minor, 10_100);
    assert.equal(payout.currency, 'GHS');
    assert.equal(payout.notes, 'June rent');
    assert.match(payout.bank_reference, /^TEST-/);
    assert.equal(payout.return_reference, '');
    assert.equal(payout.reconciliation_status, 'not_required');
    assert.equal(payout.can_cancel, false);
    assert.equal(payout.livemode, false);
    assert.equal(payout.recipient.id, recipient.id);
    assert.equal(payout.recipient.account_type, 'bank');

    assert.deepEqual(await balanceOf(t, m.merchant_id, 'test'), {
      environment: 'test',
      currency: 'GHS',
      available_minor: 39_900,
      held_minor: 0,
      eligible_minor: 39_900,
    });
    const apiBalance = await api(t, m.test_api_key, 'GET', '/api/v1/payouts/balance');
    assert.deepEqual(apiBalance.json(), {
      environment: 'test',
      currency: 'GHS',
      available_minor: 39_900,
      held_minor: 0,
      eligible_minor: 39_900,
    });

    const receipt = await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}/receipt`);
    assert.equal(receipt.statusCode, 200);
    assert.match(String(receipt.headers['content-type']), /^application\/pdf/);
    assert.equal(receipt.rawPayload.subarray(0, 5).toString('latin1'), '%PDF-');
    await assertHealthy(m.merchant_id);
  });

  it('a Test payout queues payout.paid whose payload has exactly the SPEC 6.2 keys and no client reference or recipient details', async () => {
    const m = await testMerchant(50_000);
    const otherKey = await extraKey(t, m.merchant_id, 'test'); // with its own endpoint, which must not receive this payout's events
    const recipient = await momoRecipient(t, m.test_api_key, '0241234567');
    const clientReference = `secret-ref-${Date.now()}`;
    const payout = await createPayout(t, m.test_api_key, recipient.id, 10_000, {
      client_reference: clientReference,
      notes: 'private note',
    });
    const events = await eventsFor(t, payout.id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['payout.paid'],
    );
    const payload = events[0]!.payload;
    assert.deepEqual(Object.keys(payload).sort(), PAYLOAD_KEYS);
    assert.match(payload.id, /^evt_/);
    assert.equal(payload.type, 'payout.paid');
    assert.equal(payload.environment, 'test');
    assert.equal(payload.livemode, false);
    assert.deepEqual(Object.keys(payload.data), ['payout']);
    const data = payload.data.payout as Record<string, unknown>;
    assert.deepEqual(Object.keys(data).sort(), PAYLOAD_PAYOUT_KEYS);
    assert.deepEqual(data, {
      id: payout.id,
      reference: payout.reference,
      status: 'paid',
      amount_minor: 10_000,
      fee_minor: 100,
      currency: 'GHS',
      bank_reference: payout.bank_reference,
      return_reference: '',
      reconciliation_status: 'not_required',
    });
    const text = JSON.stringify(payload);
    for (const leak of [
      'client_reference',
      clientReference,
      'recipient',
      recipient.id,
      '+233241234567',
      'Ama Owusu',
      'private note',
      'session',
      'evidence',
    ]) {
      assert.ok(!text.includes(leak), `the payout.paid payload carries ${leak}`);
    }
    // The event goes only to the endpoint paired with the key that created the payout (SPEC 5.5).
    const deliveries = await t.db.query<{ api_key_id: string }>(
      'SELECT w.api_key_id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id WHERE e.object_id = $1',
      [payout.id],
    );
    const creatingKey = await t.db.query<{ api_key_id: string }>('SELECT api_key_id FROM payouts WHERE id = $1', [
      payout.id,
    ]);
    assert.deepEqual(
      deliveries.map((row) => row.api_key_id),
      [creatingKey[0]!.api_key_id],
    );
    assert.notEqual(creatingKey[0]!.api_key_id, otherKey.id);
  });

  it('a balance funded by a real card payment through checkout pays out to the last pesewa', async () => {
    const m = await merchantWithHooks(t);
    await fundThroughCheckout(t, m.test_api_key, 100_000);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 97_500, 'card is 2.5% merchant-borne');
    const recipient = await bankRecipient(t, m.test_api_key);
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: recipient.id,
        amount_minor: 97_401,
        client_reference: newClientReference(),
      }),
      409,
      'INSUFFICIENT_FUNDS',
    );
    const payout = await createPayout(t, m.test_api_key, recipient.id, 97_400);
    assert.equal(payout.total_debit_minor, 97_500);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'test'), {
      environment: 'test',
      currency: 'GHS',
      available_minor: 0,
      held_minor: 0,
      eligible_minor: 0,
    });
    await assertHealthy(m.merchant_id);
  });

  it('fees: bank GHS 1.00 flat; momo 1% half up, at least GHS 0.50 and at most GHS 10.00', async () => {
    const m = await testMerchant(10_000_000);
    const bank = await bankRecipient(t, m.test_api_key);
    const wallet = await momoRecipient(t, m.test_api_key);
    const cases: [string, number, number][] = [
      [bank.id, 1, 100],
      [bank.id, 5_000, 100],
      [bank.id, 4_000_000, 100],
      [wallet.id, 1, 50],
      [wallet.id, 4_000, 50],
      [wallet.id, 5_000, 50],
      [wallet.id, 5_049, 50],
      [wallet.id, 5_050, 51],
      [wallet.id, 12_345, 123],
      [wallet.id, 12_350, 124],
      [wallet.id, 100_000, 1_000],
      [wallet.id, 100_049, 1_000],
      [wallet.id, 200_000, 1_000],
    ];
    let spent = 0;
    for (const [recipientId, amount, fee] of cases) {
      const quote = await api(t, m.test_api_key, 'POST', '/api/v1/payouts/quote', {
        recipient_id: recipientId,
        amount_minor: amount,
      });
      assert.equal(quote.statusCode, 200, quote.body);
      assert.equal(quote.json().fee_minor, fee, `quote of ${amount}`);
      assert.equal(quote.json().total_debit_minor, amount + fee);
      const payout = await createPayout(t, m.test_api_key, recipientId, amount);
      assert.equal(payout.fee_minor, fee, `fee of ${amount} to ${recipientId === bank.id ? 'bank' : 'momo'}`);
      assert.equal(payout.total_debit_minor, amount + fee);
      spent += amount + fee;
    }
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 10_000_000 - spent);
    await assertHealthy(m.merchant_id);
  });

  it('a quote reserves nothing and locks nothing: payout creation ignores a quote_id and prices the payout itself', async () => {
    const m = await testMerchant(50_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    const quote = (
      await api(t, m.test_api_key, 'POST', '/api/v1/payouts/quote', {
        recipient_id: recipient.id,
        amount_minor: 10_000,
      })
    ).json();
    assert.match(quote.quote_id, /^quo_/);
    assert.equal(quote.currency, 'GHS');
    assert.ok(Date.parse(quote.expires_at) > Date.now());
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 50_000);
    // quote_id is not a payout field: like any unknown field it is ignored, and the payout is priced at submission.
    const withQuote = await postPayout(t, m.test_api_key, {
      recipient_id: recipient.id,
      amount_minor: 20_000,
      client_reference: newClientReference(),
      quote_id: quote.quote_id,
    });
    assert.equal(withQuote.statusCode, 201, withQuote.body);
    assert.equal(withQuote.json().amount_minor, 20_000);
    assert.equal(withQuote.json().fee_minor, 100);
    assert.equal('quote_id' in withQuote.json(), false);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 50_000 - 20_100);
  });

  it('a retry with the same key, client_reference and fields returns the same payout with 200 and its original fee, even after the recipient changed', async () => {
    const m = await testMerchant(50_000);
    const recipient = await momoRecipient(t, m.test_api_key);
    const body = {
      recipient_id: recipient.id,
      amount_minor: 5_050,
      client_reference: newClientReference(),
      notes: 'n1',
      max_fee_minor: 60,
    };
    const first = await postPayout(t, m.test_api_key, body);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.json().fee_minor, 51);
    assert.equal(
      (await api(t, m.test_api_key, 'DELETE', `/api/v1/payouts/recipients/${recipient.id}`)).statusCode,
      204,
    );
    const retry = await postPayout(t, m.test_api_key, { ...body, currency: 'GHS' });
    assert.equal(retry.statusCode, 200, retry.body);
    assert.deepEqual(retry.json(), first.json());
    assert.equal(await payoutRows(m.merchant_id), 1);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 50_000 - 5_101, 'charged once');
    assert.equal((await eventsFor(t, first.json().id)).length, 1, 'one event');
  });

  it('the same client_reference with a changed amount, notes, recipient or fee limit is 409 REFERENCE_CONFLICT and creates nothing', async () => {
    const m = await testMerchant(50_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    const other = await bankRecipient(t, m.test_api_key, '99887766');
    const body = { recipient_id: recipient.id, amount_minor: 1_000, client_reference: newClientReference() };
    assert.equal((await postPayout(t, m.test_api_key, body)).statusCode, 201);
    for (const changed of [
      { amount_minor: 1_001 },
      { notes: 'changed' },
      { recipient_id: other.id },
      { max_fee_minor: 500 },
    ]) {
      assertErrorEnvelope(await postPayout(t, m.test_api_key, { ...body, ...changed }), 409, 'REFERENCE_CONFLICT');
    }
    assert.equal(await payoutRows(m.merchant_id), 1);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 50_000 - 1_100);
  });

  it('another key of the same merchant and environment cannot reuse a client_reference (409), while the other environment and other merchants can', async () => {
    const m = await testMerchant(50_000);
    const second = await extraKey(t, m.merchant_id, 'test');
    const recipient = await bankRecipient(t, m.test_api_key);
    const body = { recipient_id: recipient.id, amount_minor: 1_000, client_reference: newClientReference() };
    assert.equal((await postPayout(t, m.test_api_key, body)).statusCode, 201);
    assertErrorEnvelope(await postPayout(t, second.key, body), 409, 'REFERENCE_CONFLICT');
    assert.equal(await payoutRows(m.merchant_id), 1);

    const other = await testMerchant(50_000);
    const theirRecipient = await bankRecipient(t, other.test_api_key);
    assert.equal(
      (await postPayout(t, other.test_api_key, { ...body, recipient_id: theirRecipient.id })).statusCode,
      201,
    );

    await setPayoutAccess(t.db, m.merchant_id, 'live', { payout_access: true });
    await fund(t, m.merchant_id, 'live', 50_000);
    const liveRecipient = await bankRecipient(t, m.live_api_key);
    assert.equal((await postPayout(t, m.live_api_key, { ...body, recipient_id: liveRecipient.id })).statusCode, 201);
  });

  it('client_reference starts with a letter or digit, uses letters, digits and _ . : - and has at most 80 characters', async () => {
    const m = await testMerchant(100_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    const attempt = (client_reference: string) =>
      postPayout(t, m.test_api_key, { recipient_id: recipient.id, amount_minor: 100, client_reference });
    for (const good of ['a', '9', 'A1_b.c:d-e', 'x'.repeat(80)]) {
      const res = await attempt(good);
      assert.equal(res.statusCode, 201, `${good}: ${res.body}`);
    }
    for (const bad of ['-leading', '_leading', '.leading', 'x'.repeat(81), 'has space', 'slash/no', 'émile', '']) {
      assertErrorEnvelope(await attempt(bad), 400, 'INVALID_ARGUMENT');
    }
    assert.equal(await payoutRows(m.merchant_id), 4);
  });

  it('notes may have 500 characters, not 501', async () => {
    const m = await testMerchant(100_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    const ok = await postPayout(t, m.test_api_key, {
      recipient_id: recipient.id,
      amount_minor: 100,
      client_reference: newClientReference(),
      notes: 'n'.repeat(500),
    });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(ok.json().notes, 'n'.repeat(500));
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: recipient.id,
        amount_minor: 100,
        client_reference: newClientReference(),
        notes: 'n'.repeat(501),
      }),
      400,
      'INVALID_ARGUMENT',
    );
    assert.equal(await payoutRows(m.merchant_id), 1);
  });

  it('amount, types, currency and merchant_id/environment are validated (400) before anything is held', async () => {
    const m = await testMerchant(100_000);
    const other = await testMerchant(0);
    const recipient = await bankRecipient(t, m.test_api_key);
    const base = { recipient_id: recipient.id, amount_minor: 100, client_reference: newClientReference() };
    const bads = [
      { amount_minor: 0 },
      { amount_minor: -5 },
      { amount_minor: 10.5 },
      { amount_minor: '100' }, // wrong types are 400, not coerced (DESIGN)
      { max_fee_minor: '500' },
      { notes: 5 },
      { client_reference: 12345 },
      { max_fee_minor: -1 },
      { currency: 'USD' },
      { merchant_id: other.merchant_id },
      { environment: 'live' },
    ];
    for (const bad of bads) {
      assertErrorEnvelope(await postPayout(t, m.test_api_key, { ...base, ...bad }), 400, 'INVALID_ARGUMENT');
    }
    assertErrorEnvelope(await postPayout(t, m.live_api_key, { ...base, environment: 'test' }), 400, 'INVALID_ARGUMENT');
    assert.equal(await payoutRows(m.merchant_id), 0);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 100_000);
  });

  it('a fee above max_fee_minor is 409 FEE_LIMIT_EXCEEDED with no payout and nothing held; a limit equal to the fee passes', async () => {
    const m = await testMerchant(50_000);
    const bank = await bankRecipient(t, m.test_api_key);
    const wallet = await momoRecipient(t, m.test_api_key);
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: bank.id,
        amount_minor: 1_000,
        max_fee_minor: 99,
        client_reference: newClientReference(),
      }),
      409,
      'FEE_LIMIT_EXCEEDED',
    );
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: wallet.id,
        amount_minor: 5_050,
        max_fee_minor: 50,
        client_reference: newClientReference(),
      }),
      409,
      'FEE_LIMIT_EXCEEDED',
    );
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: wallet.id,
        amount_minor: 1_000,
        max_fee_minor: 0,
        client_reference: newClientReference(),
      }),
      409,
      'FEE_LIMIT_EXCEEDED',
    );
    assert.equal(await payoutRows(m.merchant_id), 0);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'test'), {
      environment: 'test',
      currency: 'GHS',
      available_minor: 50_000,
      held_minor: 0,
      eligible_minor: 50_000,
    });
    const ok = await createPayout(t, m.test_api_key, wallet.id, 5_050, { max_fee_minor: 51 });
    assert.equal(ok.fee_minor, 51);
  });

  it('amount plus fee above the available balance is 409 INSUFFICIENT_FUNDS and nothing is created; exactly the balance passes', async () => {
    const m = await testMerchant(10_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: recipient.id,
        amount_minor: 9_901,
        client_reference: newClientReference(),
      }),
      409,
      'INSUFFICIENT_FUNDS',
    );
    assert.equal(await payoutRows(m.merchant_id), 0);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 10_000);
    await createPayout(t, m.test_api_key, recipient.id, 9_900);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 0);
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: recipient.id,
        amount_minor: 1,
        client_reference: newClientReference(),
      }),
      409,
      'INSUFFICIENT_FUNDS',
    );
    const empty = await testMerchant(0);
    const theirs = await bankRecipient(t, empty.test_api_key);
    assertErrorEnvelope(
      await postPayout(t, empty.test_api_key, {
        recipient_id: theirs.id,
        amount_minor: 1,
        client_reference: newClientReference(),
      }),
      409,
      'INSUFFICIENT_FUNDS',
    );
    await assertHealthy(m.merchant_id);
  });

  it('an amount above the per-payout limit is 409 PAYOUT_LIMIT; the limit itself passes', async () => {
    const m = await testMerchant(100_000);
    await setPayoutAccess(t.db, m.merchant_id, 'test', { payout_limit_minor: 10_000 });
    const recipient = await bankRecipient(t, m.test_api_key);
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: recipient.id,
        amount_minor: 10_001,
        client_reference: newClientReference(),
      }),
      409,
      'PAYOUT_LIMIT',
    );
    assert.equal(await payoutRows(m.merchant_id), 0);
    assert.equal((await createPayout(t, m.test_api_key, recipient.id, 10_000)).status, 'paid');
  });

  it("payouts past the day's limit are 409 PAYOUT_DAILY_LIMIT; failed and cancelled ones do not count", async () => {
    const m = await testMerchant(100_000);
    await setPayoutAccess(t.db, m.merchant_id, 'test', { daily_limit_minor: 20_000 });
    const recipient = await bankRecipient(t, m.test_api_key);
    await createPayout(t, m.test_api_key, recipient.id, 15_000);
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: recipient.id,
        amount_minor: 5_001,
        client_reference: newClientReference(),
      }),
      409,
      'PAYOUT_DAILY_LIMIT',
    );
    await createPayout(t, m.test_api_key, recipient.id, 5_000);
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: recipient.id,
        amount_minor: 1,
        client_reference: newClientReference(),
      }),
      409,
      'PAYOUT_DAILY_LIMIT',
    );
    assert.equal(await payoutRows(m.merchant_id), 2);

    const live = await liveMerchant(t, { fundMinor: 100_000 });
    await setPayoutAccess(t.db, live.merchant_id, 'live', { daily_limit_minor: 20_000 });
    const rejected = await bankRecipient(t, live.live_api_key, '5550000013');
    const failing = await createPayout(t, live.live_api_key, rejected.id, 20_000);
    assert.equal(await drive(t, rail, failing.id), 'failed');
    const good = await bankRecipient(t, live.live_api_key, '5550000001');
    const second = await createPayout(t, live.live_api_key, good.id, 20_000);
    assert.equal(second.status, 'processing', 'the failed payout no longer counts');
    assert.equal((await api(t, live.live_api_key, 'POST', `/api/v1/payouts/${second.id}/cancel`, {})).statusCode, 200);
    assert.equal(
      (await createPayout(t, live.live_api_key, good.id, 20_000)).status,
      'processing',
      'the cancelled payout no longer counts',
    );
    const totals = await t.db.query<{ committed_minor: number }>(
      'SELECT committed_minor FROM payout_day_totals WHERE merchant_id = $1',
      [live.merchant_id],
    );
    assert.deepEqual(
      totals,
      [{ committed_minor: 20_000 }],
      "the day's running total holds only the payout still counting",
    );
  });

  it('paused payouts are 409 PAYOUTS_PAUSED with nothing held, and work again when resumed', async () => {
    const m = await testMerchant(50_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    await setPayoutAccess(t.db, m.merchant_id, 'test', { paused: true });
    assert.equal((await api(t, m.test_api_key, 'GET', '/api/v1/payouts/capabilities')).json().settings.paused, true);
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: recipient.id,
        amount_minor: 1_000,
        client_reference: newClientReference(),
      }),
      409,
      'PAYOUTS_PAUSED',
    );
    assert.equal(await payoutRows(m.merchant_id), 0);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 50_000);
    await setPayoutAccess(t.db, m.merchant_id, 'test', { paused: false });
    assert.equal((await createPayout(t, m.test_api_key, recipient.id, 1_000)).status, 'paid');
  });

  it('an inactive or rejected recipient is 409 RECIPIENT_UNAVAILABLE; an unknown one is 404', async () => {
    const m = await testMerchant(50_000);
    const deleted = await bankRecipient(t, m.test_api_key, '12345678');
    assert.equal((await api(t, m.test_api_key, 'DELETE', `/api/v1/payouts/recipients/${deleted.id}`)).statusCode, 204);
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: deleted.id,
        amount_minor: 1_000,
        client_reference: newClientReference(),
      }),
      409,
      'RECIPIENT_UNAVAILABLE',
    );

    // A magic number still pending verification is checked at submission.
    const magic = await bankRecipient(t, m.test_api_key, '0000000000');
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: magic.id,
        amount_minor: 1_000,
        client_reference: newClientReference(),
      }),
      409,
      'RECIPIENT_UNAVAILABLE',
    );
    // And one the verifier already rejected.
    const wallet = await momoRecipient(t, m.test_api_key, '0241111111');
    await verifyRecipientsNow(t, wallet.id);
    assert.equal(
      (await api(t, m.test_api_key, 'GET', `/api/v1/payouts/recipients/${wallet.id}`)).json().verification_status,
      'rejected',
    );
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: wallet.id,
        amount_minor: 1_000,
        client_reference: newClientReference(),
      }),
      409,
      'RECIPIENT_UNAVAILABLE',
    );

    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: 'rcp_missing',
        amount_minor: 1_000,
        client_reference: newClientReference(),
      }),
      404,
      'NOT_FOUND',
    );
    const other = await testMerchant(0);
    const theirs = await bankRecipient(t, other.test_api_key);
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: theirs.id,
        amount_minor: 1_000,
        client_reference: newClientReference(),
      }),
      404,
      'NOT_FOUND',
    );
    const liveRecipient = await bankRecipient(t, m.live_api_key);
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: liveRecipient.id,
        amount_minor: 1_000,
        client_reference: newClientReference(),
      }),
      404,
      'NOT_FOUND',
    );

    assert.equal(await payoutRows(m.merchant_id), 0);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 50_000);
  });

  it('Live payouts without payout access are 403 naming payout access, and nothing is held', async () => {
    const m = await merchantWithHooks(t);
    await fund(t, m.merchant_id, 'live', 50_000);
    const recipient = await bankRecipient(t, m.live_api_key);
    const error = assertErrorEnvelope(
      await postPayout(t, m.live_api_key, {
        recipient_id: recipient.id,
        amount_minor: 1_000,
        client_reference: newClientReference(),
      }),
      403,
      'FORBIDDEN',
    );
    assert.match(error.message, /payout access/i);
    assert.equal(typeof error.detail, 'string');
    assert.equal(await payoutRows(m.merchant_id), 0);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 50_000,
      held_minor: 0,
      eligible_minor: 50_000,
    });
  });

  it('a key without an active webhook endpoint gets 403 naming the webhook, and nothing is held', async () => {
    const m = await t.merchant(); // no webhook URL: no endpoints
    await fund(t, m.merchant_id, 'test', 50_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    const error = assertErrorEnvelope(
      await postPayout(t, m.test_api_key, {
        recipient_id: recipient.id,
        amount_minor: 1_000,
        client_reference: newClientReference(),
      }),
      403,
      'FORBIDDEN',
    );
    assert.match(error.message, /webhook/i);
    assert.equal(await payoutRows(m.merchant_id), 0);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 50_000);

    // A disabled endpoint does not count either; the key's own endpoint is what matters.
    const hooked = await testMerchant(50_000);
    const hookedRecipient = await bankRecipient(t, hooked.test_api_key);
    await t.db.query(
      `UPDATE webhook_endpoints SET status = 'disabled' WHERE merchant_id = $1 AND environment = 'test'`,
      [hooked.merchant_id],
    );
    assert.match(
      assertErrorEnvelope(
        await postPayout(t, hooked.test_api_key, {
          recipient_id: hookedRecipient.id,
          amount_minor: 1_000,
          client_reference: newClientReference(),
        }),
        403,
        'FORBIDDEN',
      ).message,
      /webhook/i,
    );
    const keyWithoutHook = await extraKey(t, hooked.merchant_id, 'test', { webhook: false });
    await t.db.query(`UPDATE webhook_endpoints SET status = 'active' WHERE merchant_id = $1 AND environment = 'test'`, [
      hooked.merchant_id,
    ]);
    assert.match(
      assertErrorEnvelope(
        await postPayout(t, keyWithoutHook.key, {
          recipient_id: hookedRecipient.id,
          amount_minor: 1_000,
          client_reference: newClientReference(),
        }),
        403,
        'FORBIDDEN',
      ).message,
      /webhook/i,
    );
    assert.equal(await payoutRows(hooked.merchant_id), 0);
  });

  // ---------- Live processing ----------

  it('a Live payout holds amount and fee while processing, then the simulator pays it: bank reference, unreconciled, hold released', async () => {
    const m = await liveMerchant(t, { fundMinor: 100_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '1234567890');
    const created = await createPayout(t, m.live_api_key, recipient.id, 20_000);
    assert.equal(created.status, 'processing');
    assert.equal(created.can_cancel, true);
    assert.equal(created.bank_reference, '');
    assert.equal(created.reconciliation_status, 'unreconciled');
    assert.equal(created.livemode, true);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 79_900,
      held_minor: 20_100,
      eligible_minor: 100_000,
    });
    assertErrorEnvelope(
      await api(t, m.live_api_key, 'GET', `/api/v1/payouts/${created.id}/receipt`),
      409,
      'RECEIPT_NOT_AVAILABLE',
    );

    assert.equal(await drive(t, rail, created.id), 'paid');
    const paid = await getPayout(t, m.live_api_key, created.id);
    assert.equal(paid.status, 'paid');
    assert.match(paid.bank_reference, /^GIP/);
    assert.equal(paid.reconciliation_status, 'unreconciled');
    assert.equal(paid.can_cancel, false);
    assert.ok(paid.paid_at);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 79_900,
      held_minor: 0,
      eligible_minor: 79_900,
    });
    assert.equal(
      (await api(t, m.live_api_key, 'GET', `/api/v1/payouts/recipients/${recipient.id}`)).json().verification_status,
      'verified',
    );
    const events = await eventsFor(t, created.id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['payout.processing', 'payout.paid'],
    );
    assert.equal(events[0]!.payload.livemode, true);
    assert.ok((events[1]!.payload.version as number) > (events[0]!.payload.version as number), 'versions grow');
    assert.equal((events[1]!.payload.data.payout as PayoutJson).bank_reference, paid.bank_reference);
    assert.equal((await api(t, m.live_api_key, 'GET', `/api/v1/payouts/${created.id}/receipt`)).statusCode, 200);
    await assertHealthy(m.merchant_id);
  });

  it('a Live recipient rejected at the recipient check fails the payout, releases amount and fee, and marks the recipient rejected', async () => {
    const m = await liveMerchant(t, { fundMinor: 100_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '9876543213');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 20_000);
    assert.equal((await balanceOf(t, m.merchant_id, 'live')).held_minor, 20_100);
    const transfersBefore = rail.calls.transfer;
    assert.equal(await drive(t, rail, payout.id), 'failed');
    assert.equal(rail.calls.transfer, transfersBefore, 'no transfer was attempted');
    const failed = await getPayout(t, m.live_api_key, payout.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.status_label, 'Failed: amount and fee released');
    assert.match(String(failed.failure_reason), /account_not_found/);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 100_000,
      held_minor: 0,
      eligible_minor: 100_000,
    });
    const rejected = (await api(t, m.live_api_key, 'GET', `/api/v1/payouts/recipients/${recipient.id}`)).json();
    assert.equal(rejected.verification_status, 'rejected');
    assert.equal(rejected.rejection_reason, 'account_not_found');
    assert.deepEqual(
      (await eventsFor(t, payout.id)).map((event) => event.type),
      ['payout.processing', 'payout.failed'],
    );
    assertErrorEnvelope(
      await postPayout(t, m.live_api_key, {
        recipient_id: recipient.id,
        amount_minor: 1_000,
        client_reference: newClientReference(),
      }),
      409,
      'RECIPIENT_UNAVAILABLE',
    );
    await assertHealthy(m.merchant_id);
  });

  it('a Live transfer the provider declines fails the payout and releases amount and fee', async () => {
    const m = await liveMerchant(t, { fundMinor: 100_000 });
    const wallet = await momoRecipient(t, m.live_api_key, '0241234522');
    const payout = await createPayout(t, m.live_api_key, wallet.id, 50_000);
    assert.equal(payout.fee_minor, 500);
    assert.equal(await drive(t, rail, payout.id), 'failed');
    const failed = await getPayout(t, m.live_api_key, payout.id);
    assert.match(String(failed.failure_reason), /recipient_bank_declined/);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 100_000,
      held_minor: 0,
      eligible_minor: 100_000,
    });
    assert.deepEqual(
      (await eventsFor(t, payout.id)).map((event) => event.type),
      ['payout.processing', 'payout.failed'],
    );
    await assertHealthy(m.merchant_id);
  });

  it('a Live transfer left pending at the provider stays processing and held until it settles, then is paid (or failed)', async () => {
    const m = await liveMerchant(t, { fundMinor: 100_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '5555555544');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 10_000);
    const second = await createPayout(t, m.live_api_key, recipient.id, 20_000);
    assert.equal(await drive(t, rail, payout.id, 6), 'processing');
    assert.equal(await drive(t, rail, second.id, 6), 'processing');
    const pending = await getPayout(t, m.live_api_key, payout.id);
    assert.equal(pending.can_cancel, false, 'the transfer was sent');
    assert.match(pending.bank_reference, /^GIP/);
    assert.equal((await balanceOf(t, m.merchant_id, 'live')).held_minor, 10_100 + 20_100);
    assertErrorEnvelope(
      await api(t, m.live_api_key, 'POST', `/api/v1/payouts/${payout.id}/cancel`),
      409,
      'PAYOUT_NOT_CANCELLABLE',
    );

    rail.settle(payout.id, 'paid');
    rail.settle(second.id, 'failed');
    assert.equal(await drive(t, rail, payout.id), 'paid');
    assert.equal(await drive(t, rail, second.id), 'failed');
    assert.equal((await getPayout(t, m.live_api_key, payout.id)).bank_reference, pending.bank_reference);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 100_000 - 10_100,
      held_minor: 0,
      eligible_minor: 100_000 - 10_100,
    });
    await assertHealthy(m.merchant_id);
  });

  it('a paid transfer that comes back is returned: amount and fee restored, payout.returned queued, repeat is harmless', async () => {
    const m = await liveMerchant(t, { fundMinor: 100_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '1212121212');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 30_000);
    assert.equal(await drive(t, rail, payout.id), 'paid');
    assert.equal((await balanceOf(t, m.merchant_id, 'live')).available_minor, 100_000 - 30_100);

    const returned = await markPayoutReturned(t.db, payout.id, 'RET-0001');
    assert.equal(returned.status, 'returned');
    const read = await getPayout(t, m.live_api_key, payout.id);
    assert.equal(read.status, 'returned');
    assert.equal(read.status_label, 'Returned to your balance');
    assert.equal(read.return_reference, 'RET-0001');
    assert.equal(read.can_cancel, false);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 100_000,
      held_minor: 0,
      eligible_minor: 100_000,
    });
    const events = await eventsFor(t, payout.id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['payout.processing', 'payout.paid', 'payout.returned'],
    );
    assert.equal((events[2]!.payload.data.payout as PayoutJson).return_reference, 'RET-0001');

    await markPayoutReturned(t.db, payout.id, 'RET-0001');
    assert.equal((await balanceOf(t, m.merchant_id, 'live')).available_minor, 100_000, 'returned once');
    assert.equal((await eventsFor(t, payout.id)).length, 3);
    assert.equal(
      (await api(t, m.live_api_key, 'GET', `/api/v1/payouts/${payout.id}/receipt`)).statusCode,
      200,
      'a returned payout keeps its receipt',
    );

    const processing = await createPayout(t, m.live_api_key, recipient.id, 1_000);
    await assert.rejects(
      markPayoutReturned(t.db, processing.id, 'RET-0002'),
      (error: { code?: string }) => httpStatusOf(error) === 409 && error.code === 'PAYOUT_NOT_RETURNABLE',
    );
    await assertHealthy(m.merchant_id);
  });

  it('an operator reconciles paid Live payouts as matched or exception; a decided one does not flip and Test payouts are not reconciled', async () => {
    const m = await liveMerchant(t, { fundMinor: 100_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '3434343434');
    const first = await createPayout(t, m.live_api_key, recipient.id, 1_000);
    const second = await createPayout(t, m.live_api_key, recipient.id, 2_000);
    await assert.rejects(
      reconcilePayout(t.db, first.id, 'matched'),
      (error: { code?: string }) => error.code === 'PAYOUT_NOT_RECONCILABLE',
      'not yet paid',
    );
    assert.equal(await drive(t, rail, first.id), 'paid');
    assert.equal(await drive(t, rail, second.id), 'paid');

    assert.equal((await reconcilePayout(t.db, first.id, 'matched')).reconciliation_status, 'matched');
    assert.equal((await reconcilePayout(t.db, second.id, 'exception')).reconciliation_status, 'exception');
    assert.equal((await getPayout(t, m.live_api_key, first.id)).reconciliation_status, 'matched');
    assert.equal((await getPayout(t, m.live_api_key, second.id)).reconciliation_status, 'exception');
    assert.equal(
      (await reconcilePayout(t.db, first.id, 'matched')).reconciliation_status,
      'matched',
      'repeating the same result is harmless',
    );
    await assert.rejects(
      reconcilePayout(t.db, first.id, 'exception'),
      (error: { code?: string }) => error.code === 'PAYOUT_ALREADY_RECONCILED',
    );
    await assert.rejects(
      reconcilePayout(t.db, second.id, 'matched'),
      (error: { code?: string }) => error.code === 'PAYOUT_ALREADY_RECONCILED',
    );

    const testMerchantRow = await testMerchant(10_000);
    const testRecipient = await bankRecipient(t, testMerchantRow.test_api_key);
    const testPayout = await createPayout(t, testMerchantRow.test_api_key, testRecipient.id, 1_000);
    await assert.rejects(
      reconcilePayout(t.db, testPayout.id, 'matched'),
      (error: { code?: string }) => error.code === 'PAYOUT_NOT_RECONCILABLE',
    );
  });

  // ---------- approval (four eyes) ----------

  it('with approval required a Live payout is requested and held; the requester, a viewer and API keys cannot approve; another approver can, and it is paid', async () => {
    const m = await liveMerchant(t, { payoutApproval: true, fundMinor: 100_000 });
    const approver = await addUser(t, m.merchant_id, 'approver');
    const viewer = await addUser(t, m.merchant_id, 'viewer');
    const recipient = await bankRecipient(t, m.live_api_key, '7777777777');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 25_000);
    assert.equal(payout.status, 'requested');
    assert.equal(payout.status_label, 'Awaiting approval');
    assert.equal(payout.can_cancel, true);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 74_900,
      held_minor: 25_100,
      eligible_minor: 100_000,
    });
    assert.deepEqual(
      (await eventsFor(t, payout.id)).map((event) => event.type),
      ['payout.requested'],
    );
    const requester = await t.db.query<{ requested_by_user_id: string }>(
      'SELECT requested_by_user_id FROM payouts WHERE id = $1',
      [payout.id],
    );
    assert.equal(requester[0]!.requested_by_user_id, m.owner_user_id, 'the key creator is the requester');

    // A requested payout is not picked up by the processor.
    assert.equal(await drive(t, rail, payout.id), 'requested');

    for (const userId of [m.owner_user_id, viewer]) {
      await assert.rejects(
        decidePayout(t.db, { payoutId: payout.id, userId, decision: 'approve' }),
        (error: unknown) => httpStatusOf(error) === 403,
      );
    }
    const stranger = await addUser(t, (await testMerchant(0)).merchant_id, 'approver');
    await assert.rejects(
      decidePayout(t.db, { payoutId: payout.id, userId: stranger, decision: 'approve' }),
      (error: unknown) => httpStatusOf(error) === 404,
    );
    assert.equal((await payoutStatus(t, payout.id)).status, 'requested');
    // No API route approves.
    const viaApi = await api(t, m.live_api_key, 'POST', `/api/v1/payouts/${payout.id}/approve`, {});
    assert.equal(viaApi.statusCode, 404);

    const approved = await decidePayout(t.db, { payoutId: payout.id, userId: approver, decision: 'approve' });
    assert.equal(approved.status, 'processing');
    assert.equal(approved.decided_by_user_id, approver);
    await assert.rejects(
      decidePayout(t.db, { payoutId: payout.id, userId: approver, decision: 'reject' }),
      (error: unknown) => httpStatusOf(error) === 409,
    );
    assert.equal(await drive(t, rail, payout.id), 'paid');
    assert.deepEqual(
      (await eventsFor(t, payout.id)).map((event) => event.type),
      ['payout.requested', 'payout.processing', 'payout.paid'],
    );
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 74_900,
      held_minor: 0,
      eligible_minor: 74_900,
    });
    await assertHealthy(m.merchant_id);
  });

  it('an approver who created the calling key is the requester and cannot approve their own payout', async () => {
    const m = await liveMerchant(t, { payoutApproval: true, fundMinor: 100_000 });
    const approverA = await addUser(t, m.merchant_id, 'approver');
    const approverB = await addUser(t, m.merchant_id, 'approver');
    const key = await extraKey(t, m.merchant_id, 'live', { createdByUserId: approverA });
    const recipient = await bankRecipient(t, key.key, '7777777701');
    const payout = await createPayout(t, key.key, recipient.id, 5_000);
    await assert.rejects(
      decidePayout(t.db, { payoutId: payout.id, userId: approverA, decision: 'approve' }),
      (error: { message?: string }) => httpStatusOf(error) === 403 && /requester/i.test(error.message ?? ''),
    );
    assert.equal((await payoutStatus(t, payout.id)).status, 'requested');
    assert.equal(
      (await decidePayout(t.db, { payoutId: payout.id, userId: approverB, decision: 'approve' })).status,
      'processing',
    );
  });

  it('a rejected approval cancels the payout and releases amount and fee', async () => {
    const m = await liveMerchant(t, { payoutApproval: true, fundMinor: 100_000 });
    const approver = await addUser(t, m.merchant_id, 'approver');
    const recipient = await momoRecipient(t, m.live_api_key, '0551234567');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 10_000);
    assert.equal(payout.fee_minor, 100);
    assert.equal((await balanceOf(t, m.merchant_id, 'live')).held_minor, 10_100);
    const rejected = await decidePayout(t.db, {
      payoutId: payout.id,
      userId: approver,
      decision: 'reject',
      reason: 'wrong supplier',
    });
    assert.equal(rejected.status, 'cancelled');
    const read = await getPayout(t, m.live_api_key, payout.id);
    assert.equal(read.status, 'cancelled');
    assert.equal(read.can_cancel, false);
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 100_000,
      held_minor: 0,
      eligible_minor: 100_000,
    });
    assert.deepEqual(
      (await eventsFor(t, payout.id)).map((event) => event.type),
      ['payout.requested', 'payout.cancelled'],
    );
    await assert.rejects(
      decidePayout(t.db, { payoutId: payout.id, userId: approver, decision: 'approve' }),
      (error: unknown) => httpStatusOf(error) === 409,
    );
    assert.equal(await drive(t, rail, payout.id), 'cancelled');
    await assertHealthy(m.merchant_id);
  });

  it('Test payouts are paid at once even when the account requires approval', async () => {
    const m = await merchantWithHooks(t, { payoutApproval: true });
    await fund(t, m.merchant_id, 'test', 10_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    assert.equal((await createPayout(t, m.test_api_key, recipient.id, 1_000)).status, 'paid');
  });

  // ---------- remembered decisions (src/payouts/decision-cache.ts) ----------

  it('a decision remembered from the last payout is checked again by the write: every change made elsewhere takes effect on the next payout', async () => {
    const m = await testMerchant(100_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    const keyId = (
      await t.db.query<{ id: string }>("SELECT id FROM api_keys WHERE merchant_id = $1 AND environment = 'test'", [
        m.merchant_id,
      ])
    )[0]!.id;
    const remembered = () => t.app.deps.payouts.decisions.get(keyId, recipient.id) !== null;
    const attempt = (amountMinor = 1_000) =>
      postPayout(t, m.test_api_key, {
        recipient_id: recipient.id,
        amount_minor: amountMinor,
        client_reference: newClientReference(),
      });
    // Changes straight in the database, as another instance or the operator console would make them.
    const settings = (sql: string) =>
      t.db.query(`UPDATE payout_settings SET ${sql} WHERE merchant_id = $1 AND environment = 'test'`, [m.merchant_id]);
    let paid = 0;
    const payAgain = async () => {
      assert.equal((await createPayout(t, m.test_api_key, recipient.id, 1_000)).status, 'paid');
      paid++;
      assert.ok(remembered(), 'the decision is remembered after a payout');
    };
    await payAgain();

    await settings('paused = true');
    assertErrorEnvelope(await attempt(), 409, 'PAYOUTS_PAUSED');
    await settings('paused = false');
    await payAgain();

    await settings('payout_access = false');
    assert.match(assertErrorEnvelope(await attempt(), 403, 'FORBIDDEN').message, /payout access/i);
    await settings('payout_access = true');
    await payAgain();

    await settings('payout_limit_minor = 999');
    assertErrorEnvelope(await attempt(), 409, 'PAYOUT_LIMIT');
    await settings('payout_limit_minor = 100000');
    await payAgain();

    await settings(`daily_limit_minor = ${paid * 1_000}`);
    assertErrorEnvelope(await attempt(1), 409, 'PAYOUT_DAILY_LIMIT');
    await settings('daily_limit_minor = 1000000');
    await payAgain();

    await t.db.query("UPDATE webhook_endpoints SET status = 'disabled' WHERE api_key_id = $1", [keyId]);
    assert.match(assertErrorEnvelope(await attempt(), 403, 'FORBIDDEN').message, /webhook/i);
    await t.db.query("UPDATE webhook_endpoints SET status = 'active' WHERE api_key_id = $1", [keyId]);
    await payAgain();

    const { available_minor: available } = await balanceOf(t, m.merchant_id, 'test');
    assertErrorEnvelope(await attempt(available), 409, 'INSUFFICIENT_FUNDS'); // the fee does not fit
    await payAgain();

    assert.equal(
      (await api(t, m.test_api_key, 'DELETE', `/api/v1/payouts/recipients/${recipient.id}`)).statusCode,
      204,
    );
    assertErrorEnvelope(await attempt(), 409, 'RECIPIENT_UNAVAILABLE');
    assert.equal(remembered(), false, 'a decision the write refused is forgotten');

    assert.equal(await payoutRows(m.merchant_id), paid);
    const fee = 100; // bank transfer: GHS 1.00 flat
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 100_000 - paid * (1_000 + fee));
    await assertHealthy(m.merchant_id);
  });

  it('a payout write aborted by a deadlock (40P01) runs again: one payout, charged once', async () => {
    const m = await testMerchant(10_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    const [key] = await t.db.query<{ id: string; prefix: string }>(
      "SELECT id, prefix FROM api_keys WHERE merchant_id = $1 AND environment = 'test'",
      [m.merchant_id],
    );
    let aborted = 0;
    // The storage aborts the first two payout statements as PostgreSQL does the loser of a deadlock.
    const db = new Proxy(t.db, {
      get(target, name) {
        if (name === 'write') {
          return async (statement: string, sql: string, params?: readonly unknown[]) => {
            if (statement === 'payout_create' && aborted < 2) {
              aborted++;
              throw new DbError('deadlock detected', '40P01', null);
            }
            return target.write(statement, sql, params);
          };
        }
        const value = Reflect.get(target, name) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const principal = {
      merchantId: m.merchant_id,
      environment: 'test' as const,
      apiKeyId: key!.id,
      apiKeyPrefix: key!.prefix,
    };
    const { payout } = await createPayoutDirectly({ db, providers: LiveProviders.none() }, principal, {
      recipient_id: recipient.id,
      amount_minor: 1_000,
      client_reference: newClientReference(),
    });
    assert.equal(aborted, 2);
    assert.equal(payout.status, 'paid');
    assert.equal(await payoutRows(m.merchant_id), 1);
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 10_000 - 1_100);
    await assertHealthy(m.merchant_id);
  });

  it('a Live payout made after approval was switched on elsewhere waits for approval, though the last decision was remembered without it', async () => {
    const m = await liveMerchant(t, { fundMinor: 100_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '5550000001');
    assert.equal((await createPayout(t, m.live_api_key, recipient.id, 1_000)).status, 'processing');
    await t.db.query('UPDATE merchants SET payout_approval_required = true WHERE id = $1', [m.merchant_id]);
    assert.equal((await createPayout(t, m.live_api_key, recipient.id, 1_000)).status, 'requested');
    await t.db.query("UPDATE recipients SET verification_status = 'rejected' WHERE id = $1", [recipient.id]);
    assertErrorEnvelope(
      await postPayout(t, m.live_api_key, {
        recipient_id: recipient.id,
        amount_minor: 1_000,
        client_reference: newClientReference(),
      }),
      409,
      'RECIPIENT_UNAVAILABLE',
    );
    assert.equal(await payoutRows(m.merchant_id), 2);
    await assertHealthy(m.merchant_id);
  });

  // ---------- reading ----------

  it('the list pages newest first, clamps limit to 1..100, filters by exact client_reference and reports the total', async () => {
    const m = await testMerchant(100_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    const created: PayoutJson[] = [];
    for (let i = 0; i < 3; i++)
      created.push(
        await createPayout(t, m.test_api_key, recipient.id, 100 + i, {
          client_reference: `list-${i}-${m.merchant_id.slice(0, 8)}`,
        }),
      );
    const list = async (query: string) => {
      const res = await api(t, m.test_api_key, 'GET', `/api/v1/payouts${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { payouts: PayoutJson[]; page: number; limit: number; total: number };
    };
    const all = await list('');
    assert.equal(all.total, 3);
    assert.equal(all.page, 1);
    assert.equal(all.limit, 20);
    assert.deepEqual(
      all.payouts.map((p) => p.id),
      created.map((p) => p.id).reverse(),
    );
    assert.deepEqual(all.payouts[0], await getPayout(t, m.test_api_key, created[2]!.id));

    const zero = await list('?limit=0');
    assert.equal(zero.limit, 1);
    assert.equal(zero.payouts.length, 1);
    assert.equal(zero.total, 3);
    const huge = await list('?limit=500');
    assert.equal(huge.limit, 100);
    assert.equal(huge.payouts.length, 3);
    const negative = await list('?limit=-3&page=0');
    assert.equal(negative.limit, 1);
    assert.equal(negative.page, 1);
    const page2 = await list('?page=2&limit=2');
    assert.equal(page2.page, 2);
    assert.deepEqual(
      page2.payouts.map((p) => p.id),
      [created[0]!.id],
    );
    assert.equal(page2.total, 3);
    const beyond = await list('?page=5&limit=2');
    assert.equal(beyond.payouts.length, 0);
    assert.equal(beyond.total, 3);

    const filtered = await list(`?reference=${created[1]!.client_reference}`);
    assert.deepEqual(
      filtered.payouts.map((p) => p.id),
      [created[1]!.id],
    );
    assert.equal(filtered.total, 1);
    const prefix = await list(`?reference=list-1`);
    assert.equal(prefix.total, 0, 'the reference filter is an exact match');
    assertErrorEnvelope(await api(t, m.test_api_key, 'GET', '/api/v1/payouts?limit=abc'), 400, 'INVALID_ARGUMENT');
  });

  it("a payout is read with its own key's merchant and environment only: another merchant and the Live key get 404", async () => {
    const m = await testMerchant(10_000);
    const other = await testMerchant(0);
    const recipient = await bankRecipient(t, m.test_api_key);
    const payout = await createPayout(t, m.test_api_key, recipient.id, 1_000);
    const read = await getPayout(t, m.test_api_key, payout.id);
    assert.equal(read.id, payout.id);
    assert.equal(read.status, 'paid');
    for (const key of [other.test_api_key, other.live_api_key, m.live_api_key]) {
      assertErrorEnvelope(await api(t, key, 'GET', `/api/v1/payouts/${payout.id}`), 404, 'NOT_FOUND');
      assertErrorEnvelope(await api(t, key, 'GET', `/api/v1/payouts/${payout.id}/receipt`), 404, 'NOT_FOUND');
      assertErrorEnvelope(await api(t, key, 'POST', `/api/v1/payouts/${payout.id}/cancel`), 404, 'NOT_FOUND');
    }
    const liveList = (await api(t, m.live_api_key, 'GET', '/api/v1/payouts')).json();
    assert.equal(liveList.total, 0);
    assert.equal((await api(t, other.test_api_key, 'GET', '/api/v1/payouts')).json().total, 0);
    assertErrorEnvelope(await api(t, m.test_api_key, 'GET', '/api/v1/payouts/po_missing'), 404, 'NOT_FOUND');
    assert.equal((await t.app.inject({ method: 'GET', url: `/api/v1/payouts/${payout.id}` })).statusCode, 401);
  });

  it('Live processing is only advanced by the processor once the payout is due', async () => {
    const m = await liveMerchant(t, { fundMinor: 10_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '1010101010');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 1_000);
    await t.db.query(`UPDATE payouts SET next_step_at = now() + interval '1 hour' WHERE id = $1`, [payout.id]);
    await processDuePayouts(t.db, rail);
    assert.deepEqual(await payoutStatus(t, payout.id), { status: 'processing', processing_step: 'recipient_check' });
    await makeDue(t, payout.id);
    await processDuePayouts(t.db, rail);
    assert.deepEqual(await payoutStatus(t, payout.id), { status: 'processing', processing_step: 'transfer' });
  });

  it('the step from transfer to awaiting the result is taken once: a processor that finds it moved on sends nothing', async () => {
    const m = await liveMerchant(t, { fundMinor: 10_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '1212121212');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 1_000);
    await makeDue(t, payout.id);
    await processDuePayouts(t.db, rail); // recipient check
    assert.deepEqual(await payoutStatus(t, payout.id), { status: 'processing', processing_step: 'transfer' });
    const later = new Date(Date.now() + 60_000);
    assert.equal(await advanceProcessingStep(t.db, payout.id, 'transfer', 'awaiting_result', later), true);
    assert.equal(
      await advanceProcessingStep(t.db, payout.id, 'transfer', 'awaiting_result', later),
      false,
      'a second processor does not take the step again',
    );
    assert.equal(await advanceProcessingStep(t.db, payout.id, 'recipient_check', 'transfer', later), false);
    assert.deepEqual(await payoutStatus(t, payout.id), { status: 'processing', processing_step: 'awaiting_result' });
  });
});
