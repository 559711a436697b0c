// Issue 30, item 3 ("Payouts offer no approve or hold"): an operator holds a Live payout that has not been sent
// to its provider yet, with a reason, and releases it later, with a reason, on the console's Live payouts page.
// A held payout is never claimed by the Live worker: the Paystack stand-in gets no name enquiry and no
// transfer for it; a released one is sent. A hold once the transfer was sent is refused and changes nothing.
// The merchant can still cancel a held payout. Hold and release are audited. A teller cannot reach them. On
// PostgreSQL, a hold racing the worker either holds (no transfer) or is refused (the transfer was sent),
// never both. Over HTTP (the console as a browser sends it, the API over real HTTP), on both storages, with
// the ledger invariants checked after.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import { createOperator } from '../../src/ops/service.ts';
import { processDuePayouts } from '../../src/payouts/processing.ts';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import { ConsoleClient, flashOf } from '../support/console-client.ts';
import { storageKind } from '../support/helpers.ts';
import { driveUntil, eventually, freePort, startLiveApp, type LiveApp } from '../support/live.ts';
import { fund, WEBHOOK_URL } from '../support/payouts-fixtures.ts';
import { startPaystackStandIn, STAND_IN_GHANA_BANKS, type PaystackStandIn } from '../support/standins/paystack.ts';

const SECRET = 'sk_test_payout_hold_secret';
const PASSWORD = 'ops-payout-hold-password';
const GCB_PAYSTACK_CODE = STAND_IN_GHANA_BANKS.find((bank) => bank.name.startsWith('GCB'))!.code;
const text = (body: string) =>
  flashOf(body)
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

interface Row {
  status: string;
  processing_step: string | null;
  provider_reference: string | null;
  held_at: Date | null;
  held_by: string | null;
  hold_reason: string | null;
  version: number;
}

