// POST /api/v1/test/payment-attempts/{reference}/simulate (SPEC 3.2, 4.1; DESIGN §3 "Checkout session
// lifecycle"): each of the eight outcomes, what it does to the attempt, the session, the merchant's
// balance, the events and the invoice lines; Test-key only, per merchant, idempotent, and refusing
// moves the transition table forbids. Late success after expiry is honoured exactly once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { balance, checkInvariants } from '../../src/ledger/service.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope, call, syncCodes } from '../support/http.ts';
import {
  attemptRows,
  backdate,
  createSession,
  eventTypes,
  getAttempt,
  getPublic,
  journalKinds,
  momoBody,
  postAttempt,
  runExpiry,
  sessionRow,
  simulate,
  simulateRaw,
  startAttempt,
} from '../support/checkout.ts';

describe(`test payment simulation (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const available = async (m: CreatedMerchant) => (await balance(t.db, m.merchant_id, 'test')).available_minor;
  const merchantView = async (m: CreatedMerchant, id: string) =>
    (await call(t, 'GET', `/api/v1/sessions/${id}`, { key: m.test_api_key })).json();

  /** A fresh merchant, a 50000 session and a pending momo attempt (charged 50750). */
  async function pendingMomo() {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 50000 });
    const attempt = await startAttempt(t, session.id, momoBody(50000));
    return { m, session, ref: attempt.attempt_reference };
  }

  describe('the eight outcomes', () => {
    it('pending changes nothing: attempt and session stay pending and unfinalized', async () => {
      const { m, session, ref } = await pendingMomo();
      const before = await sessionRow(t, session.id);
      const res = await simulate(t, m, ref, 'pending');
      assert.equal(res.status, 'pending');
      assert.equal(res.session_status, 'pending');
      assert.equal(res.finalized, false);
      const after = await sessionRow(t, session.id);
      assert.equal(after.status, 'pending');
      assert.equal(after.version, before.version);
      assert.equal(await available(m), 0);
    });

    it('paid makes the session success and finalized, credits the merchant the base of a payer-borne momo charge and emits checkout.session.completed', async () => {
      const { m, session, ref } = await pendingMomo();
      const res = await simulate(t, m, ref, 'paid');
      assert.equal(res.status, 'paid');
      assert.equal(res.session_status, 'success');
      assert.equal(res.finalized, true);
      assert.equal(res.attempt_reference, ref);
      const status = (await getAttempt(t, session.id, ref)).json();
      assert.equal(status.finalized, true);
      assert.ok(status.session_finalized_at);
      assert.equal(await available(m), 50000); // charged 50750 less the payer's 750 fee
      assert.equal((await merchantView(m, session.id)).status, 'success');
      const completed = await t.db.query<{
        payload: { type: string; data: { session: { id: string; status: string; amount_minor: number } } };
      }>(`SELECT payload FROM events WHERE object_id = $1 AND type = 'checkout.session.completed'`, [session.id]);
      assert.equal(completed.length, 1);
      const payload =
        typeof completed[0]!.payload === 'string' ? JSON.parse(completed[0]!.payload) : completed[0]!.payload;
      assert.equal(payload.type, 'checkout.session.completed');
      assert.equal(payload.data.session.id, session.id);
      assert.equal(payload.data.session.status, 'success');
      assert.equal(payload.data.session.amount_minor, 50000);
      assert.deepEqual(await journalKinds(t, ref), ['payment_credit']);
      assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
    });

    it('paid on a merchant-borne card attempt credits the base less the 2.5% fee', async () => {
      const m = await t.merchant();
      const session = await createSession(t, m, { amount_minor: 50000 });
      const a = await startAttempt(t, session.id, { rail: 'card', amount_minor: 50000 });
      await simulate(t, m, a.attempt_reference, 'paid');
      assert.equal(await available(m), 48750);
    });

    it('paid on a bank transfer above the cap credits the base less GHS 10.00', async () => {
      const m = await t.merchant();
      const session = await createSession(t, m, { amount_minor: 300000 });
      const a = await startAttempt(t, session.id, { rail: 'bank_transfer', amount_minor: 300000 });
      await simulate(t, m, a.attempt_reference, 'paid');
      assert.equal(await available(m), 299000);
    });

    it('paid marks the invoice lines of the session invoice_ref remitted, and only those', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [{ code: 'TUITION', name: 'Tuition' }]);
      for (const ref of ['INV-REM-1', 'INV-REM-2']) {
        const res = await call(t, 'POST', '/api/v1/invoice-lines', {
          key: m.test_api_key,
          body: { invoice_ref: ref, lines: [{ code: 'TUITION', name: 'Tuition', amount_minor: 50000 }] },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      const session = await createSession(t, m, { amount_minor: 50000, invoice_ref: 'INV-REM-1' });
      const a = await startAttempt(t, session.id, momoBody(50000));
      const lines = async (ref: string) =>
        (await call(t, 'GET', '/api/v1/invoice-lines', { key: m.test_api_key, query: { invoice_ref: ref } })).json()
          .lines;
      assert.equal((await lines('INV-REM-1'))[0].remitted, false);
      await simulate(t, m, a.attempt_reference, 'paid');
      assert.equal((await lines('INV-REM-1'))[0].remitted, true);
      assert.equal((await lines('INV-REM-2'))[0].remitted, false);
    });

    for (const outcome of ['failed', 'cancelled', 'expired'] as const) {
      it(`${outcome} ends the attempt and puts the session back to open so the payer can retry`, async () => {
        const { m, session, ref } = await pendingMomo();
        const res = await simulate(t, m, ref, outcome);
        assert.equal(res.status, outcome);
        assert.equal(res.session_status, 'open');
        assert.equal(res.finalized, false);
        assert.equal((await sessionRow(t, session.id)).status, 'open');
        assert.equal(await available(m), 0);
        assert.deepEqual(await journalKinds(t, ref), []);
        const retry = await postAttempt(t, session.id, momoBody(50000));
        assert.equal(retry.statusCode, 201, retry.body);
        assert.notEqual(retry.json().attempt_reference, ref);
      });
    }

    it('reversed after paid reverses the attempt and the credit, keeps the session success and emits checkout.session.reversed', async () => {
      const { m, session, ref } = await pendingMomo();
      await simulate(t, m, ref, 'paid');
      assert.equal(await available(m), 50000);
      const res = await simulate(t, m, ref, 'reversed');
      assert.equal(res.status, 'reversed');
      assert.equal(res.session_status, 'success');
      assert.equal(res.finalized, true);
      assert.equal((await sessionRow(t, session.id)).status, 'success');
      assert.equal(await available(m), 0);
      assert.deepEqual((await journalKinds(t, ref)).sort(), ['payment_credit', 'payment_reversal']);
      const types = await eventTypes(t, session.id);
      assert.equal(types.filter((type) => type === 'checkout.session.completed').length, 1);
      assert.equal(types.filter((type) => type === 'checkout.session.reversed').length, 1);
      assert.ok(types.indexOf('checkout.session.reversed') > types.indexOf('checkout.session.completed'));
      assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
      // Reversing again changes nothing and reverses nothing twice.
      await simulate(t, m, ref, 'reversed');
      assert.equal(await available(m), 0);
      assert.equal((await eventTypes(t, session.id)).filter((type) => type === 'checkout.session.reversed').length, 1);
    });

    it('reversed while pending counts as failed: the attempt fails, the session reopens, no money moves', async () => {
      const { m, session, ref } = await pendingMomo();
      const res = await simulate(t, m, ref, 'reversed');
      assert.equal(res.status, 'failed');
      assert.equal(res.session_status, 'open');
      assert.equal((await sessionRow(t, session.id)).status, 'open');
      assert.deepEqual(await journalKinds(t, ref), []);
      assert.equal(await available(m), 0);
    });

    for (const outcome of ['manual_review', 'amount_mismatch'] as const) {
      it(`${outcome} holds the payment: the session stays pending and unfinalized, nothing is credited, no new attempt is allowed`, async () => {
        const { m, session, ref } = await pendingMomo();
        const res = await simulate(t, m, ref, outcome);
        assert.equal(res.status, outcome);
        assert.equal(res.session_status, 'pending');
        assert.equal(res.finalized, false);
        assert.equal((await sessionRow(t, session.id)).status, 'pending');
        assert.equal(await available(m), 0);
        assert.deepEqual(
          await eventTypes(t, session.id).then((types) =>
            types.filter((type) => type === 'checkout.session.completed'),
          ),
          [],
        );
        assertErrorEnvelope(
          await postAttempt(t, session.id, { rail: 'card', amount_minor: 50000 }),
          409,
          'SESSION_NOT_PAYABLE',
        );
        // A held session is not expired by the worker even past its time.
        await backdate(t, session.id);
        await runExpiry(t);
        assert.equal((await sessionRow(t, session.id)).status, 'pending');
      });
    }

    it('five failed attempts fail the session, which then refuses new attempts', async () => {
      const m = await t.merchant();
      const session = await createSession(t, m, { amount_minor: 50000 });
      for (let i = 1; i <= 5; i++) {
        const a = await startAttempt(t, session.id, momoBody(50000));
        const res = await simulate(t, m, a.attempt_reference, 'failed');
        assert.equal(res.session_status, i < 5 ? 'open' : 'failed', `after failure ${i}`);
      }
      assert.equal((await sessionRow(t, session.id)).status, 'failed');
      assert.ok((await sessionRow(t, session.id)).finalized_at);
      assert.ok((await eventTypes(t, session.id)).includes('checkout.session.failed'));
      assertErrorEnvelope(await postAttempt(t, session.id, momoBody(50000)), 409, 'SESSION_NOT_PAYABLE');
    });

    it('cancelled and expired attempts do not count towards the five failures', async () => {
      const m = await t.merchant();
      const session = await createSession(t, m, { amount_minor: 50000 });
      for (const outcome of ['cancelled', 'expired', 'failed', 'failed', 'failed', 'failed', 'cancelled'] as const) {
        const a = await startAttempt(t, session.id, momoBody(50000));
        await simulate(t, m, a.attempt_reference, outcome);
      }
      assert.equal((await sessionRow(t, session.id)).status, 'open');
    });
  });

  describe('access and idempotency', () => {
    it('refuses a Live key with 403 FORBIDDEN and changes nothing', async () => {
      const { m, session, ref } = await pendingMomo();
      const res = await simulateRaw(t, m.live_api_key, ref, 'paid');
      const error = assertErrorEnvelope(res, 403, 'FORBIDDEN');
      assert.equal(typeof error.detail, 'string');
      assert.equal((await sessionRow(t, session.id)).status, 'pending');
    });

    it('refuses a missing or bad key with 401 UNAUTHORIZED', async () => {
      const { ref } = await pendingMomo();
      assertErrorEnvelope(
        await call(t, 'POST', `/api/v1/test/payment-attempts/${ref}/simulate`, { body: { outcome: 'paid' } }),
        401,
        'UNAUTHORIZED',
      );
      assertErrorEnvelope(await simulateRaw(t, 'ak_test_nope', ref, 'paid'), 401, 'UNAUTHORIZED');
    });

    it("answers 404 for another merchant's attempt and for an unknown attempt, and changes nothing", async () => {
      const { session, ref } = await pendingMomo();
      const other = await t.merchant();
      assertErrorEnvelope(await simulateRaw(t, other.test_api_key, ref, 'paid'), 404, 'NOT_FOUND');
      assertErrorEnvelope(await simulateRaw(t, other.test_api_key, 'att_doesnotexist', 'paid'), 404, 'NOT_FOUND');
      assert.equal((await sessionRow(t, session.id)).status, 'pending');
      assert.equal((await balance(t.db, other.merchant_id, 'test')).available_minor, 0);
    });

    it('refuses an outcome outside the eight with 400', async () => {
      const { m, ref } = await pendingMomo();
      assertErrorEnvelope(await simulateRaw(t, m.test_api_key, ref, 'refunded'), 400, 'INVALID_ARGUMENT');
    });

    it('replays the identical body for a repeated Idempotency-Key and credits once; a changed body under the key is 422', async () => {
      const { m, ref } = await pendingMomo();
      const first = await simulateRaw(t, m.test_api_key, ref, 'paid', 'sim-key-1');
      assert.equal(first.statusCode, 200, first.body);
      const second = await simulateRaw(t, m.test_api_key, ref, 'paid', 'sim-key-1');
      assert.equal(second.statusCode, 200);
      assert.equal(second.body, first.body);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(await available(m), 50000);
      assert.deepEqual(await journalKinds(t, ref), ['payment_credit']);
      assertErrorEnvelope(
        await simulateRaw(t, m.test_api_key, ref, 'failed', 'sim-key-1'),
        422,
        'IDEMPOTENCY_KEY_REUSED',
      );
    });

    it('repeating an outcome already applied without a key changes nothing and credits once', async () => {
      const { m, session, ref } = await pendingMomo();
      await simulate(t, m, ref, 'paid');
      const version = (await sessionRow(t, session.id)).version;
      const again = await simulate(t, m, ref, 'paid');
      assert.equal(again.status, 'paid');
      assert.equal((await sessionRow(t, session.id)).version, version);
      assert.equal(await available(m), 50000);
      assert.equal((await eventTypes(t, session.id)).filter((type) => type === 'checkout.session.completed').length, 1);
    });

    it('refuses a move the transition table forbids (failed -> paid) with 409, crediting nothing', async () => {
      const { m, session, ref } = await pendingMomo();
      await simulate(t, m, ref, 'failed');
      const res = await simulateRaw(t, m.test_api_key, ref, 'paid');
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(res.json().error.code, 'ATTEMPT_FINAL');
      assert.equal((await attemptRows(t, session.id))[0]!.status, 'failed');
      assert.equal((await sessionRow(t, session.id)).status, 'open');
      assert.equal(await available(m), 0);
    });

    it('refuses paid -> failed and failed -> paid with 409; cancelled -> paid is a late success, applied (issue 31)', async () => {
      const a = await pendingMomo();
      await simulate(t, a.m, a.ref, 'paid');
      assert.equal((await simulateRaw(t, a.m.test_api_key, a.ref, 'failed')).statusCode, 409);
      assert.equal(await available(a.m), 50000);
      const b = await pendingMomo();
      await simulate(t, b.m, b.ref, 'failed');
      assert.equal((await simulateRaw(t, b.m.test_api_key, b.ref, 'paid')).statusCode, 409);
      assert.equal(await available(b.m), 0);
      const c = await pendingMomo();
      await simulate(t, c.m, c.ref, 'cancelled');
      const late = await simulate(t, c.m, c.ref, 'paid');
      assert.equal(late.status, 'paid');
      assert.equal(late.session_status, 'success');
      assert.equal(await available(c.m), 50000);
    });
  });

  describe('expiry and late success', () => {
    it('a payment confirmed after the session expired still succeeds, is credited once and remits the invoice lines', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [{ code: 'FEES', name: 'Fees' }]);
      await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: { invoice_ref: 'INV-LATE', lines: [{ code: 'FEES', name: 'Fees', amount_minor: 50000 }] },
      });
      const session = await createSession(t, m, { amount_minor: 50000, invoice_ref: 'INV-LATE' });
      const a = await startAttempt(t, session.id, momoBody(50000));
      await backdate(t, session.id);
      await runExpiry(t);
      assert.equal((await sessionRow(t, session.id)).status, 'expired');
      assert.equal((await attemptRows(t, session.id))[0]!.status, 'expired');
      assert.equal((await getPublic(t, session.id)).json().status, 'expired');
      assert.ok((await eventTypes(t, session.id)).includes('checkout.session.expired'));

      const res = await simulate(t, m, a.attempt_reference, 'paid');
      assert.equal(res.status, 'paid');
      assert.equal(res.session_status, 'success');
      assert.equal(res.finalized, true);
      assert.equal((await sessionRow(t, session.id)).status, 'success');
      assert.equal(await available(m), 50000);
      await simulate(t, m, a.attempt_reference, 'paid');
      await runExpiry(t);
      assert.equal(await available(m), 50000);
      assert.deepEqual(await journalKinds(t, a.attempt_reference), ['payment_credit']);
      const lines = (
        await call(t, 'GET', '/api/v1/invoice-lines', { key: m.test_api_key, query: { invoice_ref: 'INV-LATE' } })
      ).json().lines;
      assert.equal(lines[0].remitted, true);
      assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
    });

    it('an attempt that fails after the session time has passed expires the session instead of reopening it', async () => {
      const { m, session, ref } = await pendingMomo();
      // Held for review, so no expiry worker (of this or a concurrent test file) sweeps it meanwhile.
      await simulate(t, m, ref, 'manual_review');
      await backdate(t, session.id);
      const res = await simulate(t, m, ref, 'failed');
      assert.equal(res.session_status, 'expired');
      assert.equal((await sessionRow(t, session.id)).status, 'expired');
    });

    it('a late payment on an attempt that expired while the session stayed open succeeds and cancels the newer pending attempt', async () => {
      const { m, session, ref } = await pendingMomo();
      await simulate(t, m, ref, 'expired');
      const newer = await startAttempt(t, session.id, { rail: 'card', amount_minor: 50000 });
      const res = await simulate(t, m, ref, 'paid');
      assert.equal(res.session_status, 'success');
      const rows = await attemptRows(t, session.id);
      assert.equal(rows.find((r) => r.id === ref)!.status, 'paid');
      assert.equal(rows.find((r) => r.id === newer.attempt_reference)!.status, 'cancelled');
      assert.equal(await available(m), 50000);
    });
  });
});
