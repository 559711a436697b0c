// Browser test of the dashboard's Refund form (issue 17) in Debian's Chromium: an owner opens a paid Test
// session, sees its payment and the form with the rest of the payment filled in, refunds part of it by
// clicking Refund, and sees the refund on the page; screenshots at 1280 and 390 px.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createMerchant } from '../../src/accounts/service.ts';
import { addressKey } from '../../src/accounts/sign-in-throttle.ts';
import { createSession, simulate, startAttempt, totalOf } from '../support/checkout.ts';
import type { TestContext } from '../support/helpers.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { consolePage, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'correct horse battery';

describe('dashboard refunds in Chromium', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    // A kept database remembers earlier runs' failed sign-ins from 127.0.0.1.
    await t.db.query('DELETE FROM sign_in_throttles WHERE key = $1', [addressKey('merchant', '127.0.0.1')]);
  });

  it('an owner clicks Refund on a paid Test session: the refund succeeds and is listed with the rest offered', async () => {
    const email = `owner-${randomUUID().slice(0, 8)}@example.com`;
    const m = await createMerchant(
      t.db,
      { name: `Esi Crafts ${randomUUID().slice(0, 4)}`, email, password: PASSWORD, webhookUrl: null },
      t.webhookTargets,
    );
    const session = await createSession(t, m, { amount_minor: 30_000 });
    const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', 30_000) });
    await simulate(t, m, attempt.attempt_reference, 'paid');

    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', email, PASSWORD);
    await page.goto(`${baseUrl}/dashboard/sessions/${session.id}`);
    await page.getByRole('heading', { name: 'Payment', exact: true }).waitFor();
    const amount = page.getByLabel('Amount (GHS)');
    assert.equal(await amount.inputValue(), '300.00', 'the whole payment is offered');
    await screenshots(page, 'dashboard-session-refund');

    await amount.fill('75.50');
    await page.getByLabel('Reason').fill('Two mugs arrived broken');
    await Promise.all([
      page.waitForURL((url) => url.pathname === `/dashboard/sessions/${session.id}` && url.searchParams.has('refund')),
      page.getByRole('button', { name: 'Refund', exact: true }).click(),
    ]);
    await page.getByRole('status').filter({ hasText: 'Refund of GHS 75.50 requested: it succeeded.' }).waitFor();
    const row = page
      .getByRole('table', { name: 'Refunds' })
      .getByRole('row')
      .filter({ hasText: 'Two mugs arrived broken' });
    assert.equal(await row.count(), 1);
    assert.match(await row.innerText(), /GHS 75\.50\s+succeeded/);
    assert.equal(await page.getByLabel('Amount (GHS)').inputValue(), '224.50', 'the rest is offered next');
    await screenshots(page, 'dashboard-session-refunded');

    const stored = await t.db.query<{ status: string; amount_minor: number; requested_by_user_id: string }>(
      'SELECT status, amount_minor, requested_by_user_id FROM refunds WHERE session_id = $1',
      [session.id],
    );
    assert.deepEqual(stored, [{ status: 'succeeded', amount_minor: 7_550, requested_by_user_id: m.owner_user_id }]);
    await close();
  });
});
