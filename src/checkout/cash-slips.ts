// Cash deposit slips (DESIGN §3): the payer's slip for a session (a cash attempt, replayed while it is
// active), its view, and a teller recording the deposit at a branch (the attempt paid, the session a success).
import { audit, type Actor } from '../audit/log.ts';
import type { Db, Queryable } from '../db/index.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { newId, randomToken } from '../lib/ids.ts';
import { startAttempt, type CheckedAttempt } from './attempt-start.ts';
import { isPastExpiry } from './model.ts';
import { sessionNotFound, type PayerContext } from './payer-view.ts';
import { applyOutcome, closingOnClosedLink } from './payments.ts';
import { formatGhs } from '../lib/ghana.ts';
import * as store from './store.ts';

/** A slip reference is SK- and two groups of characters a teller can read out and type (no 0, 1, I or O). */
const SLIP_REFERENCE_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';
const SLIP_REFERENCE_GROUP_CHARS = 4;
const SLIP_REFERENCE_CHARS = 2 * SLIP_REFERENCE_GROUP_CHARS;
/** The slip token (the printable slip's capability), in random base62 characters. */
const SLIP_TOKEN_CHARS = 32;

function newSlipReference(): string {
  let code = '';
  for (const char of randomToken(2 * SLIP_REFERENCE_CHARS)) {
    if (code.length === SLIP_REFERENCE_CHARS) break;
    code += SLIP_REFERENCE_ALPHABET[char.charCodeAt(0) % SLIP_REFERENCE_ALPHABET.length];
  }
  return `SK-${code.slice(0, SLIP_REFERENCE_GROUP_CHARS)}-${code.slice(SLIP_REFERENCE_GROUP_CHARS, SLIP_REFERENCE_CHARS)}`;
}

/**
 * A slip reference as a teller or an operator typed or copied it, in its stored form (SK-XXXX-XXXX): any
 * case, with or without the dashes or with spaces instead (`skn8sgmj57`, `SK N8SG MJ57` and `SK-N8SG-MJ57`
 * are one slip). Text that is not SK and 8 characters of the alphabet is returned trimmed and upper-cased,
 * so the lookup finds nothing and the page says so.
 */
export function normaliseSlipReference(text: string): string {
  const compact = text.toUpperCase().replace(/[^A-Z0-9]+/g, '');
  const body = compact.startsWith('SK') ? compact.slice(2) : '';
  if (body.length !== SLIP_REFERENCE_CHARS || [...body].some((char) => !SLIP_REFERENCE_ALPHABET.includes(char)))
    return text.trim().toUpperCase();
  return `SK-${body.slice(0, SLIP_REFERENCE_GROUP_CHARS)}-${body.slice(SLIP_REFERENCE_GROUP_CHARS)}`;
}

/** Every slip reference written in the text (a bank narration: any case, dashes or spaces anywhere), each once, in its stored form. */
export function slipReferencesIn(text: string): string[] {
  const compact = text.toUpperCase().replace(/[^A-Z0-9]+/g, '');
  const found: string[] = [];
  for (let at = compact.indexOf('SK'); at >= 0; at = compact.indexOf('SK', at + 1)) {
    const candidate = normaliseSlipReference(compact.slice(at, at + 2 + SLIP_REFERENCE_CHARS));
    if (candidate.includes('-') && !found.includes(candidate)) found.push(candidate);
  }
  return found;
}

/** The slips these references name (those that exist), with what an operator needs to recognise them. */
export async function slipsByReferences(db: Queryable, references: readonly string[]) {
  const slips = [];
  for (const reference of references) {
    const slip = await store.findSlipByReference(db, reference);
    if (!slip) continue;
    const view = await toSlipResponse(db, slip, false);
    slips.push({
      reference: slip.reference,
      environment: slip.environment,
      status: view.status,
      amount_minor: slip.amount_minor,
      merchant_name: view.merchant_name,
    });
  }
  return slips;
}
export type SlipSummary = Awaited<ReturnType<typeof slipsByReferences>>[number];

