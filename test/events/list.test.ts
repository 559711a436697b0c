// GET /api/v1/events (issue 17: the same paging as sessions, refunds and balance transactions): a merchant's
// own events of the key's environment, newest first, exactly the payload webhooks carry; pages never skip or
// repeat an event while new ones are written; filters by type and object; others' events are 404.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { createSession, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';

describe(`GET /api/v1/events (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => t?.close());

  async function pay(m: CreatedMerchant) {
    const session = await createSession(t, m, { amount_minor: 5_000 });
    const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', 5_000) });
    await simulate(t, m, attempt.attempt_reference, 'paid');
    return session.id as string;
  }

  it('pages newest first without skipping or repeating while events are written; filters; isolation', async () => {
    const m = await t.merchant();
    const sessions: string[] = [];
    for (let i = 0; i < 6; i++) sessions.push(await pay(m));
    const before = (
      await t.db.query<{ id: string }>(
        'SELECT id FROM events WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC',
        [m.merchant_id],
      )
    ).map((r) => r.id);
    assert.ok(before.length >= 6);

    const seen: string[] = [];
    let startingAfter: string | undefined;
    for (let page = 0; page < 50; page++) {
      const res = await call(t, 'GET', '/api/v1/events', {
        key: m.test_api_key,
        query: { limit: '2', ...(startingAfter ? { starting_after: startingAfter } : {}) },
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      seen.push(...body.data.map((e: { id: string }) => e.id));
      if (!body.has_more) break;
      startingAfter = body.data.at(-1).id;
      await pay(m); // new events while paging
    }
    assert.equal(new Set(seen).size, seen.length, 'no event twice');
    assert.deepEqual(
      seen.filter((id) => before.includes(id)),
      before,
      'every event that existed, newest first',
    );

    const completed = (
      await call(t, 'GET', '/api/v1/events', {
        key: m.test_api_key,
        query: { type: 'checkout.session.completed', object_id: sessions[0]! },
      })
    ).json();
    assert.equal(completed.data.length, 1);
    const event = completed.data[0];
    assert.equal(event.type, 'checkout.session.completed');
    assert.equal(event.data.session.id, sessions[0]);
    const one = await call(t, 'GET', `/api/v1/events/${event.id}`, { key: m.test_api_key });
    const { deliveries, ...body } = one.json();
    assert.deepEqual(body, event, 'the webhook body, plus deliveries (test/events/api.test.ts)');
    assert.ok(Array.isArray(deliveries));

    const stranger = await t.merchant();
    assert.equal((await call(t, 'GET', `/api/v1/events/${event.id}`, { key: stranger.test_api_key })).statusCode, 404);
    assert.equal((await call(t, 'GET', `/api/v1/events/${event.id}`, { key: m.live_api_key })).statusCode, 404);
    assert.equal((await call(t, 'GET', '/api/v1/events', { key: stranger.test_api_key })).json().data.length, 0);
    assert.equal(
      (await call(t, 'GET', '/api/v1/events', { key: stranger.test_api_key, query: { starting_after: event.id } }))
        .statusCode,
      400,
    );
    assert.equal(
      (await call(t, 'GET', '/api/v1/events', { key: m.test_api_key, query: { limit: '101' } })).statusCode,
      400,
    );
  });
});
