// One sweep of every GET page of the merchant dashboard in Debian's Chromium (issue 36, "Done when"): a
// merchant with a little of everything (a paid session refunded in part, a payout, a payment link, a webhook
// endpoint) signs in, and each page of PAGES, at 1280 and at 390 px, answers 200, has no axe-core violation,
// never scrolls sideways itself (a wide table scrolls inside its .table-wrap), and logs no console error or
// uncaught exception; screenshots go to test-results/dashboard-sweep-{page}-{width}.png.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
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
import {
  axeViolations,
  type ConsolePage,
  consolePage,
  DESKTOP,
  PHONE,
  screenshots,
  signIn,
} from './console-support.ts';

const PASSWORD = 'every page at both widths 36';

/** The ids of the merchant's objects, for the pages of one object. */
interface Fixture {
  sessionId: string;
  linkId: string;
  payoutId: string;
  endpointId: string;
}

/**
 * Every GET page of the merchant dashboard: its name (the screenshots' too), its path, and the level-1
 * heading it shows. A new page is one more line here.
 */
const PAGES: { name: string; path: (f: Fixture) => string; heading: RegExp }[] = [
  { name: 'home', path: () => '/dashboard', heading: /./ },
  { name: 'payments', path: () => '/dashboard/sessions', heading: /^Payments$/ },
  { name: 'payment', path: (f) => `/dashboard/sessions/${f.sessionId}`, heading: /^Session / },
  { name: 'links', path: () => '/dashboard/links', heading: /^Payment links/ },
  { name: 'link', path: (f) => `/dashboard/links/${f.linkId}`, heading: /Kente stole/ },
  { name: 'refunds', path: () => '/dashboard/refunds', heading: /^Refunds$/ },
  { name: 'balance', path: () => '/dashboard/balance', heading: /^Balance/ },
  { name: 'payouts', path: () => '/dashboard/payouts', heading: /^Payouts$/ },
  { name: 'payout', path: (f) => `/dashboard/payouts/${f.payoutId}`, heading: /Payout/ },
  { name: 'new-payout', path: () => '/dashboard/payouts/new', heading: /payout/i },
  { name: 'recipients', path: () => '/dashboard/recipients', heading: /Recipients/ },
  { name: 'settlements', path: () => '/dashboard/settlements', heading: /Settlement/ },
  { name: 'exports', path: () => '/dashboard/exports', heading: /Exports?/ },
  { name: 'revenue-lines', path: () => '/dashboard/revenue-lines', heading: /^Revenue lines$/ },
  { name: 'developers', path: () => '/dashboard/developers', heading: /Developers/ },
  { name: 'webhook', path: (f) => `/dashboard/webhooks/${f.endpointId}`, heading: /^Delivery log$/ },
  { name: 'settings', path: () => '/dashboard/settings', heading: /Settings/ },
  { name: 'account', path: () => '/dashboard/account', heading: /account/i },
  { name: 'second-factor', path: () => '/dashboard/account/2fa', heading: /two-factor/i },
  { name: 'activation', path: () => '/dashboard/activation', heading: /./ },
];

