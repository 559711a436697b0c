// Sending a new attempt to its provider (issue 16's failure semantics). The intent (provider and our
// reference) was committed by startAttempt; here the provider is called outside any transaction, then the
// answer is recorded:
// - refused before accepting (connection refused, 5xx on create): the next provider in LIVE_PROVIDER_ORDER
//   is tried under a fresh intent; when none is left the attempt is cancelled and the payer gets 503
//   PROVIDER_RAIL_UNAVAILABLE with Retry-After (nothing recorded as paid, no failed try counted);
// - declined (the provider refused this payer's number or amount): the attempt fails;
// - no answer (timeout, reset): the provider may have accepted, so it is asked with our reference, never
//   sent again; an attempt it has no record of stays pending ("unconfirmed") until status checks settle it;
// - accepted: the answer is recorded, retried when recording fails (never turned into "failed"); if it
//   still cannot be recorded the attempt stays pending with its reference and status checks find it.
import { SikaError, errors } from '../lib/errors.ts';
import { failureMessage } from '../lib/payment-failures.ts';
import {
  ProviderNoAnswerError,
  ProviderRefusedError,
  type CollectionRail,
  type Initiated,
  type StatusCheck,
} from '../rails/index.ts';
import type { Started } from './attempt-start.ts';
import { railInput } from './attempt-rail-input.ts';
import type { AttemptRow } from './model.ts';
import type { PayerContext } from './payer-view.ts';
import { applyOutcome } from './payments.ts';
import { factsOf } from './provider-status.ts';
import * as store from './store.ts';

/** When a payer may try again after every provider refused to start a payment. */
export const PROVIDER_REFUSED_RETRY_AFTER_S = 5;
/** Recording a provider's answer is tried this many times before the attempt is left to status checks. */
const RECORD_TRIES_MAX = 3;
const RECORD_RETRY_DELAY_MS = 150;
/** raw_status of an attempt whose provider's answer was lost and which the provider could not yet confirm. */
export const UNCONFIRMED_RAW_STATUS = 'INITIATION_UNCONFIRMED';

type Log = PayerContext['log'];

/** Runs a recording transaction, retrying it: the provider has acted, so a database hiccup must not lose that. */
export async function recordWithRetries<T>(work: () => Promise<T>, log?: Log): Promise<T> {
  for (let tryNumber = 1; ; tryNumber++) {
    try {
      return await work();
    } catch (error) {
      if (error instanceof SikaError || tryNumber >= RECORD_TRIES_MAX) throw error;
      log?.warn({ err: error, try_number: tryNumber }, 'recording a provider answer failed; retrying');
      await new Promise((resolve) => setTimeout(resolve, RECORD_RETRY_DELAY_MS * tryNumber));
    }
  }
}

const outcomeCtx = (ctx: PayerContext, source: string) => ({
  checkoutUrlHost: ctx.checkoutUrlHost,
  source,
  providers: ctx.providers,
});

async function recordInitiated(
  ctx: PayerContext,
  adapter: CollectionRail,
  attempt: AttemptRow,
  initiated: Initiated,
): Promise<AttemptRow> {
  const answer = {
    providerReference: initiated.providerReference || undefined,
    rawStatus: initiated.rawStatus,
    verificationRequired: initiated.verificationRequired,
    // Whether a prompt can be sent again is the provider's to say (issue 31): the page offers it only then.
    instructions:
      attempt.rail === 'momo'
        ? { ...initiated.instructions, resend_supported: adapter.resendSupported === true }
        : initiated.instructions,
  };
  const decided = initiated.outcome && initiated.outcome !== 'pending' ? initiated.outcome : null;
  const inTransaction = () =>
    ctx.db.transaction(async (tx) => {
      let updated = await store.updateAttemptProvider(tx, attempt.id, answer);
      if (decided) {
        const facts = initiated.failureReason ? { failureReason: initiated.failureReason } : undefined;
        updated = (
          await applyOutcome(tx, attempt.id, decided, {
            ...outcomeCtx(ctx, 'provider'),
            providerStatus: initiated.rawStatus,
            facts,
          })
        ).attempt;
      }
      return updated;
    });
  // Most answers only say "pending, here is our reference": one self-contained write, no transaction.
  const work = async () =>
    (!decided && (await store.writeAttemptProvider(ctx.db, attempt.id, answer))) || inTransaction();
  try {
    return await recordWithRetries(work, ctx.log);
  } catch (error) {
    if (error instanceof SikaError) throw error;
    ctx.log?.error(
      { err: error, attempt_id: attempt.id },
      'the provider accepted a payment that could not be recorded; status checks will find it',
    );
    throw errors.unavailable(
      'The payment was sent to your provider but could not be confirmed yet; check its status shortly.',
    );
  }
}

