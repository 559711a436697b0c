// The Paystack adapter's Mobile Money collection (src/rails/paystack/) against the Paystack stand-in over real
// loopback HTTP: every mapping of a charge's answer to Sika's contract (src/rails/types.ts), OTPs and vouchers,
// failure words, refunds, and the failures that matter for money (refused, no answer, lost answer, 5xx).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../../src/lib/ids.ts';
import {
  ProviderNoAnswerError,
  ProviderRefusedError,
  RailUnavailableError,
  VerificationRefusedError,
} from '../../src/rails/types.ts';
import {
  SECRET_KEY,
  TIMEOUT_MS,
  api,
  deliveredFor,
  idOf,
  lastBody,
  momoAttempt,
  paystack,
  requestsTo,
  standIn,
  usePaystackStandIn,
} from '../support/paystack-adapter.ts';
import { PAYSTACK_FAILURE_TEXTS } from '../support/standins/paystack.ts';

usePaystackStandIn();

describe('Paystack collection: Mobile Money', () => {
  it('reference() is deterministic and uses only the characters Paystack allows', () => {
    const id = newId('att');
    const reference = paystack.collection.reference!({ reference: id, rail: 'momo' });
    assert.equal(reference, paystack.collection.reference!({ reference: id, rail: 'momo' }));
    assert.match(reference, /^sika-att-[0-9a-z]{26}$/);
    assert.match(reference, /^[A-Za-z0-9.=-]+$/);
    const payoutId = newId('po');
    const transfer = paystack.payouts.reference!({ payoutId, reference: 'PO-1' });
    assert.equal(transfer, paystack.payouts.reference!({ payoutId, reference: 'PO-2' }));
    assert.match(transfer, /^[a-z0-9_-]{16,}$/);
  });

  it('MTN: pay_offline is pending with the display text; settled, the charge.success webhook comes signed and status() says paid', async () => {
    const attempt = momoAttempt();
    const initiated = await paystack.collection.initiate(attempt);
    assert.equal(initiated.rawStatus, 'pay_offline');
    assert.equal(initiated.verificationRequired, false);
    assert.equal(initiated.outcome, undefined);
    assert.equal(initiated.instructions.display_text, 'Please complete authorization process on your mobile phone');
    assert.equal(initiated.providerReference, undefined, 'ours was stored beforehand');

    const body = lastBody('charge.create');
    assert.equal(body.reference, attempt.providerReference);
    assert.equal(body.amount, 2_550);
    assert.equal(body.currency, 'GHS');
    assert.deepEqual(body.mobile_money, { phone: '0551234987', provider: 'mtn' });
    assert.equal(body.email, `payer-${attempt.sessionId}@example.com`);
    assert.equal(requestsTo('charge.create').at(-1)!.headers.authorization, `Bearer ${SECRET_KEY}`);

    const checksBefore = standIn.count('charge.check');
    assert.deepEqual(await paystack.collection.status(attempt), { rawStatus: 'pay_offline', outcome: 'pending' });
    assert.equal(
      standIn.count('charge.check'),
      checksBefore + 1,
      'a pending Mobile Money charge is checked with GET /charge/{reference}',
    );

    standIn.settleCharge(attempt.providerReference!, 'success');
    const [delivery, ...more] = await deliveredFor(attempt.providerReference!, 'charge.success');
    assert.ok(delivery);
    assert.equal(more.length, 0);
    assert.equal(paystack.verifyWebhook(delivery.raw, delivery.signature), true);
    assert.deepEqual(
      { ...paystack.parseWebhook(JSON.parse(delivery.raw.toString('utf8'))), eventKey: undefined },
      { kind: 'charge', event: 'charge.success', reference: attempt.providerReference, eventKey: undefined },
    );
    assert.deepEqual(await paystack.collection.status(attempt), {
      rawStatus: 'success',
      outcome: 'paid',
      amountMinor: 2_550,
      providerTransactionId: idOf(attempt.providerReference!),
    });
  });

  it('uses the payer email when the merchant gave one', async () => {
    const attempt = momoAttempt({ payerEmail: 'ama@example.org' });
    await paystack.collection.initiate(attempt);
    assert.equal(lastBody('charge.create').email, 'ama@example.org');
  });

  it('names our reference when the caller stored none', async () => {
    const attempt = momoAttempt({ providerReference: null });
    const initiated = await paystack.collection.initiate(attempt);
    assert.equal(
      initiated.providerReference,
      paystack.collection.reference!({ reference: attempt.reference, rail: 'momo' }),
    );
    assert.ok(standIn.charge(initiated.providerReference!));
  });

  it('Telecel goes to provider vod and asks for the voucher; a wrong code is refused, the right one pays', async () => {
    const attempt = momoAttempt({ network: 'telecel', phone: '+233201234987' });
    const initiated = await paystack.collection.initiate(attempt);
    assert.equal(
      lastBody('charge.create').mobile_money &&
        (lastBody('charge.create').mobile_money as Record<string, unknown>).provider,
      'vod',
    );
    assert.equal(initiated.rawStatus, 'send_otp');
    assert.equal(initiated.verificationRequired, true);
    assert.equal(
      initiated.instructions.display_text,
      'Please dial *110# to generate a voucher code. Then input the voucher',
    );

    await assert.rejects(paystack.collection.authorize(attempt, '000000'), VerificationRefusedError);
    assert.equal(
      standIn.charge(attempt.providerReference!)!.status,
      'send_otp',
      'a refused code leaves the charge waiting for one',
    );
    const authorized = await paystack.collection.authorize(attempt, '123456');
    assert.deepEqual(authorized, { rawStatus: 'success', verificationRequired: false, outcome: 'paid' });
    assert.deepEqual(lastBody('charge.submit_otp'), { otp: '123456', reference: attempt.providerReference });
    assert.equal(standIn.charges.filter((charge) => charge.reference === attempt.providerReference).length, 1);
  });

  it('a voucher that leads to pay_offline stays pending with its display text', async () => {
    const attempt = momoAttempt({ network: 'telecel', phone: '+233501234987' });
    standIn.next(
      { endpoint: 'charge.create', phone: '0501234987' },
      { kind: 'charge', status: 'send_otp', afterOtp: 'pay_offline' },
    );
    await paystack.collection.initiate(attempt);
    assert.deepEqual(await paystack.collection.authorize(attempt, '123456'), {
      rawStatus: 'pay_offline',
      verificationRequired: false,
    });
  });

  it('MTN can be asked for an OTP too, with its own display text', async () => {
    const attempt = momoAttempt({ phone: '+233241112233' });
    standIn.next(
      { phone: '+233241112233' },
      { kind: 'charge', status: 'send_otp', displayText: 'Enter the OTP sent to 024*****33' },
    );
    const initiated = await paystack.collection.initiate(attempt);
    assert.equal(initiated.verificationRequired, true);
    assert.equal(initiated.instructions.display_text, 'Enter the OTP sent to 024*****33');
  });

  it('AT goes to provider atl; a synchronous success is paid at once', async () => {
    const attempt = momoAttempt({ network: 'at', phone: '+233271234987' });
    standIn.next({ phone: '0271234987' }, { kind: 'charge', status: 'success' });
    const initiated = await paystack.collection.initiate(attempt);
    assert.equal((lastBody('charge.create').mobile_money as Record<string, unknown>).provider, 'atl');
    assert.equal(initiated.rawStatus, 'success');
    assert.equal(initiated.outcome, 'paid');
  });

  it('a success for another amount or currency is amount_mismatch, at initiation and at status', async () => {
    const attempt = momoAttempt({ phone: '+233541230001' });
    standIn.next({ phone: '0541230001' }, { kind: 'charge', status: 'success', reportAmountMinor: 2_000 });
    assert.equal((await paystack.collection.initiate(attempt)).outcome, 'amount_mismatch');
    assert.deepEqual(await paystack.collection.status(attempt), {
      rawStatus: 'success',
      outcome: 'amount_mismatch',
      amountMinor: 2_000,
      providerTransactionId: idOf(attempt.providerReference!),
    });

    const other = momoAttempt({ phone: '+233541230002' });
    await paystack.collection.initiate(other);
    standIn.settleCharge(other.providerReference!, 'success');
    standIn.reportAmount(other.providerReference!, 2_550, 'NGN');
    assert.equal((await paystack.collection.status(other)).outcome, 'amount_mismatch');
  });

  it('a decline is failed, at initiation and at status', async () => {
    const attempt = momoAttempt({ phone: '+233591230003' });
    standIn.next({ phone: '0591230003' }, { kind: 'charge', status: 'failed', gatewayResponse: 'Insufficient funds' });
    const initiated = await paystack.collection.initiate(attempt);
    assert.equal(initiated.outcome, 'failed');
    assert.equal(initiated.failureReason, 'insufficient_funds');
    assert.deepEqual(await paystack.collection.status(attempt), {
      rawStatus: 'failed',
      outcome: 'failed',
      amountMinor: 2_550,
      providerTransactionId: idOf(attempt.providerReference!),
      failureReason: 'insufficient_funds',
    });
  });

  it("failure words map to the payer's reason only where Paystack's words say it; others give none", async () => {
    const cases: Array<[string, string | undefined]> = [
      [PAYSTACK_FAILURE_TEXTS.insufficient_funds, 'insufficient_funds'],
      ['Insufficient Funds', 'insufficient_funds'],
      [PAYSTACK_FAILURE_TEXTS.wrong_pin, 'wrong_pin'],
      [PAYSTACK_FAILURE_TEXTS.timed_out, 'timed_out'],
      [PAYSTACK_FAILURE_TEXTS.declined, 'declined'],
      ['Do Not Honor', 'declined'],
      ['Expired card', undefined],
      ['Customer is blacklisted', undefined],
      ['An unknown error has occurred, please contact system administrator', undefined],
    ];
    let n = 0;
    for (const [said, reason] of cases) {
      const phone = `+23355124${String(++n).padStart(4, '0')}`;
      const attempt = momoAttempt({ phone });
      await paystack.collection.initiate(attempt);
      standIn.settleCharge(attempt.providerReference!, 'failed', { gatewayResponse: said });
      const status = await paystack.collection.status(attempt);
      assert.equal(status.outcome, 'failed', said);
      assert.equal(status.failureReason, reason, said);
    }
  });

  it('gateway_response_code decides first where its meaning is plain', async () => {
    const cases: Array<[string, string, string | undefined]> = [
      ['do_not_honor', 'Transaction failed', 'declined'],
      ['pickup_card', 'Transaction failed', 'declined'],
      ['customer_cancellation', 'Insufficient funds', 'declined_by_payer'],
      ['processing_error', 'Insufficient funds', 'insufficient_funds'],
      ['unknown', 'Something odd', undefined],
    ];
    let n = 0;
    for (const [code, said, reason] of cases) {
      const attempt = momoAttempt({ phone: `+23355125${String(++n).padStart(4, '0')}` });
      await paystack.collection.initiate(attempt);
      standIn.settleCharge(attempt.providerReference!, 'failed', { gatewayResponse: said, gatewayResponseCode: code });
      assert.equal((await paystack.collection.status(attempt)).failureReason, reason, code);
    }
  });

  it('a Mobile Money charge abandoned is failed, not cancelled; its words still give the reason', async () => {
    const attempt = momoAttempt({ phone: '+233551260001' });
    await paystack.collection.initiate(attempt);
    standIn.abandonCharge(attempt.providerReference!);
    assert.deepEqual(await paystack.collection.status(attempt), {
      rawStatus: 'abandoned',
      outcome: 'failed',
      amountMinor: 2_550,
      providerTransactionId: idOf(attempt.providerReference!),
    });
    const timedOut = momoAttempt({ phone: '+233551260002' });
    standIn.next(
      { phone: '0551260002' },
      { kind: 'charge', status: 'pay_offline', gatewayResponse: PAYSTACK_FAILURE_TEXTS.timed_out },
    );
    await paystack.collection.initiate(timedOut);
    standIn.abandonCharge(timedOut.providerReference!);
    assert.equal((await paystack.collection.status(timedOut)).failureReason, 'timed_out');
    assert.equal((await paystack.collection.status(timedOut)).card, undefined, 'a wallet is not a card');
  });

  it('a failed voucher at submit_otp says why; a failed charge check says why too', async () => {
    const attempt = momoAttempt({ network: 'telecel', phone: '+233201260003' });
    standIn.next(
      { endpoint: 'charge.create', phone: '0201260003' },
      { kind: 'charge', status: 'send_otp', afterOtp: 'failed' },
    );
    await paystack.collection.initiate(attempt);
    standIn.next(
      { endpoint: 'charge.submit_otp' },
      { kind: 'charge', status: 'failed', gatewayResponse: PAYSTACK_FAILURE_TEXTS.insufficient_funds },
    );
    assert.deepEqual(await paystack.collection.authorize(attempt, '123456'), {
      rawStatus: 'failed',
      verificationRequired: false,
      outcome: 'failed',
      failureReason: 'insufficient_funds',
    });

    const checked = momoAttempt({ phone: '+233551260004' });
    await paystack.collection.initiate(checked);
    // verify still says pending while GET /charge/{reference} already has the failure and its message.
    standIn.next(
      { endpoint: 'transaction.verify' },
      {
        kind: 'http_error',
        status: 200,
        body: { status: true, message: 'Verification successful', data: { id: 1, status: 'pending' } },
      },
    );
    standIn.next(
      { endpoint: 'charge.check' },
      {
        kind: 'http_error',
        status: 200,
        body: {
          status: true,
          message: 'Reference check successful',
          data: { reference: checked.providerReference, status: 'failed', message: 'Insufficient funds' },
        },
      },
    );
    assert.deepEqual(await paystack.collection.status(checked), {
      rawStatus: 'failed',
      outcome: 'failed',
      failureReason: 'insufficient_funds',
    });
  });

  it('a pending charge settled as failed later reads failed', async () => {
    const attempt = momoAttempt({ phone: '+233591230004' });
    standIn.next({ phone: '0591230004' }, { kind: 'charge', status: 'pending' });
    assert.equal((await paystack.collection.initiate(attempt)).rawStatus, 'pending');
    standIn.settleCharge(attempt.providerReference!, 'failed');
    assert.equal((await paystack.collection.status(attempt)).outcome, 'failed');
    assert.deepEqual(await deliveredFor(attempt.providerReference!), [], 'Paystack sends no charge.failed');
  });

  it('a 4xx validation answer is a decline: ProviderRefusedError with declined, no failover', async () => {
    const attempt = momoAttempt({ phone: '+233551230005' });
    standIn.next(
      { phone: '0551230005' },
      {
        kind: 'http_error',
        status: 400,
        body: { status: false, message: 'Invalid phone number', type: 'validation_error', code: 'invalid_params' },
      },
    );
    await assert.rejects(paystack.collection.initiate(attempt), (error: unknown) => {
      assert.ok(error instanceof ProviderRefusedError);
      assert.equal(error.httpStatus, 400);
      assert.equal(error.declined, true);
      return true;
    });
  });

  it('5xx and 429 are refusals another provider may take (declined false), and nothing was charged', async () => {
    for (const status of [503, 500, 429]) {
      const attempt = momoAttempt({ phone: '+233551230006' });
      standIn.next({ endpoint: 'charge.create' }, { kind: 'http_error', status });
      await assert.rejects(paystack.collection.initiate(attempt), (error: unknown) => {
        assert.ok(error instanceof ProviderRefusedError);
        assert.equal(error.httpStatus, status);
        assert.equal(error.declined, false);
        return true;
      });
      assert.equal(standIn.charge(attempt.providerReference!), undefined);
    }
  });

  it('a refused connection is ProviderRefusedError; once Paystack listens again the same attempt goes through', async () => {
    const attempt = momoAttempt({ phone: '+233551230007' });
    await standIn.refuseConnections();
    try {
      await assert.rejects(paystack.collection.initiate(attempt), (error: unknown) => {
        assert.ok(error instanceof ProviderRefusedError, String(error));
        assert.equal(error.httpStatus, null);
        return true;
      });
    } finally {
      await standIn.acceptConnections();
    }
    assert.equal((await paystack.collection.initiate(attempt)).rawStatus, 'pay_offline');
  });

  it('a timeout is ProviderNoAnswerError; status() then finds the one charge Paystack took', async () => {
    const attempt = momoAttempt({ phone: '+233551230008' });
    standIn.next({ endpoint: 'charge.create', phone: '0551230008' }, { kind: 'hold' });
    const started = Date.now();
    await assert.rejects(paystack.collection.initiate(attempt), ProviderNoAnswerError);
    assert.ok(Date.now() - started < TIMEOUT_MS * 5, 'the client gave up at its timeout');
    assert.equal((await paystack.collection.status(attempt)).outcome, 'pending');
    assert.equal(standIn.charges.filter((charge) => charge.phone === '0551230008').length, 1);
  });

  it('a lost answer after accepting is ProviderNoAnswerError; status() finds exactly one charge; a retry is not a second charge', async () => {
    const attempt = momoAttempt({ phone: '+233551230009' });
    standIn.next({ endpoint: 'charge.create', phone: '0551230009' }, { kind: 'lose_answer' });
    await assert.rejects(paystack.collection.initiate(attempt), ProviderNoAnswerError);
    assert.deepEqual(await paystack.collection.status(attempt), { rawStatus: 'pay_offline', outcome: 'pending' });
    const retried = await paystack.collection.initiate(attempt);
    assert.deepEqual(retried, { rawStatus: 'duplicate_reference', verificationRequired: false, instructions: {} });
    assert.equal(standIn.charges.filter((charge) => charge.phone === '0551230009').length, 1);
  });

  it('a reset before Paystack acted is ProviderNoAnswerError too, and status() then says unknown', async () => {
    const attempt = momoAttempt({ phone: '+233551230010' });
    standIn.next({ endpoint: 'charge.create', phone: '0551230010' }, { kind: 'reset' });
    await assert.rejects(paystack.collection.initiate(attempt), ProviderNoAnswerError);
    assert.deepEqual(await paystack.collection.status(attempt), { rawStatus: 'not_found', outcome: 'unknown' });
  });

  it('status() of a reference Paystack never saw is unknown; a 5xx on status is a refusal', async () => {
    const attempt = momoAttempt();
    assert.deepEqual(await paystack.collection.status(attempt), { rawStatus: 'not_found', outcome: 'unknown' });
    standIn.next({ endpoint: 'transaction.verify' }, { kind: 'http_error', status: 502 });
    await assert.rejects(paystack.collection.status(attempt), ProviderRefusedError);
  });

  it('a charge refunded in full reads reversed; the refund.processed webhook names the charge', async () => {
    const attempt = momoAttempt({ phone: '+233551230011' });
    standIn.next({ phone: '0551230011' }, { kind: 'charge', status: 'success' });
    await paystack.collection.initiate(attempt);
    const refund = await paystack.refund({
      providerReference: attempt.providerReference!,
      amountMinor: 2_550,
      reason: 'order cancelled',
    });
    assert.equal(refund.status, 'pending');
    assert.deepEqual(lastBody('refund.create'), {
      transaction: attempt.providerReference,
      amount: 2_550,
      merchant_note: 'order cancelled',
    });
    const fetched = await api('GET', `/refund/${refund.refundId}`);
    assert.equal((fetched.json.data as Record<string, unknown>).status, 'pending');

    standIn.settleRefund(Number(refund.refundId), 'processed');
    const [delivery] = await deliveredFor(attempt.providerReference!, 'refund.processed');
    assert.ok(delivery);
    assert.equal(paystack.verifyWebhook(delivery.raw, delivery.signature), true);
    assert.equal(paystack.parseWebhook(JSON.parse(delivery.raw.toString('utf8'))).kind, 'refund');
    assert.deepEqual(await paystack.collection.status(attempt), {
      rawStatus: 'reversed',
      outcome: 'reversed',
      amountMinor: 2_550,
      providerTransactionId: idOf(attempt.providerReference!),
    });
  });

  it('a refund Paystack refuses (more than was paid) is a ProviderRefusedError', async () => {
    const attempt = momoAttempt({ phone: '+233551230012' });
    standIn.next({ phone: '0551230012' }, { kind: 'charge', status: 'success' });
    await paystack.collection.initiate(attempt);
    await assert.rejects(
      paystack.refund({ providerReference: attempt.providerReference!, amountMinor: 9_999 }),
      ProviderRefusedError,
    );
  });

  it('resend() is refused: Paystack has no re-prompt, and no second charge is made', async () => {
    const attempt = momoAttempt({ phone: '+233551230013' });
    await paystack.collection.initiate(attempt);
    const charges = standIn.count('charge.create');
    await assert.rejects(paystack.collection.resend(attempt), RailUnavailableError);
    assert.equal(standIn.count('charge.create'), charges);
    assert.equal(paystack.collection.resendSupported, false, 'so the page never offers it');
  });
});
