// The Paystack stand-in's own protocol rules (test/support/standins/paystack.ts), over real loopback HTTP: its key
// check, a charge's validation, its lists of telcos and banks, and Paystack's rules for transfers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api, usePaystackStandIn } from '../support/paystack-adapter.ts';

usePaystackStandIn();

describe('the stand-in speaks Paystack', () => {
  it('answers 401 Invalid key without the secret key or with another', async () => {
    for (const key of [null, 'sk_test_someone_else']) {
      const answer = await api('GET', '/transaction/verify/anything', undefined, key);
      assert.equal(answer.status, 401);
      assert.deepEqual(answer.json, { status: false, message: 'Invalid key' });
    }
  });

  it('validates a charge: email required, reference charset, duplicate reference, provider without case', async () => {
    const missing = await api('POST', '/charge', {
      amount: 100,
      currency: 'GHS',
      mobile_money: { phone: '0551234987', provider: 'mtn' },
    });
    assert.equal(missing.status, 400);
    assert.equal(missing.json.type, 'validation_error');
    assert.equal(missing.json.code, 'missing_params');
    const badReference = await api('POST', '/charge', {
      email: 'a@b.co',
      amount: 100,
      currency: 'GHS',
      reference: 'has space',
      mobile_money: { phone: '0551234987', provider: 'mtn' },
    });
    assert.equal(badReference.status, 400);
    const reference = `ok-ref.${Date.now()}=1`;
    const first = await api('POST', '/charge', {
      email: 'a@b.co',
      amount: 100,
      currency: 'GHS',
      reference,
      mobile_money: { phone: '0551234987', provider: 'MTN' },
    });
    assert.equal(first.status, 200);
    assert.equal((first.json.data as Record<string, unknown>).status, 'pay_offline');
    const again = await api('POST', '/charge', {
      email: 'a@b.co',
      amount: 100,
      currency: 'GHS',
      reference,
      mobile_money: { phone: '0551234987', provider: 'mtn' },
    });
    assert.equal(again.status, 400);
    assert.equal(again.json.code, 'duplicate_reference');
    assert.equal(again.json.message, 'Duplicate Transaction Reference');
  });

  it('lists the Ghana telcos and at least the 15 banks, Paystack-style', async () => {
    const telcos = await api('GET', '/bank?currency=GHS&type=mobile_money');
    assert.deepEqual((telcos.json.data as Array<{ code: string }>).map((telco) => telco.code).sort(), [
      'ATL',
      'MTN',
      'VOD',
    ]);
    const banks = (await api('GET', '/bank?currency=GHS&type=ghipss')).json.data as Array<Record<string, unknown>>;
    assert.ok(banks.length >= 15);
    for (const bank of banks) {
      assert.equal(typeof bank.name, 'string');
      assert.equal(typeof bank.code, 'string');
      assert.equal(typeof bank.slug, 'string');
      assert.equal(bank.type, 'ghipss');
      assert.equal(bank.currency, 'GHS');
    }
  });

  it('holds transfers to Paystack rules: lowercase reference of 16+ characters, GHS, a known recipient', async () => {
    const recipient = await api('POST', '/transferrecipient', {
      type: 'mobile_money',
      name: 'Abina Nana',
      account_number: '0551234987',
      bank_code: 'MTN',
      currency: 'GHS',
    });
    assert.equal(recipient.status, 201);
    const code = (recipient.json.data as Record<string, unknown>).recipient_code as string;
    assert.match(code, /^RCP_/);
    const same = await api('POST', '/transferrecipient', {
      type: 'mobile_money',
      name: 'Abina Nana',
      account_number: '0551234987',
      bank_code: 'MTN',
      currency: 'GHS',
    });
    assert.equal(
      (same.json.data as Record<string, unknown>).recipient_code,
      code,
      'the same account is the existing recipient',
    );
    const base = { source: 'balance', amount: 500, recipient: code, currency: 'GHS' };
    assert.equal((await api('POST', '/transfer', { ...base, reference: 'UPPER-case-reference-1' })).status, 400);
    assert.equal((await api('POST', '/transfer', { ...base, reference: 'short-ref' })).status, 400);
    assert.equal(
      (await api('POST', '/transfer', { ...base, currency: undefined, reference: 'no-currency-means-ngn-1' })).status,
      400,
    );
    const unknown = await api('POST', '/transfer', {
      ...base,
      recipient: 'RCP_nobody',
      reference: 'unknown-recipient-0001',
    });
    assert.equal(unknown.json.code, 'invalid_transfer_recipient');
  });
});
