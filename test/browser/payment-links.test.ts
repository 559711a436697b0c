// Issue 35 in Chromium at 360 px: three payment links made through the API (a fixed amount; an amount the payer
// chooses with a required custom field; a single-use link) are each opened at /l/{slug}, filled and submitted,
// paid on the payer page with the Test MoMo simulator's Paid button, and their receipt read; the open link is
// first submitted without its required field (422, the message beside it, no session), and the single-use link,
// once paid, answers 410 "has been used". Then the owner reads the links on the dashboard (list and a link's page
// with its payments and totals, both passing axe) at 390 and 1280 px. Screenshots of every screen go to test-results/
// payment-links-*.png. The app's BASE_URL is its own listening address, so a link's url and the session it
// redirects to stay on 127.0.0.1.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import type { TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import { freePort } from '../support/live.ts';
import { assertCleanRun, heading, NARROW_PHONE } from './checkout-helpers.ts';
import { axeViolations, consolePage, screenshots as consoleScreenshots, signIn } from './console-support.ts';
import { screenshots, trackedPage } from './helpers.ts';

const PASSWORD = 'links for everyone 35';
const PORT = await freePort();

/** Checks that nothing scrolls sideways at 360 px, then saves test-results/payment-links-{name}-360.png. */
async function phoneShot(page: Page, name: string): Promise<void> {
  await page.setViewportSize(NARROW_PHONE);
  const layout = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    offenders: [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${String(el.className)}`),
  }));
  assert.ok(
    layout.scrollWidth <= layout.innerWidth,
    `${name} at 360 px scrolls sideways (${layout.scrollWidth} px): ${layout.offenders.join(', ')}`,
  );
  await screenshots(page, `payment-links-${name}`, [NARROW_PHONE]);
}

interface Link {
  id: string;
  url: string;
}

describe('payment links in Chromium: three payers at 360 px, their receipts, and the dashboard', () => {
  let t: TestContext;
  let base: string;
  let browser: Browser;
  let m: CreatedMerchant;
  const email = `links-${randomUUID().slice(0, 8)}@example.com`;
  const merchantName = 'Adenta Community School';
  useBrowserApp(
    async (app) => {
      ({ t, base, browser } = app);
      m = await createMerchant(t.db, { name: merchantName, email, password: PASSWORD, webhookUrl: null });
    },
    { PORT: String(PORT), BASE_URL: `http://127.0.0.1:${PORT}` },
  );

  const newLink = async (body: Record<string, unknown>): Promise<Link> => {
    const res = await call(t, 'POST', '/api/v1/payment-links', { key: m.test_api_key, body: body as never });
    assert.equal(res.statusCode, 201, res.body);
    const link = res.json() as Link;
    assert.ok(link.url.startsWith(`${base}/l/`), link.url);
    return link;
  };

  /** On the payer page: MoMo (first and chosen) with an MTN number, Paid from the Test banner, then the receipt. */
  async function payAndReadReceipt(page: Page, name: string, amount: string): Promise<string> {
    assert.match(new URL(page.url()).pathname, /^\/pay\/cs_\w+$/, 'the link leads to its session');
    const sessionId = new URL(page.url()).pathname.split('/')[2]!;
    await page.getByText('Test mode — no real money moves').waitFor();
    await phoneShot(page, `${name}-pay`);
    await page.fill('#phone', '024 123 4567');
    await page.focus('#phone');
    await page.keyboard.press('Enter');
    await heading(page, 'Approve the payment on your phone').waitFor();
    await page.getByRole('button', { name: 'Paid', exact: true }).click();
    await heading(page, 'Payment successful').waitFor();
    await phoneShot(page, `${name}-paid`);
    await Promise.all([
      page.waitForURL((url) => url.pathname === `/pay/${sessionId}/receipt`),
      page.getByRole('link', { name: 'View receipt' }).click(),
    ]);
    const text = (await page.locator('body').innerText()).replace(/\s+/g, ' ');
    assert.ok(text.includes(merchantName), `the receipt names the merchant: ${text.slice(0, 400)}`);
    assert.ok(text.includes(amount), `the receipt shows ${amount}: ${text.slice(0, 400)}`);
    const [row] = await t.db.query<{ receipt_number: string | null; status: string }>(
      'SELECT receipt_number, status FROM checkout_sessions WHERE id = $1',
      [sessionId],
    );
    assert.equal(row?.status, 'success');
    assert.ok(row.receipt_number, 'a paid session has a receipt number');
    assert.ok(text.replace(/ /g, '').includes(row.receipt_number), `the receipt shows ${row.receipt_number}`);
    await phoneShot(page, `${name}-receipt`);
    return sessionId;
  }

  it('a fixed link: the payer names themself, pays GHS 25.00 with MoMo and reads the receipt', async () => {
    const link = await newLink({ name: 'PTA dues', description: 'Term 1 dues', amount_minor: 2_500 });
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    const res = await page.goto(link.url);
    assert.equal(res?.status(), 200);
    await page.getByText('PTA dues').waitFor();
    await phoneShot(page, 'fixed-form');
    await page.getByLabel('Your name').fill('Ama Mensah');
    await Promise.all([
      page.waitForURL((url) => url.pathname.startsWith('/pay/')),
      page.getByRole('button', { name: 'Pay GHS 25.00' }).click(),
    ]);
    const sessionId = await payAndReadReceipt(page, 'fixed', 'GHS 25.00');
    const [session] = await t.db.query<{ payment_link_id: string; customer_name: string }>(
      'SELECT payment_link_id, customer_name FROM checkout_sessions WHERE id = $1',
      [sessionId],
    );
    assert.equal(session?.payment_link_id, link.id);
    assert.equal(session.customer_name, 'Ama Mensah');
    assertCleanRun(g);
    await g.close();
  });

  it('an open-amount link with a required custom field: refused without it (422, no session), then paid and receipted', async () => {
    const link = await newLink({
      name: 'Harvest offering',
      amount_min_minor: 500,
      amount_max_minor: 100_000,
      custom_fields: [{ key: 'member_no', label: 'Member number', type: 'text', required: true }],
    });
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(link.url);
    await page.getByText('Amount of your choice').waitFor();
    await phoneShot(page, 'open-form');
    await page.getByLabel('Amount (GHS)').fill('35.50');
    await page.getByLabel('Your name').fill('Yaw Boateng');
    // The browser would stop an empty required field itself; the server's refusal is what is checked here.
    await page.locator('form').evaluate((form) => form.setAttribute('novalidate', ''));
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(new URL(link.url).pathname)),
      page.getByRole('button', { name: 'Continue to payment' }).click(),
    ]);
    assert.equal(refused.status(), 422);
    await page.getByRole('alert').waitFor();
    assert.equal(await page.getByLabel('Amount (GHS)').inputValue(), '35.50', 'what was typed is kept');
    assert.equal(await page.locator('#f-member_no').getAttribute('aria-invalid'), 'true');
    await phoneShot(page, 'open-refused');
    const none = await t.db.query('SELECT id FROM checkout_sessions WHERE payment_link_id = $1', [link.id]);
    assert.equal(none.length, 0, 'no session made');

    await page.getByLabel('Member number').fill('ADC-0042');
    await Promise.all([
      page.waitForURL((url) => url.pathname.startsWith('/pay/')),
      page.getByRole('button', { name: 'Continue to payment' }).click(),
    ]);
    const sessionId = await payAndReadReceipt(page, 'open', 'GHS 35.50');
    const text = await page.locator('body').innerText();
    assert.match(text, /Member number/, 'the receipt lists the custom field');
    assert.match(text, /ADC-0042/);
    const [session] = await t.db.query<{ custom_fields: Record<string, string>; amount_minor: number }>(
      'SELECT custom_fields, amount_minor FROM checkout_sessions WHERE id = $1',
      [sessionId],
    );
    assert.deepEqual(session?.custom_fields, { member_no: 'ADC-0042' });
    assert.equal(Number(session.amount_minor), 3_550);
    assertCleanRun(g);
    await g.close();
  });

  it('a single-use link is paid once, then answers 410 "has been used"', async () => {
    const link = await newLink({ name: 'Uniform, size 8', amount_minor: 12_000, single_use: true });
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(link.url);
    await phoneShot(page, 'single-form');
    await Promise.all([
      page.waitForURL((url) => url.pathname.startsWith('/pay/')),
      page.getByRole('button', { name: 'Pay GHS 120.00' }).click(),
    ]);
    await payAndReadReceipt(page, 'single', 'GHS 120.00');
    const again = await page.goto(link.url);
    assert.equal(again?.status(), 410);
    await heading(page, 'This payment link has been used').waitFor();
    await page.getByText('Nothing was charged.', { exact: false }).waitFor();
    await phoneShot(page, 'single-used');
    assertCleanRun(g);
    await g.close();
  });

  it('the owner reads the links and a link’s payments on the dashboard (1280 and 390 px)', async () => {
    const owner = await consolePage(browser);
    const { page } = owner;
    await signIn(page, base, '/dashboard', email, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payment links' }).click();
    await heading(page, 'Payment links (test)').waitFor();
    for (const name of ['PTA dues', 'Harvest offering', 'Uniform, size 8'])
      await page.getByRole('link', { name, exact: true }).waitFor();
    const usedUp = await page.getByRole('row').filter({ hasText: 'Uniform, size 8' }).innerText();
    assert.match(
      usedUp,
      /1 \/ 1\s+GHS 120\.00\s+used up/,
      'the paid single-use link is used up, what it collected beside it',
    );
    assert.deepEqual(await axeViolations(page), [], 'the list and its New link form pass axe');
    await consoleScreenshots(page, 'payment-links-dashboard-list');
    await page.getByRole('link', { name: 'Harvest offering', exact: true }).click();
    await heading(page, /Harvest offering/).waitFor();
    assert.equal(await page.locator('#succeeded-count').innerText(), '1');
    assert.equal(await page.locator('#succeeded-sum').innerText(), 'GHS 35.50');
    await page.getByText('ADC-0042').waitFor();
    // The QR code the page shows loads (an image of the link's own /qr.svg).
    const qrWidth = await page.locator('img[alt^="QR code"]').evaluate((img) => (img as HTMLImageElement).naturalWidth);
    assert.ok(qrWidth > 0, 'the QR code loaded');
    assert.deepEqual(await axeViolations(page), [], "the link's page passes axe");
    await consoleScreenshots(page, 'payment-links-dashboard-link');
    await owner.close();
  });
});
