// Live payout processing with the simulator (DESIGN §3 Payouts): held while processing, paid,
// failed or left pending at the provider, returned, reconciled by an operator, and the processor's steps once due.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { markPayoutReturned, reconcilePayout } from '../../src/payouts/lifecycle.ts';
import { processDuePayouts } from '../../src/payouts/processing.ts';
import { advanceProcessingStep } from '../../src/payouts/payout-store.ts';
import { storageKind } from '../support/helpers.ts';
import { assertErrorEnvelope } from '../support/http.ts';
import {
  api,
  balanceOf,
  bankRecipient,
  createPayout,
  drive,
  eventsFor,
  getPayout,
  httpStatusOf,
  liveMerchant,
  makeDue,
  momoRecipient,
  newClientReference,
  payoutStatus,
  postPayout,
  type PayoutJson,
} from '../support/payouts-fixtures.ts';
import { usePayoutApp } from '../support/payout-app.ts';

describe(`payout creation and processing (${storageKind})`, () => {
  const { t, rail, testMerchant, assertHealthy } = usePayoutApp();

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
      pending_minor: 0,
      reserved_minor: 0,
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
      pending_minor: 0,
      reserved_minor: 0,
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
    assert.equal(await drive(t, rail, payout.id), 'failed');
    assert.equal(rail.transferCallsFor(payout.id), 0, 'no transfer was attempted');
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
      pending_minor: 0,
      reserved_minor: 0,
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
      pending_minor: 0,
      reserved_minor: 0,
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
      pending_minor: 0,
      reserved_minor: 0,
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
      pending_minor: 0,
      reserved_minor: 0,
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

  it('Live processing is only advanced by the processor once the payout is due', async () => {
    const m = await liveMerchant(t, { fundMinor: 10_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '1010101010');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 1_000);
    await t.db.query(`UPDATE payouts SET next_step_at = now() + interval '1 hour' WHERE id = $1`, [payout.id]);
    await processDuePayouts(t.db, rail, { only: [payout.id] });
    assert.deepEqual(await payoutStatus(t, payout.id), { status: 'processing', processing_step: 'recipient_check' });
    await makeDue(t, payout.id);
    await processDuePayouts(t.db, rail, { only: [payout.id] });
    assert.deepEqual(await payoutStatus(t, payout.id), { status: 'processing', processing_step: 'transfer' });
  });

  it('a pass limited to some payouts advances those and leaves every other due payout as it was', async () => {
    const m = await liveMerchant(t, { fundMinor: 10_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '1414141414');
    const mine = await createPayout(t, m.live_api_key, recipient.id, 1_000);
    const other = await createPayout(t, m.live_api_key, recipient.id, 1_100);
    await makeDue(t, mine.id);
    await makeDue(t, other.id);
    await processDuePayouts(t.db, rail, { only: [mine.id] });
    assert.deepEqual(await payoutStatus(t, mine.id), { status: 'processing', processing_step: 'transfer' });
    assert.deepEqual(await payoutStatus(t, other.id), { status: 'processing', processing_step: 'recipient_check' });
  });

  it('the step from transfer to awaiting the result is taken once: a processor that finds it moved on sends nothing', async () => {
    const m = await liveMerchant(t, { fundMinor: 10_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '1212121212');
    const payout = await createPayout(t, m.live_api_key, recipient.id, 1_000);
    await makeDue(t, payout.id);
    await processDuePayouts(t.db, rail, { only: [payout.id] }); // recipient check
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
