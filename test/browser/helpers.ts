// Browser test infrastructure: Debian's Chromium (/usr/bin/chromium, never a downloaded browser) driven
// through playwright-core, a listening test app to point it at, a record of every request a page makes
// (so a test can assert nothing left 127.0.0.1), and screenshots at phone and desktop widths under
// test-results/. Run with `npm run test:browser`.
import assert from 'node:assert/strict';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startTestApp, type TestContext } from '../support/helpers.ts';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];
export const RESULTS_DIR = join(process.cwd(), 'test-results');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
}

export interface BrowserApp {
  t: TestContext;
  /** The app's base URL on 127.0.0.1. */
  base: string;
  browser: Browser;
  /** Closes Chromium, then the app. */
  close(): Promise<void>;
}

/** A test app (fresh storage, see ../helpers.ts) listening on 127.0.0.1, its base URL, and Chromium to point at it. */
export async function startBrowserApp(env: Record<string, string> = {}): Promise<BrowserApp> {
  const t = await startTestApp(env);
  try {
    const base = await t.listen();
    const browser = await launchBrowser();
    return {
      t,
      base,
      browser,
      async close() {
        await browser.close();
        await t.close();
      },
    };
  } catch (error) {
    await t.close();
    throw error;
  }
}

export interface TrackedPage {
  context: BrowserContext;
  page: Page;
  /** Every URL the page requested, in order. */
  requests: string[];
  /** Requests to any host but 127.0.0.1 (data: and blob: URLs aside); they are also aborted. */
  offsite(): string[];
  /** Uncaught page errors (exceptions thrown by the page's scripts). */
  pageErrors: string[];
  close(): Promise<void>;
}

const isLocal = (url: string): boolean => {
  if (url.startsWith('data:') || url.startsWith('blob:') || url === 'about:blank') return true;
  try {
    return new URL(url).hostname === '127.0.0.1';
  } catch {
    return false;
  }
};

/** A new page in its own context that records every request and never lets one leave 127.0.0.1. */
export async function trackedPage(browser: Browser, viewport = DESKTOP): Promise<TrackedPage> {
  const context = await browser.newContext({ viewport, serviceWorkers: 'block' });
  // Nothing may leave the machine: a request elsewhere is aborted (and reported by offsite()).
  await context.route('**/*', (route) =>
    isLocal(route.request().url()) ? route.continue() : route.abort('blockedbyclient'),
  );
  const page = await context.newPage();
  const requests: string[] = [];
  const pageErrors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return {
    context,
    page,
    requests,
    pageErrors,
    offsite: () => requests.filter((url) => !isLocal(url)),
    close: () => context.close(),
  };
}

/** Full-page screenshots of the current page at each width as test-results/{name}-{width}.png. Returns the paths. */
export async function screenshots(page: Page, name: string, sizes = [DESKTOP, PHONE]): Promise<string[]> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const paths: string[] = [];
  for (const size of sizes) {
    await page.setViewportSize(size);
    const path = join(RESULTS_DIR, `${name}-${size.width}.png`);
    await page.screenshot({ path, fullPage: true });
    assert.ok(statSync(path).size > 1_000, `${path} is empty`);
    paths.push(path);
  }
  return paths;
}
