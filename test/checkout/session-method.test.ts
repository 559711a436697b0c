// The method a session keeps (migration 042, issue 36): the rail and network of the attempt that paid it, else of
// the payer's latest try, written by the status UPDATE that starts the try or records the payment; and the receipt
// number given by that same UPDATE, left NULL (for a retry behind a savepoint) when another session holds it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { sessionMachine } from '../../src/checkout/model.ts';
import { updateSessionStatus } from '../../src/checkout/store.ts';
import { createSession, momoBody, simulate, startAttempt, TELECEL_PHONE } from '../support/checkout.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const BASE = 20_000;

describe(`a session keeps its method and is given its receipt number by its status update (${storageKind})`, () => {
  let t: TestContext;
  let m: CreatedMerchant;
  before(async () => {
    t = await startTestApp();
    m = await createMerchant(
      t.db,
      { name: 'Method Stores', email: `method-${Date.now()}@example.com`, webhookUrl: null },
      t.webhookTargets,
    );
  });
  after(() => t.close());

  const methodOf = async (id: string) =>
    (
      await t.db.query<{ method_rail: string | null; method_network: string | null; receipt_number: string | null }>(
        'SELECT method_rail, method_network, receipt_number FROM checkout_sessions WHERE id = $1',
        [id],
      )
    )[0]!;

  it('names no method before a try, the latest try while unpaid, and the paying attempt once paid', async () => {
    const session = await createSession(t, m, { amount_minor: BASE });
    assert.deepEqual(await methodOf(session.id), { method_rail: null, method_network: null, receipt_number: null });

    const mtn = await startAttempt(t, session.id, momoBody(BASE));
    assert.deepEqual(await methodOf(session.id), { method_rail: 'momo', method_network: 'mtn', receipt_number: null });
    await simulate(t, m, mtn.attempt_reference, 'failed');
    assert.equal((await methodOf(session.id)).method_network, 'mtn', 'a failed try still names the method tried');

    const telecel = await startAttempt(t, session.id, momoBody(BASE, TELECEL_PHONE, 'telecel'));
    assert.equal((await methodOf(session.id)).method_network, 'telecel');
    await simulate(t, m, telecel.attempt_reference, 'paid');
    const paid = await methodOf(session.id);
    assert.equal(paid.method_rail, 'momo');
    assert.equal(paid.method_network, 'telecel');
    assert.match(paid.receipt_number ?? '', /^[0-9A-HJKMNP-TV-Z]{9}$/, 'the success update gave the receipt number');
  });

  it('the Payments filter by network finds the session by the method it keeps', async () => {
    const session = await createSession(t, m, { amount_minor: BASE });
    const attempt = await startAttempt(t, session.id, momoBody(BASE, TELECEL_PHONE, 'telecel'));
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const rows = await t.db.query<{ id: string }>(
      `SELECT id FROM checkout_sessions WHERE merchant_id = $1 AND environment = 'test' AND method_network = 'telecel'`,
      [m.merchant_id],
    );
    assert.ok(rows.some((row) => row.id === session.id));
  });

  it('a receipt number another session holds is not given: the row comes back without one, the status moved', async () => {
    const held = await createSession(t, m, { amount_minor: BASE });
    const heldTry = await startAttempt(t, held.id, momoBody(BASE));
    await simulate(t, m, heldTry.attempt_reference, 'paid');
    const taken = (await methodOf(held.id)).receipt_number!;

    const other = await createSession(t, m, { amount_minor: BASE });
    await startAttempt(t, other.id, momoBody(BASE));
    const moved = await updateSessionStatus(t.db, other.id, sessionMachine.transition('pending', 'success'), true, {
      receiptNumber: taken,
    });
    assert.equal(moved.status, 'success');
    assert.equal(moved.receipt_number, null);

    const third = await createSession(t, m, { amount_minor: BASE });
    await startAttempt(t, third.id, momoBody(BASE));
    const given = await updateSessionStatus(t.db, third.id, sessionMachine.transition('pending', 'success'), true, {
      receiptNumber: 'TEST00001',
    });
    assert.equal(given.receipt_number, 'TEST00001', 'a number nobody holds is given');
  });
});
