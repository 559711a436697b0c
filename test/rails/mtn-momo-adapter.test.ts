// The MTN MoMo adapter (src/rails/mtn-momo/) against the Open API stand-in (test/support/standins/mtn-momo.ts) over
// loopback HTTP: one token per product reused and renewed, the request to pay's headers and body, status
// mappings, a re-sent reference (409), a lost answer found again by status, timeouts, refusals, amount
// mismatches, both shapes of a failure reason, the callback, and disbursement (recipient check, transfer).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { APPROVAL_HELP, APPROVAL_WINDOW_S_BY_NETWORK } from '../../src/rails/momo-approval-help.ts';
import { createMtnMomo, type MtnMomo, type MtnMomoSettings } from '../../src/rails/mtn-momo/index.ts';
import { cedisString, msisdnOf, pesewasOf, referenceIdFor, UUID_V4 } from '../../src/rails/mtn-momo/wire.ts';
import type { PayoutForRail } from '../../src/rails/payouts.ts';
import {
  ProviderNoAnswerError,
  ProviderRefusedError,
  RailUnavailableError,
  type AttemptForRail,
  type CollectionRail,
} from '../../src/rails/types.ts';
import { startMtnMomoStandIn, type MtnMomoStandIn, type MtnMomoStandInOptions } from '../support/standins/mtn-momo.ts';

/** Short enough that the timeout cases take a second or two; long enough that a loaded machine (two test files at once) answers a healthy call in time. */
const TEST_TIMEOUT_MS = 1_500;
const PHONE = '+233241234567';
const MSISDN = '233241234567';

function attemptFor(rail: CollectionRail, over: Partial<AttemptForRail> = {}): AttemptForRail {
  const reference = `att_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  return {
    reference,
    sessionId: 'ses_test',
    environment: 'live',
    rail: 'momo',
    amountMinor: 1_250,
    currency: 'GHS',
    network: 'mtn',
    phone: PHONE,
    providerReference: rail.reference!({ reference, rail: 'momo' }),
    payerEmail: null,
    returnUrl: 'http://127.0.0.1/pay/cs_test',
    ...over,
  };
}

function payoutFor(mtn: MtnMomo, over: Partial<PayoutForRail> = {}): PayoutForRail {
  const payoutId = `po_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  return {
    payoutId,
    reference: 'SUPPLIER-MAY',
    providerReference: mtn.payouts!.reference!({ payoutId, reference: 'SUPPLIER-MAY' }),
    amountMinor: 50_000,
    currency: 'GHS',
    recipient: {
      accountType: 'momo',
      bankCode: null,
      accountNumber: null,
      network: 'mtn',
      phone: PHONE,
      accountName: 'Ama Mensah',
    },
    ...over,
  };
}

interface Harness {
  standIn: MtnMomoStandIn;
  mtn: MtnMomo;
  collection: CollectionRail;
  clock: { nowMs: number };
}

async function harness(options: MtnMomoStandInOptions = {}, over: Partial<MtnMomoSettings> = {}): Promise<Harness> {
  const standIn = await startMtnMomoStandIn({ accountHolders: { [MSISDN]: { name: 'Ama Mensah' } }, ...options });
  const clock = { nowMs: Date.now() };
  const mtn = createMtnMomo(
    {
      baseUrl: standIn.baseUrl,
      targetEnvironment: standIn.targetEnvironment,
      timeoutMs: TEST_TIMEOUT_MS,
      callbackUrl: null,
      collection: standIn.credentials.collection,
      disbursement: standIn.credentials.disbursement,
      ...over,
    },
    { now: () => clock.nowMs },
  );
  return { standIn, mtn, collection: mtn.collection!, clock };
}

const only = <T>(items: T[]): T => {
  assert.equal(items.length, 1, `expected exactly one, got ${items.length}`);
  return items[0]!;
};

