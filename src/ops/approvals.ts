// Two operators for money (issue 30). A decision that moves money is filed as a request, with a reason and
// the requester's confirmation, and runs only when a second operator approves it: a held attempt's credit or
// refund, a payout return, opening Live payouts or raising a Live limit. The requester cannot approve their
// own request and a teller cannot approve at all. The approval runs the action in the same transaction as
// the decision; a request whose object changed since it was filed is withdrawn (rejected) with a clear
// message instead. Every step (request, approve, reject, withdraw) is audited in its transaction.
import { audit, type Actor } from '../audit/log.ts';
import { settleHeldAttempt } from '../checkout/payments.ts';
import type { Db, Queryable } from '../db/index.ts';
import { DbError } from '../db/index.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { checkDecision } from '../lib/four-eyes.ts';
import { formatGhs } from '../lib/ghana.ts';
import { newUuid } from '../lib/ids.ts';
import { payoutForOperator, returnPayoutIn } from '../payouts/lifecycle.ts';
import { auditSettingsChange, payoutSettingsOf, updatePayoutSettings } from '../payouts/settings.ts';
import { createPayerReturn } from '../refunds/sika-refunds.ts';
import { settleHeldLines } from '../statements/service.ts';
import {
  APPROVAL_REASON_LENGTH_MAX,
  APPROVALS_RECENT_ROWS_MAX,
  HELD_CHOICE_LABELS,
  PAYOUT_SETTING_LIMIT_MAX_MINOR,
  RETURN_REFERENCE_PATTERN,
  RETURN_REFERENCE_RULE,
  approvalMachine,
  heldChoices,
  heldMoney,
  settingsChangeNeedsApproval,
  type HeldAttemptPayload,
  type HeldChoice,
  type PayoutReturnPayload,
  type PayoutSettingsPayload,
  type SettingsValues,
} from './approvals-model.ts';
import * as store from './approvals-store.ts';

export type { ApprovalRow, HeldAttemptDetail } from './approvals-store.ts';

/** The result of an operator's request: filed for a second operator, or applied at once (no money moves). */
export type Requested = { filed: true; approvalId: string } | { filed: false; message: string };

function reasonOf(text: string): string {
  const reason = text.trim();
  if (!reason)
    throw errors.invalidArgument('Give a reason: the second operator and the audit log read it.', [
      { field: 'reason', message: 'is required' },
    ]);
  if (reason.length > APPROVAL_REASON_LENGTH_MAX)
    throw errors.invalidArgument(`The reason is at most ${APPROVAL_REASON_LENGTH_MAX} characters.`, [
      { field: 'reason', message: 'is too long' },
    ]);
  return reason;
}

function confirmed(confirmation: boolean, what: string): void {
  if (!confirmation)
    throw errors.invalidArgument(`Confirm that ${what} before the request is filed.`, [
      { field: 'confirm', message: 'is required' },
    ]);
}

/** An operator's action, in one transaction that first refuses anyone else (a teller too); `doing` names it in the refusal. */
function asOperator<T>(db: Db, actor: Actor, doing: string, work: (tx: Queryable) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    const role = actor.type === 'operator' ? await store.operatorRole(tx, actor.id) : null;
    if (role !== 'operator') throw errors.forbidden(`Only an operator (not a teller) can ${doing}.`);
    return work(tx);
  });
}

async function file(tx: Queryable, actor: Actor, r: store.ApprovalRequest): Promise<string> {
  const waiting = await store.pendingApprovalFor(tx, r.objectType, r.objectId);
  if (waiting)
    throw errors.conflict(
      'APPROVAL_PENDING',
      'A request for this already waits for a second operator under Approvals; approve or reject it first.',
    );
  const id = newUuid();
  try {
    await store.insertApproval(tx, { id, ...r, requestedBy: actor.id, requestedByEmail: actor.email ?? actor.id });
  } catch (error) {
    if (error instanceof DbError && error.isUniqueViolation)
      throw errors.conflict(
        'APPROVAL_PENDING',
        'A request for this already waits for a second operator under Approvals.',
      );
    throw error;
  }
  await audit(tx, {
    actor,
    merchantId: r.merchantId,
    action: `approval.request.${r.kind}`,
    objectType: 'operator_approval',
    objectId: id,
    before: null,
    after: { kind: r.kind, object: `${r.objectType}:${r.objectId}`, payload: r.payload, reason: r.reason },
  });
  return id;
}

