// Starting a payment attempt under the session's row lock, shared by every rail and by cash slips: the
// payer's input checked, one attempt in progress per session, the amount equal to the current quote.
import type { Environment } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { checkPayerPhone, MOMO_NETWORKS, NETWORK_LABELS, type MomoNetwork } from '../lib/ghana.ts';
import { newId } from '../lib/ids.ts';
import { railsFor, type CollectionRail } from '../rails/index.ts';
import { findRail, railIds, type Rail } from '../rails/registry.ts';
import { feeSchedule } from './fee-settings.ts';
import { quoteRail } from './fees.ts';
import { ATTEMPTS_PER_SESSION_MAX, effectiveStatus, isPastExpiry, type AttemptRow } from './model.ts';
import { LinkClosedError, linkAvailabilityOf } from './payment-link-payments.ts';
import { sessionNotFound, type PayerContext } from './payer-view.ts';
import { moveAttempt, moveSession, type OutcomeContext } from './payments.ts';
import * as store from './store.ts';

export interface AttemptInput {
  rail: string;
  amount_minor: number;
  operator?: string;
  phone?: string;
  account_name?: string;
}

/** A new attempt on a rail (or network) the session does not offer (no provider serves it in the session's environment). */
const railNotOffered = (rail: string, network: MomoNetwork | null, environment: Environment, railOffered: boolean) =>
  new SikaError(
    'RAIL_NOT_OFFERED',
    network && railOffered
      ? `${NETWORK_LABELS[network]} payments are not offered for ${environment === 'live' ? 'Live' : 'Test'} checkouts; choose one of allowed_operators or another method.`
      : `${rail} payments are not offered for ${environment === 'live' ? 'Live' : 'Test'} checkouts; choose one of allowed_rails.`,
  );

export interface CheckedAttempt {
  rail: Rail;
  /** The Mobile Money network (the API's `operator` field). */
  network: MomoNetwork | null;
  phone: string | null;
  accountName: string | null;
}

export function checkAttemptInput(input: AttemptInput): CheckedAttempt {
  const rail = findRail(input.rail)?.id;
  if (!rail)
    throw errors.invalidArgument(`rail must be one of ${railIds().join(', ')}.`, [
      { field: 'rail', message: 'is not a payment method' },
    ]);
  const accountName = input.account_name?.trim() || null;
  if (rail !== 'momo') return { rail, network: null, phone: null, accountName };
  if (!input.operator || !(MOMO_NETWORKS as readonly string[]).includes(input.operator)) {
    throw errors.invalidArgument('operator must be mtn, telecel or at for Mobile Money.', [
      { field: 'operator', message: 'must be mtn, telecel or at' },
    ]);
  }
  const network = input.operator as MomoNetwork;
  if (!input.phone)
    throw errors.invalidArgument('phone is required for Mobile Money.', [{ field: 'phone', message: 'is required' }]);
  const check = checkPayerPhone(input.phone);
  if (!check.ok) throw errors.invalidArgument(check.message, [{ field: 'phone', message: check.message }]);
  return { rail, network, phone: check.phone, accountName };
}

const sameAttempt = (attempt: AttemptRow, input: CheckedAttempt, amountMinor: number) =>
  attempt.rail === input.rail &&
  attempt.amount_charged_minor === amountMinor &&
  attempt.network === input.network &&
  attempt.phone === input.phone;

/**
 * A started attempt: `adapters` are the providers to try in order (the first is recorded on the attempt
 * with our reference); none when an existing attempt was replayed.
 */
/** Draws of a random provider reference before giving up (one taken draw in billions is already rare). */
const REFERENCE_DRAWS_MAX = 5;

/**
 * Our reference for a new attempt with its provider. A random one (a short bank transfer reference) is
 * drawn again while an earlier attempt holds it, so the unique index never turns a rare repeat into an error.
 */
async function freshReference(tx: Queryable, adapter: CollectionRail, attemptId: string, rail: Rail): Promise<string> {
  if (!adapter.reference) return '';
  for (let draw = 1; ; draw++) {
    const reference = adapter.reference({ reference: attemptId, rail });
    if (draw >= REFERENCE_DRAWS_MAX || !(await store.findAttemptByProviderReference(tx, adapter.provider, reference)))
      return reference;
  }
}

