// The Live refund adapters (src/rails/refunds.ts) against the provider stand-ins over loopback HTTP: Paystack
// (POST /refund, GET /refund/{id}, and the refunds list when the answer to POST was lost) and MTN MoMo
// (the Disbursement product's refund under our X-Reference-Id). For each: accepted then settled, failed,
// refused on a 5xx, declined, a lost answer found again by status() with nothing sent twice, and 'unknown'
// only when the provider has no such refund. Then the routing: the configuration wires both.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/index.ts';
import { configureProviders } from '../../src/rails/live-config.ts';
import { createMtnMomo, type MtnMomo } from '../../src/rails/mtn-momo/index.ts';
import { createPaystack, type Paystack } from '../../src/rails/paystack/index.ts';
import { REFUND_LIST_PER_PAGE } from '../../src/rails/paystack/refund-lookup.ts';
import { refundOutcome } from '../../src/rails/paystack/refunds.ts';
import type { RefundForRail, RefundRail } from '../../src/rails/refunds.ts';
import {
  ProviderNoAnswerError,
  ProviderRefusedError,
  type AttemptForRail,
  type CollectionRail,
} from '../../src/rails/types.ts';
import { startMtnMomoStandIn, type MtnMomoStandIn } from '../support/standins/mtn-momo.ts';
import { startPaystackStandIn, type PaystackStandIn } from '../support/standins/paystack.ts';

/** Short, so a held request fails in a fraction of a second. */
// Long enough for a loaded 2-core machine to answer a call the stand-in answers; only the held answer waits it out.
const TIMEOUT_MS = 2_000;
const SECRET_KEY = 'sk_test_refunds0c0ffee';

const refundId = () => `re_${randomUUID().replace(/-/g, '').slice(0, 20)}`;

/** A refund as the refunds module hands it over: our reference made by reference() and stored first. */
function refundFor(
  rail: RefundRail,
  payment: { providerReference: string; phone: string | null },
  over: Partial<RefundForRail> = {},
): RefundForRail {
  const id = over.refundId ?? refundId();
  return {
    refundId: id,
    providerReference: rail.reference({ refundId: id }),
    paymentProviderReference: payment.providerReference,
    payerPhone: payment.phone,
    amountMinor: 1_000,
    currency: 'GHS',
    reason: 'order cancelled',
    providerRefundId: null,
    createdAt: new Date(),
    ...over,
  };
}