describe('MTN MoMo adapter: tokens', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(() => h.standIn.close());

  it('asks for one token per product with Basic credentials, the subscription key and no body, and reuses it for many calls', async () => {
    const attempts = Array.from({ length: 4 }, () => attemptFor(h.collection));
    await Promise.all(attempts.map((attempt) => h.collection.initiate(attempt)));
    await Promise.all(attempts.map((attempt) => h.collection.status(attempt)));
    assert.equal(h.standIn.tokensIssued.collection, 1);
    assert.equal(h.standIn.tokensIssued.disbursement, 0);
    assert.equal(h.mtn.tokensIssued().collection, 1);
    const tokenRequest = only(h.standIn.requests.filter((r) => r.endpoint === 'token'));
    assert.equal(tokenRequest.path, '/collection/token/');
    const { userId, apiKey, subscriptionKey } = h.standIn.credentials.collection;
    assert.equal(tokenRequest.headers.authorization, `Basic ${Buffer.from(`${userId}:${apiKey}`).toString('base64')}`);
    assert.equal(tokenRequest.headers['ocp-apim-subscription-key'], subscriptionKey);
    assert.equal(tokenRequest.rawBody, '');
    assert.equal(h.standIn.counts.requesttopay, 4);
    assert.equal(h.standIn.counts.requesttopay_status, 4);
  });

  it('renews the token shortly before expires_in runs out, not after', async () => {
    const attempt = attemptFor(h.collection);
    await h.collection.initiate(attempt);
    h.clock.nowMs += (3_600 - 61) * 1_000; // still more than the refresh margin (60 s) left
    await h.collection.status(attempt);
    assert.equal(h.standIn.tokensIssued.collection, 1);
    h.clock.nowMs += 2_000; // now inside the last minute
    await h.collection.status(attempt);
    assert.equal(h.standIn.tokensIssued.collection, 2);
  });

  it('on a 401 drops the token, takes a new one and sends the call once more; a second 401 is a refusal', async () => {
    const attempt = attemptFor(h.collection);
    await h.collection.initiate(attempt);
    h.standIn.expireTokens('collection');
    assert.equal((await h.collection.status(attempt)).outcome, 'pending');
    assert.equal(h.standIn.tokensIssued.collection, 2);
    assert.equal(h.standIn.counts.requesttopay_status, 2);

    h.standIn.always({ endpoint: 'requesttopay_status' }, { answer: { status: 401, body: { code: 'UNAUTHORIZED' } } });
    const refused = await h.collection.status(attempt).then(
      () => assert.fail('a persistent 401 must not pass'),
      (error: unknown) => error,
    );
    assert.ok(refused instanceof ProviderRefusedError);
    assert.equal(refused.httpStatus, 401);
    assert.equal(h.standIn.counts.requesttopay_status, 4, 'one retry, not a loop');
    assert.equal(h.standIn.tokensIssued.collection, 3);
  });

  it('a request to pay refused with 401 is sent again once with the same X-Reference-Id and charges once', async () => {
    const attempt = attemptFor(h.collection);
    await h.collection.status(attemptFor(h.collection)); // a token in the cache
    h.standIn.expireTokens();
    assert.equal((await h.collection.initiate(attempt)).rawStatus, 'PENDING');
    const posts = h.standIn.requests.filter((r) => r.endpoint === 'requesttopay');
    assert.equal(posts.length, 2);
    assert.deepEqual(
      posts.map((r) => r.headers['x-reference-id']),
      [attempt.providerReference, attempt.providerReference],
    );
    assert.equal(h.standIn.transactions.size, 1);
  });

  it('wrong API credentials are a refusal before any payment is sent; a token call without an answer is a refusal too', async () => {
    const wrong = await harness({}, { collection: { ...h.standIn.credentials.collection, apiKey: 'not-the-key' } });
    try {
      const error = await wrong.collection.initiate(attemptFor(wrong.collection)).catch((e: unknown) => e);
      assert.ok(error instanceof ProviderRefusedError);
      assert.equal(error.httpStatus, 401);
      assert.equal(wrong.standIn.counts.requesttopay, 0);

      wrong.standIn.next('token', { answer: 'timeout' });
      const right = createMtnMomo({
        baseUrl: wrong.standIn.baseUrl,
        targetEnvironment: 'mtnghana',
        timeoutMs: TEST_TIMEOUT_MS,
        callbackUrl: null,
        collection: wrong.standIn.credentials.collection,
        disbursement: null,
      });
      const lost = await right.collection!.initiate(attemptFor(right.collection!)).catch((e: unknown) => e);
      assert.ok(lost instanceof ProviderRefusedError, 'no token, so no request to pay left: certainly not accepted');
      assert.equal(wrong.standIn.counts.requesttopay, 0);
    } finally {
      await wrong.standIn.close();
    }
  });
});

