// Test payouts beyond paid-at-once (issue 19): test_outcome on POST /api/v1/payouts (requested, processing;
// paid stays the default, SPEC 3.3) and POST /api/v1/test/payouts/{id}/simulate moving a Test payout
// through the payout table with the money and events a Live payout gets, over HTTP on both storages:
// the balance after each step (never negative; failed and cancelled give amount and fee back, returned
// credits a paid payout back), each event once, Live keys refused, other merchants 404, moves the table
// does not allow refused with nothing changed, client_reference and Idempotency-Key retries, the ledger's
// invariants after every step.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import { TEST_PAYOUT_OUTCOMES, TEST_PAYOUT_SIMULATIONS } from '../../src/payouts/model.ts';
import { storageKind } from '../support/helpers.ts';
import { useTestApp } from '../support/hooks.ts';
import { assertErrorEnvelope, call } from '../support/http.ts';
import {
  api,
  balanceOf,
  bankRecipient,
  eventsFor,
  fund,
  merchantWithHooks,
  newClientReference,
  postPayout,
  type PayoutJson,
} from '../support/payouts-fixtures.ts';

/** A bank payout's fee (flat GHS 1.00). */
const BANK_FEE_MINOR = 100;
const FUNDS_MINOR = 100_000;
const AMOUNT_MINOR = 10_000;
const TOTAL_MINOR = AMOUNT_MINOR + BANK_FEE_MINOR;