function momoAttempt(rail: CollectionRail, phone: string, amountMinor: number): AttemptForRail {
  const reference = `att_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  return {
    reference,
    sessionId: 'cs_refunds',
    environment: 'live',
    rail: 'momo',
    amountMinor,
    currency: 'GHS',
    network: 'mtn',
    phone,
    providerReference: rail.reference!({ reference, rail: 'momo' }),
    payerEmail: null,
    returnUrl: 'http://127.0.0.1/pay/cs_refunds',
  };
}

const declinedError = (declined: boolean) => (error: unknown) =>
  error instanceof ProviderRefusedError && error.declined === declined;

describe('Paystack refunds', () => {
  let standIn: PaystackStandIn;
  let paystack: Paystack;
  let rail: RefundRail;
  let phoneSeq = 0;

  before(async () => {
    standIn = await startPaystackStandIn({ secretKey: SECRET_KEY });
    paystack = createPaystack({ secretKey: SECRET_KEY, baseUrl: standIn.baseUrl, timeoutMs: TIMEOUT_MS });
    rail = paystack.refunds;
  });
  after(() => standIn.close());
  beforeEach(() => standIn.clearRules());

  /** A paid Mobile Money charge of `amountMinor` at the stand-in. */
  async function paidCharge(amountMinor = 2_550) {
    const local = `05512${String(40_000 + phoneSeq++).padStart(5, '0')}`;
    const attempt = momoAttempt(paystack.collection, `+233${local.slice(1)}`, amountMinor);
    standIn.next({ phone: local }, { kind: 'charge', status: 'success' });
    await paystack.collection.initiate(attempt);
    return { providerReference: attempt.providerReference!, phone: attempt.phone };
  }

  it('reference() is our refund id; a refund is accepted pending, then status() by Paystack id reads succeeded', async () => {
    const refund = refundFor(rail, await paidCharge(), { amountMinor: 1_200 });
    assert.equal(refund.providerReference, refund.refundId);
    const accepted = await rail.refund(refund);
    assert.equal(accepted.outcome, 'pending');
    assert.ok(accepted.outcome === 'pending' && accepted.providerRefundId, 'Paystack names its refund id');
    const sent = standIn.requests.filter((request) => request.endpoint === 'refund.create').at(-1)!.body;
    assert.deepEqual(sent, {
      transaction: refund.paymentProviderReference,
      amount: 1_200,
      currency: 'GHS',
      merchant_note: `sika:${refund.refundId}`,
      customer_note: 'order cancelled',
    });

    const stored = { ...refund, providerRefundId: accepted.providerRefundId };
    assert.deepEqual(await rail.status(stored), {
      outcome: 'pending',
      providerRefundId: accepted.providerRefundId,
      rawStatus: 'pending',
    });
    standIn.settleRefund(Number(accepted.providerRefundId), 'processed', { webhook: 'none' });
    assert.deepEqual(await rail.status(stored), {
      outcome: 'succeeded',
      providerRefundId: accepted.providerRefundId,
      rawStatus: 'processed',
    });
  });

  it('a refund Paystack fails reads failed with its reason', async () => {
    const refund = refundFor(rail, await paidCharge());
    const accepted = await rail.refund(refund);
    assert.ok(accepted.outcome === 'pending' && accepted.providerRefundId);
    standIn.settleRefund(Number(accepted.providerRefundId), 'failed', { webhook: 'none' });
    const failed = await rail.status({ ...refund, providerRefundId: accepted.providerRefundId });
    assert.equal(failed.outcome, 'failed');
    // Found through the list too, where the row carries a reason [OAS RefundListResponseArray].
    const listed = await rail.status(refund);
    assert.deepEqual(listed, {
      outcome: 'failed',
      providerRefundId: accepted.providerRefundId,
      rawStatus: 'failed',
      reason: 'Refund failed',
    });
  });

  it('processing and needs-attention are pending; processed succeeded; failed failed', () => {
    assert.equal(refundOutcome({ id: 1, status: 'processing' }).outcome, 'pending');
    assert.equal(refundOutcome({ id: 1, status: 'needs-attention' }).outcome, 'pending');
    assert.equal(refundOutcome({ id: 1, status: 'pending' }).outcome, 'pending');
    assert.equal(refundOutcome({ id: 1, status: 'processed' }).outcome, 'succeeded');
    assert.deepEqual(refundOutcome({ id: 7, status: 'failed' }), {
      outcome: 'failed',
      providerRefundId: '7',
      rawStatus: 'failed',
      reason: 'refund_failed',
    });
  });

  it('a 5xx is a refusal (not a decline) and creates nothing; more than was paid is declined', async () => {
    const payment = await paidCharge(2_000);
    const before = standIn.refunds.length;
    standIn.next({ endpoint: 'refund.create' }, { kind: 'http_error', status: 502 });
    await assert.rejects(rail.refund(refundFor(rail, payment)), declinedError(false));
    assert.equal(standIn.refunds.length, before);
    await assert.rejects(rail.refund(refundFor(rail, payment, { amountMinor: 2_001 })), declinedError(true));
    await assert.rejects(rail.refund(refundFor(rail, payment, { amountMinor: 0 })), declinedError(true));
    assert.equal(standIn.refunds.length, before);
  });

  it('a lost answer is ProviderNoAnswerError; status() finds the refund in the list, and POST /refund was sent once', async () => {
    const refund = refundFor(rail, await paidCharge());
    const creates = standIn.count('refund.create');
    standIn.next({ endpoint: 'refund.create' }, { kind: 'lose_answer' });
    await assert.rejects(rail.refund(refund), ProviderNoAnswerError);
    const made = standIn.refunds.at(-1)!;
    assert.equal(made.merchantNote, `sika:${refund.refundId}`, 'Paystack took it');

    const found = await rail.status(refund);
    assert.deepEqual(found, { outcome: 'pending', providerRefundId: String(made.id), rawStatus: 'pending' });
    const listCall = standIn.requests.filter((request) => request.endpoint === 'refund.list').at(-1)!;
    const query = new URL(listCall.path, standIn.baseUrl).searchParams;
    assert.equal(query.get('perPage'), String(REFUND_LIST_PER_PAGE));
    assert.ok(
      Date.parse(query.get('from')!) <= refund.createdAt!.getTime(),
      'the window opens before our refund was recorded',
    );
    standIn.settleRefund(made.id, 'processed', { webhook: 'none' });
    assert.equal((await rail.status(refund)).outcome, 'succeeded');
    assert.equal(standIn.count('refund.create'), creates + 1, 'nothing was sent twice');
  });

  it('a refund on a later page of the list is found', async () => {
    const payment = await paidCharge(100_000);
    const refund = refundFor(rail, payment, { amountMinor: 500 });
    standIn.next({ endpoint: 'refund.create' }, { kind: 'lose_answer' });
    await assert.rejects(rail.refund(refund), ProviderNoAnswerError);
    // Newer refunds of the same charge and amount, each another Sika refund's: ours moves past the first page.
    for (let n = 0; n < REFUND_LIST_PER_PAGE + 5; n++)
      await rail.refund(refundFor(rail, payment, { amountMinor: 500 }));
    const listed = standIn.count('refund.list');
    const found = await rail.status(refund);
    assert.equal(found.outcome, 'pending');
    assert.equal(
      found.outcome === 'pending' && found.providerRefundId,
      String(standIn.refunds.find((row) => row.merchantNote === `sika:${refund.refundId}`)!.id),
    );
    assert.equal(standIn.count('refund.list') - listed, 2);
  });

  it('status() is unknown only when Paystack has no refund that could be ours', async () => {
    const payment = await paidCharge(5_000);
    const listed = standIn.count('refund.list');
    assert.deepEqual(await rail.status(refundFor(rail, payment)), { outcome: 'unknown' });
    assert.ok(standIn.count('refund.list') > listed, 'the list was asked');

    // Another Sika refund of the same charge and amount is not ours.
    await rail.refund(refundFor(rail, payment));
    assert.deepEqual(await rail.status(refundFor(rail, payment)), { outcome: 'unknown' });
  });

  it('an unmarked refund (a note Paystack did not keep) counts when it is the only one in the window, never one from before it', async () => {
    const payment = await paidCharge(5_000);
    const made = await fetch(`${standIn.baseUrl}/refund`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ transaction: payment.providerReference, amount: 1_000 }),
    }).then((response) => response.json() as Promise<{ data: { id: number } }>);
    const ours = refundFor(rail, payment);
    assert.equal((await rail.status(ours)).outcome, 'pending');

    standIn.backdateRefund(made.data.id, new Date(Date.now() - 60 * 60_000));
    assert.deepEqual(await rail.status(refundFor(rail, payment)), { outcome: 'unknown' });
  });

  it('two unmarked refunds that could be ours: status() refuses to guess', async () => {
    const payment = await paidCharge(5_000);
    for (let n = 0; n < 2; n++) {
      await fetch(`${standIn.baseUrl}/refund`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ transaction: payment.providerReference, amount: 1_000 }),
      });
    }
    await assert.rejects(rail.status(refundFor(rail, payment)), /could be/);
  });

  it('a list answering 5xx is a refusal, not unknown', async () => {
    const payment = await paidCharge();
    standIn.next({ endpoint: 'refund.list' }, { kind: 'http_error', status: 503 });
    await assert.rejects(rail.status(refundFor(rail, payment)), ProviderRefusedError);
  });

  it('a stored Paystack id that Paystack no longer has is an error, never unknown', async () => {
    const payment = await paidCharge();
    await assert.rejects(
      rail.status(refundFor(rail, payment, { providerRefundId: '987654321' })),
      ProviderRefusedError,
    );
  });

  it('the stand-in lists refunds with its filters: transaction (id or reference), currency, from, to, paging', async () => {
    const payment = await paidCharge(3_000);
    const charge = standIn.charge(payment.providerReference)!;
    await rail.refund(refundFor(rail, payment, { amountMinor: 1_000 }));
    await rail.refund(refundFor(rail, payment, { amountMinor: 1_500 }));
    const list = async (query: string) => {
      const response = await fetch(`${standIn.baseUrl}/refund?${query}`, {
        headers: { authorization: `Bearer ${SECRET_KEY}` },
      });
      return (await response.json()) as {
        data: Array<{ amount: number; transaction: number; transaction_reference: string }>;
        meta: { total: number; pageCount: number };
      };
    };
    for (const transaction of [payment.providerReference, String(charge.id)]) {
      const answer = await list(`transaction=${transaction}`);
      assert.deepEqual(
        answer.data.map((row) => row.amount),
        [1_500, 1_000],
      );
      assert.equal(answer.data[0]!.transaction, charge.id);
      assert.equal(answer.data[0]!.transaction_reference, payment.providerReference);
    }
    assert.equal((await list(`transaction=${payment.providerReference}&currency=NGN`)).data.length, 0);
    assert.equal(
      (await list(`transaction=${payment.providerReference}&to=${new Date(Date.now() - 60_000).toISOString()}`)).data
        .length,
      0,
    );
    assert.equal(
      (await list(`transaction=${payment.providerReference}&from=${new Date(Date.now() + 60_000).toISOString()}`)).data
        .length,
      0,
    );
    const paged = await list(`transaction=${payment.providerReference}&perPage=1&page=2`);
    assert.deepEqual(
      paged.data.map((row) => row.amount),
      [1_000],
    );
    assert.equal(paged.meta.pageCount, 2);
  });
});

describe('MTN MoMo refunds', () => {
  let standIn: MtnMomoStandIn;
  let mtn: MtnMomo;
  let rail: RefundRail;

  before(async () => {
    standIn = await startMtnMomoStandIn();
    mtn = createMtnMomo({
      baseUrl: standIn.baseUrl,
      targetEnvironment: standIn.targetEnvironment,
      timeoutMs: TIMEOUT_MS,
      callbackUrl: null,
      collection: standIn.credentials.collection,
      disbursement: standIn.credentials.disbursement,
    });
    rail = mtn.refunds!;
  });
  after(() => standIn.close());
  beforeEach(() => standIn.clearPlans());

  /** A request to pay the payer approved. */
  async function paidRequest(amountMinor = 2_500) {
    const attempt = momoAttempt(mtn.collection!, '+233241234567', amountMinor);
    await mtn.collection!.initiate(attempt);
    standIn.settle(attempt.providerReference!, 'SUCCESSFUL');
    return { providerReference: attempt.providerReference!, phone: attempt.phone };
  }

  it('reference() is a fresh UUID v4; a refund is accepted (202) pending, then settles SUCCESSFUL', async () => {
    const payment = await paidRequest();
    const refund = refundFor(rail, payment, { amountMinor: 1_250 });
    assert.match(refund.providerReference, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(rail.reference({ refundId: refund.refundId }), refund.providerReference);

    assert.deepEqual(await rail.refund(refund), { outcome: 'pending', providerRefundId: null, rawStatus: 'PENDING' });
    const sent = standIn.requests.filter((request) => request.endpoint === 'refund').at(-1)!;
    assert.equal(sent.path, '/disbursement/v1_0/refund');
    assert.equal(sent.headers['x-reference-id'], refund.providerReference);
    assert.equal(sent.headers['ocp-apim-subscription-key'], standIn.credentials.disbursement.subscriptionKey);
    assert.equal(sent.headers['x-target-environment'], standIn.targetEnvironment);
    assert.match(sent.headers.authorization ?? '', /^Bearer /);
    assert.deepEqual(sent.body, {
      amount: '12.50',
      currency: 'GHS',
      externalId: refund.refundId,
      payerMessage: `Refund ${refund.refundId}`,
      payeeNote: 'Refund: order cancelled',
      referenceIdToRefund: payment.providerReference,
    });
    assert.equal(
      standIn.transactions.get(refund.providerReference)!.party.partyId,
      '233241234567',
      'the payer is paid back',
    );

    assert.deepEqual(await rail.status(refund), { outcome: 'pending', providerRefundId: null, rawStatus: 'PENDING' });
    const settled = standIn.settle(refund.providerReference, 'SUCCESSFUL');
    assert.deepEqual(await rail.status(refund), {
      outcome: 'succeeded',
      providerRefundId: settled.financialTransactionId,
      rawStatus: 'SUCCESSFUL',
    });
  });

  it('a refund MTN fails reads failed with the reason', async () => {
    const refund = refundFor(rail, await paidRequest());
    await rail.refund(refund);
    standIn.settle(refund.providerReference, 'FAILED', { code: 'NOT_ENOUGH_FUNDS', message: 'low balance' });
    assert.deepEqual(await rail.status(refund), {
      outcome: 'failed',
      providerRefundId: null,
      rawStatus: 'FAILED',
      reason: 'not_enough_funds',
    });
  });

  it('a 500 is a refusal (not a decline) and nothing is stored; the same refund may then be sent', async () => {
    const refund = refundFor(rail, await paidRequest());
    standIn.next('refund', {
      answer: { status: 500, body: { code: 'INTERNAL_PROCESSING_ERROR', message: 'try later' } },
    });
    await assert.rejects(rail.refund(refund), declinedError(false));
    assert.equal(standIn.transactions.has(refund.providerReference), false);
    assert.deepEqual(await rail.status(refund), { outcome: 'unknown' });
    assert.equal((await rail.refund(refund)).outcome, 'pending');
  });

  it('business refusals are declines: NOT_ENOUGH_FUNDS, PAYER_NOT_FOUND, an unknown or unpaid request, more than was paid', async () => {
    const payment = await paidRequest(2_000);
    standIn.next('refund', {
      answer: { status: 500, body: { code: 'NOT_ENOUGH_FUNDS', message: 'disbursement account too low' } },
    });
    await assert.rejects(rail.refund(refundFor(rail, payment)), declinedError(true));
    standIn.next('refund', { answer: { status: 400, body: { code: 'PAYER_NOT_FOUND', message: 'no such wallet' } } });
    await assert.rejects(rail.refund(refundFor(rail, payment)), declinedError(true));
    await assert.rejects(
      rail.refund(refundFor(rail, { providerReference: randomUUID(), phone: null })),
      declinedError(true),
    );
    await assert.rejects(rail.refund(refundFor(rail, payment, { amountMinor: 2_001 })), declinedError(true));
    const unpaid = momoAttempt(mtn.collection!, '+233241234567', 1_000);
    await mtn.collection!.initiate(unpaid);
    await assert.rejects(
      rail.refund(refundFor(rail, { providerReference: unpaid.providerReference!, phone: null })),
      declinedError(true),
    );
    assert.equal(
      [...standIn.transactions.values()].filter(
        (tx) => tx.kind === 'refund' && tx.referenceIdToRefund === payment.providerReference,
      ).length,
      0,
    );
  });

  it('a lost answer is ProviderNoAnswerError; status() finds the refund by our reference and POST was sent once', async () => {
    const refund = refundFor(rail, await paidRequest());
    const creates = standIn.counts.refund;
    standIn.next('refund', { answer: 'lose' });
    await assert.rejects(rail.refund(refund), ProviderNoAnswerError);
    const statusQueries = standIn.counts.refund_status;
    assert.deepEqual(await rail.status(refund), { outcome: 'pending', providerRefundId: null, rawStatus: 'PENDING' });
    assert.equal(standIn.counts.refund_status, statusQueries + 1);
    standIn.settle(refund.providerReference, 'SUCCESSFUL');
    assert.equal((await rail.status(refund)).outcome, 'succeeded');
    assert.equal(standIn.counts.refund, creates + 1, 'nothing was sent twice');
  });

  it('a timeout is ProviderNoAnswerError; a re-send under the same reference meets 409 and reads the refund, not a second one', async () => {
    const refund = refundFor(rail, await paidRequest());
    standIn.next('refund', { answer: 'timeout' });
    await assert.rejects(rail.refund(refund), ProviderNoAnswerError);
    standIn.settle(refund.providerReference, 'SUCCESSFUL');
    assert.equal((await rail.refund(refund)).outcome, 'succeeded');
    assert.equal(
      [...standIn.transactions.values()].filter((tx) => tx.kind === 'refund' && tx.externalId === refund.refundId)
        .length,
      1,
    );
  });

  it('status() of a reference MTN never accepted is unknown; a 5xx on status is a refusal', async () => {
    const refund = refundFor(rail, await paidRequest());
    assert.deepEqual(await rail.status(refund), { outcome: 'unknown' });
    standIn.next('refund_status', { answer: { status: 503 } });
    await assert.rejects(rail.status(refund), ProviderRefusedError);
  });

  it('a refused connection is a refusal', async () => {
    const refund = refundFor(rail, await paidRequest());
    await standIn.refuseConnections();
    try {
      await assert.rejects(rail.refund(refund), declinedError(false));
    } finally {
      await standIn.acceptConnections();
    }
  });
});

describe('routing refunds to the provider that took the payment', () => {
  let paystackStandIn: PaystackStandIn;
  let mtnStandIn: MtnMomoStandIn;

  before(async () => {
    paystackStandIn = await startPaystackStandIn({ secretKey: SECRET_KEY });
    mtnStandIn = await startMtnMomoStandIn();
  });
  after(async () => {
    await paystackStandIn.close();
    await mtnStandIn.close();
  });

  const configWith = (env: Record<string, string>) =>
    loadConfig({
      ...process.env,
      LOG_LEVEL: 'silent',
      BASE_URL: 'http://sika.test',
      REDIS_URL: '',
      PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
      ...env,
    });
  const mtnEnv = (products: Array<'COLLECTION' | 'DISBURSEMENT'>) => {
    const env: Record<string, string> = {
      MTN_MOMO_BASE_URL: mtnStandIn.baseUrl,
      MTN_MOMO_TARGET_ENVIRONMENT: mtnStandIn.targetEnvironment,
    };
    for (const product of products) {
      const credentials = mtnStandIn.credentials[product === 'COLLECTION' ? 'collection' : 'disbursement'];
      env[`MTN_MOMO_${product}_SUBSCRIPTION_KEY`] = credentials.subscriptionKey;
      env[`MTN_MOMO_${product}_USER_ID`] = credentials.userId;
      env[`MTN_MOMO_${product}_API_KEY`] = credentials.apiKey;
    }
    return env;
  };

  it('refundsByName() gives each configured provider its own refund adapter, wired to its API', async () => {
    const { providers } = configureProviders(
      configWith({
        PAYSTACK_SECRET_KEY: SECRET_KEY,
        PAYSTACK_BASE_URL: paystackStandIn.baseUrl,
        ...mtnEnv(['COLLECTION', 'DISBURSEMENT']),
      }),
    );
    assert.equal(providers.refundsByName('paystack')?.provider, 'paystack');
    assert.equal(providers.refundsByName('mtn_momo')?.provider, 'mtn_momo');
    assert.equal(providers.refundsByName('bank_statement'), null);
    assert.equal(providers.refundsByName('nobody'), null);

    const unknown = {
      refundId: refundId(),
      providerReference: randomUUID(),
      paymentProviderReference: randomUUID(),
      payerPhone: null,
      amountMinor: 100,
      currency: 'GHS',
      reason: null,
      providerRefundId: null,
      createdAt: new Date(),
    };
    assert.deepEqual(await providers.refundsByName('mtn_momo')!.status(unknown), { outcome: 'unknown' });
    assert.equal(mtnStandIn.counts.refund_status, 1);
    assert.deepEqual(await providers.refundsByName('paystack')!.status(unknown), { outcome: 'unknown' });
    assert.equal(paystackStandIn.count('refund.list'), 1);
  });

  it('MTN without the disbursement product offers no refunds (a refund is a Disbursement operation)', () => {
    const { providers } = configureProviders(configWith(mtnEnv(['COLLECTION'])));
    assert.ok(providers.collectionByName('mtn_momo'));
    assert.equal(providers.refundsByName('mtn_momo'), null);
  });
});
