// Real concurrency over a listening server (DESIGN §3 "Checkout session lifecycle"): one attempt in
// progress per session however many POSTs race, one cash slip per session, and a payment confirmed
// while the expiry worker runs ends in one final state with the merchant credited exactly once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { expireDueSessions } from '../../src/checkout/expiry.ts';
import { balance, checkInvariants } from '../../src/ledger/service.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import {
  attemptRows,
  backdate,
  createSession,
  journalKinds,
  momoBody,
  runExpiry,
  sessionRow,
  startAttempt,
} from '../support/checkout.ts';

const N = 20;

describe(`checkout races (${storageKind})`, () => {
  let t: TestContext;
  let base: string;
  before(async () => {
    t = await startTestApp();
    base = await t.listen();
  });
  after(() => t.close());

  async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: a JSON answer, read loosely by the checks that follow
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }
  const simulatePaid = (m: CreatedMerchant, ref: string, outcome = 'paid') =>
    post(`/api/v1/test/payment-attempts/${ref}/simulate`, { outcome }, { authorization: `Bearer ${m.test_api_key}` });
  const attemptCount = async (sessionId: string) =>
    (
      await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_attempts WHERE session_id = $1', [
        sessionId,
      ])
    )[0]!.n;

  it(`${N} concurrent identical attempt POSTs create exactly one attempt: one 201, the rest 200 replayed, all with the same reference`, async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 50000 });
    const results = await Promise.all(
      Array.from({ length: N }, () =>
        post(`/api/v1/checkout/sessions/${session.id}/provider-attempts`, momoBody(50000)),
      ),
    );
    for (const r of results) assert.ok(r.status === 201 || r.status === 200, `${r.status} ${JSON.stringify(r.body)}`);
    assert.equal(results.filter((r) => r.status === 201).length, 1);
    for (const r of results) assert.equal(r.body.replayed, r.status === 200);
    const refs = new Set(results.map((r) => r.body.attempt_reference));
    assert.equal(refs.size, 1);
    assert.equal(await attemptCount(session.id), 1);
    assert.equal((await attemptRows(t, session.id))[0]!.id, [...refs][0]);
    assert.equal((await sessionRow(t, session.id)).status, 'pending');
  });

  it(`${N} concurrent different attempt POSTs: exactly one 201, the rest 409 PAYMENT_ATTEMPT_PENDING`, async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 50000 });
    // Twenty different MTN wallets: 024 000 0000 ... 024 000 0019.
    const bodies = Array.from({ length: N }, (_, i) => momoBody(50000, `024${String(i).padStart(7, '0')}`));
    const results = await Promise.all(
      bodies.map((body) => post(`/api/v1/checkout/sessions/${session.id}/provider-attempts`, body)),
    );
    const created = results.filter((r) => r.status === 201);
    assert.equal(created.length, 1, JSON.stringify(results.map((r) => r.status)));
    for (const r of results.filter((r) => r.status !== 201)) {
      assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'PAYMENT_ATTEMPT_PENDING');
    }
    assert.equal(await attemptCount(session.id), 1);
    assert.equal((await attemptRows(t, session.id))[0]!.id, created[0]!.body.attempt_reference);
  });

  it(`${N} concurrent cash-slip requests for one session make one slip: one 201 and the rest replay its token`, async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 50000 });
    const results = await Promise.all(
      Array.from({ length: N }, () =>
        post('/api/v1/checkout/cash-slips', { session_id: session.id, amount_minor: 50200 }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 201).length, 1, JSON.stringify(results.map((r) => r.status)));
    for (const r of results) assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
    assert.equal(new Set(results.map((r) => r.body.slip_token)).size, 1);
    assert.equal((await t.db.query('SELECT 1 FROM cash_slips WHERE session_id = $1', [session.id])).length, 1);
    assert.equal(await attemptCount(session.id), 1);
  });

  it(`${N} concurrent simulate paid calls on one attempt credit the merchant once`, async () => {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: 50000 });
    const a = await startAttempt(t, session.id, momoBody(50000));
    const results = await Promise.all(Array.from({ length: N }, () => simulatePaid(m, a.attempt_reference)));
    for (const r of results) {
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.status, 'paid');
      assert.equal(r.body.session_status, 'success');
    }
    assert.deepEqual(await journalKinds(t, a.attempt_reference), ['payment_credit']);
    assert.equal((await balance(t.db, m.merchant_id, 'test')).available_minor, 50000);
    const completed = await t.db.query(
      `SELECT 1 FROM events WHERE object_id = $1 AND type = 'checkout.session.completed'`,
      [session.id],
    );
    assert.equal(completed.length, 1);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('paid and failed racing on one attempt: exactly one wins, and money follows the winner', async () => {
    for (let round = 0; round < 5; round++) {
      const m = await t.merchant();
      const session = await createSession(t, m, { amount_minor: 50000 });
      const a = await startAttempt(t, session.id, momoBody(50000));
      const [paid, failed] = await Promise.all([
        simulatePaid(m, a.attempt_reference, 'paid'),
        simulatePaid(m, a.attempt_reference, 'failed'),
      ]);
      const winners = [paid, failed].filter((r) => r.status === 200);
      assert.equal(winners.length, 1, `round ${round}: ${paid.status} ${failed.status}`);
      const loser = paid.status === 200 ? failed : paid;
      assert.equal(loser.status, 409, JSON.stringify(loser.body));
      const final = (await attemptRows(t, session.id))[0]!.status;
      const credited = (await balance(t.db, m.merchant_id, 'test')).available_minor;
      if (final === 'paid') {
        assert.equal((await sessionRow(t, session.id)).status, 'success');
        assert.equal(credited, 50000);
      } else {
        assert.equal(final, 'failed');
        assert.equal((await sessionRow(t, session.id)).status, 'open');
        assert.equal(credited, 0);
      }
      assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
    }
  });

  it('simulate paid racing the expiry worker ends, every time, in one success with the merchant credited exactly once', async () => {
    for (let round = 0; round < 10; round++) {
      const m = await t.merchant();
      const session = await createSession(t, m, { amount_minor: 50000 });
      const a = await startAttempt(t, session.id, momoBody(50000));
      await backdate(t, session.id);
      const [, simulated] = await Promise.all([
        // the worker, as it runs in production (plus catching up on other due sessions of a shared database)
        expireDueSessions(t.db, t.config.checkoutUrlHost).then(() => runExpiry(t)),
        simulatePaid(m, a.attempt_reference),
      ]);
      // Whichever went first, a confirmed payment is honoured: pending -> paid, or pending -> expired -> paid.
      assert.equal(simulated.status, 200, `round ${round}: ${JSON.stringify(simulated.body)}`);
      assert.equal(simulated.body.status, 'paid');
      assert.equal(simulated.body.session_status, 'success');
      await runExpiry(t);
      const s = await sessionRow(t, session.id);
      assert.equal(s.status, 'success', `round ${round}`);
      assert.ok(s.finalized_at);
      const rows = await attemptRows(t, session.id);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.status, 'paid');
      assert.deepEqual(await journalKinds(t, a.attempt_reference), ['payment_credit'], `round ${round}`);
      assert.equal((await balance(t.db, m.merchant_id, 'test')).available_minor, 50000, `round ${round}`);
      const completed = await t.db.query(
        `SELECT 1 FROM events WHERE object_id = $1 AND type = 'checkout.session.completed'`,
        [session.id],
      );
      assert.equal(completed.length, 1);
      assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
    }
  });
});
