// Live bank transfers without a provider API: the payer transfers to the collection account Sika's
// operators configure (BANK_TRANSFER_* settings), quoting the attempt's payment reference, and the credit is
// matched when an operator imports the account's statement (src/statements/). So this adapter calls nobody:
// initiate() hands out the account and the reference, status() stays pending (statements decide), and there
// is no code to submit or prompt to resend.
import type { ProviderSettings } from '../../config/index.ts';
import { formatGhs } from '../../lib/ghana.ts';
import { RailUnavailableError } from '../types.ts';
import type { AttemptForRail, CollectionRail, Initiated, StatusCheck } from '../types.ts';
import { isPaymentReference, newPaymentReference } from './reference.ts';

/** The provider name stored on attempts (`payment_attempts.provider`); the statement importer looks for it. */
export const BANK_STATEMENT_PROVIDER = 'bank_statement';
/** What the attempt's raw_status says while the transfer has not shown up on a statement. */
export const AWAITING_TRANSFER = 'AWAITING_TRANSFER';

export type BankTransferSettings = NonNullable<ProviderSettings['bankTransfer']>;

/** The payer's instructions: where to pay, what to quote, and how it is confirmed. */
export function transferInstructions(settings: BankTransferSettings, reference: string, amountMinor: number) {
  return {
    bank_name: settings.bankName,
    bank_code: settings.bankCode,
    branch: settings.branch,
    account_number: settings.accountNumber,
    account_name: settings.accountName,
    reference,
    note:
      `Transfer exactly ${formatGhs(amountMinor)} to this account and type ${reference} in the transfer's narration or reference, ` +
      'so it is matched to this payment. It is confirmed once the credit appears on our bank statement (usually within one working day).',
  };
}

export function createBankTransfer(settings: BankTransferSettings): CollectionRail {
  const noCode = (what: string) =>
    new RailUnavailableError(
      `Bank transfers have no ${what}: the payer transfers from their bank and the credit is matched from our statement.`,
    );
  return {
    provider: BANK_STATEMENT_PROVIDER,
    serves: { rails: ['bank_transfer'] },
    reference: () => newPaymentReference(),
    async initiate(attempt: AttemptForRail): Promise<Initiated> {
      // The reference was drawn by reference() and stored with the attempt before this call (types.ts);
      // without it the payer could not be matched, so this is a bug in the caller, not a refusal.
      if (!attempt.providerReference || !isPaymentReference(attempt.providerReference)) {
        throw new Error(`bank transfer attempt ${attempt.reference} has no stored payment reference`);
      }
      return {
        rawStatus: AWAITING_TRANSFER,
        verificationRequired: false,
        instructions: transferInstructions(settings, attempt.providerReference, attempt.amountMinor),
      };
    },
    async status(): Promise<StatusCheck> {
      return { rawStatus: AWAITING_TRANSFER, outcome: 'pending' };
    },
    async authorize() {
      throw noCode('verification code');
    },
    async resend() {
      throw noCode('prompt to resend');
    },
  };
}
