// The operators' daily reconciliation (docs/reconciliation.md): for a provider and an Africa/Accra day,
// what Sika recorded against what the provider reported, and the differences. Reads only, each in its own
// statement and never in a transaction: the provider is asked after Sika's records are read.
import type { Db } from '../db/index.ts';
import type { CollectionAccount } from '../rails/bank-transfer/accounts.ts';
import type { LiveProviders } from '../rails/live.ts';
import { reconcileBankTransfers } from './bank-transfers.ts';
import { totalsOf, type AccraDay, type ReconciliationProvider, type Reconciliation } from './model.ts';
import { reconcilePaystack } from './paystack.ts';
import { paidRecordsOfDay } from './records.ts';

/**
 * MTN MoMo's Open API has no call that lists transactions: Collection and Disbursement offer the status of one
 * reference (GET .../requesttopay/{referenceId}, GET .../transfer/{referenceId}), balances and account holder
 * checks only (MTN-Group/MoMoAPIs_Javascript_sdk docs/collections/*, docs/disbursements/*; docs/providers/mtn-momo.md).
 */
export const MTN_NO_REPORT =
  "MTN MoMo's Open API offers no transactions list, so there is no provider report to compare with. Sika's records are listed with the provider's word at Sika's last status check; none is claimed to match. Compare them with the MTN partner portal's statement.";

async function reconcileMtnMomo(db: Db, day: AccraDay): Promise<Reconciliation> {
  const { records, truncated } = await paidRecordsOfDay(db, 'mtn_momo', day, { payouts: true });
  return {
    provider: 'mtn_momo',
    day,
    sika: records,
    sikaTotals: totalsOf(records),
    truncated,
    side: { state: 'no_report', reason: MTN_NO_REPORT },
    matched: [],
    differences: [],
  };
}

export async function reconcileDay(
  db: Db,
  providers: LiveProviders,
  provider: ReconciliationProvider,
  day: AccraDay,
  collectionAccounts: readonly CollectionAccount[] = [],
): Promise<Reconciliation> {
  switch (provider) {
    case 'paystack':
      return reconcilePaystack(db, providers.plumbing.reports?.paystack ?? null, day);
    case 'mtn_momo':
      return reconcileMtnMomo(db, day);
    case 'bank_transfer':
      return reconcileBankTransfers(db, day, collectionAccounts);
  }
}

export {
  isReconciliationProvider,
  noRecordsEitherSide,
  parseDay,
  PROVIDER_LABELS,
  RECONCILIATION_PROVIDERS,
  yesterdayInAccra,
} from './model.ts';
export type { Reconciliation } from './model.ts';
