// Two operators for money (issue 30): the approval request's statuses and their table, what each kind of
// request carries, and the money of a held attempt's decision (pure rules, no I/O).
import { feeOnReceived } from '../checkout/fees.ts';
import type { AttemptRow } from '../checkout/model.ts';
import type { Environment } from '../lib/environment.ts';
import { defineStateMachine, type Transitions } from '../lib/state-machine.ts';
import type { PaymentCredit } from '../ledger/model.ts';

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
/** A request waits for a second operator, who approves it (the action runs in that transaction) or rejects it. Both are final. */
export const APPROVAL_TRANSITIONS: Transitions<ApprovalStatus> = {
  pending: ['approved', 'rejected'],
  approved: [],
  rejected: [],
};
export const approvalMachine = defineStateMachine({
  name: 'operator approval',
  statuses: APPROVAL_STATUSES,
  initial: ['pending'],
  transitions: APPROVAL_TRANSITIONS,
});

export const APPROVAL_KINDS = ['held_attempt', 'payout_return', 'payout_settings'] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

/** An operator's reason for a request or a rejection (operator_approvals.reason CHECK). */
export const APPROVAL_REASON_LENGTH_MAX = 500;
/** Decided requests the approvals page shows under the pending ones. */
export const APPROVALS_RECENT_ROWS_MAX = 50;

/**
 * What an operator decides on a held attempt. credit_as_charged: a manual_review attempt the provider took in
 * full. credit_received: credit what was received (short or over), the fee taken on it. refund_payer: credit
 * nothing; what was received goes back to the payer through the refund queue. credit_expected_refund_excess
 * (an overpayment): credit the amount charged, the excess goes back to the payer. reject: the attempt fails,
 * no money moves (a statement credit goes back to the unmatched queue). Each with the label it shows: the
 * choices are the keys.
 */
export const HELD_CHOICE_LABELS = {
  credit_as_charged: 'Credit the payment as charged',
  credit_received: 'Credit what was received',
  refund_payer: 'Refund the payer what was received (credit nothing)',
  credit_expected_refund_excess: 'Credit the amount charged and refund the excess to the payer',
  reject: 'Reject: the payment failed, no money moves',
};
export type HeldChoice = keyof typeof HELD_CHOICE_LABELS;
/** Every choice, in the table's order. */
export const HELD_CHOICES = Object.keys(HELD_CHOICE_LABELS) as readonly HeldChoice[];

/** The choices a held attempt offers: by its status and how what was received compares with what was charged. */
export function heldChoices(status: string, chargedMinor: number, receivedMinor: number | null): HeldChoice[] {
  if (status === 'manual_review') return ['credit_as_charged', 'reject'];
  if (receivedMinor === null) return ['reject'];
  if (receivedMinor < chargedMinor) return ['credit_received', 'refund_payer', 'reject'];
  if (receivedMinor > chargedMinor)
    return ['credit_expected_refund_excess', 'credit_received', 'refund_payer', 'reject'];
  return ['credit_as_charged', 'reject'];
}

/** The money of a decision: the attempt's outcome, the merchant's credit (null: none, or as charged), what goes back to the payer, what is recorded as received. */
export interface HeldMoney {
  outcome: 'paid' | 'failed';
  credit: PaymentCredit | null;
  refundMinor: number;
  received: { receivedMinor: number; feeMinor: number } | null;
  /** What the merchant's balance gains, net of the refund (for the pages and the audit). */
  netCreditMinor: number;
}

type Priced = Pick<AttemptRow, 'amount_charged_minor' | 'fee_minor' | 'bearer'>;

