// The ledger under real concurrency (PostgreSQL only; skipped on embedded storage, one connection): concurrent
// holds never overdraw, and concurrent credits, posts and voids each take effect exactly once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  creditPayment,
  InsufficientFundsError,
  LedgerDuplicateEntryError,
  PayoutAlreadyResolvedError,
  postPayout,
  voidPayout,
} from '../../src/ledger/service.ts';
import { holdNewPayout, paymentId } from '../support/ledger.ts';
import { storageKind } from '../support/helpers.ts';
import { useLedgerApp } from '../support/ledger-app.ts';

describe(`ledger (${storageKind})`, () => {
  const { t, newMerchant, balanceOf, assertHealthy, fund, payout } = useLedgerApp();

  describe('real concurrency', () => {
    const skip =
      storageKind === 'postgres'
        ? false
        : 'needs PostgreSQL (DATABASE_URL): embedded storage is one connection, so transactions never overlap';

    it('50 concurrent holds draining one balance: exactly floor(balance / (amount + fee)) succeed and the balance never goes negative', {
      skip,
    }, async () => {
      const m = await newMerchant();
      const fundedMinor = 10_000;
      const amountMinor = 700;
      const feeMinor = 100;
      await fund(m, fundedMinor);
      let running = true;
      const seen: { available_minor: number; held_minor: number; eligible_minor: number }[] = [];
      const watcher = (async () => {
        while (running) seen.push(await balanceOf(m));
      })();
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, () => t.db.transaction((tx) => holdNewPayout(tx, payout(m, amountMinor, feeMinor)))),
      );
      running = false;
      await watcher;
      const expectedHolds = Math.floor(fundedMinor / (amountMinor + feeMinor));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, expectedHolds);
      for (const r of results)
        if (r.status === 'rejected') assert.ok(r.reason instanceof InsufficientFundsError, String(r.reason));
      const total = expectedHolds * (amountMinor + feeMinor);
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: fundedMinor - total,
        held_minor: total,
        eligible_minor: fundedMinor,
        pending_minor: 0,
        reserved_minor: 0,
      });
      assert.ok(seen.length > 0);
      for (const b of seen) {
        assert.ok(b.available_minor >= 0 && b.held_minor >= 0, JSON.stringify(b));
        assert.equal(
          b.eligible_minor,
          fundedMinor,
          'every committed snapshot moves money between available and held atomically',
        );
      }
      await assertHealthy(m);
    });

    it('concurrent credits of one payment post exactly once; concurrent posts and voids of one hold resolve it exactly once', {
      skip,
    }, async () => {
      const m = await newMerchant();
      const id = paymentId();
      const credits = await Promise.allSettled(
        Array.from({ length: 10 }, () =>
          t.db.transaction((tx) =>
            creditPayment(tx, {
              merchantId: m,
              environment: 'test',
              paymentId: id,
              chargedMinor: 5_000,
              merchantFeeMinor: 0,
              payerFeeMinor: 0,
            }),
          ),
        ),
      );
      assert.equal(credits.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of credits)
        if (r.status === 'rejected') assert.ok(r.reason instanceof LedgerDuplicateEntryError, String(r.reason));
      assert.equal((await balanceOf(m)).available_minor, 5_000);

      const p = payout(m, 1_000, 100);
      await t.db.transaction((tx) => holdNewPayout(tx, p));
      const resolutions = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          t.db.transaction((tx) => (i % 2 === 0 ? postPayout(tx, p) : voidPayout(tx, p))),
        ),
      );
      assert.equal(resolutions.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of resolutions)
        if (r.status === 'rejected') assert.ok(r.reason instanceof PayoutAlreadyResolvedError, String(r.reason));
      const b = await balanceOf(m);
      assert.equal(b.held_minor, 0);
      assert.ok(b.available_minor === 5_000 || b.available_minor === 3_900, JSON.stringify(b));
      await assertHealthy(m);
    });
  });
});
