// The Payouts list (issue 36, item 3) in Debian's Chromium at 1280 and 390 px: a merchant types an account's last
// four digits in the one search box, narrows by method, gets the address to share and exports what it shows;
// money and dates stay on one line (on a phone the rows stack with each column's name); axe-core finds nothing;
// screenshots go to test-results/.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { addressKey } from '../../src/accounts/sign-in-throttle.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import type { TestContext } from '../support/helpers.ts';
import {
  bankRecipient,
  createPayout,
  fund,
  momoRecipient,
  verifyRecipientsNow,
  WEBHOOK_URL,
} from '../support/payouts-fixtures.ts';
import { axeViolations, consolePage, DESKTOP, PHONE, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'payouts found by account 36';

describe('the Payouts list in Chromium (1280 and 390 px)', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  let m: CreatedMerchant;
  let email: string;
  let bankPayout: string;

  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    await t.db.query('DELETE FROM sign_in_throttles WHERE key = $1', [addressKey('merchant', '127.0.0.1')]);
    email = `payouts-${randomUUID().slice(0, 8)}@example.com`;
    m = await createMerchant(
      t.db,
      { name: `Kwame Payouts ${randomUUID().slice(0, 4)}`, email, password: PASSWORD, webhookUrl: WEBHOOK_URL },
      t.webhookTargets,
    );
    await fund(t, m.merchant_id, 'test', 5_000_000);
    // A bank account and an MTN wallet ending in the same four digits; one payout still awaiting approval.
    const bank = await bankRecipient(t, m.test_api_key, '0040104321', { account_name: 'Adinkra Prints Ltd' });
    const wallet = await momoRecipient(t, m.test_api_key, '0245554321', 'mtn', { account_name: 'Akosua Mensah' });
    await verifyRecipientsNow(t, bank.id, wallet.id);
    bankPayout = (await createPayout(t, m.test_api_key, bank.id, 1_250_000, { client_reference: 'INV-2026-0117' })).id;
    await createPayout(t, m.test_api_key, wallet.id, 35_050);
    await createPayout(t, m.test_api_key, wallet.id, 8_000, { test_outcome: 'requested' });
  });

  it('finds payouts by the last four digits of an account, narrowed by method, shared and exported', async () => {
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', email, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payouts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
    assert.ok(await page.getByRole('link', { name: 'New payout' }).isVisible(), 'the page keeps its New payout button');
    const rows = page.locator('table[aria-label=Payouts] tbody tr');
    assert.equal(await rows.count(), 3);
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      for (const selector of ['td.num', 'td.date']) {
        const cell = page.locator(`table[aria-label=Payouts] ${selector}`).first();
        const lines = await cell.evaluate((element) => {
          const range = document.createRange();
          range.selectNodeContents(element);
          return Math.round(
            range.getBoundingClientRect().height / Number.parseFloat(getComputedStyle(element).lineHeight),
          );
        });
        assert.equal(lines, 1, `${selector} on one line at ${size.width} px`);
      }
      assert.deepEqual(await axeViolations(page), [], `axe-core violations on the list at ${size.width} px`);
    }
    await screenshots(page, 'dashboard-payouts');
    await page.setViewportSize(DESKTOP);

    await page.getByLabel('Search', { exact: true }).fill('4321');
    await page.getByLabel('Method').selectOption('bank');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/q=4321&.*method=bank/);
    assert.equal(await rows.count(), 1);
    assert.match(
      await rows.first().innerText(),
      /INV-2026-0117[\s\S]*Adinkra Prints Ltd[\s\S]*\*{6}4321[\s\S]*Bank transfer[\s\S]*GHS 12,500\.00[\s\S]*paid/,
    );
    assert.deepEqual(await axeViolations(page), [], 'axe-core violations on a search');
    await screenshots(page, 'dashboard-payouts-search');

    // The export is what the page shows.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export CSV' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^payouts-test-\d{4}-\d{2}-\d{2}\.csv$/);
    const file = await readFile((await download.path())!, 'utf8');
    const lines = file.trim().split(/\r?\n/);
    assert.equal(lines.length, 2, file);
    assert.match(lines[1]!, new RegExp(`^${bankPayout},`));

    // The address is the search: opened again (as a colleague would), it shows the same row.
    const shared = page.url();
    await page.goto(`${baseUrl}/dashboard`);
    await page.goto(shared);
    assert.equal(await rows.count(), 1);
    await page.locator(`a[href="/dashboard/payouts/${bankPayout}"]`).click();
    await page.getByRole('heading', { level: 1 }).filter({ hasText: 'Payout' }).waitFor();
    await close();
  });
});