// ---- held attempts ----

/** What the review page shows of a held attempt, with its choices. */
export async function heldAttemptView(db: Queryable, attemptId: string) {
  const attempt = await store.findHeldAttempt(db, attemptId);
  if (!attempt || (attempt.status !== 'manual_review' && attempt.status !== 'amount_mismatch')) return null;
  return { attempt, choices: heldChoices(attempt.status, attempt.amount_charged_minor, receivedOf(attempt)) };
}

/** What was received: the statement credit or provider's amount for a mismatch; the amount charged for a manual review (the provider said it took it). */
const receivedOf = (a: store.HeldAttemptDetail): number | null =>
  a.status === 'manual_review' ? a.amount_charged_minor : a.received_minor;

/**
 * An operator's decision on a held attempt, with a reason and the confirmation that the statement line (or
 * deposit, or provider record) was checked. Reject moves no money and applies at once (audited); every other
 * choice is filed for a second operator.
 */
export async function requestHeldDecision(
  db: Db,
  actor: Actor,
  checkoutUrlHost: string,
  attemptId: string,
  input: { choice: HeldChoice; reason: string; confirmed: boolean },
): Promise<Requested> {
  return asOperator(db, actor, 'decide a held payment', async (tx) => {
    const attempt = await store.findHeldAttempt(tx, attemptId);
    if (!attempt) throw errors.notFound('Payment attempt');
    if (attempt.status !== 'manual_review' && attempt.status !== 'amount_mismatch') {
      throw new SikaError('ATTEMPT_NOT_HELD', `The attempt is ${attempt.status}; only held attempts are decided here.`);
    }
    const reason = reasonOf(input.reason);
    confirmed(input.confirmed, 'you have checked the statement line, deposit or provider record behind this payment');
    const received = receivedOf(attempt);
    const choices = heldChoices(attempt.status, attempt.amount_charged_minor, received);
    if (!choices.includes(input.choice)) {
      throw errors.invalidArgument(
        `"${HELD_CHOICE_LABELS[input.choice]}" is not a choice for this payment; choose one of: ${choices.map((c) => HELD_CHOICE_LABELS[c]).join('; ')}.`,
        [{ field: 'choice', message: 'is not offered for this payment' }],
      );
    }
    if (input.choice === 'reject') {
      if (await store.pendingApprovalFor(tx, 'payment_attempt', attempt.id))
        throw errors.conflict(
          'APPROVAL_PENDING',
          'A decision on this payment already waits under Approvals; reject that request first.',
        );
      await executeHeld(
        tx,
        actor,
        checkoutUrlHost,
        attempt,
        'reject',
        received ?? attempt.amount_charged_minor,
        reason,
        null,
      );
      return { filed: false, message: `Attempt ${attempt.id} is rejected: it failed and no money moved.` };
    }
    const payload: HeldAttemptPayload = {
      choice: input.choice,
      received_minor: received!,
      charged_minor: attempt.amount_charged_minor,
      attempt_version: attempt.version,
      attempt_status: attempt.status,
      statement_line_id: attempt.line_id,
    };
    const approvalId = await file(tx, actor, {
      kind: 'held_attempt',
      objectType: 'payment_attempt',
      objectId: attempt.id,
      payload,
      reason,
      merchantId: attempt.merchant_id,
      environment: attempt.environment,
    });
    return { filed: true, approvalId };
  });
}

