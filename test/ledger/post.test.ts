// The ledger's post (DESIGN §3 "Money and ids"): an entry balances and has safe integer amounts or is refused as a
// bug; lines on one account merge, zero lines drop; no merchant account goes below zero.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InsufficientFundsError, post, type AccountKind } from '../../src/ledger/service.ts';
import * as store from '../../src/ledger/store.ts';
import { paymentId } from '../support/ledger.ts';
import { storageKind } from '../support/helpers.ts';
import { useLedgerApp } from '../support/ledger-app.ts';

describe(`ledger (${storageKind})`, () => {
  const { t, inTx, newMerchant, entryCount, sums, assertHealthy } = useLedgerApp();

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
});
