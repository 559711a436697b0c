// Payout capabilities and recipients (SPEC 2.9, 3.4, 4.3; DESIGN §3 Payouts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { verifyTestRecipients } from '../../src/payouts/recipients.ts';
import { storageKind } from '../support/helpers.ts';
import { assertErrorEnvelope } from '../support/http.ts';
import {
  api,
  bankIds,
  bankRecipient,
  createPayout,
  liveMerchant,
  merchantWithHooks,
  momoRecipient,
  verifyRecipientsNow,
  type RecipientJson,
} from '../support/payouts-fixtures.ts';
import { usePayoutApp } from '../support/payout-app.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe(`payout recipients (${storageKind})`, () => {
  const { t } = usePayoutApp();

  const postRecipient = (key: string, body: Record<string, unknown>) =>
    api(t, key, 'POST', '/api/v1/payouts/recipients', body);

  const verifyNow = (...ids: string[]) => verifyRecipientsNow(t, ...ids);

  it('capabilities list both account types, 15 banks with uuid ids, the three networks and the settings with fees and limits', async () => {
    const m = await merchantWithHooks(t);
    const res = await api(t, m.test_api_key, 'GET', '/api/v1/payouts/capabilities');
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(
      body.account_types.map((type: { value: string }) => type.value),
      ['bank', 'momo'],
    );
    assert.equal(body.banks.length, 15);
    for (const bank of body.banks) {
      assert.match(bank.id, UUID);
      assert.equal(typeof bank.name, 'string');
      assert.equal(typeof bank.code, 'string');
    }
    assert.deepEqual(
      body.mobile_money_networks.map((network: { value: string }) => network.value),
      ['mtn', 'telecel', 'at'],
    );
    assert.equal(body.settings.environment, 'test');
    assert.equal(body.settings.currency, 'GHS');
    assert.equal(body.settings.payout_access, true);
    assert.equal(body.settings.paused, false);
    assert.equal(body.settings.payout_limit_minor, 5_000_000);
    assert.equal(body.settings.daily_limit_minor, 20_000_000);
    assert.deepEqual(body.settings.fees, {
      bank: { flat_minor: 100 },
      momo: { percent_bps: 100, min_minor: 50, max_minor: 1_000 },
    });

    const live = (await api(t, m.live_api_key, 'GET', '/api/v1/payouts/capabilities')).json();
    assert.equal(live.settings.environment, 'live');
    assert.equal(live.settings.payout_access, false, 'Live payout access is off until an operator turns it on');
  });

  it('a bank recipient takes a bank id from capabilities and starts unverified, pending verification', async () => {
    const m = await merchantWithHooks(t);
    const banks = await bankIds(t, m.test_api_key);
    const res = await postRecipient(m.test_api_key, {
      bank_id: banks[2],
      account_number: '0123456789',
      account_name: 'Kofi Mensah',
    });
    assert.equal(res.statusCode, 201, res.body);
    const recipient = res.json();
    assert.match(recipient.id, /^rcp_/);
    assert.equal(recipient.account_type, 'bank', 'account_type defaults to bank');
    assert.equal(recipient.bank_id, banks[2]);
    assert.equal(recipient.account_number, '0123456789');
    assert.equal(recipient.account_name, 'Kofi Mensah');
    assert.equal(recipient.verified, false);
    assert.equal(recipient.verification_status, 'pending_verification');
    assert.equal(recipient.active, true);
    assert.equal(recipient.previous_version_id, null);
    assert.equal('rejection_reason' in recipient, false);
  });

  it('a bank account number is a string of 4 to 34 digits: 3 and 35 digits, letters and numbers are refused with 400', async () => {
    const m = await merchantWithHooks(t);
    const [bankId] = await bankIds(t, m.test_api_key);
    const attempt = (account_number: string) =>
      postRecipient(m.test_api_key, { bank_id: bankId, account_number, account_name: 'Kofi Mensah' });
    for (const good of ['1234', '1'.repeat(34)]) {
      const res = await attempt(good);
      assert.equal(res.statusCode, 201, `${good.length} digits: ${res.body}`);
    }
    for (const bad of ['123', '1'.repeat(35), '12345abc', '1234 5678', '', '１２３４']) {
      const error = assertErrorEnvelope(await attempt(bad), 400, 'INVALID_ARGUMENT');
      assert.ok(
        error.fields?.some((field) => field.field === 'account_number'),
        JSON.stringify(error),
      );
    }
    // Wrong JSON types are 400, never coerced (DESIGN: wrong types are 400).
    assertErrorEnvelope(
      await postRecipient(m.test_api_key, { bank_id: bankId, account_number: 12345678, account_name: 'Kofi Mensah' }),
      400,
      'INVALID_ARGUMENT',
    );
    assertErrorEnvelope(
      await postRecipient(m.test_api_key, {
        account_type: 'momo',
        network: 'mtn',
        phone: 241234567,
        account_name: 'Ama Owusu',
      }),
      400,
      'INVALID_ARGUMENT',
    );
    const count = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM recipients WHERE merchant_id = $1', [
      m.merchant_id,
    ]);
    assert.equal(count[0]!.n, 2);
  });

  it('a bank id that is not a bank from capabilities is refused with 400', async () => {
    const m = await merchantWithHooks(t);
    for (const bank_id of ['00000000-0000-4000-8000-000000000000', 'GCB', undefined]) {
      assertErrorEnvelope(
        await postRecipient(m.test_api_key, { bank_id, account_number: '12345678', account_name: 'Kofi Mensah' }),
        400,
        'INVALID_ARGUMENT',
      );
    }
  });

  it('a Mobile Money phone in local, 233, +233, spaced or hyphenated form is returned as +233', async () => {
    const m = await merchantWithHooks(t);
    const cases: [string, string, string][] = [
      ['mtn', '0241234567', '+233241234567'],
      ['mtn', '+233 24 123 4567', '+233241234567'],
      ['mtn', '233-54-123-4567', '+233541234567'],
      ['telecel', '020-123-4567', '+233201234567'],
      ['telecel', '+233501234567', '+233501234567'],
      ['at', '026 123 4567', '+233261234567'],
      ['at', '0571234567', '+233571234567'],
    ];
    for (const [network, phone, expected] of cases) {
      const res = await postRecipient(m.test_api_key, {
        account_type: 'momo',
        network,
        phone,
        account_name: 'Ama Owusu',
      });
      assert.equal(res.statusCode, 201, `${network} ${phone}: ${res.body}`);
      const recipient = res.json();
      assert.equal(recipient.phone, expected);
      assert.equal(recipient.network, network);
      assert.equal(recipient.account_type, 'momo');
      assert.equal(recipient.bank_id, null);
      assert.equal(recipient.account_number, null);
      assert.equal(recipient.verification_status, 'pending_verification');
    }
  });

  it('a phone whose prefix belongs to another network, or that is no Ghana mobile number, is refused with 400', async () => {
    const m = await merchantWithHooks(t);
    const cases: [string, string][] = [
      ['telecel', '0241234567'], // MTN number
      ['mtn', '0201234567'], // Telecel number
      ['at', '0541234567'], // MTN number
      ['mtn', '0301234567'], // a landline prefix
      ['mtn', '024123456'], // too short
      ['mtn', '+2330241234567'],
    ];
    for (const [network, phone] of cases) {
      const error = assertErrorEnvelope(
        await postRecipient(m.test_api_key, { account_type: 'momo', network, phone, account_name: 'Ama Owusu' }),
        400,
        'INVALID_ARGUMENT',
      );
      assert.ok(
        error.fields?.some((field) => field.field === 'phone'),
        `${network} ${phone}: ${JSON.stringify(error)}`,
      );
    }
    assertErrorEnvelope(
      await postRecipient(m.test_api_key, {
        account_type: 'momo',
        network: 'vodafone',
        phone: '0201234567',
        account_name: 'Ama Owusu',
      }),
      400,
      'INVALID_ARGUMENT',
    );
    assertErrorEnvelope(
      await postRecipient(m.test_api_key, {
        account_type: 'wallet',
        network: 'mtn',
        phone: '0241234567',
        account_name: 'Ama Owusu',
      }),
      400,
      'INVALID_ARGUMENT',
    );
  });

  it('bank and wallet fields must not be mixed in one recipient (400)', async () => {
    const m = await merchantWithHooks(t);
    const [bankId] = await bankIds(t, m.test_api_key);
    const bankWithPhone = await postRecipient(m.test_api_key, {
      bank_id: bankId,
      account_number: '12345678',
      account_name: 'Kofi Mensah',
      phone: '0241234567',
    });
    assert.ok(
      assertErrorEnvelope(bankWithPhone, 400, 'INVALID_ARGUMENT').fields?.some((field) => field.field === 'phone'),
    );
    const bankWithNetwork = await postRecipient(m.test_api_key, {
      account_type: 'bank',
      bank_id: bankId,
      account_number: '12345678',
      account_name: 'Kofi Mensah',
      network: 'mtn',
    });
    assertErrorEnvelope(bankWithNetwork, 400, 'INVALID_ARGUMENT');
    const momoWithAccount = await postRecipient(m.test_api_key, {
      account_type: 'momo',
      network: 'mtn',
      phone: '0241234567',
      account_name: 'Ama Owusu',
      account_number: '12345678',
    });
    assert.ok(
      assertErrorEnvelope(momoWithAccount, 400, 'INVALID_ARGUMENT').fields?.some(
        (field) => field.field === 'account_number',
      ),
    );
    const momoWithBank = await postRecipient(m.test_api_key, {
      account_type: 'momo',
      network: 'mtn',
      phone: '0241234567',
      account_name: 'Ama Owusu',
      bank_id: bankId,
    });
    assertErrorEnvelope(momoWithBank, 400, 'INVALID_ARGUMENT');
    const list = (await api(t, m.test_api_key, 'GET', '/api/v1/payouts/recipients')).json();
    assert.equal(list.recipients.length, 0, 'nothing was created');
  });

  it('an account name is required', async () => {
    const m = await merchantWithHooks(t);
    const [bankId] = await bankIds(t, m.test_api_key);
    for (const account_name of [undefined, '', '   ']) {
      assertErrorEnvelope(
        await postRecipient(m.test_api_key, { bank_id: bankId, account_number: '12345678', account_name }),
        400,
        'INVALID_ARGUMENT',
      );
    }
  });

  it('the Test verifier verifies ordinary recipients and rejects the documented magic numbers with a reason', async () => {
    const m = await merchantWithHooks(t);
    const good = await bankRecipient(t, m.test_api_key, '1234567890');
    const goodWallet = await momoRecipient(t, m.test_api_key, '0241234567');
    const magic: [RecipientJson, string][] = [
      [await bankRecipient(t, m.test_api_key, '0000000000'), 'account_not_found'],
      [await bankRecipient(t, m.test_api_key, '1111111111'), 'account_closed'],
      [await bankRecipient(t, m.test_api_key, '2222222222'), 'name_mismatch'],
      [await momoRecipient(t, m.test_api_key, '024 000 0000', 'mtn'), 'wallet_not_found'],
      [await momoRecipient(t, m.test_api_key, '0200000000', 'telecel'), 'wallet_not_found'],
      [await momoRecipient(t, m.test_api_key, '0260000000', 'at'), 'wallet_not_found'],
      [await momoRecipient(t, m.test_api_key, '+233241111111', 'mtn'), 'name_mismatch'],
    ];
    // Not yet due: the verifier waits a moment after creation.
    await verifyTestRecipients(t.db);
    assert.equal(
      (await api(t, m.test_api_key, 'GET', `/api/v1/payouts/recipients/${good.id}`)).json().verification_status,
      'pending_verification',
    );

    await verifyNow(good.id, goodWallet.id, ...magic.map(([r]) => r.id));
    for (const recipient of [good, goodWallet]) {
      const read = (await api(t, m.test_api_key, 'GET', `/api/v1/payouts/recipients/${recipient.id}`)).json();
      assert.equal(read.verification_status, 'verified');
      assert.equal(read.verified, true);
      assert.equal('rejection_reason' in read, false);
    }
    for (const [recipient, reason] of magic) {
      const read = (await api(t, m.test_api_key, 'GET', `/api/v1/payouts/recipients/${recipient.id}`)).json();
      assert.equal(read.verification_status, 'rejected', `${recipient.account_number ?? recipient.phone}`);
      assert.equal(read.verified, false);
      assert.equal(read.rejection_reason, reason);
    }
  });

  it('the list holds every recipient, inactive ones included, and GET one returns the same record', async () => {
    const m = await merchantWithHooks(t);
    const first = await bankRecipient(t, m.test_api_key, '12345678');
    const second = await momoRecipient(t, m.test_api_key);
    assert.equal((await api(t, m.test_api_key, 'DELETE', `/api/v1/payouts/recipients/${first.id}`)).statusCode, 204);
    const res = await api(t, m.test_api_key, 'GET', '/api/v1/payouts/recipients');
    assert.equal(res.statusCode, 200, res.body);
    const list = res.json();
    assert.deepEqual(
      list.recipients.map((r: RecipientJson) => [r.id, r.active]),
      [
        [first.id, false],
        [second.id, true],
      ],
    );
    const one = await api(t, m.test_api_key, 'GET', `/api/v1/payouts/recipients/${second.id}`);
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json(), second);
    assertErrorEnvelope(
      await api(t, m.test_api_key, 'GET', '/api/v1/payouts/recipients/rcp_missing'),
      404,
      'NOT_FOUND',
    );
  });

  it('DELETE answers 204 with no body and leaves the recipient inactive; deleting again is still 204', async () => {
    const m = await merchantWithHooks(t);
    const recipient = await bankRecipient(t, m.test_api_key);
    const res = await api(t, m.test_api_key, 'DELETE', `/api/v1/payouts/recipients/${recipient.id}`);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    const read = (await api(t, m.test_api_key, 'GET', `/api/v1/payouts/recipients/${recipient.id}`)).json();
    assert.equal(read.active, false);
    assert.equal(
      (await api(t, m.test_api_key, 'DELETE', `/api/v1/payouts/recipients/${recipient.id}`)).statusCode,
      204,
    );
  });

  it('a replacement names the previous version: the old one becomes inactive and the new one needs verification', async () => {
    const m = await merchantWithHooks(t);
    const old = await bankRecipient(t, m.test_api_key, '12345678');
    await verifyNow(old.id);
    assert.equal(
      (await api(t, m.test_api_key, 'GET', `/api/v1/payouts/recipients/${old.id}`)).json().verification_status,
      'verified',
    );

    const replacement = await momoRecipient(t, m.test_api_key, '0241234567', 'mtn', { previous_version_id: old.id });
    assert.notEqual(replacement.id, old.id);
    assert.equal(replacement.previous_version_id, old.id);
    assert.equal(replacement.active, true);
    assert.equal(replacement.verification_status, 'pending_verification');
    assert.equal(replacement.verified, false);
    const oldAfter = (await api(t, m.test_api_key, 'GET', `/api/v1/payouts/recipients/${old.id}`)).json();
    assert.equal(oldAfter.active, false);
  });

  it('the same old version cannot be replaced twice (409), and the second attempt creates nothing', async () => {
    const m = await merchantWithHooks(t);
    const old = await bankRecipient(t, m.test_api_key, '12345678');
    await bankRecipient(t, m.test_api_key, '87654321', { previous_version_id: old.id });
    const [bankId] = await bankIds(t, m.test_api_key);
    const again = await postRecipient(m.test_api_key, {
      bank_id: bankId,
      account_number: '11223344',
      account_name: 'Kofi Mensah',
      previous_version_id: old.id,
    });
    assertErrorEnvelope(again, 409, 'RECIPIENT_UNAVAILABLE');
    const list = (await api(t, m.test_api_key, 'GET', '/api/v1/payouts/recipients')).json();
    assert.equal(list.recipients.length, 2);
  });

  it('a replacement of an unknown or foreign recipient is 404', async () => {
    const m = await merchantWithHooks(t);
    const other = await merchantWithHooks(t);
    const foreign = await bankRecipient(t, other.test_api_key);
    const [bankId] = await bankIds(t, m.test_api_key);
    for (const previous_version_id of ['rcp_missing', foreign.id]) {
      assertErrorEnvelope(
        await postRecipient(m.test_api_key, {
          bank_id: bankId,
          account_number: '12345678',
          account_name: 'Kofi Mensah',
          previous_version_id,
        }),
        404,
        'NOT_FOUND',
      );
    }
    assert.equal(
      (await api(t, other.test_api_key, 'GET', `/api/v1/payouts/recipients/${foreign.id}`)).json().active,
      true,
    );
  });

  it('an open payout blocks replacement and DELETE of its recipient (409), and cancelling it unblocks them', async () => {
    const m = await liveMerchant(t, { payoutApproval: true });
    const recipient = await bankRecipient(t, m.live_api_key, '12345678');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 5_000);
    assert.equal(payout.status, 'requested');

    const [bankId] = await bankIds(t, m.live_api_key);
    const replace = await postRecipient(m.live_api_key, {
      bank_id: bankId,
      account_number: '87654321',
      account_name: 'Kofi Mensah',
      previous_version_id: recipient.id,
    });
    assertErrorEnvelope(replace, 409, 'RECIPIENT_HAS_OPEN_PAYOUTS');
    assertErrorEnvelope(
      await api(t, m.live_api_key, 'DELETE', `/api/v1/payouts/recipients/${recipient.id}`),
      409,
      'RECIPIENT_HAS_OPEN_PAYOUTS',
    );
    const read = (await api(t, m.live_api_key, 'GET', `/api/v1/payouts/recipients/${recipient.id}`)).json();
    assert.equal(read.active, true, 'the refused calls changed nothing');
    assert.equal((await api(t, m.live_api_key, 'GET', '/api/v1/payouts/recipients')).json().recipients.length, 1);

    assert.equal((await api(t, m.live_api_key, 'POST', `/api/v1/payouts/${payout.id}/cancel`)).statusCode, 200);
    assert.equal(
      (await api(t, m.live_api_key, 'DELETE', `/api/v1/payouts/recipients/${recipient.id}`)).statusCode,
      204,
    );
  });

  it("another merchant's recipient id, or the other environment's, is 404 for GET and DELETE", async () => {
    const m = await merchantWithHooks(t);
    const other = await merchantWithHooks(t);
    const theirs = await bankRecipient(t, other.test_api_key);
    assertErrorEnvelope(
      await api(t, m.test_api_key, 'GET', `/api/v1/payouts/recipients/${theirs.id}`),
      404,
      'NOT_FOUND',
    );
    assertErrorEnvelope(
      await api(t, m.test_api_key, 'DELETE', `/api/v1/payouts/recipients/${theirs.id}`),
      404,
      'NOT_FOUND',
    );
    assertErrorEnvelope(
      await api(t, other.live_api_key, 'GET', `/api/v1/payouts/recipients/${theirs.id}`),
      404,
      'NOT_FOUND',
    );
    assertErrorEnvelope(
      await api(t, other.live_api_key, 'DELETE', `/api/v1/payouts/recipients/${theirs.id}`),
      404,
      'NOT_FOUND',
    );
    assert.equal(
      (await api(t, other.test_api_key, 'GET', `/api/v1/payouts/recipients/${theirs.id}`)).json().active,
      true,
    );
    assert.equal((await api(t, m.test_api_key, 'GET', '/api/v1/payouts/recipients')).json().recipients.length, 0);
  });

  it('merchant_id or environment in the body that conflict with the key are refused with 400; matching values are accepted', async () => {
    const m = await merchantWithHooks(t);
    const other = await merchantWithHooks(t);
    const [bankId] = await bankIds(t, m.test_api_key);
    const base = { bank_id: bankId, account_number: '12345678', account_name: 'Kofi Mensah' };
    const wrongMerchant = assertErrorEnvelope(
      await postRecipient(m.test_api_key, { ...base, merchant_id: other.merchant_id }),
      400,
      'INVALID_ARGUMENT',
    );
    assert.ok(wrongMerchant.fields?.some((field) => field.field === 'merchant_id'));
    const wrongEnvironment = assertErrorEnvelope(
      await postRecipient(m.test_api_key, { ...base, environment: 'live' }),
      400,
      'INVALID_ARGUMENT',
    );
    assert.ok(wrongEnvironment.fields?.some((field) => field.field === 'environment'));
    assertErrorEnvelope(await postRecipient(m.live_api_key, { ...base, environment: 'test' }), 400, 'INVALID_ARGUMENT');
    assert.equal((await api(t, m.test_api_key, 'GET', '/api/v1/payouts/recipients')).json().recipients.length, 0);
    assert.equal((await api(t, other.test_api_key, 'GET', '/api/v1/payouts/recipients')).json().recipients.length, 0);
    const matching = await postRecipient(m.test_api_key, { ...base, merchant_id: m.merchant_id, environment: 'test' });
    assert.equal(matching.statusCode, 201, matching.body);
  });

  it('recipients need an API key (401)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/payouts/recipients' });
    assertErrorEnvelope(res, 401, 'UNAUTHORIZED');
  });
});