async function executeHeld(
  tx: Queryable,
  actor: Actor,
  checkoutUrlHost: string,
  attempt: store.HeldAttemptDetail,
  choice: HeldChoice,
  receivedMinor: number,
  reason: string,
  approvalId: string | null,
) {
  const money = heldMoney(attempt, choice, receivedMinor);
  const applied = await settleHeldAttempt(tx, attempt.id, money, {
    checkoutUrlHost,
    source: approvalId ? 'operator_approved' : 'operator_reject',
  });
  const refund =
    money.refundMinor > 0
      ? await createPayerReturn(
          tx,
          { ...applied.attempt },
          money.refundMinor,
          `Returned to the payer by Sika's operators: ${formatGhs(receivedMinor)} received for a payment of ${formatGhs(attempt.amount_charged_minor)}. ${reason}`,
        )
      : null;
  await settleHeldLines(
    tx,
    attempt.id,
    choice === 'reject' ? 'rejected' : choice === 'refund_payer' ? 'refunded' : 'credited',
    actor,
    `${HELD_CHOICE_LABELS[choice]}: ${reason}`.slice(0, 500),
  );
  await audit(tx, {
    actor,
    merchantId: attempt.merchant_id,
    action: choice === 'reject' ? 'attempt.reject' : 'attempt.decide',
    objectType: 'payment_attempt',
    objectId: attempt.id,
    before: {
      status: attempt.status,
      session: attempt.session_id,
      charged_minor: attempt.amount_charged_minor,
      received_minor: receivedMinor,
    },
    after: {
      status: applied.attempt.status,
      session_status: applied.session.status,
      choice,
      credited_net_minor: money.netCreditMinor,
      refund: refund ? { id: refund.id, amount_minor: refund.amount_minor } : null,
      reason,
      approval: approvalId,
    },
  });
  return { applied, refund, money };
}

// ---- payout returns ----

/** An operator records that the bank returned a paid payout: the bank's return reference, a reason and a confirmation; a second operator approves. */
export async function requestPayoutReturn(
  db: Db,
  actor: Actor,
  payoutId: string,
  input: { returnReference: string; reason: string; confirmed: boolean },
): Promise<Requested> {
  return asOperator(db, actor, 'record a payout return', async (tx) => {
    const payout = await payoutForOperator(tx, payoutId);
    if (!payout) throw errors.notFound('Payout');
    const reference = input.returnReference.trim();
    if (!RETURN_REFERENCE_PATTERN.test(reference))
      throw errors.invalidArgument(RETURN_REFERENCE_RULE, [
        { field: 'return_reference', message: 'is not a bank return reference' },
      ]);
    const reason = reasonOf(input.reason);
    confirmed(input.confirmed, 'the bank statement shows this payout coming back');
    if (payout.status !== 'paid')
      throw errors.conflict(
        'PAYOUT_NOT_RETURNABLE',
        `The payout is ${payout.status}; only paid payouts can be returned.`,
      );
    const payload: PayoutReturnPayload = {
      return_reference: reference,
      payout_reference: payout.reference,
      amount_minor: payout.amount_minor,
      fee_minor: payout.fee_minor,
      payout_version: payout.version,
    };
    const approvalId = await file(tx, actor, {
      kind: 'payout_return',
      objectType: 'payout',
      objectId: payout.id,
      payload,
      reason,
      merchantId: payout.merchant_id,
      environment: payout.environment,
    });
    return { filed: true, approvalId };
  });
}

// ---- payout settings ----

const valuesOf = (s: SettingsValues): SettingsValues => ({
  payout_access: s.payout_access,
  paused: s.paused,
  payout_limit_minor: Number(s.payout_limit_minor),
  daily_limit_minor: Number(s.daily_limit_minor),
});
const sameValues = (a: SettingsValues, b: SettingsValues) =>
  JSON.stringify(valuesOf(a)) === JSON.stringify(valuesOf(b));

/**
 * An operator changes a merchant's payout settings. The limit per payout must not be above the daily limit.
 * Opening Live payouts (access on) or raising a Live limit is filed for a second operator, with a reason;
 * closing, pausing, resuming, lowering, and every Test change apply at once (audited).
 */
