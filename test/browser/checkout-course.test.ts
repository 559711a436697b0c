// A payer can always change course (issue 31), in Test mode, in Debian's Chromium at 360 px: "Use another
// number or method" from every waiting screen (the MoMo prompt, the Telecel code, a Test card, bank transfer
// details, the cash slip) back to the method choice with the number kept, a card left for MoMo, a late
// success on the cancelled attempt refunded automatically, a ported number warned about and paid, a decline's
// plain reason with the number kept, the countdown and the network's way to approve (also after a reload),
// resend where the provider can, the provider's reference and the card on success, the same change without
// JavaScript, and the Pay button in view at 360x740 once the number is typed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import { simulate } from '../support/checkout.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { assertCleanRun, checkoutScreenshots, heading, NARROW_PHONE, schoolFeesSession } from './checkout-helpers.ts';
import { trackedPage } from './helpers.ts';

const CHANGE = 'Use another number or method';

describe('a payer changes course on the payer page, in a browser', () => {
  let t: TestContext;
  let base: string;
  let browser: Browser;
  useBrowserApp((app) => {
    ({ t, base, browser } = app);
  });

  /** A Test session of GHS 500.00 with two invoice lines, a description and a customer (a tall summary). */
  const newSession = () => schoolFeesSession(t);
  const attempts = (sessionId: string) =>
    t.db.query<{
      id: string;
      rail: string;
      status: string;
      network: string | null;
      phone: string | null;
      failure_reason: string | null;
    }>(
      'SELECT id, rail, status, network, phone, failure_reason FROM payment_attempts WHERE session_id = $1 ORDER BY created_at',
      [sessionId],
    );
  const pending = async (sessionId: string) => (await attempts(sessionId)).find((a) => a.status === 'pending')!;

  /** Mobile Money on a network with a number, then the Pay button. */
  async function payMomo(page: Page, network: string, phone: string) {
    await page.getByRole('radio', { name: /^Mobile Money/ }).check();
    await page.getByLabel('Mobile Money number').fill(phone);
    await page.getByRole('radio', { name: network, exact: true }).check();
    await page.locator('#pay-button').click();
  }

  /** Presses "Use another number or method" and checks the cancel went to the API with an Idempotency-Key. */
  async function changeCourse(page: Page) {
    const cancel = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/cancel'));
    await page.getByRole('button', { name: CHANGE }).click();
    const request = await cancel;
    assert.match(request.headers()['idempotency-key'] ?? '', /^[0-9a-f]{32}$/);
    return request;
  }

  it('change of number: from the MoMo prompt back to the choice with the number kept, another number paid; the first attempt cancelled (changed_course)', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await payMomo(page, 'MTN MoMo', '024 123 4567');
    await heading(page, 'Approve the payment on your phone').waitFor();
    const first = await pending(id);
    await checkoutScreenshots(page, 'course-momo-waiting');

    await changeCourse(page);
    await heading(page, 'Choose another number or method').waitFor();
    await page.locator('#live', { hasText: 'Payment stopped. Choose another number or method.' }).waitFor();
    await page.getByText('You stopped the payment by Mobile Money (MTN MoMo ending 4567)').waitFor();
    // The number and its network are kept (from this tab, never from the page's HTML).
    assert.equal(await page.getByLabel('Mobile Money number').inputValue(), '024 123 4567');
    assert.equal(await page.getByRole('radio', { name: 'MTN MoMo', exact: true }).isChecked(), true);
    assert.equal((await page.content()).includes('0241234567'), false);
    const cancelled = (await attempts(id)).find((a) => a.id === first.id)!;
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.failure_reason, 'changed_course');
    assert.equal((await call(t, 'GET', `/api/v1/checkout/sessions/${id}`)).json().status, 'open');
    await checkoutScreenshots(page, 'course-changed');

    await page.getByLabel('Mobile Money number').fill('054 987 6543');
    await page.locator('#pay-button').click();
    await heading(page, 'Approve the payment on your phone').waitFor();
    await page.getByText('wallet ending 6543').waitFor();
    await page.getByRole('button', { name: 'Paid', exact: true }).click();
    await heading(page, 'Payment successful').waitFor();
    await page.getByText('MTN MoMo ending 6543').waitFor();
    const rows = await attempts(id);
    assert.deepEqual(
      rows.map((a) => [a.status, a.phone]),
      [
        ['cancelled', '+233241234567'],
        ['paid', '+233549876543'],
      ],
    );
    assertCleanRun(g);
    await g.close();
  });

  it('change of method from each waiting screen: the Telecel code, a Test card, bank transfer details and the cash slip', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);

    await payMomo(page, 'Telecel Cash', '020 123 4567');
    await heading(page, 'Enter your Telecel Cash code').waitFor();
    await page.getByRole('button', { name: CHANGE }).waitFor();
    await checkoutScreenshots(page, 'course-code', { phoneOnly: true });
    await changeCourse(page);
    await heading(page, 'Choose another number or method').waitFor();
    assert.equal(await page.getByLabel('Mobile Money number').inputValue(), '020 123 4567');

    await page.getByRole('radio', { name: /^Card/ }).check();
    await page.locator('#pay-button').click();
    await heading(page, 'Test card payment').waitFor();
    await changeCourse(page);
    await heading(page, 'Choose another number or method').waitFor();
    await page.getByText('You stopped the payment by Card').waitFor();

    await page.getByRole('radio', { name: /^Bank transfer/ }).check();
    await page.getByRole('button', { name: 'Get bank transfer details' }).click();
    await heading(page, 'Transfer GHS 500.00 from your bank').waitFor();
    await checkoutScreenshots(page, 'course-bank-transfer', { phoneOnly: true });
    await changeCourse(page);
    await heading(page, 'Choose another number or method').waitFor();

    // The cash slip gives way to another method by itself: its screen opens the choice in place.
    await page.getByRole('radio', { name: /^Cash at a bank branch/ }).check();
    await page.getByRole('button', { name: 'Get a cash deposit slip' }).click();
    await heading(page, 'Your cash deposit slip').waitFor();
    await page.getByText(CHANGE).click();
    await page.getByRole('radio', { name: /^Mobile Money/ }).check();
    assert.equal(await page.getByLabel('Mobile Money number').inputValue(), '020 123 4567');
    await page.locator('#pay-button').click();
    await heading(page, 'Enter your Telecel Cash code').waitFor();

    const rows = await attempts(id);
    assert.deepEqual(
      rows.map((a) => `${a.rail}:${a.status}`),
      ['momo:cancelled', 'card:cancelled', 'bank_transfer:cancelled', 'cash:cancelled', 'momo:pending'],
    );
    assert.deepEqual(
      rows.slice(0, 3).map((a) => a.failure_reason),
      ['changed_course', 'changed_course', 'changed_course'],
    );
    assertCleanRun(g);
    await g.close();
  });

  it('card abandoned, then MoMo paid: the session is paid once, by MoMo', async () => {
    const { m, id } = await newSession();
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await page.getByRole('radio', { name: /^Card/ }).check();
    await page.locator('#pay-button').click();
    await heading(page, 'Test card payment').waitFor();
    await changeCourse(page);
    await payMomo(page, 'MTN MoMo', '024 123 4567');
    await heading(page, 'Approve the payment on your phone').waitFor();
    await page.getByRole('button', { name: 'Paid', exact: true }).click();
    await heading(page, 'Payment successful').waitFor();
    const session = await call(t, 'GET', `/api/v1/sessions/${id}`, { key: m.test_api_key });
    assert.equal(session.json().status, 'success');
    assert.equal(session.json().payment.rail, 'momo');
    assert.deepEqual(
      (await attempts(id)).map((a) => `${a.rail}:${a.status}`),
      ['card:cancelled', 'momo:paid'],
    );
    assertCleanRun(g);
    await g.close();
  });

  it('a late success on the cancelled attempt after another paid is refunded in full automatically', async () => {
    const { m, id } = await newSession();
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await payMomo(page, 'MTN MoMo', '024 123 4567');
    await heading(page, 'Approve the payment on your phone').waitFor();
    const first = await pending(id);
    await changeCourse(page);
    await page.getByRole('radio', { name: /^Card/ }).check();
    await page.locator('#pay-button').click();
    await heading(page, 'Test card payment').waitFor();
    await page.getByRole('button', { name: 'Paid', exact: true }).click();
    await heading(page, 'Payment successful').waitFor();

    // The payer approves the old prompt after all: the simulate endpoint pays the cancelled attempt.
    await simulate(t, m, first.id, 'paid');
    const refunds = await call(t, 'GET', '/api/v1/refunds', { key: m.test_api_key, query: { session_id: id } });
    assert.equal(refunds.statusCode, 200, refunds.body);
    const list = refunds.json().data as { attempt_reference: string; amount_minor: number; reason: string }[];
    assert.equal(list.length, 1, refunds.body);
    assert.equal(list[0]!.attempt_reference, first.id);
    assert.equal(list[0]!.amount_minor, 50750);
    assert.match(list[0]!.reason, /^Duplicate payment/);
    const session = (await call(t, 'GET', `/api/v1/sessions/${id}`, { key: m.test_api_key })).json();
    assert.equal(session.status, 'success');
    assert.equal(session.payment.rail, 'card');
    await page.reload();
    await heading(page, 'Payment successful').waitFor();
    assertCleanRun(g);
    await g.close();
  });

  it('a ported number: a warning with a way on and a way to switch, never a refusal; paid on the network chosen', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await page.getByRole('radio', { name: 'Telecel Cash', exact: true }).check();
    await page.getByLabel('Mobile Money number').fill('024 123 4567');
    await page
      .locator('#phone-msg', { hasText: 'This number usually belongs to MTN. Pay with Telecel Cash anyway?' })
      .waitFor();
    assert.equal(await page.getAttribute('#phone', 'aria-invalid'), 'false');
    assert.equal(
      await page.getByRole('radio', { name: 'Telecel Cash', exact: true }).isChecked(),
      true,
      'the chosen network stays',
    );
    await page.getByRole('button', { name: 'Use MTN MoMo instead' }).waitFor();
    await checkoutScreenshots(page, 'course-ported');
    await page.getByRole('button', { name: 'Yes, pay with Telecel Cash' }).click();
    await heading(page, 'Enter your Telecel Cash code').waitFor();
    const attempt = await pending(id);
    assert.equal(attempt.network, 'telecel');
    assert.equal(attempt.phone, '+233241234567');

    // The way to switch: back on the choice, the other button picks the usual network.
    await changeCourse(page);
    await heading(page, 'Choose another number or method').waitFor();
    await page.locator('#phone-msg', { hasText: 'This number usually belongs to MTN.' }).waitFor();
    await page.getByRole('button', { name: 'Use MTN MoMo instead' }).click();
    assert.equal(await page.getByRole('radio', { name: 'MTN MoMo', exact: true }).isChecked(), true);
    await page.locator('#phone-msg', { hasText: 'MTN MoMo number' }).waitFor();
    assert.equal(await page.locator('[data-ported]').isHidden(), true);
    // A number of no network is still refused before it is sent.
    await page.getByLabel('Mobile Money number').fill('031 123 4567');
    await page.locator('#phone-msg', { hasText: 'This number is not on a Mobile Money network' }).waitFor();
    assert.equal(await page.getAttribute('#phone', 'aria-invalid'), 'true');
    assertCleanRun(g);
    await g.close();
  });

  it('a decline says why in plain words and keeps the number for a retry', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await payMomo(page, 'MTN MoMo', '024 123 4567');
    await heading(page, 'Approve the payment on your phone').waitFor();
    await page.getByRole('button', { name: 'Failed', exact: true }).click();
    await heading(page, 'Payment not completed').waitFor();
    await page
      .locator('#view')
      .getByText('The payment did not go through. Try again, or use another number or method.')
      .waitFor();
    assert.equal(await page.getByLabel('Mobile Money number').inputValue(), '024 123 4567');
    // With the provider's reason (as an adapter maps it), the page says that reason.
    const failed = (await attempts(id)).at(-1)!;
    await t.db.query("UPDATE payment_attempts SET failure_reason = 'insufficient_funds' WHERE id = $1", [failed.id]);
    await page.reload();
    await page
      .locator('#view')
      .getByText('There was not enough money for this payment. Top up and try again, or use another number or method.')
      .waitFor();
    await page
      .getByText('Mobile Money (MTN MoMo ending 4567), GHS 507.50: you have not been charged for it.')
      .waitFor();
    assert.equal(await page.getByLabel('Mobile Money number').inputValue(), '024 123 4567', 'kept after a reload too');
    await checkoutScreenshots(page, 'course-declined');
    await page.locator('#pay-button').click();
    await heading(page, 'Approve the payment on your phone').waitFor();
    assertCleanRun(g);
    await g.close();
  });

  it('honest waiting: resend with resends left in Test, a countdown from approve_within_s and the network’s way to approve after 30 s, the same after a reload', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await payMomo(page, 'MTN MoMo', '024 123 4567');
    await heading(page, 'Approve the payment on your phone').waitFor();
    const attempt = await pending(id);
    const status = (await call(t, 'GET', `/api/v1/checkout/sessions/${id}/provider-attempts/${attempt.id}`)).json();
    assert.equal(status.resend_supported, true, 'the Test simulator can prompt again');
    await page.getByRole('button', { name: 'Resend prompt' }).waitFor();
    await page.getByText(`You can resend it ${status.resends_left} more times.`).waitFor();
    assert.equal(await page.locator('[data-countdown]').count(), 0, 'no countdown where the provider gives no window');
    assert.equal(await page.getByText('Still waiting').isVisible(), false);

    // As a Live MTN attempt's instructions say (approve_within_s, approval_help), 25 s after it began.
    const help = 'Dial *170#, choose My Wallet, then My Approvals, and approve the payment.';
    await t.db.query(
      "UPDATE payment_attempts SET instructions = instructions || $2::jsonb, created_at = now() - interval '25 seconds' WHERE id = $1",
      [attempt.id, JSON.stringify({ approve_within_s: 300, approval_help: help })],
    );
    await page.reload();
    const clock = page.locator('[data-clock]');
    assert.match(await clock.innerText(), /^4:3[0-5]$/);
    const helpText = page.locator('#view').getByText(`No prompt on your phone? ${help}`);
    assert.equal(await helpText.isHidden(), true, 'the way to approve waits for 30 s');
    await helpText.waitFor({ timeout: 10_000 });
    assert.match(await clock.innerText(), /^4:[23]\d$/, 'the countdown runs');
    await checkoutScreenshots(page, 'course-honest-waiting');
    // A reload shows the same: the help at once, the clock from created_at.
    await page.reload();
    assert.equal(await helpText.isVisible(), true);
    assert.match(await clock.innerText(), /^4:[23]\d$/);

    // The window over: said in words, with the way out beside it.
    await t.db.query("UPDATE payment_attempts SET created_at = now() - interval '301 seconds' WHERE id = $1", [
      attempt.id,
    ]);
    await page.reload();
    await page.locator('#view').getByText('The time to approve has run out.').waitFor();
    await page.getByRole('button', { name: CHANGE }).waitFor();
    assertCleanRun(g);
    await g.close();
  });

  it('success shows the provider’s reference and the card (Visa •••• 4081), never the att_ id', async () => {
    const { m, id } = await newSession();
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await page.getByRole('radio', { name: /^Card/ }).check();
    await page.locator('#pay-button').click();
    await heading(page, 'Test card payment').waitFor();
    const attempt = await pending(id);
    // What a Live card's verify reports (Paystack's transaction id, authorization.card_type and last4).
    await t.db.query(
      "UPDATE payment_attempts SET provider_transaction_id = '4099260516', card_brand = 'visa ', card_last4 = '4081' WHERE id = $1",
      [attempt.id],
    );
    await simulate(t, m, attempt.id, 'paid');
    await heading(page, 'Payment successful').waitFor({ timeout: 15_000 });
    const rows = (await page.locator('#view .kv > div').allInnerTexts()).map((text) =>
      text.replace(/\s+/g, ' ').trim(),
    );
    assert.ok(rows.includes('Paid with Visa •••• 4081'), rows.join(' | '));
    assert.ok(rows.includes('Payment reference 4099260516'), rows.join(' | '));
    assert.equal(await page.getByText(attempt.id).count(), 0);
    await checkoutScreenshots(page, 'course-card-success');
    assertCleanRun(g);
    await g.close();
  });

  it('without JavaScript, "Use another number or method" posts to the page, which cancels and shows the choice', async () => {
    const { id } = await newSession();
    // The attempt is started through the API (without the script the page cannot start one).
    const quote = (await call(t, 'GET', `/api/v1/checkout/sessions/${id}/quote`)).json();
    const started = await call(t, 'POST', `/api/v1/checkout/sessions/${id}/provider-attempts`, {
      body: { rail: 'momo', operator: 'mtn', phone: '0241234567', amount_minor: quote.surcharges.momo.total_minor },
    });
    assert.equal(started.statusCode, 201, started.body);
    const context = await browser.newContext({ viewport: NARROW_PHONE, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${base}/pay/${id}`);
    await heading(page, 'Approve the payment on your phone').waitFor();
    await Promise.all([page.waitForURL(`${base}/pay/${id}`), page.getByRole('button', { name: CHANGE }).click()]);
    await heading(page, 'Choose another number or method').waitFor();
    assert.equal((await attempts(id))[0]!.status, 'cancelled');
    // A second post of the same form (a double tap, the back button) changes nothing and lands on the page.
    const again = await context.request.post(`${base}/pay/${id}/change`, {
      form: { attempt_reference: started.json().attempt_reference },
      maxRedirects: 0,
    });
    assert.equal(again.status(), 303);
    // Another session's attempt is not found.
    const other = await newSession();
    const theirs = await context.request.post(`${base}/pay/${other.id}/change`, {
      form: { attempt_reference: started.json().attempt_reference },
      maxRedirects: 0,
    });
    assert.equal(theirs.status(), 404);
    await context.close();
  });

  it('at 360x740 the Pay button is in view once the number is typed (field focused and filled)', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await page.focus('#phone');
    await page.keyboard.type('024 123 4567');
    const layout = await page.evaluate(() => {
      const [button, phone] = ['#pay-button', '#phone']
        .map((selector) => document.querySelector(selector)!.getBoundingClientRect())
        .map((r) => ({ top: Math.round(r.top), bottom: Math.round(r.bottom) }));
      return {
        button: button!,
        phone: phone!,
        focused: document.activeElement!.id,
        height: window.innerHeight,
        scrollY: Math.round(window.scrollY),
      };
    });
    console.log(
      `360x740, number typed: Pay button ${layout.button.top}-${layout.button.bottom} px, phone field ${layout.phone.top}-${layout.phone.bottom} px, scrolled ${layout.scrollY} px`,
    );
    assert.equal(layout.focused, 'phone');
    assert.ok(
      layout.button.top >= 0 && layout.button.bottom <= layout.height,
      `the Pay button ${JSON.stringify(layout.button)} is within ${layout.height} px`,
    );
    assert.ok(
      layout.phone.top >= 0 && layout.phone.bottom <= layout.height,
      `the phone field ${JSON.stringify(layout.phone)} stays in view`,
    );
    await page.screenshot({ path: 'test-results/checkout-course-pay-in-view-360.png' });
    assertCleanRun(g);
    await g.close();
  });
});
