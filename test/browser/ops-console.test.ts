// Issue 30: the operator console's merchants list (search, filters, pages), a merchant's page and the audit
// log in Debian's Chromium: each passes axe-core with no violation at 1280 px, is usable with the search form,
// and is screenshotted at 1280 and 390 px (test-results/ops-console-*.png).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { createOperator } from '../../src/ops/service.ts';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import type { TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import { fund } from '../support/payouts-fixtures.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { axeViolations, consolePage, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'operator passphrase 1';
describe('operator console lists in Chromium: merchants, a merchant, the audit log', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  const operator = { email: `ops-${randomUUID().slice(0, 8)}@sika.example`, password: PASSWORD };
  const token = randomUUID().slice(0, 6);
  let rich: CreatedMerchant;

  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    await createOperator(t.db, { ...operator, role: 'operator' });
    // 60 merchants (more than a page), one of them Live with money, endpoints, a session.
    for (let i = 0; i < 60; i++) {
      const created = await createMerchant(
        t.db,
        {
          name: `Kumasi Traders ${token} ${i}`,
          email: `owner-${i}-${token}@example.com`,
          webhookUrl: i === 42 ? 'https://example.com/hooks/sika' : null,
        },
        t.webhookTargets,
      );
      if (i === 42) rich = created;
    }
    await setPayoutAccess(t.db, rich.merchant_id, 'live', { payout_access: true });
    await fund(t, rich.merchant_id, 'live', 1_234_567);
    const session = await call(t, 'POST', '/api/v1/sessions', {
      key: rich.test_api_key,
      body: { amount_minor: 50_000, invoice_ref: `INV-${token}` } as never,
    });
    assert.equal(session.statusCode, 201, session.body);
  });

  it('the merchants list: search, filters, next page; axe 0 at 1280; screenshots', async () => {
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    await page.goto(`${baseUrl}/ops?q=${token}`);
    assert.deepEqual(await axeViolations(page), []);
    assert.equal(await page.locator('tbody tr').count(), 50);
    await screenshots(page, 'ops-console-merchants');
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(/after=/);
    assert.equal(await page.locator('tbody tr').count(), 10);
    // The one Live merchant holding money, found with the filters.
    await page.goto(`${baseUrl}/ops`);
    await page.getByLabel('Search merchants').fill(token);
    await page.getByLabel('Live payouts').selectOption('on');
    await page.getByLabel('Live balance').selectOption('yes');
    await Promise.all([page.waitForURL(/live_balance=yes/), page.getByRole('button', { name: 'Search' }).click()]);
    assert.equal(await page.locator('tbody tr').count(), 1);
    assert.match(await page.locator('tbody').innerText(), /GHS 12,345\.67/);
    assert.deepEqual(await axeViolations(page), []);
    await screenshots(page, 'ops-console-merchants-filtered');
    await close();
  });

  it("a merchant's page: balances, sessions, users, key prefixes, endpoints, payout settings; axe 0 at 1280; screenshots", async () => {
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    await page.goto(`${baseUrl}/ops/merchants/${rich.merchant_id}`);
    const text = await page.locator('main').innerText();
    assert.match(text, /GHS 12,345\.67/);
    assert.match(text, new RegExp(`INV-${token}`));
    assert.ok(text.includes(rich.live_api_key.slice(0, 16)), 'the Live key prefix');
    assert.ok(!text.includes(rich.live_api_key), 'never the key');
    assert.deepEqual(await axeViolations(page), []);
    await screenshots(page, 'ops-console-merchant');
    await close();
  });

  it('the audit log: filters, the changes of a row; axe 0 at 1280; screenshots', async () => {
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    // An audited change to look at: the Test payout limits of the merchant, through its page.
    await page.goto(`${baseUrl}/ops/merchants/${rich.merchant_id}`);
    await page.locator('#paused-test').selectOption('on');
    await Promise.all([
      page.waitForLoadState('load'),
      page.getByRole('button', { name: 'Save test payout settings' }).click(),
    ]);
    await page.goto(`${baseUrl}/ops/audit`);
    await page.getByLabel('Merchant (id or name)').fill(rich.merchant_id);
    await page.getByLabel('Action').selectOption('payout_settings.update');
    await Promise.all([
      page.waitForURL(/action=payout_settings/),
      page.getByRole('button', { name: 'Search' }).click(),
    ]);
    const rows = page.locator('main > .table-wrap > table > tbody > tr');
    assert.equal(await rows.count(), 1);
    assert.match(await rows.first().innerText(), /paused\s+false\s+true/);
    assert.deepEqual(await axeViolations(page), []);
    await screenshots(page, 'ops-console-audit');
    await page.goto(`${baseUrl}/ops/audit`);
    assert.deepEqual(await axeViolations(page), []);
    await screenshots(page, 'ops-console-audit-all');
    await close();
  });
});
