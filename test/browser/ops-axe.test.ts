// Issue 30: every page of the operator console, reached through its own navigation, passes axe-core with no
// violation at 1280 px (the pages other browser tests fill with data are checked there too; this one walks
// them all, so a page added to the nav is checked the day it appears), and none overflows at 390 px.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createOperator } from '../../src/ops/service.ts';
import type { TestContext } from '../support/helpers.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { axeViolations, consolePage, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'operator passphrase 31';

describe('every operator console page in Chromium', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  const operator = { email: `ops-axe-${randomUUID().slice(0, 8)}@sika.example`, password: PASSWORD };

  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    await createOperator(t.db, { ...operator, role: 'operator' });
  });

  it('each page in the main navigation, and the account page, has no axe violation at 1280 px', async () => {
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    await page.goto(`${baseUrl}/ops`);
    const links = await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link')
      .evaluateAll((anchors) => anchors.map((a) => [a.textContent ?? '', (a as HTMLAnchorElement).pathname] as const));
    assert.ok(links.length >= 11, `the nav lists the console's pages: ${JSON.stringify(links)}`);
    for (const [name, path] of [...links, ['Account', '/ops/account'] as const]) {
      const res = await page.goto(`${baseUrl}${path}`);
      assert.equal(res?.status(), 200, `${name} ${path}`);
      assert.deepEqual(await axeViolations(page), [], `${name} (${path}): axe at 1280 px`);
      await screenshots(page, `ops-axe-${path.replace(/\W+/g, '-').replace(/^-|-$/g, '') || 'ops'}`);
    }
    await close();
  });
});