describe('MTN MoMo adapter: request to pay', () => {
  let h: Harness;
  let callbacks: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
  let callbackServer: ReturnType<typeof createServer>;
  let callbackBase: string;

  before(async () => {
    callbackServer = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        callbacks.push({
          method: req.method!,
          url: req.url!,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    callbackBase = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => callbackServer.close(() => resolve())));
  beforeEach(async () => {
    callbacks = [];
    h = await harness(
      { callbackHost: new URL(callbackBase).host },
      { callbackUrl: `${callbackBase}/api/v1/providers/mtn-momo/callback` },
    );
  });
  afterEach(() => h.standIn.close());

  it('serves MTN wallets only, names itself mtn_momo, offers no resend and picks a fresh UUID v4 per attempt', () => {
    assert.equal(h.collection.provider, 'mtn_momo');
    assert.equal(h.collection.resendSupported, false);
    assert.deepEqual(h.collection.serves, { rails: ['momo'], networks: ['mtn'] });
    const first = h.collection.reference!({ reference: 'att_1', rail: 'momo' });
    const second = h.collection.reference!({ reference: 'att_1', rail: 'momo' });
    assert.match(first, UUID_V4);
    assert.match(second, UUID_V4);
    assert.notEqual(first, second);
  });

  it('sends the documented headers and body and answers pending with a phone prompt', async () => {
    const attempt = attemptFor(h.collection);
    const initiated = await h.collection.initiate(attempt);
    assert.equal(initiated.rawStatus, 'PENDING');
    assert.equal(initiated.verificationRequired, false);
    assert.equal(initiated.outcome, undefined);
    assert.equal(initiated.providerReference, undefined, 'ours was stored beforehand');
    assert.equal(initiated.instructions.approval, 'phone_prompt');
    assert.equal(initiated.instructions.resend_supported, false);
    assert.equal(initiated.instructions.approve_within_s, 300, "MTN's documented 5 minutes");
    assert.equal(APPROVAL_WINDOW_S_BY_NETWORK.mtn, 300);
    // The contract's text for MTN; no documented way for the others, so the page shows nothing for them.
    assert.deepEqual(APPROVAL_HELP, {
      mtn: 'Dial *170#, choose My Wallet, then My Approvals, and approve the payment.',
      telecel: null,
      at: null,
    });
    assert.deepEqual(APPROVAL_WINDOW_S_BY_NETWORK, { mtn: 300, telecel: null, at: null });

    const post = only(h.standIn.requests.filter((r) => r.endpoint === 'requesttopay'));
    assert.equal(post.method, 'POST');
    assert.equal(post.path, '/collection/v1_0/requesttopay');
    assert.equal(post.headers['x-reference-id'], attempt.providerReference);
    assert.equal(post.headers['x-target-environment'], 'mtnghana');
    assert.equal(post.headers['ocp-apim-subscription-key'], h.standIn.credentials.collection.subscriptionKey);
    assert.match(post.headers.authorization ?? '', /^Bearer .+/);
    assert.match(post.headers['content-type'] ?? '', /^application\/json/);
    assert.equal(
      post.headers['x-callback-url'],
      `${callbackBase}/api/v1/providers/mtn-momo/callback?reference_id=${attempt.providerReference}`,
    );
    assert.deepEqual(post.body, {
      amount: '12.50',
      currency: 'GHS',
      externalId: attempt.reference,
      payer: { partyIdType: 'MSISDN', partyId: MSISDN },
      payerMessage: `Payment ${attempt.reference}`,
      payeeNote: attempt.reference,
    });
    const tx = h.standIn.transactions.get(attempt.providerReference!)!;
    assert.equal(tx.status, 'PENDING');
    assert.equal(tx.amount, '12.50');
  });

  it('whole cedis carry two decimals too', async () => {
    await h.collection.initiate(attemptFor(h.collection, { amountMinor: 2_000 }));
    assert.equal(
      (only(h.standIn.requests.filter((r) => r.endpoint === 'requesttopay')).body as { amount: string }).amount,
      '20.00',
    );
  });

  it('maps PENDING, SUCCESSFUL and an unknown reference', async () => {
    const attempt = attemptFor(h.collection);
    assert.deepEqual(await h.collection.status(attempt), { rawStatus: 'NOT_FOUND', outcome: 'unknown' });
    await h.collection.initiate(attempt);
    assert.deepEqual(await h.collection.status(attempt), { rawStatus: 'PENDING', outcome: 'pending' });
    const settled = h.standIn.settle(attempt.providerReference!, 'SUCCESSFUL');
    assert.match(settled.financialTransactionId!, /^\d+$/);
    assert.deepEqual(await h.collection.status(attempt), {
      rawStatus: 'SUCCESSFUL',
      outcome: 'paid',
      amountMinor: 1_250,
      providerTransactionId: settled.financialTransactionId,
    });
    const get = h.standIn.requests.filter((r) => r.endpoint === 'requesttopay_status').at(-1)!;
    assert.equal(get.path, `/collection/v1_0/requesttopay/${attempt.providerReference}`);
    assert.equal(get.headers['x-target-environment'], 'mtnghana');
  });

  it('a status the docs do not list, or a success without a readable amount, goes to manual review', async () => {
    const attempt = attemptFor(h.collection);
    await h.collection.initiate(attempt);
    h.standIn.next('requesttopay_status', {
      answer: { status: 200, body: { status: 'REVERSED', amount: '12.50', currency: 'GHS' } },
    });
    assert.deepEqual(await h.collection.status(attempt), { rawStatus: 'REVERSED', outcome: 'manual_review' });
    h.standIn.next('requesttopay_status', {
      answer: { status: 200, body: { status: 'SUCCESSFUL', amount: 'twelve', currency: 'GHS' } },
    });
    assert.equal((await h.collection.status(attempt)).outcome, 'manual_review');
  });

  it('FAILED is failed, with the reason kept whether it comes as a string or as {code, message}', async () => {
    const asString = attemptFor(h.collection);
    h.standIn.next('requesttopay', { outcome: 'FAILED', reason: 'NOT_ENOUGH_FUNDS' });
    await h.collection.initiate(asString);
    const asObject = attemptFor(h.collection);
    h.standIn.next('requesttopay', {
      outcome: 'FAILED',
      reason: { code: 'PAYER_NOT_FOUND', message: 'Payer not found' },
    });
    await h.collection.initiate(asObject);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(await h.collection.status(asString), {
      rawStatus: 'FAILED:NOT_ENOUGH_FUNDS',
      outcome: 'failed',
      failureReason: 'insufficient_funds',
    });
    assert.deepEqual(await h.collection.status(asObject), {
      rawStatus: 'FAILED:PAYER_NOT_FOUND',
      outcome: 'failed',
      failureReason: 'number_not_registered',
    });
    assert.deepEqual((h.standIn.statusBody(asObject.providerReference!) as { reason: unknown }).reason, {
      code: 'PAYER_NOT_FOUND',
      message: 'Payer not found',
    });
  });

  it("each documented FAILED reason becomes the payer's reason; an undocumented or generic one gives none", async () => {
    const expected: Record<string, string | undefined> = {
      NOT_ENOUGH_FUNDS: 'insufficient_funds',
      PAYER_LIMIT_REACHED: 'limit_reached',
      APPROVAL_REJECTED: 'declined_by_payer',
      EXPIRED: 'timed_out',
      COULD_NOT_PERFORM_TRANSACTION: 'timed_out',
      PAYER_NOT_FOUND: 'number_not_registered',
      SENDER_ACCOUNT_NOT_ACTIVE: 'declined',
      INTERNAL_PROCESSING_ERROR: undefined,
      NOT_ALLOWED: undefined,
      TRANSACTION_CANCELED: undefined,
      SOMETHING_NEW: undefined,
    };
    for (const [reason, failureReason] of Object.entries(expected)) {
      const attempt = attemptFor(h.collection);
      await h.collection.initiate(attempt);
      h.standIn.settle(attempt.providerReference!, 'FAILED', { code: reason, message: 'x' });
      const status = await h.collection.status(attempt);
      assert.equal(status.outcome, 'failed', reason);
      assert.equal(status.rawStatus, `FAILED:${reason}`);
      assert.equal(status.failureReason, failureReason, reason);
      assert.equal(status.providerTransactionId, undefined, 'a failure has no financial transaction');
    }
    const bare = attemptFor(h.collection);
    await h.collection.initiate(bare);
    h.standIn.next('requesttopay_status', { answer: { status: 200, body: { status: 'FAILED' } } });
    assert.deepEqual(
      await h.collection.status(bare),
      { rawStatus: 'FAILED', outcome: 'failed' },
      'no reason at all: failed without one',
    );
  });

  it('the 5-minute window ends in COULD_NOT_PERFORM_TRANSACTION: timed out', async () => {
    const windowed = await harness({ approvalWindowMs: 30 });
    try {
      const attempt = attemptFor(windowed.collection);
      await windowed.collection.initiate(attempt);
      await new Promise((resolve) => setTimeout(resolve, 80));
      assert.deepEqual(await windowed.collection.status(attempt), {
        rawStatus: 'FAILED:COULD_NOT_PERFORM_TRANSACTION',
        outcome: 'failed',
        failureReason: 'timed_out',
      });
    } finally {
      await windowed.standIn.close();
    }
  });

  it("financialTransactionId is MTN's id of a success, a number or a string; one that is not an id is left out", async () => {
    const attempt = attemptFor(h.collection);
    await h.collection.initiate(attempt);
    const body = { status: 'SUCCESSFUL', amount: '12.50', currency: 'GHS', externalId: attempt.reference };
    h.standIn.next('requesttopay_status', {
      answer: { status: 200, body: { ...body, financialTransactionId: 23503452 } },
    });
    assert.equal((await h.collection.status(attempt)).providerTransactionId, '23503452');
    h.standIn.next('requesttopay_status', {
      answer: { status: 200, body: { ...body, financialTransactionId: 'x'.repeat(101) } },
    });
    const tooLong = await h.collection.status(attempt);
    assert.equal(tooLong.outcome, 'paid');
    assert.equal(tooLong.providerTransactionId, undefined);
    h.standIn.next('requesttopay_status', {
      answer: { status: 200, body: { ...body, financialTransactionId: '12 34<script>' } },
    });
    assert.equal((await h.collection.status(attempt)).providerTransactionId, undefined);
    h.standIn.next('requesttopay_status', {
      answer: { status: 200, body: { ...body, amount: '10.00', financialTransactionId: '777' } },
    });
    assert.deepEqual(
      await h.collection.status(attempt),
      {
        rawStatus: 'SUCCESSFUL:10.00 GHS',
        outcome: 'amount_mismatch',
        amountMinor: 1_000,
        providerTransactionId: '777',
      },
      'money taken for another amount still names its transaction',
    );
  });

  it('a request approved after Sika stopped waiting is still a success MTN reports (no withdraw operation)', async () => {
    const attempt = attemptFor(h.collection);
    await h.collection.initiate(attempt);
    assert.equal((await h.collection.status(attempt)).outcome, 'pending');
    const approved = h.standIn.approveLate(attempt.reference);
    assert.equal(approved.referenceId, attempt.providerReference);
    const status = await h.collection.status(attempt);
    assert.equal(status.outcome, 'paid');
    assert.equal(status.providerTransactionId, approved.financialTransactionId);
    await h.standIn.waitForCallbacks(1);
    assert.throws(() => h.standIn.approveLate(attempt.providerReference!), /already SUCCESSFUL/);
  });

  it('a success for another amount or currency is amount_mismatch with the amount taken', async () => {
    const less = attemptFor(h.collection);
    h.standIn.next('requesttopay', { outcome: 'SUCCESSFUL', reportAmount: '10.00' });
    await h.collection.initiate(less);
    const otherCurrency = attemptFor(h.collection);
    h.standIn.next('requesttopay', { outcome: 'SUCCESSFUL', reportCurrency: 'EUR' });
    await h.collection.initiate(otherCurrency);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const lessStatus = await h.collection.status(less);
    assert.equal(lessStatus.outcome, 'amount_mismatch');
    assert.equal(lessStatus.amountMinor, 1_000);
    assert.equal((await h.collection.status(otherCurrency)).outcome, 'amount_mismatch');
  });

  it('a re-sent reference meets 409 and is still pending, with one transaction', async () => {
    const attempt = attemptFor(h.collection);
    await h.collection.initiate(attempt);
    const again = await h.collection.initiate(attempt);
    assert.equal(again.rawStatus, 'ALREADY_ACCEPTED');
    assert.equal(again.verificationRequired, false);
    assert.equal(h.standIn.counts.requesttopay, 2);
    assert.equal(h.standIn.transactions.size, 1);
  });

  it('an answer lost after MTN accepted is no answer; status finds the one transaction', async () => {
    const attempt = attemptFor(h.collection);
    h.standIn.next('requesttopay', { answer: 'lose' });
    await assert.rejects(h.collection.initiate(attempt), ProviderNoAnswerError);
    assert.equal(h.standIn.transactions.size, 1);
    assert.equal((await h.collection.status(attempt)).outcome, 'pending');
    h.standIn.settle(attempt.providerReference!, 'SUCCESSFUL');
    assert.equal((await h.collection.status(attempt)).outcome, 'paid');
    assert.equal(h.standIn.counts.requesttopay, 1, 'never sent again');
  });

  it('a request to pay without an answer in time is no answer', async () => {
    h.standIn.next('requesttopay', { answer: 'timeout' });
    const started = Date.now();
    await assert.rejects(h.collection.initiate(attemptFor(h.collection)), ProviderNoAnswerError);
    assert.ok(Date.now() - started < TEST_TIMEOUT_MS * 5);
    h.standIn.next('requesttopay_status', { answer: 'timeout' });
    await assert.rejects(h.collection.status(attemptFor(h.collection)), ProviderNoAnswerError);
  });

  it('5xx and refused connections are refusals another provider may take; a payer reason or a 400 is a decline', async () => {
    h.standIn.next('requesttopay', {
      answer: { status: 503, body: { code: 'SERVICE_UNAVAILABLE', message: 'try later' } },
    });
    const unavailable = await h.collection.initiate(attemptFor(h.collection)).catch((e: unknown) => e);
    assert.ok(unavailable instanceof ProviderRefusedError);
    assert.equal(unavailable.httpStatus, 503);
    assert.equal(unavailable.declined, false);

    h.standIn.next('requesttopay', {
      answer: { status: 500, body: { code: 'INTERNAL_PROCESSING_ERROR', message: 'x' } },
    });
    const internal = (await h.collection
      .initiate(attemptFor(h.collection))
      .catch((e: unknown) => e)) as ProviderRefusedError;
    assert.equal(internal.declined, false);

    h.standIn.next('requesttopay', {
      answer: { status: 500, body: { code: 'PAYER_NOT_FOUND', message: 'Payer not found' } },
    });
    const payer = (await h.collection
      .initiate(attemptFor(h.collection))
      .catch((e: unknown) => e)) as ProviderRefusedError;
    assert.ok(payer instanceof ProviderRefusedError);
    assert.equal(payer.declined, true);
    assert.equal(payer.failureReason, 'number_not_registered', "the refusal carries the payer's reason");
    assert.equal(internal.failureReason, null, 'an outage has no payer reason');

    h.standIn.next('requesttopay', { answer: { status: 500, body: { code: 'NOT_ENOUGH_FUNDS', message: 'low' } } });
    const poor = (await h.collection
      .initiate(attemptFor(h.collection))
      .catch((e: unknown) => e)) as ProviderRefusedError;
    assert.equal(poor.declined, true);
    assert.equal(poor.failureReason, 'insufficient_funds');
    h.standIn.next('requesttopay', {
      answer: { status: 500, body: { code: 'PAYEE_NOT_ALLOWED_TO_RECEIVE', message: 'merchant blocked' } },
    });
    const payee = (await h.collection
      .initiate(attemptFor(h.collection))
      .catch((e: unknown) => e)) as ProviderRefusedError;
    assert.equal(payee.declined, true);
    assert.equal(payee.failureReason, null, 'a wallet code MTN does not explain to a payer: declined without a reason');

    const badNumber = (await h.collection
      .initiate(attemptFor(h.collection, { currency: 'USD' }))
      .catch((e: unknown) => e)) as ProviderRefusedError;
    assert.ok(badNumber instanceof ProviderRefusedError);
    assert.equal(badNumber.httpStatus, 400);
    assert.equal(badNumber.declined, true);
    assert.equal(h.standIn.transactions.size, 0);

    const attempt = attemptFor(h.collection);
    await h.standIn.refuseConnections();
    try {
      const refused = (await h.collection.initiate(attempt).catch((e: unknown) => e)) as ProviderRefusedError;
      assert.ok(refused instanceof ProviderRefusedError, String(refused));
      assert.equal(refused.httpStatus, null);
    } finally {
      await h.standIn.acceptConnections();
    }
    assert.equal((await h.collection.initiate(attempt)).rawStatus, 'PENDING');
  });

  it('a status query answered 5xx is a refusal to ask again later', async () => {
    const attempt = attemptFor(h.collection);
    await h.collection.initiate(attempt);
    h.standIn.next('requesttopay_status', { answer: { status: 503 } });
    const error = (await h.collection.status(attempt).catch((e: unknown) => e)) as ProviderRefusedError;
    assert.ok(error instanceof ProviderRefusedError);
    assert.equal(error.httpStatus, 503);
  });

  it('the callback comes unsigned to our URL with the reference in its query; parseCallback names the transaction', async () => {
    const attempt = attemptFor(h.collection);
    await h.collection.initiate(attempt);
    h.standIn.settle(attempt.providerReference!, 'SUCCESSFUL');
    await h.standIn.waitForCallbacks(1);
    const callback = only(callbacks);
    assert.equal(callback.method, 'PUT');
    assert.equal(callback.headers.authorization, undefined);
    const url = new URL(callback.url, callbackBase);
    assert.equal(url.pathname, '/api/v1/providers/mtn-momo/callback');
    const body = JSON.parse(callback.body) as Record<string, unknown>;
    assert.equal(body.status, 'SUCCESSFUL');
    assert.equal(body.externalId, attempt.reference);
    assert.equal(body.referenceId, undefined, 'the body is the status result, which does not carry the reference id');
    const target = h.mtn.parseCallback(body, Object.fromEntries(url.searchParams));
    assert.deepEqual(target, { referenceId: attempt.providerReference, externalId: attempt.reference });
  });

  it('a callback sent twice, by POST, or never; junk callbacks name nothing', async () => {
    const twice = attemptFor(h.collection);
    h.standIn.next('requesttopay', {
      outcome: 'FAILED',
      reason: 'APPROVAL_REJECTED',
      callback: 'twice',
      callbackMethod: 'POST',
    });
    await h.collection.initiate(twice);
    const never = attemptFor(h.collection);
    h.standIn.next('requesttopay', { outcome: 'SUCCESSFUL', callback: 'never' });
    await h.collection.initiate(never);
    await h.standIn.waitForCallbacks(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(callbacks.length, 2);
    for (const callback of callbacks) {
      assert.equal(callback.method, 'POST');
      assert.equal(new URL(callback.url, callbackBase).searchParams.get('reference_id'), twice.providerReference);
    }
    assert.equal((await h.collection.status(never)).outcome, 'paid', 'no callback: the status query still tells');

    assert.deepEqual(h.mtn.parseCallback(null, {}), { referenceId: null, externalId: null });
    assert.deepEqual(h.mtn.parseCallback({ externalId: "att_1'; drop" }, { reference_id: 'not-a-uuid' }), {
      referenceId: null,
      externalId: null,
    });
    assert.deepEqual(h.mtn.parseCallback({ externalId: 'att_abc', referenceId: twice.providerReference }, {}), {
      referenceId: twice.providerReference,
      externalId: 'att_abc',
    });
  });

  it('has no code step and cannot re-send a prompt: both say so and send nothing', async () => {
    const attempt = attemptFor(h.collection);
    await h.collection.initiate(attempt);
    const before = h.standIn.requests.length;
    await assert.rejects(h.collection.authorize(attempt, '123456'), RailUnavailableError);
    await assert.rejects(h.collection.resend(attempt), RailUnavailableError);
    assert.equal(h.standIn.requests.length, before);
    await assert.rejects(h.collection.initiate(attemptFor(h.collection, { network: 'telecel' })), RailUnavailableError);
  });

  it('a stand-in with another callback host refuses the request: 500 INVALID_CALLBACK_URL_HOST is a refusal', async () => {
    const other = await harness(
      { callbackHost: 'callbacks.example.com' },
      { callbackUrl: `${callbackBase}/api/v1/providers/mtn-momo/callback` },
    );
    try {
      const error = (await other.collection
        .initiate(attemptFor(other.collection))
        .catch((e: unknown) => e)) as ProviderRefusedError;
      assert.ok(error instanceof ProviderRefusedError);
      assert.equal(error.httpStatus, 500);
      assert.equal(error.declined, false);
    } finally {
      await other.standIn.close();
    }
  });
});

describe('MTN MoMo adapter: sandbox', () => {
  it('sends EUR to the sandbox and reads a EUR success as paid', async () => {
    const h = await harness({ targetEnvironment: 'sandbox' });
    try {
      const attempt = attemptFor(h.collection);
      h.standIn.next('requesttopay', { outcome: 'SUCCESSFUL' });
      await h.collection.initiate(attempt);
      const post = only(h.standIn.requests.filter((r) => r.endpoint === 'requesttopay'));
      assert.equal(post.headers['x-target-environment'], 'sandbox');
      assert.equal((post.body as { currency: string }).currency, 'EUR');
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal((await h.collection.status(attempt)).outcome, 'paid');
    } finally {
      await h.standIn.close();
    }
  });
});

describe('MTN MoMo adapter: disbursement', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness({
      accountHolders: { [MSISDN]: { name: 'Ama Mensah' }, '233551234567': { name: 'Kofi Boateng', active: false } },
    });
  });
  afterEach(() => h.standIn.close());

  it('serves MTN wallets, not banks, with its own product token', async () => {
    const payouts = h.mtn.payouts!;
    assert.equal(payouts.provider, 'mtn_momo');
    assert.deepEqual(payouts.serves, { bank: false, networks: ['mtn'] });
    assert.match(payouts.reference!({ payoutId: 'po_1', reference: 'R' }), UUID_V4);
    await payouts.checkRecipient(payoutFor(h.mtn));
    assert.equal(h.standIn.tokensIssued.disbursement, 1);
    assert.equal(h.standIn.tokensIssued.collection, 0);
    const tokenRequest = only(h.standIn.requests.filter((r) => r.endpoint === 'token'));
    assert.equal(tokenRequest.path, '/disbursement/token/');
  });

  it('checkRecipient: the registered name, not found (404 or 500 NOT_FOUND), inactive, or a name MTN will not give', async () => {
    const payouts = h.mtn.payouts!;
    assert.deepEqual(await payouts.checkRecipient(payoutFor(h.mtn)), { ok: true, resolvedName: 'Ama Mensah' });
    const info = h.standIn.requests.find((r) => r.endpoint === 'basicuserinfo')!;
    assert.equal(info.path, `/disbursement/v1_0/accountholder/msisdn/${MSISDN}/basicuserinfo`);
    assert.equal(info.headers['ocp-apim-subscription-key'], h.standIn.credentials.disbursement.subscriptionKey);

    const stranger = payoutFor(h.mtn, {
      recipient: { ...payoutFor(h.mtn).recipient, phone: '+233249999999', accountName: 'Nobody' },
    });
    assert.deepEqual(await payouts.checkRecipient(stranger), { ok: false, reason: 'account_not_found' });
    const inactive = payoutFor(h.mtn, { recipient: { ...payoutFor(h.mtn).recipient, phone: '+233551234567' } });
    assert.deepEqual(await payouts.checkRecipient(inactive), { ok: false, reason: 'account_inactive' });

    h.standIn.next('basicuserinfo', {
      answer: { status: 500, body: { code: 'NOT_FOUND', message: 'Account holder not found' } },
    });
    assert.deepEqual(await payouts.checkRecipient(payoutFor(h.mtn)), { ok: false, reason: 'account_not_found' });
    h.standIn.next('basicuserinfo', { answer: { status: 500, body: { code: 'NOT_ALLOWED', message: 'not allowed' } } });
    assert.deepEqual(await payouts.checkRecipient(payoutFor(h.mtn)), { ok: true, resolvedName: null });
    h.standIn.next('active', { answer: { status: 503 } });
    await assert.rejects(payouts.checkRecipient(payoutFor(h.mtn)), ProviderRefusedError);
    await assert.rejects(
      payouts.checkRecipient(
        payoutFor(h.mtn, { recipient: { ...payoutFor(h.mtn).recipient, accountType: 'bank', network: null } }),
      ),
      ProviderRefusedError,
    );
  });

  it('an unknown holder answered 500 NOT_FOUND by the API is not found too', async () => {
    const other = await harness({ unknownHolderStatus: 500 });
    try {
      const stranger = payoutFor(other.mtn, {
        recipient: { ...payoutFor(other.mtn).recipient, phone: '+233249999999' },
      });
      assert.deepEqual(await other.mtn.payouts!.checkRecipient(stranger), { ok: false, reason: 'account_not_found' });
    } finally {
      await other.standIn.close();
    }
  });

  it('transfer: sent under our reference, pending, then paid with MTN financialTransactionId', async () => {
    const payouts = h.mtn.payouts!;
    const payout = payoutFor(h.mtn);
    assert.deepEqual(await payouts.status(payout), { outcome: 'unknown' });
    assert.deepEqual(await payouts.transfer(payout), { outcome: 'pending', bankReference: payout.providerReference });
    const post = only(h.standIn.requests.filter((r) => r.endpoint === 'transfer'));
    assert.equal(post.path, '/disbursement/v1_0/transfer');
    assert.equal(post.headers['x-reference-id'], payout.providerReference);
    assert.deepEqual(post.body, {
      amount: '500.00',
      currency: 'GHS',
      externalId: payout.payoutId,
      payee: { partyIdType: 'MSISDN', partyId: MSISDN },
      payerMessage: `Payout ${payout.payoutId}`,
      payeeNote: 'SUPPLIER-MAY',
    });
    assert.deepEqual(await payouts.status(payout), { outcome: 'pending', bankReference: payout.providerReference });
    const tx = h.standIn.settle(payout.providerReference!, 'SUCCESSFUL');
    assert.ok(tx.financialTransactionId);
    assert.deepEqual(await payouts.status(payout), { outcome: 'paid', bankReference: tx.financialTransactionId });

    assert.deepEqual(
      await payouts.transfer(payout),
      { outcome: 'pending', bankReference: payout.providerReference },
      're-sent: 409, still one transfer',
    );
    assert.equal(h.standIn.transactions.size, 1);
  });

  it('transfer: failed later with its reason, refused at once for the payee, 5xx refused, no answer', async () => {
    const payouts = h.mtn.payouts!;
    const later = payoutFor(h.mtn);
    h.standIn.next('transfer', {
      outcome: 'FAILED',
      reason: { code: 'NOT_ENOUGH_FUNDS', message: 'Not enough funds' },
    });
    await payouts.transfer(later);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(await payouts.status(later), { outcome: 'failed', reason: 'not_enough_funds' });

    h.standIn.next('transfer', {
      answer: { status: 500, body: { code: 'PAYEE_NOT_FOUND', message: 'Payee not found' } },
    });
    assert.deepEqual(await payouts.transfer(payoutFor(h.mtn)), { outcome: 'failed', reason: 'payee_not_found' });

    h.standIn.next('transfer', { answer: { status: 503, body: { code: 'SERVICE_UNAVAILABLE' } } });
    await assert.rejects(payouts.transfer(payoutFor(h.mtn)), ProviderRefusedError);

    const lost = payoutFor(h.mtn);
    h.standIn.next('transfer', { answer: 'lose', outcome: 'SUCCESSFUL' });
    await assert.rejects(payouts.transfer(lost), ProviderNoAnswerError);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal((await payouts.status(lost)).outcome, 'paid');
    assert.equal(h.standIn.transactions.size, 2, 'the failed-later one and the lost one; refusals created nothing');
  });
});

