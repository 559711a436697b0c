// Remembered payout decisions (src/payouts/decision-cache.ts): checked again by the write, so a change made elsewhere
// (pause, payout access, limits, the webhook endpoint, approval) takes effect on the next payout; a write aborted by a
// deadlock runs again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DbError } from '../../src/db/index.ts';
import { createPayout as createPayoutDirectly } from '../../src/payouts/create.ts';
import { storageKind } from '../support/helpers.ts';
import { assertErrorEnvelope } from '../support/http.ts';
import {
  api,
  balanceOf,
  bankRecipient,
  createPayout,
  liveMerchant,
  newClientReference,
  postPayout,
} from '../support/payouts-fixtures.ts';
import { usePayoutApp } from '../support/payout-app.ts';
import { LiveProviders } from '../../src/rails/live.ts';

describe(`payout creation and processing (${storageKind})`, () => {
  const { t, testMerchant, payoutRows, assertHealthy } = usePayoutApp();

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
});