describe(`Test payout outcomes and the payout simulator (${storageKind})`, () => {
  const t = useTestApp();

  /** A merchant with webhook endpoints (payouts need one), a funded Test balance and a bank recipient. */
  async function ready(fundMinor = FUNDS_MINOR): Promise<{ m: CreatedMerchant; recipientId: string }> {
    const m = await merchantWithHooks(t);
    if (fundMinor > 0) await fund(t, m.merchant_id, 'test', fundMinor);
    return { m, recipientId: (await bankRecipient(t, m.test_api_key)).id };
  }

  async function create(
    m: CreatedMerchant,
    recipientId: string,
    extra: Record<string, unknown> = {},
  ): Promise<PayoutJson> {
    const res = await postPayout(t, m.test_api_key, {
      recipient_id: recipientId,
      amount_minor: AMOUNT_MINOR,
      client_reference: newClientReference(),
      ...extra,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  const simulate = (key: string, id: string, outcome: string, idempotencyKey?: string) =>
    call(t, 'POST', `/api/v1/test/payouts/${id}/simulate`, {
      key,
      body: { outcome },
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });

  async function moved(m: CreatedMerchant, id: string, outcome: string): Promise<PayoutJson> {
    const res = await simulate(m.test_api_key, id, outcome);
    assert.equal(res.statusCode, 200, res.body);
    const payout = res.json() as PayoutJson;
    assert.equal(payout.id, id);
    return payout;
  }

  /** The balance is what it should be, never negative, and the ledger's invariants hold. */
  async function assertBalance(m: CreatedMerchant, expected: { available: number; held: number }, context: string) {
    const balance = await balanceOf(t, m.merchant_id, 'test');
    assert.deepEqual({ available: balance.available_minor, held: balance.held_minor }, expected, context);
    assert.ok(balance.available_minor >= 0 && balance.held_minor >= 0, `${context}: never negative`);
    assert.equal(balance.eligible_minor, balance.available_minor + balance.held_minor);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), [], `${context}: ledger invariants`);
  }

  const eventTypes = async (id: string) => (await eventsFor(t, id)).map((e) => e.type);

  it('without test_outcome (or with paid) a Test payout is still paid at once, nothing held; a retry naming paid is the same request', async () => {
    const { m, recipientId } = await ready();
    const clientReference = newClientReference();
    const res = await postPayout(t, m.test_api_key, {
      recipient_id: recipientId,
      amount_minor: AMOUNT_MINOR,
      client_reference: clientReference,
    });
    assert.equal(res.statusCode, 201, res.body);
    const payout = res.json() as PayoutJson;
    assert.equal(payout.status, 'paid');
    assert.match(payout.bank_reference, /^TEST-/);
    assert.equal(payout.can_cancel, false);
    assert.deepEqual(await eventTypes(payout.id), ['payout.paid']);
    await assertBalance(m, { available: FUNDS_MINOR - TOTAL_MINOR, held: 0 }, 'paid at once');

    const again = await postPayout(t, m.test_api_key, {
      recipient_id: recipientId,
      amount_minor: AMOUNT_MINOR,
      client_reference: clientReference,
      test_outcome: 'paid',
    });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().id, payout.id);
    const other = await postPayout(t, m.test_api_key, {
      recipient_id: recipientId,
      amount_minor: AMOUNT_MINOR,
      client_reference: clientReference,
      test_outcome: 'requested',
    });
    assertErrorEnvelope(other, 409, 'REFERENCE_CONFLICT');
    assert.deepEqual(await eventTypes(payout.id), ['payout.paid']);
    await assertBalance(m, { available: FUNDS_MINOR - TOTAL_MINOR, held: 0 }, 'retries moved nothing');
  });

  it('requested -> processing -> paid -> returned: the hold, its payment, the money back; each event once, in order', async () => {
    const { m, recipientId } = await ready();
    const payout = await create(m, recipientId, { test_outcome: 'requested' });
    assert.equal(payout.status, 'requested');
    assert.equal(payout.can_cancel, true);
    assert.equal(payout.bank_reference, '', 'no bank reference before it is paid');
    assert.equal(payout.reconciliation_status, 'not_required');
    assert.deepEqual(await eventTypes(payout.id), ['payout.requested']);
    await assertBalance(
      m,
      { available: FUNDS_MINOR - TOTAL_MINOR, held: TOTAL_MINOR },
      'requested: amount and fee held',
    );

    const processing = await moved(m, payout.id, 'processing');
    assert.equal(processing.status, 'processing');
    assert.equal(processing.can_cancel, true);
    assert.deepEqual(await eventTypes(payout.id), ['payout.requested', 'payout.processing']);
    await assertBalance(m, { available: FUNDS_MINOR - TOTAL_MINOR, held: TOTAL_MINOR }, 'processing: still held');

    const paid = await moved(m, payout.id, 'paid');
    assert.equal(paid.status, 'paid');
    assert.match(paid.bank_reference, /^TEST-/);
    assert.equal(paid.can_cancel, false);
    assert.ok(paid.paid_at);
    await assertBalance(m, { available: FUNDS_MINOR - TOTAL_MINOR, held: 0 }, 'paid: the hold paid out');

    const returned = await moved(m, payout.id, 'returned');
    assert.equal(returned.status, 'returned');
    assert.match(returned.return_reference, /^TEST-RET-/);
    await assertBalance(m, { available: FUNDS_MINOR, held: 0 }, 'returned: amount and fee back');
    const events = await eventsFor(t, payout.id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['payout.requested', 'payout.processing', 'payout.paid', 'payout.returned'],
    );
    for (const e of events) {
      assert.equal(e.payload.livemode, false);
      assert.equal((e.payload.data.payout as { status: string }).status, e.type.slice('payout.'.length));
    }
    // The merchant's event list shows each of them once.
    for (const type of ['payout.requested', 'payout.processing', 'payout.paid', 'payout.returned']) {
      const listed = await call(t, 'GET', '/api/v1/events', {
        key: m.test_api_key,
        query: { type, object_id: payout.id },
      });
      assert.equal(listed.statusCode, 200, listed.body);
      assert.equal(listed.json().data.length, 1, type);
    }
    // A receipt exists once returned, as for a Live payout.
    assert.equal((await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}/receipt`)).statusCode, 200);
  });

  it('a payout paid at once (the default) can be simulated returned: its payment comes back', async () => {
    const { m, recipientId } = await ready();
    const payout = await create(m, recipientId);
    await assertBalance(m, { available: FUNDS_MINOR - TOTAL_MINOR, held: 0 }, 'paid at once');
    assert.equal((await moved(m, payout.id, 'returned')).status, 'returned');
    await assertBalance(m, { available: FUNDS_MINOR, held: 0 }, 'returned');
    assert.deepEqual(await eventTypes(payout.id), ['payout.paid', 'payout.returned']);
  });

  it('processing -> failed gives amount and fee back to available and frees the day total', async () => {
    const { m, recipientId } = await ready();
    const payout = await create(m, recipientId, { test_outcome: 'processing' });
    assert.equal(payout.status, 'processing');
    assert.equal(payout.can_cancel, true);
    assert.deepEqual(await eventTypes(payout.id), ['payout.processing']);
    await assertBalance(m, { available: FUNDS_MINOR - TOTAL_MINOR, held: TOTAL_MINOR }, 'processing: held');
    const dayTotal = async () =>
      (
        await t.db.query<{ committed_minor: number }>(
          `SELECT committed_minor FROM payout_day_totals WHERE merchant_id = $1 AND environment = 'test'`,
          [m.merchant_id],
        )
      )[0]?.committed_minor;
    assert.equal(Number(await dayTotal()), AMOUNT_MINOR);

    const failed = await moved(m, payout.id, 'failed');
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failure_reason, 'simulated failure (Test mode)');
    assert.equal(failed.can_cancel, false);
    await assertBalance(m, { available: FUNDS_MINOR, held: 0 }, 'failed: released');
    assert.equal(Number(await dayTotal()), 0, 'a failed payout no longer counts toward the day');
    assert.deepEqual(await eventTypes(payout.id), ['payout.processing', 'payout.failed']);
  });

  it('POST /api/v1/payouts/{id}/cancel cancels a requested or processing Test payout: payout.cancelled, the hold released', async () => {
    const { m, recipientId } = await ready();
    const requested = await create(m, recipientId, { test_outcome: 'requested' });
    const processing = await create(m, recipientId, { test_outcome: 'processing' });
    await assertBalance(m, { available: FUNDS_MINOR - 2 * TOTAL_MINOR, held: 2 * TOTAL_MINOR }, 'two held');
    for (const [payout, first] of [
      [requested, 'payout.requested'],
      [processing, 'payout.processing'],
    ] as const) {
      const res = await api(t, m.test_api_key, 'POST', `/api/v1/payouts/${payout.id}/cancel`, {
        reason: 'changed my mind',
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'cancelled');
      assert.equal(res.json().can_cancel, false);
      // A repeated cancel answers the cancelled payout and moves nothing again (SPEC 3.3).
      const again = await api(t, m.test_api_key, 'POST', `/api/v1/payouts/${payout.id}/cancel`, {});
      assert.equal(again.statusCode, 200, again.body);
      assert.deepEqual(await eventTypes(payout.id), [first, 'payout.cancelled']);
    }
    await assertBalance(m, { available: FUNDS_MINOR, held: 0 }, 'both cancelled: all back');
    // A cancelled payout goes nowhere.
    assertErrorEnvelope(
      await simulate(m.test_api_key, requested.id, 'processing'),
      409,
      'PAYOUT_TRANSITION_NOT_ALLOWED',
    );
  });

  it('refuses moves the payout table does not allow (409), changing nothing', async () => {
    const { m, recipientId } = await ready(1_000_000);
    const requested = await create(m, recipientId, { test_outcome: 'requested' });
    const processing = await create(m, recipientId, { test_outcome: 'processing' });
    const paid = await create(m, recipientId);
    const failed = await create(m, recipientId, { test_outcome: 'processing' });
    await moved(m, failed.id, 'failed');
    const returned = await create(m, recipientId);
    await moved(m, returned.id, 'returned');
    const refused: [PayoutJson, string][] = [
      [requested, 'paid'],
      [requested, 'failed'],
      [requested, 'returned'],
      [processing, 'processing'],
      [processing, 'returned'],
      [paid, 'processing'],
      [paid, 'paid'],
      [paid, 'failed'],
      [failed, 'paid'],
      [failed, 'returned'],
      [returned, 'returned'],
      [returned, 'paid'],
    ];
    const before = await balanceOf(t, m.merchant_id, 'test');
    for (const [payout, outcome] of refused) {
      const statusBefore = (await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}`)).json().status;
      const eventsBefore = await eventTypes(payout.id);
      const res = await simulate(m.test_api_key, payout.id, outcome);
      const error = assertErrorEnvelope(res, 409, 'PAYOUT_TRANSITION_NOT_ALLOWED');
      assert.match(error.message, new RegExp(`is ${statusBefore}`));
      assert.equal(
        (await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}`)).json().status,
        statusBefore,
        `${statusBefore} -> ${outcome}`,
      );
      assert.deepEqual(await eventTypes(payout.id), eventsBefore);
    }
    assert.deepEqual(await balanceOf(t, m.merchant_id, 'test'), before);
    // A paid payout (money sent) is no longer cancellable.
    assertErrorEnvelope(
      await api(t, m.test_api_key, 'POST', `/api/v1/payouts/${paid.id}/cancel`, {}),
      409,
      'PAYOUT_NOT_CANCELLABLE',
    );
    // Outcomes outside the list are refused by the schema.
    for (const outcome of ['cancelled', 'requested', 'teleported'])
      assertErrorEnvelope(await simulate(m.test_api_key, requested.id, outcome), 400, 'INVALID_ARGUMENT');
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('Live keys: test_outcome is refused (400, nothing created) and the simulator answers 403 whatever the id', async () => {
    const m = await merchantWithHooks(t);
    const recipient = await bankRecipient(t, m.live_api_key);
    const clientReference = newClientReference();
    const res = await postPayout(t, m.live_api_key, {
      recipient_id: recipient.id,
      amount_minor: AMOUNT_MINOR,
      client_reference: clientReference,
      test_outcome: 'requested',
    });
    const error = assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
    assert.equal(error.fields?.[0]?.field, 'test_outcome');
    const rows = await t.db.query('SELECT 1 FROM payouts WHERE merchant_id = $1', [m.merchant_id]);
    assert.equal(rows.length, 0);

    const { m: owner, recipientId } = await ready();
    const payout = await create(owner, recipientId, { test_outcome: 'processing' });
    assertErrorEnvelope(await simulate(m.live_api_key, payout.id, 'paid'), 403, 'FORBIDDEN');
    assertErrorEnvelope(await simulate(owner.live_api_key, payout.id, 'paid'), 403, 'FORBIDDEN');
    assertErrorEnvelope(await simulate(owner.live_api_key, 'po_00000000000000000000000000', 'paid'), 403, 'FORBIDDEN');
    assert.equal((await api(t, owner.test_api_key, 'GET', `/api/v1/payouts/${payout.id}`)).json().status, 'processing');
  });

  it("another merchant's Test key gets 404, as for an unknown id, and changes nothing", async () => {
    const { m, recipientId } = await ready();
    const stranger = await merchantWithHooks(t);
    const payout = await create(m, recipientId, { test_outcome: 'processing' });
    const foreign = await simulate(stranger.test_api_key, payout.id, 'paid');
    const unknown = await simulate(stranger.test_api_key, `po_${randomUUID().replaceAll('-', '')}`, 'paid');
    assert.deepEqual(assertErrorEnvelope(foreign, 404, 'NOT_FOUND'), assertErrorEnvelope(unknown, 404, 'NOT_FOUND'));
    assertErrorEnvelope(
      await api(t, stranger.test_api_key, 'POST', `/api/v1/payouts/${payout.id}/cancel`, {}),
      404,
      'NOT_FOUND',
    );
    assert.equal((await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}`)).json().status, 'processing');
    assert.deepEqual(await eventTypes(payout.id), ['payout.processing']);
  });

  it('client_reference retries include test_outcome; a hold the balance cannot cover is refused with nothing written', async () => {
    const { m, recipientId } = await ready(TOTAL_MINOR);
    const clientReference = newClientReference();
    const body = {
      recipient_id: recipientId,
      amount_minor: AMOUNT_MINOR,
      client_reference: clientReference,
      test_outcome: 'requested',
    };
    const first = await postPayout(t, m.test_api_key, body);
    assert.equal(first.statusCode, 201, first.body);
    const retry = await postPayout(t, m.test_api_key, body);
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.json().id, first.json().id);
    for (const outcome of ['processing', 'paid', undefined]) {
      const { test_outcome: _omitted, ...rest } = body;
      assertErrorEnvelope(
        await postPayout(t, m.test_api_key, outcome === undefined ? rest : { ...rest, test_outcome: outcome }),
        409,
        'REFERENCE_CONFLICT',
      );
    }
    assert.deepEqual(await eventTypes(first.json().id), ['payout.requested']);
    await assertBalance(m, { available: 0, held: TOTAL_MINOR }, 'all of it held');
    // Nothing left to hold: refused, nothing written.
    const broke = await postPayout(t, m.test_api_key, {
      recipient_id: recipientId,
      amount_minor: AMOUNT_MINOR,
      client_reference: newClientReference(),
      test_outcome: 'processing',
    });
    assertErrorEnvelope(broke, 409, 'INSUFFICIENT_FUNDS');
    assertErrorEnvelope(
      await postPayout(t, m.test_api_key, { ...body, test_outcome: 'sideways' }),
      400,
      'INVALID_ARGUMENT',
    );
    assert.equal((await t.db.query('SELECT 1 FROM payouts WHERE merchant_id = $1', [m.merchant_id])).length, 1);
    await assertBalance(m, { available: 0, held: TOTAL_MINOR }, 'unchanged');
  });

  it('an Idempotency-Key retry of a simulation answers the same payout and moves nothing twice', async () => {
    const { m, recipientId } = await ready();
    const payout = await create(m, recipientId, { test_outcome: 'processing' });
    const key = randomUUID();
    const first = await simulate(m.test_api_key, payout.id, 'failed', key);
    assert.equal(first.statusCode, 200, first.body);
    const again = await simulate(m.test_api_key, payout.id, 'failed', key);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.deepEqual(await eventTypes(payout.id), ['payout.processing', 'payout.failed']);
    await assertBalance(m, { available: FUNDS_MINOR, held: 0 }, 'released once');
  });

  it('a simulated payment racing a cancel: exactly one wins, and the money matches the winner', async () => {
    for (let round = 0; round < 3; round++) {
      const { m, recipientId } = await ready();
      const payout = await create(m, recipientId, { test_outcome: 'processing' });
      const [paid, cancelled] = await Promise.all([
        simulate(m.test_api_key, payout.id, 'paid'),
        api(t, m.test_api_key, 'POST', `/api/v1/payouts/${payout.id}/cancel`, {}),
      ]);
      const statuses = [paid.statusCode, cancelled.statusCode].sort();
      assert.deepEqual(statuses, [200, 409], `${paid.body} ${cancelled.body}`);
      const final = (await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}`)).json().status as string;
      assert.equal(final, paid.statusCode === 200 ? 'paid' : 'cancelled');
      await assertBalance(
        m,
        final === 'paid' ? { available: FUNDS_MINOR - TOTAL_MINOR, held: 0 } : { available: FUNDS_MINOR, held: 0 },
        `race won by ${final}`,
      );
      assert.deepEqual(await eventTypes(payout.id), ['payout.processing', `payout.${final}`]);
    }
  });

  it('documents test_outcome and the simulator with their enums read from the model', async () => {
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
    assert.deepEqual(bodyOf('/api/v1/payouts').properties.test_outcome.enum, [...TEST_PAYOUT_OUTCOMES]);
    const operation = doc.paths['/api/v1/test/payouts/{payout_id}/simulate']!.post;
    assert.equal(operation.operationId, 'simulateTestPayout');
    assert.deepEqual(bodyOf('/api/v1/test/payouts/{payout_id}/simulate').properties.outcome.enum, [
      ...TEST_PAYOUT_SIMULATIONS,
    ]);
    for (const [status, response] of Object.entries(operation.responses as Record<string, { description?: string }>))
      assert.ok(response.description, status);
    assert.ok(operation.responses['409'] && operation.responses['403'] && operation.responses['404']);
  });
});
