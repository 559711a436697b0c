// Test refunds awaiting approval (issue 19): test_outcome awaiting_approval on POST /api/v1/refunds (the hold
// taken, as for a Live refund needing a second person) and the simulator deciding it: approved (-> pending,
// then succeeded or failed there) or cancelled (the hold released, refund.cancelled). Over HTTP on both
// storages: the balance after each step (never negative), each event once, Live keys refused, other
// merchants 404, moves the refund table does not allow refused with nothing changed, the ledger's invariants.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import { TEST_REFUND_OUTCOMES, TEST_REFUND_SIMULATIONS } from '../../src/refunds/model.ts';
import { createSession, simulate as simulatePayment, startAttempt, totalOf } from '../support/checkout.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope, call } from '../support/http.ts';
import { balanceOf, eventsFor, fund } from '../support/payouts-fixtures.ts';

/** A card payment of this much (the merchant bears 2.5%: 19,500 reach the balance). */
const PAYMENT_MINOR = 20_000;
const CREDITED_MINOR = 19_500;
const REFUND_MINOR = 5_000;
const EXTRA_MINOR = 10_000;

describe(`Test refunds awaiting approval and the refund simulator (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  /** A merchant whose Test balance is one paid card session; the session's id. */
  async function paidMerchant(): Promise<{ m: CreatedMerchant; sessionId: string }> {
    const m = await t.merchant();
    const session = await createSession(t, m, { amount_minor: PAYMENT_MINOR });
    const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', PAYMENT_MINOR) });
    await simulatePayment(t, m, attempt.attempt_reference, 'paid');
    return { m, sessionId: session.id as string };
  }

  const refund = (key: string, body: Record<string, unknown>, idempotencyKey?: string) =>
    call(t, 'POST', '/api/v1/refunds', { key, body: body as never, ...(idempotencyKey ? { idempotencyKey } : {}) });
  const simulate = (key: string, id: string, outcome: string, idempotencyKey?: string) =>
    call(t, 'POST', `/api/v1/test/refunds/${id}/simulate`, {
      key,
      body: { outcome },
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });

  async function awaiting(
    m: CreatedMerchant,
    sessionId: string,
    amount = REFUND_MINOR,
  ): Promise<{ id: string; status: string }> {
    const res = await refund(m.test_api_key, {
      session_id: sessionId,
      amount_minor: amount,
      test_outcome: 'awaiting_approval',
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  async function moved(
    m: CreatedMerchant,
    id: string,
    outcome: string,
  ): Promise<{ id: string; status: string; failure_reason: string | null }> {
    const res = await simulate(m.test_api_key, id, outcome);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  }

  async function assertBalance(m: CreatedMerchant, expected: { available: number; held: number }, context: string) {
    const balance = await balanceOf(t, m.merchant_id, 'test');
    assert.deepEqual({ available: balance.available_minor, held: balance.held_minor }, expected, context);
    assert.ok(balance.available_minor >= 0 && balance.held_minor >= 0, `${context}: never negative`);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), [], `${context}: ledger invariants`);
  }

  const eventTypes = async (id: string) => (await eventsFor(t, id)).map((e) => e.type);
  const refundedOf = async (m: CreatedMerchant, sessionId: string) =>
    (await call(t, 'GET', `/api/v1/sessions/${sessionId}`, { key: m.test_api_key })).json().refunded_minor as number;

  it('awaiting_approval holds the amount; approved moves it to pending (no event), where it succeeds', async () => {
    const { m, sessionId } = await paidMerchant();
    await assertBalance(m, { available: CREDITED_MINOR, held: 0 }, 'paid');
    const created = await awaiting(m, sessionId);
    assert.equal(created.status, 'awaiting_approval');
    assert.deepEqual(await eventTypes(created.id), ['refund.created']);
    await assertBalance(m, { available: CREDITED_MINOR - REFUND_MINOR, held: REFUND_MINOR }, 'awaiting approval: held');

    const approved = await moved(m, created.id, 'approved');
    assert.equal(approved.status, 'pending');
    assert.deepEqual(await eventTypes(created.id), ['refund.created'], 'approval emits nothing, as for a Live refund');
    await assertBalance(m, { available: CREDITED_MINOR - REFUND_MINOR, held: REFUND_MINOR }, 'approved: still held');
    assert.equal(await refundedOf(m, sessionId), 0);

    const succeeded = await moved(m, created.id, 'succeeded');
    assert.equal(succeeded.status, 'succeeded');
    await assertBalance(
      m,
      { available: CREDITED_MINOR - REFUND_MINOR, held: 0 },
      'succeeded: the hold paid to the payer',
    );
    assert.equal(await refundedOf(m, sessionId), REFUND_MINOR);
    assert.deepEqual(await eventTypes(created.id), ['refund.created', 'refund.succeeded']);
    const listed = await call(t, 'GET', '/api/v1/refunds', { key: m.test_api_key, query: { status: 'succeeded' } });
    assert.deepEqual(
      (listed.json().data as { id: string }[]).map((r) => r.id),
      [created.id],
    );
  });

  it('cancelled releases the hold and emits refund.cancelled once; the amount can be refunded again', async () => {
    const { m, sessionId } = await paidMerchant();
    // The fee of the payment is not returned: the balance needs more than the payment credited.
    await fund(t, m.merchant_id, 'test', EXTRA_MINOR);
    const created = await awaiting(m, sessionId, PAYMENT_MINOR);
    await assertBalance(m, { available: CREDITED_MINOR + EXTRA_MINOR - PAYMENT_MINOR, held: PAYMENT_MINOR }, 'held');
    // Everything charged is committed while it waits.
    assertErrorEnvelope(
      await refund(m.test_api_key, { session_id: sessionId, amount_minor: 1 }),
      409,
      'REFUND_EXCEEDS_PAYMENT',
    );

    const key = randomUUID();
    const cancelled = await simulate(m.test_api_key, created.id, 'cancelled', key);
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json().status, 'cancelled');
    const replay = await simulate(m.test_api_key, created.id, 'cancelled', key);
    assert.equal(replay.statusCode, 200);
    assert.deepEqual(replay.json(), cancelled.json());
    assert.deepEqual(await eventTypes(created.id), ['refund.created', 'refund.cancelled']);
    const events = await eventsFor(t, created.id);
    assert.equal((events[1]!.payload.data.refund as { status: string }).status, 'cancelled');
    await assertBalance(m, { available: CREDITED_MINOR + EXTRA_MINOR, held: 0 }, 'cancelled: all back');
    assert.equal(await refundedOf(m, sessionId), 0);
    const listed = await call(t, 'GET', '/api/v1/events', {
      key: m.test_api_key,
      query: { type: 'refund.cancelled', object_id: created.id },
    });
    assert.equal(listed.json().data.length, 1);

    const again = await refund(m.test_api_key, { session_id: sessionId, amount_minor: REFUND_MINOR });
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.json().status, 'succeeded');
    await assertBalance(
      m,
      { available: CREDITED_MINOR + EXTRA_MINOR - REFUND_MINOR, held: 0 },
      'refunded after the cancel',
    );
  });

  it('approved then failed releases the hold', async () => {
    const { m, sessionId } = await paidMerchant();
    const created = await awaiting(m, sessionId);
    await moved(m, created.id, 'approved');
    const failed = await moved(m, created.id, 'failed');
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failure_reason, 'simulated failure (Test mode)');
    await assertBalance(m, { available: CREDITED_MINOR, held: 0 }, 'failed: released');
    assert.deepEqual(await eventTypes(created.id), ['refund.created', 'refund.failed']);
  });

  it('refuses what the refund table does not allow (409 REFUND_NOT_PENDING), changing nothing', async () => {
    const { m, sessionId } = await paidMerchant();
    const waiting = await awaiting(m, sessionId, 1_000);
    const pendingRes = await refund(m.test_api_key, {
      session_id: sessionId,
      amount_minor: 1_000,
      test_outcome: 'pending',
    });
    const pending = pendingRes.json() as { id: string };
    const done = (await refund(m.test_api_key, { session_id: sessionId, amount_minor: 1_000 })).json() as {
      id: string;
    };
    const cancelled = await awaiting(m, sessionId, 1_000);
    await moved(m, cancelled.id, 'cancelled');
    const refused: [{ id: string }, string][] = [
      [waiting, 'succeeded'],
      [waiting, 'failed'],
      [pending, 'approved'],
      [pending, 'cancelled'],
      [done, 'approved'],
      [done, 'cancelled'],
      [done, 'failed'],
      [cancelled, 'approved'],
      [cancelled, 'succeeded'],
    ];
    const before = await balanceOf(t, m.merchant_id, 'test');
    for (const [r, outcome] of refused) {
      const statusBefore = (await call(t, 'GET', `/api/v1/refunds/${r.id}`, { key: m.test_api_key })).json().status;
      const eventsBefore = await eventTypes(r.id);
      assertErrorEnvelope(await simulate(m.test_api_key, r.id, outcome), 409, 'REFUND_NOT_PENDING');
      assert.equal(
        (await call(t, 'GET', `/api/v1/refunds/${r.id}`, { key: m.test_api_key })).json().status,
        statusBefore,
        `${statusBefore} -> ${outcome}`,
      );
      assert.deepEqual(await eventTypes(r.id), eventsBefore);
    }
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'test'), before);
    assertErrorEnvelope(await simulate(m.test_api_key, waiting.id, 'awaiting_approval'), 400, 'INVALID_ARGUMENT');
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('Live keys: test_outcome awaiting_approval is 400 and the simulator 403; another merchant gets 404', async () => {
    const { m, sessionId } = await paidMerchant();
    const live = await refund(m.live_api_key, {
      session_id: sessionId,
      amount_minor: 100,
      test_outcome: 'awaiting_approval',
    });
    assert.equal(assertErrorEnvelope(live, 400, 'INVALID_ARGUMENT').fields?.[0]?.field, 'test_outcome');
    const created = await awaiting(m, sessionId);
    assertErrorEnvelope(await simulate(m.live_api_key, created.id, 'cancelled'), 403, 'FORBIDDEN');
    const stranger = await t.merchant();
    const foreign = await simulate(stranger.test_api_key, created.id, 'cancelled');
    const unknown = await simulate(stranger.test_api_key, `re_${randomUUID().replaceAll('-', '')}`, 'cancelled');
    assert.deepEqual(assertErrorEnvelope(foreign, 404, 'NOT_FOUND'), assertErrorEnvelope(unknown, 404, 'NOT_FOUND'));
    assert.equal(
      (await call(t, 'GET', `/api/v1/refunds/${created.id}`, { key: m.test_api_key })).json().status,
      'awaiting_approval',
    );
    assert.deepEqual(await eventTypes(created.id), ['refund.created']);
    await assertBalance(m, { available: CREDITED_MINOR - REFUND_MINOR, held: REFUND_MINOR }, 'unchanged');
  });

  it('an Idempotency-Key retry of the create answers the same refund; one hold, one event', async () => {
    const { m, sessionId } = await paidMerchant();
    const key = randomUUID();
    const body = { session_id: sessionId, amount_minor: REFUND_MINOR, test_outcome: 'awaiting_approval' };
    const first = await refund(m.test_api_key, body, key);
    const again = await refund(m.test_api_key, body, key);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.json().id, first.json().id);
    assertErrorEnvelope(
      await refund(m.test_api_key, { ...body, test_outcome: 'pending' }, key),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    assert.deepEqual(await eventTypes(first.json().id), ['refund.created']);
    await assertBalance(m, { available: CREDITED_MINOR - REFUND_MINOR, held: REFUND_MINOR }, 'held once');
  });

  it('documents the outcomes with their enums read from the model', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      // biome-ignore lint/suspicious/noExplicitAny: the API document as parsed JSON, walked by path
      paths: Record<string, Record<string, any>>;
      // biome-ignore lint/suspicious/noExplicitAny: the API document as parsed JSON, walked by path
      components: { schemas: Record<string, any> };
    };
    const bodyOf = (path: string) => {
      const schema = doc.paths[path]!.post.requestBody.content['application/json'].schema;
      return schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema;
    };
    const enumOf = (schema: { enum?: string[]; anyOf?: { const?: string; enum?: string[] }[] }) =>
      schema.enum ?? (schema.anyOf ?? []).flatMap((s) => s.enum ?? [s.const!]);
    assert.deepEqual(enumOf(bodyOf('/api/v1/refunds').properties.test_outcome), [...TEST_REFUND_OUTCOMES]);
    assert.deepEqual(enumOf(bodyOf('/api/v1/test/refunds/{id}/simulate').properties.outcome), [
      ...TEST_REFUND_SIMULATIONS,
    ]);
  });
});
