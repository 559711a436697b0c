// The collection accounts Live bank transfers are paid into: the BANK_TRANSFER_* settings (src/config/index.ts)
// name one account today. Statements are imported for these accounts only, and the reconciliation counts
// their statement lines only (docs/bank-statements.md).
import type { BankTransferSettings } from './adapter.ts';

export interface CollectionAccount {
  /** The bank's code (banks.code, upper case): the statement's lines are kept under it. */
  bankCode: string;
  bankName: string;
  branch: string;
  accountNumber: string;
  accountName: string;
}

/** The configured collection accounts (none when bank transfers are not set up). */
export const collectionAccounts = (settings: BankTransferSettings | null | undefined): CollectionAccount[] =>
  settings
    ? [
        {
          bankCode: settings.bankCode.trim().toUpperCase(),
          bankName: settings.bankName,
          branch: settings.branch,
          accountNumber: settings.accountNumber,
          accountName: settings.accountName,
        },
      ]
    : [];

/** "GCB Bank (GCB) 1011130012345, Sika Collections Ltd": an account as an operator recognises it. */
export const collectionAccountLabel = (account: CollectionAccount) =>
  `${account.bankName} (${account.bankCode}) ${account.accountNumber}, ${account.accountName}`;
