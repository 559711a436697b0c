// The dashboard's Settlements page (issue 34, item 2) over real HTTP, on embedded storage and on PostgreSQL
// (DATABASE_URL): it renders the schedule, saves it, refuses a change of settlement account without a second
// factor, without a code or with a wrong one, accepts it with the current code (and shows the 24-hour hold),
// shows the banner of a paused schedule (here and on the home page) and resumes it, toggles Test clearing,
// and lets a viewer read but not change.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setPassword } from '../../src/accounts/console-accounts.ts';
import { inviteUser } from '../../src/accounts/service.ts';
import { totpCode, totpStep, TOTP_PERIOD_S } from '../../src/accounts/totp.ts';
import { pauseSchedule } from '../../src/payouts/settlement-schedule-store.ts';
import { LivePayoutSimulator } from '../../src/rails/payouts.ts';
import {
  flashOf,
  freshTotpCode,
  HttpConsole,
  recoveryCodesIn,
  rememberSecondFactor,
  secretIn,
} from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { bankRecipient, momoRecipient, verifyRecipientsNow } from '../support/payouts-fixtures.ts';
import { payoutReadyMerchant, type Merchant } from '../reliability/api-support.ts';

const unescapeHtml = (text: string) =>
  text
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
const flash = (body: string) => unescapeHtml(flashOf(body));
const DAY_MS = 24 * 60 * 60 * 1000;

