// The Paystack adapter (src/rails/paystack/) against the Paystack stand-in (test/support/standins/paystack.ts) over
// real loopback HTTP: every mapping of a Paystack answer to Sika's contract (src/rails/types.ts,
// src/rails/payouts.ts), the failures that matter for money (refused, no answer, lost answer, 5xx), webhook
// signatures and the stand-in's own protocol rules.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { newId } from '../../src/lib/ids.ts';
import type { PayoutForRail } from '../../src/rails/payouts.ts';
import { PaystackBanks, PAYSTACK_BANK_NAMES } from '../../src/rails/paystack/banks.ts';
import { PaystackClient } from '../../src/rails/paystack/client.ts';
import { createPaystack, type Paystack } from '../../src/rails/paystack/index.ts';
import {
  ProviderNoAnswerError,
  ProviderRefusedError,
  RailUnavailableError,
  VerificationRefusedError,
  type AttemptForRail,
} from '../../src/rails/types.ts';
import {
  PAYSTACK_FAILURE_TEXTS,
  STAND_IN_GHANA_BANKS,
  startPaystackStandIn,
  type PaystackStandIn,
} from '../support/standins/paystack.ts';

const SECRET_KEY = 'sk_test_4f1c0ffee0ddba11';
/** Short, so a held request fails the test run in a fraction of a second rather than the default 15 s. */
// Long enough for a loaded 2-core machine to answer a call the stand-in answers; only the three held answers wait it out.
const TIMEOUT_MS = 2_000;

interface Received {
  raw: Buffer;
  signature: string | undefined;
}