export async function changePayoutSettings(
  db: Db,
  actor: Actor,
  merchantId: string,
  environment: 'test' | 'live',
  after: SettingsValues,
  input: { reason: string; confirmed: boolean },
): Promise<Requested> {
  for (const [name, value] of [
    ['limit per payout', after.payout_limit_minor],
    ['daily limit', after.daily_limit_minor],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1 || value > PAYOUT_SETTING_LIMIT_MAX_MINOR) {
      throw errors.invalidArgument(
        `The ${name} must be an amount in GHS above zero and at most ${formatGhs(PAYOUT_SETTING_LIMIT_MAX_MINOR)}.`,
        [{ field: name === 'daily limit' ? 'daily_limit' : 'limit', message: 'is out of range' }],
      );
    }
  }
  if (after.payout_limit_minor > after.daily_limit_minor) {
    throw errors.invalidArgument(
      `The limit per payout (${formatGhs(after.payout_limit_minor)}) cannot be above the daily limit (${formatGhs(after.daily_limit_minor)}).`,
      [{ field: 'limit', message: 'is above the daily limit' }],
    );
  }
  return asOperator(db, actor, 'change payout settings', async (tx) => {
    const before = valuesOf(await payoutSettingsOf(tx, merchantId, environment, true));
    if (sameValues(before, after))
      return { filed: false, message: `${environment === 'test' ? 'Test' : 'Live'} payout settings are unchanged.` };
    if (!settingsChangeNeedsApproval(environment, before, after)) {
      await applySettings(tx, actor, merchantId, environment, before, after, input.reason.trim() || null, null);
      return { filed: false, message: `${environment === 'test' ? 'Test' : 'Live'} payout settings saved.` };
    }
    const reason = reasonOf(input.reason);
    confirmed(input.confirmed, 'the merchant is cleared for these Live payouts');
    const payload: PayoutSettingsPayload = { before, after };
    const approvalId = await file(tx, actor, {
      kind: 'payout_settings',
      objectType: 'payout_settings',
      objectId: `${merchantId}:${environment}`,
      payload,
      reason,
      merchantId,
      environment,
    });
    return { filed: true, approvalId };
  });
}

async function applySettings(
  tx: Queryable,
  actor: Actor,
  merchantId: string,
  environment: 'test' | 'live',
  before: SettingsValues,
  after: SettingsValues,
  reason: string | null,
  approvalId: string | null,
) {
  await updatePayoutSettings(tx, merchantId, environment, after);
  await auditSettingsChange(tx, actor, merchantId, environment, before, { ...after, reason, approval: approvalId });
}

// ---- the second operator's decision ----

export type Decided = { status: 'approved' | 'rejected'; message: string } | { status: 'stale'; message: string };

/**
 * A second operator decides a pending request. Approve runs its action in this transaction (a request whose
 * object changed since is withdrawn instead, with why); reject leaves everything as it was. The requester
 * cannot decide their own request, a teller cannot decide any; a request already decided (a second click,
 * another operator first) is APPROVAL_NOT_PENDING.
 */
export async function decideApproval(
  db: Db,
  actor: Actor,
  checkoutUrlHost: string,
  approvalId: string,
  decision: 'approve' | 'reject',
  note = '',
): Promise<Decided> {
  return asOperator(db, actor, 'approve or reject a request', async (tx) => {
    const request = await store.findApproval(tx, approvalId, true);
    if (!request) throw errors.notFound('Approval request');
    checkDecision(
      {
        awaiting: 'pending',
        statusFirst: true,
        notAwaiting: (status) =>
          errors.conflict(
            'APPROVAL_NOT_PENDING',
            `This request is already ${status}${request.decided_by_email ? ` by ${request.decided_by_email}` : ''}.`,
          ),
        ownRequest: 'You filed this request: a second operator must approve or reject it.',
      },
      { status: request.status, requestedBy: request.requested_by },
      { id: actor.id },
    );
    /** Records the decision with its note, and audits it as approval.<step>.<kind>. */
    const record = async (
      to: 'approved' | 'rejected',
      note: string | null,
      step: 'approve' | 'reject' | 'stale',
      after: Record<string, unknown>,
    ) => {
      await store.decideApproval(tx, request.id, approvalMachine.transition(request.status, to), {
        by: actor.id,
        email: actor.email ?? actor.id,
        note,
      });
      await audit(tx, {
        actor,
        merchantId: request.merchant_id,
        action: `approval.${step}.${request.kind}`,
        objectType: 'operator_approval',
        objectId: request.id,
        before: { status: 'pending' },
        after,
      });
    };
    if (decision === 'reject') {
      const why = note.trim().slice(0, APPROVAL_REASON_LENGTH_MAX) || null;
      await record('rejected', why, 'reject', { status: 'rejected', note: why });
      return { status: 'rejected', message: 'The request is rejected; nothing changed.' };
    }
    const stale = await execute(tx, actor, checkoutUrlHost, request);
    if (stale) {
      await record('rejected', `Withdrawn: ${stale}`, 'stale', { status: 'rejected', note: stale });
      return {
        status: 'stale',
        message: `Not approved: ${stale} The request is withdrawn; file it again if it is still needed.`,
      };
    }
    await record('approved', null, 'approve', { status: 'approved' });
    return { status: 'approved', message: `Approved: ${describe(request)}.` };
  });
}

