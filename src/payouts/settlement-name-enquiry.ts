// The Go-Live application's settlement account, checked the way a payout recipient is (issue 33): the Live
// provider that would pay the account is asked whose it is (Paystack's resolve, MTN's account-holder lookup,
// through the PayoutRail's checkRecipient), and the name it holds is compared with namesMatch against the
// business's legal name and each director's. A deployment with no Live provider paying there (Test,
// development) uses the Test recipient verifier (recipients.ts testVerification): its magic numbers are
// refused, any other account is held in the name typed. Called outside any transaction; a provider that does
// not answer is recorded as unavailable (asked again at the next save), never an error for the merchant.
import type { SettlementNameEnquiry } from '../accounts/activation-application.ts';
import type { Queryable } from '../db/index.ts';
import type { LiveProviders } from '../rails/live.ts';
import { listActiveBanksWithCode } from './bank-store.ts';
import { namesMatch } from './name-match.ts';
import { testVerification } from './recipients.ts';

const matchAmong = (names: readonly string[], resolved: string) =>
  names.find((name) => namesMatch(name, resolved)) ?? null;

/** The name enquiry of a deployment's Live providers, for saveApplication. */
export function settlementNameEnquiry(providers: LiveProviders): SettlementNameEnquiry {
  return async (account, names) => {
    const target = { accountType: account.type, network: account.type === 'momo' ? (account.network ?? null) : null };
    const rail = providers.payoutsFor(target)[0];
    if (!rail) {
      const verdict = testVerification({
        account_number: account.type === 'bank' ? account.account_number : null,
        phone: account.type === 'momo' ? account.account_number : null,
      });
      if (verdict.status === 'rejected')
        return {
          result: {
            source: 'test_simulator',
            provider: null,
            outcome: 'rejected',
            resolved_name: null,
            reason: verdict.reason,
            matched_name: null,
          },
          matched: false,
        };
      const matched = matchAmong(names, account.account_name);
      return {
        result: {
          source: 'test_simulator',
          provider: null,
          outcome: 'resolved',
          resolved_name: account.account_name,
          reason: null,
          matched_name: matched,
        },
        matched: matched !== null,
      };
    }
    try {
      const check = await rail.checkRecipient({
        payoutId: 'activation_name_enquiry',
        reference: 'activation_name_enquiry',
        providerReference: null,
        amountMinor: 0,
        currency: 'GHS',
        recipient: {
          accountType: account.type,
          bankCode: account.type === 'bank' ? (account.bank_code ?? null) : null,
          accountNumber: account.type === 'bank' ? account.account_number : null,
          network: account.type === 'momo' ? (account.network ?? null) : null,
          phone: account.type === 'momo' ? account.account_number : null,
          accountName: account.account_name,
        },
      });
      if (!check.ok)
        return {
          result: {
            source: 'live_provider',
            provider: rail.provider,
            outcome: 'rejected',
            resolved_name: null,
            reason: check.reason,
            matched_name: null,
          },
          matched: false,
        };
      const resolved = check.resolvedName ?? null;
      const matched = resolved ? matchAmong(names, resolved) : null;
      return {
        result: {
          source: 'live_provider',
          provider: rail.provider,
          outcome: 'resolved',
          resolved_name: resolved,
          reason: resolved ? null : 'the provider does not tell the name it holds',
          matched_name: matched,
        },
        matched: resolved ? matched !== null : null,
      };
    } catch (error) {
      return {
        result: {
          source: 'live_provider',
          provider: rail.provider,
          outcome: 'unavailable',
          resolved_name: null,
          reason: error instanceof Error ? error.message.slice(0, 200) : 'no answer',
          matched_name: null,
        },
        matched: null,
      };
    }
  };
}

/** The banks a settlement account may be at: the active payout banks, with the codes the providers know them by. */
export const settlementBanks = (db: Queryable): Promise<{ id: string; name: string; code: string }[]> =>
  listActiveBanksWithCode(db);
