// The payer's payment attempts (SPEC 4.2): start one (a cash attempt is its slip), read its status (asking
// the provider when the payer refreshes), submit a Mobile Money verification code, re-send the prompt.
import type { Queryable } from '../db/index.ts';
import type { Environment } from '../lib/environment.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { ExpiringMap } from '../lib/expiring-map.ts';
import { failureMessage } from '../lib/payment-failures.ts';
import { railOfAttempt, RailUnavailableError, VerificationRefusedError } from '../rails/index.ts';
import { railDescriptor } from '../rails/registry.ts';
import { initiateWithProviders } from './attempt-initiation.ts';
import { railInput } from './attempt-rail-input.ts';
import { checkAttemptInput, startAttempt, type AttemptInput } from './attempt-start.ts';
import { createCashSlip } from './cash-slips.ts';
import { effectiveStatus, type AttemptRow, type SessionRow } from './model.ts';
import type { PayerContext } from './payer-view.ts';
import { applyOutcome, closingOnClosedLink } from './payments.ts';
import { settleFromProvider } from './provider-status.ts';
import * as store from './store.ts';

/** An existing attempt's provider cannot be reached or is gone (no Retry-After: it is not known when it will be back). */
const railUnavailable = (rail: string, environment: Environment) =>
  new SikaError(
    'PROVIDER_RAIL_UNAVAILABLE',
    `${rail} payments are not available for ${environment === 'live' ? 'Live' : 'Test'} checkouts right now; choose another method.`,
  );

/**
 * A payer's refresh of a Live attempt asks its provider at most this often (a page polls every few seconds;
 * Paystack asks to "wait 10 seconds or more" between checks of a pending charge): in between the answer is
 * what Sika knows, with `refreshed: false`. Per process; Test attempts ask the simulator every time.
 */
export const PROVIDER_REFRESH_INTERVAL_MS = 5_000;
const PROVIDER_REFRESH_TRACKED_MAX = 100_000;
const lastAsked = new ExpiringMap<string, true>(PROVIDER_REFRESH_INTERVAL_MS, PROVIDER_REFRESH_TRACKED_MAX);

/** True when this Live attempt's provider was asked less than the interval ago; otherwise counts this ask. */
function askedRecently(attempt: AttemptRow): boolean {
  if (attempt.environment !== 'live') return false;
  if (lastAsked.get(attempt.id)) return true;
  lastAsked.set(attempt.id, true);
  return false;
}

/** How many times a payer may have an attempt's Mobile Money prompt sent again. */
export const RESENDS_MAX = 3;
/** A Mobile Money verification code's length, in letters or digits. */
export const VERIFICATION_CODE_LENGTH_MIN = 4;
export const VERIFICATION_CODE_LENGTH_MAX = 10;
export const VERIFICATION_CODE_PATTERN = new RegExp(
  `^[0-9A-Za-z]{${VERIFICATION_CODE_LENGTH_MIN},${VERIFICATION_CODE_LENGTH_MAX}}$`,
);

/** The fields both attempt responses share (SPEC 2.4). */
const attemptCore = (attempt: AttemptRow) => ({
  attempt_reference: attempt.id,
  provider: attempt.provider,
  provider_reference: attempt.provider_reference,
  rail: attempt.rail,
  status: attempt.status,
  amount_charged_minor: attempt.amount_charged_minor,
  amount_received_minor: attempt.amount_received_minor === null ? null : Number(attempt.amount_received_minor),
  currency: attempt.currency,
});

export function toAttemptInitiation(attempt: AttemptRow, replayed: boolean) {
  return {
    ...attemptCore(attempt),
    instructions: railDescriptor(attempt.rail).instructions(attempt),
    replayed,
  };
}

/** Whether the attempt's provider can prompt the payer again without a second charge (recorded from the adapter when it was sent). */
export const resendSupported = (attempt: AttemptRow): boolean =>
  attempt.rail === 'momo' && attempt.instructions.resend_supported === true;

