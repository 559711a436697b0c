// The ledger's payout holds (DESIGN §3 "Payouts"; SPEC 3.3), two-phase: a hold reserves amount plus fee, then is
// posted, voided or (once paid) returned exactly once; a Test payout paid at once; the database's refusals.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Queryable } from '../../src/db/index.ts';
import { DbError } from '../../src/db/index.ts';
import {
  newPayoutAccountKinds,
  planNewPayout,
  InsufficientFundsError,
  LedgerDuplicateEntryError,
  LedgerEntryNotFoundError,
  PayoutAlreadyResolvedError,
  postPayout,
  returnPayout,
  voidPayout,
  type PayoutMoney,
} from '../../src/ledger/service.ts';
import { duplicateError } from '../../src/ledger/model.ts';
import * as store from '../../src/ledger/store.ts';
import { holdNewPayout } from '../support/ledger.ts';
import { storageKind } from '../support/helpers.ts';
import { useLedgerApp } from '../support/ledger-app.ts';

/** A new payout paid at once, as Test payout creation writes it: planned against the locked accounts, written in one statement. */
async function payNewPayoutAtOnce(tx: Queryable, p: PayoutMoney): Promise<{ entryId: string }> {
  const plan = planNewPayout(
    p,
    await store.lockAccounts(tx, p.merchantId, p.environment, newPayoutAccountKinds(true)),
    true,
  );
  assert.equal(plan.entries.length, 1);
  if (!(await store.writeEntries(tx, plan.entries, plan.lines))) throw duplicateError(plan.entries[0]!, 'payout_paid');
  return { entryId: plan.entries[0]!.id };
}

