// Support for the browser tests of the merchant dashboard and the operator console: Debian's
// Chromium through playwright-core (never a downloaded browser), sign-in, keyboard-only moves, and
// screenshots at 1280 and 390 px under test-results/ with a check that the page does not overflow.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { totpCode, totpStep, TOTP_PERIOD_S } from '../../src/accounts/totp.ts';
import { freshTotpCode, rememberSecondFactor } from '../support/console-client.ts';
import { DESKTOP, launchBrowser, PHONE, RESULTS_DIR } from './helpers.ts';

// Chromium, its settings and the sizes are ./helpers.ts's, shared with the payer page's tests.
export { CHROMIUM_ARGS, CHROMIUM_PATH, DESKTOP, PHONE, RESULTS_DIR } from './helpers.ts';
export const launchChromium = launchBrowser;

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Requests to any host but the test server (127.0.0.1, or localhost for the cross-site check): aborted. */
  offsite: string[];
  /** Closes the context and checks the console made no third-party request. */
  close(): Promise<void>;
}

/** A desktop-sized browser context whose requests may only go to the local test servers. */
export async function consolePage(browser: Browser): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: DESKTOP });
  const offsite: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    // chrome: and chrome-extension: are the browser's own (its PDF viewer, for a document shown inline), not the network.
    if (['data:', 'chrome:', 'chrome-extension:'].includes(url.protocol)) return route.continue();
    if (url.hostname === '127.0.0.1' || url.hostname === 'localhost') return route.continue();
    offsite.push(url.href);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  return {
    context,
    page,
    offsite,
    async close() {
      await context.close();
      assert.deepEqual(offsite, [], `the console asked for third-party resources: ${offsite.join(', ')}`);
    },
  };
}

/**
 * Screenshots the current page at 1280 and 390 px (full page) as test-results/{name}-{width}.png and
 * checks, at each width, that nothing makes the page itself scroll sideways (wide tables must scroll
 * inside their .table-wrap) and that the header stays within the viewport. Leaves the page at 1280.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    const layout = await page.evaluate(() => {
      const doc = document.documentElement;
      const header = document.querySelector('header');
      const offenders = [...document.querySelectorAll('body *')]
        .filter((el) => !el.closest('.table-wrap') && el.getBoundingClientRect().right > window.innerWidth + 1)
        .slice(0, 5)
        .map(
          (el) =>
            `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.split(' ').join('.')}` : ''}`,
        );
      return {
        scrollWidth: doc.scrollWidth,
        innerWidth: window.innerWidth,
        headerRight: header ? header.getBoundingClientRect().right : 0,
        offenders,
      };
    });
    assert.ok(
      layout.scrollWidth <= layout.innerWidth,
      `${name} at ${size.width} px: the page scrolls sideways (${layout.scrollWidth} px wide); too wide: ${layout.offenders.join(', ')}`,
    );
    assert.ok(layout.headerRight <= layout.innerWidth + 1, `${name} at ${size.width} px: the header overflows`);
    await page.screenshot({ path: join(RESULTS_DIR, `${name}-${size.width}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

/**
 * Signs in through the form of /dashboard or /ops and checks that it landed inside the console. An
 * operator's code step is answered with the secret the test helpers know, and an operator without a
 * second factor yet enrols it as the console requires (test/support/console-client.ts operatorSecondFactors).
 */
export async function signIn(
  page: Page,
  baseUrl: string,
  base: '/dashboard' | '/ops',
  email: string,
  password: string,
): Promise<void> {
  await page.goto(`${baseUrl}${base}/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await Promise.all([
    page.waitForURL((url) => !url.pathname.endsWith('/login')),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  if (base === '/ops' && new URL(page.url()).pathname === '/ops/login/code') {
    await page.getByLabel('Code').fill(await freshTotpCode(email));
    await Promise.all([
      page.waitForURL((url) => url.pathname !== '/ops/login/code'),
      page.getByRole('button', { name: 'Verify' }).click(),
    ]);
  }
  if (base === '/ops' && new URL(page.url()).pathname === '/ops/account/2fa') {
    await enrolSecondFactor(page, email, password);
    await continuePastRecoveryCodes(page);
  }
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** On the enrolment page: reads the secret, confirms with its current code and the password, keeps the secret, and continues past the recovery codes. */
export async function enrolSecondFactor(
  page: Page,
  email: string,
  password: string,
): Promise<{ secret: string; recoveryCodes: string[] }> {
  const secret = (await page.locator('#totp-secret').innerText()).replace(/\s+/g, '');
  const step = totpStep(Date.now());
  await page.getByLabel('6-digit code').fill(totpCode(secret, step * TOTP_PERIOD_S * 1000));
  await page.getByLabel('Your password').fill(password);
  await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
  const recoveryCodes = (await page.locator('#recovery-codes li').allInnerTexts()).map((code) => code.trim());
  assert.equal(recoveryCodes.length, 10, 'ten recovery codes are shown once');
  rememberSecondFactor(email, secret, step, recoveryCodes);
  return { secret, recoveryCodes };
}

/** Leaves the recovery codes page for the console. */
export const continuePastRecoveryCodes = (page: Page) =>
  Promise.all([
    page.waitForURL((url) => url.pathname !== '/ops/account/2fa'),
    page.getByRole('link', { name: 'I have saved them: continue' }).click(),
  ]);

const AXE_PATH = join(process.cwd(), 'node_modules/axe-core/axe.min.js');

/** axe-core's violations on the page as it is, as "rule (help): nodes" lines (none expected). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE_PATH });
  return page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: { run(): Promise<{ violations: { id: string; help: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe.run();
    return result.violations.map(
      (v) =>
        `${v.id} (${v.help}): ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 5)
          .join(', ')}`,
    );
  });
}

/** Describes the focused element: tag, accessible-ish name, and whether a visible focus outline is drawn. */
export const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return { tag: 'body', text: '', name: '', value: '', outline: 'none' };
    const style = getComputedStyle(el);
    return {
      tag: el.tagName.toLowerCase(),
      text: (el.getAttribute('aria-label') || el.textContent || '').trim().replace(/\s+/g, ' '),
      name: el.getAttribute('name') ?? el.id ?? '',
      value: (el as HTMLInputElement).value ?? '',
      outline:
        style.outlineStyle === 'none' || style.outlineWidth === '0px'
          ? 'none'
          : `${style.outlineWidth} ${style.outlineStyle}`,
    };
  });

/**
 * Presses Tab until the focused element matches, as a keyboard user would (at most `max` presses), and
 * checks the focus is visible there. Returns the number of presses.
 */
export async function tabTo(
  page: Page,
  matches: (f: Awaited<ReturnType<typeof focused>>) => boolean,
  what: string,
  max = 60,
): Promise<number> {
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press('Tab');
    const f = await focused(page);
    if (matches(f)) {
      assert.notEqual(f.outline, 'none', `${what} has no visible focus indicator`);
      return presses;
    }
  }
  assert.fail(`${what} was not reached with ${max} presses of Tab`);
}
