// Live payouts under approval, four eyes (DESIGN §3 Payouts): requested and held until another approver decides; the
// requester cannot approve their own; a rejection cancels and releases; Test payouts are paid at once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decidePayout } from '../../src/payouts/lifecycle.ts';
import { storageKind } from '../support/helpers.ts';
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
  getPayout,
  httpStatusOf,
  liveMerchant,
  merchantWithHooks,
  momoRecipient,
  payoutStatus,
} from '../support/payouts-fixtures.ts';
import { usePayoutApp } from '../support/payout-app.ts';

describe(`payout creation and processing (${storageKind})`, () => {
  const { t, rail, testMerchant, assertHealthy } = usePayoutApp();

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
      pending_minor: 0,
      reserved_minor: 0,
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
      pending_minor: 0,
      reserved_minor: 0,
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
      pending_minor: 0,
      reserved_minor: 0,
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
});
