// Support for the browser tests of the merchant dashboard and the operator console: Debian's
// Chromium through playwright-core (never a downloaded browser), sign-in, keyboard-only moves, and
// screenshots at 1280 and 390 px under test-results/ with a check that the page does not overflow.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'];
export const RESULTS_DIR = join(process.cwd(), 'test-results');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });

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
    if (url.protocol === 'data:' || url.hostname === '127.0.0.1' || url.hostname === 'localhost') return route.continue();
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
        .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.split(' ').join('.')}` : ''}`);
      return { scrollWidth: doc.scrollWidth, innerWidth: window.innerWidth, headerRight: header ? header.getBoundingClientRect().right : 0, offenders };
    });
    assert.ok(layout.scrollWidth <= layout.innerWidth, `${name} at ${size.width} px: the page scrolls sideways (${layout.scrollWidth} px wide); too wide: ${layout.offenders.join(', ')}`);
    assert.ok(layout.headerRight <= layout.innerWidth + 1, `${name} at ${size.width} px: the header overflows`);
    await page.screenshot({ path: join(RESULTS_DIR, `${name}-${size.width}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

/** Signs in through the form of /dashboard or /ops and checks that it landed inside the console. */
export async function signIn(page: Page, baseUrl: string, base: '/dashboard' | '/ops', email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}${base}/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await Promise.all([page.waitForURL((url) => !url.pathname.endsWith('/login')), page.getByRole('button', { name: 'Sign in' }).click()]);
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
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
      outline: style.outlineStyle === 'none' || style.outlineWidth === '0px' ? 'none' : `${style.outlineWidth} ${style.outlineStyle}`,
    };
  });

/**
 * Presses Tab until the focused element matches, as a keyboard user would (at most `max` presses), and
 * checks the focus is visible there. Returns the number of presses.
 */
export async function tabTo(page: Page, matches: (f: Awaited<ReturnType<typeof focused>>) => boolean, what: string, max = 60): Promise<number> {
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