/** Statuses after which the payer reads why it did not go through. */
const UNPAID_ENDINGS: readonly AttemptRow['status'][] = ['failed', 'expired', 'cancelled'];

/** session: the attempt's session as the caller's transaction has just written it, when it has (saves a read). */
export async function toAttemptStatus(
  db: Queryable,
  attempt: AttemptRow,
  refreshed: boolean,
  session?: Pick<SessionRow, 'id' | 'status' | 'expires_at' | 'finalized_at'>,
) {
  if (session && session.id !== attempt.session_id)
    throw new Error("toAttemptStatus: another session than the attempt's");
  session ??= (await store.findPublicSession(db, attempt.session_id))!;
  const instructions = railDescriptor(attempt.rail).instructions(attempt);
  const canResend = resendSupported(attempt);
  return {
    ...attemptCore(attempt),
    session_id: session.id,
    session_status: effectiveStatus(session),
    session_finalized_at: session.finalized_at ? session.finalized_at.toISOString() : null,
    raw_status: attempt.raw_status,
    refreshed,
    finalized: session.finalized_at !== null,
    verification_required: attempt.verification_required,
    resend_supported: canResend,
    resends_left: canResend ? Math.max(0, RESENDS_MAX - attempt.resend_count) : 0,
    approve_within_s: typeof instructions.approve_within_s === 'number' ? instructions.approve_within_s : null,
    approval_help: typeof instructions.approval_help === 'string' ? instructions.approval_help : null,
    failure_reason: attempt.failure_reason,
    failure_message: UNPAID_ENDINGS.includes(attempt.status) ? failureMessage(attempt.failure_reason) : null,
    provider_transaction_id: attempt.provider_transaction_id,
    card: attempt.card_brand && attempt.card_last4 ? { brand: attempt.card_brand, last4: attempt.card_last4 } : null,
    created_at: attempt.created_at.toISOString(),
  };
}
export type AttemptStatusBody = Awaited<ReturnType<typeof toAttemptStatus>>;

export async function createAttempt(ctx: PayerContext, sessionId: string, input: AttemptInput) {
  const checked = checkAttemptInput(input);
  if (checked.rail === 'cash') {
    const slip = await createCashSlip(ctx, { session_id: sessionId, amount_minor: input.amount_minor });
    const attempt = (await store.findAttempt(ctx.db, slip.attemptId))!;
    return { attempt, replayed: slip.replayed };
  }
  const started = await closingOnClosedLink(ctx.db, sessionId, { ...ctx, source: 'payer' }, () =>
    ctx.db.transaction((tx) => startAttempt(tx, ctx, sessionId, checked, input.amount_minor)),
  );
  const attempt = await initiateWithProviders(ctx, started);
  return { attempt, replayed: started.replayed };
}

/** An attempt of this session; another session's attempt is not found (the session id is the capability). */
export async function attemptOfSession(db: Queryable, sessionId: string, attemptId: string): Promise<AttemptRow> {
  const attempt = await store.findAttempt(db, attemptId);
  if (!attempt || attempt.session_id !== sessionId) throw errors.notFound('Payment attempt');
  return attempt;
}

export async function getAttemptStatus(ctx: PayerContext, sessionId: string, attemptId: string, refresh: boolean) {
  let attempt = await attemptOfSession(ctx.db, sessionId, attemptId);
  const throttled = refresh && attempt.status === 'pending' && askedRecently(attempt);
  if (refresh && attempt.status === 'pending' && !throttled) {
    const adapter = railOfAttempt(attempt, ctx.providers);
    if (!adapter) throw railUnavailable(attempt.rail, attempt.environment);
    try {
      attempt = await settleFromProvider(ctx, adapter, attempt, 'provider');
    } catch (error) {
      if (error instanceof SikaError) throw error;
      throw errors.unavailable(
        `The ${attempt.rail} provider did not answer; the payment is still being confirmed. Try again shortly.`,
      );
    }
  }
  return toAttemptStatus(ctx.db, attempt, refresh && !throttled);
}

