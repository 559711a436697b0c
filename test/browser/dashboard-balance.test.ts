// The Balance page (issue 36, item 3) in Debian's Chromium at 1280 and 390 px: a merchant sees the balances and
// the movements newest first, narrows them to refunds, follows a payment's row to its session, and gets the
// address to share; amount, fee and net stay on one line each (on a phone the rows stack with each column's
// name); axe-core finds nothing; screenshots go to test-results/.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { addressKey } from '../../src/accounts/sign-in-throttle.ts';
import { LiveProviders } from '../../src/rails/live.ts';
import { requestRefund } from '../../src/refunds/session-refunds.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { createSession, momoBody, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import type { TestContext } from '../support/helpers.ts';
import { axeViolations, consolePage, DESKTOP, PHONE, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'balance moves in order 36';

describe('the Balance page in Chromium (1280 and 390 px)', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  let m: CreatedMerchant;
  let email: string;
  let refundedSession: string;

  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    await t.db.query('DELETE FROM sign_in_throttles WHERE key = $1', [addressKey('merchant', '127.0.0.1')]);
    email = `balance-${randomUUID().slice(0, 8)}@example.com`;
    m = await createMerchant(t.db, {
      name: `Ama Balance ${randomUUID().slice(0, 4)}`,
      email,
      password: PASSWORD,
      webhookUrl: null,
    });
    const paid = async (amountMinor: number, body: Parameters<typeof startAttempt>[2]) => {
      const session = await createSession(t, m, { amount_minor: amountMinor, customer: { name: 'Kwame Asante' } });
      const attempt = await startAttempt(t, session.id, body);
      await simulate(t, m, attempt.attempt_reference, 'paid');
      return session.id;
    };
    refundedSession = await paid(1_250_000, momoBody(1_250_000, '0245554321', 'mtn'));
    await paid(6_000, momoBody(6_000, '0205554321', 'telecel'));
    await paid(2_500, { rail: 'card', amount_minor: totalOf('card', 2_500) });
    await requestRefund(
      t.db,
      { merchantId: m.merchant_id, environment: 'test', apiKeyId: null, userId: null },
      { session_id: refundedSession, amount_minor: 120_000, reason: 'Wrong size' },
      LiveProviders.none(),
    );
  });

  it('shows the balances and the movements, filters them to refunds in a shareable address, and links each source', async () => {
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', email, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Balance' }).click();
    await page.getByRole('heading', { level: 1, name: 'Balance (test)' }).waitFor();
    const rows = page.locator('table[aria-label="Balance transactions"] tbody tr');
    assert.equal(await rows.count(), 4);
    assert.match(await page.getByRole('region', { name: 'Balances' }).innerText(), /Available[\s\S]*GHS/);
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      for (const cell of await page
        .locator('table[aria-label="Balance transactions"] td.num, table[aria-label="Balance transactions"] td.date')
        .all()) {
        const lines = await cell.evaluate((element) => {
          const range = document.createRange();
          range.selectNodeContents(element);
          const text = [...element.childNodes].find((node) => node.nodeType === Node.TEXT_NODE);
          if (text) range.selectNodeContents(text);
          return range.getClientRects().length;
        });
        assert.equal(lines, 1, `"${await cell.innerText()}" on one line at ${size.width} px`);
      }
      assert.deepEqual(await axeViolations(page), [], `axe-core violations on the list at ${size.width} px`);
    }
    await screenshots(page, 'dashboard-balance');
    await page.setViewportSize(DESKTOP);

    await page.getByLabel('Type').selectOption('refund');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/type=refund/);
    assert.equal(await rows.count(), 1);
    assert.match(await rows.first().innerText(), /Refund[\s\S]*-GHS 1,200\.00/);
    assert.deepEqual(await axeViolations(page), [], 'axe-core violations on a filtered list');
    await screenshots(page, 'dashboard-balance-refunds');

    // The address is the filter: opened again, the same row; its refund opens on the Refunds page, found by its id.
    const shared = page.url();
    await page.goto(`${baseUrl}/dashboard`);
    await page.goto(shared);
    assert.equal(await rows.count(), 1);
    await rows.first().getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: 'Refunds' }).waitFor();
    assert.equal(await page.locator('table[aria-label=Refunds] tbody tr').count(), 1);
    assert.match(await page.locator('table[aria-label=Refunds] tbody tr').innerText(), /GHS 1,200\.00/);

    // A payment's row leads to its session.
    await page.goto(`${baseUrl}/dashboard/balance?q=${refundedSession}&type=payment`);
    assert.equal(await rows.count(), 1);
    await rows.first().getByRole('link', { name: refundedSession }).click();
    await page.getByRole('heading', { level: 1 }).filter({ hasText: refundedSession }).waitFor();
    await close();
  });
});
