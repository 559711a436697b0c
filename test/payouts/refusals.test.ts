// Payouts refused before anything is held (DESIGN §3 Payouts): the fee limit, the available balance, the
// per-payout and daily limits, paused payouts, unavailable recipients, payout access and a missing webhook endpoint.
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
  drive,
  extraKey,
  fund,
  liveMerchant,
  merchantWithHooks,
  momoRecipient,
  newClientReference,
  postPayout,
  verifyRecipientsNow,
} from '../support/payouts-fixtures.ts';
import { usePayoutApp } from '../support/payout-app.ts';

describe(`payout creation and processing (${storageKind})`, () => {
  const { t, rail, testMerchant, payoutRows, assertHealthy } = usePayoutApp();

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
      pending_minor: 0,
      reserved_minor: 0,
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
      pending_minor: 0,
      reserved_minor: 0,
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
});
