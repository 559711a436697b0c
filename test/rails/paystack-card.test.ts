// The Paystack adapter's card collection on Paystack's hosted page (src/rails/paystack/) against the Paystack
// stand-in over real loopback HTTP: initialize, Pay and Decline, an abandoned page, and the card read from
// authorization.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  api,
  cardAttempt,
  deliveredFor,
  idOf,
  lastBody,
  momoAttempt,
  paystack,
  standIn,
  usePaystackStandIn,
} from '../support/paystack-adapter.ts';
import { PAYSTACK_FAILURE_TEXTS } from '../support/standins/paystack.ts';

usePaystackStandIn();

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
