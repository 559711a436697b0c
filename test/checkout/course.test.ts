// A payer can change course (issue 31), over the payer API on both storages: cancelling a pending attempt
// (POST .../provider-attempts/{ref}/cancel, idempotent per session), the session payable again with another
// number or method, a late success on the abandoned attempt applied and, when the session was paid otherwise,
// refunded in full automatically with the merchant told; a ported number accepted for the network chosen;
// the resend offered only where the provider can. A session never keeps two payments.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { balance, checkInvariants } from '../../src/ledger/service.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope, call } from '../support/http.ts';
import {
  createSession,
  creditOf,
  eventTypes,
  getPublic,
  MTN_PHONE,
  momoBody,
  postAttempt,
  simulate,
  startAttempt,
  TELECEL_PHONE,
  totalOf,
} from '../support/checkout.ts';

describe(`a payer changes course (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const cancel = (sessionId: string, ref: string, idempotencyKey?: string) =>
    call(
      t,
      'POST',
      `/api/v1/checkout/sessions/${sessionId}/provider-attempts/${ref}/cancel`,
      idempotencyKey === undefined ? {} : { idempotencyKey },
    );
  const available = async (m: CreatedMerchant) => (await balance(t.db, m.merchant_id, 'test')).available_minor;
  const merchantView = async (m: CreatedMerchant, id: string) =>
    (await call(t, 'GET', `/api/v1/sessions/${id}`, { key: m.test_api_key })).json();
  const refundsOf = (sessionId: string) =>
    t.db.query<{ id: string; attempt_id: string; amount_minor: number; status: string; reason: string; route: string }>(
      'SELECT id, attempt_id, amount_minor::int AS amount_minor, status, reason, route FROM refunds WHERE session_id = $1 ORDER BY created_at',
      [sessionId],
    );
  const paidAttempts = async (sessionId: string) =>
    (
      await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM payment_attempts WHERE session_id = $1 AND status = 'paid'`,
        [sessionId],
      )
    )[0]!.n;

  it('cancels a pending prompt: cancelled (changed_course, a sentence for the payer), the session open, another number accepted', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 20_000 });
    const first = await startAttempt(t, session.id, momoBody(20_000));
    const busy = await postAttempt(t, session.id, momoBody(20_000, '0241112223'));
    assertErrorEnvelope(busy, 409, 'PAYMENT_ATTEMPT_PENDING');

    const res = await cancel(session.id, first.attempt_reference);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.status, 'cancelled');
    assert.equal(body.failure_reason, 'changed_course');
    assert.match(body.failure_message, /another number or method/);
    assert.equal(body.session_status, 'open');
    assert.equal((await getPublic(t, session.id)).json().status, 'open');
    assert.deepEqual((await eventTypes(t, session.id)).slice(-2), [
      'checkout.session.pending',
      'checkout.session.reopened',
    ]);

    const second = await startAttempt(t, session.id, momoBody(20_000, '0241112223'));
    assert.notEqual(second.attempt_reference, first.attempt_reference);
    const paid = await simulate(t, m, second.attempt_reference, 'paid');
    assert.equal(paid.session_status, 'success');
    assert.equal(await available(m), creditOf('momo', 20_000));
  });

  it('with an Idempotency-Key a retry answers the first result (Idempotent-Replayed); a cancel of an ended attempt changes nothing', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 15_000 });
    const a = await startAttempt(t, session.id, momoBody(15_000));
    const first = await cancel(session.id, a.attempt_reference, 'cancel-1');
    const again = await cancel(session.id, a.attempt_reference, 'cancel-1');
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    const plain = await cancel(session.id, a.attempt_reference);
    assert.equal(plain.json().status, 'cancelled');
    // The same key on another session's attempt is another payer's key: it is not replayed there.
    const other = await createSession(t, m, { amount_minor: 15_000 });
    const b = await startAttempt(t, other.id, momoBody(15_000));
    const elsewhere = await cancel(other.id, b.attempt_reference, 'cancel-1');
    assert.equal(elsewhere.statusCode, 200, elsewhere.body);
    assert.equal(elsewhere.headers['idempotent-replayed'], undefined);
    assert.equal(elsewhere.json().attempt_reference, b.attempt_reference);
  });

  it('an attempt already paid keeps its outcome: cancel answers paid and the session stays success', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 12_000 });
    const a = await startAttempt(t, session.id, momoBody(12_000));
    await simulate(t, m, a.attempt_reference, 'paid');
    const res = await cancel(session.id, a.attempt_reference);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'paid');
    assert.equal(res.json().session_status, 'success');
    assert.equal(res.json().failure_message, null);
  });

  it("a cancel of another session's attempt, or of an unknown one, is 404", async () => {
    const m = await t.merchant();
    const s1 = await createSession(t, m);
    const s2 = await createSession(t, m);
    const a = await startAttempt(t, s1.id, momoBody(50_000));
    assertErrorEnvelope(await cancel(s2.id, a.attempt_reference), 404, 'NOT_FOUND');
    assertErrorEnvelope(await cancel(s1.id, 'att_nope'), 404, 'NOT_FOUND');
  });

  it('a late success on the abandoned attempt after another paid: applied, refunded in full automatically, the merchant told; one payment kept', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 30_000 });
    const abandoned = await startAttempt(t, session.id, momoBody(30_000));
    await cancel(session.id, abandoned.attempt_reference);
    const card = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', 30_000) });
    await simulate(t, m, card.attempt_reference, 'paid');
    const afterFirst = await available(m);
    assert.equal(afterFirst, creditOf('card', 30_000));

    // The payer approves the old prompt as well.
    const late = await simulate(t, m, abandoned.attempt_reference, 'paid');
    assert.equal(late.status, 'paid');
    assert.equal(late.session_status, 'success');
    const refunds = await refundsOf(session.id);
    assert.equal(refunds.length, 1);
    assert.equal(refunds[0]!.attempt_id, abandoned.attempt_reference);
    assert.equal(refunds[0]!.amount_minor, totalOf('momo', 30_000), 'everything the payer was charged goes back');
    assert.equal(refunds[0]!.status, 'succeeded');
    assert.match(refunds[0]!.reason, /Duplicate payment/);
    // The merchant neither gains nor loses by the duplicate.
    assert.equal(await available(m), afterFirst);
    const view = await merchantView(m, session.id);
    assert.equal(view.status, 'success');
    assert.equal(view.payment.attempt_reference ?? view.payment.id, card.attempt_reference);
    assert.equal(view.refunded_minor, 0, 'the payment itself was not refunded: the duplicate was');
    const events = await t.db.query<{ type: string; payload: string }>(
      `SELECT type, payload FROM events WHERE object_id = $1 AND type = 'checkout.session.duplicate_payment_refunded'`,
      [session.id],
    );
    assert.equal(events.length, 1);
    assert.deepEqual((JSON.parse(events[0]!.payload) as { data: { duplicate: unknown } }).data.duplicate, {
      attempt_reference: abandoned.attempt_reference,
      amount_minor: totalOf('momo', 30_000),
      currency: 'GHS',
      refund_id: refunds[0]!.id,
      reason: 'session_already_paid',
    });
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it("a late success on an abandoned attempt when nothing else paid is the session's payment (no refund)", async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 25_000 });
    const a = await startAttempt(t, session.id, momoBody(25_000));
    await cancel(session.id, a.attempt_reference);
    const late = await simulate(t, m, a.attempt_reference, 'paid');
    assert.equal(late.session_status, 'success');
    assert.equal((await refundsOf(session.id)).length, 0);
    assert.equal(await available(m), creditOf('momo', 25_000));
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('a ported number: the network chosen decides (an MTN-prefixed number pays with Telecel); a number of no network is still 400', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 10_000 });
    const ported = await startAttempt(t, session.id, momoBody(10_000, MTN_PHONE, 'telecel'));
    assert.equal(ported.instructions.operator, 'telecel');
    await cancel(session.id, ported.attempt_reference);
    const atToMtn = await startAttempt(t, session.id, momoBody(10_000, TELECEL_PHONE, 'mtn'));
    assert.equal(atToMtn.instructions.operator, 'mtn');
    await cancel(session.id, atToMtn.attempt_reference);
    const nowhere = await postAttempt(t, session.id, momoBody(10_000, '0211234567', 'mtn'));
    assertErrorEnvelope(nowhere, 400, 'INVALID_ARGUMENT');
  });

  it('resend is offered where the provider can prompt again (the Test simulator) and counted; the status says so', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 10_000 });
    const a = await startAttempt(t, session.id, momoBody(10_000));
    assert.equal(a.instructions.resend_supported, true);
    assert.equal(
      a.instructions.approval_help,
      'Dial *170#, choose My Wallet, then My Approvals, and approve the payment.',
    );
    const status = (
      await call(t, 'GET', `/api/v1/checkout/sessions/${session.id}/provider-attempts/${a.attempt_reference}`)
    ).json();
    assert.equal(status.resend_supported, true);
    assert.equal(status.resends_left, 3);
    assert.equal(typeof status.created_at, 'string');
    const resent = await call(
      t,
      'POST',
      `/api/v1/checkout/sessions/${session.id}/provider-attempts/${a.attempt_reference}/resend`,
    );
    assert.equal(resent.statusCode, 200, resent.body);
    assert.equal(resent.json().resends_left, 2);
  });

  it('a checkout takes at most 20 attempts in all: a 21st change of course is 409 ATTEMPTS_LIMIT_REACHED', async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 10_000 });
    for (let i = 0; i < 20; i++) {
      const a = await startAttempt(t, session.id, momoBody(10_000, `02400000${String(i).padStart(2, '0')}`));
      await cancel(session.id, a.attempt_reference);
    }
    assertErrorEnvelope(await postAttempt(t, session.id, momoBody(10_000)), 409, 'ATTEMPTS_LIMIT_REACHED');
  });

  it('races: a cancel and a success arriving together, and two payments racing after a change, never leave two payments credited', async () => {
    for (let round = 0; round < 6; round++) {
      const m = await t.merchant();
      const session = await createSession(t, m, { amount_minor: 10_000 });
      const a = await startAttempt(t, session.id, momoBody(10_000));
      const [cancelled, paid] = await Promise.all([
        cancel(session.id, a.attempt_reference),
        simulate(t, m, a.attempt_reference, 'paid').catch(() => null),
      ]);
      assert.equal(cancelled.statusCode, 200, cancelled.body);
      // Whichever came first, the payment that the provider took is credited once.
      assert.ok(paid === null || paid.status === 'paid');
      const b = await postAttempt(t, session.id, momoBody(10_000, '0245556667'));
      if (b.statusCode === 201)
        await Promise.all([
          simulate(t, m, b.json().attempt_reference, 'paid'),
          simulate(t, m, a.attempt_reference, 'paid').catch(() => null),
        ]);
      assert.ok((await paidAttempts(session.id)) >= 1);
      const refunded = (await refundsOf(session.id)).reduce((sum, r) => sum + r.amount_minor, 0);
      // What the merchant keeps is exactly one payment.
      assert.equal(await available(m), creditOf('momo', 10_000));
      assert.equal(refunded, ((await paidAttempts(session.id)) - 1) * totalOf('momo', 10_000));
      assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
    }
  });
});
