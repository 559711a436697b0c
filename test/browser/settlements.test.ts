// Issue 34 in Chromium: a merchant owner's walk through settlements, and an operator's through clearing. The owner
// opens Settlements from the navigation, sets a daily schedule paying a verified recipient and sees the next run,
// turns Test clearing on and off; a Test card payment is settled by POST /api/v1/test/settlements/run and the owner
// reads the settlement (type, period, its transactions totalling its amount, their CSV file); the settlement is
// returned and the paused banner shows on the home and Settlements pages until "Resume"; changing the settlement
// account asks for the second-factor code (a wrong one refused) and then shows the 24-hour notice. An operator sets
// a merchant's reserve and a Live MoMo clearing override. Every page: screenshots at 1280 and 390 px (no sideways
// scroll), copied to /tmp/shots/ for a person to look at; the two settlement pages also pass axe.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createMerchant } from '../../src/accounts/service.ts';
import { addressKey } from '../../src/accounts/sign-in-throttle.ts';
import { createOperator } from '../../src/ops/service.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { freshTotpCode } from '../support/console-client.ts';
import type { TestContext } from '../support/helpers.ts';
import { verifyRecipientsNow } from '../support/payouts-fixtures.ts';
import {
  axeViolations,
  consolePage,
  enrolSecondFactor,
  RESULTS_DIR,
  screenshots,
  signIn,
  type ConsolePage,
} from './console-support.ts';

const PASSWORD = 'settle the score 34';
const SHOTS_DIR = process.env.SIKA_SHOTS_DIR || '/tmp/shots';
const DAY_MS = 24 * 60 * 60 * 1000;
/** A card payment of GHS 100.00 leaves the merchant GHS 97.50 (card: 2.5% merchant-borne). */
const PAID_MINOR = 10_000;
const NET_MINOR = 9_750;

/** Screenshots at 1280 and 390 px with the overflow check (console-support.ts), also copied to /tmp/shots/. */
async function shots(page: Page, name: string): Promise<void> {
  await screenshots(page, `settlements-${name}`);
  mkdirSync(SHOTS_DIR, { recursive: true });
  for (const width of [1280, 390]) {
    const file = `settlements-${name}-${width}.png`;
    copyFileSync(join(RESULTS_DIR, file), join(SHOTS_DIR, file));
  }
}

/** GHS as the pages show it: 9750 -> "GHS 97.50". */
const ghs = (minor: number) => `GHS ${(minor / 100).toFixed(2)}`;

