// Use cases of the hosted payment page (SPEC 4.2) and the Test simulation.
import type { ApiPrincipal, Environment } from '../accounts/model.ts';
import { audit, type Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { checkPhoneForNetwork, MOMO_NETWORKS, NETWORK_LABELS, type MomoNetwork } from '../lib/ghana.ts';
import { newId, randomToken } from '../lib/ids.ts';
import { railFor, RailUnavailableError, VerificationRefusedError, type AttemptForRail, type CollectionRail, type ProviderOutcome } from '../rails/index.ts';
import { findRail, railDescriptor, railDescriptors, railIds, type Rail } from '../rails/registry.ts';
import { defaultFees, quoteRail, type RailFee, type RailQuote } from './fees.ts';
import { applyOutcome, moveAttempt, moveSession, type OutcomeContext } from './payments.ts';
import type { AttemptRow, SessionRow } from './model.ts';
import * as store from './store.ts';

export const RESENDS_MAX = 3;
export const VERIFICATION_CODE_PATTERN = /^[0-9A-Za-z]{4,10}$/;
const SLIP_REFERENCE_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';

export interface PayerContext {
  db: Db;
  checkoutUrlHost: string;
  liveRails?: Partial<Record<Rail, CollectionRail>>;
}

const notFound = () => errors.notFound('Checkout session');
const isPastExpiry = (session: Pick<SessionRow, 'expires_at'>) => session.expires_at.getTime() <= Date.now();

/** What the payer sees: an open session past its time is shown expired before the worker gets to it. */
export const effectiveStatus = (session: SessionRow) => (session.status === 'open' && isPastExpiry(session) ? 'expired' : session.status);

export function allowedRails(environment: Environment, liveRails: PayerContext['liveRails']): Rail[] {
  return railIds().filter((rail) => railFor(environment, rail, liveRails) !== null);
}

export async function feeSchedule(db: Queryable, merchantId: string, environment: Environment): Promise<Record<Rail, RailFee>> {
  const schedule = defaultFees();
  for (const row of await store.findFeeOverrides(db, merchantId, environment)) {
    schedule[row.rail as Rail] = { bearer: row.bearer, percentBps: row.percent_bps, flatMinor: row.flat_minor, capMinor: row.cap_minor };
  }
  return schedule;
}

export async function quoteSession(db: Queryable, session: SessionRow, rails: Rail[]): Promise<Partial<Record<Rail, RailQuote>>> {
  const schedule = await feeSchedule(db, session.merchant_id, session.environment);
  return Object.fromEntries(rails.map((rail) => [rail, quoteRail(session.amount_minor, schedule[rail], session.currency)]));
}

export async function getOptions(db: Queryable) {
  const rows = await db.query<{ bank_id: string; bank_name: string; bank_code: string; branch_id: string | null; branch_name: string | null; branch_code: string | null }>(
    `SELECT b.id AS bank_id, b.name AS bank_name, b.code AS bank_code, br.id AS branch_id, br.name AS branch_name, br.code AS branch_code
       FROM banks b LEFT JOIN bank_branches br ON br.bank_id = b.id AND br.active
      WHERE b.active ORDER BY b.name, br.name`,
  );
  const banks = new Map<string, { id: string; name: string; code: string; branches: { id: string; name: string; code: string }[] }>();
  for (const row of rows) {
    let bank = banks.get(row.bank_id);
    if (!bank) banks.set(row.bank_id, (bank = { id: row.bank_id, name: row.bank_name, code: row.bank_code, branches: [] }));
    if (row.branch_id) bank.branches.push({ id: row.branch_id, name: row.branch_name!, code: row.branch_code! });
  }
  return {
    payment_methods: railDescriptors().map((rail) => ({ value: rail.id, label: rail.labels.payer })),
    mobile_money_operators: MOMO_NETWORKS.map((value) => ({ value, label: NETWORK_LABELS[value] })),
    branch_payment_methods: railDescriptors().flatMap((rail) => (rail.labels.branch ? [{ value: rail.id, label: rail.labels.branch }] : [])),
    banks: [...banks.values()].filter((bank) => bank.branches.length > 0),
  };
}

export function returnToMerchantUrl(session: SessionRow, status: string): string | null {
  if (!session.callback_url) return null;
  const url = new URL(session.callback_url);
  url.searchParams.set('session_id', session.id);
  url.searchParams.set('status', status);
  return url.toString();
}

export async function getPublicSession(ctx: PayerContext, id: string) {
  const found = await store.findPublicSessionWithLines(ctx.db, id);
  if (!found) throw notFound();
  const { line_items: lineItems, ...session } = found;
  const status = effectiveStatus(session);
  return {
    session,
    view: {
      id: session.id,
      merchant_name: session.merchant_name,
      status,
      amount_minor: session.amount_minor,
      currency: session.currency,
      invoice_ref: session.invoice_ref,
      description: session.description ?? '',
      customer_name: session.customer_name ?? '',
      allowed_rails: allowedRails(session.environment, ctx.liveRails),
      expires_at: session.expires_at.toISOString(),
      return_to_merchant_url: returnToMerchantUrl(session, status),
      card_collection_mode: session.environment === 'test' ? ('test_simulation' as const) : ('card_network_hosted_session' as const),
      line_items: lineItems,
      livemode: session.environment === 'live',
    },
  };
}

export async function getQuote(ctx: PayerContext, id: string) {
  const session = await store.findPublicSession(ctx.db, id);
  if (!session) throw notFound();
  const status = effectiveStatus(session);
  if (status !== 'open') throw errors.sessionNotPayable(status);
  const rails = allowedRails(session.environment, ctx.liveRails);
  return {
    id: newId('quo'),
    status: 'open',
    base_minor: session.amount_minor,
    currency: session.currency,
    expires_at: session.expires_at.toISOString(),
    allowed_rails: rails,
    surcharges: await quoteSession(ctx.db, session, rails),
  };
}

export interface AttemptInput {
  rail: string;
  amount_minor: number;
  operator?: string;
  phone?: string;
  account_name?: string;
}

/** The fields both attempt responses share (SPEC 2.4). */
const attemptCore = (attempt: AttemptRow) => ({
  attempt_reference: attempt.id,
  provider: attempt.provider,
  provider_reference: attempt.provider_reference,
  rail: attempt.rail,
  status: attempt.status,
  amount_charged_minor: attempt.amount_charged_minor,
  currency: attempt.currency,
});

export function toAttemptInitiation(attempt: AttemptRow, replayed: boolean) {
  return {
    ...attemptCore(attempt),
    instructions: railDescriptor(attempt.rail).instructions(attempt),
    replayed,
  };
}

export async function toAttemptStatus(db: Queryable, attempt: AttemptRow, refreshed: boolean) {
  const session = (await store.findPublicSession(db, attempt.session_id))!;
  return {
    ...attemptCore(attempt),
    session_id: session.id,
    session_status: effectiveStatus(session),
    session_finalized_at: session.finalized_at ? session.finalized_at.toISOString() : null,
    raw_status: attempt.raw_status,
    refreshed,
    finalized: session.finalized_at !== null,
    verification_required: attempt.verification_required,
    resends_left: Math.max(0, RESENDS_MAX - attempt.resend_count),
  };
}

export const railInput = (attempt: AttemptRow): AttemptForRail => ({
  reference: attempt.id,
  sessionId: attempt.session_id,
  environment: attempt.environment,
  rail: attempt.rail,
  amountMinor: attempt.amount_charged_minor,
  currency: attempt.currency,
  operator: attempt.operator,
  phone: attempt.phone,
  providerReference: attempt.provider_reference || null,
});

/** When a payer may try again after a provider refused to start a payment. */
const PROVIDER_REFUSED_RETRY_AFTER_S = 5;

/** No provider serves this rail for the session's environment (no Retry-After: it is not known when one will). */
const railUnavailable = (rail: string, environment: Environment) =>
  new SikaError('PROVIDER_RAIL_UNAVAILABLE', `${rail} payments are not available for ${environment === 'live' ? 'Live' : 'Test'} checkouts right now; choose another method.`);

interface CheckedAttempt {
  rail: Rail;
  operator: MomoNetwork | null;
  phone: string | null;
  accountName: string | null;
}

function checkAttemptInput(input: AttemptInput): CheckedAttempt {
  const rail = findRail(input.rail)?.id;
  if (!rail) throw errors.invalidArgument(`rail must be one of ${railIds().join(', ')}.`, [{ field: 'rail', message: 'is not a payment method' }]);
  const accountName = input.account_name?.trim() || null;
  if (rail !== 'momo') return { rail, operator: null, phone: null, accountName };
  if (!input.operator || !(MOMO_NETWORKS as readonly string[]).includes(input.operator)) {
    throw errors.invalidArgument('operator must be mtn, telecel or at for Mobile Money.', [{ field: 'operator', message: 'must be mtn, telecel or at' }]);
  }
  const operator = input.operator as MomoNetwork;
  if (!input.phone) throw errors.invalidArgument('phone is required for Mobile Money.', [{ field: 'phone', message: 'is required' }]);
  const check = checkPhoneForNetwork(input.phone, operator);
  if (!check.ok) throw errors.invalidArgument(check.message, [{ field: 'phone', message: check.message }]);
  return { rail, operator, phone: check.phone, accountName };
}

const sameAttempt = (attempt: AttemptRow, input: CheckedAttempt, amountMinor: number) =>
  attempt.rail === input.rail && attempt.amount_charged_minor === amountMinor && attempt.operator === input.operator && attempt.phone === input.phone;

function newSlipReference(): string {
  let code = '';
  for (const char of randomToken(16)) {
    if (code.length === 8) break;
    code += SLIP_REFERENCE_ALPHABET[char.charCodeAt(0) % SLIP_REFERENCE_ALPHABET.length];
  }
  return `SK-${code.slice(0, 4)}-${code.slice(4, 8)}`;
}

type Started = { attempt: AttemptRow; replayed: boolean; adapter: CollectionRail | null };

/**
 * Starts (or replays) an attempt under the session's row lock: one attempt in progress per session.
 * A pending cash slip gives way to another method (no money can arrive on it without a teller).
 */
async function startAttempt(tx: Queryable, ctx: PayerContext, sessionId: string, input: CheckedAttempt, amountMinor: number): Promise<Started> {
  const outcomeCtx: OutcomeContext = { checkoutUrlHost: ctx.checkoutUrlHost, source: 'payer' };
  let session = await store.lockSession(tx, sessionId);
  if (!session) throw notFound();
  const pending = (await store.listAttempts(tx, sessionId)).find((a) => a.status === 'pending');
  if (pending && sameAttempt(pending, input, amountMinor)) return { attempt: pending, replayed: true, adapter: null };
  if (pending && pending.rail === 'cash' && input.rail !== 'cash') {
    await moveAttempt(tx, pending, 'cancelled', 'CANCELLED:payer_switched_method');
    session = await moveSession(tx, session, 'open', outcomeCtx);
  } else if (pending) {
    throw new SikaError('PAYMENT_ATTEMPT_PENDING', 'A payment is already in progress for this checkout; wait for it to finish or fail before trying another.');
  }
  if (session.status !== 'open' || isPastExpiry(session)) throw errors.sessionNotPayable(effectiveStatus(session));
  const adapter = railFor(session.environment, input.rail, ctx.liveRails);
  if (!adapter) throw railUnavailable(input.rail, session.environment);
  const schedule = await feeSchedule(tx, session.merchant_id, session.environment);
  const quote = quoteRail(session.amount_minor, schedule[input.rail], session.currency);
  if (amountMinor !== quote.total_minor) {
    throw new SikaError('PAYMENT_AMOUNT_MISMATCH', `The amount for ${input.rail} is now ${quote.total_minor} pesewas; get a fresh quote and try again.`);
  }
  const attempt = await store.insertAttempt(tx, {
    id: newId('att'),
    session_id: session.id,
    merchant_id: session.merchant_id,
    environment: session.environment,
    rail: input.rail,
    provider: adapter.provider,
    provider_reference: '',
    operator: input.operator,
    phone: input.phone,
    account_name: input.accountName,
    raw_status: 'CREATED',
    base_minor: session.amount_minor,
    fee_minor: quote.fee_minor,
    bearer: quote.bearer,
    amount_charged_minor: quote.total_minor,
    currency: session.currency,
  });
  await moveSession(tx, session, 'pending', outcomeCtx);
  return { attempt, replayed: false, adapter };
}

/** Records the intent, commits, then calls the rail outside the transaction, then records the result. */
async function initiateWithRail(ctx: PayerContext, started: Started): Promise<AttemptRow> {
  const { attempt, adapter } = started;
  if (!adapter) return attempt;
  try {
    const initiated = await adapter.initiate(railInput(attempt));
    return await ctx.db.transaction((tx) =>
      store.updateAttemptProvider(tx, attempt.id, {
        providerReference: initiated.providerReference || undefined,
        rawStatus: initiated.rawStatus,
        verificationRequired: initiated.verificationRequired,
        instructions: initiated.instructions,
      }),
    );
  } catch (error) {
    if (error instanceof SikaError) throw error;
    await ctx.db.transaction((tx) => applyOutcome(tx, attempt.id, 'failed', { checkoutUrlHost: ctx.checkoutUrlHost, source: 'initiation_failed' }));
    throw new SikaError('PROVIDER_RAIL_UNAVAILABLE', `The ${attempt.rail} provider did not accept the payment; try again or choose another method.`, {
      retryAfterSeconds: PROVIDER_REFUSED_RETRY_AFTER_S,
    });
  }
}

export async function createAttempt(ctx: PayerContext, sessionId: string, input: AttemptInput) {
  const checked = checkAttemptInput(input);
  if (checked.rail === 'cash') {
    const slip = await createCashSlip(ctx, { session_id: sessionId, amount_minor: input.amount_minor });
    const attempt = (await store.findAttempt(ctx.db, slip.attemptId))!;
    return { attempt, replayed: slip.replayed };
  }
  const started = await ctx.db.transaction((tx) => startAttempt(tx, ctx, sessionId, checked, input.amount_minor));
  const attempt = await initiateWithRail(ctx, started);
  return { attempt, replayed: started.replayed };
}

async function attemptOfSession(db: Queryable, sessionId: string, attemptId: string): Promise<AttemptRow> {
  const attempt = await store.findAttempt(db, attemptId);
  if (!attempt || attempt.session_id !== sessionId) throw errors.notFound('Payment attempt');
  return attempt;
}

export async function getAttemptStatus(ctx: PayerContext, sessionId: string, attemptId: string, refresh: boolean) {
  let attempt = await attemptOfSession(ctx.db, sessionId, attemptId);
  if (refresh && attempt.status === 'pending') {
    const adapter = railFor(attempt.environment, attempt.rail, ctx.liveRails);
    if (!adapter) throw railUnavailable(attempt.rail, attempt.environment);
    let check;
    try {
      check = await adapter.status(railInput(attempt));
    } catch {
      throw errors.unavailable(`The ${attempt.rail} provider did not answer; the payment is still being confirmed. Try again shortly.`);
    }
    if (check.outcome !== 'pending') {
      attempt = (await ctx.db.transaction((tx) => applyOutcome(tx, attemptId, check.outcome, { checkoutUrlHost: ctx.checkoutUrlHost, source: 'provider' }))).attempt;
    }
  }
  return toAttemptStatus(ctx.db, attempt, refresh);
}

export async function authorizeAttempt(ctx: PayerContext, sessionId: string, attemptId: string, code: string) {
  const attempt = await attemptOfSession(ctx.db, sessionId, attemptId);
  if (!VERIFICATION_CODE_PATTERN.test(code)) throw errors.invalidArgument('code must be the 4 to 10 character verification code from your phone.', [{ field: 'code', message: 'is malformed' }]);
  if (attempt.status !== 'pending') throw new SikaError('ATTEMPT_FINAL', `The attempt is ${attempt.status}; no code is needed.`);
  if (!attempt.verification_required) throw new SikaError('VERIFICATION_NOT_REQUIRED', 'This payment does not need a verification code.');
  const adapter = railFor(attempt.environment, attempt.rail, ctx.liveRails);
  if (!adapter) throw railUnavailable(attempt.rail, attempt.environment);
  let result;
  try {
    result = await adapter.authorize(railInput(attempt), code);
  } catch (error) {
    if (error instanceof VerificationRefusedError) throw new SikaError('PROVIDER_PAYMENT_REJECTED', error.message);
    throw errors.unavailable('The provider did not answer; try the code again shortly.');
  }
  const updated = await ctx.db.transaction((tx) => store.updateAttemptProvider(tx, attemptId, { rawStatus: result.rawStatus, verificationRequired: false }));
  return toAttemptStatus(ctx.db, updated, false);
}

export async function resendAttempt(ctx: PayerContext, sessionId: string, attemptId: string) {
  const attempt = await attemptOfSession(ctx.db, sessionId, attemptId);
  if (attempt.rail !== 'momo') throw errors.invalidArgument('Only Mobile Money prompts can be re-sent.');
  if (attempt.status !== 'pending') throw new SikaError('ATTEMPT_FINAL', `The attempt is ${attempt.status}; there is nothing to re-send.`);
  if (attempt.resend_count >= RESENDS_MAX) throw new SikaError('RESEND_LIMIT_REACHED', `The prompt was already re-sent ${RESENDS_MAX} times; start a new payment if it does not arrive.`);
  const adapter = railFor(attempt.environment, attempt.rail, ctx.liveRails);
  if (!adapter) throw railUnavailable(attempt.rail, attempt.environment);
  let result;
  try {
    result = await adapter.resend(railInput(attempt));
  } catch (error) {
    if (error instanceof RailUnavailableError) throw railUnavailable(attempt.rail, attempt.environment);
    throw errors.unavailable('The provider did not answer; try again shortly.');
  }
  const updated = await ctx.db.transaction((tx) => store.updateAttemptProvider(tx, attemptId, { rawStatus: result.rawStatus, resendCountDelta: 1 }));
  return toAttemptStatus(ctx.db, updated, false);
}

export async function createCashSlip(ctx: PayerContext, input: { session_id: string; amount_minor: number }) {
  return ctx.db.transaction(async (tx) => {
    const session = await store.lockSession(tx, input.session_id);
    if (!session) throw notFound();
    const pending = (await store.listAttempts(tx, session.id)).find((a) => a.status === 'pending');
    if (pending?.rail === 'cash') {
      const slip = await store.findSlipByAttempt(tx, pending.id);
      if (slip && slip.status === 'active' && slip.expires_at.getTime() > Date.now()) {
        if (slip.amount_minor !== input.amount_minor) {
          throw new SikaError('PAYMENT_AMOUNT_MISMATCH', `The cash total is ${slip.amount_minor} pesewas; use that amount.`);
        }
        return { slip, session, attemptId: pending.id, replayed: true };
      }
      // The slip expired with the session (the worker not there yet): no payment now. Without this the
      // pending cash attempt would be "replayed" below and a second active slip inserted for it (a 500).
      if (isPastExpiry(session)) throw errors.sessionNotPayable('expired');
    }
    const checked: CheckedAttempt = { rail: 'cash', operator: null, phone: null, accountName: null };
    const started = await startAttempt(tx, ctx, session.id, checked, input.amount_minor);
    const reference = newSlipReference();
    const slip = await store.insertCashSlip(tx, {
      id: newId('slip'),
      slip_token: randomToken(32),
      reference,
      session_id: session.id,
      attempt_id: started.attempt.id,
      merchant_id: session.merchant_id,
      environment: session.environment,
      amount_minor: started.attempt.amount_charged_minor,
      currency: session.currency,
      expires_at: session.expires_at,
    });
    await store.updateAttemptProvider(tx, started.attempt.id, {
      providerReference: reference,
      rawStatus: 'AWAITING_DEPOSIT',
      instructions: { slip_reference: reference, slip_token: slip.slip_token, expires_at: slip.expires_at.toISOString() },
    });
    return { slip, session, attemptId: started.attempt.id, replayed: false };
  });
}

export async function toSlipResponse(db: Queryable, slip: store.CashSlipRow, replayed: boolean) {
  const session = (await store.findPublicSession(db, slip.session_id))!;
  const active = slip.status === 'active' && slip.expires_at.getTime() > Date.now();
  return {
    slip_token: slip.slip_token,
    reference: slip.reference,
    amount_minor: slip.amount_minor,
    currency: slip.currency,
    merchant_name: session.merchant_name,
    session_reference: session.id,
    invoice_ref: session.invoice_ref,
    description: session.description ?? '',
    customer_name: session.customer_name ?? '',
    status: active ? slip.status : slip.status === 'active' ? 'expired' : slip.status,
    expires_at: slip.expires_at.toISOString(),
    replayed,
    can_record: active,
  };
}

/** Applies a simulated outcome to a Test attempt: one path for the simulate endpoint and the payer page's Test buttons. */
async function applySimulatedOutcome(tx: Queryable, attempt: AttemptRow, outcome: ProviderOutcome, checkoutUrlHost: string) {
  if (attempt.environment !== 'test') throw errors.forbidden('Simulation is for Test payments only; Live payments are decided by their providers.');
  const applied = await applyOutcome(tx, attempt.id, outcome, { checkoutUrlHost, source: 'simulated' });
  return toAttemptStatus(tx, applied.attempt, false);
}

/** Test mode: decide an attempt's outcome (SPEC 4.1 simulate). Live keys are refused. */
export async function simulate(tx: Queryable, principal: ApiPrincipal, attemptId: string, outcome: ProviderOutcome, checkoutUrlHost: string) {
  if (principal.environment !== 'test') throw errors.forbidden('Simulation is for Test keys only; Live payments are decided by their providers.');
  const attempt = await store.findAttempt(tx, attemptId);
  if (!attempt || attempt.merchant_id !== principal.merchantId || attempt.environment !== principal.environment) throw errors.notFound('Payment attempt');
  return applySimulatedOutcome(tx, attempt, outcome, checkoutUrlHost);
}

/**
 * Test mode, from the hosted page's outcome buttons (no API key: the session id is the capability, as on
 * every payer endpoint). Only attempts of this session, and only Test sessions: a Live session is 403.
 */
export async function simulateForSession(tx: Queryable, sessionId: string, attemptId: string, outcome: ProviderOutcome, checkoutUrlHost: string) {
  const session = await store.findPublicSession(tx, sessionId);
  if (!session) throw notFound();
  if (session.environment !== 'test') throw errors.forbidden('Test outcomes are for Test checkouts only; Live payments are decided by their providers.');
  return applySimulatedOutcome(tx, await attemptOfSession(tx, sessionId, attemptId), outcome, checkoutUrlHost);
}

/** A teller records a cash deposit for a slip: the attempt is paid and the session succeeds. */
export async function recordCashDeposit(db: Db, checkoutUrlHost: string, input: { reference: string; branchId: string; amountMinor: number }, actor: Actor | null = null) {
  return db.transaction(async (tx) => {
    const slip = await store.findSlipByReference(tx, input.reference.trim().toUpperCase());
    if (!slip) throw errors.notFound('Cash slip');
    if (slip.status !== 'active') throw new SikaError('SLIP_NOT_RECORDABLE', `This slip is ${slip.status}; do not take the cash.`);
    if (slip.expires_at.getTime() <= Date.now()) throw new SikaError('SLIP_NOT_RECORDABLE', 'This slip has expired; do not take the cash. The payer must start a new payment.');
    if (input.amountMinor !== slip.amount_minor) {
      throw new SikaError('PAYMENT_AMOUNT_MISMATCH', `The slip is for ${slip.amount_minor} pesewas; take exactly that amount.`);
    }
    const branch = await tx.query('SELECT 1 FROM bank_branches WHERE id = $1 AND active', [input.branchId]);
    if (branch.length === 0) throw errors.invalidArgument('branch is not an active bank branch.', [{ field: 'branch_id', message: 'is not an active branch' }]);
    await store.recordSlipBranch(tx, slip.id, input.branchId);
    const applied = await applyOutcome(tx, slip.attempt_id, 'paid', { checkoutUrlHost, source: 'teller' });
    if (actor) {
      await audit(tx, {
        actor,
        merchantId: slip.merchant_id,
        action: 'cash_slip.record_deposit',
        objectType: 'cash_slip',
        objectId: slip.reference,
        before: { status: slip.status },
        after: { status: 'used', branch_id: input.branchId, amount_minor: input.amountMinor, attempt: applied.attempt.id, session_status: applied.session.status },
      });
    }
    return applied;
  });
}