describe(`operator holds on Live payouts (${storageKind})`, () => {
  let paystack: PaystackStandIn;
  let app: LiveApp;
  let m: CreatedMerchant;
  let gcbId: string;
  let operator: ConsoleClient;
  let operatorEmail: string;
  let teller: ConsoleClient;
  let accountSeq = 0;

  const api = (method: string, path: string, body?: unknown) => app.http(method, path, { key: m.live_api_key, body });
  const step = (id: string) => processDuePayouts(app.t.db, app.t.app.deps.providers, { only: [id] });
  const makeDue = (id: string) => app.t.db.query('UPDATE payouts SET next_step_at = now() WHERE id = $1', [id]);
  const row = async (id: string) =>
    (
      await app.t.db.query<Row>(
        'SELECT status, processing_step, provider_reference, held_at, held_by, hold_reason, version FROM payouts WHERE id = $1',
        [id],
      )
    )[0]!;
  const audited = (id: string) =>
    app.t.db.query<{
      action: string;
      actor_email: string | null;
      before: Record<string, unknown> | null;
      after: Record<string, unknown> | null;
    }>(
      "SELECT action, actor_email, before, after FROM audit_log WHERE object_id = $1 AND action LIKE 'payout.%' ORDER BY created_at, id",
      [id],
    );
  const invariantsHold = async () => assert.deepEqual(await checkInvariants(app.t.db, m.merchant_id), []);
  /** Runs the worker over the payout until `until` holds (or ten passes went by), the payout made due each time. */
  const drive = (id: string, until: (r: Row) => boolean) =>
    driveUntil(
      () => row(id),
      async () => {
        await makeDue(id);
        await step(id);
      },
      until,
    );
  /** A new Live payout to a new GCB account the stand-in knows: processing, at the recipient check. */
  async function payout(amountMinor = 5_000) {
    const accountNumber = `20000${String(++accountSeq).padStart(5, '0')}`;
    paystack.setAccount(GCB_PAYSTACK_CODE, accountNumber, 'KOFI MENSAH');
    const recipient = await api('POST', '/api/v1/payouts/recipients', {
      bank_id: gcbId,
      account_number: accountNumber,
      account_name: 'Kofi Mensah',
    });
    assert.equal(recipient.status, 201, recipient.text);
    const res = await api('POST', '/api/v1/payouts', {
      recipient_id: recipient.json.id,
      amount_minor: amountMinor,
      client_reference: `hold-${randomUUID()}`,
    });
    assert.equal(res.status, 201, res.text);
    return { ...(res.json as { id: string; reference: string; status: string }), accountNumber };
  }
  /** The stand-in's requests about one account (its name enquiries): another test file's payouts on the same database may be sent meanwhile. */
  const resolvesOf = (accountNumber: string) =>
    paystack.requests.filter((r) => r.endpoint === 'bank.resolve' && r.path.includes(accountNumber)).length;
  const transfersOf = (r: Row) =>
    r.provider_reference ? paystack.transfers.filter((tr) => tr.reference === r.provider_reference).length : 0;

  before(async () => {
    const port = await freePort();
    paystack = await startPaystackStandIn({
      secretKey: SECRET,
      webhookUrl: `http://127.0.0.1:${port}/api/v1/providers/paystack/webhook`,
    });
    app = await startLiveApp(port, { PAYSTACK_SECRET_KEY: SECRET, PAYSTACK_BASE_URL: paystack.baseUrl });
    m = await app.t.merchant({ webhookUrl: WEBHOOK_URL });
    await setPayoutAccess(app.t.db, m.merchant_id, 'live', { payout_access: true });
    await fund(app.t, m.merchant_id, 'live', 10_000_000);
    gcbId = (await api('GET', '/api/v1/payouts/capabilities')).json.banks.find(
      (bank: { code: string }) => bank.code === 'GCB',
    ).id;
    operatorEmail = `hold-operator-${randomUUID()}@example.com`;
    await createOperator(app.t.db, { email: operatorEmail, password: PASSWORD });
    operator = await new ConsoleClient(app.t, '/ops').signedIn(operatorEmail, PASSWORD);
    const tellerEmail = `hold-teller-${randomUUID()}@example.com`;
    await createOperator(app.t.db, { email: tellerEmail, password: PASSWORD, role: 'teller' });
    teller = await new ConsoleClient(app.t, '/ops', '203.0.113.40').signedIn(tellerEmail, PASSWORD);
  });
  after(async () => {
    await app?.t.close();
    await paystack?.close();
  });

  it('a held payout is never claimed (no name enquiry, no transfer at Paystack); released with a reason, it is sent and paid; both audited', async () => {
    const p = await payout();
    const listed = await operator.get(`/ops/payouts?q=${p.reference}`);
    assert.equal(listed.statusCode, 200);
    assert.ok(listed.body.includes(`action="/ops/payouts/${p.id}/hold"`), 'a payout not yet sent offers Hold');

    const blank = await operator.post(`/ops/payouts/${p.id}/hold`, { reason: '   ' });
    assert.equal(blank.statusCode, 400);
    assert.match(text(blank.body), /Give a reason to hold/);
    const missing = await operator.post(`/ops/payouts/${p.id}/hold`, {});
    assert.equal(missing.statusCode, 400, 'the reason is required by the route schema');
    assert.equal((await row(p.id)).held_at, null);

    const held = await operator.post(`/ops/payouts/${p.id}/hold`, { reason: 'Merchant under KYC review' });
    assert.equal(held.statusCode, 200, held.body.slice(0, 300));
    assert.match(text(held.body), /is held/);
    assert.match(held.body, /class="badge bad">Held</);
    assert.ok(
      held.body.includes(`Held by ${operatorEmail}`) && held.body.includes('Merchant under KYC review'),
      'who and why are shown',
    );
    assert.ok(
      held.body.includes(`action="/ops/payouts/${p.id}/release"`) &&
        !held.body.includes(`action="/ops/payouts/${p.id}/hold"`),
      'Release, not Hold, on a held payout',
    );
    const heldRow = await row(p.id);
    assert.deepEqual(
      [heldRow.status, heldRow.processing_step, heldRow.held_by, heldRow.hold_reason],
      ['processing', 'recipient_check', operatorEmail, 'Merchant under KYC review'],
    );
    assert.equal(heldRow.version, 1, 'a hold is not a change of the payout the merchant sees');
    const again = await operator.post(`/ops/payouts/${p.id}/hold`, { reason: 'twice' });
    assert.equal(again.statusCode, 409);
    assert.match(text(again.body), /already held/);

    // The filter: held payouts, and the others.
    assert.ok(
      (await operator.get(`/ops/payouts?q=${p.reference}&hold=held`)).body.includes(`/ops/payouts/${p.id}/release`),
    );
    assert.ok(
      !(await operator.get(`/ops/payouts?q=${p.reference}&hold=not_held`)).body.includes(
        `<td class="mono">${p.reference}</td>`,
      ),
    );
    // The merchant's API shows the payout as before: processing, no hold field.
    const seen = await api('GET', `/api/v1/payouts/${p.id}`);
    assert.equal(seen.json.status, 'processing');
    assert.ok(!Object.keys(seen.json).some((k) => k.startsWith('held') || k.startsWith('hold')));

    const resolves = resolvesOf(p.accountNumber);
    for (let i = 0; i < 4; i++) {
      await makeDue(p.id);
      await step(p.id);
    }
    const still = await row(p.id);
    assert.deepEqual(
      [still.status, still.processing_step],
      ['processing', 'recipient_check'],
      'the worker never claimed it',
    );
    assert.deepEqual(
      [resolvesOf(p.accountNumber), transfersOf(still)],
      [resolves, 0],
      'no provider call was made for it',
    );

    const blankRelease = await operator.post(`/ops/payouts/${p.id}/release`, { reason: ' ' });
    assert.equal(blankRelease.statusCode, 400);
    const released = await operator.post(`/ops/payouts/${p.id}/release`, { reason: 'KYC cleared' });
    assert.equal(released.statusCode, 200, released.body.slice(0, 300));
    assert.match(text(released.body), /is released/);
    assert.equal((await row(p.id)).held_at, null);
    const waiting = await drive(p.id, (r) => r.processing_step === 'awaiting_result' && r.provider_reference !== null);
    assert.equal(transfersOf(waiting), 1, 'the released payout is sent');
    paystack.settleTransfer(waiting.provider_reference!, 'success');
    await paystack.webhooksIdle();
    await eventually(async () => ((await row(p.id)).status === 'paid' ? true : undefined));

    const rows = await audited(p.id);
    assert.deepEqual(
      rows.map((a) => a.action),
      ['payout.hold', 'payout.release'],
    );
    assert.ok(rows.every((a) => a.actor_email === operatorEmail));
    assert.equal(rows[0]!.after!.hold_reason, 'Merchant under KYC review');
    assert.equal(rows[1]!.before!.hold_reason, 'Merchant under KYC review');
    assert.equal(rows[1]!.after!.release_reason, 'KYC cleared');
    await invariantsHold();
  });

  it('held at the transfer step (the recipient checked): nothing is sent until released; the cancel rule is as before', async () => {
    const p = await payout(7_000);
    const atTransfer = await drive(p.id, (r) => r.processing_step === 'transfer');
    assert.equal(atTransfer.processing_step, 'transfer', 'the recipient was checked; the transfer is next');
    const held = await operator.post(`/ops/payouts/${p.id}/hold`, { reason: 'Recipient flagged by compliance' });
    assert.equal(held.statusCode, 200, held.body.slice(0, 300));
    for (let i = 0; i < 3; i++) {
      await makeDue(p.id);
      await step(p.id);
    }
    const r = await row(p.id);
    assert.deepEqual(
      [r.status, r.processing_step, transfersOf(r)],
      ['processing', 'transfer', 0],
      'no transfer for a held payout',
    );
    // Cancelling stays as SPEC 3.3 has it: not once the transfer intent is recorded, held or not.
    const cancel = await api('POST', `/api/v1/payouts/${p.id}/cancel`, {});
    assert.equal(cancel.status, 409);
    assert.equal(cancel.json.error.code, 'PAYOUT_NOT_CANCELLABLE');
    assert.ok((await row(p.id)).held_at, 'still held');

    assert.equal(
      (await operator.post(`/ops/payouts/${p.id}/release`, { reason: 'Compliance cleared it' })).statusCode,
      200,
    );
    const waiting = await drive(p.id, (x) => x.processing_step === 'awaiting_result');
    assert.equal(transfersOf(waiting), 1, 'sent once released');
    paystack.settleTransfer(waiting.provider_reference!, 'success');
    await paystack.webhooksIdle();
    await eventually(async () => ((await row(p.id)).status === 'paid' ? true : undefined));
    assert.deepEqual(
      (await audited(p.id)).map((a) => a.action),
      ['payout.hold', 'payout.release'],
    );
    await invariantsHold();
  });

  it('the merchant can still cancel a held payout: its money is released, and then nothing is left to release', async () => {
    const before = (await api('GET', '/api/v1/payouts/balance')).json.available_minor as number;
    const p = await payout(8_000);
    assert.equal(
      (await operator.post(`/ops/payouts/${p.id}/hold`, { reason: 'Waiting for the merchant to call back' }))
        .statusCode,
      200,
    );
    const cancelled = await api('POST', `/api/v1/payouts/${p.id}/cancel`, { reason: 'not needed' });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.json.status, 'cancelled');
    assert.equal((await api('GET', '/api/v1/payouts/balance')).json.available_minor, before, 'amount and fee released');
    const release = await operator.post(`/ops/payouts/${p.id}/release`, { reason: 'too late' });
    assert.equal(release.statusCode, 409);
    assert.match(text(release.body), /cancelled; there is no hold left to release/);
    assert.deepEqual(
      (await audited(p.id)).map((a) => a.action),
      ['payout.hold'],
    );
    await invariantsHold();
  });

  it('a hold once the transfer was sent is refused with a clear sentence and changes nothing', async () => {
    const p = await payout(6_000);
    const waiting = await drive(p.id, (r) => r.processing_step === 'awaiting_result' && r.provider_reference !== null);
    assert.equal(transfersOf(waiting), 1);
    const page = await operator.get(`/ops/payouts?q=${p.reference}`);
    assert.ok(
      page.body.includes(`<td class="mono">${p.reference}</td>`) && !page.body.includes(`/ops/payouts/${p.id}/hold`),
      'Hold is not offered once the transfer was sent',
    );
    const refused = await operator.post(`/ops/payouts/${p.id}/hold`, { reason: 'Too late' });
    assert.equal(refused.statusCode, 409);
    assert.match(text(refused.body), /was already sent to the provider; it can no longer be held/);
    assert.deepEqual(await row(p.id), waiting, 'the payout is unchanged');
    assert.deepEqual(await audited(p.id), []);
    const notHeld = await operator.post(`/ops/payouts/${p.id}/release`, { reason: 'nothing held' });
    assert.equal(notHeld.statusCode, 409);
    assert.match(text(notHeld.body), /is not held/);
    paystack.settleTransfer(waiting.provider_reference!, 'success');
    await paystack.webhooksIdle();
    await eventually(async () => ((await row(p.id)).status === 'paid' ? true : undefined));
    const paid = await operator.post(`/ops/payouts/${p.id}/hold`, { reason: 'After payment' });
    assert.equal(paid.statusCode, 409);
    assert.match(text(paid.body), /is paid; only a payout not yet sent can be held/);
    assert.equal((await row(p.id)).held_at, null);
    await invariantsHold();
  });

  it('an unknown payout is a 404; a teller cannot hold or release', async () => {
    const unknown = await operator.post(`/ops/payouts/po_${randomUUID()}/hold`, { reason: 'x' });
    assert.equal(unknown.statusCode, 404);
    const p = await payout(4_000);
    const tried = await teller.post(`/ops/payouts/${p.id}/hold`, { reason: 'teller tries' });
    assert.equal(tried.statusCode, 303);
    assert.equal(tried.headers.location, '/ops/teller');
    assert.equal((await row(p.id)).held_at, null);
    assert.deepEqual(await audited(p.id), []);
    // Leave nothing for the worker of the next test to send: the merchant cancels it.
    assert.equal((await api('POST', `/api/v1/payouts/${p.id}/cancel`, {})).status, 200);
  });

  it('a hold racing the worker either holds (no transfer ever) or is refused (the transfer was sent), never both', {
    skip: storageKind !== 'postgres' && 'PGlite runs one transaction at a time',
  }, async (context) => {
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const p = await payout(3_000 + i);
      assert.equal((await drive(p.id, (r) => r.processing_step === 'transfer')).processing_step, 'transfer');
      await makeDue(p.id);
      await operator.get('/ops/payouts'); // the CSRF token, read before the race
      const [hold] = await Promise.all([
        operator.post(`/ops/payouts/${p.id}/hold`, { reason: `race ${i}` }),
        step(p.id),
      ]);
      // Let the worker finish any pass it started, then run more: a held payout must still send nothing.
      for (let k = 0; k < 2; k++) {
        await makeDue(p.id);
        await step(p.id);
      }
      const r = await row(p.id);
      if (hold.statusCode === 200) {
        assert.ok(r.held_at, 'held');
        assert.equal(r.processing_step, 'transfer');
        assert.equal(transfersOf(r), 0, 'a held payout is never sent');
        assert.deepEqual(
          (await audited(p.id)).map((a) => a.action),
          ['payout.hold'],
        );
        outcomes.push('held');
      } else {
        assert.equal(hold.statusCode, 409, hold.body.slice(0, 300));
        assert.match(text(hold.body), /already sent to the provider/);
        assert.equal(r.held_at, null);
        assert.equal(r.processing_step, 'awaiting_result');
        assert.equal(transfersOf(r), 1, 'refused because the transfer was sent');
        assert.deepEqual(await audited(p.id), []);
        outcomes.push('refused');
        paystack.settleTransfer(r.provider_reference!, 'success');
        await paystack.webhooksIdle();
        await eventually(async () => ((await row(p.id)).status === 'paid' ? true : undefined));
      }
    }
    assert.equal(outcomes.length, 6, outcomes.join(', '));
    context.diagnostic(`race outcomes: ${outcomes.join(', ')}`);
    await invariantsHold();
  });
});
