// Live bank transfers matched from imported bank statements (docs/bank-statements.md).
export { collectionAccountLabel, collectionAccounts, type CollectionAccount } from './accounts.ts';
export {
  AWAITING_TRANSFER,
  BANK_STATEMENT_PROVIDER,
  createBankTransfer,
  transferInstructions,
  type BankTransferSettings,
} from './adapter.ts';
export {
  findPaymentReference,
  findPaymentReferences,
  isPaymentReference,
  newPaymentReference,
  PAYMENT_REFERENCE_ALPHABET,
  PAYMENT_REFERENCE_LENGTH,
  PAYMENT_REFERENCE_PATTERN,
} from './reference.ts';
