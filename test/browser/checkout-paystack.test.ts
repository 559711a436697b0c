// The payer page in Live, in Debian's Chromium, against the Paystack stand-in (test/support/standins/paystack.ts)
// over loopback: a card paid on the provider's hosted page (its Pay and Decline buttons send the payer back
// to /pay/{id}?attempt=...&trxref=...&reference=...), the return confirmed by the server asking Paystack
// (webhooks are off here, so only that check can settle it), a forged return that changes nothing, and
// Telecel's voucher step with Paystack's own prompt and a resend Paystack cannot do (409); and a Live bank
// transfer (BANK_TRANSFER_* settings) with its SK payment reference grouped for reading out and copied.
// Changing course (issue 31) at 360 px from the waiting screens Paystack serves: AT Money's prompt (no resend
// offered), the card return still being confirmed, the Live bank transfer details and Telecel after its code was
// accepted; each ends its attempt as changed_course and another number or method pays. The card's success names
// the card (Visa •••• 4081) and Paystack's transaction id.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page, Route } from 'playwright-core';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { freePort, liveSession, startLiveApp, type LiveApp } from '../support/live.ts';
import { startPaystackStandIn, type PaystackStandIn } from '../support/standins/paystack.ts';
import { assertCleanRun, checkoutScreenshots, heading, NARROW_PHONE } from './checkout-helpers.ts';
import { launchBrowser, PHONE, screenshots, type TrackedPage, trackedPage } from './helpers.ts';

const SECRET = 'sk_test_browser_standin';
const CHANGE = 'Use another number or method';
/** The return lands with the attempt id and Paystack's own parameters. */
const RETURN_URL = /\/pay\/cs_\w+\?attempt=att_\w+&trxref=[^&]+&reference=[^&]+$/;
const BANK_ACCOUNT = {
  BANK_TRANSFER_BANK_CODE: '040100',
  BANK_TRANSFER_BANK_NAME: 'GCB Bank',
  BANK_TRANSFER_BRANCH: 'Accra Central',
  BANK_TRANSFER_ACCOUNT_NUMBER: '1441000123456',
  BANK_TRANSFER_ACCOUNT_NAME: 'Sika Collections Ltd',
};

