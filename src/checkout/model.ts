// Checkout session types, limits and the session, attempt and cash slip state machines.
import { defineStateMachine } from '../lib/state-machine.ts';

export const SESSION_STATUSES = ['open', 'pending', 'success', 'failed', 'expired'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const SESSION_AMOUNT_MAX_MINOR = 100_000_000; // GHS 1,000,000
export const SESSION_LIFETIME_DEFAULT_S = 86_400;
export const SESSION_LIFETIME_MIN_S = 60;
export const SESSION_LIFETIME_MAX_S = 86_400;
export const INVOICE_REF_LENGTH_MAX = 120;
export const DESCRIPTION_LENGTH_MAX = 240;
export const CUSTOMER_NAME_LENGTH_MAX = 200;
export const CUSTOMER_EMAIL_LENGTH_MAX = 254;
export const CALLBACK_URL_LENGTH_MAX = 500;
export const METADATA_KEYS_MAX = 50;
export const METADATA_BYTES_MAX = 8_192;
export { SUPPORTED_CURRENCY } from '../lib/currency.ts';
/** The longest session or attempt id a path or body takes, in characters (ids Sika issues are far shorter). */
export const ID_PARAM_LENGTH_MAX = 80;

/**
 * Session transitions (DESIGN §3). A failed or expired session may still become success: a payment
 * confirmed late is honoured, money taken is never dropped. success is final (a reversal is recorded
 * on the attempt and the ledger, the session stays success). A session is created open (the payer has not started).
 */
export const sessionMachine = defineStateMachine({
  name: 'session',
  statuses: SESSION_STATUSES,
  initial: ['open'],
  transitions: {
    // open -> success: an attempt that had expired (putting the session back to open) is confirmed late.
    open: ['pending', 'expired', 'success'],
    pending: ['open', 'success', 'failed', 'expired'],
    success: [],
    failed: ['success'],
    expired: ['success'],
  },
});
export const SESSION_TRANSITIONS = sessionMachine.transitions;
export const assertSessionTransition = sessionMachine.transition;

import { ATTEMPT_STATUSES, type AttemptStatus } from '../lib/statuses.ts';

export { ATTEMPT_STATUSES, type AttemptStatus };

/**
 * Attempt transitions (DESIGN §3). manual_review and amount_mismatch wait for an operator (-> paid or
 * failed). An expired or cancelled attempt may still be confirmed paid, or held for an operator when the
 * provider took another amount: a payer who changed course may still approve the old prompt, and money
 * taken is never dropped (issue 31; when the session was paid otherwise, it is refunded automatically).
 * paid -> reversed is the only way out of paid. An attempt is created pending (the rail has not answered).
 */
export const attemptMachine = defineStateMachine({
  name: 'attempt',
  statuses: ATTEMPT_STATUSES,
  initial: ['pending'],
  transitions: {
    pending: ['paid', 'failed', 'expired', 'cancelled', 'manual_review', 'amount_mismatch'],
    manual_review: ['paid', 'failed'],
    amount_mismatch: ['paid', 'failed'],
    expired: ['paid', 'manual_review', 'amount_mismatch'],
    paid: ['reversed'],
    failed: [],
    cancelled: ['paid', 'manual_review', 'amount_mismatch'],
    reversed: [],
  },
});
export const ATTEMPT_TRANSITIONS = attemptMachine.transitions;
export const assertAttemptTransition = attemptMachine.transition;

export const CASH_SLIP_STATUSES = ['active', 'used', 'expired', 'cancelled'] as const;
export type CashSlipStatus = (typeof CASH_SLIP_STATUSES)[number];

/** A cash slip is printed active and ends with its attempt: used when paid, expired or cancelled otherwise. */
export const cashSlipMachine = defineStateMachine({
  name: 'cash slip',
  statuses: CASH_SLIP_STATUSES,
  initial: ['active'],
  transitions: { active: ['used', 'expired', 'cancelled'], used: [], expired: [], cancelled: [] },
});

/** Statuses after which the attempt is waiting for nobody. */
export const ATTEMPT_FINAL: readonly AttemptStatus[] = ['paid', 'failed', 'expired', 'cancelled', 'reversed'];
export const SESSION_FINAL: readonly SessionStatus[] = ['success', 'failed', 'expired'];
export const FAILED_ATTEMPTS_MAX = 5;
/** Attempts a session may have in all (each change of course starts one): beyond, a prompt to yet another number is refused. */
export const ATTEMPTS_PER_SESSION_MAX = 20;

export interface AttemptRow {
  id: string;
  session_id: string;
  merchant_id: string;
  environment: 'test' | 'live';
  rail: import('../rails/registry.ts').Rail;
  provider: string;
  provider_reference: string;
  network: 'mtn' | 'telecel' | 'at' | null;
  phone: string | null;
  account_name: string | null;
  status: AttemptStatus;
  raw_status: string;
  base_minor: number;
  fee_minor: number;
  bearer: 'payer' | 'merchant';
  amount_charged_minor: number;
  /** What an operator found was received, when it was not the amount charged (migration 028); null: as charged. */
  amount_received_minor: number | null;
  /** The fee taken on what was received (null: fee_minor). */
  fee_received_minor: number | null;
  currency: string;
  verification_required: boolean;
  resend_count: number;
  instructions: Record<string, unknown>;
  version: number;
  created_at: Date;
  updated_at: Date;
  finalized_at: Date | null;
  /** What the provider calls this transaction (MTN financialTransactionId, Paystack transaction id; migration 033). */
  provider_transaction_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
  failure_reason: import('../lib/payment-failures.ts').FailureReason | null;
  /** Ended while the provider had given no final answer: still asked about for the late-success window. */
  abandoned_at: Date | null;
}

export interface SessionRow {
  id: string;
  merchant_id: string;
  environment: 'test' | 'live';
  /** The key that made it; null for a session a payer made from a payment link (issue 35: its events go to every endpoint). */
  api_key_id: string | null;
  status: SessionStatus;
  amount_minor: number;
  currency: string;
  invoice_ref: string;
  description: string | null;
  customer_name: string | null;
  customer_email: string | null;
  callback_url: string | null;
  metadata: Record<string, unknown>;
  expires_at: Date;
  finalized_at: Date | null;
  /** What refunds of its payment have given back so far (succeeded refunds). */
  refunded_minor: number;
  /** The payment link a payer made it from (migration 040), else null. */
  payment_link_id: string | null;
  /** What the payer entered in the link's custom fields, key to value; null when not made by a link. */
  custom_fields: Record<string, string> | null;
  /** The payer's receipt number, given when it succeeds (src/checkout/receipt-number.ts); null before. */
  receipt_number: string | null;
  /** The rail and network of the attempt that paid it, else of the payer's latest try (migration 042); null before any. */
  method_rail: string | null;
  method_network: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export const isPastExpiry = (session: Pick<SessionRow, 'expires_at'>) => session.expires_at.getTime() <= Date.now();

/** What the payer sees: an open session past its time is shown expired before the worker gets to it. */
export const effectiveStatus = (session: Pick<SessionRow, 'status' | 'expires_at'>) =>
  session.status === 'open' && isPastExpiry(session) ? 'expired' : session.status;

export const checkoutUrlOf = (checkoutUrlHost: string, sessionId: string): string =>
  `${checkoutUrlHost}/pay/${sessionId}`;

/** The merchant view (SPEC 2.1), plus a few optional fields clients may ignore (SPEC 9.3). */
export function toSessionResponse(row: SessionRow, checkoutUrlHost: string) {
  return {
    id: row.id,
    object: 'checkout.session' as const,
    status: row.status,
    amount_minor: row.amount_minor,
    currency: row.currency,
    invoice_ref: row.invoice_ref,
    description: row.description,
    checkout_url: checkoutUrlOf(checkoutUrlHost, row.id),
    expires_at: row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
    livemode: row.environment === 'live',
    customer: { name: row.customer_name, email: row.customer_email },
    callback_url: row.callback_url,
    metadata: row.metadata,
    refunded_minor: row.refunded_minor,
    payment_link_id: row.payment_link_id,
    custom_fields: row.custom_fields,
    receipt_number: row.receipt_number,
  };
}
export type SessionResponse = ReturnType<typeof toSessionResponse>;