describe(`ledger (${storageKind})`, () => {
  const { t, inTx, newMerchant, balanceOf, entryCount, sums, assertHealthy, fund, payout } = useLedgerApp();

  describe('payout holds (two-phase)', () => {
    it('a hold moves amount plus fee from available to held; eligible stays the same', async () => {
      const m = await newMerchant();
      await fund(m, 10_000);
      await inTx((tx) => holdNewPayout(tx, payout(m, 5_000, 100)));
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 4_900,
        held_minor: 5_100,
        eligible_minor: 10_000,
        pending_minor: 0,
        reserved_minor: 0,
      });
      await assertHealthy(m);
    });

    it('a hold beyond the available balance is refused with InsufficientFundsError and writes nothing', async () => {
      const m = await newMerchant();
      await fund(m, 1_000);
      const before = await sums(m);
      await assert.rejects(
        inTx((tx) => holdNewPayout(tx, payout(m, 950, 51))),
        InsufficientFundsError,
      );
      assert.deepEqual(await sums(m), before);
      assert.equal(await entryCount(m), 1);
      // Exactly affordable is fine.
      await inTx((tx) => holdNewPayout(tx, payout(m, 950, 50)));
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 0,
        held_minor: 1_000,
        eligible_minor: 1_000,
        pending_minor: 0,
        reserved_minor: 0,
      });
      await assertHealthy(m);
    });

    it('a merchant with no money at all cannot hold anything', async () => {
      const m = await newMerchant();
      await assert.rejects(
        inTx((tx) => holdNewPayout(tx, payout(m, 1, 0))),
        InsufficientFundsError,
      );
      assert.equal(await entryCount(m), 0);
    });

    it('posting a hold sends the amount to payout clearing and the fee to fee revenue; eligible drops by amount plus fee', async () => {
      const m = await newMerchant();
      await fund(m, 10_000);
      const p = payout(m, 5_000, 100);
      const hold = await inTx((tx) => holdNewPayout(tx, p));
      const posted = await inTx((tx) => postPayout(tx, p));
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 4_900,
        held_minor: 0,
        eligible_minor: 4_900,
        pending_minor: 0,
        reserved_minor: 0,
      });
      assert.deepEqual(await sums(m), {
        merchant_available: -4_900,
        merchant_held: 0,
        merchant_pending: 0,
        merchant_reserved: 0,
        provider_clearing: 10_000,
        fee_revenue: -100,
        payout_clearing: -5_000,
      });
      const [row] = await t.db.query<{ reverses_entry_id: string }>(
        'SELECT reverses_entry_id FROM journal_entries WHERE id = $1',
        [posted.entryId],
      );
      assert.equal(row!.reverses_entry_id, hold.entryId, 'the resolution points at its hold');
      await assertHealthy(m);
    });

    it('a new payout paid at once (Test) is one payout_paid entry that moves what hold then post would, and settles the payout for good', async () => {
      const [one, two] = [await newMerchant(), await newMerchant()];
      await fund(one, 10_000);
      await fund(two, 10_000);
      const [p1, p2] = [payout(one, 5_000, 100), payout(two, 5_000, 100)];
      await inTx(async (tx) => {
        await holdNewPayout(tx, p1);
        await postPayout(tx, p1);
      });
      const paid = await inTx((tx) => payNewPayoutAtOnce(tx, p2));
      assert.deepEqual(await sums(two), await sums(one), 'the same balances as a hold and its post');
      assert.deepEqual(await balanceOf(two), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 4_900,
        held_minor: 0,
        eligible_minor: 4_900,
        pending_minor: 0,
        reserved_minor: 0,
      });
      const entries = await t.db.query<{ id: string; kind: string; reverses_entry_id: string | null }>(
        "SELECT id, kind, reverses_entry_id FROM journal_entries WHERE reference_type = 'payout' AND reference_id = $1",
        [p2.payoutId],
      );
      assert.deepEqual(entries, [{ id: paid.entryId, kind: 'payout_paid', reverses_entry_id: null }]);
      assert.deepEqual(
        await store.entryLines(t.db, paid.entryId),
        [
          { account: 'fee_revenue', amount_minor: -100 },
          { account: 'merchant_available', amount_minor: 5_100 },
          { account: 'payout_clearing', amount_minor: -5_000 },
        ].map(({ account, amount_minor }) => ({ account, amountMinor: amount_minor })),
      );
      await fund(two, 10_000); // so each refusal below is for the payout's state, not for want of funds
      await assert.rejects(
        inTx((tx) => voidPayout(tx, p2)),
        LedgerEntryNotFoundError,
        'nothing was held to void',
      );
      await assert.rejects(
        inTx((tx) => holdNewPayout(tx, p2)),
        LedgerDuplicateEntryError,
        'a paid payout is not held afterwards',
      );
      await assert.rejects(
        inTx((tx) => payNewPayoutAtOnce(tx, p2)),
        LedgerDuplicateEntryError,
      );
      assert.equal(
        (await t.db.query('SELECT 1 FROM journal_entries WHERE reference_id = $1', [p2.payoutId])).length,
        1,
      );
      await assertHealthy(two);
    });

    it('the database refuses a hold beside a payment at once, and a post or void beside either, whatever the code does', async () => {
      const m = await newMerchant();
      await fund(m, 10_000);
      const p = payout(m, 1_000, 0);
      await inTx((tx) => payNewPayoutAtOnce(tx, p));
      for (const kind of ['payout_hold', 'payout_post', 'payout_void']) {
        // Straight into the table, past the ledger's checks: the unique indexes refuse it.
        await assert.rejects(
          inTx((tx) =>
            tx.query(
              "INSERT INTO journal_entries (id, merchant_id, environment, kind, reference_type, reference_id) VALUES ($1, $2, 'test', $3, 'payout', $4)",
              [randomUUID(), m, kind, p.payoutId],
            ),
          ),
          (error) => error instanceof DbError && error.isUniqueViolation,
          kind,
        );
      }
      await assertHealthy(m);
    });

    it('a payout paid at once can be returned once: amount and fee go back to available', async () => {
      const m = await newMerchant();
      await fund(m, 10_000);
      const p = payout(m, 4_000, 100);
      const paid = await inTx((tx) => payNewPayoutAtOnce(tx, p));
      const returned = await inTx((tx) => returnPayout(tx, p));
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 10_000,
        held_minor: 0,
        eligible_minor: 10_000,
        pending_minor: 0,
        reserved_minor: 0,
      });
      const [row] = await t.db.query<{ reverses_entry_id: string }>(
        'SELECT reverses_entry_id FROM journal_entries WHERE id = $1',
        [returned.entryId],
      );
      assert.equal(row!.reverses_entry_id, paid.entryId);
      await assert.rejects(
        inTx((tx) => returnPayout(tx, p)),
        LedgerDuplicateEntryError,
      );
      await assert.rejects(
        inTx((tx) => returnPayout(tx, { ...p, feeMinor: 0 })),
        /not what was paid/,
      );
      await assertHealthy(m);
    });

    it('a new payout paid at once beyond the available balance is refused with InsufficientFundsError and writes nothing', async () => {
      const m = await newMerchant();
      await fund(m, 1_000);
      const before = await sums(m);
      await assert.rejects(
        inTx((tx) => payNewPayoutAtOnce(tx, payout(m, 950, 51))),
        InsufficientFundsError,
      );
      assert.deepEqual(await sums(m), before);
      assert.equal(await entryCount(m), 1);
      await inTx((tx) => payNewPayoutAtOnce(tx, payout(m, 950, 50)));
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 0,
        held_minor: 0,
        eligible_minor: 0,
        pending_minor: 0,
        reserved_minor: 0,
      });
      await assertHealthy(m);
    });

    it('voiding a hold puts amount plus fee back to available', async () => {
      const m = await newMerchant();
      await fund(m, 10_000);
      const p = payout(m, 5_000, 100);
      await inTx((tx) => holdNewPayout(tx, p));
      await inTx((tx) => voidPayout(tx, p));
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 10_000,
        held_minor: 0,
        eligible_minor: 10_000,
        pending_minor: 0,
        reserved_minor: 0,
      });
      await assertHealthy(m);
    });

    it('a hold is resolved exactly once: post after void, void after post and a second post are refused with PayoutAlreadyResolvedError', async () => {
      const m = await newMerchant();
      await fund(m, 10_000);
      const voided = payout(m, 1_000, 100);
      const posted = payout(m, 2_000, 100);
      await inTx((tx) => holdNewPayout(tx, voided));
      await inTx((tx) => holdNewPayout(tx, posted));
      const holdLines = await store.entryLines(
        t.db,
        (await store.findEntry(t.db, 'payout', voided.payoutId, 'payout_hold'))!.id,
      );
      await inTx((tx) => voidPayout(tx, voided));
      await inTx((tx) => postPayout(tx, posted));
      const before = await sums(m);
      const cases: [string, () => Promise<unknown>, string][] = [
        ['post after void', () => inTx((tx) => postPayout(tx, voided)), 'payout_void'],
        ['void after void', () => inTx((tx) => voidPayout(tx, voided)), 'payout_void'],
        ['void after post', () => inTx((tx) => voidPayout(tx, posted)), 'payout_post'],
        ['post after post', () => inTx((tx) => postPayout(tx, posted)), 'payout_post'],
      ];
      for (const [name, run, existingKind] of cases) {
        await assert.rejects(
          run(),
          (error) =>
            error instanceof PayoutAlreadyResolvedError &&
            error instanceof LedgerDuplicateEntryError &&
            error.existingKind === existingKind,
          name,
        );
      }
      assert.deepEqual(await sums(m), before);
      assert.deepEqual(
        await store.entryLines(t.db, (await store.findEntry(t.db, 'payout', voided.payoutId, 'payout_hold'))!.id),
        holdLines,
        'the hold entry is never edited',
      );
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 7_900,
        held_minor: 0,
        eligible_minor: 7_900,
        pending_minor: 0,
        reserved_minor: 0,
      });
      await assertHealthy(m);
    });

    it('a payout without a hold cannot be posted, voided or returned', async () => {
      const m = await newMerchant();
      await fund(m, 10_000);
      const p = payout(m, 1_000, 100);
      await assert.rejects(
        inTx((tx) => postPayout(tx, p)),
        (error) => error instanceof LedgerEntryNotFoundError && error.kind === 'payout_hold',
      );
      await assert.rejects(
        inTx((tx) => voidPayout(tx, p)),
        LedgerEntryNotFoundError,
      );
      await assert.rejects(
        inTx((tx) => returnPayout(tx, p)),
        (error) => error instanceof LedgerEntryNotFoundError && error.kind === 'payout_post',
      );
      assert.equal(await entryCount(m), 1);
    });

    it('a resolution for another amount than the hold reserved is a bug and writes nothing', async () => {
      const m = await newMerchant();
      await fund(m, 10_000);
      const p = payout(m, 1_000, 100);
      await inTx((tx) => holdNewPayout(tx, p));
      await assert.rejects(
        inTx((tx) => postPayout(tx, { ...p, amountMinor: 1_001 })),
        /not what its hold reserved/,
      );
      await assert.rejects(
        inTx((tx) => voidPayout(tx, { ...p, feeMinor: 0 })),
        /not what its hold reserved/,
      );
      assert.equal((await balanceOf(m)).held_minor, 1_100);
      assert.equal(await entryCount(m), 2);
    });

    it('a returned payout gives amount and fee back to available, once, and only after it was paid', async () => {
      const m = await newMerchant();
      await fund(m, 10_000);
      const p = payout(m, 4_000, 100);
      await inTx((tx) => holdNewPayout(tx, p));
      await assert.rejects(
        inTx((tx) => returnPayout(tx, p)),
        LedgerEntryNotFoundError,
        'not paid yet',
      );
      const posted = await inTx((tx) => postPayout(tx, p));
      const returned = await inTx((tx) => returnPayout(tx, p));
      assert.deepEqual(await balanceOf(m), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 10_000,
        held_minor: 0,
        eligible_minor: 10_000,
        pending_minor: 0,
        reserved_minor: 0,
      });
      assert.deepEqual(await sums(m), {
        merchant_available: -10_000,
        merchant_held: 0,
        merchant_pending: 0,
        merchant_reserved: 0,
        provider_clearing: 10_000,
        fee_revenue: 0,
        payout_clearing: 0,
      });
      const [row] = await t.db.query<{ reverses_entry_id: string }>(
        'SELECT reverses_entry_id FROM journal_entries WHERE id = $1',
        [returned.entryId],
      );
      assert.equal(row!.reverses_entry_id, posted.entryId);
      await assert.rejects(
        inTx((tx) => returnPayout(tx, p)),
        (error) => error instanceof LedgerDuplicateEntryError && !(error instanceof PayoutAlreadyResolvedError),
      );
      const voided = payout(m, 100, 0);
      await inTx((tx) => holdNewPayout(tx, voided));
      await inTx((tx) => voidPayout(tx, voided));
      await assert.rejects(
        inTx((tx) => returnPayout(tx, voided)),
        LedgerEntryNotFoundError,
        'a voided payout was never paid',
      );
      await assertHealthy(m);
    });
  });
});
