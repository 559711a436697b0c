// Payout types, limits, fees and the payout state machine (SPEC 3.3, DESIGN §3 Payouts).
import { randomToken } from '../lib/ids.ts';
import { defineStateMachine } from '../lib/state-machine.ts';

import {
  PAYOUT_STATUSES,
  RECONCILIATION_STATUSES,
  type PayoutStatus,
  type ReconciliationStatus,
} from '../lib/statuses.ts';

export { PAYOUT_STATUSES, type PayoutStatus };
export type ProcessingStep = 'recipient_check' | 'transfer' | 'awaiting_result';

export { PAYOUT_TRANSITIONS, payoutMachine } from '../lib/statuses.ts';

export { RECONCILIATION_STATUSES, type ReconciliationStatus };
/** What an operator may find when reconciling a Live payout. */
export const RECONCILIATION_RESULTS = ['matched', 'exception'] as const satisfies readonly ReconciliationStatus[];

/**
 * A payout's reconciliation with the bank statement (its reconciliation_status). A Test payout needs
 * none; a Live one is settled by an operator, once paid or returned, as matched or exception, and never
 * flipped: settling it again with the same result is written again (a new version and audit row).
 */
export const reconciliationMachine = defineStateMachine({
  name: 'payout reconciliation',
  statuses: RECONCILIATION_STATUSES,
  initial: ['not_required', 'unreconciled'],
  transitions: {
    not_required: [],
    unreconciled: RECONCILIATION_RESULTS,
    matched: ['matched'],
    exception: ['exception'],
  },
});

export const VERIFICATION_STATUSES = ['pending_verification', 'verified', 'rejected'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

/** A recipient's verification (its verification_status): checked once, by the Test verifier or the Live rail. */
export const recipientMachine = defineStateMachine({
  name: 'recipient',
  statuses: VERIFICATION_STATUSES,
  initial: ['pending_verification'],
  transitions: { pending_verification: ['verified', 'rejected'], verified: [], rejected: [] },
});

export const STATUS_LABELS: Record<PayoutStatus, string> = {
  requested: 'Awaiting approval',
  processing: 'Processing',
  paid: 'Paid',
  failed: 'Failed: amount and fee released',
  cancelled: 'Cancelled: amount and fee released',
  returned: 'Returned to your balance',
};

/** A payout can be cancelled until money has been sent: while requested, or processing before the transfer. */
export const canCancel = (status: PayoutStatus, step: ProcessingStep | null): boolean =>
  status === 'requested' || (status === 'processing' && (step === null || step === 'recipient_check'));

export const HOLDING_STATUSES: readonly PayoutStatus[] = ['requested', 'processing'];

/**
 * An operator may hold a Live payout until its transfer leaves for the provider (holds.ts): while requested, or
 * processing at the recipient check or at the transfer step before it is sent (the worker moves the step to
 * awaiting_result just before it sends, only if the payout is not held). A hold is a flag on the payout
 * (held_at, held_by, hold_reason), not a status: PAYOUT_STATUSES, the API's payout shape and SPEC's statuses
 * stay as they are.
 */
export const canHold = (status: PayoutStatus, step: ProcessingStep | null): boolean =>
  status === 'requested' || (status === 'processing' && step !== 'awaiting_result');

/** An operator's reason to hold or release a payout is kept to this many characters. */
export const HOLD_REASON_LENGTH_MAX = 500;

/**
 * Test keys only: the status a new Test payout is created in (test_outcome on POST /api/v1/payouts).
 * paid, the default, is SPEC 3.3's Test payout (paid at once, nothing held); requested and processing
 * take the hold a Live payout takes and wait for POST /api/v1/test/payouts/{id}/simulate or a cancel.
 */
export const TEST_PAYOUT_OUTCOMES = ['paid', 'requested', 'processing'] as const;
export type TestPayoutOutcome = (typeof TEST_PAYOUT_OUTCOMES)[number];
export const TEST_PAYOUT_OUTCOME_DEFAULT: TestPayoutOutcome = 'paid';

/** What the Test simulator moves a Test payout to, through the payout table (PAYOUT_TRANSITIONS). */
export const TEST_PAYOUT_SIMULATIONS = [
  'processing',
  'paid',
  'failed',
  'returned',
] as const satisfies readonly PayoutStatus[];
export type TestPayoutSimulation = (typeof TEST_PAYOUT_SIMULATIONS)[number];

/** The longest id a payouts route or field takes (payout, recipient, evidence), in characters. */
export const PAYOUT_ID_LENGTH_MAX = 80;
export const CLIENT_REFERENCE_LENGTH_MAX = 80;
export const CLIENT_REFERENCE_PATTERN = new RegExp(
  `^[A-Za-z0-9][A-Za-z0-9_.:-]{0,${CLIENT_REFERENCE_LENGTH_MAX - 1}}$`,
);
export const NOTES_LENGTH_MAX = 500;
/** A cancel or rejection reason is kept to this many characters. */
export const CANCEL_REASON_LENGTH_MAX = 500;
export const ACCOUNT_NUMBER_DIGITS_MIN = 4;
export const ACCOUNT_NUMBER_DIGITS_MAX = 34;
export const ACCOUNT_NUMBER_PATTERN = new RegExp(`^\\d{${ACCOUNT_NUMBER_DIGITS_MIN},${ACCOUNT_NUMBER_DIGITS_MAX}}$`);
export const ACCOUNT_NAME_LENGTH_MAX = 200;
/** The largest payout amount the API takes (GHS 1,000,000,000), in pesewas. */
export const PAYOUT_AMOUNT_MAX_MINOR = 100_000_000_000;
export const PAYOUT_LIST_LIMIT_MAX = 100;
export const PAYOUT_LIST_LIMIT_DEFAULT = 20;
/** The API list's last page number (beyond it a page is clamped). */
export const PAYOUT_LIST_PAGE_MAX = 1_000_000;

/** Payouts are made in Ghana cedis only. */
export const PAYOUT_CURRENCY = 'GHS';

export const DEFAULT_PAYOUT_LIMIT_MINOR = 5_000_000; // GHS 50,000
export const DEFAULT_DAILY_LIMIT_MINOR = 20_000_000; // GHS 200,000
export const QUOTE_LIFETIME_S = 900;

export const EVIDENCE_BYTES_MAX = 5 * 1024 * 1024;
/** What an evidence file may be, judged by its content (evidence.ts; the evidence table's CHECK). */
export const EVIDENCE_CONTENT_TYPES = ['application/pdf', 'image/png', 'image/jpeg'] as const;
/** An evidence file's name is kept to this many characters. */
export const EVIDENCE_FILENAME_LENGTH_MAX = 200;

/** What a payout recipient is: a bank account or a Mobile Money wallet. */
export const ACCOUNT_TYPES = ['bank', 'momo'] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];

