// The ledger's payments (DESIGN §3 "Money and ids"; SPEC 2.11): a merchant's balance in each environment, a
// payment's credit and its reversal, each exactly once, never taking the balance below zero.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  creditPayment,
  InsufficientFundsError,
  LedgerDuplicateEntryError,
  LedgerEntryNotFoundError,
  reversePayment,
} from '../../src/ledger/service.ts';
import * as store from '../../src/ledger/store.ts';
import { holdNewPayout, paymentId } from '../support/ledger.ts';
import { storageKind } from '../support/helpers.ts';
import { useLedgerApp } from '../support/ledger-app.ts';

describe(`ledger (${storageKind})`, () => {
  const { t, inTx, newMerchant, balanceOf, entryCount, sums, assertHealthy, fund, payout } = useLedgerApp();

  describe('balance', () => {
    it('a merchant with no entries has a zero balance in each environment, in the SPEC 2.11 shape', async () => {
      const m = await newMerchant();
      assert.deepEqual(await balanceOf(m, 'test'), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 0,
        held_minor: 0,
        eligible_minor: 0,
        pending_minor: 0,
        reserved_minor: 0,
      });
      assert.deepEqual(await balanceOf(m, 'live'), {
        environment: 'live',
        currency: 'GHS',
        available_minor: 0,
        held_minor: 0,
        eligible_minor: 0,
        pending_minor: 0,
        reserved_minor: 0,
      });
    });

    it('Test and Live are separate worlds: a Live credit leaves the Test balance untouched', async () => {
      const m = await newMerchant();
      await fund(m, 5_000, 'live');
      assert.equal((await balanceOf(m, 'live')).available_minor, 5_000);
      assert.equal((await balanceOf(m, 'test')).available_minor, 0);
      await assertHealthy(m);
    });
  });

  describe('payments', () => {
    it('a credit debits provider clearing by the charged amount and credits the merchant the charge less both fees', async () => {
      const m = await newMerchant();
      const { entryId } = await inTx((tx) =>
        creditPayment(tx, {
          merchantId: m,
          environment: 'test',
          paymentId: paymentId(),
          chargedMinor: 10_150,
          merchantFeeMinor: 250,
          payerFeeMinor: 150,
        }),
      );
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 9_750,
        held_minor: 0,
        eligible_minor: 9_750,
        pending_minor: 0,
        reserved_minor: 0,
      });
      assert.deepEqual(await sums(m), {
        merchant_available: -9_750,
        provider_clearing: 10_150,
        fee_revenue: -400,
        merchant_held: 0,
        merchant_pending: 0,
        merchant_reserved: 0,
        payout_clearing: 0,
      });
      const lines = await store.entryLines(t.db, entryId);
      assert.equal(lines.length, 3);
      assert.equal(
        lines.reduce((sum, line) => sum + line.amountMinor, 0),
        0,
      );
      await assertHealthy(m);
    });

    it('a credit without fees writes two lines (zero lines are skipped)', async () => {
      const m = await newMerchant();
      const { entryId } = await fund(m, 2_000);
      assert.deepEqual(await store.entryLines(t.db, entryId), [
        { account: 'merchant_available', amountMinor: -2_000 },
        { account: 'provider_clearing', amountMinor: 2_000 },
      ]);
    });

    it('a second credit of the same payment is refused with LedgerDuplicateEntryError, writes nothing, and leaves the transaction usable', async () => {
      const m = await newMerchant();
      const id = paymentId();
      const credit = {
        merchantId: m,
        environment: 'test' as const,
        paymentId: id,
        chargedMinor: 1_000,
        merchantFeeMinor: 10,
        payerFeeMinor: 0,
      };
      await inTx((tx) => creditPayment(tx, credit));
      await inTx(async (tx) => {
        await assert.rejects(
          creditPayment(tx, credit),
          (error) =>
            error instanceof LedgerDuplicateEntryError && error.kind === 'payment_credit' && error.referenceId === id,
        );
        // Exactly-once callers carry on in the same transaction after the refusal.
        await creditPayment(tx, { ...credit, paymentId: paymentId() });
      });
      assert.equal((await balanceOf(m)).available_minor, 2 * 990);
      assert.equal(await entryCount(m), 2);
      await assertHealthy(m);
    });

    it('a reversal posts the exact opposite of the credit and points at it', async () => {
      const m = await newMerchant();
      const id = paymentId();
      const credit = await inTx((tx) =>
        creditPayment(tx, {
          merchantId: m,
          environment: 'test',
          paymentId: id,
          chargedMinor: 3_030,
          merchantFeeMinor: 45,
          payerFeeMinor: 30,
        }),
      );
      const reversal = await inTx((tx) => reversePayment(tx, { merchantId: m, environment: 'test', paymentId: id }));
      const creditLines = await store.entryLines(t.db, credit.entryId);
      const reversalLines = await store.entryLines(t.db, reversal.entryId);
      assert.deepEqual(
        reversalLines,
        creditLines.map((line) => ({ account: line.account, amountMinor: -line.amountMinor })),
      );
      const [row] = await t.db.query<{ reverses_entry_id: string; kind: string }>(
        'SELECT reverses_entry_id, kind FROM journal_entries WHERE id = $1',
        [reversal.entryId],
      );
      assert.deepEqual(row, { reverses_entry_id: credit.entryId, kind: 'payment_reversal' });
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 0,
        held_minor: 0,
        eligible_minor: 0,
        pending_minor: 0,
        reserved_minor: 0,
      });
      assert.deepEqual(await sums(m), {
        merchant_available: 0,
        provider_clearing: 0,
        fee_revenue: 0,
        merchant_held: 0,
        merchant_pending: 0,
        merchant_reserved: 0,
        payout_clearing: 0,
      });
      await assertHealthy(m);
    });

    it('a payment is reversed at most once, and a payment never credited cannot be reversed', async () => {
      const m = await newMerchant();
      const id = paymentId();
      await fund(m, 500); // another payment, so a wrong second reversal would have money to take
      await inTx((tx) =>
        creditPayment(tx, {
          merchantId: m,
          environment: 'test',
          paymentId: id,
          chargedMinor: 700,
          merchantFeeMinor: 0,
          payerFeeMinor: 0,
        }),
      );
      await inTx((tx) => reversePayment(tx, { merchantId: m, environment: 'test', paymentId: id }));
      await assert.rejects(
        inTx((tx) => reversePayment(tx, { merchantId: m, environment: 'test', paymentId: id })),
        (error) => error instanceof LedgerDuplicateEntryError && error.kind === 'payment_reversal',
      );
      await assert.rejects(
        inTx((tx) => reversePayment(tx, { merchantId: m, environment: 'test', paymentId: paymentId() })),
        LedgerEntryNotFoundError,
      );
      assert.equal((await balanceOf(m)).available_minor, 500);
      assert.equal(await entryCount(m), 3);
      await assertHealthy(m);
    });

    it('a reversal the available balance cannot cover is refused with InsufficientFundsError: nothing written, nothing negative, transaction usable', async () => {
      const m = await newMerchant();
      const id = paymentId();
      await inTx((tx) =>
        creditPayment(tx, {
          merchantId: m,
          environment: 'test',
          paymentId: id,
          chargedMinor: 1_000,
          merchantFeeMinor: 0,
          payerFeeMinor: 0,
        }),
      );
      await inTx((tx) => holdNewPayout(tx, payout(m, 800, 100))); // the money is on its way out
      const before = await sums(m);
      await inTx(async (tx) => {
        await assert.rejects(reversePayment(tx, { merchantId: m, environment: 'test', paymentId: id }), (error) => {
          assert.ok(error instanceof InsufficientFundsError);
          assert.equal(error.account, 'merchant_available');
          assert.equal(error.balanceMinor, 100);
          assert.equal(error.requiredMinor, 1_000);
          return true;
        });
        await tx.query('SELECT 1');
      });
      assert.deepEqual(await sums(m), before);
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 100,
        held_minor: 900,
        eligible_minor: 1_000,
        pending_minor: 0,
        reserved_minor: 0,
      });
      assert.equal(await entryCount(m), 2);
      await assertHealthy(m);
    });
  });
});