describe('MTN MoMo wire values', () => {
  it('pesewas to cedis strings and back without floats', () => {
    assert.equal(cedisString(1), '0.01');
    assert.equal(cedisString(1_250), '12.50');
    assert.equal(cedisString(1_205), '12.05');
    assert.equal(cedisString(100_000_000), '1000000.00');
    assert.equal(cedisString(100), '1.00');
    assert.throws(() => cedisString(0), RangeError);
    assert.throws(() => cedisString(12.5), RangeError);
    for (const minor of [1, 9, 10, 99, 100, 1_250, 1_999, 123_456_789])
      assert.equal(pesewasOf(cedisString(minor)), minor);
    assert.equal(pesewasOf('12.5'), 1_250);
    assert.equal(pesewasOf(100), 10_000);
    assert.equal(pesewasOf('12.500'), 1_250);
    assert.equal(pesewasOf('12.505'), null);
    assert.equal(pesewasOf('-1'), null);
    assert.equal(pesewasOf('1e3'), null);
    assert.equal(pesewasOf(null), null);
  });

  it('MSISDNs are international digits without +; a derived reference is stable and UUID v4 shaped', () => {
    assert.equal(msisdnOf('+233241234567'), '233241234567');
    assert.throws(() => msisdnOf('0241234567'), RangeError);
    assert.match(referenceIdFor(null, 'po_1'), UUID_V4);
    assert.equal(referenceIdFor(null, 'po_1'), referenceIdFor(null, 'po_1'));
    assert.notEqual(referenceIdFor(null, 'po_1'), referenceIdFor(null, 'po_2'));
    assert.equal(referenceIdFor('stored', 'po_1'), 'stored');
  });
});
