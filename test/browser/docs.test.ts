// The API reference at /docs in a real browser (DESIGN §3: OpenAPI 3.1 generated from the validating
// schemas): it renders the operations from /openapi.json with everything served by Sika itself, so no
// request leaves 127.0.0.1; screenshots at 1280 and 390 px go to test-results/.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { useBrowserApp } from '../support/browser-app.ts';
import { screenshots, trackedPage } from './helpers.ts';

describe('API reference (/docs) in a browser', () => {
  let base: string;
  let browser: Browser;
  useBrowserApp((app) => {
    ({ base, browser } = app);
  });

  it('renders the operations from the OpenAPI document without any request leaving 127.0.0.1', async () => {
    const tracked = await trackedPage(browser);
    try {
      const { page } = tracked;
      const response = await page.goto(`${base}/docs`);
      assert.ok(response?.ok(), `GET /docs: ${response?.status()}`);
      await page
        .getByText('Create a hosted checkout session', { exact: true })
        .first()
        .waitFor({ state: 'visible', timeout: 20_000 });
      for (const summary of [
        'Retrieve a checkout session',
        'Record invoice lines for an invoice_ref',
        'Sync revenue lines (service codes)',
        'Create a payout',
      ]) {
        assert.ok(await page.getByText(summary, { exact: true }).first().isVisible(), `"${summary}" is shown`);
      }
      assert.equal(await page.getByText('Failed to load API definition').count(), 0);

      // The UI read the spec from this server, and asked nothing of any other host.
      assert.ok(
        tracked.requests.some((url) => /\/docs\/json$|\/openapi\.json$/.test(new URL(url).pathname)),
        `the spec was fetched: ${tracked.requests.join(', ')}`,
      );
      assert.deepEqual(tracked.offsite(), [], 'requests left 127.0.0.1');
      assert.deepEqual(tracked.pageErrors, [], 'the page threw');

      const paths = await screenshots(page, 'docs');
      assert.equal(paths.length, 2);
      assert.deepEqual(tracked.offsite(), [], 'requests left 127.0.0.1 while resizing');
    } finally {
      await tracked.close();
    }
  });
});
