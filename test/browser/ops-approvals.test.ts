// Issue 30 in Debian's Chromium: a Live bank transfer paid GHS 5.00 short waits under Review showing what it
// decides on; one operator decides "credit what was received" with a reason and the confirmation, and a
// second operator approves it on the Approvals page. The review list, the decision page, the approvals page
// and the Live payouts list pass axe-core with no violation at 1280 px and are screenshotted at 1280 and 390
// px (test-results/ops-approvals-*.png).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { checkInvariants } from '../../src/ledger/service.ts';
import { createOperator } from '../../src/ops/service.ts';
import { collectionAccounts } from '../../src/rails/bank-transfer/accounts.ts';
import { importStatement } from '../../src/statements/service.ts';
import { BANK_ENV, cedis, gcbStatement, liveTransfer, uniqueWords } from '../support/bank-statements.ts';
import type { TestContext } from '../support/helpers.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { axeViolations, consolePage, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'operator passphrase 1';
describe('money decisions by two operators in Chromium', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  const requester = { email: `ops-req-${randomUUID().slice(0, 8)}@sika.example`, password: PASSWORD };
  const approver = { email: `ops-appr-${randomUUID().slice(0, 8)}@sika.example`, password: PASSWORD };

  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    for (const o of [requester, approver]) await createOperator(t.db, { ...o, role: 'operator' });
  }, BANK_ENV);

  it('a short bank transfer: the review page shows expected, received and the statement line; the decision is filed, then approved by a second operator', async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 50_000);
    const received = transfer.chargedMinor - 500;
    const imported = await importStatement(t.db, {
      bankCode: 'GCB',
      fileName: 'short.csv',
      csv: gcbStatement([{ narration: `${uniqueWords()} ${transfer.reference}`, credit: cedis(received) }]),
      importedBy: { type: 'operator', id: randomUUID(), email: requester.email },
      checkoutUrlHost: t.config.checkoutUrlHost,
      collectionAccounts: collectionAccounts(t.config.providers.bankTransfer),
    });
    assert.equal(imported.amount_mismatch, 1);

    const one = await consolePage(browser);
    await signIn(one.page, baseUrl, '/ops', requester.email, requester.password);
    await one.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Review' }).click();
    await one.page.getByRole('heading', { level: 1, name: 'Payments held for review' }).waitFor();
    const row = one.page.locator('tbody tr', { hasText: transfer.attemptId });
    assert.match(
      await row.innerText(),
      new RegExp(
        `live[\\s\\S]*GHS ${cedis(transfer.chargedMinor)}[\\s\\S]*GHS ${cedis(received)}[\\s\\S]*short by GHS 5\\.00[\\s\\S]*Statement line`,
      ),
    );
    assert.deepEqual(await axeViolations(one.page), []);
    await screenshots(one.page, 'ops-approvals-review');

    await row.getByRole('link', { name: `Decide ${transfer.attemptId}` }).click();
    await one.page.getByRole('heading', { level: 1, name: 'Decide a held payment' }).waitFor();
    assert.deepEqual(await axeViolations(one.page), []);
    await screenshots(one.page, 'ops-approvals-decide');
    await one.page.getByLabel('Credit what was received').check();
    await one.page.getByLabel(/^Reason/).fill('GCB line checked: the payer sent GHS 5.00 less');
    // The server requires the confirmation: the browser's own check is taken off to prove it.
    await one.page.locator('input[name=confirm]').evaluate((el) => el.removeAttribute('required'));
    await one.page.getByRole('button', { name: 'Submit decision' }).click();
    await one.page.getByRole('alert').filter({ hasText: 'Confirm that you have checked' }).waitFor();
    await one.page.getByLabel('Credit what was received').check();
    await one.page
      .getByLabel('I have checked the statement line, deposit or provider record behind this payment')
      .check();
    await one.page.getByRole('button', { name: 'Submit decision' }).click();
    await one.page.getByRole('status').filter({ hasText: 'Filed for a second operator' }).waitFor();
    assert.match(
      await one.page.locator('tbody tr', { hasText: transfer.attemptId }).innerText(),
      /Waiting for a second operator/,
    );

    // The requester sees the request but cannot approve it.
    await one.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Approvals' }).click();
    await one.page.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();
    assert.match(await one.page.locator('tbody').first().innerText(), /Your request: another operator decides it/);
    await one.close();

    const two = await consolePage(browser);
    await signIn(two.page, baseUrl, '/ops', approver.email, approver.password);
    await two.page.goto(`${baseUrl}/ops/approvals`);
    const waiting = two.page.locator('tbody tr', { hasText: transfer.attemptId });
    assert.match(
      await waiting.innerText(),
      new RegExp(
        `Credit what was received[\\s\\S]*expected GHS ${cedis(transfer.chargedMinor)}, received GHS ${cedis(received)}, short by GHS 5\\.00`,
      ),
    );
    assert.deepEqual(await axeViolations(two.page), []);
    await screenshots(two.page, 'ops-approvals-pending');
    await waiting.getByRole('button', { name: /^Approve/ }).click();
    await two.page.getByRole('status').filter({ hasText: 'Approved' }).waitFor();
    assert.match(await two.page.locator('tbody').nth(1).innerText(), /approved/);
    assert.deepEqual(await axeViolations(two.page), []);
    await screenshots(two.page, 'ops-approvals-decided');

    const [attempt] = await t.db.query<{ status: string; amount_received_minor: number }>(
      'SELECT status, amount_received_minor::int FROM payment_attempts WHERE id = $1',
      [transfer.attemptId],
    );
    assert.deepEqual([attempt!.status, attempt!.amount_received_minor], ['paid', received]);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);

    await two.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payouts' }).click();
    await two.page.getByRole('heading', { level: 1, name: 'Live payouts' }).waitFor();
    assert.deepEqual(await axeViolations(two.page), []);
    await screenshots(two.page, 'ops-approvals-payouts');
    await two.close();
  });
});
