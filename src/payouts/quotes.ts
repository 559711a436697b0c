// What a merchant can pay out, and at what cost: capabilities, the balance, fee quotes.
import type { ApiPrincipal } from '../lib/environment.ts';
import { findPayoutApprovalRequired } from '../accounts/service.ts';
import type { Queryable } from '../db/index.ts';
import { MOMO_NETWORKS, NETWORK_LABELS } from '../lib/ghana.ts';
import { newId } from '../lib/ids.ts';
import type { LiveProviders } from '../rails/live.ts';
import { balance } from '../ledger/service.ts';
import { listActiveBanksWithCode } from './bank-store.ts';
import {
  BANK_PAYOUT_FEE_MINOR,
  MOMO_PAYOUT_FEE_BPS,
  MOMO_PAYOUT_FEE_MAX_MINOR,
  MOMO_PAYOUT_FEE_MIN_MINOR,
  PAYOUT_CURRENCY,
  QUOTE_LIFETIME_S,
  payoutFeeMinor,
} from './model.ts';
import { getRecipient } from './recipients.ts';
import { settingsFor } from './settings-store.ts';

/**
 * What this key can pay out to. In Live only what a configured provider pays: bank accounts when one pays
 * banks, the Mobile Money networks some provider pays (Test pays everything, simulated).
 */
export async function capabilities(db: Queryable, principal: ApiPrincipal, providers: LiveProviders) {
  const settings = await settingsFor(db, principal.merchantId, principal.environment);
  const live = principal.environment === 'live';
  const paysBanks = !live || providers.paysTo({ accountType: 'bank', network: null });
  const networks = MOMO_NETWORKS.filter((network) => !live || providers.paysTo({ accountType: 'momo', network }));
  const banks = paysBanks ? await listActiveBanksWithCode(db) : [];
  const merchant = await findPayoutApprovalRequired(db, principal.merchantId);
  return {
    account_types: [
      ...(paysBanks ? [{ value: 'bank', label: 'Bank account' }] : []),
      ...(networks.length > 0 ? [{ value: 'momo', label: 'Mobile Money wallet' }] : []),
    ],
    banks,
    mobile_money_networks: networks.map((value) => ({ value, label: NETWORK_LABELS[value] })),
    settings: {
      environment: principal.environment,
      currency: PAYOUT_CURRENCY,
      payout_access: settings.payout_access,
      paused: settings.paused,
      approval_required: principal.environment === 'live' && (merchant?.payout_approval_required ?? false),
      payout_limit_minor: settings.payout_limit_minor,
      daily_limit_minor: settings.daily_limit_minor,
      fees: {
        bank: { flat_minor: BANK_PAYOUT_FEE_MINOR },
        momo: {
          percent_bps: MOMO_PAYOUT_FEE_BPS,
          min_minor: MOMO_PAYOUT_FEE_MIN_MINOR,
          max_minor: MOMO_PAYOUT_FEE_MAX_MINOR,
        },
      },
    },
  };
}

export const getBalance = (db: Queryable, principal: ApiPrincipal) =>
  balance(db, principal.merchantId, principal.environment);

export async function quote(
  db: Queryable,
  principal: ApiPrincipal,
  input: { recipient_id: string; amount_minor: number },
) {
  const recipient = await getRecipient(db, principal, input.recipient_id);
  const feeMinor = payoutFeeMinor(recipient.account_type, input.amount_minor);
  return {
    quote_id: newId('quo'),
    recipient_id: recipient.id,
    amount_minor: input.amount_minor,
    fee_minor: feeMinor,
    total_debit_minor: input.amount_minor + feeMinor,
    currency: PAYOUT_CURRENCY,
    expires_at: new Date(Date.now() + QUOTE_LIFETIME_S * 1000).toISOString(),
  };
}
