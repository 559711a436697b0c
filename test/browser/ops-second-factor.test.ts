// Operators' second factor and reset in Chromium (issue 30): an operator without one is sent to enrol at
// sign-in, at 1280 and at 390 px (phone); the enrolment, recovery codes, code step, sign-in page (with its
// "Forgot your password?" line) and Operators page pass axe-core with no violation at 1280 px and are
// screenshotted at 1280 and 390 px (test-results/ops-2fa-*.png).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createOperator } from '../../src/ops/service.ts';
import { freshTotpCode } from '../support/console-client.ts';
import type { TestContext } from '../support/helpers.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import {
  axeViolations,
  consolePage,
  continuePastRecoveryCodes,
  enrolSecondFactor,
  PHONE,
  screenshots,
} from './console-support.ts';

const PASSWORD = 'operator passphrase 30';

describe("operators' second factor in Chromium", () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  useBrowserApp((app) => {
    ({ t, base: baseUrl, browser } = app);
  });

  async function checked(page: Page, name: string): Promise<void> {
    assert.deepEqual(await axeViolations(page), [], `${name}: axe at 1280 px`);
    await screenshots(page, name);
  }

  async function passwordStep(page: Page, email: string): Promise<void> {
    await page.goto(`${baseUrl}/ops/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([
      page.waitForURL((url) => !url.pathname.endsWith('/login')),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
  }

  it('at 1280 px: sent to enrol at the first sign-in, recovery codes once, then the code step at the next sign-in', async () => {
    const email = `ops-2fa-${randomUUID().slice(0, 8)}@sika.example`;
    await createOperator(t.db, { email, password: PASSWORD, role: 'operator' });
    const { page, close } = await consolePage(browser);
    try {
      await page.goto(`${baseUrl}/ops/login`);
      assert.match(await page.locator('main').innerText(), /Forgot your password\? Ask another operator to reset it/);
      await checked(page, 'ops-2fa-sign-in');

      await passwordStep(page, email);
      assert.equal(new URL(page.url()).pathname, '/ops/account/2fa', 'sent to enrol');
      assert.ok(await page.getByRole('img', { name: 'QR code of the two-factor secret' }).isVisible());
      await checked(page, 'ops-2fa-enrol');
      const { recoveryCodes } = await enrolSecondFactor(page, email, PASSWORD);
      assert.equal(recoveryCodes.length, 10);
      await checked(page, 'ops-2fa-recovery-codes');
      await continuePastRecoveryCodes(page);
      assert.equal(new URL(page.url()).pathname, '/ops');

      await Promise.all([
        page.waitForURL((url) => url.pathname === '/ops/login'),
        page.getByRole('button', { name: 'Sign out' }).click(),
      ]);
      await passwordStep(page, email);
      assert.equal(new URL(page.url()).pathname, '/ops/login/code');
      await checked(page, 'ops-2fa-code');
      await page.getByLabel('Code').fill(await freshTotpCode(email));
      await Promise.all([
        page.waitForURL((url) => url.pathname === '/ops'),
        page.getByRole('button', { name: 'Verify' }).click(),
      ]);

      await page.goto(`${baseUrl}/ops/account`);
      assert.match(await page.locator('main').innerText(), /Recovery codes left: 10 of 10/);
      await checked(page, 'ops-2fa-account');
    } finally {
      await close();
    }
  });

  it('at 390 px (a phone): the enrolment fits and works; the Operators page resets another operator', async () => {
    const email = `ops-2fa-phone-${randomUUID().slice(0, 8)}@sika.example`;
    const other = `ops-2fa-other-${randomUUID().slice(0, 8)}@sika.example`;
    await createOperator(t.db, { email, password: PASSWORD, role: 'operator' });
    await createOperator(t.db, { email: other, password: PASSWORD, role: 'teller' });
    let temporary = '';
    const { page, close } = await consolePage(browser);
    try {
      await page.setViewportSize(PHONE);
      await passwordStep(page, email);
      assert.equal(new URL(page.url()).pathname, '/ops/account/2fa');
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= PHONE.width, `the enrolment page does not scroll sideways at 390 px (${width} px)`);
      await enrolSecondFactor(page, email, PASSWORD);
      await continuePastRecoveryCodes(page);
      await page.setViewportSize({ width: 1280, height: 800 });

      await page.goto(`${baseUrl}/ops/operators`);
      const row = page.getByRole('row', { name: new RegExp(other.replace(/[.]/g, '\\.')) });
      assert.match(await row.innerText(), /teller\s+Off\s+Never/);
      await checked(page, 'ops-2fa-operators');
      await Promise.all([page.waitForLoadState(), row.getByRole('button', { name: `Reset ${other}` }).click()]);
      temporary = (await page.locator('#temporary-password').innerText()).trim();
      assert.ok(temporary.length >= 16);
      await checked(page, 'ops-2fa-operator-reset');
    } finally {
      await close();
    }
    // The teller signs in with the temporary password: their own password first, then the second factor, then the desk.
    const { page: tellerPage, close: closeTeller } = await consolePage(browser);
    try {
      await tellerPage.goto(`${baseUrl}/ops/login`);
      await tellerPage.getByLabel('Email').fill(other);
      await tellerPage.getByLabel('Password').fill(temporary);
      await Promise.all([
        tellerPage.waitForURL((url) => !url.pathname.endsWith('/login')),
        tellerPage.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      assert.equal(new URL(tellerPage.url()).pathname, '/ops/account', 'the temporary password must be changed first');
      await checked(tellerPage, 'ops-2fa-temporary-password');
      await tellerPage.getByLabel('Temporary password').fill(temporary);
      await tellerPage.getByLabel('New password (at least 10 characters)').fill('the teller own passphrase');
      await tellerPage.getByLabel('New password again').fill('the teller own passphrase');
      await tellerPage.getByRole('button', { name: 'Save password' }).click();
      await tellerPage.goto(`${baseUrl}/ops`);
      assert.equal(new URL(tellerPage.url()).pathname, '/ops/account/2fa', 'then the second factor');
      await enrolSecondFactor(tellerPage, other, 'the teller own passphrase');
      await continuePastRecoveryCodes(tellerPage);
      assert.equal(new URL(tellerPage.url()).pathname, '/ops/teller');
    } finally {
      await closeTeller();
    }
  });
});