async function startReceiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const signature = req.headers['x-paystack-signature'];
      received.push({ raw: Buffer.concat(chunks), signature: Array.isArray(signature) ? signature[0] : signature });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/paystack`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let standIn: PaystackStandIn;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let paystack: Paystack;

/** An attempt as the attempt flow hands it over: our reference chosen by reference() and stored first. */
function momoAttempt(overrides: Partial<AttemptForRail> = {}): AttemptForRail {
  const reference = overrides.reference ?? newId('att');
  const rail = overrides.rail ?? 'momo';
  return {
    reference,
    sessionId: newId('cs'),
    environment: 'live',
    rail,
    amountMinor: 2_550,
    currency: 'GHS',
    network: 'mtn',
    phone: '+233551234987',
    providerReference: paystack.collection.reference!({ reference, rail }),
    payerEmail: null,
    returnUrl: 'https://pay.sika.test/pay/cs_x?attempt=att_x',
    ...overrides,
  };
}

const cardAttempt = (overrides: Partial<AttemptForRail> = {}) =>
  momoAttempt({ rail: 'card', network: null, phone: null, ...overrides });

function payout(recipient: Partial<PayoutForRail['recipient']>, overrides: Partial<PayoutForRail> = {}): PayoutForRail {
  const payoutId = overrides.payoutId ?? newId('po');
  return {
    payoutId,
    reference: `PO-${payoutId.slice(-6).toUpperCase()}`,
    providerReference: paystack.payouts.reference!({ payoutId, reference: '' }),
    amountMinor: 120_000,
    currency: 'GHS',
    recipient: {
      accountType: 'bank',
      bankCode: 'GCB',
      accountNumber: '1020304050',
      network: null,
      phone: null,
      accountName: 'Kofi Boateng',
      ...recipient,
    },
    ...overrides,
  };
}

const standInCode = (name: string) => STAND_IN_GHANA_BANKS.find((bank) => bank.name === name)!.code;
const requestsTo = (endpoint: Parameters<PaystackStandIn['count']>[0]) =>
  standIn.requests.filter((request) => request.endpoint === endpoint);
const lastBody = (endpoint: Parameters<PaystackStandIn['count']>[0]) => requestsTo(endpoint).at(-1)!.body;
/** Paystack's id of a charge (data.id), as the adapter names it. */
const idOf = (reference: string) => String(standIn.charge(reference)!.id);

async function deliveredFor(reference: string, event?: string): Promise<Received[]> {
  await standIn.webhooksIdle();
  return receiver.received.filter((delivery) => {
    const parsed = paystack.parseWebhook(JSON.parse(delivery.raw.toString('utf8')));
    return parsed.reference === reference && (!event || parsed.event === event);
  });
}

async function api(method: string, path: string, body?: unknown, key: string | null = SECRET_KEY) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const response = await fetch(`${standIn.baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

before(async () => {
  receiver = await startReceiver();
  standIn = await startPaystackStandIn({ secretKey: SECRET_KEY, webhookUrl: receiver.url });
  paystack = createPaystack({ secretKey: SECRET_KEY, baseUrl: standIn.baseUrl, timeoutMs: TIMEOUT_MS });
});

after(async () => {
  await standIn.close();
  await receiver.close();
});

beforeEach(() => standIn.clearRules());

describe('the stand-in speaks Paystack', () => {
  it('answers 401 Invalid key without the secret key or with another', async () => {
    for (const key of [null, 'sk_test_someone_else']) {
      const answer = await api('GET', '/transaction/verify/anything', undefined, key);
      assert.equal(answer.status, 401);
      assert.deepEqual(answer.json, { status: false, message: 'Invalid key' });
    }
  });

  it('validates a charge: email required, reference charset, duplicate reference, provider without case', async () => {
    const missing = await api('POST', '/charge', {
      amount: 100,
      currency: 'GHS',
      mobile_money: { phone: '0551234987', provider: 'mtn' },
    });
    assert.equal(missing.status, 400);
    assert.equal(missing.json.type, 'validation_error');
    assert.equal(missing.json.code, 'missing_params');
    const badReference = await api('POST', '/charge', {
      email: 'a@b.co',
      amount: 100,
      currency: 'GHS',
      reference: 'has space',
      mobile_money: { phone: '0551234987', provider: 'mtn' },
    });
    assert.equal(badReference.status, 400);
    const reference = `ok-ref.${Date.now()}=1`;
    const first = await api('POST', '/charge', {
      email: 'a@b.co',
      amount: 100,
      currency: 'GHS',
      reference,
      mobile_money: { phone: '0551234987', provider: 'MTN' },
    });
    assert.equal(first.status, 200);
    assert.equal((first.json.data as Record<string, unknown>).status, 'pay_offline');
    const again = await api('POST', '/charge', {
      email: 'a@b.co',
      amount: 100,
      currency: 'GHS',
      reference,
      mobile_money: { phone: '0551234987', provider: 'mtn' },
    });
    assert.equal(again.status, 400);
    assert.equal(again.json.code, 'duplicate_reference');
    assert.equal(again.json.message, 'Duplicate Transaction Reference');
  });

  it('lists the Ghana telcos and at least the 15 banks, Paystack-style', async () => {
    const telcos = await api('GET', '/bank?currency=GHS&type=mobile_money');
    assert.deepEqual((telcos.json.data as Array<{ code: string }>).map((telco) => telco.code).sort(), [
      'ATL',
      'MTN',
      'VOD',
    ]);
    const banks = (await api('GET', '/bank?currency=GHS&type=ghipss')).json.data as Array<Record<string, unknown>>;
    assert.ok(banks.length >= 15);
    for (const bank of banks) {
      assert.equal(typeof bank.name, 'string');
      assert.equal(typeof bank.code, 'string');
      assert.equal(typeof bank.slug, 'string');
      assert.equal(bank.type, 'ghipss');
      assert.equal(bank.currency, 'GHS');
    }
  });

  it('holds transfers to Paystack rules: lowercase reference of 16+ characters, GHS, a known recipient', async () => {
    const recipient = await api('POST', '/transferrecipient', {
      type: 'mobile_money',
      name: 'Abina Nana',
      account_number: '0551234987',
      bank_code: 'MTN',
      currency: 'GHS',
    });
    assert.equal(recipient.status, 201);
    const code = (recipient.json.data as Record<string, unknown>).recipient_code as string;
    assert.match(code, /^RCP_/);
    const same = await api('POST', '/transferrecipient', {
      type: 'mobile_money',
      name: 'Abina Nana',
      account_number: '0551234987',
      bank_code: 'MTN',
      currency: 'GHS',
    });
    assert.equal(
      (same.json.data as Record<string, unknown>).recipient_code,
      code,
      'the same account is the existing recipient',
    );
    const base = { source: 'balance', amount: 500, recipient: code, currency: 'GHS' };
    assert.equal((await api('POST', '/transfer', { ...base, reference: 'UPPER-case-reference-1' })).status, 400);
    assert.equal((await api('POST', '/transfer', { ...base, reference: 'short-ref' })).status, 400);
    assert.equal(
      (await api('POST', '/transfer', { ...base, currency: undefined, reference: 'no-currency-means-ngn-1' })).status,
      400,
    );
    const unknown = await api('POST', '/transfer', {
      ...base,
      recipient: 'RCP_nobody',
      reference: 'unknown-recipient-0001',
    });
    assert.equal(unknown.json.code, 'invalid_transfer_recipient');
  });
});

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

describe('Paystack collection: card on the hosted page', () => {
  it('initialize gives the hosted page; Pay settles it, sends the payer back with trxref and reference, and status() says paid', async () => {
    const attempt = cardAttempt();
    const initiated = await paystack.collection.initiate(attempt);
    const body = lastBody('transaction.initialize');
    assert.deepEqual(body.channels, ['card']);
    assert.equal(body.callback_url, attempt.returnUrl);
    assert.equal(body.reference, attempt.providerReference);
    assert.equal(body.amount, 2_550);
    assert.equal(
      (body.metadata as Record<string, unknown>).cancel_action,
      attempt.returnUrl,
      'a payer who cancels comes back to the payer page',
    );
    const redirectUrl = initiated.instructions.redirect_url as string;
    assert.ok(redirectUrl.startsWith(`${standIn.baseUrl}/checkout/`));

    const page = await fetch(redirectUrl);
    const html = await page.text();
    assert.match(html, />Pay</);
    assert.match(html, />Decline</);
    const pay = await fetch(`${redirectUrl}/pay`, { method: 'POST', redirect: 'manual' });
    assert.equal(pay.status, 303);
    const back = new URL(pay.headers.get('location')!);
    assert.equal(`${back.origin}${back.pathname}`, 'https://pay.sika.test/pay/cs_x');
    assert.equal(back.searchParams.get('trxref'), attempt.providerReference);
    assert.equal(back.searchParams.get('reference'), attempt.providerReference);
    assert.equal(back.searchParams.get('attempt'), 'att_x');

    assert.deepEqual(await paystack.collection.status(attempt), {
      rawStatus: 'success',
      outcome: 'paid',
      amountMinor: 2_550,
      providerTransactionId: idOf(attempt.providerReference!),
      card: { brand: 'visa', last4: '4081' },
    });
    assert.equal((await deliveredFor(attempt.providerReference!, 'charge.success')).length, 1);
  });

  it('Decline fails it, with the reason its words give', async () => {
    const attempt = cardAttempt();
    const initiated = await paystack.collection.initiate(attempt);
    const decline = await fetch(`${initiated.instructions.redirect_url as string}/decline`, {
      method: 'POST',
      redirect: 'manual',
    });
    assert.equal(decline.status, 303);
    const status = await paystack.collection.status(attempt);
    assert.equal(status.outcome, 'failed');
    assert.equal(status.failureReason, 'declined');
    assert.equal(status.card, undefined, 'only a success names the card');

    const poor = cardAttempt();
    const page = await paystack.collection.initiate(poor);
    const form = new URLSearchParams({ gateway_response: PAYSTACK_FAILURE_TEXTS.insufficient_funds });
    await fetch(`${page.instructions.redirect_url as string}/decline`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
    });
    assert.equal((await paystack.collection.status(poor)).failureReason, 'insufficient_funds');
  });

  it('abandoned ends a card attempt (cancelled, not failed); a late payment on the same page then reads paid', async () => {
    const attempt = cardAttempt();
    const initiated = await paystack.collection.initiate(attempt);
    const redirectUrl = initiated.instructions.redirect_url as string;
    assert.deepEqual(await paystack.collection.status(attempt), {
      rawStatus: 'abandoned',
      outcome: 'cancelled',
      providerTransactionId: idOf(attempt.providerReference!),
    });

    // The payer presses Cancel on Paystack's page: back to cancel_action, the transaction still unpaid.
    const cancel = await fetch(`${redirectUrl}/cancel`, { method: 'POST', redirect: 'manual' });
    assert.equal(cancel.status, 303);
    assert.equal(cancel.headers.get('location'), attempt.returnUrl);
    assert.ok(standIn.charge(attempt.providerReference!)!.cancelledAt);
    assert.equal((await paystack.collection.status(attempt)).outcome, 'cancelled');

    // The payer goes back to the page and pays after all: Paystack reports a success Sika applies late.
    const pay = await fetch(`${redirectUrl}/pay`, { method: 'POST', redirect: 'manual' });
    assert.equal(pay.status, 303);
    const late = await paystack.collection.status(attempt);
    assert.equal(late.outcome, 'paid');
    assert.deepEqual(late.card, { brand: 'visa', last4: '4081' });
    assert.equal((await deliveredFor(attempt.providerReference!, 'charge.success')).length, 1);

    const later = cardAttempt();
    await paystack.collection.initiate(later);
    standIn.abandonCharge(later.providerReference!);
    assert.equal((await paystack.collection.status(later)).outcome, 'cancelled');
    standIn.settleCharge(later.providerReference!, 'success');
    assert.equal((await paystack.collection.status(later)).outcome, 'paid');
  });

  it("the card is read from authorization: brand, else card_type's first word; never from a wallet or a bad last4", async () => {
    const attempt = cardAttempt();
    await paystack.collection.initiate(attempt);
    standIn.settleCharge(attempt.providerReference!, 'success');
    const verified = (await api('GET', `/transaction/verify/${attempt.providerReference}`)).json.data as Record<
      string,
      unknown
    >;
    const authorization = verified.authorization as Record<string, unknown>;
    const answer = (over: Record<string, unknown>) => ({
      status: true,
      message: 'Verification successful',
      data: { ...verified, authorization: { ...authorization, ...over } },
    });
    const statusWith = async (over: Record<string, unknown>) => {
      standIn.next({ endpoint: 'transaction.verify' }, { kind: 'http_error', status: 200, body: answer(over) });
      return paystack.collection.status(attempt);
    };
    assert.deepEqual((await statusWith({ brand: '', card_type: 'mastercard DEBIT', last4: '5555' })).card, {
      brand: 'mastercard',
      last4: '5555',
    });
    assert.deepEqual((await statusWith({ brand: ' verve ', last4: '1234' })).card, { brand: 'verve', last4: '1234' });
    assert.equal((await statusWith({ last4: 'X149' })).card, undefined, 'a masked wallet number is no card');
    assert.equal((await statusWith({ brand: '', card_type: '' })).card, undefined, 'no brand at all: no card');
    assert.equal((await statusWith({ channel: 'mobile_money' })).card, undefined);
    const longBrand = (await statusWith({ brand: 'b'.repeat(40) })).card!;
    assert.equal(longBrand.brand.length, 30);
    standIn.next(
      { endpoint: 'transaction.verify' },
      { kind: 'http_error', status: 200, body: { ...answer({}), data: { ...answer({}).data, id: 'not-an-id' } } },
    );
    const noId = await paystack.collection.status(attempt);
    assert.equal(noId.outcome, 'paid');
    assert.equal(noId.providerTransactionId, undefined);

    const wallet = momoAttempt({ phone: '+233551260005' });
    standIn.next({ phone: '0551260005' }, { kind: 'charge', status: 'success' });
    await paystack.collection.initiate(wallet);
    const paidByWallet = await paystack.collection.status(wallet);
    assert.equal(paidByWallet.outcome, 'paid');
    assert.equal(paidByWallet.card, undefined, 'a Mobile Money authorization (Mtn mobile money, X987) is not a card');
  });

  it('initialize again with the same reference is already accepted', async () => {
    const attempt = cardAttempt();
    await paystack.collection.initiate(attempt);
    assert.equal((await paystack.collection.initiate(attempt)).rawStatus, 'duplicate_reference');
  });
});

