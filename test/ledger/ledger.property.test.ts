// The ledger under random sequences of payments and payouts (fast-check): every entry balanced, balances equal
// to a model, available never negative, eligible = available + held; illegal steps change nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Queryable } from '../../src/db/index.ts';
import {
  checkInvariants,
  creditPayment,
  InsufficientFundsError,
  LedgerDuplicateEntryError,
  LedgerEntryNotFoundError,
  PayoutAlreadyResolvedError,
  postPayout,
  returnPayout,
  reversePayment,
  voidPayout,
} from '../../src/ledger/service.ts';
import * as store from '../../src/ledger/store.ts';
import { holdNewPayout, paymentId, payoutId } from '../support/ledger.ts';
import { storageKind } from '../support/helpers.ts';
import { useLedgerApp } from '../support/ledger-app.ts';

describe(`ledger (${storageKind})`, () => {
  const { t, inTx, newMerchant, balanceOf, entryCount } = useLedgerApp();

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
            pending_minor: 0,
            reserved_minor: 0,
          });
        }),
        { numRuns: 50 },
      );
    });
  });
});