export async function authorizeAttempt(ctx: PayerContext, sessionId: string, attemptId: string, code: string) {
  const attempt = await attemptOfSession(ctx.db, sessionId, attemptId);
  if (!VERIFICATION_CODE_PATTERN.test(code))
    throw errors.invalidArgument(
      `code must be the ${VERIFICATION_CODE_LENGTH_MIN} to ${VERIFICATION_CODE_LENGTH_MAX} character verification code from your phone.`,
      [{ field: 'code', message: 'is malformed' }],
    );
  if (attempt.status !== 'pending')
    throw new SikaError('ATTEMPT_FINAL', `The attempt is ${attempt.status}; no code is needed.`);
  if (!attempt.verification_required)
    throw new SikaError('VERIFICATION_NOT_REQUIRED', 'This payment does not need a verification code.');
  const adapter = railOfAttempt(attempt, ctx.providers);
  if (!adapter) throw railUnavailable(attempt.rail, attempt.environment);
  let result: Awaited<ReturnType<typeof adapter.authorize>>;
  try {
    result = await adapter.authorize(railInput(attempt), code);
  } catch (error) {
    if (error instanceof VerificationRefusedError) throw new SikaError('PROVIDER_PAYMENT_REJECTED', error.message);
    if (error instanceof RailUnavailableError) throw railUnavailable(attempt.rail, attempt.environment);
    throw errors.unavailable('The provider did not answer; try the code again shortly.');
  }
  const updated = await ctx.db.transaction(async (tx) => {
    const recorded = await store.updateAttemptProvider(tx, attemptId, {
      rawStatus: result.rawStatus,
      verificationRequired: result.verificationRequired ?? false,
    });
    if (!result.outcome || result.outcome === 'pending') return recorded;
    const facts = result.failureReason ? { failureReason: result.failureReason } : undefined;
    return (
      await applyOutcome(tx, attemptId, result.outcome, {
        checkoutUrlHost: ctx.checkoutUrlHost,
        source: 'provider',
        facts,
        providers: ctx.providers,
      })
    ).attempt;
  });
  return toAttemptStatus(ctx.db, updated, false);
}

export async function resendAttempt(ctx: PayerContext, sessionId: string, attemptId: string) {
  const attempt = await attemptOfSession(ctx.db, sessionId, attemptId);
  if (attempt.rail !== 'momo') throw errors.invalidArgument('Only Mobile Money prompts can be re-sent.');
  if (attempt.status !== 'pending')
    throw new SikaError('ATTEMPT_FINAL', `The attempt is ${attempt.status}; there is nothing to re-send.`);
  // Offered only where the provider can prompt again without a second charge (issue 31): refused before it is asked.
  if (!resendSupported(attempt))
    throw new SikaError(
      'RESEND_NOT_AVAILABLE',
      'This network cannot send the prompt again. Approve the pending prompt on your phone, or use another number or method.',
    );
  if (attempt.resend_count >= RESENDS_MAX)
    throw new SikaError(
      'RESEND_LIMIT_REACHED',
      `The prompt was already re-sent ${RESENDS_MAX} times; start a new payment if it does not arrive.`,
    );
  const adapter = railOfAttempt(attempt, ctx.providers);
  if (!adapter) throw railUnavailable(attempt.rail, attempt.environment);
  let result: Awaited<ReturnType<typeof adapter.resend>>;
  try {
    result = await adapter.resend(railInput(attempt));
  } catch (error) {
    // The provider has no way to prompt again (Paystack, MTN MoMo): a second prompt would be a second charge.
    if (error instanceof RailUnavailableError)
      throw new SikaError('RESEND_NOT_AVAILABLE', error.message.replace(/\.?$/, '.'));
    throw errors.unavailable('The provider did not answer; try again shortly.');
  }
  const updated = await ctx.db.transaction((tx) =>
    store.updateAttemptProvider(tx, attemptId, { rawStatus: result.rawStatus, resendCountDelta: 1 }),
  );
  return toAttemptStatus(ctx.db, updated, false);
}
