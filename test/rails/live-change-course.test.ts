// A payer changing course in Live (issue 31), end to end over real HTTP against the MTN MoMo and Paystack
// stand-ins: MTN's prompt cannot be withdrawn, so a cancelled request that the payer approves later is applied
// (the callback, or the status checks that keep asking for a day) and, when another payment had paid the
// session, refunded in full through MTN automatically; a Paystack card page the payer left ends the attempt
// when the payer comes back, and Mobile Money then pays; a success before the cancel keeps the session paid;
// resend is not offered where the provider cannot prompt again; failure reasons and provider ids are kept.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { checkPendingAttempts } from '../../src/checkout/status-checks.ts';
import { balance, checkInvariants } from '../../src/ledger/service.ts';
import type { LiveProviders } from '../../src/rails/live.ts';
import { processDueRefunds } from '../../src/refunds/processing.ts';
import type { MtnMomoStandIn } from '../support/standins/mtn-momo.ts';
import type { PaystackStandIn } from '../support/standins/paystack.ts';
import {
  attemptStatus,
  driveUntil,
  eventually,
  liveSession,
  merchantSession,
  payerAttempt,
  useLiveWithStandIns,
  type LiveApp,
} from '../support/live.ts';

const SECRET = 'sk_test_change_course';

describe('Live: a payer changes course (MTN MoMo and Paystack stand-ins)', () => {
  let mtn: MtnMomoStandIn;
  let paystack: PaystackStandIn;
  let app: LiveApp;
  let providers: LiveProviders;
  let m: CreatedMerchant;
  useLiveWithStandIns(
    {
      secretKey: SECRET,
      env: { LIVE_PROVIDER_ORDER: 'mtn_momo,paystack', MTN_MOMO_TARGET_ENVIRONMENT: 'mtnghana' },
    },
    async (live) => {
      ({ app, mtn, paystack, providers } = live);
      m = await app.t.merchant();
    },
  );

  const cancel = (sessionId: string, ref: string) =>
    app.http('POST', `/api/v1/checkout/sessions/${sessionId}/provider-attempts/${ref}/cancel`, {
      headers: { 'idempotency-key': `c-${ref}` },
    });
  const available = async (merchant: CreatedMerchant) =>
    (await balance(app.t.db, merchant.merchant_id, 'live')).available_minor;
  const refundsOf = (sessionId: string) =>
    app.t.db.query<{
      id: string;
      attempt_id: string;
      amount_minor: number;
      status: string;
      route: string;
      provider: string | null;
    }>(
      'SELECT id, attempt_id, amount_minor::int AS amount_minor, status, route, provider FROM refunds WHERE session_id = $1 ORDER BY created_at',
      [sessionId],
    );
  /** Pays an MTN attempt at the stand-in and waits until Sika has applied it. */
  async function payMtn(sessionId: string, ref: string, providerReference: string) {
    mtn.settle(providerReference, 'SUCCESSFUL');
    return eventually(async () => {
      const s = (await attemptStatus(app, sessionId, ref)).json;
      return s.status === 'paid' ? s : undefined;
    });
  }

  it('MTN: cancel, pay with another number, then the old prompt approved late: applied, refunded through MTN, the merchant told; one payment kept', async () => {
    const merchant = await app.t.merchant();
    const session = await liveSession(app, merchant, 10_000);
    const first = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: '0241234567' })).json;
    assert.equal(first.instructions.resend_supported, false, 'MTN cannot prompt again');
    assert.equal(first.instructions.approve_within_s, 300);
    assert.match(first.instructions.approval_help, /\*170#/);
    const resend = await app.http(
      'POST',
      `/api/v1/checkout/sessions/${session.id}/provider-attempts/${first.attempt_reference}/resend`,
    );
    assert.equal(resend.status, 409);
    assert.equal(resend.json.error.code, 'RESEND_NOT_AVAILABLE');

    const cancelled = await cancel(session.id, first.attempt_reference);
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.json.status, 'cancelled');
    assert.equal(cancelled.json.session_status, 'open');
    assert.equal(mtn.transactionOf(first.attempt_reference)!.status, 'PENDING', 'MTN cannot withdraw the prompt');

    const second = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: '0245550101' })).json;
    const paid = await payMtn(session.id, second.attempt_reference, second.provider_reference);
    assert.ok(paid.provider_transaction_id, "MTN's financialTransactionId is kept");
    assert.equal(paid.provider_transaction_id, mtn.transactionOf(second.attempt_reference)!.financialTransactionId);
    const creditOfSecond = await available(merchant);

    // The payer approves the old prompt too. MTN's callback makes Sika ask; the late success is applied.
    mtn.approveLate(first.attempt_reference);
    const refund = await eventually(async () => (await refundsOf(session.id))[0], 8_000);
    assert.equal(refund.attempt_id, first.attempt_reference);
    assert.equal(refund.amount_minor, first.amount_charged_minor);
    assert.equal(refund.route, 'provider');
    assert.equal(refund.provider, 'mtn_momo');
    assert.equal(await available(merchant), creditOfSecond, 'the duplicate is held for its refund, not spendable');
    const view = (await merchantSession(app, merchant, session.id)).json;
    assert.equal(view.status, 'success');
    const told = await app.t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE object_id = $1 AND type = 'checkout.session.duplicate_payment_refunded'`,
      [session.id],
    );
    assert.equal(told[0]!.n, 1);

    // The refund worker sends it back through MTN.
    for (let i = 0; i < 6; i++) {
      await app.t.db.query(`UPDATE refunds SET next_step_at = now() WHERE id = $1 AND status = 'pending'`, [refund.id]);
      await processDueRefunds(app.t.db, providers);
      const now = (await refundsOf(session.id))[0]!;
      if (now.status !== 'pending') break;
      const sent =
        mtn.transactionOf(refund.id) ??
        [...mtn.transactions.values()].find((tx) => tx.kind === 'refund' && tx.status === 'PENDING');
      if (sent) mtn.settle(sent.referenceId, 'SUCCESSFUL');
    }
    assert.equal((await refundsOf(session.id))[0]!.status, 'succeeded');
    assert.equal(await available(merchant), creditOfSecond);
    assert.deepEqual(await checkInvariants(app.t.db, merchant.merchant_id), []);
  });

  it('MTN without a callback: the status checks keep asking about the abandoned attempt and apply its late success', async () => {
    const session = await liveSession(app, m, 7_000);
    const first = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: '0241234567' })).json;
    await cancel(session.id, first.attempt_reference);
    const abandoned = await app.t.db.query<{ abandoned_at: Date | null; failure_reason: string }>(
      'SELECT abandoned_at, failure_reason FROM payment_attempts WHERE id = $1',
      [first.attempt_reference],
    );
    assert.ok(abandoned[0]!.abandoned_at, 'kept under watch');
    assert.equal(abandoned[0]!.failure_reason, 'changed_course');
    mtn.transactionOf(first.attempt_reference)!.plan.callback = 'never';
    mtn.approveLate(first.attempt_reference);
    // Its first check is due 5 minutes after it started (23 hours back: still inside the day it is watched, and ahead
    // of other files' due attempts in the worker's oldest-first batches on a shared PostgreSQL). Their workers may
    // claim ours too, asking another stand-in: each pass makes ours due again.
    await app.t.db.query(`UPDATE payment_attempts SET created_at = now() - interval '23 hours' WHERE id = $1`, [
      first.attempt_reference,
    ]);
    const after = await driveUntil(
      async () => (await attemptStatus(app, session.id, first.attempt_reference, false)).json,
      async () => {
        await app.t.db.query(`UPDATE payment_attempts SET next_status_check_at = NULL WHERE id = $1`, [
          first.attempt_reference,
        ]);
        await checkPendingAttempts({ db: app.t.db, checkoutUrlHost: app.t.config.checkoutUrlHost, providers });
      },
      (s) => s.status === 'paid',
    );
    assert.equal(after.status, 'paid');
    assert.equal(after.session_status, 'success');
    assert.equal((await refundsOf(session.id)).length, 0, "nothing else paid: it is the session's payment");
  });

  it('a success that arrived before the cancel keeps the session paid: cancel answers paid', async () => {
    const session = await liveSession(app, m, 6_000);
    const first = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: '0241234567' })).json;
    mtn.transactionOf(first.attempt_reference)!.plan.callback = 'never';
    mtn.settle(first.provider_reference, 'SUCCESSFUL');
    const res = await cancel(session.id, first.attempt_reference);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.status, 'paid');
    assert.equal(res.json.session_status, 'success');
  });

  it('a decline keeps its plain reason: MTN NOT_ENOUGH_FUNDS reads as insufficient funds', async () => {
    const session = await liveSession(app, m, 5_000);
    const first = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: '0241234567' })).json;
    mtn.settle(first.provider_reference, 'FAILED', 'NOT_ENOUGH_FUNDS');
    const failed = await eventually(async () => {
      const s = (await attemptStatus(app, session.id, first.attempt_reference)).json;
      return s.status === 'failed' ? s : undefined;
    });
    assert.equal(failed.failure_reason, 'insufficient_funds');
    assert.match(failed.failure_message, /not enough money/);
    assert.equal(failed.session_status, 'open');
  });

  it('Paystack card: the payer comes back from the card page without paying, the verify says abandoned, the attempt ends and Mobile Money pays', async () => {
    const session = await liveSession(app, m, 8_000);
    const card = await payerAttempt(app, session.id, { rail: 'card' });
    assert.equal(card.status, 201, card.text);
    paystack.abandonCharge(card.json.provider_reference);
    // Back on our page (?attempt=...): the page refreshes the attempt, which asks Paystack.
    const back = (await attemptStatus(app, session.id, card.json.attempt_reference)).json;
    assert.equal(back.status, 'cancelled');
    assert.equal(back.session_status, 'open');
    const momo = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: '0241234567' })).json;
    await payMtn(session.id, momo.attempt_reference, momo.provider_reference);
    assert.equal((await merchantSession(app, m, session.id)).json.status, 'success');
    // The card page completed after all: a late success, refunded as a duplicate through Paystack.
    paystack.settleCharge(card.json.provider_reference, 'success');
    const refund = await eventually(async () => (await refundsOf(session.id))[0], 8_000);
    assert.equal(refund.attempt_id, card.json.attempt_reference);
    assert.equal(refund.provider, 'paystack');
    assert.deepEqual(await checkInvariants(app.t.db, m.merchant_id), []);
  });
});