/** Runs an approved request's action; returns why it is stale instead (nothing done), or null when done. */
async function execute(
  tx: Queryable,
  actor: Actor,
  checkoutUrlHost: string,
  request: store.ApprovalRow,
): Promise<string | null> {
  const audited = { approval: request.id, requested_by: request.requested_by_email, reason: request.reason };
  switch (request.kind) {
    case 'held_attempt': {
      const p = request.payload as unknown as HeldAttemptPayload;
      const attempt = await store.findHeldAttempt(tx, request.object_id);
      if (
        !attempt ||
        attempt.version !== p.attempt_version ||
        attempt.status !== p.attempt_status ||
        receivedOf(attempt) !== p.received_minor
      ) {
        return `payment ${request.object_id} changed since the request (it is ${attempt?.status ?? 'gone'}${attempt && receivedOf(attempt) !== p.received_minor ? `, received ${attempt.received_minor === null ? 'unknown' : formatGhs(attempt.received_minor)}` : ''}).`;
      }
      await executeHeld(
        tx,
        actor,
        checkoutUrlHost,
        attempt,
        p.choice,
        p.received_minor,
        `${request.reason} (requested by ${request.requested_by_email})`,
        request.id,
      );
      return null;
    }
    case 'payout_return': {
      const p = request.payload as unknown as PayoutReturnPayload;
      const payout = await payoutForOperator(tx, request.object_id);
      if (payout?.status !== 'paid' || payout.version !== p.payout_version)
        return `payout ${p.payout_reference} changed since the request (it is ${payout?.status ?? 'gone'}).`;
      await returnPayoutIn(tx, payout.id, p.return_reference, actor, audited);
      return null;
    }
    case 'payout_settings': {
      const p = request.payload as unknown as PayoutSettingsPayload;
      const environment = request.environment;
      const now = valuesOf(await payoutSettingsOf(tx, request.merchant_id, environment, true));
      if (!sameValues(now, p.before))
        return `the ${environment === 'live' ? 'Live' : 'Test'} payout settings of ${request.merchant_name} changed since the request.`;
      await applySettings(tx, actor, request.merchant_id, environment, p.before, p.after, request.reason, request.id);
      return null;
    }
  }
}

/** One line on what a request decides. */
export function describe(request: store.ApprovalRow): string {
  switch (request.kind) {
    case 'held_attempt': {
      const p = request.payload as unknown as HeldAttemptPayload;
      return `${HELD_CHOICE_LABELS[p.choice]} on payment ${request.object_id} (charged ${formatGhs(p.charged_minor)}, received ${formatGhs(p.received_minor)})`;
    }
    case 'payout_return': {
      const p = request.payload as unknown as PayoutReturnPayload;
      return `return of payout ${p.payout_reference} (${formatGhs(p.amount_minor + p.fee_minor)} back to the balance), bank reference ${p.return_reference}`;
    }
    case 'payout_settings':
      return `${request.environment === 'live' ? 'Live' : 'Test'} payout settings of ${request.merchant_name}`;
  }
}

/** The approvals page: requests waiting, the oldest first, and those decided lately. */
export async function approvalsOverview(db: Queryable) {
  return {
    pending: await store.listApprovals(db, 'pending', 200),
    decided: await store.listApprovals(db, 'decided', APPROVALS_RECENT_ROWS_MAX),
  };
}

export const findApprovalRequest = (db: Queryable, id: string) => store.findApproval(db, id);