describe('payer page in Live against the Paystack stand-in, in a browser', () => {
  let paystack: PaystackStandIn;
  let app: LiveApp;
  let m: CreatedMerchant;
  let browser: Browser;

  before(async () => {
    const port = await freePort();
    paystack = await startPaystackStandIn({ secretKey: SECRET });
    // No webhooks: what the payer sees after the return can only come from the server asking Paystack.
    paystack.setWebhookUrl(undefined);
    app = await startLiveApp(port, {
      PAYSTACK_SECRET_KEY: SECRET,
      PAYSTACK_BASE_URL: paystack.baseUrl,
      ...BANK_ACCOUNT,
    });
    m = await app.t.merchant();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await app?.t.close();
    await paystack?.close();
  });

  const attemptOf = async (sessionId: string, attemptId: string) =>
    (await app.http('GET', `/api/v1/checkout/sessions/${sessionId}/provider-attempts/${attemptId}`)).json;
  const pendingId = async (sessionId: string) =>
    (
      await app.t.db.query<{ id: string; provider_reference: string }>(
        "SELECT id, provider_reference FROM payment_attempts WHERE session_id = $1 AND status = 'pending'",
        [sessionId],
      )
    )[0]!;

  /** The page checked for sideways scroll at 360 and 390 px, saved at 390 px and at 360 px (test-results/checkout-{name}-360.png). */
  async function shots360(page: Page, name: string) {
    await checkoutScreenshots(page, name, { phoneOnly: true });
    await screenshots(page, `checkout-${name}`, [NARROW_PHONE]);
  }

  /** Presses "Use another number or method" on attempt `attemptId`'s screen: the cancel goes to the API with an Idempotency-Key. */
  async function changeCourse(page: Page, attemptId: string) {
    const cancel = page.waitForResponse(
      (r) => r.request().method() === 'POST' && r.url().endsWith(`/provider-attempts/${attemptId}/cancel`),
    );
    await page.getByRole('button', { name: CHANGE }).click();
    const response = await cancel;
    assert.match(response.request().headers()['idempotency-key'] ?? '', /^[0-9a-f]{32}$/);
    assert.equal(response.status(), 200);
  }

  /** Telecel Cash with `phone` from the method choice: the number, Pay, the voucher (123456), then the success. */
  async function payTelecel(page: Page, phone: string) {
    await page.getByRole('radio', { name: 'Telecel Cash', exact: true }).check();
    await page.getByLabel('Mobile Money number').fill(phone);
    await page.locator('#pay-button').click();
    await heading(page, 'Enter your Telecel Cash code').waitFor();
    await page.getByLabel('Verification code').fill('123456');
    await page.getByRole('button', { name: 'Confirm code' }).click();
    await heading(page, 'Payment successful').waitFor({ timeout: 15_000 });
  }

  /** After a change of course: Telecel Cash with `phone` pays the session, and the attempt that was ended stays cancelled. */
  async function telecelPaysAfter(g: TrackedPage, sessionId: string, endedAttempt: string, phone = '020 123 4567') {
    await payTelecel(g.page, phone);
    const session = (await app.http('GET', `/api/v1/sessions/${sessionId}`, { key: m.live_api_key })).json;
    assert.equal(session.status, 'success');
    assert.equal(session.payment.rail, 'momo');
    assert.notEqual(session.payment.attempt_reference, endedAttempt);
    assert.equal((await attemptOf(sessionId, endedAttempt)).status, 'cancelled');
    assertCleanRun(g);
    await g.close();
  }

  /** Chooses Card on a new Live session's page and follows the button to the stand-in's hosted page. */
  async function toHostedPage(page: Page): Promise<string> {
    const session = await liveSession(app, m, 25_000);
    await page.goto(`${app.baseUrl}/pay/${session.id}`);
    assert.equal(await page.getByText('Test mode').count(), 0);
    await page.getByRole('radio', { name: /^Card/ }).check();
    await page.getByText('You will enter your card details on the card provider’s secure page').waitFor();
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${paystack.baseUrl}/checkout/`)),
      page.getByRole('button', { name: 'Continue to secure card payment' }).click(),
    ]);
    await page.getByRole('heading', { name: 'Pay GHS 250.00' }).waitFor();
    return session.id;
  }

  it('card: Continue to secure card payment, Pay on the provider page, back to "Confirming your payment…", then paid as Paystack says; the success names the card (Visa •••• 4081) and Paystack’s transaction id', async () => {
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    const sessionId = await toHostedPage(page);
    const verifies = paystack.count('transaction.verify');
    const back = page.waitForResponse((r) => RETURN_URL.test(r.url()));
    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    const returned = await back;
    const url = new URL(returned.url());
    const attemptId = url.searchParams.get('attempt')!;
    assert.equal(url.pathname, `/pay/${sessionId}`);
    // The page as it came back: confirming, not yet the provider's word for it.
    assert.match(await returned.text(), /Confirming your payment…/);
    await heading(page, 'Payment successful').waitFor({ timeout: 15_000 });
    await page.getByText('You paid GHS 250.00 to').waitFor();
    assert.ok(paystack.count('transaction.verify') > verifies, 'the result came from asking Paystack');
    const attempt = (await app.http('GET', `/api/v1/checkout/sessions/${sessionId}/provider-attempts/${attemptId}`))
      .json;
    assert.equal(attempt.status, 'paid');
    // What Paystack's verify reported: its transaction id and the card (authorization.card_type "visa ", last4).
    const charge = paystack.charge(url.searchParams.get('reference')!)!;
    assert.equal(charge.status, 'success');
    assert.equal(attempt.provider_transaction_id, String(charge.id));
    assert.equal(attempt.card?.last4, '4081');
    const rows = (await page.locator('#view .kv > div').allInnerTexts()).map((text) =>
      text.replace(/\s+/g, ' ').trim(),
    );
    assert.ok(rows.includes('Paid with Visa •••• 4081'), rows.join(' | '));
    assert.ok(rows.includes(`Payment reference ${charge.id}`), rows.join(' | '));
    assert.equal(await page.getByText(attemptId).count(), 0, 'never the att_ id');
    await shots360(page, 'paystack-card-success');
    assertCleanRun(g);
    await g.close();
  });

  it('card: Decline on the provider page brings the payer back to the failure and a way to try again', async () => {
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    await toHostedPage(page);
    await Promise.all([page.waitForURL(RETURN_URL), page.getByRole('button', { name: 'Decline' }).click()]);
    await heading(page, 'Payment not completed').waitFor({ timeout: 15_000 });
    await page.getByText('Card, GHS 250.00: you have not been charged for it.').waitFor();
    await heading(page, 'Try again').waitFor();
    await page.getByRole('radio', { name: /^Card/ }).check();
    await page.getByRole('button', { name: 'Continue to secure card payment' }).waitFor();
    await checkoutScreenshots(page, 'paystack-card-declined', { phoneOnly: true });
    assertCleanRun(g);
    await g.close();
  });

  it('a forged return (trxref, reference, status=success without paying) is never paid: Paystack says abandoned, the card attempt ends and the payer can choose again', async () => {
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    const sessionId = await toHostedPage(page);
    const charge = paystack.charges.at(-1)!;
    const attemptId = new URL(charge.callbackUrl!).searchParams.get('attempt')!;
    const asked = page.waitForRequest((r) => r.url().includes(`/provider-attempts/${attemptId}?refresh=1`));
    await page.goto(
      `${app.baseUrl}/pay/${sessionId}?attempt=${attemptId}&trxref=${charge.reference}&reference=${charge.reference}&status=success`,
    );
    await heading(page, 'Confirming your payment…').waitFor();
    await asked;
    // Paystack reads the unfinished hosted page as abandoned: the card attempt ends unpaid (issue 31), never paid.
    await heading(page, 'Payment not completed').waitFor({ timeout: 15_000 });
    assert.equal(await page.getByText('Payment successful').count(), 0);
    const status = (await app.http('GET', `/api/v1/checkout/sessions/${sessionId}/provider-attempts/${attemptId}`))
      .json;
    assert.notEqual(status.status, 'paid');
    assert.notEqual(status.status, 'pending');
    await page.locator('#view').getByText(status.failure_message).waitFor();
    await page.getByRole('radio', { name: /^Card/ }).check();
    await page.getByRole('button', { name: 'Continue to secure card payment' }).waitFor();
    assertCleanRun(g);
    await g.close();
  });

  it('card abandoned: back on the page without paying, "Use another number or method" (Paystack asked first) ends the card attempt as changed_course, then Telecel Cash pays; the card is never charged', async () => {
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    const sessionId = await toHostedPage(page);
    const charge = paystack.charges.at(-1)!;
    const cardAttempt = new URL(charge.callbackUrl!).searchParams.get('attempt')!;
    // The page's own check of the attempt (?refresh=1, from 1 s after it loads) would read Paystack's "abandoned"
    // and end the card attempt by itself (a payer back on the page unpaid; the forged-return test above): here the
    // payer presses the button first, so those checks are held until the cancel has been answered.
    const held: Route[] = [];
    const pageCheck = (url: URL) =>
      url.pathname.endsWith(`/provider-attempts/${cardAttempt}`) && url.searchParams.has('refresh');
    await page.route(pageCheck, (route) => {
      held.push(route);
    });
    // The payer leaves the card page (the back button, or the link again): the card step is still offered, and the way out.
    await page.goto(`${app.baseUrl}/pay/${sessionId}`);
    await heading(page, 'Continue to secure card payment').waitFor();
    await checkoutScreenshots(page, 'paystack-card-abandoned');
    const verifies = paystack.count('transaction.verify');
    await changeCourse(page, cardAttempt);
    await heading(page, 'Choose another number or method').waitFor();
    await page.getByText('You stopped the payment by Card').waitFor();
    assert.ok(paystack.count('transaction.verify') > verifies, 'Paystack was asked before the card attempt was ended');
    const card = await attemptOf(sessionId, cardAttempt);
    assert.equal(card.status, 'cancelled', 'ended by the change of course');
    assert.equal(card.failure_reason, 'changed_course');
    assert.equal(paystack.charge(charge.reference)!.status, 'initialized', 'the card page was never paid');
    await shots360(page, 'paystack-card-abandoned-changed');
    await page.unroute(pageCheck);
    for (const route of held) await route.continue().catch(() => {});

    await telecelPaysAfter(g, sessionId, cardAttempt);
  });

  it('Telecel through Paystack: the voucher step shows Paystack’s prompt and no resend (Paystack cannot send it again: resend_supported false), the voucher pays', async () => {
    const session = await liveSession(app, m, 25_000);
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    await page.goto(`${app.baseUrl}/pay/${session.id}`);
    await page.getByRole('radio', { name: 'Telecel Cash', exact: true }).check();
    await page.getByLabel('Mobile Money number').fill('020 123 4567');
    await page.locator('#pay-form button[type=submit]').click();
    await heading(page, 'Enter your Telecel Cash code').waitFor();
    await page.getByText('Please dial *110# to generate a voucher code. Then input the voucher').waitFor();
    // Nothing is promised that Paystack cannot do: no resend button, no count, and the API agrees.
    const attemptId = (
      await app.t.db.query<{ id: string }>(
        "SELECT id FROM payment_attempts WHERE session_id = $1 AND status = 'pending'",
        [session.id],
      )
    )[0]!.id;
    const status = (await app.http('GET', `/api/v1/checkout/sessions/${session.id}/provider-attempts/${attemptId}`))
      .json;
    assert.equal(status.resend_supported, false);
    assert.equal(status.resends_left, 0);
    assert.equal(await page.locator('[data-action=resend]').count(), 0);
    assert.equal(await page.getByText(/resend/i).count(), 0);
    await page.getByRole('button', { name: 'Use another number or method' }).waitFor();
    await checkoutScreenshots(page, 'paystack-telecel-code', { phoneOnly: true });
    await page.getByLabel('Verification code').fill('123456');
    await page.getByRole('button', { name: 'Confirm code' }).click();
    await heading(page, 'Payment successful').waitFor({ timeout: 15_000 });
    assertCleanRun(g);
    await g.close();
  });

  it('a Live bank transfer: the account and branch, the amount and the SK reference grouped for reading out, each copied exactly', async () => {
    const session = await liveSession(app, m, 25_000);
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    await g.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
    await page.goto(`${app.baseUrl}/pay/${session.id}`);
    await page.getByRole('radio', { name: /^Bank transfer/ }).check();
    await page.getByRole('button', { name: 'Get bank transfer details' }).click();
    await heading(page, 'Transfer GHS 250.00 from your bank').waitFor();
    const rowsOf = await app.t.db.query<{ provider_reference: string }>(
      "SELECT provider_reference FROM payment_attempts WHERE session_id = $1 AND status = 'pending'",
      [session.id],
    );
    const reference = rowsOf[0]!.provider_reference;
    assert.match(reference, /^SK[2-9A-HJKMNP-Z]{8}$/);
    const rows = (await page.locator('#view .kv > div').allInnerTexts()).map((text) =>
      text.replace(/\s+/g, ' ').trim(),
    );
    assert.deepEqual(rows, [
      'Bank GCB Bank',
      'Branch Accra Central',
      'Account name Sika Collections Ltd',
      'Account number 1441000123456 Copy',
      'Amount GHS 250.00 Copy',
      `Payment reference ${reference} Copy`,
    ]);
    assert.deepEqual(await page.locator('#copy-reference .groups > span').allInnerTexts(), [
      reference.slice(0, 2),
      reference.slice(2, 6),
      reference.slice(6),
    ]);
    await page.getByText(`type ${reference} in the transfer's narration`).waitFor();
    for (const [what, value] of [
      ['payment reference', reference],
      ['account number', '1441000123456'],
      ['amount', '250.00'],
    ] as const) {
      await page.getByRole('button', { name: `Copy the ${what}` }).click();
      await page.locator('#live', { hasText: `Copied the ${what}.` }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), value);
    }
    await checkoutScreenshots(page, 'live-bank-transfer-sk');
    assertCleanRun(g);
    await g.close();
  });

  it('AT Money through Paystack: the prompt screen promises no resend (resend_supported false); "Use another number or method" asks Paystack first, ends it (changed_course) and keeps the number; AT Money then pays', async () => {
    const session = await liveSession(app, m, 25_000);
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${app.baseUrl}/pay/${session.id}`);
    await page.getByRole('radio', { name: 'AT Money', exact: true }).check();
    await page.getByLabel('Mobile Money number').fill('026 555 0102');
    await page.locator('#pay-button').click();
    await heading(page, 'Approve the payment on your phone').waitFor();
    await page.getByText('Please complete authorization process on your mobile phone').waitFor();
    const first = await pendingId(session.id);
    assert.equal(paystack.charge(first.provider_reference)!.provider, 'atl');
    const status = await attemptOf(session.id, first.id);
    assert.equal(status.resend_supported, false, 'Paystack cannot prompt again without a second charge');
    assert.equal(status.resends_left, 0);
    assert.equal(await page.locator('[data-action=resend]').count(), 0, 'no resend button');
    assert.equal(await page.getByText(/resend/i).count(), 0, 'no resend promised in words');
    await shots360(page, 'paystack-at-waiting');

    const verifies = paystack.count('transaction.verify');
    await changeCourse(page, first.id);
    await heading(page, 'Choose another number or method').waitFor();
    await page.getByText('You stopped the payment by Mobile Money (AT Money ending 0102)').waitFor();
    assert.ok(paystack.count('transaction.verify') > verifies, 'Paystack was asked before the attempt was ended');
    assert.equal(await page.getByLabel('Mobile Money number').inputValue(), '026 555 0102');
    assert.equal(await page.getByRole('radio', { name: 'AT Money', exact: true }).isChecked(), true);
    const cancelled = await attemptOf(session.id, first.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.failure_reason, 'changed_course');
    assert.equal((await app.http('GET', `/api/v1/checkout/sessions/${session.id}`)).json.status, 'open');
    await shots360(page, 'paystack-at-changed');

    // The same wallet again (the prompt had not reached the phone, say): approved this time.
    await page.locator('#pay-button').click();
    await heading(page, 'Approve the payment on your phone').waitFor();
    const second = await pendingId(session.id);
    assert.notEqual(second.id, first.id);
    paystack.settleCharge(second.provider_reference, 'success');
    await heading(page, 'Payment successful').waitFor({ timeout: 15_000 });
    await page.getByText('AT Money ending 0102').waitFor();
    const paid = (await app.http('GET', `/api/v1/sessions/${session.id}`, { key: m.live_api_key })).json;
    assert.equal(paid.status, 'success');
    assert.equal(paid.payment.attempt_reference, second.id);
    assertCleanRun(g);
    await g.close();
  });

  it('card: back from the card page while Paystack is still confirming it ("Confirming your payment…"), "Use another number or method" ends the card attempt (changed_course) and Telecel Cash pays', async () => {
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    const sessionId = await toHostedPage(page);
    const charge = paystack.charges.at(-1)!;
    const cardAttempt = new URL(charge.callbackUrl!).searchParams.get('attempt')!;
    // The payer submitted the card and the bank has not decided yet: verify reads pending, the page keeps confirming.
    (charge as { status: string }).status = 'pending';
    const asked = page.waitForResponse((r) => r.url().includes(`/provider-attempts/${cardAttempt}?refresh=1`));
    await page.goto(`${charge.callbackUrl}&trxref=${charge.reference}&reference=${charge.reference}`);
    await heading(page, 'Confirming your payment…').waitFor();
    assert.equal((await (await asked).json()).status, 'pending', 'Paystack says pending');
    assert.equal(await heading(page, 'Confirming your payment…').isVisible(), true, 'still confirming');
    await page.getByRole('button', { name: CHANGE }).waitFor();
    await shots360(page, 'paystack-card-confirming');

    await changeCourse(page, cardAttempt);
    await heading(page, 'Choose another number or method').waitFor();
    await page.getByText('You stopped the payment by Card').waitFor();
    const card = await attemptOf(sessionId, cardAttempt);
    assert.equal(card.status, 'cancelled');
    assert.equal(card.failure_reason, 'changed_course');
    await shots360(page, 'paystack-card-confirming-changed');

    await telecelPaysAfter(g, sessionId, cardAttempt);
  });

  it('a Live bank transfer: "Use another number or method" from the transfer details ends it (changed_course) and offers the other methods; Telecel Cash pays', async () => {
    const session = await liveSession(app, m, 25_000);
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${app.baseUrl}/pay/${session.id}`);
    await page.getByRole('radio', { name: /^Bank transfer/ }).check();
    await page.getByRole('button', { name: 'Get bank transfer details' }).click();
    await heading(page, 'Transfer GHS 250.00 from your bank').waitFor();
    const transfer = await pendingId(session.id);
    await page.getByRole('button', { name: CHANGE }).waitFor();
    await shots360(page, 'live-bank-transfer-waiting');

    await changeCourse(page, transfer.id);
    await heading(page, 'Choose another number or method').waitFor();
    await page.getByText('You stopped the payment by Bank transfer').waitFor();
    const ended = await attemptOf(session.id, transfer.id);
    assert.equal(ended.status, 'cancelled');
    assert.equal(ended.failure_reason, 'changed_course');
    // Every method is offered again: card, each network, and bank transfer itself.
    for (const name of [/^Card/, /^Bank transfer/])
      assert.equal(await page.getByRole('radio', { name }).count(), 1, String(name));
    for (const network of ['MTN MoMo', 'Telecel Cash', 'AT Money'])
      assert.equal(await page.getByRole('radio', { name: network, exact: true }).count(), 1, network);
    await shots360(page, 'live-bank-transfer-changed');

    await telecelPaysAfter(g, session.id, transfer.id);
  });

  it('Telecel through Paystack after the code is accepted ("Confirming your Telecel Cash payment"): no resend, "Use another number or method" there and working; another Telecel number pays', async () => {
    const session = await liveSession(app, m, 25_000);
    // The voucher is accepted, then Paystack waits for Telecel (the charge stays pending after the code).
    paystack.next(
      { endpoint: 'charge.create', phone: '0201234567' },
      { kind: 'charge', status: 'send_otp', afterOtp: 'pending' },
    );
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${app.baseUrl}/pay/${session.id}`);
    await page.getByRole('radio', { name: 'Telecel Cash', exact: true }).check();
    await page.getByLabel('Mobile Money number').fill('020 123 4567');
    await page.locator('#pay-button').click();
    await heading(page, 'Enter your Telecel Cash code').waitFor();
    const first = await pendingId(session.id);
    await page.getByLabel('Verification code').fill('123456');
    await page.getByRole('button', { name: 'Confirm code' }).click();
    await heading(page, 'Confirming your Telecel Cash payment').waitFor();
    await page.getByText('Your code was accepted.').waitFor();
    assert.equal(paystack.charge(first.provider_reference)!.status, 'pending');
    assert.equal(await page.locator('[data-action=resend]').count(), 0, 'no resend button');
    assert.equal(await page.getByText(/resend/i).count(), 0, 'no resend promised in words');
    await page.getByRole('button', { name: CHANGE }).waitFor();
    await shots360(page, 'paystack-telecel-confirming');

    const verifies = paystack.count('transaction.verify');
    await changeCourse(page, first.id);
    await heading(page, 'Choose another number or method').waitFor();
    assert.ok(paystack.count('transaction.verify') > verifies, 'Paystack was asked before the attempt was ended');
    assert.equal(await page.getByLabel('Mobile Money number').inputValue(), '020 123 4567');
    const cancelled = await attemptOf(session.id, first.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.failure_reason, 'changed_course');
    await shots360(page, 'paystack-telecel-confirming-changed');

    await telecelPaysAfter(g, session.id, first.id, '050 123 4567');
  });
});
