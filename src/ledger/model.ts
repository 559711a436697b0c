// Ledger types and the invariant every entry must keep: its lines sum to zero.
// Sign convention: debit positive, credit negative. The merchant's accounts are liabilities, so the
// merchant's balance is the negated account sum, and it is never negative.

export const ACCOUNT_KINDS = ['merchant_available', 'merchant_held', 'provider_clearing', 'fee_revenue', 'payout_clearing'] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];
export const MERCHANT_ACCOUNTS: readonly AccountKind[] = ['merchant_available', 'merchant_held'];

export type EntryKind = 'payment_credit' | 'payment_reversal' | 'payout_hold' | 'payout_post' | 'payout_void' | 'payout_return';

export interface Line {
  account: AccountKind;
  amountMinor: number;
}

export interface EntryInput {
  merchantId: string;
  environment: 'test' | 'live';
  kind: EntryKind;
  referenceType: 'payment' | 'payout';
  referenceId: string;
  reversesEntryId?: string | null;
  lines: Line[];
}

export class LedgerDuplicateEntryError extends Error {
  constructor(readonly referenceType: string, readonly referenceId: string, readonly kind: string) {
    super(`ledger entry ${kind} for ${referenceType} ${referenceId} already exists`);
  }
}

export class InsufficientFundsError extends Error {
  constructor() {
    super('the merchant balance would go negative');
  }
}

/** Merges lines per account and drops zeros; throws (a bug, loudly) unless the entry balances. */
export function normaliseLines(lines: readonly Line[]): Line[] {
  const sums = new Map<AccountKind, number>();
  for (const line of lines) {
    if (!Number.isSafeInteger(line.amountMinor)) throw new Error(`ledger amount ${line.amountMinor} is not a safe integer`);
    sums.set(line.account, (sums.get(line.account) ?? 0) + line.amountMinor);
  }
  const merged = [...sums].filter(([, amount]) => amount !== 0).map(([account, amountMinor]) => ({ account, amountMinor }));
  const total = merged.reduce((sum, line) => sum + line.amountMinor, 0);
  if (total !== 0) throw new Error(`unbalanced ledger entry: lines sum to ${total}`);
  if (merged.length === 1) throw new Error('unbalanced ledger entry: a single line');
  return merged;
}
