// A payment link never keeps more payments than it may (issue 35): single_use and max_payments are one rule.
// Over the payer API and the Test simulator on both storages, with real concurrency over a listening server:
// the payment that uses a link up expires its other open sessions; a payment that still arrives on another
// session is credited without fee and refunded in full in the same transaction, the session expires and the
// merchant is told (checkout.session.duplicate_payment_refunded with reason payment_link_used_up, and the
// dashboard); an attempt on a used-up link's session is refused. payments_count always equals the link's
// successful sessions, however payments interleave.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { LINK_SLUG_LENGTH, type PaymentLinkRow } from '../../src/checkout/payment-link-model.ts';
import { insertLink, insertLinkSession } from '../../src/checkout/payment-link-store.ts';
import { newId, randomToken } from '../../src/lib/ids.ts';
import { balance, checkInvariants } from '../../src/ledger/service.ts';
import { creditOf, eventTypes, momoBody, postAttempt, sessionRow, startAttempt, totalOf } from '../support/checkout.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const BASE_MINOR = 20_000;
const RACE_ROUNDS = 10;
const PASSWORD = 'payment-link-single-use-password';

describe(`a payment link keeps no more payments than it may (${storageKind})`, () => {
  let t: TestContext;
  let base: string;
  before(async () => {
    t = await startTestApp();
    base = await t.listen();
  });
  after(() => t.close());

  /** A link of the merchant, written through the store (the API is another helper's). */
  async function makeLink(m: CreatedMerchant, limits: { single_use?: boolean; max_payments?: number | null }) {
    const now = new Date();
    const link: PaymentLinkRow = {
      id: newId('pl'),
      merchant_id: m.merchant_id,
      environment: 'test',
      slug: randomToken(LINK_SLUG_LENGTH),
      api_key_id: null,
      created_by_user_id: null,
      name: 'School fees',
      description: null,
      amount_minor: BASE_MINOR,
      amount_min_minor: BASE_MINOR,
      amount_max_minor: BASE_MINOR,
      currency: 'GHS',
      custom_fields: [],
      single_use: limits.single_use ?? false,
      max_payments: limits.max_payments ?? null,
      payments_count: 0,
      active: true,
      expires_at: null,
      redirect_url: null,
      metadata: {},
      version: 1,
      created_at: now,
      updated_at: now,
    };
    await insertLink(t.db, link);
    return link;
  }

  /** An open session a payer made from the link (as POST /l/{slug} makes it). */
  async function linkSession(link: PaymentLinkRow): Promise<string> {
    const now = new Date();
    const id = newId('cs');
    await insertLinkSession(t.db, {
      id,
      merchant_id: link.merchant_id,
      environment: 'test',
      api_key_id: null,
      status: 'open',
      amount_minor: BASE_MINOR,
      currency: 'GHS',
      invoice_ref: `LINK-${randomUUID().slice(0, 8)}`,
      description: link.name,
      customer_name: 'Kofi Mensah',
      customer_email: null,
      callback_url: null,
      metadata: {},
      expires_at: new Date(now.getTime() + 3_600_000),
      finalized_at: null,
      refunded_minor: 0,
      payment_link_id: link.id,
      custom_fields: {},
      receipt_number: null,
      method_rail: null,
      method_network: null,
      version: 1,
      created_at: now,
      updated_at: now,
    });
    return id;
  }

  /** The outcome of an attempt through the simulator, over the listening server (so several run at once). */
  async function simulateOverHttp(m: CreatedMerchant, ref: string, outcome: 'paid' | 'failed') {
    const res = await fetch(`${base}/api/v1/test/payment-attempts/${ref}/simulate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${m.test_api_key}` },
      body: JSON.stringify({ outcome }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: a JSON answer, read loosely by the checks that follow
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }

  const paymentsCount = async (linkId: string) =>
    (await t.db.query<{ n: number }>('SELECT payments_count AS n FROM payment_links WHERE id = $1', [linkId]))[0]!.n;
  const successCount = async (linkId: string) =>
    (
      await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM checkout_sessions WHERE payment_link_id = $1 AND status = 'success'`,
        [linkId],
      )
    )[0]!.n;
  const refundsOf = (sessionId: string) =>
    t.db.query<{ id: string; attempt_id: string; amount_minor: number; status: string; reason: string }>(
      'SELECT id, attempt_id, amount_minor::int AS amount_minor, status, reason FROM refunds WHERE session_id = $1 ORDER BY created_at',
      [sessionId],
    );
  const refundEvents = async (sessionId: string) =>
    (
      await t.db.query<{ payload: string }>(
        `SELECT payload FROM events WHERE object_id = $1 AND type = 'checkout.session.duplicate_payment_refunded'`,
        [sessionId],
      )
    ).map(
      (row) => JSON.parse(row.payload) as { data: { session: { status: string }; duplicate: Record<string, unknown> } },
    );
  const available = async (m: CreatedMerchant) => (await balance(t.db, m.merchant_id, 'test')).available_minor;

  it('a single-use link: the first payment succeeds and counts, the link is used up and its other open session expires (announced)', async () => {
    const m = await t.merchant();
    const link = await makeLink(m, { single_use: true });
    const a = await linkSession(link);
    const b = await linkSession(link);
    const attempt = await startAttempt(t, a, momoBody(BASE_MINOR));
    const paid = await simulateOverHttp(m, attempt.attempt_reference, 'paid');
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    assert.equal(paid.body.session_status, 'success');
    assert.equal(await paymentsCount(link.id), 1);
    assert.equal((await sessionRow(t, b)).status, 'expired');
    assert.deepEqual(await eventTypes(t, b), ['checkout.session.expired']);
    assert.equal(await available(m), creditOf('momo', BASE_MINOR));

    // Its payer may no longer start a payment: refused as a session that is not open.
    const refused = await postAttempt(t, b, momoBody(BASE_MINOR));
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(refused.json().error.code, 'SESSION_NOT_PAYABLE');
  });

  it('a session of a used-up link still open (made before, missed by the expiry) refuses a new attempt with a sentence about the link, and expires', async () => {
    const m = await t.merchant();
    const link = await makeLink(m, { max_payments: 1 });
    const a = await linkSession(link);
    await t.db.query(`UPDATE payment_links SET payments_count = 1 WHERE id = $1`, [link.id]);
    const res = await postAttempt(t, a, momoBody(BASE_MINOR));
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().error.code, 'SESSION_NOT_PAYABLE');
    assert.match(res.json().error.message, /payment link has already taken all the payments it accepts/);
    // Refused, and closed: expired and announced, so the payer's page stops offering to pay.
    assert.equal((await sessionRow(t, a)).status, 'expired');
    assert.deepEqual(await eventTypes(t, a), ['checkout.session.expired']);
    const attempts = await t.db.query('SELECT id FROM payment_attempts WHERE session_id = $1', [a]);
    assert.equal(attempts.length, 0, 'no attempt is recorded');
    // A cash slip asked for on another such session: the same.
    const c = await linkSession(link);
    const slip = await postAttempt(t, c, { rail: 'cash', amount_minor: BASE_MINOR });
    assert.equal(slip.statusCode, 409, slip.body);
    assert.equal(slip.json().error.code, 'SESSION_NOT_PAYABLE');
    assert.equal((await sessionRow(t, c)).status, 'expired');

    // A link the merchant turned off refuses the same way, with its own reason.
    const other = await makeLink(m, {});
    const s = await linkSession(other);
    await t.db.query(`UPDATE payment_links SET active = false WHERE id = $1`, [other.id]);
    const off = await postAttempt(t, s, momoBody(BASE_MINOR));
    assert.equal(off.statusCode, 409, off.body);
    assert.match(off.json().error.message, /turned off by the merchant/);
  });

  it('a pending session of a used-up link whose attempt then fails expires instead of reopening', async () => {
    const m = await t.merchant();
    const link = await makeLink(m, { single_use: true });
    const a = await linkSession(link);
    const b = await linkSession(link);
    const first = await startAttempt(t, a, momoBody(BASE_MINOR));
    const second = await startAttempt(t, b, momoBody(BASE_MINOR, '0241112223'));
    await simulateOverHttp(m, first.attempt_reference, 'paid');
    assert.equal((await sessionRow(t, b)).status, 'pending', 'a pending session is left to its attempt');
    const failed = await simulateOverHttp(m, second.attempt_reference, 'failed');
    assert.equal(failed.status, 200, JSON.stringify(failed.body));
    assert.equal(failed.body.session_status, 'expired');
    assert.ok(!(await eventTypes(t, b)).includes('checkout.session.reopened'));
    assert.equal(await paymentsCount(link.id), 1);
  });

  it(`two payers of a single-use link paid at the same moment (${RACE_ROUNDS} rounds): one success; the other refunded in full, expired, the merchant told`, async () => {
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const m = await t.merchant();
      const link = await makeLink(m, { single_use: true });
      const sessions = [await linkSession(link), await linkSession(link)];
      const refs = [
        (await startAttempt(t, sessions[0]!, momoBody(BASE_MINOR))).attempt_reference,
        (await startAttempt(t, sessions[1]!, momoBody(BASE_MINOR, '0241112223'))).attempt_reference,
      ];
      const results = await Promise.all(refs.map((ref) => simulateOverHttp(m, ref, 'paid')));
      for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
      const statuses = await Promise.all(sessions.map(async (id) => (await sessionRow(t, id)).status));
      assert.deepEqual([...statuses].sort(), ['expired', 'success'], `round ${round}: ${statuses}`);
      assert.equal(await paymentsCount(link.id), 1);

      const loser = sessions[statuses.indexOf('expired')]!;
      const loserRef = refs[statuses.indexOf('expired')]!;
      const refunds = await refundsOf(loser);
      assert.deepEqual(
        refunds.map((r) => [r.attempt_id, r.amount_minor, r.status]),
        [[loserRef, totalOf('momo', BASE_MINOR), 'succeeded']],
        'the payment the link did not keep is refunded in full',
      );
      assert.match(refunds[0]!.reason, /Payment link used up/);
      assert.equal(await available(m), creditOf('momo', BASE_MINOR), "the balance holds one payment's net");
      const events = await refundEvents(loser);
      assert.equal(events.length, 1);
      assert.deepEqual(events[0]!.data.duplicate, {
        attempt_reference: loserRef,
        amount_minor: totalOf('momo', BASE_MINOR),
        currency: 'GHS',
        refund_id: refunds[0]!.id,
        reason: 'payment_link_used_up',
      });
      assert.equal(events[0]!.data.session.status, 'expired');
      assert.equal((await refundsOf(sessions[statuses.indexOf('success')]!)).length, 0);
      assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
    }
  });

  it('max_payments 2 with three payments at once: two kept, the third refunded', async () => {
    const m = await t.merchant();
    const link = await makeLink(m, { max_payments: 2 });
    const sessions = [await linkSession(link), await linkSession(link), await linkSession(link)];
    const refs: string[] = [];
    for (const [i, id] of sessions.entries())
      refs.push((await startAttempt(t, id, momoBody(BASE_MINOR, `024111222${i}`))).attempt_reference);
    const results = await Promise.all(refs.map((ref) => simulateOverHttp(m, ref, 'paid')));
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
    const statuses = await Promise.all(sessions.map(async (id) => (await sessionRow(t, id)).status));
    assert.deepEqual([...statuses].sort(), ['expired', 'success', 'success']);
    assert.equal(await paymentsCount(link.id), 2);
    const refunded = (await Promise.all(sessions.map(refundsOf))).flat();
    assert.equal(refunded.length, 1);
    assert.equal(refunded[0]!.amount_minor, totalOf('momo', BASE_MINOR));
    assert.equal(await available(m), 2 * creditOf('momo', BASE_MINOR));
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it("the dashboard's session page says the payment was refunded automatically because the link was used up", async () => {
    const email = `owner-${randomUUID().slice(0, 8)}@example.com`;
    const m = await createMerchant(
      t.db,
      { name: `Ama Fees ${randomUUID().slice(0, 4)}`, email, password: PASSWORD, webhookUrl: null },
      t.webhookTargets,
    );
    const dashboard = await new ConsoleClient(t, '/dashboard').signedIn(email, PASSWORD);
    const link = await makeLink(m, { single_use: true });
    const a = await linkSession(link);
    const b = await linkSession(link);
    const first = await startAttempt(t, a, momoBody(BASE_MINOR));
    const second = await startAttempt(t, b, momoBody(BASE_MINOR, '0241112223'));
    await simulateOverHttp(m, first.attempt_reference, 'paid');
    await simulateOverHttp(m, second.attempt_reference, 'paid');
    const [refund] = await refundsOf(b);
    const page = await dashboard.get(`/dashboard/sessions/${b}`);
    assert.equal(page.statusCode, 200);
    const charged = (totalOf('momo', BASE_MINOR) / 100).toFixed(2);
    assert.ok(
      page.body.includes(
        `A payment of GHS ${charged} arrived after this checkout&#39;s payment link had taken every payment it accepts, so it was not kept. It was refunded automatically (${refund!.id}).`,
      ) ||
        page.body.includes(
          `A payment of GHS ${charged} arrived after this checkout&#x27;s payment link had taken every payment it accepts, so it was not kept. It was refunded automatically (${refund!.id}).`,
        ),
      page.body.slice(0, 3_000),
    );
    const kept = await dashboard.get(`/dashboard/sessions/${a}`);
    assert.doesNotMatch(kept.body, /was not kept|A second payment/);
  });

  it('payments_count equals the successful sessions of the link, within its limit, after random interleavings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          limit: fc.constantFrom<{ single_use?: boolean; max_payments?: number }>(
            { single_use: true },
            { max_payments: 1 },
            { max_payments: 2 },
            { max_payments: 3 },
          ),
          outcomes: fc.array(fc.constantFrom<'paid' | 'failed'>('paid', 'paid', 'failed'), {
            minLength: 1,
            maxLength: 4,
          }),
          // The outcomes run in waves: each wave's at once, the waves one after another.
          waves: fc.array(fc.nat(3), { minLength: 4, maxLength: 4 }),
        }),
        async ({ limit, outcomes, waves }) => {
          const m = await t.merchant();
          const link = await makeLink(m, limit);
          const sessions: string[] = [];
          const refs: string[] = [];
          for (const [i] of outcomes.entries()) {
            const id = await linkSession(link);
            sessions.push(id);
            const started = await postAttempt(t, id, momoBody(BASE_MINOR, `024555000${i}`));
            // A session the earlier payments of this run have not touched: every attempt starts.
            assert.equal(started.statusCode, 201, started.body);
            refs.push(started.json().attempt_reference);
          }
          for (let wave = 0; wave <= 3; wave++) {
            await Promise.all(
              outcomes.map((outcome, i) =>
                waves[i] === wave ? simulateOverHttp(m, refs[i]!, outcome) : Promise.resolve(null),
              ),
            );
          }
          const max = limit.single_use ? 1 : limit.max_payments!;
          const paid = outcomes.filter((o) => o === 'paid').length;
          const count = await paymentsCount(link.id);
          assert.equal(count, await successCount(link.id));
          assert.equal(count, Math.min(max, paid));
          const refunds = (await Promise.all(sessions.map(refundsOf))).flat();
          assert.equal(refunds.length, paid - count, 'every payment beyond the limit refunded');
          assert.equal(await available(m), count * creditOf('momo', BASE_MINOR));
          assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
        },
      ),
      { numRuns: 12 },
    );
  });
});
