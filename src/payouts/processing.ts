// Live processing (DESIGN §3 Payouts): a worker claims due payouts and moves each one step on: the
// recipient check (the provider's name enquiry, compared with the name the merchant gave), then the
// transfer, then waiting for its result. No transaction spans a provider call. The provider and our
// reference with it are recorded before the transfer is sent; a lost answer is asked about with that
// reference, and the transfer is sent again only when the provider says it never saw it.
import type { Db, Queryable } from '../db/index.ts';
import { stepEachClaimed } from '../lib/claimed-steps.ts';
import { LiveProviders } from '../rails/live.ts';
import type { PayoutForRail, PayoutRail, TransferOutcome } from '../rails/payouts.ts';
import { ProviderNoAnswerError, ProviderRefusedError } from '../rails/types.ts';
import { movePayout } from './lifecycle.ts';
import { namesMatch } from './name-match.ts';
import {
  advanceProcessingStep,
  duePayoutIds,
  findPayoutById,
  findPayoutByProviderReference,
  holdForClaim,
  updatePayout,
  type PayoutRow,
} from './payout-store.ts';
import { findRecipient, setRecipientVerification, type RecipientRow } from './recipient-store.ts';

/** How long a claimed payout is pushed back while a worker advances it (another worker skips it meanwhile). */
const CLAIM_HOLD_S = 60;
/** A transfer the provider reports pending is asked about again after this long, doubling each time... */
const PAYOUT_STATUS_POLL_FIRST_MS = 5_000;
/** ...up to this (a transfer pending for days is still asked about every half hour). */
const PAYOUT_STATUS_POLL_MAX_MS = 30 * 60_000;
/** A provider that refused a transfer before accepting it (down, 5xx) is tried again after this long. */
const PROVIDER_REFUSED_RETRY_MS = 30_000;
/** Live payouts a worker pass claims at most. */
const DUE_PAYOUTS_PER_PASS_MAX = 20;

type Log = { warn(obj: object, msg: string): void; error?(obj: object, msg: string): void };

/** The delay before the (n+1)th status question about a pending transfer: 5 s, 10 s, 20 s ... at most 30 min. */
export const statusPollDelayMs = (statusChecks: number): number =>
  Math.min(PAYOUT_STATUS_POLL_FIRST_MS * 2 ** Math.min(statusChecks, 20), PAYOUT_STATUS_POLL_MAX_MS);

function railPayout(payout: PayoutRow, recipient: RecipientRow): PayoutForRail {
  return {
    payoutId: payout.id,
    reference: payout.reference,
    providerReference: payout.provider_reference,
    amountMinor: payout.amount_minor,
    currency: payout.currency,
    recipient: {
      accountType: recipient.account_type,
      bankCode: recipient.bank_code,
      accountNumber: recipient.account_number,
      network: recipient.network,
      phone: recipient.phone,
      accountName: recipient.account_name,
    },
  };
}

const targetOf = (recipient: RecipientRow) => ({ accountType: recipient.account_type, network: recipient.network });

/** The provider a payout is recorded with, else the first that pays its recipient. */
function railOf(providers: LiveProviders, payout: PayoutRow, recipient: RecipientRow): PayoutRail | null {
  if (payout.provider) return providers.payoutByName(payout.provider);
  return providers.payoutsFor(targetOf(recipient))[0] ?? null;
}

