// What the hosted payment page's browser tests need beyond ./helpers.ts (Chromium, tracked pages,
// screenshots): a check that a phone never scrolls sideways (360 and 390 px), and the weight of a first
// load measured through the DevTools protocol (bytes on the wire, DOMContentLoaded).
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, PHONE, screenshots, type TrackedPage } from './helpers.ts';

export const NARROW_PHONE = { width: 360, height: 740 };

/** Fails when any request left 127.0.0.1 or the page's script threw. */
export function assertCleanRun(tracked: TrackedPage): void {
  assert.deepEqual(tracked.offsite(), [], 'requests left 127.0.0.1');
  assert.ok(tracked.requests.length > 0, 'the page made requests');
  assert.deepEqual(tracked.pageErrors, [], 'the page script threw');
}

/**
 * Checks that at 360 and 390 px nothing makes the page scroll sideways, then saves
 * test-results/checkout-{name}-{width}.png at 1280 (unless phoneOnly) and 390 px. Leaves the page at 390 px.
 */
export async function checkoutScreenshots(
  page: Page,
  name: string,
  options: { phoneOnly?: boolean } = {},
): Promise<void> {
  for (const size of [NARROW_PHONE, PHONE]) {
    await page.setViewportSize(size);
    const layout = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      offenders: [...document.querySelectorAll('body *')]
        .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
        .slice(0, 5)
        .map((el) => `${el.tagName.toLowerCase()}.${String(el.className)}`),
    }));
    assert.ok(
      layout.scrollWidth <= layout.innerWidth,
      `${name} at ${size.width} px scrolls sideways (${layout.scrollWidth} px): ${layout.offenders.join(', ')}`,
    );
  }
  await screenshots(page, `checkout-${name}`, options.phoneOnly ? [PHONE] : [DESKTOP, PHONE]);
}

export interface FirstLoad {
  /** Bytes on the wire (headers and compressed bodies) of every response of the load. */
  transferredBytes: number;
  responses: { url: string; status: number; encodedBytes: number; contentEncoding: string | null }[];
  domContentLoadedMs: number;
  loadMs: number;
}

/** Loads url in a fresh context with the cache off and adds up Network.loadingFinished encodedDataLength. */
export async function measureFirstLoad(browser: Browser, url: string, viewport = PHONE): Promise<FirstLoad> {
  const context = await browser.newContext({ viewport });
  try {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    const byId = new Map<
      string,
      { url: string; status: number; contentEncoding: string | null; encodedBytes: number }
    >();
    cdp.on('Network.responseReceived', (event) => {
      const headers = Object.fromEntries(
        Object.entries(event.response.headers).map(([k, v]) => [k.toLowerCase(), String(v)]),
      );
      byId.set(event.requestId, {
        url: event.response.url,
        status: event.response.status,
        contentEncoding: headers['content-encoding'] ?? null,
        encodedBytes: 0,
      });
    });
    cdp.on('Network.loadingFinished', (event) => {
      const entry = byId.get(event.requestId);
      if (entry) entry.encodedBytes = event.encodedDataLength;
    });
    await page.goto(url, { waitUntil: 'load' });
    // The last loadingFinished can trail the load event.
    await page.waitForTimeout(300);
    const timing = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      return { dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd };
    });
    const responses = [...byId.values()].filter((r) => !r.url.startsWith('data:'));
    return {
      transferredBytes: responses.reduce((sum, r) => sum + r.encodedBytes, 0),
      responses,
      domContentLoadedMs: Math.round(timing.dcl),
      loadMs: Math.round(timing.load),
    };
  } finally {
    await context.close();
  }
}
