// Live Mobile Money through the MTN MoMo Open API, end to end over real HTTP: Sika configured with the
// stand-in's base URL and credentials, a payer paying on the Live checkout API, MTN's callback (a hint
// only), lost answers, outages, another amount, late success, and MTN wallet payouts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import type { MtnMomoStandIn } from '../support/standins/mtn-momo.ts';
import {
  attemptStatus,
  eventually,
  liveSession,
  merchantSession,
  payerAttempt,
  useLiveWithMtnMomo,
  type LiveApp,
} from '../support/live.ts';

const MTN_PHONE = '0241234567';

describe('Live MTN MoMo through the MTN MoMo Open API', () => {
  let mtn: MtnMomoStandIn;
  let app: LiveApp;
  let m: CreatedMerchant;
  useLiveWithMtnMomo(
    {
      '233241234567': { name: 'Ama Mensah' },
      '233245550013': { name: 'Kojo Asante' },
    },
    async (live) => {
      ({ app, mtn } = live);
      m = await app.t.merchant();
    },
  );

  it('offers Mobile Money in Live for MTN only (the one network a configured provider collects)', async () => {
    const session = await liveSession(app, m);
    const view = (await app.http('GET', `/api/v1/checkout/sessions/${session.id}`)).json;
    assert.deepEqual(view.allowed_rails, ['momo', 'cash']);
    assert.deepEqual(view.allowed_operators, ['mtn']);
    const options = (await app.http('GET', '/api/v1/checkout/options?livemode=true')).json;
    assert.deepEqual(
      options.mobile_money_operators.map((o: { value: string }) => o.value),
      ['mtn'],
    );
    const telecel = await payerAttempt(app, session.id, { rail: 'momo', operator: 'telecel', phone: '0201234567' });
    assert.equal(telecel.status, 409);
    assert.equal(telecel.json.error.code, 'RAIL_NOT_OFFERED');
  });

  it('a request to pay with our X-Reference-Id stored first, the callback only a hint, the status fetched, the merchant credited once', async () => {
    const session = await liveSession(app, m, 10_000);
    const res = await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: MTN_PHONE });
    assert.equal(res.status, 201, res.text);
    const attempt = res.json;
    assert.equal(attempt.provider, 'mtn_momo');
    assert.match(attempt.provider_reference, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const sent = mtn.transactions.get(attempt.provider_reference);
    assert.ok(sent, 'MTN received the request under the stored reference');
    assert.equal(sent.amount, (attempt.amount_charged_minor / 100).toFixed(2));
    assert.equal(sent.party.partyId, '233241234567');
    assert.equal(sent.externalId, attempt.attempt_reference);
    const rtp = mtn.requests.find((r) => r.endpoint === 'requesttopay' && r.method === 'POST')!;
    assert.equal(rtp.headers['x-target-environment'], 'mtnghana');
    assert.ok(rtp.headers['x-callback-url']?.startsWith(`${app.baseUrl}/api/v1/providers/mtn-momo/callback`));

    // The payer approves; MTN calls back once. Sika asks MTN (GET) before applying anything.
    const statusQueries = mtn.counts.requesttopay_status;
    mtn.settle(attempt.provider_reference, 'SUCCESSFUL');
    await mtn.waitForCallbacks(1);
    const paid = await eventually(async () => {
      const s = (await merchantSession(app, m, session.id)).json;
      return s.status === 'success' ? s : undefined;
    });
    assert.equal(paid.status, 'success');
    assert.ok(mtn.counts.requesttopay_status > statusQueries, 'the callback made Sika ask MTN');
    const credits = await app.t.db.query(
      `SELECT count(*)::int AS n FROM events WHERE object_id = $1 AND type = 'checkout.session.completed'`,
      [session.id],
    );
    assert.equal(credits[0]!.n, 1);
  });

  it('resend: MTN has no way to prompt again, so the payer is told 409 RESEND_NOT_AVAILABLE and nothing is sent', async () => {
    const session = await liveSession(app, m);
    const attempt = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: MTN_PHONE })).json;
    const before = mtn.counts.requesttopay;
    const res = await app.http(
      'POST',
      `/api/v1/checkout/sessions/${session.id}/provider-attempts/${attempt.attempt_reference}/resend`,
    );
    assert.equal(res.status, 409, res.text);
    assert.equal(res.json.error.code, 'RESEND_NOT_AVAILABLE');
    assert.equal(mtn.counts.requesttopay, before);
  });

  it('a payer page polling with refresh asks MTN at most once per 5 seconds per attempt', async () => {
    const session = await liveSession(app, m);
    const attempt = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: MTN_PHONE })).json;
    const before = mtn.counts.requesttopay_status;
    const answers = [];
    for (let i = 0; i < 5; i++)
      answers.push((await attemptStatus(app, session.id, attempt.attempt_reference)).json.refreshed);
    assert.deepEqual(answers, [true, false, false, false, false]);
    assert.equal(mtn.counts.requesttopay_status, before + 1);
  });

  it('a forged callback changes nothing: MTN says the transaction is still pending', async () => {
    const session = await liveSession(app, m);
    const attempt = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: MTN_PHONE })).json;
    const forged = await app.http('PUT', '/api/v1/providers/mtn-momo/callback', {
      body: {
        externalId: attempt.attempt_reference,
        status: 'SUCCESSFUL',
        amount: '100.00',
        currency: 'GHS',
        financialTransactionId: '1',
      },
    });
    assert.equal(forged.status, 200);
    assert.equal((await merchantSession(app, m, session.id)).json.status, 'pending');
  });

  it('a callback that never comes: the payer page refresh asks MTN and applies a failure, reopening the session with the reason', async () => {
    const session = await liveSession(app, m);
    mtn.next('requesttopay', { callback: 'never' });
    const attempt = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: MTN_PHONE })).json;
    mtn.settle(attempt.provider_reference, 'FAILED', 'NOT_ENOUGH_FUNDS');
    const status = (await attemptStatus(app, session.id, attempt.attempt_reference)).json;
    assert.equal(status.status, 'failed');
    assert.equal(status.session_status, 'open');
    const reopened = await app.t.db.query<{ payload: string }>(
      `SELECT payload FROM events WHERE object_id = $1 AND type = 'checkout.session.reopened'`,
      [session.id],
    );
    assert.equal(reopened.length, 1);
    const data = JSON.parse(reopened[0]!.payload).data;
    assert.equal(data.reopened.attempt_reference, attempt.attempt_reference);
    assert.match(data.reopened.reason, /NOT_ENOUGH_FUNDS/);
    assert.equal(data.session.status, 'open');
  });

  it('a lost answer after MTN accepted: asked with the same reference, never sent twice; one transaction, paid', async () => {
    const session = await liveSession(app, m);
    const before = mtn.counts.requesttopay;
    mtn.next('requesttopay', { answer: 'lose' });
    const res = await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: MTN_PHONE });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.status, 'pending');
    assert.equal(mtn.counts.requesttopay, before + 1, 'one request to pay, not a second');
    const ref = res.json.provider_reference;
    assert.ok(mtn.transactions.get(ref));
    mtn.settle(ref, 'SUCCESSFUL');
    const status = (await attemptStatus(app, session.id, res.json.attempt_reference)).json;
    assert.equal(status.status, 'paid');
    assert.equal(mtn.counts.requesttopay, before + 1);
  });

  it('a timeout: the attempt stays pending under its stored reference; nothing is re-sent', async () => {
    const session = await liveSession(app, m);
    const before = mtn.counts.requesttopay;
    mtn.next('requesttopay', { answer: 'timeout' });
    const res = await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: MTN_PHONE });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.status, 'pending');
    assert.equal(mtn.counts.requesttopay, before + 1);
    mtn.settle(res.json.provider_reference, 'SUCCESSFUL');
    assert.equal((await attemptStatus(app, session.id, res.json.attempt_reference)).json.status, 'paid');
  });

  it('an outage (503 on create, Paystack not configured): 503 PROVIDER_RAIL_UNAVAILABLE with Retry-After; nothing paid, no failed try counted', async () => {
    const session = await liveSession(app, m);
    mtn.next('requesttopay', { answer: { status: 503, body: { code: 'SERVICE_UNAVAILABLE', message: 'down' } } });
    const res = await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: MTN_PHONE });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.json.error.code, 'PROVIDER_RAIL_UNAVAILABLE');
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    const s = (await merchantSession(app, m, session.id)).json;
    assert.equal(s.status, 'open');
    const failed = await app.t.db.query(
      `SELECT count(*)::int AS n FROM payment_attempts WHERE session_id = $1 AND status = 'failed'`,
      [session.id],
    );
    assert.equal(failed[0]!.n, 0);
    // And the payer can pay right after.
    const again = await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: MTN_PHONE });
    assert.equal(again.status, 201, again.text);
  });

  it('a success for another amount is held as amount_mismatch, not credited', async () => {
    const session = await liveSession(app, m);
    mtn.next('requesttopay', { reportAmount: '1.00' });
    const attempt = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: MTN_PHONE })).json;
    mtn.settle(attempt.provider_reference, 'SUCCESSFUL');
    const status = (await attemptStatus(app, session.id, attempt.attempt_reference)).json;
    assert.equal(status.status, 'amount_mismatch');
    assert.equal(status.session_status, 'pending');
    // What MTN took is recorded for the operator's decision (issue 30), and shown beside the amount charged.
    assert.equal(status.amount_received_minor, 100);
  });

  it('a late success after the session expired is applied and announced: money taken is never dropped', async () => {
    const session = await liveSession(app, m, 10_000, { expires_in_seconds: 60 });
    const attempt = (await payerAttempt(app, session.id, { rail: 'momo', operator: 'mtn', phone: MTN_PHONE })).json;
    // The session runs out while the payer is still approving.
    await app.t.db.query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      session.id,
    ]);
    const { expireDueSessions } = await import('../../src/checkout/expiry.ts');
    await expireDueSessions(app.t.db, app.t.config.checkoutUrlHost);
    assert.equal((await merchantSession(app, m, session.id)).json.status, 'expired');
    mtn.settle(attempt.provider_reference, 'SUCCESSFUL');
    await mtn.waitForCallbacks(mtn.callbacks.length + 0);
    const paid = await eventually(async () => {
      const s = (await merchantSession(app, m, session.id)).json;
      return s.status === 'success' ? s : undefined;
    });
    assert.equal(paid.status, 'success');
  });
});