/** The answer to a create was lost: ask the provider about our reference instead of sending it again. */
async function confirmAfterLostAnswer(
  ctx: PayerContext,
  adapter: CollectionRail,
  attempt: AttemptRow,
): Promise<AttemptRow> {
  let outcome: StatusCheck['outcome'] = 'unknown';
  let rawStatus = UNCONFIRMED_RAW_STATUS;
  let facts: ReturnType<typeof factsOf> | undefined;
  try {
    const check = await adapter.status(railInput(attempt));
    outcome = check.outcome;
    facts = factsOf(check);
    if (check.outcome !== 'unknown') rawStatus = check.rawStatus;
  } catch (error) {
    ctx.log?.warn(
      { err: error, attempt_id: attempt.id },
      'provider status query after a lost answer failed; status checks will ask again',
    );
  }
  return recordWithRetries(
    () =>
      ctx.db.transaction(async (tx) => {
        const updated = await store.updateAttemptProvider(tx, attempt.id, { rawStatus });
        if (outcome === 'unknown' || outcome === 'pending') return updated;
        return (
          await applyOutcome(tx, attempt.id, outcome, {
            ...outcomeCtx(ctx, 'provider'),
            providerStatus: rawStatus,
            facts,
          })
        ).attempt;
      }),
    ctx.log,
  );
}

/**
 * Before another provider is tried after an error answer: does this one hold our reference after all?
 * A definite "no record", or a provider refusing that question too (it is down), lets the payment go
 * elsewhere; a question that gets no answer keeps it with this provider.
 */
async function providerHasIt(adapter: CollectionRail, attempt: AttemptRow): Promise<boolean> {
  if (!attempt.provider_reference) return false; // the provider names the reference: without an answer it has none for us
  try {
    return (await adapter.status(railInput(attempt))).outcome !== 'unknown';
  } catch (error) {
    // Refusing the status query too (down, 5xx): it is out, the payment did not get in. No answer at all: it may have.
    return !(error instanceof ProviderRefusedError);
  }
}

/** Sends a started attempt to its providers in order (see the top of this file). */
export async function initiateWithProviders(ctx: PayerContext, started: Started): Promise<AttemptRow> {
  let attempt = started.attempt;
  const { adapters } = started;
  for (let index = 0; index < adapters.length; index++) {
    const adapter = adapters[index]!;
    if (index > 0) {
      // A fresh intent for the next provider, only while the attempt is still the one the first refused.
      const reference = adapter.reference?.({ reference: attempt.id, rail: attempt.rail }) ?? '';
      const switched = await ctx.db.transaction((tx) =>
        store.switchAttemptProvider(tx, attempt.id, attempt.provider, adapter.provider, reference),
      );
      if (!switched) return (await store.findAttempt(ctx.db, attempt.id))!;
      attempt = switched;
    }
    let initiated: Initiated;
    try {
      initiated = await adapter.initiate(
        railInput(attempt, { checkoutUrlHost: ctx.checkoutUrlHost, payerEmail: started.payerEmail }),
      );
    } catch (error) {
      if (error instanceof SikaError) throw error;
      if (error instanceof ProviderRefusedError && error.declined) {
        const facts = error.failureReason ? { failureReason: error.failureReason } : undefined;
        await recordWithRetries(
          () =>
            ctx.db.transaction((tx) =>
              applyOutcome(tx, attempt.id, 'failed', { ...outcomeCtx(ctx, 'provider_declined'), facts }),
            ),
          ctx.log,
        );
        throw new SikaError(
          'PROVIDER_PAYMENT_REJECTED',
          error.failureReason
            ? failureMessage(error.failureReason)
            : `The provider declined this payment: ${error.message}. Check the details and try again, or choose another method.`,
        );
      }
      if (
        error instanceof ProviderRefusedError &&
        error.httpStatus !== null &&
        (await providerHasIt(adapter, attempt))
      ) {
        // It answered an error but holds the payment anyway (a 5xx after it created the request): that one
        // provider has it, so no other provider may be tried; it is followed like a lost answer.
        return confirmAfterLostAnswer(ctx, adapter, attempt);
      }
      if (error instanceof ProviderRefusedError) {
        ctx.log?.warn(
          { err: error, attempt_id: attempt.id, provider: adapter.provider },
          'provider refused a new payment before accepting it',
        );
        if (index + 1 < adapters.length) continue;
        await recordWithRetries(
          () =>
            ctx.db.transaction((tx) =>
              applyOutcome(tx, attempt.id, 'cancelled', outcomeCtx(ctx, 'provider_unavailable')),
            ),
          ctx.log,
        );
        throw new SikaError(
          'PROVIDER_RAIL_UNAVAILABLE',
          `The ${attempt.rail} provider is not taking payments right now; try again shortly or choose another method.`,
          {
            retryAfterSeconds: PROVIDER_REFUSED_RETRY_AFTER_S,
          },
        );
      }
      // No answer, or an answer we could not read: the provider may have accepted. Ask; never resend.
      if (!(error instanceof ProviderNoAnswerError))
        ctx.log?.error(
          { err: error, attempt_id: attempt.id },
          'unexpected error from a provider; asking it about the payment',
        );
      return confirmAfterLostAnswer(ctx, adapter, attempt);
    }
    return recordInitiated(ctx, adapter, attempt, initiated);
  }
  return attempt;
}
