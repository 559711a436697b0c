// Live payments through Paystack, end to end over real HTTP against the Paystack stand-in: MoMo for MTN
// (the only provider configured) and Telecel with its voucher code, a card through the hosted page, signed
// webhooks (good, repeated, forged), a lost answer, and failover from MTN MoMo refusing connections.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import type { MtnMomoStandIn } from '../support/standins/mtn-momo.ts';
import type { PaystackStandIn } from '../support/standins/paystack.ts';
import {
  attemptStatus,
  eventually,
  liveSession,
  merchantSession,
  payerAttempt,
  useLiveWithStandIns,
  type LiveApp,
} from '../support/live.ts';

const SECRET = 'sk_test_standin_secret';
const paidSession = (app: LiveApp, m: CreatedMerchant, id: string) =>
  eventually(async () => {
    const s = (await merchantSession(app, m, id)).json;
    return s.status === 'success' ? s : undefined;
  });

describe('Live payments through Paystack (with MTN MoMo first in LIVE_PROVIDER_ORDER)', () => {
  let paystack: PaystackStandIn;
  let mtn: MtnMomoStandIn;
  let app: LiveApp;
  let m: CreatedMerchant;
  useLiveWithStandIns({ secretKey: SECRET, mtnProducts: 'collection' }, async (live) => {
    ({ app, paystack, mtn } = live);
    m = await app.t.merchant();
  });

  it('offers every network and card in Live; MTN goes to MTN MoMo first, Telecel and AT to Paystack', async () => {
    const session = await liveSession(app, m);
    const view = (await app.http('GET', `/api/v1/checkout/sessions/${session.id}`)).json;
    assert.deepEqual(view.allowed_rails, ['momo', 'card', 'cash']);
    assert.deepEqual(view.allowed_operators, ['mtn', 'telecel', 'at']);
    const mtnAttempt = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: '0241234567' }))
      .json;
    assert.equal(mtnAttempt.provider, 'mtn_momo');
  });

  it('Telecel through Paystack: the voucher step is our authorize; a wrong code is refused, the right one pays, the signed webhook is verified before it is read', async () => {
    const session = await liveSession(app, m, 20_000);
    const res = await payerAttempt(app, session.id, { rail: 'momo', operator: 'telecel', phone: '0201234567' });
    assert.equal(res.status, 201, res.text);
    const attempt = res.json;
    assert.equal(attempt.provider, 'paystack');
    assert.equal(attempt.instructions.mode, 'verification_code');
    const charge = paystack.charge(attempt.provider_reference)!;
    assert.equal(charge.provider, 'vod');
    assert.equal(charge.amount, attempt.amount_charged_minor);
    const base = `/api/v1/checkout/sessions/${session.id}/provider-attempts/${attempt.attempt_reference}`;
    const wrong = await app.http('POST', `${base}/authorize`, { body: { code: '999999' } });
    assert.equal(wrong.status, 400, wrong.text);
    assert.equal(wrong.json.error.code, 'PROVIDER_PAYMENT_REJECTED');
    const right = await app.http('POST', `${base}/authorize`, { body: { code: '123456' } });
    assert.equal(right.status, 200, right.text);
    await paystack.webhooksIdle();
    const paid = await paidSession(app, m, session.id);
    assert.equal(paid.status, 'success');
    assert.ok(paystack.count('transaction.verify') >= 1, 'confirmed by a verify call');
  });

  it('a webhook twice is applied once; a forged one is refused 401 and changes nothing', async () => {
    const session = await liveSession(app, m);
    const attempt = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'at', phone: '0261234567' })).json;
    assert.equal(attempt.provider, 'paystack');
    const forged = await fetch(`${app.baseUrl}/api/v1/providers/paystack/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-paystack-signature': 'f'.repeat(128) },
      body: JSON.stringify({
        event: 'charge.success',
        data: { reference: attempt.provider_reference, status: 'success', amount: attempt.amount_charged_minor },
      }),
    });
    assert.equal(forged.status, 401);
    assert.equal((await merchantSession(app, m, session.id)).json.status, 'pending');
    const verifies = paystack.count('transaction.verify');
    paystack.settleCharge(attempt.provider_reference, 'success', { webhook: 'twice' });
    await paystack.webhooksIdle();
    await paidSession(app, m, session.id);
    const deliveries = paystack.webhooks.filter((w) => w.body.includes(attempt.provider_reference));
    assert.equal(deliveries.length, 2);
    assert.ok(
      deliveries.every((w) => w.answer === 200),
      JSON.stringify(deliveries.map((w) => w.answer)),
    );
    assert.equal(paystack.count('transaction.verify'), verifies + 1, 'the repeat is not verified again');
    const completed = await app.t.db.query(
      `SELECT count(*)::int AS n FROM events WHERE object_id = $1 AND type = 'checkout.session.completed'`,
      [session.id],
    );
    assert.equal(completed[0]!.n, 1);
  });

  it('a webhook with a bad signature is refused, and the payment is still confirmed by the payer page asking', async () => {
    const session = await liveSession(app, m);
    const attempt = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'at', phone: '0271234567' })).json;
    paystack.settleCharge(attempt.provider_reference, 'success', { webhook: 'bad_signature' });
    await paystack.webhooksIdle();
    assert.equal(paystack.webhooks.at(-1)!.answer, 401);
    assert.equal((await merchantSession(app, m, session.id)).json.status, 'pending');
    assert.equal((await attemptStatus(app, session.id, attempt.attempt_reference)).json.status, 'paid');
  });

  it('a card through the hosted page: the instructions carry the redirect, the payer returns to our page, the result is verified', async () => {
    const session = await liveSession(app, m, 15_000);
    const res = await payerAttempt(app, session.id, { rail: 'card' });
    assert.equal(res.status, 201, res.text);
    const attempt = res.json;
    assert.equal(attempt.instructions.mode, 'card_network_hosted_session');
    assert.ok(attempt.instructions.redirect_url.startsWith(`${paystack.baseUrl}/checkout/`));
    const charge = paystack.charge(attempt.provider_reference)!;
    assert.equal(
      charge.callbackUrl,
      `${app.t.config.checkoutUrlHost}/pay/${session.id}?attempt=${attempt.attempt_reference}`,
    );
    // The payer pays on Paystack's page and is sent back (the form's redirect is not followed here).
    const page = await fetch(attempt.instructions.redirect_url);
    assert.equal(page.status, 200);
    const accessCode = new URL(attempt.instructions.redirect_url).pathname.split('/').pop();
    const back = await fetch(`${paystack.baseUrl}/checkout/${accessCode}/pay`, { method: 'POST', redirect: 'manual' });
    assert.equal(back.status, 303);
    assert.ok(back.headers.get('location')!.startsWith(charge.callbackUrl!));
    const status = (await attemptStatus(app, session.id, attempt.attempt_reference)).json;
    assert.equal(status.status, 'paid');
  });

  it('a lost answer after Paystack accepted: one charge, found by its reference', async () => {
    const session = await liveSession(app, m);
    const charges = paystack.charges.length;
    paystack.next({ endpoint: 'charge.create' }, { kind: 'lose_answer' });
    const res = await payerAttempt(app, session.id, { rail: 'momo', operator: 'at', phone: '0561234567' });
    assert.equal(res.status, 201, res.text);
    assert.equal(paystack.charges.length, charges + 1);
    paystack.settleCharge(res.json.provider_reference, 'success', { webhook: 'none' });
    assert.equal((await attemptStatus(app, session.id, res.json.attempt_reference)).json.status, 'paid');
    assert.equal(paystack.charges.length, charges + 1);
  });

  it('failover: MTN MoMo refuses connections, so the MTN payment goes to Paystack; one provider per attempt', async () => {
    const session = await liveSession(app, m);
    await mtn.refuseConnections();
    try {
      const res = await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: '0551234567' });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.json.provider, 'paystack');
      const charge = paystack.charge(res.json.provider_reference)!;
      assert.equal(charge.provider, 'mtn');
      paystack.settleCharge(res.json.provider_reference, 'success');
      await paystack.webhooksIdle();
      await paidSession(app, m, session.id);
    } finally {
      await mtn.acceptConnections();
    }
  });

  it('both providers down: 503 PROVIDER_RAIL_UNAVAILABLE with Retry-After, and nothing paid', async () => {
    const session = await liveSession(app, m);
    await mtn.refuseConnections();
    const rule = paystack.always({ endpoint: 'charge.create' }, { kind: 'http_error', status: 502 });
    try {
      const res = await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: '0241234567' });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.json.error.code, 'PROVIDER_RAIL_UNAVAILABLE');
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
      assert.equal((await merchantSession(app, m, session.id)).json.status, 'open');
    } finally {
      rule();
      await mtn.acceptConnections();
    }
  });
});
