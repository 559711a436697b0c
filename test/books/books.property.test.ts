// Property (issue 17, "an export of a day sums to the balance change of that day exactly"): over random
// histories of payments, reversals, payouts (held then posted, voided or returned) and refunds (held then
// posted or voided), cut into periods at instants taken between operations on the database's clock (the
// clock created_at is drawn from), the CSV export of each period sums to the change of the available balance
// over it, each row's amount - fee is its net, and the summary's periods open at the balance of their cut,
// chain (an opening is the previous closing) and itemise their net exactly.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { text } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { balanceTransactionsBetween, summariseBetween } from '../../src/books/service.ts';
import { BALANCE_TRANSACTION_COLUMNS } from '../../src/books/exports.ts';
import { SUMMARY_AMOUNT_COLUMNS } from '../../src/books/model.ts';
import { csvStream } from '../../src/http/csv.ts';
import {
  balance,
  checkInvariants,
  creditPayment,
  holdRefund,
  InsufficientFundsError,
  LedgerDuplicateEntryError,
  LedgerEntryNotFoundError,
  postPayout,
  postRefund,
  returnPayout,
  reversePayment,
  voidPayout,
  voidRefund,
} from '../../src/ledger/service.ts';
import { csvRows } from '../support/books.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { holdNewPayout } from '../support/ledger.ts';

type Op =
  | { type: 'pay'; chargedMinor: number; feeMinor: number }
  | { type: 'reverse' | 'post' | 'void' | 'return' | 'refund_post' | 'refund_void'; pick: number }
  | { type: 'hold'; amountMinor: number; feeMinor: number }
  | { type: 'refund'; amountMinor: number }
  | { type: 'cut' };

const pick = fc.nat({ max: 1_000 });
const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .record({ chargedMinor: fc.integer({ min: 1, max: 100_000 }), share: fc.integer({ min: 0, max: 5 }) })
      .map(
        ({ chargedMinor, share }): Op => ({
          type: 'pay',
          chargedMinor,
          feeMinor: Math.floor((chargedMinor * share) / 100),
        }),
      ),
  },
  { weight: 1, arbitrary: pick.map((p): Op => ({ type: 'reverse', pick: p })) },
  {
    weight: 3,
    arbitrary: fc
      .record({ amountMinor: fc.integer({ min: 1, max: 60_000 }), feeMinor: fc.integer({ min: 0, max: 500 }) })
      .map((h): Op => ({ type: 'hold', ...h })),
  },
  { weight: 2, arbitrary: pick.map((p): Op => ({ type: 'post', pick: p })) },
  { weight: 1, arbitrary: pick.map((p): Op => ({ type: 'void', pick: p })) },
  { weight: 1, arbitrary: pick.map((p): Op => ({ type: 'return', pick: p })) },
  {
    weight: 2,
    arbitrary: fc.integer({ min: 1, max: 40_000 }).map((amountMinor): Op => ({ type: 'refund', amountMinor })),
  },
  { weight: 1, arbitrary: pick.map((p): Op => ({ type: 'refund_post', pick: p })) },
  { weight: 1, arbitrary: pick.map((p): Op => ({ type: 'refund_void', pick: p })) },
  { weight: 3, arbitrary: fc.constant<Op>({ type: 'cut' }) },
);

/** Refusals the ledger makes without writing (an illegal step of a random history). */
const refused = (error: unknown) =>
  error instanceof InsufficientFundsError ||
  error instanceof LedgerDuplicateEntryError ||
  error instanceof LedgerEntryNotFoundError;

