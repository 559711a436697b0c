// Refunds in Test mode over HTTP (issue 17): full and partial refunds, over-refunds and unpaid sessions
// refused, the available balance covering the refund (never negative), failure releasing the hold, the
// held amount while pending, idempotency, paging and isolation; races on real concurrency (PostgreSQL too):
// concurrent refunds never exceed what was charged, and a refund racing a payout never overdraws.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import { createSession, simulate, startAttempt, totalOf, momoBody, journalKinds } from '../support/checkout.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import { around, csvRows } from '../support/books.ts';
import {
  balanceOf,
  bankRecipient,
  eventsFor,
  fund,
  merchantWithHooks,
  newClientReference,
  verifyRecipientsNow,
} from '../support/payouts-fixtures.ts';

describe(`refunds (${storageKind})`, () => {
  let t: TestContext;
  let baseUrl: string;
  before(async () => {
    t = await startTestApp();
    baseUrl = await t.listen();
  });
  after(async () => t?.close());

  const refund = (
    m: CreatedMerchant,
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
    key = m.test_api_key,
  ) => call(t, 'POST', '/api/v1/refunds', { key, body: body as never, headers });

  /** A paid Test session: card (the merchant bears 2.5%) unless momo is asked for (the payer bears 1.5%). */
  async function paidSession(m: CreatedMerchant, base: number, rail: 'card' | 'momo' = 'card') {
    const session = await createSession(t, m, { amount_minor: base });
    const attempt = await startAttempt(
      t,
      session.id,
      rail === 'card' ? { rail: 'card', amount_minor: totalOf('card', base) } : momoBody(base),
    );
    await simulate(t, m, attempt.attempt_reference, 'paid');
    return {
      sessionId: session.id as string,
      attempt: attempt.attempt_reference as string,
      charged: totalOf(rail, base),
    };
  }

  async function assertHealthy(m: CreatedMerchant) {
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  }

  it('refunds in part then in full: each succeeds at once, the session shows refunded_minor, the balance pays it (the fee is not returned)', async () => {
    const m = await t.merchant();
    await fund(t, m.merchant_id, 'test', 50_000);
    const paid = await paidSession(m, 20_000); // card: charged 20,000, credited 19,500
    const before = await balanceOf(t, m.merchant_id, 'test');
    assert.equal(before.available_minor, 69_500);

    const first = await refund(m, {
      session_id: paid.sessionId,
      amount_minor: 5_000,
      reason: 'one item out of stock',
      metadata: { order: 'A-1' },
    });
    assert.equal(first.statusCode, 201, first.body);
    const r1 = first.json();
    assert.match(r1.id, /^re_/);
    assert.equal(r1.object, 'refund');
    assert.equal(r1.status, 'succeeded');
    assert.equal(r1.amount_minor, 5_000);
    assert.equal(r1.attempt_reference, paid.attempt);
    assert.equal(r1.method, 'test');
    assert.deepEqual(r1.metadata, { order: 'A-1' });
    assert.equal(r1.livemode, false);

    const rest = await refund(m, { session_id: paid.sessionId });
    assert.equal(rest.statusCode, 201, rest.body);
    assert.equal(rest.json().amount_minor, 15_000, 'without amount_minor: all that is left of what was charged');

    const session = (await call(t, 'GET', `/api/v1/sessions/${paid.sessionId}`, { key: m.test_api_key })).json();
    assert.equal(session.status, 'success');
    assert.equal(session.refunded_minor, 20_000);
    const after = await balanceOf(t, m.merchant_id, 'test');
    assert.equal(
      after.available_minor,
      69_500 - 20_000,
      'the whole charge leaves the balance; the 500 fee stays with Sika',
    );
    assert.equal(after.held_minor, 0);

    const again = await refund(m, { session_id: paid.sessionId, amount_minor: 1 });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().error.code, 'REFUND_EXCEEDS_PAYMENT');
    assert.deepEqual((await journalKinds(t, paid.attempt)).sort(), ['payment_credit']);
    const kinds = await t.db.query<{ kind: string }>(
      `SELECT kind FROM journal_entries WHERE reference_type = 'refund' AND reference_id = $1 ORDER BY kind`,
      [r1.id],
    );
    assert.deepEqual(
      kinds.map((k) => k.kind),
      ['refund_hold', 'refund_post'],
    );
    assert.deepEqual(
      (await eventsFor(t, r1.id)).map((e) => e.type),
      ['refund.created', 'refund.succeeded'],
    );
    await assertHealthy(m);
  });

  it('refuses an over-refund, a session that is not paid, and a refund the available balance cannot cover (nothing written)', async () => {
    const m = await t.merchant();
    const paid = await paidSession(m, 10_000, 'momo'); // charged 10,150 (the payer bore the fee); credited 10,000
    const over = await refund(m, { session_id: paid.sessionId, amount_minor: paid.charged + 1 });
    assert.equal(over.statusCode, 409);
    assert.equal(over.json().error.code, 'REFUND_EXCEEDS_PAYMENT');
    assert.match(over.json().error.message, /At most GHS 101\.50 of the payment of GHS 101\.50/);

    const short = await refund(m, { session_id: paid.sessionId });
    assert.equal(short.statusCode, 409, 'the balance (10,000) does not cover the full charge (10,150)');
    assert.equal(short.json().error.code, 'INSUFFICIENT_FUNDS');
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 10_000);
    assert.equal(
      (await t.db.query(`SELECT 1 FROM refunds WHERE session_id = $1`, [paid.sessionId])).length,
      0,
      'nothing written',
    );

    const open = await createSession(t, m);
    const notPaid = await refund(m, { session_id: open.id });
    assert.equal(notPaid.statusCode, 409);
    assert.equal(notPaid.json().error.code, 'SESSION_NOT_REFUNDABLE');

    const missing = await refund(m, { session_id: 'cs_nope' });
    assert.equal(missing.statusCode, 404);
    const zero = await refund(m, { session_id: paid.sessionId, amount_minor: 0 });
    assert.equal(zero.statusCode, 400);
    const fractional = await refund(m, { session_id: paid.sessionId, amount_minor: 1.5 });
    assert.equal(fractional.statusCode, 400);
    const negative = await refund(m, { session_id: paid.sessionId, amount_minor: -5 });
    assert.equal(negative.statusCode, 400);
    await assertHealthy(m);
  });

  it('a failed refund releases its hold; a pending one holds its amount until the simulator settles it', async () => {
    const m = await t.merchant();
    await fund(t, m.merchant_id, 'test', 10_000);
    const paid = await paidSession(m, 20_000);
    const failed = await refund(m, { session_id: paid.sessionId, amount_minor: 4_000, test_outcome: 'failed' });
    assert.equal(failed.statusCode, 201, failed.body);
    assert.equal(failed.json().status, 'failed');
    assert.ok(failed.json().failure_reason);
    assert.deepEqual(
      (await eventsFor(t, failed.json().id)).map((e) => e.type),
      ['refund.created', 'refund.failed'],
    );
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'test'), {
      environment: 'test',
      currency: 'GHS',
      available_minor: 29_500,
      held_minor: 0,
      eligible_minor: 29_500,
      pending_minor: 0,
      reserved_minor: 0,
    });

    const pending = await refund(m, { session_id: paid.sessionId, amount_minor: 20_000, test_outcome: 'pending' });
    assert.equal(pending.json().status, 'pending');
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'test'), {
      environment: 'test',
      currency: 'GHS',
      available_minor: 9_500,
      held_minor: 20_000,
      eligible_minor: 29_500,
      pending_minor: 0,
      reserved_minor: 0,
    });
    const more = await refund(m, { session_id: paid.sessionId, amount_minor: 1 });
    assert.equal(more.json().error.code, 'REFUND_EXCEEDS_PAYMENT', 'a pending refund counts against the payment');
    assert.equal(
      (await call(t, 'GET', `/api/v1/sessions/${paid.sessionId}`, { key: m.test_api_key })).json().refunded_minor,
      0,
      'refunded_minor counts succeeded refunds',
    );

    const settled = await call(t, 'POST', `/api/v1/test/refunds/${pending.json().id}/simulate`, {
      key: m.test_api_key,
      body: { outcome: 'failed' },
    });
    assert.equal(settled.statusCode, 200, settled.body);
    assert.equal(settled.json().status, 'failed');
    assert.equal((await balanceOf(t, m.merchant_id, 'test')).available_minor, 29_500, 'released in full');
    const twice = await call(t, 'POST', `/api/v1/test/refunds/${pending.json().id}/simulate`, {
      key: m.test_api_key,
      body: { outcome: 'succeeded' },
    });
    assert.equal(twice.statusCode, 409);
    assert.equal(twice.json().error.code, 'REFUND_NOT_PENDING');
    const live = await call(t, 'POST', `/api/v1/test/refunds/${pending.json().id}/simulate`, {
      key: m.live_api_key,
      body: { outcome: 'failed' },
    });
    assert.equal(live.statusCode, 403);
    await assertHealthy(m);
  });

  it('an Idempotency-Key replays the refund; lists page newest first and filter; other merchants and Live keys see nothing', async () => {
    const m = await t.merchant();
    await fund(t, m.merchant_id, 'test', 100_000);
    const paid = await paidSession(m, 30_000);
    const headers = { 'idempotency-key': 'refund-key-1' };
    const first = await refund(m, { session_id: paid.sessionId, amount_minor: 1_000 }, headers);
    const replay = await refund(m, { session_id: paid.sessionId, amount_minor: 1_000 }, headers);
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().id, first.json().id);
    const ids = [first.json().id as string];
    for (let i = 0; i < 6; i++)
      ids.push((await refund(m, { session_id: paid.sessionId, amount_minor: 100 + i })).json().id);
    const other = await paidSession(m, 5_000);
    const otherRefund = (
      await refund(m, { session_id: other.sessionId, amount_minor: 50, test_outcome: 'failed' })
    ).json().id as string;

    const seen: string[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const page = await call(t, 'GET', '/api/v1/refunds', {
        key: m.test_api_key,
        query: { limit: '3', session_id: paid.sessionId, ...(startingAfter ? { starting_after: startingAfter } : {}) },
      });
      assert.equal(page.statusCode, 200, page.body);
      const body = page.json();
      seen.push(...body.data.map((r: { id: string }) => r.id));
      if (!body.has_more) break;
      startingAfter = body.data.at(-1).id;
      // A new refund while paging: it is newer than every page, so it never shifts one.
      assert.equal((await refund(m, { session_id: paid.sessionId, amount_minor: 7 })).statusCode, 201);
    }
    assert.deepEqual(seen, [...ids].reverse(), 'every refund that existed, once, newest first');
    const failed = (
      await call(t, 'GET', '/api/v1/refunds', { key: m.test_api_key, query: { status: 'failed' } })
    ).json();
    assert.deepEqual(
      failed.data.map((r: { id: string }) => r.id),
      [otherRefund],
    );
    assert.equal(
      (await call(t, 'GET', `/api/v1/refunds/${otherRefund}`, { key: m.test_api_key })).json().status,
      'failed',
    );

    const stranger = await t.merchant();
    assert.equal(
      (await call(t, 'GET', `/api/v1/refunds/${otherRefund}`, { key: stranger.test_api_key })).statusCode,
      404,
    );
    assert.equal((await call(t, 'GET', `/api/v1/refunds/${otherRefund}`, { key: m.live_api_key })).statusCode, 404);
    assert.equal((await call(t, 'GET', '/api/v1/refunds', { key: stranger.test_api_key })).json().data.length, 0);
    assert.equal(
      (await refund(stranger, { session_id: paid.sessionId, amount_minor: 1 })).statusCode,
      404,
      "another merchant's session is not found",
    );
    assert.equal(
      (await call(t, 'GET', '/api/v1/refunds', { key: stranger.test_api_key, query: { starting_after: otherRefund } }))
        .statusCode,
      400,
    );
    const liveOutcome = await refund(
      m,
      { session_id: paid.sessionId, amount_minor: 1, test_outcome: 'failed' },
      {},
      m.live_api_key,
    );
    assert.equal(liveOutcome.statusCode, 400, 'test_outcome is for Test keys');
  });

  it('exports refunds as CSV for Accra days (Accept: text/csv), oldest first; a bad range is a 400', async () => {
    const m = await t.merchant();
    await fund(t, m.merchant_id, 'test', 100_000);
    const paid = await paidSession(m, 30_000);
    const a = (await refund(m, { session_id: paid.sessionId, amount_minor: 1_234, reason: '=HYPERLINK("x")' })).json();
    const b = (await refund(m, { session_id: paid.sessionId, amount_minor: 5, test_outcome: 'failed' })).json();
    const res = await call(t, 'GET', '/api/v1/refunds', {
      key: m.test_api_key,
      query: around(),
      headers: { accept: 'text/csv' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.match(
      String(res.headers['content-disposition']),
      /^attachment; filename="sika-refunds-test-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    const rows = csvRows(res.body);
    assert.deepEqual(
      rows.map((r) => [r.id, r.status, r.amount_minor, r.amount_ghs, r.session_id]),
      [
        [a.id, 'succeeded', '1234', '12.34', paid.sessionId],
        [b.id, 'failed', '5', '0.05', paid.sessionId],
      ],
    );
    assert.ok(rows[0]!.reason!.startsWith("'="), 'a formula cell is neutralised');
    const noRange = await call(t, 'GET', '/api/v1/refunds', { key: m.test_api_key, headers: { accept: 'text/csv' } });
    assert.equal(noRange.statusCode, 400);
    const stranger = await t.merchant();
    assert.equal(
      csvRows(
        (
          await call(t, 'GET', '/api/v1/refunds', {
            key: stranger.test_api_key,
            query: around(),
            headers: { accept: 'text/csv' },
          })
        ).body,
      ).length,
      0,
    );
  });

  async function post(key: string, path: string, body: unknown) {
    const res = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as { id?: string; status?: string; error?: { code: string } },
    };
  }

  it('20 concurrent refunds of one payment never give back more than was charged', async () => {
    const m = await t.merchant();
    await fund(t, m.merchant_id, 'test', 1_000_000);
    const paid = await paidSession(m, 10_000);
    const replies = await Promise.all(
      Array.from({ length: 20 }, () =>
        post(m.test_api_key, '/api/v1/refunds', { session_id: paid.sessionId, amount_minor: 3_000 }),
      ),
    );
    const ok = replies.filter((r) => r.status === 201);
    assert.equal(ok.length, 3, JSON.stringify(replies.map((r) => r.status)));
    assert.ok(replies.every((r) => r.status === 201 || r.body.error?.code === 'REFUND_EXCEEDS_PAYMENT'));
    const total = await t.db.query<{ sum: number }>(
      `SELECT coalesce(sum(amount_minor), 0)::bigint AS sum FROM refunds WHERE session_id = $1 AND status = 'succeeded'`,
      [paid.sessionId],
    );
    assert.equal(total[0]!.sum, 9_000);
    await assertHealthy(m);
  });

  it('a refund racing a payout for the same balance: one of them gets it, the other is 409 INSUFFICIENT_FUNDS, never a negative balance', async () => {
    const m = await merchantWithHooks(t);
    const recipient = await bankRecipient(t, m.test_api_key);
    await verifyRecipientsNow(t, recipient.id);
    for (let round = 0; round < 5; round++) {
      const paid = await paidSession(m, 10_000); // credits 9,750
      const available = (await balanceOf(t, m.merchant_id, 'test')).available_minor;
      const [r, p] = await Promise.all([
        post(m.test_api_key, '/api/v1/refunds', { session_id: paid.sessionId, amount_minor: available }),
        post(m.test_api_key, '/api/v1/payouts', {
          recipient_id: recipient.id,
          amount_minor: available - 100,
          client_reference: newClientReference(),
        }),
      ]);
      const statuses = [r.status, p.status].sort();
      assert.ok(
        statuses[0] === 201 && statuses[1] === 409,
        `round ${round}: refund ${r.status} ${JSON.stringify(r.body)}, payout ${p.status} ${JSON.stringify(p.body)}`,
      );
      assert.equal((r.status === 409 ? r : p).body.error?.code, 'INSUFFICIENT_FUNDS');
      const b = await balanceOf(t, m.merchant_id, 'test');
      assert.ok(b.available_minor >= 0 && b.held_minor >= 0);
    }
    await assertHealthy(m);
  });
});
