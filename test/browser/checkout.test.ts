// Browser tests of the hosted payment page (/pay/{id}) in Debian's Chromium through playwright-core,
// against a listening test app: MoMo (keyboard only, network from the prefix, resend, the Test banner's
// outcome buttons, the return link), Telecel's verification code with the page polling for the result,
// a failed card attempt retried by bank transfer, the cash slip and its printable page, expiry, an
// unknown id, and the weight of a first load (at most 30 KB on the wire, issue 31). No request may leave 127.0.0.1.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import {
  assertCleanRun,
  checkoutScreenshots,
  heading,
  measureFirstLoad,
  schoolFeesSession,
} from './checkout-helpers.ts';
import { PHONE, trackedPage } from './helpers.ts';

const FIRST_LOAD_BYTES_MAX = 30 * 1024;

describe('hosted payment page in a browser', () => {
  let t: TestContext;
  let base: string;
  let browser: Browser;
  useBrowserApp((app) => {
    ({ t, base, browser } = app);
  });

  /** A Test session of GHS 500.00 with two invoice lines and a callback on this same server. */
  const newSession = (body: Record<string, string | number> = {}) =>
    schoolFeesSession(t, { callbackUrl: `${base}/healthz`, body });
  const focusOutline = (page: Page) => page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);

  it('MoMo by keyboard: network from the prefix, a mismatch message, waiting screen with resend, Paid from the Test banner, success and the return link', async () => {
    const { id, invoiceRef } = await newSession();
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);

    // What is being paid: merchant, amount, description, line items; the Test banner; each rail's total.
    assert.equal(await page.getAttribute('html', 'lang'), 'en');
    await page.getByText('Test mode — no real money moves').waitFor();
    assert.match(await page.locator('h1').innerText(), /Test Merchant/);
    // One amount: the total of the chosen method (Mobile Money, first), its fee among the lines.
    assert.equal(await page.locator('.amount').innerText(), 'GHS 507.50');
    await page.getByText('School fees, term 2').waitFor();
    await page.getByText(invoiceRef).waitFor();
    await page.getByText('Tuition, term 2').waitFor();
    assert.deepEqual(
      (await page.getByRole('list', { name: 'Items' }).getByRole('listitem').allInnerTexts()).map((text) =>
        text.replace(/\s+/g, ' '),
      ),
      ['Exercise books GHS 75.00', 'Tuition, term 2 GHS 425.00', 'Mobile Money fee GHS 7.50', 'Total GHS 507.50'],
    );
    const railText = async (rail: string) =>
      (await page.locator(`label.opt:has(input[value=${rail}])`).innerText()).replace(/\s+/g, ' ');
    assert.match(await railText('momo'), /GHS 507\.50 incl\. GHS 7\.50 fee/);
    assert.match(await railText('card'), /GHS 500\.00 no fee/);
    assert.match(await railText('bank_transfer'), /GHS 500\.00 no fee/);
    assert.match(await railText('cash'), /GHS 502\.00 incl\. GHS 2\.00 fee/);
    await checkoutScreenshots(page, 'choose');

    // Keyboard only: Tab to the method (MoMo is first and chosen), Tab to the network group, Tab to the phone.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement).value), 'momo');
    assert.notEqual(await focusOutline(page), 'none', 'the focused method has a visible outline');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement).name), 'operator');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement!.id), 'phone');
    assert.notEqual(await focusOutline(page), 'none', 'the phone field has a visible outline');
    await page.keyboard.type('024 123 4567');
    // The prefix picks the network.
    assert.equal(await page.getByRole('radio', { name: 'MTN MoMo', exact: true }).isChecked(), true);
    await page.locator('#phone-msg', { hasText: 'MTN MoMo number' }).waitFor();
    // A payer who picks another network is warned, not refused (numbers move between networks), and can switch back.
    await page.getByRole('radio', { name: 'Telecel Cash', exact: true }).check();
    await page
      .locator('#phone-msg', { hasText: 'This number usually belongs to MTN. Pay with Telecel Cash anyway?' })
      .waitFor();
    assert.equal(await page.getAttribute('#phone', 'aria-invalid'), 'false');
    await page.getByRole('button', { name: 'Use MTN MoMo instead' }).click();
    assert.equal(await page.getByRole('radio', { name: 'MTN MoMo', exact: true }).isChecked(), true);
    await page.locator('#phone-msg', { hasText: 'MTN MoMo number' }).waitFor();
    assert.equal(await page.locator('[data-ported]').isHidden(), true);
    await page.focus('#phone');
    await page.keyboard.press('Enter');

    await heading(page, 'Approve the payment on your phone').waitFor();
    await page.getByText('wallet ending 4567').waitFor();
    assert.equal(await page.evaluate(() => document.activeElement!.tagName), 'H2', 'focus moves to the new screen');
    await page.locator('#live', { hasText: 'Waiting for confirmation' }).waitFor();
    // The page polls the attempt with ?refresh=1.
    await page.waitForRequest((r) => r.url().includes('/provider-attempts/') && r.url().includes('refresh=1'));
    await page.getByRole('button', { name: 'Resend prompt' }).click();
    await page.locator('#live', { hasText: 'We sent the prompt again' }).waitFor();
    await page.getByText('You can resend it 2 more times.').waitFor();
    await checkoutScreenshots(page, 'momo-waiting');

    // The Test banner's buttons cover the outcomes of SPEC 3.2.
    const outcomes = await page.locator('form[data-test-outcome] button').allInnerTexts();
    assert.deepEqual(outcomes, [
      'Paid',
      'Failed',
      'Expired',
      'Cancelled',
      'Reversed',
      'Manual review',
      'Amount mismatch',
      'Still pending',
    ]);
    await page.getByRole('button', { name: 'Paid', exact: true }).click();
    await heading(page, 'Payment successful').waitFor();
    await page.getByText('You paid GHS 507.50 to').waitFor();
    await page.locator('#live', { hasText: 'Payment successful.' }).waitFor();
    // The reference the provider knows the payment by (the Test simulator's TEST-…), not the attempt's att_ id.
    assert.match(await page.locator('.kv dd.ref').last().innerText(), /^TEST-[0-9A-Z]{16}$/);
    assert.equal(await page.getByText(/att_[0-9a-z]{26}/).count(), 0);
    assert.equal(await page.locator('#pay-form').count(), 0);
    await checkoutScreenshots(page, 'momo-success');

    const session = await call(t, 'GET', `/api/v1/checkout/sessions/${id}`);
    assert.equal(session.json().status, 'success');

    await Promise.all([
      page.waitForURL((url) => url.pathname === '/healthz'),
      page.getByRole('link', { name: /^Return to Test Merchant/ }).click(),
    ]);
    const landed = new URL(page.url());
    assert.equal(landed.searchParams.get('session_id'), id);
    assert.equal(landed.searchParams.get('status'), 'success');
    assertCleanRun(g);
    await g.close();
  });

  it('Telecel: a wrong code is refused with its message, 123456 is accepted, and the page notices the payment by itself', async () => {
    const { m, id } = await newSession();
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await page.getByRole('radio', { name: /Mobile Money/ }).check();
    await page.getByRole('radio', { name: 'Telecel Cash', exact: true }).check();
    await page.getByLabel('Mobile Money number').fill('020 123 4567');
    await page.locator('#phone-msg', { hasText: 'Telecel Cash number' }).waitFor();
    await page.getByRole('button', { name: 'Pay GHS 507.50' }).click();

    await heading(page, 'Enter your Telecel Cash code').waitFor();
    await page.getByText('Test mode: the code is 123456.').waitFor();
    await checkoutScreenshots(page, 'telecel-code');
    await page.getByLabel('Verification code').fill('111111');
    await page.getByRole('button', { name: 'Confirm code' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'The verification code was refused. In Test mode use 123456.' })
      .waitFor();
    assert.equal(await page.getAttribute('#code', 'aria-invalid'), 'true');
    await page.getByLabel('Verification code').fill('123456');
    await page.getByRole('button', { name: 'Confirm code' }).click();
    await heading(page, 'Confirming your Telecel Cash payment').waitFor();
    await page.locator('#live', { hasText: 'Code accepted' }).waitFor();

    // Paid through the merchant's simulate endpoint: the page's polling (1, 2, 3, 5 s) brings the news.
    const ref = (
      await t.db.query<{ id: string }>("SELECT id FROM payment_attempts WHERE session_id = $1 AND status = 'pending'", [
        id,
      ])
    )[0]!.id;
    const simulated = await call(t, 'POST', `/api/v1/test/payment-attempts/${ref}/simulate`, {
      key: m.test_api_key,
      body: { outcome: 'paid' },
    });
    assert.equal(simulated.statusCode, 200, simulated.body);
    await heading(page, 'Payment successful').waitFor({ timeout: 15_000 });
    await page.getByText('Telecel Cash ending 4567').waitFor();
    await checkoutScreenshots(page, 'telecel-success', { phoneOnly: true });
    assertCleanRun(g);
    await g.close();
  });

  it('a failed card attempt (Test: no card fields) is retried on the same page by bank transfer, then paid', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await page.getByRole('radio', { name: /Card/ }).check();
    await page.getByText('Test mode: no card details are collected').waitFor();
    assert.equal(
      await page.locator('input[autocomplete^="cc-"], input[name*=card]').count(),
      0,
      'no card number fields in Test mode',
    );
    await page.getByRole('button', { name: 'Pay GHS 500.00' }).click();
    await heading(page, 'Test card payment').waitFor();
    await page.getByRole('button', { name: 'Failed', exact: true }).click();

    await heading(page, 'Payment not completed').waitFor();
    await page
      .locator('#view')
      .getByText('The payment did not go through. Try again, or use another number or method.')
      .waitFor();
    await page.getByText('Card, GHS 500.00: you have not been charged for it.').waitFor();
    await page.locator('#live', { hasText: 'Payment not completed' }).waitFor();
    assert.equal((await call(t, 'GET', `/api/v1/checkout/sessions/${id}`)).json().status, 'open');
    await checkoutScreenshots(page, 'failure');

    await page.getByRole('radio', { name: /Bank transfer/ }).check();
    await page.getByRole('button', { name: 'Get bank transfer details' }).click();
    await heading(page, 'Transfer GHS 500.00 from your bank').waitFor();
    const reference = await page.locator('.kv dd.big').innerText();
    assert.match(reference, /^TEST-/);
    await page.getByText('Sika Collections (GCB Bank)').waitFor();
    await checkoutScreenshots(page, 'bank-transfer');
    await page.getByRole('button', { name: 'Paid', exact: true }).click();
    await heading(page, 'Payment successful').waitFor();
    await page.getByText('Bank transfer', { exact: true }).waitFor();
    assertCleanRun(g);
    await g.close();
  });

  it('cash: a slip with its reference, a QR code and the bank branches, and a printable slip page', async () => {
    const { id, invoiceRef } = await newSession();
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await page.getByRole('radio', { name: /Cash at a bank branch/ }).check();
    await page.getByRole('button', { name: 'Get a cash deposit slip' }).click();
    await heading(page, 'Your cash deposit slip').waitFor();

    const slip = page.locator('article.slip');
    const reference = await slip.locator('dd.big').innerText();
    assert.match(reference, /^SK-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}$/);
    const qr = slip.getByRole('img', { name: `QR code of the slip reference ${reference}` });
    assert.ok(await qr.isVisible());
    const box = (await qr.boundingBox())!;
    assert.ok(box.width >= 100 && box.height >= 100, 'the QR code is large enough to scan');
    await slip.getByText('GHS 502.00').first().waitFor();
    await slip.getByText(invoiceRef).waitFor();
    await slip.getByText('Valid until').waitFor();
    await slip.getByRole('heading', { name: 'Where to pay' }).waitFor();
    assert.match(await slip.locator('ul.banks').innerText(), /GCB Bank: Accra Central, .*Osu/);
    assert.ok((await slip.locator('ul.banks li').count()) >= 10);
    await checkoutScreenshots(page, 'cash');
    // Print shows the slip alone.
    await page.emulateMedia({ media: 'print' });
    assert.equal(
      await page
        .locator('#view h2')
        .first()
        .evaluate((el) => getComputedStyle(el).visibility),
      'hidden',
    );
    assert.equal(await slip.evaluate((el) => getComputedStyle(el).visibility), 'visible');
    await page.screenshot({ path: 'test-results/checkout-cash-print-390.png', fullPage: true });
    await page.emulateMedia({ media: 'screen' });

    await page.getByRole('link', { name: 'Open the printable slip' }).click();
    await page.waitForURL(`${base}/pay/${id}/slip`);
    await page.getByText(reference).first().waitFor();
    assert.ok(await page.getByRole('img', { name: /QR code of the slip reference/ }).isVisible());
    await page.getByRole('button', { name: 'Print slip' }).waitFor();
    await checkoutScreenshots(page, 'slip-page');

    // The payer may still switch to another method: the slip gives way.
    await page.goto(`${base}/pay/${id}`);
    await page.getByText('Use another number or method').click();
    await page.getByRole('radio', { name: /Bank transfer/ }).check();
    await page.getByRole('button', { name: 'Get bank transfer details' }).click();
    await heading(page, 'Transfer GHS 500.00 from your bank').waitFor();
    assertCleanRun(g);
    await g.close();
  });

  it('an expired session shows the expiry screen and no payment form', async () => {
    const { id } = await newSession({ expires_in_seconds: 60 });
    await t.db.query("update checkout_sessions set expires_at = now() - interval '1 minute' where id=$1", [id]);
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await heading(page, 'This checkout has expired').waitFor();
    assert.equal(await page.locator('#pay-form').count(), 0);
    assert.equal(await page.locator('input').count(), 0);
    const back = page.getByRole('link', { name: /^Return to Test Merchant/ });
    assert.equal(new URL((await back.getAttribute('href'))!).searchParams.get('status'), 'expired');
    await checkoutScreenshots(page, 'expired');
    assertCleanRun(g);
    await g.close();
  });

  it('an unknown session id is a friendly 404 page', async () => {
    const g = await trackedPage(browser, PHONE);
    const response = await g.page.goto(`${base}/pay/cs_doesnotexist`);
    assert.equal(response!.status(), 404);
    assert.match(response!.headers()['content-type']!, /^text\/html/);
    await heading(g.page, 'We could not find this payment').waitFor();
    await checkoutScreenshots(g.page, 'not-found', { phoneOnly: true });
    assertCleanRun(g);
    await g.close();
  });

  it(`a first load of /pay/{id} transfers at most ${FIRST_LOAD_BYTES_MAX} bytes, compressed, all from 127.0.0.1`, async () => {
    const { id } = await newSession();
    const load = await measureFirstLoad(browser, `${base}/pay/${id}`);
    console.log(
      `first load of /pay/{id}: ${load.transferredBytes} bytes transferred in ${load.responses.length} responses; DOMContentLoaded ${load.domContentLoadedMs} ms, load ${load.loadMs} ms\n` +
        load.responses
          .map((r) => `  ${r.status} ${r.encodedBytes} B ${r.contentEncoding ?? 'identity'} ${new URL(r.url).pathname}`)
          .join('\n'),
    );
    assert.ok(load.transferredBytes <= FIRST_LOAD_BYTES_MAX, `${load.transferredBytes} bytes`);
    assert.equal(load.responses.length, 2, 'the page and its script, nothing else');
    for (const r of load.responses) {
      assert.equal(new URL(r.url).hostname, '127.0.0.1');
      assert.equal(r.status, 200);
      assert.ok(r.contentEncoding === 'br' || r.contentEncoding === 'gzip', `${r.url} is compressed`);
    }
  });
});