/** Why a teller takes no cash for a Test slip: Test money is never real, so no desk records it. */
export const TEST_SLIP_REFUSAL =
  'This is a Test slip: take no cash for it. Test deposits are recorded through the Test simulator only.';

export const createCashSlip = (ctx: PayerContext, input: { session_id: string; amount_minor: number }) =>
  closingOnClosedLink(ctx.db, input.session_id, { ...ctx, source: 'payer' }, () => printCashSlip(ctx, input));

async function printCashSlip(ctx: PayerContext, input: { session_id: string; amount_minor: number }) {
  return ctx.db.transaction(async (tx) => {
    const session = await store.lockSession(tx, input.session_id);
    if (!session) throw sessionNotFound();
    const pending = (await store.listAttempts(tx, session.id)).find((a) => a.status === 'pending');
    if (pending?.rail === 'cash') {
      const slip = await store.findSlipByAttempt(tx, pending.id);
      if (slip && slip.status === 'active' && slip.expires_at.getTime() > Date.now()) {
        if (slip.amount_minor !== input.amount_minor) {
          throw new SikaError(
            'PAYMENT_AMOUNT_MISMATCH',
            `The cash total is ${slip.amount_minor} pesewas; use that amount.`,
          );
        }
        return { slip, session, attemptId: pending.id, replayed: true };
      }
      // The slip expired with the session (the worker not there yet): no payment now. Without this the
      // pending cash attempt would be "replayed" below and a second active slip inserted for it (a 500).
      if (isPastExpiry(session)) throw errors.sessionNotPayable('expired');
    }
    const checked: CheckedAttempt = { rail: 'cash', network: null, phone: null, accountName: null };
    const started = await startAttempt(tx, ctx, session.id, checked, input.amount_minor);
    const reference = newSlipReference();
    const slip = await store.insertCashSlip(tx, {
      id: newId('slip'),
      slip_token: randomToken(SLIP_TOKEN_CHARS),
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
      instructions: {
        slip_reference: reference,
        slip_token: slip.slip_token,
        expires_at: slip.expires_at.toISOString(),
      },
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

/**
 * A teller records a cash deposit for a Live slip: the attempt is paid and the session succeeds. A Test slip
 * is refused before anything is written (its deposits are recorded through the Test simulator only).
 */
export async function recordCashDeposit(
  db: Db,
  checkoutUrlHost: string,
  input: { reference: string; branchId: string; amountMinor: number },
  actor: Actor | null = null,
) {
  return db.transaction(async (tx) => {
    const slip = await store.findSlipByReference(tx, normaliseSlipReference(input.reference));
    if (!slip) throw errors.notFound('Cash slip');
    if (slip.environment !== 'live') throw new SikaError('SLIP_NOT_RECORDABLE', TEST_SLIP_REFUSAL);
    if (slip.status !== 'active')
      throw new SikaError('SLIP_NOT_RECORDABLE', `This slip is ${slip.status}; do not take the cash.`);
    if (slip.expires_at.getTime() <= Date.now())
      throw new SikaError(
        'SLIP_NOT_RECORDABLE',
        'This slip has expired; do not take the cash. The payer must start a new payment.',
      );
    if (input.amountMinor !== slip.amount_minor) {
      throw new SikaError(
        'PAYMENT_AMOUNT_MISMATCH',
        `The slip is for ${formatGhs(slip.amount_minor)}; take exactly that amount.`,
      );
    }
    if (!(await store.isActiveBranch(tx, input.branchId)))
      throw errors.invalidArgument('branch is not an active bank branch.', [
        { field: 'branch_id', message: 'is not an active branch' },
      ]);
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
        after: {
          status: 'used',
          branch_id: input.branchId,
          amount_minor: input.amountMinor,
          attempt: applied.attempt.id,
          session_status: applied.session.status,
        },
      });
    }
    return applied;
  });
}