/** At this width: nothing wider than the viewport but inside a .table-wrap (the page itself never scrolls sideways). */
async function sidewaysScroll(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const scroller = document.scrollingElement ?? document.documentElement;
    if (scroller.scrollWidth <= window.innerWidth) return null;
    const offenders = [...document.querySelectorAll('body *')]
      .filter((el) => !el.closest('.table-wrap') && el.getBoundingClientRect().right > window.innerWidth + 1)
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className ? `.${el.className}` : ''}`);
    return `${scroller.scrollWidth} px wide for ${window.innerWidth}; too wide: ${offenders.join(', ')}`;
  });
}

describe('every merchant dashboard page in Chromium (1280 and 390 px)', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  let m: CreatedMerchant;
  let email: string;
  let fixture: Fixture;
  let signedIn: ConsolePage | undefined;
  const consoleErrors: string[] = [];

  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    await t.db.query('DELETE FROM sign_in_throttles WHERE key = $1', [addressKey('merchant', '127.0.0.1')]);
    email = `sweep-${randomUUID().slice(0, 8)}@example.com`;
    m = await createMerchant(
      t.db,
      { name: `Esi Sweep ${randomUUID().slice(0, 4)}`, email, password: PASSWORD, webhookUrl: WEBHOOK_URL },
      t.webhookTargets,
    );
    // A paid session refunded in part, a payout to a wallet (its key needs a webhook endpoint), and a payment link.
    const session = await createSession(t, m, { amount_minor: 2_500 });
    const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', 2_500) });
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const refund = await api(t, m.test_api_key, 'POST', '/api/v1/refunds', {
      session_id: session.id,
      amount_minor: 1_000,
      reason: 'One of the two mugs arrived broken',
    });
    assert.equal(refund.statusCode, 201, refund.body);
    await fund(t, m.merchant_id, 'test', 500_000);
    const recipient = await momoRecipient(t, m.test_api_key);
    await verifyRecipientsNow(t, recipient.id);
    const payoutId = (await createPayout(t, m.test_api_key, recipient.id, 123_450)).id;
    const link = await api(t, m.test_api_key, 'POST', '/api/v1/payment-links', {
      name: 'Kente stole',
      amount_minor: 45_000,
    });
    assert.equal(link.statusCode, 201, link.body);
    const endpoints = await t.db.query<{ id: string }>(
      `SELECT id FROM webhook_endpoints WHERE merchant_id = $1 AND environment = 'test'`,
      [m.merchant_id],
    );
    assert.equal(endpoints.length, 1, 'the merchant has a Test webhook endpoint');
    fixture = { sessionId: session.id, linkId: link.json().id, payoutId, endpointId: endpoints[0]!.id };
  });

  before(async () => {
    signedIn = await consolePage(browser);
    const { page } = signedIn;
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: uncaught ${error.message}`));
    await signIn(page, baseUrl, '/dashboard', email, PASSWORD);
  });

  after(async () => {
    await signedIn?.close();
  });

  for (const { name, path, heading } of PAGES) {
    it(`${name}: 200, no axe violation, no sideways scroll, no console error, at both widths`, async () => {
      const { page } = signedIn!;
      consoleErrors.length = 0;
      await page.setViewportSize(DESKTOP);
      const url = `${baseUrl}${path(fixture)}`;
      const response = await page.goto(url);
      assert.equal(response?.status(), 200, `${name}: ${url}`);
      assert.equal(new URL(page.url()).pathname, new URL(url).pathname, `${name}: not redirected`);
      await page.getByRole('heading', { level: 1, name: heading }).first().waitFor();
      for (const size of [DESKTOP, PHONE]) {
        await page.setViewportSize(size);
        assert.equal(await sidewaysScroll(page), null, `${name} at ${size.width} px scrolls sideways`);
        assert.deepEqual(await axeViolations(page), [], `${name} at ${size.width} px: axe-core violations`);
      }
      // At each width again: the header within the viewport, nothing but a .table-wrap too wide; the pictures.
      await screenshots(page, `dashboard-sweep-${name}`);
      assert.deepEqual(consoleErrors, [], `${name}: console errors`);
    });
  }

  // test/browser/docs.test.ts checks /docs' policy, axe-core and console; here only that it never scrolls sideways,
  // first as it opens, then with an operation open (Swagger UI's responses table, which src/web/docs.ts keeps
  // within the page's width at 390 px).
  for (const opened of [false, true])
    it(`/docs${opened ? ', an operation open' : ''}: no sideways scroll at either width`, async () => {
      const { page } = signedIn!;
      await page.setViewportSize(DESKTOP);
      const response = await page.goto(`${baseUrl}/docs`);
      assert.equal(response?.status(), 200);
      const operation = page.getByText('Create a hosted checkout session', { exact: true }).first();
      await operation.waitFor({ state: 'visible', timeout: 20_000 });
      if (opened) {
        await operation.click();
        await page.getByText('Responses', { exact: true }).first().waitFor({ state: 'visible' });
      }
      for (const size of [DESKTOP, PHONE]) {
        await page.setViewportSize(size);
        assert.equal(await sidewaysScroll(page), null, `/docs at ${size.width} px scrolls sideways`);
      }
    });
});
