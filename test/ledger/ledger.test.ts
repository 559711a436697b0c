// The ledger (DESIGN §3 "Money and ids", "Payouts"; SPEC 2.11, 3.3): balanced immutable entries,
// exactly-once posts, two-phase payout holds, balances that never go negative.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Queryable } from '../../src/db/index.ts';
import { DbError } from '../../src/db/index.ts';
import type { Environment } from '../../src/lib/environment.ts';
import {
  balance,
  checkInvariants,
  creditPayment,
  newPayoutAccountKinds,
  planNewPayout,
  InsufficientFundsError,
  LedgerDuplicateEntryError,
  LedgerEntryNotFoundError,
  PayoutAlreadyResolvedError,
  post,
  postPayout,
  returnPayout,
  reversePayment,
  voidPayout,
  type AccountKind,
  type PayoutMoney,
  applyPendingCredits,
} from '../../src/ledger/service.ts';
import { duplicateError } from '../../src/ledger/model.ts';
import * as store from '../../src/ledger/store.ts';
import { holdNewPayout } from '../support/ledger.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const paymentId = () => `att_${randomUUID()}`;
const payoutId = () => `po_${randomUUID()}`;

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
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const inTx = <T>(fn: (tx: Queryable) => Promise<T>) => t.db.transaction(fn);
  const newMerchant = async () => (await t.merchant()).merchant_id;
  const balanceOf = (merchantId: string, environment: Environment = 'test') => balance(t.db, merchantId, environment);
  const entryCount = async (merchantId: string) =>
    (
      await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM journal_entries WHERE merchant_id = $1', [
        merchantId,
      ])
    )[0]!.n;
  const sums = async (merchantId: string, environment: Environment = 'test') =>
    Object.fromEntries(await store.accountSums(t.db, merchantId, environment));
  const assertHealthy = async (merchantId: string) => assert.deepEqual(await checkInvariants(t.db, merchantId), []);
  /** Credits a plain payment with no fees: the merchant's available balance grows by amountMinor. */
  const fund = (merchantId: string, amountMinor: number, environment: Environment = 'test') =>
    inTx((tx) =>
      creditPayment(tx, {
        merchantId,
        environment,
        paymentId: paymentId(),
        chargedMinor: amountMinor,
        merchantFeeMinor: 0,
        payerFeeMinor: 0,
      }),
    );
  const payout = (merchantId: string, amountMinor: number, feeMinor: number) => ({
    merchantId,
    environment: 'test' as const,
    payoutId: payoutId(),
    amountMinor,
    feeMinor,
  });

  describe('balance', () => {
    it('a merchant with no entries has a zero balance in each environment, in the SPEC 2.11 shape', async () => {
      const m = await newMerchant();
      assert.deepEqual(await balanceOf(m, 'test'), {
        environment: 'test',
        currency: 'GHS',
        available_minor: 0,
        held_minor: 0,
        eligible_minor: 0,
      });
      assert.deepEqual(await balanceOf(m, 'live'), {
        environment: 'live',
        currency: 'GHS',
        available_minor: 0,
        held_minor: 0,
        eligible_minor: 0,
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
      });
      assert.deepEqual(await sums(m), {
        merchant_available: -9_750,
        provider_clearing: 10_150,
        fee_revenue: -400,
        merchant_held: 0,
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
      });
      assert.deepEqual(await sums(m), {
        merchant_available: 0,
        provider_clearing: 0,
        fee_revenue: 0,
        merchant_held: 0,
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
      });
      assert.equal(await entryCount(m), 2);
      await assertHealthy(m);
    });
  });

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
      });
      assert.deepEqual(await sums(m), {
        merchant_available: -4_900,
        merchant_held: 0,
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
      });
      assert.deepEqual(await sums(m), {
        merchant_available: -10_000,
        merchant_held: 0,
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

  describe('post', () => {
    const entry = (merchantId: string, lines: { account: AccountKind; amountMinor: number }[]) => ({
      merchantId,
      environment: 'test' as const,
      kind: 'payment_credit' as const,
      referenceType: 'payment' as const,
      referenceId: paymentId(),
      lines,
    });

    it('an unbalanced entry is refused as a bug before anything is written', async () => {
      const m = await newMerchant();
      const refused: [string, { account: AccountKind; amountMinor: number }[]][] = [
        [
          'lines that do not sum to zero',
          [
            { account: 'provider_clearing', amountMinor: 100 },
            { account: 'merchant_available', amountMinor: -99 },
          ],
        ],
        [
          'a single line',
          [
            { account: 'provider_clearing', amountMinor: 0 },
            { account: 'provider_clearing', amountMinor: 5 },
            { account: 'provider_clearing', amountMinor: -5 },
          ],
        ],
        ['no lines', []],
      ];
      for (const [name, lines] of refused) {
        await assert.rejects(
          inTx((tx) => post(tx, entry(m, lines))),
          /unbalanced/,
          name,
        );
      }
      assert.equal(await entryCount(m), 0);
      assert.deepEqual(await sums(m), {}, 'not even an account is created');
    });

    it('an amount that is not a safe integer is refused as a bug', async () => {
      const m = await newMerchant();
      for (const amountMinor of [0.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, Number.POSITIVE_INFINITY]) {
        await assert.rejects(
          inTx((tx) =>
            post(
              tx,
              entry(m, [
                { account: 'provider_clearing', amountMinor },
                { account: 'merchant_available', amountMinor: -amountMinor },
              ]),
            ),
          ),
          /safe integer/,
          String(amountMinor),
        );
      }
      assert.equal(await entryCount(m), 0);
    });

    it('lines on the same account are merged and lines of zero dropped', async () => {
      const m = await newMerchant();
      const { entryId } = await inTx((tx) =>
        post(
          tx,
          entry(m, [
            { account: 'provider_clearing', amountMinor: 60 },
            { account: 'provider_clearing', amountMinor: 40 },
            { account: 'fee_revenue', amountMinor: 0 },
            { account: 'merchant_available', amountMinor: -100 },
          ]),
        ),
      );
      assert.deepEqual(await store.entryLines(t.db, entryId), [
        { account: 'merchant_available', amountMinor: -100 },
        { account: 'provider_clearing', amountMinor: 100 },
      ]);
      await assertHealthy(m);
    });

    it('an entry that would take a merchant account below zero is refused with InsufficientFundsError', async () => {
      const m = await newMerchant();
      await assert.rejects(
        inTx((tx) =>
          post(
            tx,
            entry(m, [
              { account: 'merchant_held', amountMinor: 1 },
              { account: 'merchant_available', amountMinor: -1 },
            ]),
          ),
        ),
        (error) => error instanceof InsufficientFundsError && error.account === 'merchant_held',
      );
      assert.equal(await entryCount(m), 0);
    });
  });

  describe('storage backstops', () => {
    it('an unbalanced entry written past the code is refused by the database at commit', async () => {
      // This test commits raw rows: on a storage without the triggers they would stick, so check first.
      const triggers = await t.db.query(
        `SELECT tgname FROM pg_trigger WHERE tgname IN ('journal_entry_balanced', 'journal_lines_balanced')`,
      );
      assert.equal(
        triggers.length,
        2,
        'the storage lacks the balance triggers of 002_ledger.sql (its schema predates the migration); nothing was written',
      );
      const m = await newMerchant();
      await fund(m, 100); // creates the accounts
      const accounts = await t.db.query<{ id: string; kind: string }>(
        'SELECT id, kind FROM ledger_accounts WHERE merchant_id = $1 AND environment = $2',
        [m, 'test'],
      );
      const idOf = (kind: string) => accounts.find((a) => a.kind === kind)!.id;
      const insertEntry = (tx: Queryable, id: string) =>
        tx.query(
          `INSERT INTO journal_entries (id, merchant_id, environment, kind, reference_type, reference_id) VALUES ($1, $2, 'test', 'payment_credit', 'payment', $3)`,
          [id, m, paymentId()],
        );
      await assert.rejects(
        inTx(async (tx) => {
          const id = randomUUID();
          await insertEntry(tx, id);
          await tx.query(
            'INSERT INTO journal_lines (entry_id, account_id, amount_minor) VALUES ($1, $2, 100), ($1, $3, -99)',
            [id, idOf('provider_clearing'), idOf('merchant_available')],
          );
        }),
        /unbalanced/,
      );
      await assert.rejects(
        inTx((tx) => insertEntry(tx, randomUUID())),
        /unbalanced/,
        'an entry without lines',
      );
      assert.equal(await entryCount(m), 1);
      await assertHealthy(m);
    });

    it('journal entries and lines refuse UPDATE, DELETE and TRUNCATE', async () => {
      const m = await newMerchant();
      const { entryId } = await fund(m, 100);
      const refused = [
        ['UPDATE journal_entries SET kind = $2 WHERE id = $1', [entryId, 'payment_reversal']],
        ['DELETE FROM journal_entries WHERE id = $1', [entryId]],
        ['UPDATE journal_lines SET amount_minor = amount_minor * 2 WHERE entry_id = $1', [entryId]],
        ['DELETE FROM journal_lines WHERE entry_id = $1', [entryId]],
        ['TRUNCATE journal_lines', []],
        ['TRUNCATE journal_entries CASCADE', []],
      ] as const;
      for (const [sql, params] of refused) {
        // Always rolled back, so a storage without the trigger could not lose the shared journal.
        const notRefused = new Error(`not refused: ${sql}`);
        await assert.rejects(
          inTx(async (tx) => {
            await tx.query(sql, params);
            throw notRefused;
          }),
          (error) => error !== notRefused && /immutable/.test((error as Error).message),
          sql,
        );
      }
      assert.equal(await entryCount(m), 1);
      await assertHealthy(m);
    });

    it('a merchant balance going negative in SQL fails the CHECK, and the store maps it to InsufficientFundsError', async () => {
      const m = await newMerchant();
      await fund(m, 100);
      await assert.rejects(
        inTx((tx) =>
          tx.query(
            `UPDATE ledger_accounts SET balance_minor = 1 WHERE merchant_id = $1 AND environment = 'test' AND kind = 'merchant_available'`,
            [m],
          ),
        ),
        (error) => error instanceof DbError && error.sqlState === '23514',
      );
      // Past the service's own funds check, straight to the store: the CHECK still refuses.
      await assert.rejects(
        inTx(async (tx) => {
          const accounts = await store.lockAccounts(tx, m, 'test', ['merchant_available', 'merchant_held']);
          const id = (kind: AccountKind) => accounts.find((a) => a.kind === kind)!.id;
          const entryId = randomUUID();
          await store.writeEntries(
            tx,
            [
              {
                id: entryId,
                merchantId: m,
                environment: 'test',
                kind: 'payout_hold',
                referenceType: 'payout',
                referenceId: payoutId(),
                reversesEntryId: null,
              },
            ],
            [
              { entryId, accountId: id('merchant_available'), amountMinor: 101 },
              { entryId, accountId: id('merchant_held'), amountMinor: -101 },
            ],
          );
        }),
        InsufficientFundsError,
      );
      assert.equal((await balanceOf(m)).available_minor, 100);
      assert.equal(await entryCount(m), 1);
    });

    it('checkInvariants reports a cached balance that drifted from its lines', async () => {
      const m = await newMerchant();
      await fund(m, 100);
      await applyPendingCredits(t.db, m, 'test'); // the credit in the cached balance and its balance transaction
      const rolledBack = new Error('roll back');
      await assert.rejects(
        inTx(async (tx) => {
          await tx.query(
            `UPDATE ledger_accounts SET balance_minor = balance_minor - 1 WHERE merchant_id = $1 AND kind = 'merchant_available'`,
            [m],
          );
          const problems = await checkInvariants(tx, m);
          // The cache drifted from the lines and from the balance transactions (which end at 100).
          assert.equal(problems.length, 2, problems.join('; '));
          assert.match(problems[0]!, /merchant_available\) caches -101 but its lines sum to -100/);
          assert.match(problems[1]!, /holds 101 but its 1 balance transactions \(of 1 lines\) move 100 and end at 100/);
          throw rolledBack;
        }),
        (error) => error === rolledBack,
      );
      await assertHealthy(m);
      assert.ok(Array.isArray(await checkInvariants(t.db)), 'runs across every merchant');
    });
  });

  describe('property: random sequences of payments and payouts', () => {
    type Outcome = 'ok' | 'duplicate' | 'resolved' | 'insufficient' | 'not_found';
    type Op =
      | { type: 'pay'; baseMinor: number; payerFeeMinor: number; merchantFeeMinor: number }
      | { type: 'pay_again' | 'reverse' | 'post' | 'void' | 'return'; pick: number }
      | { type: 'hold'; amountMinor: number; feeMinor: number };

    const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
      {
        arbitrary: fc.record({
          type: fc.constant('pay' as const),
          baseMinor: fc.integer({ min: 1, max: 50_000 }),
          payerFeeMinor: fc.integer({ min: 0, max: 2_000 }),
          merchantFeeMinor: fc.integer({ min: 0, max: 2_000 }),
        }),
        weight: 4,
      },
      {
        arbitrary: fc.record({
          type: fc.constant('hold' as const),
          amountMinor: fc.integer({ min: 1, max: 60_000 }),
          feeMinor: fc.integer({ min: 0, max: 1_000 }),
        }),
        weight: 4,
      },
      {
        arbitrary: fc.record({
          type: fc.constantFrom(
            'pay_again' as const,
            'reverse' as const,
            'post' as const,
            'void' as const,
            'return' as const,
          ),
          pick: fc.nat(),
        }),
        weight: 8,
      },
    );

    interface ModelPayment {
      id: string;
      chargedMinor: number;
      feesMinor: number;
      netMinor: number;
      merchantFeeMinor: number;
      payerFeeMinor: number;
      reversed: boolean;
    }
    interface ModelPayout {
      id: string;
      amountMinor: number;
      feeMinor: number;
      state: 'refused' | 'held' | 'posted' | 'voided' | 'returned';
    }

    /** The independent model: merchant-facing balances and platform account sums in plain arithmetic. */
    class Model {
      available = 0;
      held = 0;
      providerClearing = 0; // money providers owe us (debit positive)
      feeRevenue = 0; // our fees (credit: negative sum)
      payoutClearing = 0; // money sent to recipients (credit: negative sum)
      entries = 0;
      payments: ModelPayment[] = [];
      payouts: ModelPayout[] = [];
    }
    // pick % (length + 1): the extra slot is an id the ledger has never seen.
    const pickFrom = <T>(list: T[], pick: number): T | null => list[pick % (list.length + 1)] ?? null;

    function classify(error: unknown): Outcome {
      if (error instanceof PayoutAlreadyResolvedError) return 'resolved';
      if (error instanceof LedgerDuplicateEntryError) return 'duplicate';
      if (error instanceof InsufficientFundsError) return 'insufficient';
      if (error instanceof LedgerEntryNotFoundError) return 'not_found';
      throw error;
    }

    /** Applies op to the model and returns the outcome the ledger must report, plus the ledger call. */
    function step(
      model: Model,
      merchantId: string,
      op: Op,
    ): { expected: Outcome; run: (tx: Queryable) => Promise<unknown> } {
      const env = 'test' as const;
      const money = (p: ModelPayout) => ({
        merchantId,
        environment: env,
        payoutId: p.id,
        amountMinor: p.amountMinor,
        feeMinor: p.feeMinor,
      });
      const ok = (): Outcome => {
        model.entries += 1;
        return 'ok';
      };
      switch (op.type) {
        case 'pay': {
          const chargedMinor = op.baseMinor + op.payerFeeMinor;
          const merchantFeeMinor = Math.min(op.merchantFeeMinor, op.baseMinor);
          const p: ModelPayment = {
            id: paymentId(),
            chargedMinor,
            merchantFeeMinor,
            payerFeeMinor: op.payerFeeMinor,
            feesMinor: merchantFeeMinor + op.payerFeeMinor,
            netMinor: op.baseMinor - merchantFeeMinor,
            reversed: false,
          };
          model.payments.push(p);
          model.available += p.netMinor;
          model.providerClearing += p.chargedMinor;
          model.feeRevenue -= p.feesMinor;
          return {
            expected: ok(),
            run: (tx) =>
              creditPayment(tx, {
                merchantId,
                environment: env,
                paymentId: p.id,
                chargedMinor,
                merchantFeeMinor,
                payerFeeMinor: op.payerFeeMinor,
              }),
          };
        }
        case 'pay_again': {
          const p = pickFrom(model.payments, op.pick);
          if (!p)
            return step(model, merchantId, {
              type: 'pay',
              baseMinor: 1 + (op.pick % 5_000),
              payerFeeMinor: 0,
              merchantFeeMinor: 0,
            });
          return {
            expected: 'duplicate',
            run: (tx) =>
              creditPayment(tx, {
                merchantId,
                environment: env,
                paymentId: p.id,
                chargedMinor: p.chargedMinor,
                merchantFeeMinor: p.merchantFeeMinor,
                payerFeeMinor: p.payerFeeMinor,
              }),
          };
        }
        case 'reverse': {
          const p = pickFrom(model.payments, op.pick);
          const run = (tx: Queryable) =>
            reversePayment(tx, { merchantId, environment: env, paymentId: p?.id ?? paymentId() });
          if (!p) return { expected: 'not_found', run };
          if (p.reversed) return { expected: 'duplicate', run };
          if (model.available < p.netMinor) return { expected: 'insufficient', run };
          p.reversed = true;
          model.available -= p.netMinor;
          model.providerClearing -= p.chargedMinor;
          model.feeRevenue += p.feesMinor;
          return { expected: ok(), run };
        }
        case 'hold': {
          const p: ModelPayout = {
            id: payoutId(),
            amountMinor: op.amountMinor,
            feeMinor: op.feeMinor,
            state: 'refused',
          };
          model.payouts.push(p);
          const run = (tx: Queryable) => holdNewPayout(tx, money(p));
          const total = p.amountMinor + p.feeMinor;
          if (model.available < total) return { expected: 'insufficient', run };
          p.state = 'held';
          model.available -= total;
          model.held += total;
          return { expected: ok(), run };
        }
        case 'post':
        case 'void': {
          const p = pickFrom(model.payouts, op.pick) ?? {
            id: payoutId(),
            amountMinor: 100,
            feeMinor: 1,
            state: 'refused' as const,
          };
          const run = (tx: Queryable) => (op.type === 'post' ? postPayout(tx, money(p)) : voidPayout(tx, money(p)));
          if (p.state === 'refused') return { expected: 'not_found', run };
          if (p.state !== 'held') return { expected: 'resolved', run };
          const total = p.amountMinor + p.feeMinor;
          model.held -= total;
          if (op.type === 'post') {
            p.state = 'posted';
            model.payoutClearing -= p.amountMinor;
            model.feeRevenue -= p.feeMinor;
          } else {
            p.state = 'voided';
            model.available += total;
          }
          return { expected: ok(), run };
        }
        case 'return': {
          const p = pickFrom(model.payouts, op.pick) ?? {
            id: payoutId(),
            amountMinor: 100,
            feeMinor: 1,
            state: 'refused' as const,
          };
          const run = (tx: Queryable) => returnPayout(tx, money(p));
          if (p.state === 'returned') return { expected: 'duplicate', run };
          if (p.state !== 'posted') return { expected: 'not_found', run };
          p.state = 'returned';
          model.available += p.amountMinor + p.feeMinor;
          model.payoutClearing += p.amountMinor;
          model.feeRevenue += p.feeMinor;
          return { expected: ok(), run };
        }
      }
    }

    it('keep every entry balanced, balances equal to the model, available never negative, eligible = available + held; illegal steps change nothing', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArbitrary, { minLength: 1, maxLength: 40 }), async (ops) => {
          const m = await newMerchant();
          const model = new Model();
          for (const [index, op] of ops.entries()) {
            const { expected, run } = step(model, m, op);
            const actual = await inTx(async (tx) => {
              let outcome: Outcome = 'ok';
              try {
                await run(tx);
              } catch (error) {
                outcome = classify(error);
              }
              await tx.query('SELECT 1'); // a refusal leaves the caller's transaction usable
              return outcome;
            });
            assert.equal(actual, expected, `step ${index} ${JSON.stringify(op)}`);
            const b = await balanceOf(m);
            assert.ok(b.available_minor >= 0 && b.held_minor >= 0, `step ${index}: nothing negative`);
            assert.equal(b.eligible_minor, b.available_minor + b.held_minor);
            assert.deepEqual(
              [b.available_minor, b.held_minor],
              [model.available, model.held],
              `step ${index} ${JSON.stringify(op)}`,
            );
          }
          const stored = await store.accountSums(t.db, m, 'test');
          assert.deepEqual(
            [stored.get('provider_clearing') ?? 0, stored.get('fee_revenue') ?? 0, stored.get('payout_clearing') ?? 0],
            [model.providerClearing, model.feeRevenue, model.payoutClearing],
            'platform accounts match the model',
          );
          assert.equal(await entryCount(m), model.entries, 'one entry per accepted step, none for a refused one');
          assert.deepEqual(await checkInvariants(t.db, m), []);
          assert.deepEqual(await balanceOf(m, 'live'), {
            environment: 'live',
            currency: 'GHS',
            available_minor: 0,
            held_minor: 0,
            eligible_minor: 0,
          });
        }),
        { numRuns: 50 },
      );
    });
  });

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