describe(`books export property (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const environment = 'live' as const;
  // A cut on the database's clock, rounded up to the millisecond (a JS Date holds no microseconds: rounded
  // down, a row written in the same millisecond just before the cut would fall after it), then a pause
  // until the clock has passed it, so a row written after the cut is never before it.
  const clock = async () => {
    const at = (
      await t.db.query<{ now: Date }>(
        "SELECT date_trunc('milliseconds', clock_timestamp()) + interval '1 millisecond' AS now",
      )
    )[0]!.now;
    await new Promise((resolve) => setTimeout(resolve, 2));
    return at;
  };

  it('the export of every period between cuts sums to its balance change; the summary chains and itemises it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArbitrary, { minLength: 1, maxLength: 30 }), async (ops) => {
        const m = await t.merchant();
        const owner = { merchantId: m.merchant_id, environment };
        const payments: string[] = [];
        const payouts: { id: string; amountMinor: number; feeMinor: number }[] = [];
        const refunds: { id: string; amountMinor: number }[] = [];
        const cuts: { at: Date; availableMinor: number }[] = [];
        // The balance first: reading it applies the credits still waiting, whose balance transactions are then before the cut.
        const cut = async () => {
          const availableMinor = (await balance(t.db, m.merchant_id, environment)).available_minor;
          cuts.push({ at: await clock(), availableMinor });
        };
        const nth = <T>(list: T[], p: number) => list[p % Math.max(1, list.length)];

        await cut();
        for (const op of ops) {
          if (op.type === 'cut') {
            await cut();
            continue;
          }
          try {
            await t.db.transaction(async (tx) => {
              const base = { merchantId: m.merchant_id, environment };
              if (op.type === 'pay') {
                const paymentId = `att_${randomUUID()}`;
                await creditPayment(tx, {
                  ...base,
                  paymentId,
                  chargedMinor: op.chargedMinor,
                  payerFeeMinor: 0,
                  merchantFeeMinor: op.feeMinor,
                });
                payments.push(paymentId);
              } else if (op.type === 'reverse') {
                const paymentId = nth(payments, op.pick);
                if (paymentId) await reversePayment(tx, { ...base, paymentId });
              } else if (op.type === 'hold') {
                const payout = { id: `po_${randomUUID()}`, amountMinor: op.amountMinor, feeMinor: op.feeMinor };
                await holdNewPayout(tx, {
                  ...base,
                  payoutId: payout.id,
                  amountMinor: payout.amountMinor,
                  feeMinor: payout.feeMinor,
                });
                payouts.push(payout);
              } else if (op.type === 'post' || op.type === 'void' || op.type === 'return') {
                const payout = nth(payouts, op.pick);
                if (!payout) return;
                const money = {
                  ...base,
                  payoutId: payout.id,
                  amountMinor: payout.amountMinor,
                  feeMinor: payout.feeMinor,
                };
                await (op.type === 'post' ? postPayout : op.type === 'void' ? voidPayout : returnPayout)(tx, money);
              } else if (op.type === 'refund') {
                const refund = { id: `re_${randomUUID()}`, amountMinor: op.amountMinor };
                await holdRefund(tx, { ...base, refundId: refund.id, amountMinor: refund.amountMinor });
                refunds.push(refund);
              } else {
                const refund = nth(refunds, op.pick);
                if (refund)
                  await (op.type === 'refund_post' ? postRefund : voidRefund)(tx, {
                    ...base,
                    refundId: refund.id,
                    amountMinor: refund.amountMinor,
                  });
              }
            });
          } catch (error) {
            if (!refused(error)) throw error;
          }
        }
        await cut();

        for (let i = 0; i + 1 < cuts.length; i++) {
          const [from, to] = [cuts[i]!, cuts[i + 1]!];
          const file = await text(
            csvStream(BALANCE_TRANSACTION_COLUMNS, await balanceTransactionsBetween(t.db, owner, from.at, to.at)),
          );
          const rows = csvRows(file);
          const sum = rows.reduce((total, row) => total + Number(row.net_minor), 0);
          assert.equal(
            sum,
            to.availableMinor - from.availableMinor,
            `period ${i}: the export sums to the balance change`,
          );
          for (const row of rows)
            assert.equal(
              Number(row.amount_minor) - Number(row.fee_minor),
              Number(row.net_minor),
              `${row.id}: amount - fee = net`,
            );
          if (rows.length > 0)
            assert.equal(
              Number(rows.at(-1)!.balance_after_minor),
              to.availableMinor,
              `period ${i}: the last row's balance is the balance at the cut`,
            );
        }

        const periods = await summariseBetween(
          t.db,
          owner,
          cuts.map((c) => c.at),
        );
        assert.equal(periods.length, cuts.length - 1);
        periods.forEach((period, i) => {
          assert.equal(period.opening_balance_minor, cuts[i]!.availableMinor, `period ${i} opens at its cut's balance`);
          assert.equal(
            period.closing_balance_minor,
            cuts[i + 1]!.availableMinor,
            `period ${i} closes at the next cut's balance`,
          );
          if (i > 0) assert.equal(period.opening_balance_minor, periods[i - 1]!.closing_balance_minor);
          const items =
            Object.values(SUMMARY_AMOUNT_COLUMNS).reduce(
              (sum, column) => sum + (period[column as keyof typeof period] as number),
              0,
            ) - period.fees_minor;
          assert.equal(
            items,
            period.closing_balance_minor - period.opening_balance_minor,
            `period ${i} itemises its net`,
          );
        });
        assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
      }),
      { numRuns: storageKind === 'postgres' ? 25 : 15 },
    );
  });
});
