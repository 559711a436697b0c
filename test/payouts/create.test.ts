// Payout creation (DESIGN §3 Payouts): a Test payout paid at once with its receipt and payout.paid
// payload, fees, quotes, retries by client_reference, and the validation of a request before anything is held.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import { storageKind } from '../support/helpers.ts';
import { assertErrorEnvelope } from '../support/http.ts';
import {
  api,
  balanceOf,
  bankRecipient,
  createPayout,
  eventsFor,
  extraKey,
  fund,
  fundThroughCheckout,
  merchantWithHooks,
  momoRecipient,
  newClientReference,
  postPayout,
} from '../support/payouts-fixtures.ts';
import { usePayoutApp } from '../support/payout-app.ts';

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
  const { t, testMerchant, payoutRows, assertHealthy } = usePayoutApp();

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
      pending_minor: 0,
      reserved_minor: 0,
    });
    const apiBalance = await api(t, m.test_api_key, 'GET', '/api/v1/payouts/balance');
    assert.deepEqual(apiBalance.json(), {
      environment: 'test',
      currency: 'GHS',
      available_minor: 39_900,
      held_minor: 0,
      eligible_minor: 39_900,
      pending_minor: 0,
      reserved_minor: 0,
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
      pending_minor: 0,
      reserved_minor: 0,
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
});
