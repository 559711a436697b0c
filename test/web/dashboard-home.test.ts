// The dashboard home (issue 36, item 1) over real HTTP, on embedded storage and on PostgreSQL (DATABASE_URL):
// gross, fees, refunds and net per Africa/Accra day (and per hour for today) equal what was paid and refunded,
// payments made on other days (moved there by SQL) land on those days, success rates by method and network
// and the top failure reasons count the range's ended attempts, another merchant's payments never count, the
// range parameter picks the days and a bad one is the console's 400 page, and the next settlement says
// "Manual" until a schedule is set.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { accraDay } from '../../src/lib/accra-calendar.ts';
import { createSession, feeOf, momoBody, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import { bankRecipient, verifyRecipientsNow } from '../support/payouts-fixtures.ts';

const PASSWORD = 'dashboard-home-password';
const DAY_MS = 86_400_000;

/** The texts of a table row's cells (th and td), tags stripped. */
function rowCells(body: string, tableId: string, attribute: string, value: string): string[] | null {
  const table = new RegExp(`<table id="${tableId}"[^>]*>([\\s\\S]*?)</table>`).exec(body)?.[1];
  assert.ok(table, `table #${tableId} is on the page`);
  const row = new RegExp(`<tr ${attribute}="${value}">([\\s\\S]*?)</tr>`).exec(table)?.[1];
  if (!row) return null;
  return [...row.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());
}
const ghs = (minor: number) =>
  `GHS ${Math.floor(minor / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${String(minor % 100).padStart(2, '0')}`;
const textOf = (body: string, id: string) => new RegExp(`id="${id}">([^<]*)<`).exec(body)?.[1];

describe(`dashboard: home (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  async function owner() {
    const email = `owner-${randomUUID().slice(0, 8)}@example.com`;
    const m = await createMerchant(
      t.db,
      { name: `Home Shop ${randomUUID().slice(0, 4)}`, email, password: PASSWORD, webhookUrl: null },
      t.webhookTargets,
    );
    return { m, browser: await new ConsoleClient(t, '/dashboard').signedIn(email, PASSWORD) };
  }

  /** A Test session paid through the simulator (momo on a network, or card); returns its id. */
  async function paid(m: CreatedMerchant, base: number, how: 'mtn' | 'telecel' | 'card') {
    const session = await createSession(t, m, { amount_minor: base });
    const body =
      how === 'card'
        ? { rail: 'card', amount_minor: totalOf('card', base) }
        : how === 'telecel'
          ? momoBody(base, '0201234567', 'telecel')
          : momoBody(base);
    const attempt = await startAttempt(t, session.id, body);
    await simulate(t, m, attempt.attempt_reference, 'paid');
    return session.id;
  }

  /** An MTN attempt that failed for this reason, on a session of its own. */
  async function failed(m: CreatedMerchant, base: number, reason: string | null) {
    const session = await createSession(t, m, { amount_minor: base });
    const attempt = await startAttempt(t, session.id, momoBody(base));
    await simulate(t, m, attempt.attempt_reference, 'failed');
    await t.db.query('UPDATE payment_attempts SET failure_reason = $2 WHERE id = $1', [
      attempt.attempt_reference,
      reason,
    ]);
    return session.id;
  }

  /** Moves a session, its attempts and its refunds `days` back, as if they had happened then. */
  async function daysAgo(sessionId: string, days: number) {
    const shift = `make_interval(days => ${days})`;
    await t.db.query(
      `UPDATE checkout_sessions SET created_at = created_at - ${shift}, finalized_at = finalized_at - ${shift} WHERE id = $1`,
      [sessionId],
    );
    await t.db.query(
      `UPDATE payment_attempts SET created_at = created_at - ${shift}, finalized_at = finalized_at - ${shift} WHERE session_id = $1`,
      [sessionId],
    );
    await t.db.query(`UPDATE refunds SET created_at = created_at - ${shift} WHERE session_id = $1`, [sessionId]);
  }

  async function refund(m: CreatedMerchant, sessionId: string, amount: number) {
    const res = await call(t, 'POST', '/api/v1/refunds', {
      key: m.test_api_key,
      body: { session_id: sessionId, amount_minor: amount },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().status, 'succeeded');
  }

  it("shows gross, fees, refunds and net per Accra day equal to what was paid and refunded, and only this merchant's", async () => {
    const { m, browser } = await owner();
    const other = await owner();
    const twoDaysAgo = [await paid(m, 10_000, 'mtn'), await paid(m, 20_000, 'card')];
    for (const id of twoDaysAgo) await daysAgo(id, 2);
    const today = await paid(m, 5_000, 'telecel');
    await refund(m, today, 2_000);
    const old = await paid(m, 7_000, 'card');
    await daysAgo(old, 20); // in 30 days, not in 7
    await paid(other.m, 99_900, 'mtn'); // another merchant's: never counted here
    await refund(other.m, await paid(other.m, 40_000, 'card'), 40_000);

    const res = await browser.get('/dashboard?range=7d');
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    const body = res.body;
    assert.match(body, /<a href="\/dashboard\?range=7d" aria-current="page">7 days<\/a>/);
    assert.match(
      body,
      /<svg class="wide" viewBox="[^"]+" role="img" aria-label="Gross and net per day over 7 days: gross /,
    );

    const gross2 = totalOf('momo', 10_000) + 20_000;
    const fees2 = feeOf('momo', 10_000) + feeOf('card', 20_000);
    const dayKey = accraDay(new Date(Date.now() - 2 * DAY_MS));
    const day2 = rowCells(body, 'revenue-table', 'data-bucket', dayKey);
    assert.ok(day2, `a row for ${dayKey}`);
    assert.deepEqual(day2.slice(1), ['2', ghs(gross2), ghs(fees2), ghs(0), ghs(gross2 - fees2)]);

    const grossToday = totalOf('momo', 5_000);
    const feesToday = feeOf('momo', 5_000);
    const dayToday = rowCells(body, 'revenue-table', 'data-bucket', accraDay(new Date()));
    assert.deepEqual(dayToday?.slice(1), [
      '1',
      ghs(grossToday),
      ghs(feesToday),
      ghs(2_000),
      ghs(grossToday - feesToday - 2_000),
    ]);
    // Days without payments are left out of the table; the chart still draws them.
    assert.equal([...body.matchAll(/<tr data-bucket=/g)].length, 2);
    assert.equal(textOf(body, 'total-gross'), ghs(gross2 + grossToday));
    assert.equal(textOf(body, 'total-refunds'), ghs(2_000));
    assert.equal(textOf(body, 'total-net'), ghs(gross2 + grossToday - fees2 - feesToday - 2_000));

    // 30 days (the default) also has the payment of 20 days ago.
    const month = (await browser.get('/dashboard')).body;
    assert.match(month, /<a href="\/dashboard\?range=30d" aria-current="page">30 days<\/a>/);
    const old20 = rowCells(month, 'revenue-table', 'data-bucket', accraDay(new Date(Date.now() - 20 * DAY_MS)));
    assert.deepEqual(old20?.slice(1, 3), ['1', ghs(7_000)]);
    assert.equal(textOf(month, 'total-gross'), ghs(gross2 + grossToday + 7_000));

    // Today per hour: the hour of today's payment, nothing from other days.
    const hours = (await browser.get('/dashboard?range=today')).body;
    const hour = new Intl.DateTimeFormat('en-GB', { timeZone: 'Africa/Accra', hour: '2-digit', hourCycle: 'h23' })
      .format(new Date())
      .padStart(2, '0');
    assert.deepEqual(rowCells(hours, 'revenue-table', 'data-bucket', hour)?.slice(1, 3), ['1', ghs(grossToday)]);
    assert.equal(textOf(hours, 'total-gross'), ghs(grossToday));

    // The other merchant sees its own figures only.
    const theirs = (await other.browser.get('/dashboard?range=7d')).body;
    assert.equal(textOf(theirs, 'total-gross'), ghs(totalOf('momo', 99_900) + 40_000));
    assert.equal(textOf(theirs, 'total-refunds'), ghs(40_000));
  });

  it('rates payments by method and network over the range and lists the top failure reasons', async () => {
    const { m, browser } = await owner();
    await paid(m, 10_000, 'mtn');
    await paid(m, 10_000, 'telecel');
    await paid(m, 10_000, 'card');
    await failed(m, 10_000, 'insufficient_funds');
    await failed(m, 10_000, 'insufficient_funds');
    await failed(m, 10_000, 'wrong_pin');
    await failed(m, 10_000, null);
    await daysAgo(await failed(m, 10_000, 'timed_out'), 10); // outside 7 days
    const pending = await createSession(t, m, { amount_minor: 10_000 });
    await startAttempt(t, pending.id, momoBody(10_000)); // not ended: not counted

    const body = (await browser.get('/dashboard?range=7d')).body;
    // momo: 2 paid of 6 ended (mtn 1 of 5, telecel 1 of 1); card 1 of 1.
    assert.deepEqual(rowCells(body, 'rates-by-method', 'data-key', 'momo'), ['Mobile Money', '33.3%', '2', '6']);
    assert.deepEqual(rowCells(body, 'rates-by-method', 'data-key', 'card'), ['Card', '100.0%', '1', '1']);
    assert.deepEqual(rowCells(body, 'rates-by-network', 'data-key', 'mtn'), ['MTN MoMo', '20.0%', '1', '5']);
    assert.deepEqual(rowCells(body, 'rates-by-network', 'data-key', 'telecel'), ['Telecel Cash', '100.0%', '1', '1']);
    assert.equal(rowCells(body, 'rates-by-network', 'data-key', 'card'), null, 'only MoMo networks');
    const reasons = [...body.matchAll(/<tr data-reason="([^"]+)">/g)].map((r) => r[1]);
    assert.deepEqual(reasons, ['insufficient_funds', 'none', 'wrong_pin']);
    assert.deepEqual(rowCells(body, 'failure-reasons', 'data-reason', 'insufficient_funds'), ['Not enough money', '2']);

    const month = (await browser.get('/dashboard?range=30d')).body;
    assert.deepEqual(rowCells(month, 'failure-reasons', 'data-reason', 'timed_out'), ['Not approved in time', '1']);
    assert.deepEqual(rowCells(month, 'rates-by-network', 'data-key', 'mtn'), ['MTN MoMo', '16.7%', '1', '6']);
  });

  it('a range outside today, 7d, 30d and 90d is the console 400 page; the next settlement is manual by default', async () => {
    const { browser } = await owner();
    for (const range of ['year', '14d', '']) {
      const bad = await browser.get(`/dashboard?range=${range}`);
      assert.equal(bad.statusCode, 400, `range=${range}`);
      assert.match(bad.headers['content-type'] as string, /text\/html/);
      assert.match(bad.body, /range/i);
    }
    const home = (await browser.get('/dashboard?range=90d')).body;
    assert.match(home, /<a href="\/dashboard\?range=90d" aria-current="page">90 days<\/a>/);
    assert.match(home, /No payments or refunds in this range\./);
    assert.match(home, /id="next-settlement">Manual: pay out from <a href="\/dashboard\/payouts">Payouts<\/a>/);
    assert.match(home, /aria-label="Test balance"/);
    assert.match(home, /aria-label="Live balance"/);
  });

  it('the next settlement of a daily schedule: its date and the available balance plus what clears by then', async () => {
    const { m, browser } = await owner();
    await paid(m, 10_000, 'card');
    const recipient = await bankRecipient(t, m.test_api_key);
    await verifyRecipientsNow(t, recipient.id);
    const saved = await call(t, 'POST', '/api/v1/settlements/schedule', {
      key: m.test_api_key,
      body: { interval: 'daily', time: '10:00', recipient_id: recipient.id },
      idempotencyKey: randomUUID(),
    });
    assert.equal(saved.statusCode, 200, saved.body);
    assert.ok(saved.json().next_run_at, saved.body);
    const home = (await browser.get('/dashboard')).body;
    const card = /<section class="card" aria-label="Next settlement">([\s\S]*?)<\/section>/.exec(home)?.[1] ?? '';
    // A Test card payment is available at once: the merchant's credit is the base less the card fee it bears.
    assert.equal(
      /Expected amount<\/div><div class="value nowrap">([^<]+)</.exec(card)?.[1],
      ghs(10_000 - feeOf('card', 10_000)),
    );
    assert.match(card, /Date<\/div><div class="value">\w{3}, \d{1,2} \w{3} \d{4}, 10:00</);
  });
});