export type Started = { attempt: AttemptRow; replayed: boolean; adapters: CollectionRail[]; payerEmail: string | null };

/**
 * Starts (or replays) an attempt under the session's row lock: one attempt in progress per session.
 * A pending cash slip gives way to another method (no money can arrive on it without a teller).
 */
export async function startAttempt(
  tx: Queryable,
  ctx: PayerContext,
  sessionId: string,
  input: CheckedAttempt,
  amountMinor: number,
): Promise<Started> {
  const outcomeCtx: OutcomeContext = { checkoutUrlHost: ctx.checkoutUrlHost, source: 'payer' };
  let session = await store.lockSession(tx, sessionId);
  if (!session) throw sessionNotFound();
  // Attempts are only added under this lock: the list is every attempt the session has, its length their count.
  const attempts = await store.listAttempts(tx, sessionId);
  const pending = attempts.find((a) => a.status === 'pending');
  if (pending && sameAttempt(pending, input, amountMinor))
    return { attempt: pending, replayed: true, adapters: [], payerEmail: null };
  if (pending && pending.rail === 'cash' && input.rail !== 'cash') {
    await moveAttempt(tx, pending, 'cancelled', 'CANCELLED:payer_switched_method');
    session = await moveSession(tx, session, 'open', outcomeCtx);
  } else if (pending) {
    throw new SikaError(
      'PAYMENT_ATTEMPT_PENDING',
      'A payment is already in progress for this checkout; wait for it to finish, or cancel it (POST its /cancel) to use another number or method.',
    );
  }
  if (attempts.length >= ATTEMPTS_PER_SESSION_MAX) {
    throw new SikaError(
      'ATTEMPTS_LIMIT_REACHED',
      `This checkout has had ${ATTEMPTS_PER_SESSION_MAX} payment attempts, as many as one checkout may have; ask the merchant for a new payment link.`,
    );
  }
  if (session.status !== 'open' || isPastExpiry(session)) throw errors.sessionNotPayable(effectiveStatus(session));
  // A link's session takes no payment once its link is used up, turned off or past its time. Refused as a
  // session that is not open is (SESSION_NOT_PAYABLE, which the payer page shows); the refusal undoes this
  // transaction, so the caller expires the session in one of its own (LinkClosedError).
  const link = await linkAvailabilityOf(tx, session);
  if (link !== 'available') throw new LinkClosedError(link);
  const adapters = railsFor(session.environment, input.rail, ctx.providers, input.network);
  const adapter = adapters[0];
  if (!adapter)
    throw railNotOffered(
      input.rail,
      input.network,
      session.environment,
      railsFor(session.environment, input.rail, ctx.providers).length > 0,
    );
  const schedule = await feeSchedule(tx, session.merchant_id, session.environment);
  const quote = quoteRail(session.amount_minor, schedule[input.rail], session.currency);
  if (amountMinor !== quote.total_minor) {
    throw new SikaError(
      'PAYMENT_AMOUNT_MISMATCH',
      `The amount for ${input.rail} is now ${quote.total_minor} pesewas; get a fresh quote and try again.`,
    );
  }
  const id = newId('att');
  const attempt = await store.insertAttempt(tx, {
    id,
    session_id: session.id,
    merchant_id: session.merchant_id,
    environment: session.environment,
    rail: input.rail,
    provider: adapter.provider,
    // Our reference with the provider is part of the intent: written before the provider is called, so a
    // lost answer is asked about with it, never sent again under another.
    provider_reference: await freshReference(tx, adapter, id, input.rail),
    network: input.network,
    phone: input.phone,
    account_name: input.accountName,
    raw_status: 'CREATED',
    base_minor: session.amount_minor,
    fee_minor: quote.fee_minor,
    bearer: quote.bearer,
    amount_charged_minor: quote.total_minor,
    currency: session.currency,
  });
  await moveSession(tx, session, 'pending', outcomeCtx, undefined, attempt);
  return { attempt, replayed: false, adapters, payerEmail: session.customer_email };
}