/** Applies a transfer's outcome to a payout still processing, or a return to one already paid. */
export async function applyTransferOutcome(db: Db, payoutId: string, outcome: TransferOutcome): Promise<void> {
  await db.transaction(async (tx) => {
    const payout = (await findPayoutById(tx, payoutId, true))!;
    if (payout.status === 'paid' && outcome.outcome === 'returned') {
      await movePayout(tx, payout, 'returned', { return_reference: outcome.returnReference });
      return;
    }
    if (payout.status !== 'processing') return;
    switch (outcome.outcome) {
      case 'paid':
      case 'returned':
        await movePayout(tx, payout, 'paid', {
          bank_reference: outcome.bankReference,
          processing_step: null,
          next_step_at: null,
          paid: true,
        });
        // A processing payout the bank already returned is paid first, then returned.
        if (outcome.outcome === 'returned') {
          await movePayout(tx, (await findPayoutById(tx, payoutId))!, 'returned', {
            return_reference: outcome.returnReference,
          });
        }
        return;
      case 'failed':
        await movePayout(tx, payout, 'failed', {
          failure_reason: outcome.reason,
          processing_step: null,
          next_step_at: null,
        });
        return;
      case 'pending':
        await updatePayout(tx, payoutId, {
          bank_reference: outcome.bankReference,
          processing_step: 'awaiting_result',
          status_checks: payout.status_checks + 1,
          next_step_at: new Date(Date.now() + statusPollDelayMs(payout.status_checks)),
        });
        return;
      case 'unknown':
        // The provider never saw the transfer (lost before it arrived): send it again under the same
        // reference (the provider deduplicates by it).
        await updatePayout(tx, payoutId, { processing_step: 'transfer', next_step_at: new Date() });
    }
  });
}

async function checkRecipientStep(db: Db, rail: PayoutRail, payout: PayoutRow, forRail: PayoutForRail): Promise<void> {
  const check = await rail.checkRecipient(forRail);
  const verdict = !check.ok
    ? check
    : check.resolvedName && !namesMatch(forRail.recipient.accountName, check.resolvedName)
      ? { ok: false as const, reason: 'name_mismatch' }
      : check;
  await db.transaction(async (tx) => {
    const current = (await findPayoutById(tx, payout.id, true))!;
    if (current.status !== 'processing' || current.processing_step !== 'recipient_check') return; // cancelled meanwhile
    if (!verdict.ok) {
      await setRecipientVerification(tx, current.recipient_id, 'rejected', verdict.reason);
      await movePayout(tx, current, 'failed', {
        failure_reason: `recipient rejected: ${verdict.reason}`,
        processing_step: null,
        next_step_at: null,
      });
      return;
    }
    await setRecipientVerification(tx, current.recipient_id, 'verified', null);
    // The intent to transfer is recorded before the call: the provider, our reference with it, and the step.
    // From here the payout can no longer be cancelled.
    await updatePayout(tx, payout.id, {
      provider: rail.provider,
      provider_reference: rail.reference?.({ payoutId: payout.id, reference: payout.reference }) ?? payout.id,
      processing_step: 'transfer',
      next_step_at: new Date(),
    });
  });
}

/** Sends the transfer; a provider that refuses before accepting is replaced by the next one that pays the recipient. */
async function transferStep(
  db: Db,
  providers: LiveProviders,
  rail: PayoutRail,
  payout: PayoutRow,
  recipient: RecipientRow,
  log?: Log,
): Promise<void> {
  // Only one processor sends the transfer: the step moves on before the call, if it is still at transfer.
  if (
    !(await advanceProcessingStep(
      db,
      payout.id,
      'transfer',
      'awaiting_result',
      new Date(Date.now() + CLAIM_HOLD_S * 1000),
    ))
  )
    return;
  let outcome: TransferOutcome;
  try {
    outcome = await rail.transfer(railPayout(payout, recipient));
  } catch (error) {
    if (error instanceof ProviderRefusedError && error.declined) {
      outcome = { outcome: 'failed', reason: `provider declined: ${error.message}` };
    } else if (error instanceof ProviderRefusedError) {
      const candidates = providers.payoutsFor(targetOf(recipient));
      const next = candidates[candidates.indexOf(rail) + 1];
      log?.warn(
        { err: error, payout_id: payout.id, provider: rail.provider, next: next?.provider ?? null },
        'payout provider refused the transfer before accepting it',
      );
      await db.transaction(async (tx) => {
        const current = (await findPayoutById(tx, payout.id, true))!;
        if (current.status !== 'processing' || current.provider !== rail.provider) return;
        await updatePayout(tx, payout.id, {
          ...(next
            ? {
                provider: next.provider,
                provider_reference: next.reference?.({ payoutId: payout.id, reference: payout.reference }) ?? payout.id,
              }
            : {}),
          processing_step: 'transfer',
          next_step_at: new Date(Date.now() + (next ? 0 : PROVIDER_REFUSED_RETRY_MS)),
        });
      });
      return;
    } else if (error instanceof ProviderNoAnswerError) {
      // It may have been accepted: ask, never resend blindly (the awaiting_result step asks at its next turn).
      log?.warn({ err: error, payout_id: payout.id }, 'payout transfer answer lost; asking the provider');
      outcome = await rail
        .status(railPayout(payout, recipient))
        .catch(() => ({ outcome: 'pending', bankReference: payout.bank_reference }) as TransferOutcome);
    } else {
      throw error;
    }
  }
  await applyTransferOutcome(db, payout.id, outcome);
}

