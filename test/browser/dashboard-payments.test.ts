// The Payments page (issue 36, item 2) in Debian's Chromium at 1280 and 390 px: a merchant types a phone's last
// four digits in the one search box, narrows by network, and gets the address to share; money and dates stay on
// one line (on a phone the rows stack with each column's name); axe-core finds nothing; screenshots go to
// test-results/.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { addressKey } from '../../src/accounts/sign-in-throttle.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { createSession, momoBody, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import type { TestContext } from '../support/helpers.ts';
import { axeViolations, consolePage, DESKTOP, PHONE, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'payments found by phone 36';

describe('the Payments page in Chromium (1280 and 390 px)', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  let m: CreatedMerchant;
  let email: string;
  let mtnSession: string;

  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    await t.db.query('DELETE FROM sign_in_throttles WHERE key = $1', [addressKey('merchant', '127.0.0.1')]);
    email = `payments-${randomUUID().slice(0, 8)}@example.com`;
    m = await createMerchant(t.db, {
      name: `Akua Payments ${randomUUID().slice(0, 4)}`,
      email,
      password: PASSWORD,
      webhookUrl: null,
    });
    // Paid by MTN MoMo, by Telecel Cash (the same last four digits), by card, and one not paid yet.
    const paid = async (customer: string, amountMinor: number, body: Parameters<typeof startAttempt>[2]) => {
      const session = await createSession(t, m, { amount_minor: amountMinor, customer: { name: customer } });
      const attempt = await startAttempt(t, session.id, body);
      await simulate(t, m, attempt.attempt_reference, 'paid');
      return session.id;
    };
    mtnSession = await paid('Akosua Mensah', 125_000, momoBody(125_000, '0245554321', 'mtn'));
    await paid('Yaw Darko', 6_000, momoBody(6_000, '0205554321', 'telecel'));
    await paid('Esi Card', 2_500, { rail: 'card', amount_minor: totalOf('card', 2_500) });
    await createSession(t, m, { amount_minor: 40_000, customer: { name: 'Kojo Waiting' } });
  });

  it('finds payments by the last four digits of a phone, narrowed by network, in a shareable address', async () => {
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', email, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payments' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payments' }).waitFor();
    assert.equal(await page.locator('table[aria-label=Payments] tbody tr').count(), 4);
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      const cell = page.locator('table[aria-label=Payments] td.num').first();
      const lines = await cell.evaluate((element) => {
        const range = document.createRange();
        range.selectNodeContents(element);
        return Math.round(
          range.getBoundingClientRect().height / Number.parseFloat(getComputedStyle(element).lineHeight),
        );
      });
      assert.equal(lines, 1, `the amount on one line at ${size.width} px`);
      assert.deepEqual(await axeViolations(page), [], `axe-core violations on the list at ${size.width} px`);
    }
    await page.setViewportSize(DESKTOP);
    await screenshots(page, 'dashboard-payments');

    await page.getByLabel('Search', { exact: true }).fill('4321');
    await page.getByLabel('Network').selectOption('mtn');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=4321&.*network=mtn/);
    const rows = page.locator('table[aria-label=Payments] tbody tr');
    assert.equal(await rows.count(), 1);
    assert.match(await rows.first().innerText(), /Akosua Mensah[\s\S]*MTN MoMo[\s\S]*GHS 1,250\.00[\s\S]*success/);
    assert.deepEqual(await axeViolations(page), [], 'axe-core violations on a search');
    await screenshots(page, 'dashboard-payments-search');

    // The address is the search: opened again (as a colleague would), it shows the same row.
    const shared = page.url();
    await page.goto(`${baseUrl}/dashboard`);
    await page.goto(shared);
    assert.equal(await rows.count(), 1);
    await page.getByRole('link', { name: new RegExp(mtnSession) }).click();
    await page.getByRole('heading', { level: 1 }).filter({ hasText: mtnSession }).waitFor();
    await close();
  });
});
