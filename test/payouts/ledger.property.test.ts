// Property: any sequence of payments, reversals, payout holds, posts, voids and returns keeps the ledger
// balanced, never takes a merchant below zero, keeps eligible = available + held, and matches an
// independent model of the balance written here. Illegal steps throw and change nothing.
// (SPEC 2.11, 3.3; DESIGN §3 Money; STYLE: holds are two-phase transfers resolved exactly once.)
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  balance,
  checkInvariants,
  creditPayment,
  InsufficientFundsError,
  postPayout,
  returnPayout,
  reversePayment,
  voidPayout,
} from '../../src/ledger/service.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import { useTestApp } from '../support/hooks.ts';
import { holdNewPayout } from '../support/ledger.ts';

type Op =
  | { type: 'pay'; chargedMinor: number; payerFeeMinor: number; merchantFeeMinor: number }
  | { type: 'reverse'; pick: number }
  | { type: 'hold'; amountMinor: number; feeMinor: number }
  | { type: 'post' | 'void' | 'return'; pick: number };

const payOp = fc
  .record({
    chargedMinor: fc.integer({ min: 1, max: 200_000 }),
    payerShare: fc.integer({ min: 0, max: 100 }),
    merchantShare: fc.integer({ min: 0, max: 100 }),
  })
  .map(({ chargedMinor, payerShare, merchantShare }): Op => {
    // Fees are mostly small, sometimes all of the charge (the merchant then gets nothing).
    const payerFeeMinor = Math.floor((chargedMinor * (payerShare > 90 ? 100 : payerShare % 10)) / 100);
    const merchantFeeMinor = Math.floor(
      ((chargedMinor - payerFeeMinor) * (merchantShare > 95 ? 100 : merchantShare % 5)) / 100,
    );
    return { type: 'pay', chargedMinor, payerFeeMinor, merchantFeeMinor };
  });
const pick = fc.nat({ max: 1_000 });
const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: payOp },
  { weight: 1, arbitrary: pick.map((p): Op => ({ type: 'reverse', pick: p })) },
  {
    weight: 4,
    arbitrary: fc
      .record({ amountMinor: fc.integer({ min: 1, max: 150_000 }), feeMinor: fc.integer({ min: 0, max: 1_000 }) })
      .map((h): Op => ({ type: 'hold', ...h })),
  },
  { weight: 2, arbitrary: pick.map((p): Op => ({ type: 'post', pick: p })) },
  { weight: 2, arbitrary: pick.map((p): Op => ({ type: 'void', pick: p })) },
  { weight: 1, arbitrary: pick.map((p): Op => ({ type: 'return', pick: p })) },
);

interface PaymentModel {
  id: string;
  chargedMinor: number;
  payerFeeMinor: number;
  merchantFeeMinor: number;
  netMinor: number;
  reversed: boolean;
}
interface PayoutModel {
  id: string;
  amountMinor: number;
  feeMinor: number;
  state: 'held' | 'posted' | 'voided' | 'returned';
}

/** The balance as this test understands the rules, independent of the ledger code. */
class Model {
  availableMinor = 0;
  heldMinor = 0;
  readonly payments: PaymentModel[] = [];
  readonly payouts: PayoutModel[] = [];
}