/** One step of one Live payout. */
async function processPayout(db: Db, providers: LiveProviders, payoutId: string, log?: Log): Promise<void> {
  const payout = await findPayoutById(db, payoutId);
  // Held by an operator since the claim (holds.ts): no provider call until it is released.
  if (payout?.status !== 'processing' || payout.held_at) return;
  const recipient = (await findRecipient(db, payout.merchant_id, payout.environment, payout.recipient_id))!;
  const rail = railOf(providers, payout, recipient);
  if (!rail) {
    log?.warn({ payout_id: payoutId, provider: payout.provider }, 'no configured provider for this payout; it waits');
    await db.transaction((tx) =>
      updatePayout(tx, payoutId, { next_step_at: new Date(Date.now() + PROVIDER_REFUSED_RETRY_MS) }),
    );
    return;
  }
  if (payout.processing_step === 'recipient_check')
    return checkRecipientStep(db, rail, payout, railPayout(payout, recipient));
  if (payout.processing_step === 'transfer') return transferStep(db, providers, rail, payout, recipient, log);
  await applyTransferOutcome(db, payoutId, await rail.status(railPayout(payout, recipient)));
}

/** How a provider's notification names a payout: by the provider's reference, or by our payout id. */
export type PayoutNamed = { providerReference: string } | { payoutId: string };

/**
 * The payout a provider's notification names, read once (the caller passes it on to checkPayoutNow; it is
 * locked again only in the transaction that applies the answer). By our id, only a payout that provider holds
 * under a reference of ours; null when there is none.
 */
export async function payoutNamedBy(db: Queryable, provider: string, named: PayoutNamed): Promise<PayoutRow | null> {
  if ('providerReference' in named) return findPayoutByProviderReference(db, provider, named.providerReference);
  const payout = await findPayoutById(db, named.payoutId);
  return payout && payout.provider === provider && payout.provider_reference ? payout : null;
}

/** Asks a payout's provider now (a provider webhook said something happened to it); payout as just read. */
export async function checkPayoutNow(db: Db, providers: LiveProviders, payout: PayoutRow): Promise<void> {
  if (!payout.provider || !payout.provider_reference) return;
  if (payout.status !== 'processing' && payout.status !== 'paid') return;
  const recipient = (await findRecipient(db, payout.merchant_id, payout.environment, payout.recipient_id))!;
  const rail = providers.payoutByName(payout.provider);
  if (!rail) return;
  await applyTransferOutcome(db, payout.id, await rail.status(railPayout(payout, recipient)));
}

/**
 * Worker pass: claims due Live payouts (SKIP LOCKED, pushed back while worked on) and advances each one step.
 * Takes the configured providers, or one payout rail serving every recipient (tests, rehearsals). `only` limits the
 * pass to those payouts (a test's own, on a database other tests' passes share); the worker passes none.
 */
export async function processDuePayouts(
  db: Db,
  via: LiveProviders | PayoutRail,
  { log, only }: { log?: Log; only?: readonly string[] } = {},
): Promise<number> {
  const providers = via instanceof LiveProviders ? via : LiveProviders.none().withPayoutsFirst(via);
  if (!providers.paysOut) return 0;
  const ids = await db.transaction(async (tx: Queryable) => {
    const due = await duePayoutIds(tx, DUE_PAYOUTS_PER_PASS_MAX, only);
    for (const { id } of due) await holdForClaim(tx, id, CLAIM_HOLD_S);
    return due.map((row) => row.id);
  });
  return stepEachClaimed(
    ids,
    (id) => processPayout(db, providers, id, log),
    (error, id) => log?.warn({ err: error, payout_id: id }, 'payout step failed; it will be retried'),
  );
}