export function heldMoney(attempt: Priced, choice: HeldChoice, receivedMinor: number): HeldMoney {
  const charged = attempt.amount_charged_minor;
  const payerFee = attempt.bearer === 'payer' ? attempt.fee_minor : 0;
  const merchantFee = attempt.bearer === 'merchant' ? attempt.fee_minor : 0;
  switch (choice) {
    case 'credit_as_charged':
      return {
        outcome: 'paid',
        credit: null,
        refundMinor: 0,
        received: null,
        netCreditMinor: charged - attempt.fee_minor,
      };
    case 'credit_received': {
      const p = feeOnReceived(payerFee, charged, receivedMinor);
      const m = Math.min(feeOnReceived(merchantFee, charged, receivedMinor), receivedMinor - p);
      return {
        outcome: 'paid',
        credit: { chargedMinor: receivedMinor, payerFeeMinor: p, merchantFeeMinor: m },
        refundMinor: 0,
        received: { receivedMinor, feeMinor: p + m },
        netCreditMinor: receivedMinor - p - m,
      };
    }
    case 'credit_expected_refund_excess':
      // The whole receipt is booked (the fee on the amount charged), then the excess is held for the payer.
      return {
        outcome: 'paid',
        credit: { chargedMinor: receivedMinor, payerFeeMinor: payerFee, merchantFeeMinor: merchantFee },
        refundMinor: receivedMinor - charged,
        received: { receivedMinor, feeMinor: attempt.fee_minor },
        netCreditMinor: charged - attempt.fee_minor,
      };
    case 'refund_payer':
      // Booked without a fee and held at once for the refund: the merchant's balance gains nothing.
      return {
        outcome: 'failed',
        credit: { chargedMinor: receivedMinor, payerFeeMinor: 0, merchantFeeMinor: 0 },
        refundMinor: receivedMinor,
        received: { receivedMinor, feeMinor: 0 },
        netCreditMinor: 0,
      };
    case 'reject':
      return { outcome: 'failed', credit: null, refundMinor: 0, received: null, netCreditMinor: 0 };
  }
}

/** The console lists' filters and their values: the review queue and the Live payouts. */
export const REVIEW_FILTERS = { environment: ['test', 'live'], status: ['manual_review', 'amount_mismatch'] } as const;
/** The Live payouts list's filters; hold: held by an operator (open payouts with held_at), or not. */
export const PAYOUT_LIST_FILTERS = {
  status: ['requested', 'processing', 'paid', 'returned'],
  reconciliation: ['unreconciled', 'matched', 'exception'],
  hold: ['held', 'not_held'],
} as const;

/** A bank's return reference: 4 to 40 letters, digits, hyphens, slashes or dots. */
export const RETURN_REFERENCE_PATTERN = /^[A-Za-z0-9\-/.]{4,40}$/;
export const RETURN_REFERENCE_RULE =
  "The return reference is the bank's: 4 to 40 letters, digits, hyphens (-), slashes (/) or dots (.).";

/** What each kind of request carries (operator_approvals.payload). */
export interface HeldAttemptPayload {
  choice: HeldChoice;
  received_minor: number;
  charged_minor: number;
  /** The attempt as it was when requested: a change since makes the request stale. */
  attempt_version: number;
  attempt_status: string;
  /** The statement line behind a bank transfer's credit, when there is one. */
  statement_line_id: string | null;
}
export interface PayoutReturnPayload {
  return_reference: string;
  payout_reference: string;
  amount_minor: number;
  fee_minor: number;
  payout_version: number;
}
export interface PayoutSettingsPayload {
  before: SettingsValues;
  after: SettingsValues;
}
export interface SettingsValues {
  payout_access: boolean;
  paused: boolean;
  payout_limit_minor: number;
  daily_limit_minor: number;
}

/** The highest payout limit an operator sets (GHS 10,000,000), per payout or per day. */
export const PAYOUT_SETTING_LIMIT_MAX_MINOR = 1_000_000_000;

/**
 * A Live settings change needs a second operator when it opens access or raises a limit; closing, pausing,
 * lowering and resuming paused payouts (back to what was approved) apply at once.
 */
export const settingsChangeNeedsApproval = (
  environment: Environment,
  before: SettingsValues,
  after: SettingsValues,
): boolean =>
  environment === 'live' &&
  ((after.payout_access && !before.payout_access) ||
    after.payout_limit_minor > before.payout_limit_minor ||
    after.daily_limit_minor > before.daily_limit_minor);
