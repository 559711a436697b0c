// The Payment links list (issue 36, item 3) in Debian's Chromium at 1280 and 390 px: 30 links of a merchant in
// pages of 25; the owner searches by a name's part, narrows by status, and gets the address to share; money and
// dates stay on one line (on a phone the rows stack with each column's name); the Export CSV link carries the same
// search; axe-core finds nothing; screenshots go to test-results/dashboard-links*.png.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { addressKey } from '../../src/accounts/sign-in-throttle.ts';
import { createPaymentLink } from '../../src/checkout/payment-links.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import type { TestContext } from '../support/helpers.ts';
import { axeViolations, consolePage, DESKTOP, PHONE, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'links found by name 36';

describe('the Payment links list in Chromium (1280 and 390 px)', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  let m: CreatedMerchant;
  let email: string;

  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    await t.db.query('DELETE FROM sign_in_throttles WHERE key = $1', [addressKey('merchant', '127.0.0.1')]);
    email = `links-${randomUUID().slice(0, 8)}@example.com`;
    m = await createMerchant(t.db, {
      name: `Adenta Links ${randomUUID().slice(0, 4)}`,
      email,
      password: PASSWORD,
      webhookUrl: null,
    });
    const owner = { merchantId: m.merchant_id, environment: 'test' as const, apiKeyId: null, userId: null };
    const make = (name: string, input: Record<string, unknown>) =>
      createPaymentLink(t.db, owner, { name, ...input }, baseUrl);
    for (let n = 1; n <= 26; n++) await make(`Class ${n} fees`, { amount_minor: 125_000 + n * 100 });
    await make('Harvest offering', { amount_min_minor: 500, amount_max_minor: 500_000 });
    const off = await make('Old raffle tickets', { amount_minor: 2_000 });
    await make('Raffle tickets, 2026', { amount_minor: 2_000, max_payments: 200 });
    const used = await make('Uniform, size 8', { amount_minor: 12_000, single_use: true });
    await t.db.query('UPDATE payment_links SET active = false WHERE id = $1', [off.id]);
    await t.db.query('UPDATE payment_links SET payments_count = 1 WHERE id = $1', [used.id]);
  });

  it('pages, searches and filters the links in a shareable address', async () => {
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', email, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payment links' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payment links (test)' }).waitFor();
    const rows = page.locator('table[aria-label="Payment links"] tbody tr');
    assert.equal(await rows.count(), 25, 'a page of 25');
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      for (const selector of ['td.money', 'td.date']) {
        const cell = page.locator(`table[aria-label="Payment links"] ${selector}`).first();
        const lines = await cell.evaluate((element) => {
          const range = document.createRange();
          range.selectNodeContents(element);
          return Math.round(
            range.getBoundingClientRect().height / Number.parseFloat(getComputedStyle(element).lineHeight),
          );
        });
        assert.equal(lines, 1, `${selector} on one line at ${size.width} px`);
      }
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
      assert.equal(sideways, false, `nothing scrolls sideways at ${size.width} px`);
      assert.deepEqual(await axeViolations(page), [], `axe-core violations on the list at ${size.width} px`);
    }
    await page.setViewportSize(DESKTOP);
    await screenshots(page, 'dashboard-links');

    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(/after=pl_/);
    assert.equal(await rows.count(), 5, 'the other 5 on the second page');
    await page.getByRole('link', { name: 'Newest' }).waitFor();

    await page.getByLabel('Search', { exact: true }).fill('raffle');
    await page.getByLabel('Status').selectOption('active');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=raffle&status=active/);
    assert.equal(await rows.count(), 1);
    assert.match(
      await rows.first().innerText(),
      /Raffle tickets, 2026[\s\S]*GHS 20\.00[\s\S]*0 \/ 200[\s\S]*GHS 0\.00[\s\S]*active/,
    );
    const exportHref = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
    assert.equal(exportHref, '/dashboard/links?q=raffle&status=active&format=csv');
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      assert.deepEqual(await axeViolations(page), [], `axe-core violations on a search at ${size.width} px`);
    }
    await page.setViewportSize(DESKTOP);
    await screenshots(page, 'dashboard-links-search');

    // The address is the search: opened again (as a colleague would), it shows the same row.
    const shared = page.url();
    await page.goto(`${baseUrl}/dashboard`);
    await page.goto(shared);
    assert.equal(await rows.count(), 1);
    await page.getByLabel('Status').selectOption('used_up');
    await page.getByLabel('Search', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/status=used_up/);
    assert.equal(await rows.count(), 1);
    assert.match(await rows.first().innerText(), /Uniform, size 8[\s\S]*used up/);
    await close();
  });
});
