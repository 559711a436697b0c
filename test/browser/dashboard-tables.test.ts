// Readable tables (issue 36, item 4) in Debian's Chromium: on the refunds, payouts, payment links and exports
// pages a money cell (class "num": right-aligned, one line, tabular figures) and a date cell (class "date")
// are each one line tall at 1280 and at 390 px, where a wide table scrolls inside its card instead of
// wrapping "GHS 10.00" letter by letter; axe-core finds nothing; screenshots go to test-results/.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { addressKey } from '../../src/accounts/sign-in-throttle.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { createSession, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import type { TestContext } from '../support/helpers.ts';
import {
  api,
  createPayout,
  fund,
  momoRecipient,
  verifyRecipientsNow,
  WEBHOOK_URL,
} from '../support/payouts-fixtures.ts';
import { axeViolations, consolePage, DESKTOP, PHONE, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'tables that read well 36';

/** How many lines a cell's content takes: its content's height over the cell's line height, rounded. */
async function linesOf(page: Page, selector: string): Promise<{ text: string; lines: number }> {
  const cell = page.locator(selector).first();
  await cell.waitFor();
  return cell.evaluate((element) => {
    const range = document.createRange();
    range.selectNodeContents(element);
    const lineHeight = Number.parseFloat(getComputedStyle(element).lineHeight);
    return {
      text: (element.textContent ?? '').trim(),
      lines: Math.round(range.getBoundingClientRect().height / lineHeight),
    };
  });
}

/** At both widths: the money and the date cell each on one line, the money right-aligned; no axe violation; screenshots. */
async function checkTable(page: Page, name: string, money: string, date: string): Promise<void> {
  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    const amount = await linesOf(page, money);
    assert.match(amount.text, /GHS [\d,]+\.\d\d/, `${name}: ${money} holds an amount`);
    assert.equal(amount.lines, 1, `${name} at ${size.width} px: "${amount.text}" on ${amount.lines} lines`);
    const when = await linesOf(page, date);
    assert.match(when.text, /\d{4}-\d{2}-\d{2}/, `${name}: ${date} holds a date`);
    assert.equal(when.lines, 1, `${name} at ${size.width} px: "${when.text}" on ${when.lines} lines`);
    assert.equal(
      await page
        .locator(money)
        .first()
        .evaluate((element) => getComputedStyle(element).textAlign),
      'right',
    );
  }
  await page.setViewportSize(DESKTOP);
  assert.deepEqual(await axeViolations(page), [], `${name}: axe-core violations`);
  // Also checks that only a .table-wrap scrolls sideways, never the page.
  await screenshots(page, `dashboard-tables-${name}`);
}

describe('readable dashboard tables in Chromium (1280 and 390 px)', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  let m: CreatedMerchant;
  let email: string;
  let sessionId: string;
  let payoutId: string;
  let linkId: string;

  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    await t.db.query('DELETE FROM sign_in_throttles WHERE key = $1', [addressKey('merchant', '127.0.0.1')]);
    email = `tables-${randomUUID().slice(0, 8)}@example.com`;
    m = await createMerchant(
      t.db,
      { name: `Adwoa Tables ${randomUUID().slice(0, 4)}`, email, password: PASSWORD, webhookUrl: WEBHOOK_URL },
      t.webhookTargets,
    );
    // A paid session refunded in part, a payout to a wallet (its key needs a webhook endpoint), and a payment link.
    const session = await createSession(t, m, { amount_minor: 2_500 });
    const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', 2_500) });
    await simulate(t, m, attempt.attempt_reference, 'paid');
    sessionId = session.id;
    const refund = await api(t, m.test_api_key, 'POST', '/api/v1/refunds', {
      session_id: sessionId,
      amount_minor: 1_000,
      reason: 'One of the two mugs arrived broken',
    });
    assert.equal(refund.statusCode, 201, refund.body);
    await fund(t, m.merchant_id, 'test', 500_000);
    const recipient = await momoRecipient(t, m.test_api_key);
    await verifyRecipientsNow(t, recipient.id);
    payoutId = (await createPayout(t, m.test_api_key, recipient.id, 123_450)).id;
    const link = await api(t, m.test_api_key, 'POST', '/api/v1/payment-links', {
      name: 'Kente stole',
      amount_minor: 45_000,
    });
    assert.equal(link.statusCode, 201, link.body);
    linkId = link.json().id;
  });

  it('money and dates stay on one line on the refunds, payouts, links and exports pages', async () => {
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', email, PASSWORD);

    await page.goto(`${baseUrl}/dashboard/refunds`);
    await page.getByRole('heading', { level: 1, name: 'Refunds' }).waitFor();
    await checkTable(page, 'refunds', 'table[aria-label=Refunds] td.num', 'table[aria-label=Refunds] td.date');

    await page.goto(`${baseUrl}/dashboard/sessions/${sessionId}`);
    await page.getByRole('heading', { name: 'Refunds', exact: true }).waitFor();
    await checkTable(page, 'session-refunds', 'table[aria-label=Refunds] td.num', 'table[aria-label=Refunds] td.date');

    await page.goto(`${baseUrl}/dashboard/payouts`);
    await page.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
    assert.ok(await page.getByText('GHS 1,234.50').first().isVisible(), `the payout ${payoutId} is listed`);
    await checkTable(page, 'payouts', 'main table td.num', 'main table td.date');

    await page.goto(`${baseUrl}/dashboard/links`);
    await page.getByRole('link', { name: 'Kente stole' }).waitFor();
    await checkTable(page, 'links', 'main table td.money', 'main table td.date');

    await page.goto(`${baseUrl}/dashboard/exports`);
    await page.getByRole('table', { name: 'Daily settlement summary' }).waitFor();
    await checkTable(
      page,
      'exports',
      'table[aria-label="Daily settlement summary"] tbody td.num',
      'table[aria-label="Daily settlement summary"] tbody td.date',
    );
    assert.ok(await page.getByRole('rowheader', { name: 'Total' }).isVisible(), 'the total row');
    assert.ok(linkId.length > 0);
    await close();
  });
});