describe(`payout ledger property (${storageKind})`, () => {
  const t = useTestApp();

  const environment = 'live' as const;

  async function entryCount(merchantId: string): Promise<number> {
    return (
      await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM journal_entries WHERE merchant_id = $1', [
        merchantId,
      ])
    )[0]!.n;
  }

  /** Runs one op in its own transaction; returns what the model expects: legal (applied) or illegal (must throw). */
  async function apply(merchantId: string, model: Model, op: Op): Promise<void> {
    const run = (fn: Parameters<TestContext['db']['transaction']>[0]) => t.db.transaction(fn);
    const unknownId = `unknown-${randomUUID()}`;
    const beforeBalance = await balance(t.db, merchantId, environment);
    const beforeEntries = await entryCount(merchantId);

    async function refused(promise: Promise<unknown>, expected?: new (...args: never[]) => Error) {
      await assert.rejects(
        promise,
        (error: unknown) => {
          assert.ok(error instanceof Error, String(error));
          if (expected)
            assert.ok(
              error instanceof expected,
              `expected ${expected.name}, got ${(error as Error).name}: ${(error as Error).message}`,
            );
          return true;
        },
        `${JSON.stringify(op)} must be refused`,
      );
      assert.deepEqual(
        await balance(t.db, merchantId, environment),
        beforeBalance,
        `${JSON.stringify(op)} changed the balance`,
      );
      assert.equal(await entryCount(merchantId), beforeEntries, `${JSON.stringify(op)} wrote an entry`);
    }

    switch (op.type) {
      case 'pay': {
        const payment: PaymentModel = {
          id: `pay-${randomUUID()}`,
          ...op,
          netMinor: op.chargedMinor - op.payerFeeMinor - op.merchantFeeMinor,
          reversed: false,
        };
        await run((tx) =>
          creditPayment(tx, {
            merchantId,
            environment,
            paymentId: payment.id,
            chargedMinor: op.chargedMinor,
            payerFeeMinor: op.payerFeeMinor,
            merchantFeeMinor: op.merchantFeeMinor,
          }),
        );
        model.payments.push(payment);
        model.availableMinor += payment.netMinor;
        return;
      }
      case 'reverse': {
        const payment = model.payments.length ? model.payments[op.pick % model.payments.length]! : null;
        const reverse = () =>
          run((tx) => reversePayment(tx, { merchantId, environment, paymentId: payment?.id ?? unknownId }));
        if (!payment || payment.reversed) return refused(reverse());
        if (payment.netMinor > model.availableMinor) return refused(reverse(), InsufficientFundsError);
        await reverse();
        payment.reversed = true;
        model.availableMinor -= payment.netMinor;
        return;
      }
      case 'hold': {
        const payout: PayoutModel = {
          id: `po-${randomUUID()}`,
          amountMinor: op.amountMinor,
          feeMinor: op.feeMinor,
          state: 'held',
        };
        const hold = () =>
          run((tx) =>
            holdNewPayout(tx, {
              merchantId,
              environment,
              payoutId: payout.id,
              amountMinor: op.amountMinor,
              feeMinor: op.feeMinor,
            }),
          );
        if (op.amountMinor + op.feeMinor > model.availableMinor) return refused(hold(), InsufficientFundsError);
        await hold();
        model.payouts.push(payout);
        model.availableMinor -= op.amountMinor + op.feeMinor;
        model.heldMinor += op.amountMinor + op.feeMinor;
        return;
      }
      case 'post':
      case 'void':
      case 'return': {
        const payout = model.payouts.length ? model.payouts[op.pick % model.payouts.length]! : null;
        const money = {
          merchantId,
          environment,
          payoutId: payout?.id ?? unknownId,
          amountMinor: payout?.amountMinor ?? 1,
          feeMinor: payout?.feeMinor ?? 0,
        };
        const call = () =>
          run((tx) =>
            op.type === 'post'
              ? postPayout(tx, money)
              : op.type === 'void'
                ? voidPayout(tx, money)
                : returnPayout(tx, money),
          );
        const legal = payout !== null && (op.type === 'return' ? payout.state === 'posted' : payout.state === 'held');
        if (!legal) return refused(call());
        await call();
        const total = payout.amountMinor + payout.feeMinor;
        if (op.type === 'post') {
          payout.state = 'posted';
          model.heldMinor -= total;
        } else if (op.type === 'void') {
          payout.state = 'voided';
          model.heldMinor -= total;
          model.availableMinor += total;
        } else {
          payout.state = 'returned';
          model.availableMinor += total;
        }
        return;
      }
    }
  }

  it('random payments, reversals, holds, posts, voids and returns keep the ledger balanced, non-negative and equal to an independent model', async () => {
    let runs = 0;
    let applied = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArbitrary, { minLength: 1, maxLength: 25 }), async (ops) => {
        runs += 1;
        const m = await t.merchant();
        const model = new Model();
        for (const op of ops) {
          await apply(m.merchant_id, model, op);
          applied += 1;
          const b = await balance(t.db, m.merchant_id, environment);
          assert.ok(b.available_minor >= 0, `available ${b.available_minor} after ${JSON.stringify(op)}`);
          assert.ok(b.held_minor >= 0, `held ${b.held_minor} after ${JSON.stringify(op)}`);
          assert.equal(b.eligible_minor, b.available_minor + b.held_minor);
          assert.deepEqual(
            { available: b.available_minor, held: b.held_minor },
            { available: model.availableMinor, held: model.heldMinor },
            `model and ledger disagree after ${JSON.stringify(op)}`,
          );
        }
        assert.equal(
          model.heldMinor,
          model.payouts.filter((p) => p.state === 'held').reduce((sum, p) => sum + p.amountMinor + p.feeMinor, 0),
          'held = the open holds',
        );
        assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
        // The other environment of the same merchant never moved.
        assert.deepEqual(await balance(t.db, m.merchant_id, 'test'), {
          environment: 'test',
          currency: 'GHS',
          available_minor: 0,
          held_minor: 0,
          eligible_minor: 0,
          pending_minor: 0,
          reserved_minor: 0,
        });
      }),
      { numRuns: 60 },
    );
    assert.equal(runs >= 60, true);
    assert.ok(applied > 0);
    assert.deepEqual(await checkInvariants(t.db), []);
  });
});
