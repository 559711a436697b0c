// Browser test of the dashboard's Refund form (issue 17) in Debian's Chromium: an owner opens a paid Test
// session, sees its payment and the form with the rest of the payment filled in, refunds part of it by
// clicking Refund, and sees the refund on the page; screenshots at 1280 and 390 px. The Refunds page (issue 36):
// searched by amount and filtered by status in a shareable address, money and dates on one line, axe-core clean.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMerchant } from '../../src/accounts/service.ts';
import { addressKey } from '../../src/accounts/sign-in-throttle.ts';
import { createSession, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import type { TestContext } from '../support/helpers.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { axeViolations, consolePage, DESKTOP, PHONE, screenshots, signIn } from './console-support.ts';
import { LiveProviders } from '../../src/rails/live.ts';
import { requestRefund } from '../../src/refunds/session-refunds.ts';

const PASSWORD = 'correct horse battery';

describe('dashboard refunds in Chromium', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    // A kept database remembers earlier runs' failed sign-ins from 127.0.0.1.
    await t.db.query('DELETE FROM sign_in_throttles WHERE key = $1', [addressKey('merchant', '127.0.0.1')]);
  });

  it('an owner clicks Refund on a paid Test session: the refund succeeds and is listed with the rest offered', async () => {
    const email = `owner-${randomUUID().slice(0, 8)}@example.com`;
    const m = await createMerchant(
      t.db,
      { name: `Esi Crafts ${randomUUID().slice(0, 4)}`, email, password: PASSWORD, webhookUrl: null },
      t.webhookTargets,
    );
    const session = await createSession(t, m, { amount_minor: 30_000 });
    const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', 30_000) });
    await simulate(t, m, attempt.attempt_reference, 'paid');

    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', email, PASSWORD);
    await page.goto(`${baseUrl}/dashboard/sessions/${session.id}`);
    await page.getByRole('heading', { name: 'Payment', exact: true }).waitFor();
    const amount = page.getByLabel('Amount (GHS)');
    assert.equal(await amount.inputValue(), '300.00', 'the whole payment is offered');
    await screenshots(page, 'dashboard-session-refund');

    await amount.fill('75.50');
    await page.getByLabel('Reason').fill('Two mugs arrived broken');
    await Promise.all([
      page.waitForURL((url) => url.pathname === `/dashboard/sessions/${session.id}` && url.searchParams.has('refund')),
      page.getByRole('button', { name: 'Refund', exact: true }).click(),
    ]);
    await page.getByRole('status').filter({ hasText: 'Refund of GHS 75.50 requested: it succeeded.' }).waitFor();
    const row = page
      .getByRole('table', { name: 'Refunds' })
      .getByRole('row')
      .filter({ hasText: 'Two mugs arrived broken' });
    assert.equal(await row.count(), 1);
    assert.match(await row.innerText(), /GHS 75\.50\s+succeeded/);
    assert.equal(await page.getByLabel('Amount (GHS)').inputValue(), '224.50', 'the rest is offered next');
    await screenshots(page, 'dashboard-session-refunded');

    const stored = await t.db.query<{ status: string; amount_minor: number; requested_by_user_id: string }>(
      'SELECT status, amount_minor, requested_by_user_id FROM refunds WHERE session_id = $1',
      [session.id],
    );
    assert.deepEqual(stored, [{ status: 'succeeded', amount_minor: 7_550, requested_by_user_id: m.owner_user_id }]);
    await close();
  });
  it('the Refunds page finds a refund by its amount, narrowed by status, in a shareable address (1280 and 390 px)', async () => {
    const email = `refunds-${randomUUID().slice(0, 8)}@example.com`;
    const m = await createMerchant(
      t.db,
      { name: `Kofi Refunds ${randomUUID().slice(0, 4)}`, email, password: PASSWORD, webhookUrl: null },
      t.webhookTargets,
    );
    const refunds: string[] = [];
    for (const [amountMinor, refundMinor] of [
      [1_250_000, 120_000],
      [30_000, 1_000],
      [5_000, 5_000],
    ] as const) {
      const session = await createSession(t, m, { amount_minor: amountMinor });
      const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', amountMinor) });
      await simulate(t, m, attempt.attempt_reference, 'paid');
      const refund = await requestRefund(
        t.db,
        { merchantId: m.merchant_id, environment: 'test', apiKeyId: null, userId: null },
        { session_id: session.id, amount_minor: refundMinor, reason: 'Customer changed their mind' },
        LiveProviders.none(),
      );
      refunds.push(refund.id);
    }
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', email, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Refunds' }).click();
    await page.getByRole('heading', { level: 1, name: 'Refunds' }).waitFor();
    const rows = page.locator('table[aria-label=Refunds] tbody tr');
    assert.equal(await rows.count(), 3);
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      for (const cell of await page
        .locator('table[aria-label=Refunds] td.num, table[aria-label=Refunds] td.date')
        .all()) {
        const lines = await cell.evaluate((element) => {
          const range = document.createRange();
          range.selectNodeContents(element);
          return range.getClientRects().length;
        });
        assert.equal(lines, 1, `"${await cell.innerText()}" on one line at ${size.width} px`);
      }
      assert.deepEqual(await axeViolations(page), [], `axe-core violations on the Refunds page at ${size.width} px`);
    }
    await screenshots(page, 'dashboard-refunds-list');
    await page.setViewportSize(DESKTOP);

    await page.getByLabel('Search', { exact: true }).fill('1200');
    await page.getByLabel('Status').selectOption('succeeded');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=1200&status=succeeded/);
    assert.equal(await rows.count(), 1);
    assert.match(await rows.first().innerText(), new RegExp(`${refunds[0]}[\\s\\S]*GHS 1,200\\.00[\\s\\S]*succeeded`));
    assert.deepEqual(await axeViolations(page), [], 'axe-core violations on a search');
    await screenshots(page, 'dashboard-refunds-search');
    const shared = page.url();
    await page.goto(`${baseUrl}/dashboard`);
    await page.goto(shared);
    assert.equal(await rows.count(), 1);
    await close();
  });
});