export const BANK_PAYOUT_FEE_MINOR = 100;
export const MOMO_PAYOUT_FEE_BPS = 100;
export const MOMO_PAYOUT_FEE_MIN_MINOR = 50;
export const MOMO_PAYOUT_FEE_MAX_MINOR = 1_000;

/** DESIGN: bank GHS 1.00 flat; momo 1% (min GHS 0.50, max GHS 10.00), half up to the pesewa. */
export function payoutFeeMinor(accountType: AccountType, amountMinor: number): number {
  if (!Number.isSafeInteger(amountMinor) || amountMinor < 1)
    throw new Error(`payout fee of a bad amount ${amountMinor}`);
  if (accountType === 'bank') return BANK_PAYOUT_FEE_MINOR;
  // Basis points of the amount (10,000 to the whole), rounded half up.
  const percent = Math.floor((amountMinor * MOMO_PAYOUT_FEE_BPS + 5_000) / 10_000);
  return Math.min(MOMO_PAYOUT_FEE_MAX_MINOR, Math.max(MOMO_PAYOUT_FEE_MIN_MINOR, percent));
}

/** Test-mode magic values: these recipients are rejected by the Test verifier (documented in the README). */
export const TEST_REJECTED_ACCOUNT_NUMBERS: Record<string, string> = {
  '0000000000': 'account_not_found',
  '1111111111': 'account_closed',
  '2222222222': 'name_mismatch',
};
export const TEST_REJECTED_PHONES: Record<string, string> = {
  '+233240000000': 'wallet_not_found',
  '+233200000000': 'wallet_not_found',
  '+233260000000': 'wallet_not_found',
  '+233241111111': 'name_mismatch',
};

export const maskAccountNumber = (value: string): string =>
  `${'*'.repeat(Math.max(0, value.length - 4))}${value.slice(-4)}`;

/** Random characters of a Test payout's references (nothing is sent, so no bank gives one). */
const TEST_REFERENCE_RANDOM_CHARS = 12;
/** A Test payout's bank reference, given when it is paid (at creation, or by the simulator). */
export const testBankReference = (): string => `TEST-${randomToken(TEST_REFERENCE_RANDOM_CHARS).toUpperCase()}`;
/** A simulated return's reference. */
export const testReturnReference = (): string => `TEST-RET-${randomToken(TEST_REFERENCE_RANDOM_CHARS).toUpperCase()}`;
