// A payer changes course on the Live page against the MTN MoMo stand-in (test/support/standins/mtn-momo.ts), in
// Debian's Chromium at 360 px: the prompt screen promises no resend (MTN has none), counts down MTN's
// five-minute window and shows *170# → My Wallet → My Approvals after 30 s (also after a reload); "Use another
// number or method" asks MTN first, then cancels and keeps the number; another number pays; the old prompt
// approved late is refunded in full automatically; a ported number goes to MTN on the network chosen.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { eventually, liveSession, startLiveWithMtnMomo, type LiveApp, type LiveWithMtnMomo } from '../support/live.ts';
import type { MtnMomoStandIn } from '../support/standins/mtn-momo.ts';
import { assertCleanRun, checkoutScreenshots, heading, NARROW_PHONE, pendingAttempt } from './checkout-helpers.ts';
import { launchBrowser, trackedPage } from './helpers.ts';

const MTN_HELP = 'Dial *170#, choose My Wallet, then My Approvals, and approve the payment.';

describe('payer page in Live against the MTN MoMo stand-in: changing course, in a browser', () => {
  let mtn: MtnMomoStandIn;
  let app: LiveApp;
  let m: CreatedMerchant;
  let browser: Browser;
  let live: LiveWithMtnMomo;

  before(async () => {
    live = await startLiveWithMtnMomo({
      '233241234567': { name: 'Ama Mensah' },
      '233549876543': { name: 'Kojo Asante' },
    });
    ({ app, mtn } = live);
    m = await app.t.merchant();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await live?.close();
  });

  async function payMtn(page: Page, phone: string) {
    await page.getByLabel('Mobile Money number').fill(phone);
    await page.locator('#pay-button').click();
    await heading(page, 'Approve the payment on your phone').waitFor();
  }

  it('honest waiting on MTN: no resend, a countdown from approve_within_s, *170# after 30 s, the same after a reload', async () => {
    const session = await liveSession(app, m, 25_000);
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${app.baseUrl}/pay/${session.id}`);
    await payMtn(page, '024 123 4567');
    const attempt = await pendingAttempt(app.t.db, session.id);
    const status = (await app.http('GET', `/api/v1/checkout/sessions/${session.id}/provider-attempts/${attempt.id}`))
      .json;
    assert.equal(status.resend_supported, false);
    assert.equal(status.approve_within_s, 300);
    assert.equal(status.approval_help, MTN_HELP);
    assert.equal(await page.locator('[data-action=resend]').count(), 0, 'no resend button');
    assert.equal(await page.getByText(/resend/i).count(), 0, 'no resend promised in words');
    assert.match(await page.locator('[data-clock]').innerText(), /^(5:00|4:5\d)$/);
    const help = page.locator('#view').getByText(`No prompt on your phone? ${MTN_HELP}`);
    assert.equal(await help.isHidden(), true);
    assert.equal(await page.getByText('Still waiting').isVisible(), false);

    // 31 s later (the attempt's created_at moved back), after a reload: the help at once, the clock from created_at.
    await app.t.db.query("UPDATE payment_attempts SET created_at = created_at - interval '31 seconds' WHERE id = $1", [
      attempt.id,
    ]);
    await page.reload();
    await help.waitFor();
    assert.match(await page.locator('[data-clock]').innerText(), /^4:[23]\d$/);
    await page.getByRole('button', { name: 'Use another number or method' }).waitFor();
    await checkoutScreenshots(page, 'course-mtn-waiting');
    assertCleanRun(g);
    await g.close();
  });

  it('change of number on MTN: MTN is asked first, the attempt cancelled, the number kept; another number pays; the old prompt approved late is refunded', async () => {
    const session = await liveSession(app, m, 25_000);
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${app.baseUrl}/pay/${session.id}`);
    await payMtn(page, '024 123 4567');
    const first = await pendingAttempt(app.t.db, session.id);
    const asked = mtn.counts.requesttopay_status;
    await page.getByRole('button', { name: 'Use another number or method' }).click();
    await heading(page, 'Choose another number or method').waitFor();
    assert.ok(mtn.counts.requesttopay_status > asked, 'MTN was asked about the attempt before it was cancelled');
    assert.equal(await page.getByLabel('Mobile Money number').inputValue(), '024 123 4567');
    const cancelled = (await app.http('GET', `/api/v1/checkout/sessions/${session.id}/provider-attempts/${first.id}`))
      .json;
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.failure_reason, 'changed_course');

    await payMtn(page, '054 987 6543');
    const second = await pendingAttempt(app.t.db, session.id);
    mtn.settle(second.provider_reference, 'SUCCESSFUL');
    await heading(page, 'Payment successful').waitFor({ timeout: 15_000 });
    // MTN's own id for the payment (financialTransactionId), not Sika's att_ id nor our X-Reference-Id.
    const financialTransactionId = mtn.transactions.get(second.provider_reference)!.financialTransactionId!;
    assert.ok(financialTransactionId);
    const rows = (await page.locator('#view .kv > div').allInnerTexts()).map((text) =>
      text.replace(/\s+/g, ' ').trim(),
    );
    assert.ok(rows.includes(`Payment reference ${financialTransactionId}`), rows.join(' | '));
    assert.ok(rows.includes('Paid with MTN MoMo ending 6543'), rows.join(' | '));
    await checkoutScreenshots(page, 'course-mtn-success');

    // The payer approves the first prompt after all (MTN cannot withdraw it): the money goes back in full.
    mtn.approveLate(first.id);
    const refund = await eventually(
      async () => {
        const list = (await app.http('GET', `/api/v1/refunds?session_id=${session.id}`, { key: m.live_api_key })).json;
        return list?.data?.length ? list.data[0] : undefined;
      },
      15_000,
      250,
    );
    assert.equal(refund.attempt_reference, first.id);
    assert.equal(refund.amount_minor, cancelled.amount_charged_minor);
    assert.match(refund.reason, /^Duplicate payment/);
    const paid = (await app.http('GET', `/api/v1/sessions/${session.id}`, { key: m.live_api_key })).json;
    assert.equal(paid.payment.attempt_reference, second.id);
    assertCleanRun(g);
    await g.close();
  });

  it('a ported number (a Telecel prefix) paid with MTN MoMo: a warning, then MTN is asked with that number', async () => {
    const session = await liveSession(app, m, 25_000);
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${app.baseUrl}/pay/${session.id}`);
    // Only MTN is offered here: its tile is the one network, chosen by the payer.
    await page.getByRole('radio', { name: 'MTN MoMo', exact: true }).check();
    await page.getByLabel('Mobile Money number').fill('020 555 0013');
    await page
      .locator('#phone-msg', { hasText: 'This number usually belongs to Telecel. Pay with MTN MoMo anyway?' })
      .waitFor();
    assert.equal(
      await page.getByRole('button', { name: /^Use Telecel Cash instead/ }).isVisible(),
      false,
      'no tile to switch to: Telecel is not offered',
    );
    await checkoutScreenshots(page, 'course-mtn-ported', { phoneOnly: true });
    await page.getByRole('button', { name: 'Yes, pay with MTN MoMo' }).click();
    await heading(page, 'Approve the payment on your phone').waitFor();
    const attempt = await pendingAttempt(app.t.db, session.id);
    assert.equal(mtn.transactions.get(attempt.provider_reference)!.party.partyId, '233205550013');
    assertCleanRun(g);
    await g.close();
  });
});