describe('Paystack webhooks', () => {
  const body = JSON.stringify({
    event: 'charge.success',
    data: { id: 7, reference: 'sika-att-x', amount: 100, currency: 'GHS', status: 'success' },
  });

  it('verifyWebhook takes the hex HMAC-SHA512 of the raw body and nothing else', async () => {
    const { createHmac } = await import('node:crypto');
    const good = createHmac('sha512', SECRET_KEY).update(body).digest('hex');
    assert.equal(paystack.verifyWebhook(body, good), true);
    assert.equal(paystack.verifyWebhook(Buffer.from(body), good.toUpperCase()), true);
    assert.equal(paystack.verifyWebhook(body, undefined), false);
    assert.equal(paystack.verifyWebhook(body, ''), false);
    assert.equal(paystack.verifyWebhook(body, good.slice(2)), false);
    assert.equal(paystack.verifyWebhook(`${body} `, good), false);
    assert.equal(paystack.verifyWebhook(body, createHmac('sha512', 'sk_test_other').update(body).digest('hex')), false);
    assert.equal(paystack.verifyWebhook(body, 'z'.repeat(128)), false);
  });

  it('a webhook sent twice is two deliveries with one event key', async () => {
    const attempt = momoAttempt({ phone: '+233551230020' });
    standIn.next({ phone: '0551230020' }, { kind: 'charge', status: 'success', webhook: 'twice' });
    await paystack.collection.initiate(attempt);
    const deliveries = await deliveredFor(attempt.providerReference!, 'charge.success');
    assert.equal(deliveries.length, 2);
    const keys = deliveries.map(
      (delivery) => paystack.parseWebhook(JSON.parse(delivery.raw.toString('utf8'))).eventKey,
    );
    assert.equal(keys[0], keys[1]);
    assert.ok(deliveries.every((delivery) => paystack.verifyWebhook(delivery.raw, delivery.signature)));
  });

  it('a webhook with a bad signature or none fails verification; a webhook never sent never arrives', async () => {
    const bad = momoAttempt({ phone: '+233551230021' });
    await paystack.collection.initiate(bad);
    standIn.settleCharge(bad.providerReference!, 'success', { webhook: 'bad_signature' });
    const [badDelivery] = await deliveredFor(bad.providerReference!);
    assert.ok(badDelivery?.signature);
    assert.equal(paystack.verifyWebhook(badDelivery.raw, badDelivery.signature), false);

    const unsigned = momoAttempt({ phone: '+233551230022' });
    await paystack.collection.initiate(unsigned);
    standIn.settleCharge(unsigned.providerReference!, 'success', { webhook: 'unsigned' });
    const [unsignedDelivery] = await deliveredFor(unsigned.providerReference!);
    assert.equal(unsignedDelivery?.signature, undefined);
    assert.equal(paystack.verifyWebhook(unsignedDelivery!.raw, unsignedDelivery!.signature), false);

    const silent = momoAttempt({ phone: '+233551230023' });
    await paystack.collection.initiate(silent);
    standIn.settleCharge(silent.providerReference!, 'success', { webhook: 'none' });
    assert.deepEqual(await deliveredFor(silent.providerReference!), []);
    assert.equal((await paystack.collection.status(silent)).outcome, 'paid', 'status() still finds it');
  });

  it('parseWebhook names the kind, the reference and a key per event', () => {
    assert.deepEqual(
      paystack.parseWebhook({
        event: 'transfer.failed',
        data: { id: 9, reference: 'sika-po-x', transfer_code: 'TRF_1' },
      }),
      {
        kind: 'transfer',
        event: 'transfer.failed',
        reference: 'sika-po-x',
        eventKey: 'paystack:transfer.failed:sika-po-x:9:',
      },
    );
    const refund = paystack.parseWebhook({
      event: 'refund.pending',
      data: { transaction_reference: 'sika-att-y', refund_reference: null, amount: '5000' },
    });
    assert.deepEqual(refund, {
      kind: 'refund',
      event: 'refund.pending',
      reference: 'sika-att-y',
      eventKey: 'paystack:refund.pending:sika-att-y::5000',
    });
    assert.equal(paystack.parseWebhook({ event: 'charge.dispute.create', data: { reference: 'r' } }).kind, 'other');
    assert.equal(paystack.parseWebhook({ event: 'subscription.create', data: {} }).kind, 'other');
    assert.deepEqual(paystack.parseWebhook('not an object'), {
      kind: 'other',
      event: '',
      reference: null,
      eventKey: 'paystack::::',
    });
  });
});

