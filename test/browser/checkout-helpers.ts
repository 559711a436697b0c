// What the hosted payment page's browser tests need beyond ./helpers.ts (the app, Chromium, tracked pages,
// screenshots): the school fees session they pay, their page and attempt look-ups, a check that a phone never
// scrolls sideways (360 and 390 px), and the weight of a first load measured through the DevTools protocol
// (bytes on the wire, DOMContentLoaded).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import type { Db } from '../../src/db/index.ts';
import type { TestContext } from '../support/helpers.ts';
import { call, syncCodes } from '../support/http.ts';
import { DESKTOP, PHONE, screenshots, type TrackedPage } from './helpers.ts';

export const NARROW_PHONE = { width: 360, height: 740 };

/**
 * A new merchant's Test session of GHS 500.00 as a school sends it: two invoice lines (unless `lines` is false),
 * a description and a customer (a tall summary); `callbackUrl` and `body` add to or override its fields.
 */
export async function schoolFeesSession(
  t: TestContext,
  options: { lines?: boolean; callbackUrl?: string; body?: Record<string, string | number> } = {},
): Promise<{ m: CreatedMerchant; id: string; invoiceRef: string }> {
  const m = await t.merchant();
  const invoiceRef = `INV-${randomUUID().slice(0, 8)}`;
  if (options.lines !== false) {
    await syncCodes(t, m.test_api_key, [
      { code: 'TUITION', name: 'Tuition' },
      { code: 'BOOKS', name: 'Books' },
    ]);
    const lines = await call(t, 'POST', '/api/v1/invoice-lines', {
      key: m.test_api_key,
      body: {
        invoice_ref: invoiceRef,
        currency: 'GHS',
        lines: [
          { code: 'TUITION', name: 'Tuition, term 2', amount_minor: 42500 },
          { code: 'BOOKS', name: 'Exercise books', amount_minor: 7500 },
        ],
      },
    });
    assert.equal(lines.statusCode, 200, lines.body);
  }
  const res = await call(t, 'POST', '/api/v1/sessions', {
    key: m.test_api_key,
    body: {
      amount_minor: 50000,
      invoice_ref: invoiceRef,
      description: 'School fees, term 2',
      ...(options.callbackUrl === undefined ? {} : { callback_url: options.callbackUrl }),
      customer: { name: 'Ama Mensah' },
      ...options.body,
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  return { m, id: res.json().id as string, invoiceRef };
}

export const heading = (page: Page, name: string | RegExp) => page.getByRole('heading', { name });

/** The session's pending attempt (there is one). */
export const pendingAttempt = async (db: Db, sessionId: string) =>
  (
    await db.query<{ id: string; provider_reference: string }>(
      "SELECT id, provider_reference FROM payment_attempts WHERE session_id = $1 AND status = 'pending'",
      [sessionId],
    )
  )[0]!;

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
