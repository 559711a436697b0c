// The API reference at /docs in a real browser (DESIGN §3: OpenAPI 3.1 generated from the validating
// schemas): Sika's page (src/web/docs.ts) renders the operations from the document with everything served
// by Sika itself, so no request leaves 127.0.0.1, under its content security policy with no violation and
// nothing in the console, at 1280 and 390 px; screenshots go to test-results/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { useBrowserApp } from '../support/browser-app.ts';
import { DESKTOP, PHONE, RESULTS_DIR, screenshots, trackedPage } from './helpers.ts';

/**
 * axe-core rules Swagger UI's own React markup breaks and Sika's stylesheet and script cannot mend
 * (src/web/docs.ts mends the contrast and the main landmark), each on the named nodes only; any other
 * rule, or these on other nodes, fails the test:
 * - heading-order: Swagger UI puts each tag's h3 under the info's h2 and the Schemas' h4 after them.
 * - select-name: the Servers select has no label in Swagger UI's markup (it sits beside a "Servers" span).
 * - scrollable-region-focusable: an example's code block scrolls without a tabindex.
 * - nested-interactive: an operation's summary is a button holding the copy-path and lock buttons.
 */
const SWAGGER_UI_VIOLATIONS: Record<string, RegExp> = {
  'heading-order': /^(#operations-tag-|\.models > h4)/,
  'select-name': /^#servers$/,
  'scrollable-region-focusable': /\.highlight-code > \.example\.microlight$/,
  'nested-interactive':
    /(^#operations-[\w-]+ > |^)\.opblock-summary-(get|post|put|delete)(\.opblock-summary)? > \.opblock-summary-control$/,
};

const AXE_SOURCE = readFileSync(join(process.cwd(), 'node_modules/axe-core/axe.min.js'), 'utf8');

/** axe-core's violations as "rule (help): nodes" lines, loaded through the debugger: the page's policy rightly refuses an injected script tag. */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const { violations } = await (
      window as unknown as {
        axe: { run(): Promise<{ violations: { id: string; help: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe.run();
    return violations.map((v) => `${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}

/** The violations not explained above, as "rule: node" lines. */
const unexplained = (lines: string[]) =>
  lines.flatMap((line) => {
    const [rule, nodes] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf('): ') + 3)];
    const allowed = SWAGGER_UI_VIOLATIONS[rule];
    return nodes
      .split(', ')
      .filter((node) => !allowed?.test(node))
      .map((node) => `${rule}: ${node}`);
  });

describe('API reference (/docs) in a browser', () => {
  let base: string;
  let browser: Browser;
  useBrowserApp((app) => {
    ({ base, browser } = app);
  });

  for (const viewport of [DESKTOP, PHONE]) {
    it(`at ${viewport.width} px: Sika's reference renders createSession with no console error, no CSP violation and no request leaving 127.0.0.1`, async () => {
      const tracked = await trackedPage(browser, viewport);
      try {
        const { page } = tracked;
        const consoleErrors: string[] = [];
        page.on('console', (message) => {
          if (message.type() === 'error' || message.type() === 'warning') consoleErrors.push(message.text());
        });
        // Each violation of the page's policy, as the page itself sees it.
        await page.addInitScript(() => {
          document.addEventListener('securitypolicyviolation', (event) =>
            console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`),
          );
        });
        const response = await page.goto(`${base}/docs`);
        assert.ok(response?.ok(), `GET /docs: ${response?.status()}`);
        const policy = (await response?.allHeaders())?.['content-security-policy'] ?? '';
        assert.match(policy, /script-src 'self';/, 'scripts only from Sika itself');
        assert.doesNotMatch(policy, /unsafe-eval|upgrade-insecure-requests/);

        const createSession = page.locator('#operations-checkout-createSession, [id$="-createSession"]').first();
        await createSession.waitFor({ state: 'visible', timeout: 20_000 });
        assert.match(await createSession.innerText(), /POST\s*\/api\/v1\/sessions/);
        assert.ok(
          await page.getByText('Create a hosted checkout session', { exact: true }).first().isVisible(),
          'createSession is shown with its summary',
        );
        for (const summary of ['Retrieve a checkout session', 'Create a payout']) {
          assert.ok(await page.getByText(summary, { exact: true }).first().isVisible(), `"${summary}" is shown`);
        }
        assert.match(await page.title(), /Sika/);
        assert.ok(
          await page
            .getByRole('heading', { name: /Sika API/ })
            .first()
            .isVisible(),
        );
        assert.equal(await page.getByText('Failed to load API definition').count(), 0);

        // The top of the page as a reader first sees it; the full page, operation open, comes last.
        await page.screenshot({ path: join(RESULTS_DIR, `docs-top-${viewport.width}.png`) });
        // Opening an operation shows its parameters and answers, still within the policy.
        await page.getByText('Create a hosted checkout session', { exact: true }).first().click();
        await page.getByText('Responses', { exact: true }).first().waitFor({ state: 'visible' });

        assert.ok(
          tracked.requests.some((url) => /\/docs\/json$/.test(new URL(url).pathname)),
          `the document was fetched from Sika: ${tracked.requests.join(', ')}`,
        );
        assert.deepEqual(unexplained(await axeViolations(page)), [], 'axe-core violations');
        assert.deepEqual(tracked.offsite(), [], 'requests left 127.0.0.1');
        assert.deepEqual(tracked.pageErrors, [], 'the page threw');
        assert.deepEqual(consoleErrors, [], 'console errors or warnings');
        const paths = await screenshots(page, 'docs', [viewport]);
        assert.equal(paths.length, 1);
      } finally {
        await tracked.close();
      }
    });
  }
});