describe('Paystack payouts', () => {
  it('every one of our bank codes maps to exactly one bank in the list', async () => {
    const banks = new PaystackBanks(
      new PaystackClient({ secretKey: SECRET_KEY, baseUrl: standIn.baseUrl, timeoutMs: TIMEOUT_MS }),
    );
    const codes = await Promise.all(Object.keys(PAYSTACK_BANK_NAMES).map((ours) => banks.codeFor(ours)));
    assert.equal(codes.length, 15);
    assert.ok(codes.every((code) => code !== null));
    assert.equal(new Set(codes).size, 15);
    assert.equal(await banks.codeFor('GCB'), standInCode('GCB Bank Limited'));
    assert.equal(await banks.codeFor('ABS'), standInCode('Absa Bank Ghana Limited'));
    assert.equal(await banks.codeFor('XYZ'), null);
  });

  it('checkRecipient resolves a bank account by Paystack code, reads the bank list once, and reports the name without judging it', async () => {
    standIn.setAccount(standInCode('GCB Bank Limited'), '1020304050', 'KOFI BOATENG');
    const listsBefore = standIn.count('bank.list');
    const check = await paystack.payouts.checkRecipient(payout({}));
    assert.deepEqual(check, { ok: true, resolvedName: 'KOFI BOATENG' });
    const query = new URL(requestsTo('bank.resolve').at(-1)!.path, 'http://x').searchParams;
    assert.equal(query.get('bank_code'), standInCode('GCB Bank Limited'));
    assert.equal(query.get('account_number'), '1020304050');

    standIn.next(
      { endpoint: 'bank.resolve', accountNumber: '1020304050' },
      { kind: 'resolve', accountName: 'SOMEONE ELSE' },
    );
    assert.deepEqual(await paystack.payouts.checkRecipient(payout({})), { ok: true, resolvedName: 'SOMEONE ELSE' });
    assert.ok(standIn.count('bank.list') - listsBefore <= 1, 'the bank list is cached');
  });

  it('checkRecipient: an account the bank does not know is account_not_found; a bank Paystack does not list is bank_not_supported', async () => {
    assert.deepEqual(await paystack.payouts.checkRecipient(payout({ accountNumber: '9999999999' })), {
      ok: false,
      reason: 'account_not_found',
    });
    assert.deepEqual(await paystack.payouts.checkRecipient(payout({ bankCode: 'XYZ' })), {
      ok: false,
      reason: 'bank_not_supported',
    });
  });

  it('checkRecipient of a wallet: the name when Paystack resolves it, no name (still ok) when it cannot', async () => {
    standIn.setAccount('MTN', '0241234567', 'AMA MENSAH');
    const known = payout({
      accountType: 'momo',
      bankCode: null,
      accountNumber: null,
      network: 'mtn',
      phone: '+233241234567',
    });
    assert.deepEqual(await paystack.payouts.checkRecipient(known), { ok: true, resolvedName: 'AMA MENSAH' });
    const query = new URL(requestsTo('bank.resolve').at(-1)!.path, 'http://x').searchParams;
    assert.equal(query.get('bank_code'), 'MTN');
    const unknown = payout({
      accountType: 'momo',
      bankCode: null,
      accountNumber: null,
      network: 'telecel',
      phone: '+233209999999',
    });
    assert.deepEqual(await paystack.payouts.checkRecipient(unknown), { ok: true, resolvedName: null });
  });

  it('checkRecipient: a 5xx is thrown for the worker to try again', async () => {
    standIn.next({ endpoint: 'bank.resolve' }, { kind: 'http_error', status: 503 });
    await assert.rejects(paystack.payouts.checkRecipient(payout({})), ProviderRefusedError);
  });

  it('a bank transfer: a ghipss recipient, then the transfer under our reference in GHS; success is paid, with the transfer.success webhook', async () => {
    const p = payout({ accountNumber: '1020304051' });
    standIn.next(
      { endpoint: 'transfer.initiate', accountNumber: '1020304051' },
      { kind: 'transfer', status: 'success' },
    );
    const outcome = await paystack.payouts.transfer(p);
    assert.equal(outcome.outcome, 'paid');
    assert.match((outcome as { bankReference: string }).bankReference, /^TRF_/);
    const recipient = lastBody('transferrecipient.create');
    assert.deepEqual(recipient, {
      type: 'ghipss',
      name: 'Kofi Boateng',
      account_number: '1020304051',
      bank_code: standInCode('GCB Bank Limited'),
      currency: 'GHS',
    });
    const transfer = lastBody('transfer.initiate');
    assert.equal(transfer.source, 'balance');
    assert.equal(transfer.amount, 120_000);
    assert.equal(transfer.currency, 'GHS');
    assert.equal(transfer.reference, p.providerReference);
    assert.match(transfer.recipient as string, /^RCP_/);
    const [delivery] = await deliveredFor(p.providerReference!, 'transfer.success');
    assert.ok(delivery);
    assert.equal(paystack.verifyWebhook(delivery.raw, delivery.signature), true);
    assert.equal(paystack.parseWebhook(JSON.parse(delivery.raw.toString('utf8'))).kind, 'transfer');
    assert.deepEqual(await paystack.payouts.status(p), outcome);
  });

  it('a wallet transfer: a mobile_money recipient with the telco code and the local number', async () => {
    const p = payout({
      accountType: 'momo',
      bankCode: null,
      accountNumber: null,
      network: 'telecel',
      phone: '+233201112233',
    });
    const outcome = await paystack.payouts.transfer(p);
    assert.equal(outcome.outcome, 'pending');
    const recipient = lastBody('transferrecipient.create');
    assert.equal(recipient.type, 'mobile_money');
    assert.equal(recipient.bank_code, 'VOD');
    assert.equal(recipient.account_number, '0201112233');
  });

  it('pending, then failed: status() reads failed with the reason; the transfer.failed webhook arrives', async () => {
    const p = payout({ accountNumber: '1020304052' });
    const sent = await paystack.payouts.transfer(p);
    assert.equal(sent.outcome, 'pending');
    standIn.settleTransfer(p.providerReference!, 'failed', { reason: 'Account is dormant' });
    assert.deepEqual(await paystack.payouts.status(p), {
      outcome: 'failed',
      reason: 'paystack transfer failed: Account is dormant',
    });
    assert.equal((await deliveredFor(p.providerReference!, 'transfer.failed')).length, 1);
  });

  it('a transfer Paystack answers failed at once is failed', async () => {
    const p = payout({ accountNumber: '1020304057' });
    standIn.next(
      { endpoint: 'transfer.initiate', accountNumber: '1020304057' },
      { kind: 'transfer', status: 'failed', reason: 'Processor down' },
    );
    // The initiate answer carries no gateway_response [SNIP api/transfers/initiate/response.json]; verify does.
    assert.deepEqual(await paystack.payouts.transfer(p), { outcome: 'failed', reason: 'paystack transfer failed' });
    assert.deepEqual(await paystack.payouts.status(p), {
      outcome: 'failed',
      reason: 'paystack transfer failed: Processor down',
    });
  });

  it('paid, then reversed: status() reads returned', async () => {
    const p = payout({ accountNumber: '1020304053' });
    await paystack.payouts.transfer(p);
    standIn.settleTransfer(p.providerReference!, 'success');
    assert.equal((await paystack.payouts.status(p)).outcome, 'paid');
    standIn.settleTransfer(p.providerReference!, 'reversed');
    const returned = await paystack.payouts.status(p);
    assert.equal(returned.outcome, 'returned');
    assert.equal((await deliveredFor(p.providerReference!, 'transfer.reversed')).length, 1);
  });

  it('transfer() again with the same payout is the same transfer: one recipient, one transfer sent', async () => {
    const p = payout({ accountNumber: '1020304054' });
    const sentBefore = standIn.transfersSent;
    const recipientsBefore = standIn.recipients.length;
    const first = await paystack.payouts.transfer(p);
    const second = await paystack.payouts.transfer(p);
    assert.deepEqual(second, first);
    assert.equal(standIn.transfersSent, sentBefore + 1);
    assert.equal(standIn.recipients.length, recipientsBefore + 1);
  });

  it('a lost answer after accepting is ProviderNoAnswerError; status() finds the one transfer; sending again does not pay twice', async () => {
    const p = payout({ accountNumber: '1020304055' });
    standIn.next({ endpoint: 'transfer.initiate', accountNumber: '1020304055' }, { kind: 'lose_answer' });
    const sentBefore = standIn.transfersSent;
    await assert.rejects(paystack.payouts.transfer(p), ProviderNoAnswerError);
    assert.equal((await paystack.payouts.status(p)).outcome, 'pending');
    await paystack.payouts.transfer(p);
    assert.equal(standIn.transfersSent, sentBefore + 1);
  });

  it('a timeout on the transfer is ProviderNoAnswerError, and status() finds it', async () => {
    const p = payout({ accountNumber: '1020304058' });
    standIn.next({ endpoint: 'transfer.initiate', accountNumber: '1020304058' }, { kind: 'hold' });
    await assert.rejects(paystack.payouts.transfer(p), ProviderNoAnswerError);
    assert.equal((await paystack.payouts.status(p)).outcome, 'pending');
  });

  it('a 5xx on the transfer is ProviderRefusedError and nothing was sent: status() says unknown', async () => {
    const p = payout({ accountNumber: '1020304056' });
    standIn.next({ endpoint: 'transfer.initiate', accountNumber: '1020304056' }, { kind: 'http_error', status: 500 });
    await assert.rejects(paystack.payouts.transfer(p), ProviderRefusedError);
    assert.deepEqual(await paystack.payouts.status(p), { outcome: 'unknown' });
  });

  it('a low balance is thrown (the payout waits), not failed', async () => {
    const poor = await startPaystackStandIn({ secretKey: SECRET_KEY, balanceMinor: 1_000 });
    try {
      const adapter = createPaystack({ secretKey: SECRET_KEY, baseUrl: poor.baseUrl, timeoutMs: TIMEOUT_MS });
      const p = {
        ...payout({ accountNumber: '1020304060' }),
        providerReference: adapter.payouts.reference!({ payoutId: newId('po'), reference: '' }),
      };
      await assert.rejects(adapter.payouts.transfer(p), ProviderRefusedError);
      assert.equal(poor.transfersSent, 0);
    } finally {
      await poor.close();
    }
  });

  it('a transfer in another currency than GHS fails without calling Paystack', async () => {
    const transfersBefore = standIn.count('transfer.initiate');
    const outcome = await paystack.payouts.transfer(payout({}, { currency: 'USD' }));
    assert.equal(outcome.outcome, 'failed');
    assert.equal(standIn.count('transfer.initiate'), transfersBefore);
  });
});
