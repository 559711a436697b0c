// Issue 36, item 1: the dashboard home with a month of generated Test history (scripts/demo-history.ts: several
// rails and networks, failures with reasons, refunds, a settlement) in Chromium at 1280 and 390 px: axe-core
// finds no violation at either width on each range, nothing makes the page scroll sideways, money stays on one
// line, and the screenshots land in test-results/dashboard-home-*.png.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { generateDemoHistory, type DemoHistory } from '../../scripts/demo-history.ts';
import type { TestContext } from '../support/helpers.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { axeViolations, consolePage, DESKTOP, PHONE, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'dashboard home passphrase 36';
/** The demo's budget on embedded storage (its brief: under 30 s). */
const DEMO_MS_MAX = 30_000;

describe('the dashboard home with a month of Test history in Chromium', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  let m: CreatedMerchant;
  const email = `home-${randomUUID().slice(0, 8)}@example.com`;
  let made: DemoHistory;
  let demoMs = 0;

  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    m = await createMerchant(
      t.db,
      { name: 'Adwoa Textiles', email, password: PASSWORD, webhookUrl: null },
      t.webhookTargets,
    );
    const started = Date.now();
    made = await generateDemoHistory(t.app, t.db, m);
    demoMs = Date.now() - started;
  });

  it('generates the month within its budget: payments, failures, refunds and a settlement', (ctx) => {
    ctx.diagnostic(`demo history: ${demoMs} ms, ${JSON.stringify(made)}`);
    assert.ok(demoMs < DEMO_MS_MAX, `the demo took ${demoMs} ms`);
    assert.ok(made.paid >= 30, JSON.stringify(made));
    assert.ok(made.failedAttempts >= 5, JSON.stringify(made));
    assert.ok(made.refunds >= 2, JSON.stringify(made));
    assert.equal(made.settlements, 1, JSON.stringify(made));
  });

  it('each range has no axe violation at 1280 and 390 px, money on one line, and is screenshotted', async () => {
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', email, PASSWORD);
    for (const range of ['30d', 'today', '7d', '90d']) {
      const res = await page.goto(`${baseUrl}/dashboard?range=${range}`);
      assert.equal(res?.status(), 200, range);
      await page.getByRole('img', { name: /Gross and net per/ }).waitFor();
      for (const size of [DESKTOP, PHONE]) {
        await page.setViewportSize(size);
        assert.deepEqual(await axeViolations(page), [], `${range} at ${size.width} px`);
        // Every money cell is one line tall (no "GHS" above its figure).
        const wrapped = await page.$$eval('td.num', (cells) =>
          cells
            .filter((cell) => (cell as HTMLElement).offsetParent !== null)
            .filter((cell) => {
              const range = document.createRange();
              range.selectNodeContents(cell);
              return range.getClientRects().length > 1;
            })
            .map((cell) => cell.textContent),
        );
        assert.deepEqual(wrapped, [], `${range} at ${size.width} px: money on one line`);
      }
      await page.setViewportSize(DESKTOP);
      await screenshots(page, `dashboard-home-${range}`);
    }
    // The month has the settlement's next run and the figures the chart draws.
    await page.goto(`${baseUrl}/dashboard`);
    assert.match(await page.locator('#next-settlement').innerText(), /Expected amount/);
    assert.notEqual(await page.locator('#total-gross').innerText(), 'GHS 0.00');
    await close();
  });
});
