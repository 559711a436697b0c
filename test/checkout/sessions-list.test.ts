// GET /api/v1/sessions (issue 17, the merchant's books): search by status, invoice_ref, created range and
// the rail that paid; keyset pages that never skip or repeat a session while others are created; only the
// key's own merchant and environment; and the payment object on the list and on GET once a session is paid.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { createSession, momoBody, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';

describe(`GET /api/v1/sessions (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => t?.close());

  const list = (m: CreatedMerchant, query: Record<string, string> = {}, key = m.test_api_key) =>
    call(t, 'GET', '/api/v1/sessions', { key, query });

  async function pageThrough(
    m: CreatedMerchant,
    limit: number,
    query: Record<string, string> = {},
    between?: () => Promise<unknown>,
  ) {
    const ids: string[] = [];
    let startingAfter: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await list(m, {
        ...query,
        limit: String(limit),
        ...(startingAfter ? { starting_after: startingAfter } : {}),
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { object: string; data: { id: string }[]; has_more: boolean };
      assert.equal(body.object, 'list');
      assert.ok(body.data.length <= limit);
      ids.push(...body.data.map((s) => s.id));
      if (!body.has_more) return ids;
      startingAfter = body.data.at(-1)!.id;
      await between?.();
    }
    throw new Error('paging did not end');
  }

  it('pages newest first without skipping or repeating a session while new ones are created concurrently', async () => {
    const m = await t.merchant();
    const made: { id: string; created_at: string }[] = [];
    for (let i = 0; i < 23; i++) made.push(await createSession(t, m, { amount_minor: 1_000 + i }));
    // Newest first: created_at (milliseconds), then id, both descending; two sessions made in the same
    // millisecond are in id order, not necessarily the order they were made.
    const newestFirst = [...made]
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id))
      .map((x) => x.id);
    const existing = made.map((x) => x.id);
    const created: string[] = [];
    const seen = await pageThrough(m, 5, {}, async () => {
      const more = await Promise.all([createSession(t, m), createSession(t, m)]);
      created.push(...more.map((s) => s.id));
    });
    assert.equal(new Set(seen).size, seen.length, 'no session twice');
    assert.deepEqual(
      seen.filter((id) => existing.includes(id)),
      newestFirst,
      'every session that existed, newest first',
    );
    assert.ok(seen.every((id) => existing.includes(id) || created.includes(id)));
  });

  it('filters by status, invoice_ref, created range and the rail that paid; each session carries its payment', async () => {
    const m = await t.merchant();
    const paidMomo = await createSession(t, m, { amount_minor: 20_000, invoice_ref: 'INV-BOOKS-1' });
    const attempt = await startAttempt(t, paidMomo.id, momoBody(20_000));
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const paidCard = await createSession(t, m, { amount_minor: 30_000 });
    const cardAttempt = await startAttempt(t, paidCard.id, { rail: 'card', amount_minor: totalOf('card', 30_000) });
    await simulate(t, m, cardAttempt.attempt_reference, 'paid');
    const open = await createSession(t, m, { invoice_ref: 'INV-BOOKS-1' });

    const success = (await list(m, { status: 'success' })).json().data as {
      id: string;
      payment: Record<string, unknown>;
    }[];
    assert.deepEqual(
      success.map((s) => s.id),
      [paidCard.id, paidMomo.id],
    );
    const momoPayment = success[1]!.payment;
    assert.equal(momoPayment.attempt_reference, attempt.attempt_reference);
    assert.equal(momoPayment.rail, 'momo');
    assert.equal(momoPayment.status, 'paid');
    assert.equal(momoPayment.amount_charged_minor, totalOf('momo', 20_000));
    assert.equal(momoPayment.fee_minor, totalOf('momo', 20_000) - 20_000);
    assert.equal(momoPayment.net_minor, 20_000, 'the payer bore the MoMo fee: the merchant nets the session amount');
    assert.equal(success[0]!.payment.fee_minor, 750); // card: 2.5%, borne by the merchant
    assert.equal(success[0]!.payment.net_minor, 30_000 - 750);
    assert.ok(typeof momoPayment.paid_at === 'string');

    assert.deepEqual(
      (await list(m, { invoice_ref: 'INV-BOOKS-1' })).json().data.map((s: { id: string }) => s.id),
      [open.id, paidMomo.id],
    );
    assert.deepEqual(
      (await list(m, { rail: 'card' })).json().data.map((s: { id: string }) => s.id),
      [paidCard.id],
    );
    const openOne = (await list(m, { status: 'open' })).json().data as { id: string; payment: unknown }[];
    assert.deepEqual(
      openOne.map((s) => s.id),
      [open.id],
    );
    assert.equal(openOne[0]!.payment, null);

    const future = new Date(Date.now() + 60_000).toISOString();
    assert.equal((await list(m, { created_gte: future })).json().data.length, 0);
    assert.equal((await list(m, { created_lt: future })).json().data.length, 3);

    const single = await call(t, 'GET', `/api/v1/sessions/${paidMomo.id}`, { key: m.test_api_key });
    assert.deepEqual(single.json().payment, momoPayment);
  });

  it("never shows another merchant's or the other environment's sessions, and refuses their ids as a cursor", async () => {
    const m = await t.merchant();
    const other = await t.merchant();
    const mine = await createSession(t, m);
    const theirs = await createSession(t, other);
    const live = await createSession(t, m, {}, { live: true });
    assert.deepEqual(
      (await list(m)).json().data.map((s: { id: string }) => s.id),
      [mine.id],
    );
    assert.deepEqual(
      (await list(m, {}, m.live_api_key)).json().data.map((s: { id: string }) => s.id),
      [live.id],
    );
    for (const cursor of [theirs.id, live.id, 'cs_unknown']) {
      const res = await list(m, { starting_after: cursor });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().error.code, 'INVALID_ARGUMENT');
    }
  });

  it('refuses bad queries with 400: limit out of range, an unknown status or rail, a malformed time, a reversed range', async () => {
    const m = await t.merchant();
    const bad: Record<string, string>[] = [
      { limit: '0' },
      { limit: '101' },
      { status: 'paid' },
      { rail: 'cheque' },
      { created_gte: 'yesterday' },
      { created_gte: '2026-11-02T00:00:00Z', created_lt: '2026-11-01T00:00:00Z' },
    ];
    for (const query of bad) {
      const res = await list(m, query);
      assert.equal(res.statusCode, 400, `${JSON.stringify(query)}: ${res.body}`);
      assert.equal(res.json().error.code, 'INVALID_ARGUMENT');
    }
    assert.equal((await call(t, 'GET', '/api/v1/sessions')).statusCode, 401);
  });
});
