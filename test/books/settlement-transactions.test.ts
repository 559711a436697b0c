// Issue 34, "every settlement explains itself", over HTTP: a payout says whether it is manual or a settlement (and
// its period), the balance answers pending and reserved money, each balance transaction says when its money is
// available (available_on, status) and which settlement paid it out (payout_id), and
// GET /api/v1/balance/transactions?payout_id= lists exactly what a settlement paid out (another merchant's or
// environment's payout: 404; a manual payout: none). The payout's dashboard page shows the type, and for a
// settlement its period and transactions, with a CSV file of all of them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { csvRows } from '../support/books.ts';
import { createSession, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope } from '../support/http.ts';
import {
  api,
  bankRecipient,
  createPayout,
  eventsFor,
  verifyRecipientsNow,
  WEBHOOK_URL,
} from '../support/payouts-fixtures.ts';

const PASSWORD = 'settlement-transactions-password-1';

interface Txn {
  id: string;
  type: string;
  amount_minor: number;
  fee_minor: number;
  net_minor: number;
  source: { type: string; id: string };
  available_on: string;
  status: string;
  payout_id: string | null;
  created_at: string;
}

describe(`settlements explain themselves (${storageKind})`, () => {
  let t: TestContext;
  let m: CreatedMerchant;
  let browser: ConsoleClient;
  before(async () => {
    // The Live clearing times (the helper's default is at once): a Test merchant rehearses them with Test clearing on.
    t = await startTestApp({ CLEARING_DAYS: 'momo=1,card=2,bank_transfer=0,cash=0' });
    const email = `settle-${randomUUID().slice(0, 8)}@example.com`;
    m = await createMerchant(
      t.db,
      {
        name: 'Settlement Explained Ltd',
        email,
        password: PASSWORD,
        webhookUrl: WEBHOOK_URL,
      },
      t.webhookTargets,
    );
    browser = await new ConsoleClient(t, '/dashboard').signedIn(email, PASSWORD);
  });
  after(async () => t?.close());

  const transactions = (key: string, query: Record<string, string> = {}) =>
    t.app.inject({
      method: 'GET',
      url: '/api/v1/balance/transactions',
      query,
      headers: { authorization: `Bearer ${key}` },
    });

  /** A card payment of `amountMinor` through checkout, paid in Test; its attempt's reference. */
  async function cardPayment(merchant: CreatedMerchant, amountMinor: number): Promise<string> {
    const session = await createSession(t, merchant, { amount_minor: amountMinor });
    const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', amountMinor) });
    await simulate(t, merchant, attempt.attempt_reference, 'paid');
    return attempt.attempt_reference;
  }

  /** A Test payout paid at once to a verified bank recipient. */
  async function manualPayout(merchant: CreatedMerchant, amountMinor: number) {
    const recipient = await bankRecipient(t, merchant.test_api_key);
    await verifyRecipientsNow(t, recipient.id);
    return createPayout(t, merchant.test_api_key, recipient.id, amountMinor);
  }

  it('a manual payout says so in the API, its events, the CSV export and the dashboard list and page', async () => {
    await cardPayment(m, 50_000);
    const payout = await manualPayout(m, 10_000);
    assert.equal(payout.type, 'manual');
    assert.equal(payout.settlement, null);
    const got = await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${payout.id}`);
    assert.equal(got.statusCode, 200, got.body);
    assert.deepEqual([got.json().type, got.json().settlement], ['manual', null]);
    const listed = await api(t, m.test_api_key, 'GET', '/api/v1/payouts');
    assert.equal(listed.json().payouts.find((p: { id: string }) => p.id === payout.id).type, 'manual');

    const events = await eventsFor(t, payout.id);
    assert.ok(events.length >= 1);
    // Events keep SPEC 6.2's payout keys exactly: the type is read with GET /api/v1/payouts/{id}.
    for (const event of events) {
      const data = event.payload.data as { payout: Record<string, unknown> };
      assert.equal('type' in data.payout, false, event.type);
      assert.equal('settlement' in data.payout, false, event.type);
    }

    const day = new Date().toISOString().slice(0, 10);
    const csv = await t.app.inject({
      method: 'GET',
      url: '/api/v1/payouts',
      query: { from: day, to: day },
      headers: { authorization: `Bearer ${m.test_api_key}`, accept: 'text/csv' },
    });
    assert.equal(csv.statusCode, 200, csv.body);
    const row = csvRows(csv.body).find((r) => r.id === payout.id);
    assert.ok(row, 'the payout is in the file');
    assert.deepEqual([row.type, row.settlement_period_start, row.settlement_period_end], ['manual', '', '']);

    const list = await browser.get('/dashboard/payouts');
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /<th>Type<\/th>/);
    assert.match(list.body, /<td data-label="Type">Manual<\/td>/);
    const page = await browser.get(`/dashboard/payouts/${payout.id}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<div class="muted">Type<\/div>Manual/);
    assert.doesNotMatch(page.body, /aria-label="Settlement"/, 'a manual payout has no settlement section');
  });

  it('the balance answers pending_minor and reserved_minor beside available, held and eligible', async () => {
    const res = await api(t, m.test_api_key, 'GET', '/api/v1/payouts/balance');
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    for (const field of ['available_minor', 'held_minor', 'eligible_minor', 'pending_minor', 'reserved_minor']) {
      assert.equal(typeof body[field], 'number', field);
    }
    assert.equal(body.eligible_minor, body.available_minor + body.held_minor);
    // Test clears at once and this merchant has no reserve.
    assert.deepEqual([body.pending_minor, body.reserved_minor], [0, 0]);
  });

  it("a Test payment's balance transaction is available when made, paid out by no settlement yet", async () => {
    const other = await t.merchant({ webhookUrl: WEBHOOK_URL });
    const attempt = await cardPayment(other, 20_000);
    const res = await transactions(other.test_api_key);
    assert.equal(res.statusCode, 200, res.body);
    const rows = res.json().data as Txn[];
    assert.equal(rows.length, 1);
    const [row] = rows as [Txn];
    assert.equal(row.source.id, attempt);
    assert.equal(row.type, 'payment');
    assert.equal(row.available_on, row.created_at);
    assert.equal(row.status, 'available');
    assert.equal(row.payout_id, null);

    const day = row.created_at.slice(0, 10);
    const csv = await t.app.inject({
      method: 'GET',
      url: '/api/v1/balance/transactions',
      query: { from: day, to: day },
      headers: { authorization: `Bearer ${other.test_api_key}`, accept: 'text/csv' },
    });
    assert.equal(csv.statusCode, 200, csv.body);
    const [line] = csvRows(csv.body);
    assert.deepEqual([line?.available_on, line?.status, line?.payout_id], [row.created_at, 'available', '']);
  });

  it('with Test clearing on, a payment is pending until its available_on, then available once the run clears it', async () => {
    const email = `clearing-${randomUUID().slice(0, 8)}@example.com`;
    const merchant = await createMerchant(
      t.db,
      { name: 'Clearing Ltd', email, password: PASSWORD, webhookUrl: WEBHOOK_URL },
      t.webhookTargets,
    );
    const owner = await new ConsoleClient(t, '/dashboard').signedIn(email, PASSWORD);
    await owner.get('/dashboard/settlements');
    const toggled = await owner.post('/dashboard/settlements/test-clearing', { enabled: 'on' });
    assert.equal(toggled.statusCode, 200, toggled.body.slice(0, 300));
    await cardPayment(merchant, 20_000);

    const [pending] = (await transactions(merchant.test_api_key)).json().data as Txn[];
    assert.ok(pending);
    assert.equal(pending.status, 'pending');
    assert.ok(Date.parse(pending.available_on) > Date.parse(pending.created_at), 'card money clears days later');
    const held = (await api(t, merchant.test_api_key, 'GET', '/api/v1/payouts/balance')).json();
    assert.deepEqual([held.pending_minor, held.available_minor], [pending.net_minor, 0]);

    const asOf = new Date(Date.parse(pending.available_on) + 86_400_000).toISOString();
    const run = await api(t, merchant.test_api_key, 'POST', '/api/v1/test/settlements/run', { as_of: asOf });
    assert.ok(run.statusCode === 200 || run.statusCode === 201, run.body);
    const [cleared] = (await transactions(merchant.test_api_key)).json().data as Txn[];
    assert.deepEqual(
      [cleared?.id, cleared?.status, cleared?.available_on],
      [pending.id, 'available', pending.available_on],
      'cleared: available, on the day it was due; no new row',
    );
    const after = (await api(t, merchant.test_api_key, 'GET', '/api/v1/payouts/balance')).json();
    assert.deepEqual([after.pending_minor, after.available_minor], [0, pending.net_minor]);
  });

  it("payout_id: another merchant's or the other environment's payout is 404, a manual payout lists nothing", async () => {
    const other = await t.merchant({ webhookUrl: WEBHOOK_URL });
    await cardPayment(other, 30_000);
    const theirs = await manualPayout(other, 5_000);
    assertErrorEnvelope(await transactions(m.test_api_key, { payout_id: theirs.id }), 404, 'NOT_FOUND');
    assertErrorEnvelope(await transactions(other.live_api_key, { payout_id: theirs.id }), 404, 'NOT_FOUND');
    assertErrorEnvelope(await transactions(other.test_api_key, { payout_id: 'po_nosuchpayout' }), 404, 'NOT_FOUND');
    // The CSV asks the same question first.
    const foreignCsv = await t.app.inject({
      method: 'GET',
      url: '/api/v1/balance/transactions',
      query: { payout_id: theirs.id },
      headers: { authorization: `Bearer ${m.test_api_key}`, accept: 'text/csv' },
    });
    assert.equal(foreignCsv.statusCode, 404, foreignCsv.body);

    const own = await transactions(other.test_api_key, { payout_id: theirs.id });
    assert.equal(own.statusCode, 200, own.body);
    assert.deepEqual(own.json(), { object: 'list', data: [], has_more: false });
    const csv = await t.app.inject({
      method: 'GET',
      url: '/api/v1/balance/transactions',
      query: { payout_id: theirs.id },
      headers: { authorization: `Bearer ${other.test_api_key}`, accept: 'text/csv' },
    });
    assert.equal(csv.statusCode, 200, csv.body);
    assert.deepEqual(csvRows(csv.body), [], 'the header line only');
    assert.match(csv.headers['content-disposition'] as string, new RegExp(`${theirs.id}\\.csv`));

    // Bad input is a 400, never a 500.
    assertErrorEnvelope(await transactions(other.test_api_key, { payout_id: '' }), 400, 'INVALID_ARGUMENT');
    assertErrorEnvelope(
      await transactions(other.test_api_key, { payout_id: 'x'.repeat(500) }),
      400,
      'INVALID_ARGUMENT',
    );
  });

  it("the dashboard's CSV of a manual payout is its header line; another merchant's payout is not found", async () => {
    const payout = await manualPayout(m, 1_000);
    const csv = await browser.get(`/dashboard/payouts/${payout.id}/transactions.csv`);
    assert.equal(csv.statusCode, 200, csv.body.slice(0, 300));
    assert.equal(csv.headers['content-type'], 'text/csv; charset=utf-8');
    assert.deepEqual(csvRows(csv.body), []);
    assert.match(csv.body, /available_on,status,payout_id/);

    const other = await t.merchant({ webhookUrl: WEBHOOK_URL });
    await cardPayment(other, 30_000);
    const theirs = await manualPayout(other, 5_000);
    const foreign = await browser.get(`/dashboard/payouts/${theirs.id}/transactions.csv`);
    assert.equal(foreign.statusCode, 404);
    assert.doesNotMatch(foreign.body, new RegExp(theirs.id.slice(3)));
  });

  // A settlement made through the real path (the schedule API, then the Test control's run), then its
  // transactions by payout_id, their sum, the page and its CSV.
  it('a settlement lists exactly what it paid out, its nets sum to its amount, and its page shows them with the CSV', async () => {
    const email = `settled-${randomUUID().slice(0, 8)}@example.com`;
    const merchant = await createMerchant(
      t.db,
      {
        name: 'Settled Ltd',
        email,
        password: PASSWORD,
        webhookUrl: WEBHOOK_URL,
      },
      t.webhookTargets,
    );
    const owner = await new ConsoleClient(t, '/dashboard').signedIn(email, PASSWORD);
    const payments = [await cardPayment(merchant, 40_000), await cardPayment(merchant, 12_345)];
    const recipient = await bankRecipient(t, merchant.test_api_key);
    await verifyRecipientsNow(t, recipient.id);
    const schedule = await api(t, merchant.test_api_key, 'POST', '/api/v1/settlements/schedule', {
      interval: 'daily',
      time: '10:00',
      minimum_minor: 0,
      recipient_id: recipient.id,
    });
    assert.equal(schedule.statusCode, 200, schedule.body);
    const asOf = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const run = await api(t, merchant.test_api_key, 'POST', '/api/v1/test/settlements/run', { as_of: asOf });
    assert.ok(run.statusCode === 200 || run.statusCode === 201, run.body);
    const payouts = await api(t, merchant.test_api_key, 'GET', '/api/v1/payouts');
    const settlements = (payouts.json().payouts as Record<string, unknown>[]).filter((p) => p.type === 'settlement');
    assert.equal(settlements.length, 1, payouts.body);
    const settlement = settlements[0] as { id: string; amount_minor: number; settlement: { period_end: string } };
    assert.ok(settlement.settlement.period_end);

    const paid: Txn[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const res = await transactions(merchant.test_api_key, {
        payout_id: settlement.id,
        limit: '1',
        ...(startingAfter ? { starting_after: startingAfter } : {}),
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { data: Txn[]; has_more: boolean };
      paid.push(...body.data);
      if (!body.has_more) break;
      startingAfter = body.data.at(-1)!.id;
    }
    assert.deepEqual(
      paid.map((row) => row.source.id),
      payments,
      'the two payments, oldest first, not the settlement itself',
    );
    assert.ok(paid.every((row) => row.payout_id === settlement.id));
    assert.equal(
      paid.reduce((sum, row) => sum + row.net_minor, 0),
      settlement.amount_minor,
    );
    const all = await transactions(merchant.test_api_key);
    const own = (all.json().data as Txn[]).find((row) => row.source.id === settlement.id);
    assert.ok(own, "the settlement's own movement is a balance transaction");
    assert.equal(own.payout_id, null, 'paid out by no settlement');

    const page = await owner.get(`/dashboard/payouts/${settlement.id}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /aria-label="Settlement"/);
    assert.match(page.body, /<td>Settlement<\/td>|Type<\/div>Settlement/);
    for (const id of payments) assert.match(page.body, new RegExp(id));
    assert.match(page.body, new RegExp(`href="/dashboard/payouts/${settlement.id}/transactions.csv"`));
    const csv = await owner.get(`/dashboard/payouts/${settlement.id}/transactions.csv`);
    assert.equal(csv.statusCode, 200);
    const lines = csvRows(csv.body);
    assert.deepEqual(
      lines.map((line) => line.source_id),
      payments,
    );
    assert.equal(
      lines.reduce((sum, line) => sum + Number(line.net_minor), 0),
      settlement.amount_minor,
    );
  });
});