describe(`dashboard: settlements (${storageKind})`, () => {
  let t: TestContext;
  let base: string;
  before(async () => {
    t = await startTestApp({}, { payoutRail: new LivePayoutSimulator() });
    base = await t.listen();
  });
  after(() => t.close());

  /** An owner signed in, with two verified Test recipients (a bank account and a MoMo wallet). */
  async function ownerWithRecipients() {
    const m = await payoutReadyMerchant(t, { password: true });
    const bank = await bankRecipient(t, m.test_api_key, '1234567890');
    const momo = await momoRecipient(t, m.test_api_key, '0241234567');
    await verifyRecipientsNow(t, bank.id, momo.id);
    const browser = await new HttpConsole(base).signedIn(m.email, m.password);
    return { m, browser, bank: bank.id, momo: momo.id };
  }

  /** Enrols the signed-in user's second factor through the Account page, as a person would. */
  async function enrol(browser: HttpConsole, m: Merchant) {
    const page = await browser.get('/dashboard/account/2fa');
    const secret = secretIn(page.body);
    assert.ok(secret, page.body.slice(0, 300));
    const step = totpStep(Date.now());
    const done = await browser.post('/dashboard/account/2fa', {
      code: totpCode(secret, step * TOTP_PERIOD_S * 1000),
      current_password: m.password,
    });
    assert.equal(done.status, 200, done.body.slice(0, 300));
    rememberSecondFactor(m.email, secret, step, recoveryCodesIn(done.body));
    return secret;
  }

  const schedule = async (merchantId: string) =>
    (
      await t.db.query<{
        interval: string;
        time_of_day: string;
        minimum_minor: number;
        weekly_anchor: string;
        recipient_id: string | null;
        recipient_active_at: Date | null;
        paused_at: Date | null;
      }>('SELECT * FROM settlement_schedules WHERE merchant_id = $1 AND environment = $2', [merchantId, 'test'])
    )[0];

  it('renders the defaults, is in the navigation, and saves a schedule', async () => {
    const { m, browser, bank } = await ownerWithRecipients();
    const page = await browser.get('/dashboard/settlements');
    assert.equal(page.status, 200, page.body.slice(0, 300));
    assert.match(page.type, /^text\/html/);
    assert.match(page.body, /<a [^>]*href="\/dashboard\/settlements"/, 'in the navigation');
    assert.match(page.body, /<h1>Settlements \(test\)<\/h1>/);
    assert.match(page.body, /Settlements are manual/);
    assert.match(page.body, /<option value="manual" selected>/);
    assert.match(page.body, /name="time" value="10:00"/);
    assert.match(page.body, /name="minimum" value="0.00"/);
    assert.match(page.body, new RegExp(`<option value="${bank}">[^<]*ending 7890`), 'verified recipients to choose');
    assert.match(page.body, /Test payments clear at once unless you turn this on to rehearse Live clearing times/);
    assert.doesNotMatch(page.body, /name="code"/, 'no code asked before an account is set');

    const saved = await browser.post('/dashboard/settlements', {
      interval: 'weekly',
      weekly_anchor: 'thursday',
      monthly_anchor: '1',
      time: '15:45',
      minimum: '250.50',
      recipient_id: bank,
    });
    assert.equal(saved.status, 200, flash(saved.body));
    assert.equal(flash(saved.body), 'Settlement schedule saved.');
    const row = await schedule(m.merchant_id);
    assert.equal(row?.interval, 'weekly');
    assert.equal(row?.weekly_anchor, 'thursday');
    assert.equal(row?.time_of_day, '15:45');
    assert.equal(Number(row?.minimum_minor), 25_050);
    assert.equal(row?.recipient_id, bank);
    assert.match(saved.body, /every Thursday \(or the next business day\) at 15:45/);
    assert.match(saved.body, /GHS 250\.50/);
    assert.match(saved.body, /id="next-run">[A-Z][a-z]{2}, \d+ [A-Z][a-z]{2} \d{4}, 15:45 \(Africa\/Accra time\)/);
    const audit = await t.db.query<{ actor_email: string }>(
      "SELECT actor_email FROM audit_log WHERE merchant_id = $1 AND object_type = 'settlement_schedule'",
      [m.merchant_id],
    );
    assert.deepEqual(
      audit.map((a) => a.actor_email),
      [m.email],
    );

    const bad = await browser.post('/dashboard/settlements', { time: '24:00' });
    assert.equal(bad.status, 400);
    assert.match(flash(bad.body), /Time/);
    const badDay = await browser.post('/dashboard/settlements', { monthly_anchor: '29' });
    assert.equal(badDay.status, 400);
    assert.equal((await schedule(m.merchant_id))?.time_of_day, '15:45', 'unchanged');
  });

  it('a change of settlement account needs a second factor and the current code; with it the new account waits 24 hours', async () => {
    const { m, browser, bank, momo } = await ownerWithRecipients();
    const first = await browser.post('/dashboard/settlements', { interval: 'daily', recipient_id: bank });
    assert.equal(first.status, 200, flash(first.body));

    const noFactor = await browser.post('/dashboard/settlements', { recipient_id: momo });
    assert.equal(noFactor.status, 403);
    assert.match(flash(noFactor.body), /Set up a second factor on your Account page first/);
    assert.match(noFactor.body, /<a href="\/dashboard\/account">set up a second factor<\/a>/);

    const secret = await enrol(browser, m);
    const page = await browser.get('/dashboard/settlements');
    assert.match(page.body, /name="code"/, 'the code field once a second factor is set up');
    const noCode = await browser.post('/dashboard/settlements', { recipient_id: momo, code: '' });
    assert.equal(noCode.status, 403);
    assert.match(flash(noCode.body), /Enter the current code from your authenticator app/);
    const stale = totpCode(secret, (totpStep(Date.now()) - 20) * TOTP_PERIOD_S * 1000);
    const wrong = await browser.post('/dashboard/settlements', { recipient_id: momo, code: stale });
    assert.equal(wrong.status, 403);
    assert.equal((await schedule(m.merchant_id))?.recipient_id, bank, 'unchanged');

    // Other fields need no code.
    const minimum = await browser.post('/dashboard/settlements', { minimum: '10.00' });
    assert.equal(minimum.status, 200, flash(minimum.body));

    const startedAt = Date.now();
    const changed = await browser.post('/dashboard/settlements', {
      recipient_id: momo,
      code: await freshTotpCode(m.email),
    });
    assert.equal(changed.status, 200, flash(changed.body));
    assert.match(flash(changed.body), /Settlement account changed: it receives settlements 24 hours from now/);
    const row = await schedule(m.merchant_id);
    assert.equal(row?.recipient_id, momo);
    assert.ok(Math.abs(row!.recipient_active_at!.getTime() - (startedAt + DAY_MS)) < 60_000);
    assert.match(
      changed.body,
      /New settlement account MTN Mobile Money ending 4567 \(Ama Owusu\) receives settlements from [A-Z][a-z]{2}, \d+ [A-Z][a-z]{2} \d{4}, \d\d:\d\d \(Africa\/Accra time\)/,
    );
    const mails = await t.db.query<{ subject: string }>(
      "SELECT subject FROM mail_outbox WHERE merchant_id = $1 AND kind = 'settlement.account_changed' ORDER BY created_at",
      [m.merchant_id],
    );
    assert.deepEqual(
      mails.map((mail) => mail.subject),
      ['Your Test settlement account was set', 'Your Test settlement account was changed'],
    );
  });

  it("another merchant's recipient is not found and changes nothing", async () => {
    const { m, browser } = await ownerWithRecipients();
    const other = await ownerWithRecipients();
    const res = await browser.post('/dashboard/settlements', { interval: 'daily', recipient_id: other.bank });
    assert.equal(res.status, 404);
    assert.match(res.body, /Recipient not found/);
    assert.equal(await schedule(m.merchant_id), undefined);
  });

  it('a paused schedule shows a red banner here and on the home page; Resume resumes it', async () => {
    const { m, browser, bank } = await ownerWithRecipients();
    await browser.post('/dashboard/settlements', { interval: 'daily', recipient_id: bank });
    await t.db.transaction((tx) =>
      pauseSchedule(tx, m.merchant_id, 'test', 'The bank returned the transfer <closed>.', 'po_returned1'),
    );
    const home = await browser.get('/dashboard');
    assert.equal(home.status, 200);
    assert.match(home.body, /Automatic settlements are paused/);
    assert.match(home.body, /The bank returned the transfer &lt;closed&gt;\./, 'the reason, escaped');
    assert.match(home.body, /<a href="\/dashboard\/payouts\/po_returned1">/);
    const page = await browser.get('/dashboard/settlements');
    assert.match(page.body, /role="alert" aria-label="Settlements paused"/);
    assert.match(page.body, /<button type="submit">Resume<\/button>/);
    assert.match(page.body, /none scheduled/);
    const resumed = await browser.post('/dashboard/settlements', { resume: 'on' });
    assert.equal(resumed.status, 200, flash(resumed.body));
    assert.equal(flash(resumed.body), 'Settlements resumed.');
    assert.doesNotMatch(resumed.body, /Automatic settlements are paused/);
    assert.equal((await schedule(m.merchant_id))?.paused_at, null);
    assert.doesNotMatch((await browser.get('/dashboard')).body, /Automatic settlements are paused/);
  });

  it('toggles Test clearing for the Test environment', async () => {
    const { m, browser } = await ownerWithRecipients();
    const on = await browser.post('/dashboard/settlements/test-clearing', { enabled: 'on' });
    assert.equal(on.status, 200, flash(on.body));
    assert.match(on.body, /Test clearing is <strong id="test-clearing">on<\/strong>/);
    const read = async () =>
      (
        await t.db.query<{ test_clearing: boolean }>(
          "SELECT test_clearing FROM clearing_settings WHERE merchant_id = $1 AND environment = 'test'",
          [m.merchant_id],
        )
      )[0]?.test_clearing;
    assert.equal(await read(), true);
    const off = await browser.post('/dashboard/settlements/test-clearing', { enabled: 'off' });
    assert.equal(off.status, 200);
    assert.equal(await read(), false);
    const bad = await browser.post('/dashboard/settlements/test-clearing', { enabled: 'maybe' });
    assert.equal(bad.status, 400);
  });

  it('a viewer reads the page but cannot change it', async () => {
    const { m, bank } = await ownerWithRecipients();
    const viewerEmail = `viewer-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
    const actor = { type: 'user' as const, id: m.owner_user_id, email: m.email };
    await inviteUser(t.db, actor, m.merchant_id, { email: viewerEmail, role: 'viewer' });
    const password = 'viewer-password-1';
    await setPassword(t.db, { kind: 'merchant', email: viewerEmail, password, actor });
    const viewer = await new HttpConsole(base).signedIn(viewerEmail, password);
    const page = await viewer.get('/dashboard/settlements');
    assert.equal(page.status, 200, page.body.slice(0, 300));
    assert.match(page.body, /Only the owner or an admin can change settlements/);
    assert.doesNotMatch(page.body, /<button type="submit">Save schedule<\/button>/);
    const refused = await viewer.post('/dashboard/settlements', { interval: 'daily', recipient_id: bank });
    assert.equal(refused.status, 403);
    assert.equal(await schedule(m.merchant_id), undefined);
  });
});
