// A payout's hold as the service writes it (the ledger has no hold of its own for a payout: a new payout's
// hold is planned by planNewPayout and written in the statement that writes the payout,
// src/payouts/new-payout-store.ts): planned against the merchant's accounts, locked here, and written in
// one statement of the ledger's. InsufficientFundsError, writing nothing, when amount plus fee is not available.
import type { Queryable } from '../../src/db/index.ts';
import { completeAccounts, newPayoutAccountKinds, planNewPayout, type PayoutMoney } from '../../src/ledger/service.ts';
import { duplicateError } from '../../src/ledger/model.ts';
import * as store from '../../src/ledger/store.ts';

export async function holdNewPayout(tx: Queryable, p: PayoutMoney): Promise<{ entryId: string }> {
  const kinds = newPayoutAccountKinds(false);
  // No accounts read: completeAccounts locks them (creating them on first use), as a post does.
  const plan = planNewPayout(p, await completeAccounts(tx, p.merchantId, p.environment, kinds, []), false);
  // Nothing written: the journal already holds an entry of the payout that blocks a hold (the unique constraints).
  if (!(await store.writeEntries(tx, plan.entries, plan.lines))) throw duplicateError(plan.entries[0]!, 'payout_hold');
  return { entryId: plan.entries[0]!.id };
}
