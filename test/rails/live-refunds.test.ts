// Live refunds end to end over real HTTP against the providers' stand-ins (issue 17): through Paystack (a
// Telecel payment; pending, then processed by its signed refund.processed webhook, or failed), through MTN
// MoMo's Disbursement refund (an MTN payment; SUCCESSFUL, a lost answer asked about and never sent twice, a
// refusal releasing the hold), and cash and bank transfer payments going to the operators' queue.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import type { LiveProviders } from '../../src/rails/live.ts';
import { settleOperatorRefund } from '../../src/refunds/lifecycle.ts';
import { processDueRefunds } from '../../src/refunds/processing.ts';
import { recordCashDeposit } from '../../src/checkout/cash-slips.ts';
import { fund, balanceOf } from '../support/payouts-fixtures.ts';
import type { MtnMomoStandIn } from '../support/standins/mtn-momo.ts';
import type { PaystackStandIn } from '../support/standins/paystack.ts';
import {
  attemptStatus,
  eventually,
  liveSession,
  merchantSession,
  payerAttempt,
  quoteTotal,
  useLiveWithStandIns,
  type LiveApp,
} from '../support/live.ts';

const SECRET = 'sk_test_standin_secret';

describe('Live refunds through the provider that took the payment', () => {
  let paystack: PaystackStandIn;
  let mtn: MtnMomoStandIn;
  let app: LiveApp;
  let providers: LiveProviders;
  let m: CreatedMerchant;
  useLiveWithStandIns({ secretKey: SECRET }, async (live) => {
    ({ app, paystack, mtn, providers } = live);
    m = await app.t.merchant();
    await fund(app.t, m.merchant_id, 'live', 1_000_000);
  });

  const refund = (body: Record<string, unknown>) => app.http('POST', '/api/v1/refunds', { key: m.live_api_key, body });
  const getRefund = async (id: string) =>
    (await app.http('GET', `/api/v1/refunds/${id}`, { key: m.live_api_key })).json;
  /** Runs the refund worker until the refund leaves `status` (or the steps run out). */
  async function drive(id: string, stepsMax = 6) {
    for (let i = 0; i < stepsMax; i++) {
      await app.t.db.query('UPDATE refunds SET next_step_at = now() WHERE id = $1 AND status = $2', [id, 'pending']);
      await processDueRefunds(app.t.db, providers);
      const now = await getRefund(id);
      if (now.status !== 'pending') return now;
    }
    return getRefund(id);
  }
  const healthy = async () => assert.deepEqual(await checkInvariants(app.t.db, m.merchant_id), []);

  /** Waits until the payer page, asking the provider, shows the attempt paid. */
  const untilPaid = (sessionId: string, attemptReference: string) =>
    eventually(async () =>
      (await attemptStatus(app, sessionId, attemptReference)).json.status === 'paid' ? true : undefined,
    );

  async function paidMtn(base: number) {
    const session = await liveSession(app, m, base);
    const attempt = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: '0241234567' })).json;
    assert.equal(attempt.provider, 'mtn_momo');
    mtn.settle(attempt.provider_reference, 'SUCCESSFUL');
    await untilPaid(session.id, attempt.attempt_reference);
    return { sessionId: session.id, attempt };
  }

  async function paidPaystack(base: number) {
    const session = await liveSession(app, m, base);
    const attempt = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'at', phone: '0261234567' })).json;
    assert.equal(attempt.provider, 'paystack');
    paystack.settleCharge(attempt.provider_reference, 'success', { webhook: 'none' });
    await untilPaid(session.id, attempt.attempt_reference);
    return { sessionId: session.id, attempt };
  }

  it('MTN MoMo: the refund is sent once under our reference to the Disbursement API and succeeds; the session shows it', async () => {
    const paid = await paidMtn(20_000);
    const before = await balanceOf(app.t, m.merchant_id, 'live');
    const created = await refund({ session_id: paid.sessionId, amount_minor: 5_000, reason: 'damaged item' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.status, 'pending');
    assert.equal(created.json.method, 'provider');
    assert.equal(created.json.provider, 'mtn_momo');
    assert.equal(
      (await balanceOf(app.t, m.merchant_id, 'live')).held_minor,
      before.held_minor + 5_000,
      'held while pending',
    );
    const sent = mtn.counts.refund;
    await processDueRefunds(app.t.db, providers);
    assert.equal(mtn.counts.refund, sent + 1);
    const [row] = await app.t.db.query<{ provider_reference: string }>(
      'SELECT provider_reference FROM refunds WHERE id = $1',
      [created.json.id],
    );
    const atMtn = mtn.transactions.get(row!.provider_reference)!;
    assert.equal(atMtn.kind, 'refund');
    assert.equal(atMtn.referenceIdToRefund, paid.attempt.provider_reference.toLowerCase());
    mtn.settle(row!.provider_reference, 'SUCCESSFUL');
    const done = await drive(created.json.id);
    assert.equal(done.status, 'succeeded');
    assert.equal(mtn.counts.refund, sent + 1, 'sent once');
    assert.equal((await merchantSession(app, m, paid.sessionId)).json.refunded_minor, 5_000);
    const afterBalance = await balanceOf(app.t, m.merchant_id, 'live');
    assert.equal(afterBalance.available_minor, before.available_minor - 5_000);
    assert.equal(afterBalance.held_minor, before.held_minor);
    await healthy();
  });

  it('MTN MoMo: a lost answer is asked about by our reference and never sent again; a refusal fails the refund and releases the hold', async () => {
    const paid = await paidMtn(30_000);
    const lost = (await refund({ session_id: paid.sessionId, amount_minor: 4_000 })).json;
    mtn.next('refund', { answer: 'lose' });
    const sent = mtn.counts.refund;
    await processDueRefunds(app.t.db, providers);
    assert.equal(mtn.counts.refund, sent + 1);
    const [row] = await app.t.db.query<{ provider_reference: string; processing_step: string }>(
      'SELECT provider_reference, processing_step FROM refunds WHERE id = $1',
      [lost.id],
    );
    assert.equal(row!.processing_step, 'awaiting_result', 'asked about, not re-sent');
    mtn.settle(row!.provider_reference, 'SUCCESSFUL');
    assert.equal((await drive(lost.id)).status, 'succeeded');
    assert.equal(mtn.counts.refund, sent + 1, 'one refund at MTN for one refund of ours');

    const available = (await balanceOf(app.t, m.merchant_id, 'live')).available_minor;
    const refused = (await refund({ session_id: paid.sessionId, amount_minor: 3_000 })).json;
    mtn.next('refund', { answer: { status: 500, body: { code: 'NOT_ENOUGH_FUNDS', message: 'Not enough funds' } } });
    const failed = await drive(refused.id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.failure_reason, /refused/);
    assert.equal((await balanceOf(app.t, m.merchant_id, 'live')).available_minor, available, 'the hold is back');
    const events = await app.t.db.query<{ type: string }>(
      'SELECT type FROM events WHERE object_id = $1 ORDER BY created_at, id',
      [refused.id],
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['refund.created', 'refund.failed'],
    );
    await healthy();
  });

  it('Paystack: the refund is queued, and its signed refund.processed webhook makes Sika ask and apply it; a failed one releases the hold', async () => {
    const paid = await paidPaystack(25_000);
    const created = (await refund({ session_id: paid.sessionId, amount_minor: 10_000 })).json;
    assert.equal(created.provider, 'paystack');
    await processDueRefunds(app.t.db, providers);
    const queued = paystack.refunds.at(-1)!;
    assert.equal(queued.transactionReference, paid.attempt.provider_reference);
    assert.equal(queued.amount, 10_000);
    assert.equal((await getRefund(created.id)).provider_refund_id, String(queued.id));
    paystack.settleRefund(queued.id, 'processed');
    await paystack.webhooksIdle();
    assert.equal((await getRefund(created.id)).status, 'succeeded', 'the webhook made Sika ask and apply the answer');

    const before = (await balanceOf(app.t, m.merchant_id, 'live')).available_minor;
    const second = (await refund({ session_id: paid.sessionId, amount_minor: 2_000 })).json;
    await processDueRefunds(app.t.db, providers);
    paystack.settleRefund(paystack.refunds.at(-1)!.id, 'failed', { webhook: 'none' });
    const failed = await drive(second.id);
    assert.equal(failed.status, 'failed');
    assert.equal((await balanceOf(app.t, m.merchant_id, 'live')).available_minor, before);
    await healthy();
  });

  it('Paystack: a lost answer to POST /refund is found in its refund list, not sent twice', async () => {
    const paid = await paidPaystack(12_000);
    const created = (await refund({ session_id: paid.sessionId, amount_minor: 3_000 })).json;
    paystack.next({ endpoint: 'refund.create' }, { kind: 'lose_answer' });
    const sent = paystack.count('refund.create');
    await processDueRefunds(app.t.db, providers);
    assert.equal(paystack.count('refund.create'), sent + 1);
    const found = await getRefund(created.id);
    assert.equal(found.status, 'pending');
    assert.equal(found.provider_refund_id, String(paystack.refunds.at(-1)!.id), 'found by the list lookup');
    paystack.settleRefund(paystack.refunds.at(-1)!.id, 'processed', { webhook: 'none' });
    assert.equal((await drive(created.id)).status, 'succeeded');
    assert.equal(paystack.count('refund.create'), sent + 1, 'one refund at Paystack');
  });

  it("cash: the refund waits in the operators' queue; an operator records the transfer (succeeded) or fails it (released)", async () => {
    const session = await liveSession(app, m, 8_000);
    const total = await quoteTotal(app, session.id, 'cash');
    const slip = (
      await app.http('POST', '/api/v1/checkout/cash-slips', { body: { session_id: session.id, amount_minor: total } })
    ).json;
    const [branch] = await app.t.db.query<{ id: string }>(
      'SELECT id FROM bank_branches WHERE active ORDER BY id LIMIT 1',
    );
    await recordCashDeposit(app.t.db, app.t.config.checkoutUrlHost, {
      reference: slip.reference,
      branchId: branch!.id,
      amountMinor: total,
    });
    const first = (await refund({ session_id: session.id, amount_minor: 3_000 })).json;
    assert.equal(first.method, 'operator');
    assert.equal(first.status, 'pending');
    await processDueRefunds(app.t.db, providers);
    assert.equal((await getRefund(first.id)).status, 'pending', 'no provider is asked');
    const operator = { type: 'operator' as const, id: '00000000-0000-4000-8000-000000000001', email: 'ops@sika.test' };
    const done = await settleOperatorRefund(app.t.db, operator, {
      refundId: first.id,
      outcome: 'succeeded',
      payerAccount: 'MTN 024 123 4567',
      transferReference: 'TRF-7781',
    });
    assert.equal(done.status, 'succeeded');
    const before = (await balanceOf(app.t, m.merchant_id, 'live')).available_minor;
    const second = (await refund({ session_id: session.id, amount_minor: 1_000 })).json;
    await settleOperatorRefund(app.t.db, operator, {
      refundId: second.id,
      outcome: 'failed',
      reason: 'payer unreachable',
    });
    assert.equal((await getRefund(second.id)).status, 'failed');
    assert.equal((await balanceOf(app.t, m.merchant_id, 'live')).available_minor, before);
    await assert.rejects(
      settleOperatorRefund(app.t.db, operator, { refundId: second.id, outcome: 'failed', reason: 'again' }),
      /REFUND_NOT_PENDING|pending/,
    );
    assert.equal((await merchantSession(app, m, session.id)).json.refunded_minor, 3_000);
    await healthy();
  });
});
