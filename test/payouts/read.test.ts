// Reading payouts (DESIGN §3 Payouts): the list pages newest first, clamps its limit, filters by client_reference and
// reports the total; a payout is read with its own key's merchant and environment only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storageKind } from '../support/helpers.ts';
import { assertErrorEnvelope } from '../support/http.ts';
import { api, bankRecipient, createPayout, getPayout, type PayoutJson } from '../support/payouts-fixtures.ts';
import { usePayoutApp } from '../support/payout-app.ts';

describe(`payout creation and processing (${storageKind})`, () => {
  const { t, testMerchant } = usePayoutApp();

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
});
