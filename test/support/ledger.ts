// A payout's hold as the service writes it (the ledger has no hold of its own for a payout: a new payout's
// hold is planned by planNewPayout and written in the statement that writes the payout,
// src/payouts/new-payout-store.ts): planned against the merchant's accounts, locked here, and written in
// one statement of the ledger's. InsufficientFundsError, writing nothing, when amount plus fee is not available.
// And the ledger tests' shared steps (test/ledger/): fresh payment and payout ids, and ledgerSteps on one app's storage.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../src/db/index.ts';
import type { Environment } from '../../src/lib/environment.ts';
import {
  balance,
  checkInvariants,
  completeAccounts,
  creditPayment,
  newPayoutAccountKinds,
  planNewPayout,
  type PayoutMoney,
} from '../../src/ledger/service.ts';
import { duplicateError } from '../../src/ledger/model.ts';
import * as store from '../../src/ledger/store.ts';
import type { TestContext } from './helpers.ts';

export async function holdNewPayout(tx: Queryable, p: PayoutMoney): Promise<{ entryId: string }> {
  const kinds = newPayoutAccountKinds(false);
  // No accounts read: completeAccounts locks them (creating them on first use), as a post does.
  const plan = planNewPayout(p, await completeAccounts(tx, p.merchantId, p.environment, kinds, []), false);
  // Nothing written: the journal already holds an entry of the payout that blocks a hold (the unique constraints).
  if (!(await store.writeEntries(tx, plan.entries, plan.lines))) throw duplicateError(plan.entries[0]!, 'payout_hold');
  return { entryId: plan.entries[0]!.id };
}

export const paymentId = () => `att_${randomUUID()}`;
export const payoutId = () => `po_${randomUUID()}`;

/**
 * The ledger tests' steps on one app's storage; `app` is read when a step runs, after the test file's before hook
 * started it.
 */
export function ledgerSteps(app: () => TestContext) {
  const inTx = <T>(fn: (tx: Queryable) => Promise<T>) => app().db.transaction(fn);
  const newMerchant = async () => (await app().merchant()).merchant_id;
  const balanceOf = (merchantId: string, environment: Environment = 'test') =>
    balance(app().db, merchantId, environment);
  const entryCount = async (merchantId: string) =>
    (
      await app().db.query<{ n: number }>('SELECT count(*)::int AS n FROM journal_entries WHERE merchant_id = $1', [
        merchantId,
      ])
    )[0]!.n;
  const sums = async (merchantId: string, environment: Environment = 'test') =>
    Object.fromEntries(await store.accountSums(app().db, merchantId, environment));
  const assertHealthy = async (merchantId: string) => assert.deepEqual(await checkInvariants(app().db, merchantId), []);
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
  return { inTx, newMerchant, balanceOf, entryCount, sums, assertHealthy, fund, payout };
}
