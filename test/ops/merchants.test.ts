// Issue 30 finding 6: with 207 merchants the operators' merchant list stopped at 200 rows with no search, so
// the one Live merchant holding money could not be reached. Over HTTP on both storages: the list finds a
// merchant by a fragment of its name, its email or its id; its filters (Live payouts, paused, holds a Live
// balance) narrow it; its pages reach every merchant once; its CSV holds every matching row; the merchant
// page shows balances per environment, recent sessions, users, API key prefixes and endpoints, never a key.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { checkInvariants, creditPayment } from '../../src/ledger/service.ts';
import { createOperator } from '../../src/ops/service.ts';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { fund } from '../support/payouts-fixtures.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'ops-merchants-password-1';
const MERCHANTS = 207;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** The merchant ids a list page links to, in its order. */
const idsOn = (body: string): string[] =>
  [...body.matchAll(new RegExp(`<a href="/ops/merchants/(${UUID})">`, 'g'))].map((m) => m[1]!);
/** The "Next page" link of a list page, entities decoded. */
const nextOf = (body: string): string | null =>
  /<a class="button secondary" href="([^"]+)">Next page<\/a>/.exec(body)?.[1]?.replace(/&amp;/g, '&') ?? null;

describe(`ops merchants list and page (${storageKind})`, () => {
  let t: TestContext;
  let ops: ConsoleClient;
  // Every merchant of this run carries the token in its name and email: the database may hold others (PostgreSQL keeps them between runs).
  const token = `r${randomUUID().slice(0, 8)}`;
  const made: CreatedMerchant[] = [];
  const nameOf = (i: number) => `Shop ${token}-${i}-end`;
  const emailOf = (i: number) => `owner-${i}-${token}@example.com`;
  let funded: CreatedMerchant;
  let unapplied: CreatedMerchant;
  const liveOn: string[] = [];
  const paused: string[] = [];

  before(async () => {
    t = await startTestApp();
    for (let i = 0; i < MERCHANTS; i++) {
      made.push(
        await createMerchant(
          t.db,
          { name: nameOf(i), email: emailOf(i), webhookUrl: i === 150 ? 'https://example.com/hooks/sika' : null },
          t.webhookTargets,
        ),
      );
    }
    // The one Live merchant holding money (balance applied), one whose Live credit still waits in the ledger, Live payouts on for three, two paused.
    funded = made[150]!;
    unapplied = made[3]!;
    await setPayoutAccess(t.db, funded.merchant_id, 'live', { payout_access: true });
    await fund(t, funded.merchant_id, 'live', 123_456);
    await fund(t, funded.merchant_id, 'test', 5_000);
    await t.db.transaction((tx) =>
      creditPayment(tx, {
        merchantId: unapplied.merchant_id,
        environment: 'live',
        paymentId: `unapplied-${randomUUID()}`,
        chargedMinor: 2_500,
        payerFeeMinor: 0,
        merchantFeeMinor: 0,
      }),
    );
    for (const m of [funded, made[10]!, made[200]!]) {
      await setPayoutAccess(t.db, m.merchant_id, 'live', { payout_access: true });
      liveOn.push(m.merchant_id);
    }
    for (const [m, environment] of [
      [made[20]!, 'test'],
      [made[10]!, 'live'],
    ] as const) {
      await setPayoutAccess(t.db, m.merchant_id, environment, { paused: true });
      paused.push(m.merchant_id);
    }
    const operatorEmail = `operator-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: operatorEmail, password: PASSWORD });
    ops = await new ConsoleClient(t, '/ops').signedIn(operatorEmail, PASSWORD);
  });
  after(() => t.close());

  /** Every merchant id the list shows for these parameters, following "Next page" to the end; and the pages seen. */
  async function allPages(params: Record<string, string>): Promise<{ ids: string[]; pages: number }> {
    let url: string | null = `/ops?${new URLSearchParams(params)}`;
    const ids: string[] = [];
    let pages = 0;
    while (url) {
      const res = await ops.get(url);
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      ids.push(...idsOn(res.body));
      pages++;
      assert.ok(pages <= 10, 'the pages end');
      url = nextOf(res.body);
    }
    return { ids, pages };
  }

  it('pages through every one of the 207 merchants, 50 a page, newest first, each once', async () => {
    const first = await ops.get(`/ops?q=${token}`);
    assert.equal(idsOn(first.body).length, 50);
    assert.ok(nextOf(first.body), 'a next page');
    assert.doesNotMatch(first.body, /First page/);
    const { ids, pages } = await allPages({ q: token });
    assert.equal(pages, 5);
    assert.equal(ids.length, MERCHANTS);
    assert.equal(new Set(ids).size, MERCHANTS, 'no merchant twice');
    assert.deepEqual(new Set(ids), new Set(made.map((m) => m.merchant_id)));
    assert.equal(ids[0], made.at(-1)!.merchant_id, 'newest first');
    const second = await ops.get(nextOf(first.body)!);
    assert.match(second.body, /First page/);
    assert.match(nextOf(second.body)!, new RegExp(`q=${token}`), 'the next link keeps the search');
    // A cursor that is not ours is the first page, not an error.
    const forged = await ops.get(
      `/ops?q=${token}&after=${Buffer.from('2026-01-01T00:00:00Z|not-a-uuid').toString('base64url')}`,
    );
    assert.equal(forged.statusCode, 200);
    assert.deepEqual(idsOn(forged.body), idsOn(first.body));
  });

  it('finds one merchant by a fragment of its name, by its email (or a fragment), and by its id in any case', async () => {
    const target = made[137]!;
    for (const q of [
      `${token}-137-end`,
      `${token.toUpperCase()}-137-END`,
      emailOf(137),
      `owner-137-${token}`,
      target.merchant_id,
      target.merchant_id.toUpperCase(),
    ]) {
      const res = await ops.get(`/ops?q=${encodeURIComponent(q)}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(idsOn(res.body), [target.merchant_id], `search ${q}`);
    }
    // Wildcards are taken literally: "%" matches no merchant of this run.
    assert.deepEqual(idsOn((await ops.get(`/ops?q=${encodeURIComponent(`${token}%`)}`)).body), []);
    assert.deepEqual(idsOn((await ops.get(`/ops?q=${encodeURIComponent(`${token}-13_-end`)}`)).body), []);
    const none = await ops.get(`/ops?q=${token}-nobody`);
    assert.match(none.body, /No merchant matches/);
  });

  it('filters by Live payouts, paused payouts and a Live balance (unapplied credits included), alone and together', async () => {
    const sorted = (ids: string[]) => [...ids].sort();
    assert.deepEqual(sorted((await allPages({ q: token, live_payouts: 'on' })).ids), sorted(liveOn));
    assert.equal((await allPages({ q: token, live_payouts: 'off' })).ids.length, MERCHANTS - liveOn.length);
    assert.deepEqual(sorted((await allPages({ q: token, paused: 'yes' })).ids), sorted(paused));
    assert.equal((await allPages({ q: token, paused: 'no' })).ids.length, MERCHANTS - paused.length);
    assert.deepEqual(
      sorted((await allPages({ q: token, live_balance: 'yes' })).ids),
      sorted([funded.merchant_id, unapplied.merchant_id]),
    );
    assert.equal((await allPages({ q: token, live_balance: 'no' })).ids.length, MERCHANTS - 2);
    // The Live merchant holding money, in one search: Live payouts on and a Live balance.
    const both = await ops.get(`/ops?q=${token}&live_payouts=on&live_balance=yes`);
    assert.deepEqual(idsOn(both.body), [funded.merchant_id]);
    assert.match(both.body, /GHS 1,234\.56/);
    assert.match(both.body, /<option value="on" selected>/, 'the filter shows what is chosen');
    assert.deepEqual(idsOn((await ops.get(`/ops?q=${token}&paused=yes&live_payouts=on`)).body), [
      made[10]!.merchant_id,
    ]);
    // A value outside a filter's set is refused with a sentence, not ignored.
    const bad = await ops.get(`/ops?live_payouts=maybe`);
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /Live payouts must be on or off \(or empty for any\)\./);
  });

  it('exports every matching merchant as CSV, with its header, whatever the page size', async () => {
    const res = await ops.get(`/ops?q=${token}&format=csv`);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    assert.match(String(res.headers['content-disposition']), /attachment; filename="sika-merchants\.csv"/);
    const lines = res.body
      .replace(/^\uFEFF/, '')
      .split('\r\n')
      .filter(Boolean);
    assert.equal(lines[0], 'merchant_id,name,email,live_payouts,paused,live_balance_ghs,created_at');
    assert.equal(lines.length, MERCHANTS + 1);
    assert.deepEqual(
      new Set(lines.slice(1).map((line) => line.split(',')[0])),
      new Set(made.map((m) => m.merchant_id)),
    );
    const row = lines.find((line) => line.startsWith(funded.merchant_id))!;
    assert.equal(row.split(',').slice(1, 6).join(','), `${nameOf(150)},${emailOf(150)},on,no,1234.56`);
    const filtered = await ops.get(`/ops?q=${token}&live_balance=yes&format=csv`);
    assert.equal(filtered.body.split('\r\n').filter(Boolean).length, 3, 'the CSV follows the filters');
  });

  it("shows a merchant's balances per environment, recent sessions, users, key prefixes and endpoints, never a key", async () => {
    const session = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      headers: { authorization: `Bearer ${funded.test_api_key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ amount_minor: 4_200, invoice_ref: `INV-${token}` }),
    });
    assert.equal(session.statusCode, 201, session.body);
    const res = await ops.get(`/ops/merchants/${funded.merchant_id}`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    const body = res.body;
    assert.match(body, new RegExp(`<h1>${nameOf(150)}</h1>`));
    // Balances: Live GHS 1,234.56 available, Test GHS 50.00.
    assert.match(body, /Live<\/span><\/p><div class="label">Available<\/div><div class="value">GHS 1,234\.56</);
    assert.match(body, /Test<\/span><\/p><div class="label">Available<\/div><div class="value">GHS 50\.00</);
    // The session, with its environment.
    assert.match(
      body,
      new RegExp(
        `Test</span></td><td class="mono wrap">${session.json().id}</td><td class="wrap">INV-${token}</td><td class="nowrap">GHS 42\\.00`,
      ),
    );
    // Users: the owner, role and second factor.
    assert.match(
      body,
      new RegExp(`<td class="wrap">${emailOf(150)}</td><td>owner</td><td><span class="badge [a-z]+">off</span>`),
    );
    // Key prefixes with their environment; the keys themselves nowhere.
    for (const [key, environment] of [
      [funded.test_api_key, 'Test'],
      [funded.live_api_key, 'Live'],
    ] as const) {
      const prefix = key.slice(0, 16);
      assert.match(
        body,
        new RegExp(`${environment}</span></td><td class="mono">${prefix}…</td>`),
        `${environment} key prefix`,
      );
      assert.ok(!body.includes(key), `the ${environment} key is not on the page`);
      assert.ok(!body.includes(key.slice(0, 20)), `nothing of the ${environment} key beyond its prefix`);
    }
    assert.match(
      body,
      /Live<\/span><\/td><td class="wrap">https:\/\/example\.com\/hooks\/sika<\/td><td><span class="badge ok">enabled/,
    );
    assert.ok(!body.includes(funded.live_webhook_secret!) && !body.includes('whsec_'), 'no webhook secret');
    // The payout settings forms, both environments.
    assert.match(body, /Save test payout settings/);
    assert.match(body, /Save live payout settings/);
    assert.deepEqual(await checkInvariants(t.db, funded.merchant_id), []);
    assert.deepEqual(await checkInvariants(t.db, unapplied.merchant_id), []);
  });

  it('answers an unknown merchant with a 404 page and a malformed id with a sentence naming it', async () => {
    const unknown = await ops.get(`/ops/merchants/${randomUUID()}`);
    assert.equal(unknown.statusCode, 404);
    assert.match(unknown.body, /Merchant not found/);
    const malformed = await ops.get('/ops/merchants/not-an-id');
    assert.equal(malformed.statusCode, 400);
    assert.match(malformed.body, /The merchant id is not valid\./);
    assert.doesNotMatch(malformed.body, /must match|format &quot;|format "/);
  });
});