describe('settlements in Chromium: schedule, a settlement explained, a returned one, the account change, clearing', () => {
  let t: TestContext;
  let base: string;
  let browser: Browser;
  let owner: ConsolePage;
  const email = `settle-${randomUUID().slice(0, 8)}@example.com`;
  const operator = { email: `ops-settle-${randomUUID().slice(0, 8)}@sika.example`, password: PASSWORD };
  let merchant: { id: string; name: string; testKey: string };
  let bankId: string;
  let momoId: string;
  let settlement: { id: string; reference: string; amount_minor: number };

  /** One API call over real HTTP with the merchant's Test key (or none, for the payer's steps). */
  async function api(method: 'GET' | 'POST', path: string, body?: unknown, key: string | null = merchant.testKey) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: () => JSON.parse(text) };
  }

  useBrowserApp(
    async (app) => {
      ({ t, base, browser } = app);
      await t.db.query('DELETE FROM sign_in_throttles WHERE key = ANY($1)', [
        [addressKey('merchant', '127.0.0.1'), addressKey('operator', '127.0.0.1')],
      ]);
      const name = `Efua Fabrics ${randomUUID().slice(0, 4)}`;
      const created = await createMerchant(
        t.db,
        { name, email, password: PASSWORD, webhookUrl: 'https://hooks.example.com/sika', payoutApproval: false },
        t.webhookTargets,
      );
      merchant = { id: created.merchant_id, name, testKey: created.test_api_key };
      await createOperator(t.db, { ...operator, role: 'operator' });
      // The deployment's default clearing times (the test app clears everything at once), so the operator's page
      // shows what production would; Test clearing stays off, so the Test payment below clears at once.
    },
    { CLEARING_DAYS: 'momo=1,card=2,bank_transfer=0,cash=0' },
  );
  after(async () => {
    await owner?.close();
  });

  it('the owner opens Settlements from the navigation, sets a daily schedule paying a verified recipient, sees the next run, and turns Test clearing on and off', async () => {
    // Two recipients through the API with the Test key, verified by the Test verifier.
    const banks = await api('GET', '/api/v1/payouts/capabilities');
    assert.equal(banks.status, 200, banks.text);
    const bank = await api('POST', '/api/v1/payouts/recipients', {
      bank_id: banks.json().banks[0].id,
      account_number: '1234567890',
      account_name: 'Efua Mensah',
    });
    assert.equal(bank.status, 201, bank.text);
    const momo = await api('POST', '/api/v1/payouts/recipients', {
      account_type: 'momo',
      network: 'mtn',
      phone: '0241234567',
      account_name: 'Efua Mensah',
    });
    assert.equal(momo.status, 201, momo.text);
    bankId = bank.json().id;
    momoId = momo.json().id;
    await verifyRecipientsNow(t, bankId, momoId);

    owner = await consolePage(browser);
    const { page } = owner;
    await signIn(page, base, '/dashboard', email, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settlements' }).click();
    await page.getByRole('heading', { level: 1, name: 'Settlements (test)' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/dashboard/settlements');
    assert.match(await page.locator('#next-run').innerText(), /none scheduled/);
    await shots(page, 'page-new');
    assert.deepEqual(await axeViolations(page), [], 'the Settlements page passes axe');

    await page.getByLabel('How often').selectOption('daily');
    await page.getByLabel('Minimum balance (GHS)').fill('1.00');
    await page.getByLabel('Settlement account', { exact: true }).selectOption(bankId);
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await page.getByRole('status').filter({ hasText: 'Settlement schedule saved.' }).waitFor();
    const schedule = page.getByRole('region', { name: 'Schedule now' });
    assert.match(await schedule.innerText(), /every business day/i);
    assert.match(await schedule.innerText(), /at least GHS 1\.00/);
    assert.match(await schedule.innerText(), /ending 7890/);
    assert.match(
      await page.locator('#next-run').innerText(),
      /^[A-Z][a-z]{2}, \d+ [A-Z][a-z]{2} \d{4}, 10:00 \(Africa\/Accra time\)$/,
      'the next run is shown in Accra time',
    );
    await shots(page, 'page-saved');
    assert.deepEqual(await axeViolations(page), [], 'the saved Settlements page passes axe');

    await page.getByRole('button', { name: 'Turn Test clearing on' }).click();
    await page.getByRole('status').filter({ hasText: 'Test clearing is on' }).waitFor();
    assert.equal(await page.locator('#test-clearing').innerText(), 'on');
    await shots(page, 'test-clearing-on');
    await page.getByRole('button', { name: 'Turn Test clearing off' }).click();
    await page.getByRole('status').filter({ hasText: 'Test clearing is off' }).waitFor();
    assert.equal(await page.locator('#test-clearing').innerText(), 'off');
  });

  it('a Test card payment is settled by the Test run, and the settlement explains itself: type, period, transactions totalling its amount, and their CSV', async () => {
    const session = await api('POST', '/api/v1/sessions', {
      amount_minor: PAID_MINOR,
      invoice_ref: `INV-${randomUUID().slice(0, 8)}`,
    });
    assert.equal(session.status, 201, session.text);
    const attempt = await api(
      'POST',
      `/api/v1/checkout/sessions/${session.json().id}/provider-attempts`,
      { rail: 'card', amount_minor: PAID_MINOR },
      null,
    );
    assert.equal(attempt.status, 201, attempt.text);
    const paid = await api('POST', `/api/v1/test/payment-attempts/${attempt.json().attempt_reference}/simulate`, {
      outcome: 'paid',
    });
    assert.equal(paid.status, 200, paid.text);

    const run = await api('POST', '/api/v1/test/settlements/run', {
      as_of: new Date(Date.now() + 3 * DAY_MS).toISOString(),
    });
    assert.equal(run.status, 200, run.text);
    const made = run.json().data as { id: string; reference: string; type: string; amount_minor: number }[];
    assert.equal(made.length, 1, run.text);
    assert.equal(made[0]!.type, 'settlement');
    assert.equal(made[0]!.amount_minor, NET_MINOR);
    settlement = made[0]!;

    const { page } = owner;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payouts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: settlement.reference });
    assert.equal(await row.count(), 1);
    assert.match(
      await row.locator('td[data-label="Type"]').innerText(),
      /^Settlement$/,
      'the type column says Settlement',
    );
    await shots(page, 'payouts-list');

    await row.getByRole('link', { name: settlement.reference }).click();
    await page.waitForURL(`**/dashboard/payouts/${settlement.id}`);
    const section = page.getByRole('region', { name: 'Settlement' });
    assert.match(
      await section.innerText(),
      /Period: from your first balance movement to .+\. 1 balance transaction paid out; their net is the payout's amount\./,
    );
    const total = section.locator('tfoot tr');
    assert.equal(
      await total.locator('th').nth(3).innerText(),
      ghs(settlement.amount_minor),
      "the Net total is the payout's amount",
    );
    assert.equal(await section.locator('tbody tr').count(), 1);
    assert.equal(await section.locator('tbody tr td').first().innerText(), 'payment');
    await shots(page, 'payout-detail');
    assert.deepEqual(await axeViolations(page), [], "the settlement's page passes axe");

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      section.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    const csv = readFileSync(await download.path(), 'utf8')
      .trim()
      .split(/\r?\n/);
    const header = csv[0]!.split(',');
    const net = header.indexOf('net_minor');
    assert.ok(net >= 0, csv[0]);
    const rows = csv.slice(1).map((line) => line.split(','));
    assert.equal(rows.length, 1, csv.join('\n'));
    assert.equal(
      rows.reduce((sum, cells) => sum + Number(cells[net]), 0),
      settlement.amount_minor,
      "the CSV's rows sum to the settlement's amount",
    );
  });

  it('a returned settlement shows the red paused banner, linking to it, on the home and Settlements pages; Resume clears it', async () => {
    const returned = await api('POST', `/api/v1/test/payouts/${settlement.id}/simulate`, { outcome: 'returned' });
    assert.equal(returned.status, 200, returned.text);

    const { page } = owner;
    await page.goto(`${base}/dashboard`);
    const banner = page.getByRole('alert', { name: 'Settlements paused' });
    await banner.waitFor();
    assert.match(await banner.innerText(), /Automatic settlements are paused/);
    assert.match(
      await banner.innerText(),
      /was returned by the receiving account\. Its money is back in your available balance/,
    );
    assert.equal(
      await banner.getByRole('link', { name: 'the settlement payout' }).getAttribute('href'),
      `/dashboard/payouts/${settlement.id}`,
    );
    const colour = await banner.evaluate((el) => getComputedStyle(el).borderTopColor);
    assert.equal(colour, 'rgb(192, 57, 43)', 'the banner is red');
    await shots(page, 'home-paused');

    await banner.getByRole('link', { name: 'Settlements: resume' }).click();
    await page.waitForURL('**/dashboard/settlements');
    await banner.waitFor();
    assert.equal(
      await banner.getByRole('link', { name: 'the settlement payout' }).getAttribute('href'),
      `/dashboard/payouts/${settlement.id}`,
    );
    assert.ok(await page.getByRole('button', { name: 'Save and resume' }).isVisible());
    await shots(page, 'page-paused');
    assert.deepEqual(await axeViolations(page), [], 'the paused Settlements page passes axe');

    await banner.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('status').filter({ hasText: 'Settlements resumed.' }).waitFor();
    assert.equal(await page.getByRole('alert', { name: 'Settlements paused' }).count(), 0, 'the banner is gone');
    assert.match(await page.locator('#next-run').innerText(), /10:00 \(Africa\/Accra time\)/);
    await page.goto(`${base}/dashboard`);
    assert.equal(await page.getByRole('alert', { name: 'Settlements paused' }).count(), 0, 'and on the home page');
  });

  it('changing the settlement account asks for the second-factor code: a wrong one is refused, the right one saves and shows the 24-hour notice', async () => {
    const { page } = owner;
    await page.goto(`${base}/dashboard/settlements`);
    assert.match(
      await page.getByRole('form', { name: 'Settlement schedule' }).innerText(),
      /first set up a second factor/,
      'without a second factor the page says to set one up',
    );
    await page.goto(`${base}/dashboard/account/2fa`);
    await enrolSecondFactor(page, email, PASSWORD);
    await page.getByRole('link', { name: 'I have saved them: continue' }).click();

    await page.goto(`${base}/dashboard/settlements`);
    await page.getByLabel('Settlement account', { exact: true }).selectOption(momoId);
    await page.getByLabel(/Code from your authenticator app/).fill('000000');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Enter the current code from your authenticator app' });
    await refusal.waitFor();
    assert.match(await page.getByRole('region', { name: 'Schedule now' }).innerText(), /ending 7890/, 'unchanged');
    await shots(page, 'wrong-code');

    await page.getByLabel('Settlement account', { exact: true }).selectOption(momoId);
    await page.getByLabel(/Code from your authenticator app/).fill(await freshTotpCode(email));
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await page.getByRole('status').filter({ hasText: 'Settlement account changed' }).waitFor();
    const notice = page.getByRole('status', { name: 'New settlement account' });
    assert.match(
      await notice.innerText(),
      /New settlement account .*ending 4567 .*receives settlements from .+\. For your protection a new account receives nothing for 24 hours/,
    );
    await shots(page, 'account-changed');
    assert.deepEqual(await axeViolations(page), [], 'the Settlements page with the notice passes axe');
  });

  it("an operator sets the merchant's 10% reserve for 7 days and a Live MoMo override of 2 days on its Clearing and reserve page", async () => {
    const ops = await consolePage(browser);
    const { page } = ops;
    await signIn(page, base, '/ops', operator.email, operator.password);
    await page.goto(`${base}/ops/merchants/${merchant.id}`);
    await page.getByRole('heading', { level: 1, name: merchant.name }).waitFor();
    await page.getByRole('link', { name: 'Clearing times per rail and the rolling reserve' }).click();
    await page.getByRole('heading', { level: 1, name: 'Clearing and reserve' }).waitFor();
    await shots(page, 'ops-clearing');
    assert.deepEqual(await axeViolations(page), [], 'the Clearing and reserve page passes axe');

    const live = page.locator('form').filter({ has: page.getByRole('button', { name: 'Save Live clearing' }) });
    await live.getByLabel('Clearing days for Mobile Money').fill('2');
    await live.getByLabel(/Reserve percentage/).fill('10');
    await live.getByLabel(/Reserve days/).fill('7');
    await live.getByRole('button', { name: 'Save Live clearing' }).click();
    await page.getByRole('status').waitFor();
    const saved = page.locator('form').filter({ has: page.getByRole('button', { name: 'Save Live clearing' }) });
    assert.match(await saved.innerText(), /Rolling reserve: 10% of each credit held for 7 days/);
    const momo = saved.getByRole('row').filter({ hasText: 'Mobile Money' });
    assert.match(await momo.innerText(), /2 business days\s+operator override/);
    assert.match(
      await saved.getByRole('row').filter({ hasText: 'Card' }).innerText(),
      /2 business days\s+default/,
      "the other rails keep the deployment's default",
    );
    assert.equal(await saved.getByLabel('Clearing days for Mobile Money').inputValue(), '2');
    const test = page.locator('form').filter({ has: page.getByRole('button', { name: 'Save Test clearing' }) });
    assert.match(await test.innerText(), /Rolling reserve: off/, 'the Test settings are untouched');
    await shots(page, 'ops-clearing-saved');
    assert.deepEqual(await axeViolations(page), [], 'the saved Clearing and reserve page passes axe');
    await ops.close();
  });
});
