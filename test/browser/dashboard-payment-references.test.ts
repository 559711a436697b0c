// Browser test of the dashboard's session page after issue 31 in Debian's Chromium: an owner opens a session a
// payer paid by Mobile Money after abandoning a card page, whose card payment then arrived too and was refunded
// automatically. The page says so in a plain notice, names the provider's reference of the payment and the card
// of the late one, keeps the whole Mobile Money payment refundable, and fits 1280 and 390 px (screenshots).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMerchant } from '../../src/accounts/service.ts';
import { addressKey } from '../../src/accounts/sign-in-throttle.ts';
import { recordProviderFacts } from '../../src/checkout/store.ts';
import { createSession, momoBody, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import type { TestContext } from '../support/helpers.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { consolePage, PHONE, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'correct horse battery';

describe('dashboard payment references in Chromium', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    // A kept database remembers earlier runs' failed sign-ins from 127.0.0.1.
    await t.db.query('DELETE FROM sign_in_throttles WHERE key = $1', [addressKey('merchant', '127.0.0.1')]);
  });

  it('shows the second payment refunded automatically, the provider reference and the card, at 1280 and 390 px', async () => {
    const email = `owner-${randomUUID().slice(0, 8)}@example.com`;
    const m = await createMerchant(
      t.db,
      { name: `Kente House ${randomUUID().slice(0, 4)}`, email, password: PASSWORD, webhookUrl: null },
      t.webhookTargets,
    );
    const amountMinor = 45_000;
    const session = await createSession(t, m, { amount_minor: amountMinor });
    const card = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', amountMinor) });
    await simulate(t, m, card.attempt_reference, 'cancelled');
    const momo = await startAttempt(t, session.id, momoBody(amountMinor));
    await simulate(t, m, momo.attempt_reference, 'paid');
    await simulate(t, m, card.attempt_reference, 'paid');
    // What the providers named them by (the Test simulator names nothing): the write of a provider's answer.
    await t.db.transaction(async (tx) => {
      await recordProviderFacts(tx, momo.attempt_reference, { providerTransactionId: '36344046311' });
      await recordProviderFacts(tx, card.attempt_reference, {
        providerTransactionId: '4099260516',
        card: { brand: 'visa', last4: '4081' },
      });
    });
    const [refund] = await t.db.query<{ id: string }>(
      'SELECT id FROM refunds WHERE session_id = $1 AND attempt_id = $2',
      [session.id, card.attempt_reference],
    );
    assert.ok(refund, 'the late card payment has its automatic refund');

    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', email, PASSWORD);
    await page.goto(`${baseUrl}/dashboard/sessions/${session.id}`);
    const notice = page.getByRole('note', { name: 'Second payment' });
    await notice.waitFor();
    assert.equal(
      (await notice.innerText()).trim(),
      `A second payment of GHS ${(totalOf('card', amountMinor) / 100).toFixed(2)} arrived after this checkout was paid. It was refunded automatically (${refund.id}).`,
    );
    const payment = page.getByLabel('Payment', { exact: true });
    assert.match(await payment.innerText(), /Provider's reference\s+36344046311/);
    const cardRow = page
      .getByRole('table', { name: 'Payment attempts' })
      .getByRole('row')
      .filter({ hasText: card.attempt_reference });
    assert.match(await cardRow.innerText(), /Visa ending 4081/);
    assert.match(await cardRow.innerText(), /4099260516/);
    assert.equal(
      await page.getByLabel('Amount (GHS)').inputValue(),
      (totalOf('momo', amountMinor) / 100).toFixed(2),
      'the whole Mobile Money payment is still refundable',
    );
    await screenshots(page, 'dashboard-session-duplicate-refunded');
    // At 390 px, what a phone shows first, and the attempts scrolled into view.
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: 'test-results/dashboard-session-duplicate-refunded-390-top.png' });
    await page.getByRole('table', { name: 'Payment attempts' }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: 'test-results/dashboard-session-duplicate-refunded-390-attempts.png' });
    await close();
  });
});
