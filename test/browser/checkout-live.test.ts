// Browser tests of the payer page made ready for Live providers (issue 16), in Test mode, in Debian's
// Chromium: the network tiles and the phone field above the fold at 360x740, network tiles that fit at 320
// and 360 px, the code step (resend, resends left, no dead button on 409/503, the provider's prompt as plain
// text), a card payer sent to the provider's page and back to /pay/{id}?attempt= (confirmed with refresh,
// the provider's query parameters ignored), bank transfer details with copy buttons, and one amount.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import { simulate, startAttempt } from '../support/checkout.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import {
  assertCleanRun,
  checkoutScreenshots,
  heading,
  NARROW_PHONE,
  pendingAttempt,
  schoolFeesSession,
} from './checkout-helpers.ts';
import { PHONE, trackedPage } from './helpers.ts';

const SMALLEST_PHONE = { width: 320, height: 640 };

describe('payer page ready for Live, in a browser', () => {
  let t: TestContext;
  let base: string;
  let browser: Browser;
  useBrowserApp((app) => {
    ({ t, base, browser } = app);
  });

  /** A Test session of GHS 500.00: two invoice lines (or none), a description and a customer, as a school would send. */
  const newSession = (withLines = true) => schoolFeesSession(t, { lines: withLines, callbackUrl: `${base}/healthz` });
  /** Sets fields of what an attempt's adapter added to its instructions (over what it has), as a Live provider would have. */
  const setInstructions = (attemptId: string, instructions: Record<string, unknown>) =>
    t.db.query('UPDATE payment_attempts SET instructions = instructions || $2::jsonb WHERE id = $1', [
      attemptId,
      JSON.stringify(instructions),
    ]);

  it('at 360x740, choosing Mobile Money shows the network tiles and the phone field without scrolling', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, NARROW_PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await page.getByRole('radio', { name: /^Card/ }).check();
    assert.equal(await page.locator('[data-panel=momo]').isHidden(), true);
    await page.getByRole('radio', { name: /^Mobile Money/ }).check();
    await page.evaluate(() => window.scrollTo(0, 0));
    const fold = await page.evaluate(() => {
      const phone = document.querySelector('#phone')!.getBoundingClientRect();
      return {
        scrollY: window.scrollY,
        height: window.innerHeight,
        tiles: [...document.querySelectorAll('[data-panel=momo] .nets .opt')]
          .map((el) => el.getBoundingClientRect())
          .map((r) => ({ top: r.top, bottom: r.bottom })),
        phone: { top: phone.top, bottom: phone.bottom },
        // Nothing (a sticky bar, a banner) covers the field.
        phoneOnTop: document.elementFromPoint(phone.left + phone.width / 2, phone.top + phone.height / 2)?.id,
      };
    });
    console.log(
      `360x740 after choosing Mobile Money: network tiles ${fold.tiles.map((r) => `${Math.round(r.top)}-${Math.round(r.bottom)}`).join(', ')} px, phone field ${Math.round(fold.phone.top)}-${Math.round(fold.phone.bottom)} px of ${fold.height}`,
    );
    assert.equal(fold.scrollY, 0);
    assert.equal(fold.tiles.length, 3);
    for (const box of [...fold.tiles, fold.phone])
      assert.ok(
        box.top >= 0 && box.bottom <= fold.height,
        `${JSON.stringify(box)} is within the first ${fold.height} px`,
      );
    assert.equal(fold.phoneOnTop, 'phone');
    // The panel sits right under the Mobile Money option, before the other methods.
    const order = await page.evaluate(() =>
      [...document.querySelectorAll('.rails > .opt input, .rails > [data-panel]')].map(
        (el) => (el as HTMLInputElement).value || el.getAttribute('data-panel'),
      ),
    );
    assert.deepEqual(order, ['momo', 'momo', 'card', 'card', 'bank_transfer', 'bank_transfer', 'cash', 'cash']);
    await checkoutScreenshots(page, 'live-momo-fold');
    assertCleanRun(g);
    await g.close();
  });

  it('the network tiles (AT Money too) stay inside their grid at 320 and 360 px, and nothing overflows', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, SMALLEST_PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    for (const size of [SMALLEST_PHONE, NARROW_PHONE]) {
      await page.setViewportSize(size);
      const layout = await page.evaluate(() => {
        const grid = document.querySelector('[data-panel=momo] .nets')!;
        const gridBox = grid.getBoundingClientRect();
        const cardBox = grid.closest('.card')!.getBoundingClientRect();
        return {
          grid: { left: gridBox.left, right: gridBox.right },
          card: { left: cardBox.left, right: cardBox.right },
          tiles: [...grid.querySelectorAll('.opt')].map((tile) => {
            const box = tile.getBoundingClientRect();
            const text = tile.querySelector('span')!.getBoundingClientRect();
            return {
              name: (tile as HTMLElement).innerText.trim(),
              left: box.left,
              right: box.right,
              textLeft: text.left,
              textRight: text.right,
              scrollWidth: tile.scrollWidth,
              clientWidth: tile.clientWidth,
            };
          }),
          scrollWidth: document.documentElement.scrollWidth,
          innerWidth: window.innerWidth,
          wide: [...document.querySelectorAll('body *')]
            .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5)
            .map((el) => el.tagName),
        };
      });
      console.log(
        `${size.width} px: grid ${layout.grid.left.toFixed(1)}-${layout.grid.right.toFixed(1)}; ${layout.tiles.map((tile) => `${tile.name.replace(/\s+/g, ' ')} ${tile.left.toFixed(1)}-${tile.right.toFixed(1)}`).join(', ')}`,
      );
      assert.deepEqual(
        layout.tiles.map((tile) => tile.name.replace(/\s+/g, ' ')),
        ['MTN MoMo', 'Telecel Cash', 'AT Money'],
      );
      assert.ok(
        layout.grid.left >= layout.card.left && layout.grid.right <= layout.card.right,
        `${size.width} px: the grid is inside its card`,
      );
      for (const tile of layout.tiles) {
        assert.ok(
          tile.left >= layout.grid.left - 0.5 && tile.right <= layout.grid.right + 0.5,
          `${size.width} px: ${tile.name} (${tile.left}-${tile.right}) is inside the grid`,
        );
        assert.ok(
          tile.textLeft >= tile.left && tile.textRight <= tile.right + 0.5,
          `${size.width} px: the text of ${tile.name} is inside its tile`,
        );
        assert.ok(
          tile.scrollWidth <= tile.clientWidth,
          `${size.width} px: ${tile.name} does not overflow (${tile.scrollWidth} > ${tile.clientWidth})`,
        );
      }
      assert.ok(
        layout.scrollWidth <= layout.innerWidth,
        `${size.width} px scrolls sideways: ${layout.wide.join(', ')}`,
      );
      assert.deepEqual(layout.wide, []);
    }
    assertCleanRun(g);
    await g.close();
  });

  it('the code step (mode verification_code): resend with resends left, the provider prompt as plain text, and no dead button when the API says no more (503, 409)', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    await page.getByRole('radio', { name: 'Telecel Cash', exact: true }).check();
    await page.getByLabel('Mobile Money number').fill('020 123 4567');
    await page.getByRole('button', { name: 'Pay GHS 507.50' }).click();
    await heading(page, 'Enter your Telecel Cash code').waitFor();
    const attempt = await pendingAttempt(t.db, id);
    const api = `/api/v1/checkout/sessions/${id}/provider-attempts/${attempt.id}`;
    assert.equal((await call(t, 'GET', api)).json().verification_required, true);
    await page.getByText('You can resend it 3 more times.').waitFor();
    await page.getByRole('button', { name: 'Resend code' }).click();
    await page.locator('#live', { hasText: 'We sent a new code' }).waitFor();
    await page.getByText('You can resend it 2 more times.').waitFor();

    // The provider's own prompt (Paystack's display_text) is shown as text, never as markup.
    const prompt = '<b>Dial *110#</b> to generate a voucher & enter it below';
    await setInstructions(attempt.id, { display_text: prompt });
    await page.reload();
    assert.equal(await page.locator('[data-provider-text]').innerText(), prompt);
    assert.equal(await page.locator('[data-provider-text] b').count(), 0);
    await page.getByText('Telecel Cash says:').waitFor();
    await checkoutScreenshots(page, 'live-code-step', { phoneOnly: true });

    // An attempt whose provider is no longer served answers 503 PROVIDER_RAIL_UNAVAILABLE (a provider without a
    // re-send, 409 RESEND_NOT_AVAILABLE, is checked against the Paystack stand-in): the button goes, a message stays.
    await page.route(`**${api}/resend`, (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({
          error: {
            code: 'PROVIDER_RAIL_UNAVAILABLE',
            message: 'momo payments are not available for Live checkouts right now; choose another method.',
          },
        }),
      }),
    );
    await page.getByRole('button', { name: 'Resend code' }).click();
    await page.locator('[data-resends]', { hasText: 'A new code cannot be sent for this payment.' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Resend code' }).count(), 0, 'no resend button is left');
    await page.locator('#live', { hasText: 'A new code cannot be sent' }).waitFor();
    assert.equal(await page.locator('.screen > [data-error]').isHidden(), true);
    await page.unroute(`**${api}/resend`);

    // The limit reached elsewhere (another tab): 409 RESEND_LIMIT_REACHED does the same.
    await page.reload();
    await page.getByText('You can resend it 2 more times.').waitFor();
    for (let i = 0; i < 2; i++) assert.equal((await call(t, 'POST', `${api}/resend`)).statusCode, 200);
    await page.getByRole('button', { name: 'Resend code' }).click();
    await page.locator('[data-resends]', { hasText: 'A new code cannot be sent for this payment.' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Resend code' }).count(), 0);
    // Rendered afresh, no resends left is a sentence, not a disabled button.
    await page.reload();
    await page.locator('[data-resends]', { hasText: 'A new code cannot be sent for this payment.' }).waitFor();
    assert.equal(await page.locator('[data-action=resend]').count(), 0);

    await page.getByLabel('Verification code').fill('123456');
    await page.getByRole('button', { name: 'Confirm code' }).click();
    await heading(page, 'Confirming your Telecel Cash payment').waitFor();
    assertCleanRun(g);
    await g.close();
  });

  it('card: the payer is sent to the provider page (redirect_url) once the attempt exists, and the page offers that step itself', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    // A Live card attempt's instructions, as the Paystack adapter answers: the real Test attempt, its
    // instructions replaced on the way to the page.
    await page.route(`**/api/v1/checkout/sessions/${id}/provider-attempts`, async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      body.instructions = {
        ...body.instructions,
        mode: 'card_network_hosted_session',
        redirect_url: `${base}/healthz?hosted=${body.attempt_reference}`,
      };
      await route.fulfill({ response, json: body });
    });
    await page.goto(`${base}/pay/${id}`);
    await page.getByRole('radio', { name: /^Card/ }).check();
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/healthz'),
      page.getByRole('button', { name: 'Pay GHS 500.00' }).click(),
    ]);
    const attempt = await pendingAttempt(t.db, id);
    assert.equal(new URL(page.url()).searchParams.get('hosted'), attempt.id);

    // Back on the page without finishing: the step to continue, a link to the provider's page.
    const hosted = `${base}/healthz?hosted=${attempt.id}`;
    await setInstructions(attempt.id, { mode: 'card_network_hosted_session', redirect_url: hosted });
    await page.goto(`${base}/pay/${id}`);
    await heading(page, 'Continue to secure card payment').waitFor();
    assert.equal(
      await page.getByRole('link', { name: 'Continue to secure card payment' }).getAttribute('href'),
      hosted,
    );
    await checkoutScreenshots(page, 'live-card-continue', { phoneOnly: true });
    // Only http(s) addresses are followed or linked.
    await setInstructions(attempt.id, { mode: 'card_network_hosted_session', redirect_url: 'javascript:alert(1)' });
    await page.reload();
    await heading(page, 'Test card payment').waitFor();
    assert.equal(await page.locator('a[data-card-redirect]').count(), 0);
    assertCleanRun(g);
    await g.close();
  });

  it('card return: /pay/{id}?attempt= confirms with refresh at once and shows the verified result; trxref and reference are ignored', async () => {
    const { m, id } = await newSession();
    const a = await startAttempt(t, id, { rail: 'card', amount_minor: 50000 });
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    const asked = page.waitForRequest((r) => r.url().includes(`/provider-attempts/${a.attempt_reference}?refresh=1`));
    const started = Date.now();
    // What the provider appends (and a forged status) changes nothing: only the server's check counts.
    const response = await page.goto(
      `${base}/pay/${id}?attempt=${a.attempt_reference}&trxref=FORGED&reference=FORGED&status=success`,
    );
    assert.equal(response!.status(), 200);
    await heading(page, 'Confirming your payment…').waitFor();
    await asked;
    assert.ok(Date.now() - started < 1_000, 'the first status check goes out at once');
    assert.equal(await page.getByText('Payment successful').count(), 0);
    // Back from the card page unpaid, the payer can still change course.
    await page.getByRole('button', { name: 'Use another number or method' }).waitFor();
    await checkoutScreenshots(page, 'live-card-confirming', { phoneOnly: true });
    await simulate(t, m, a.attempt_reference, 'paid');
    await heading(page, 'Payment successful').waitFor({ timeout: 15_000 });
    await page.getByText('You paid GHS 500.00 to').waitFor();

    // Declined at the provider, settled before the payer is back: the failure and a way to try again.
    const declined = await newSession();
    const b = await startAttempt(t, declined.id, { rail: 'card', amount_minor: 50000 });
    await simulate(t, declined.m, b.attempt_reference, 'failed');
    await page.goto(`${base}/pay/${declined.id}?attempt=${b.attempt_reference}&trxref=x&reference=y`);
    await heading(page, 'Payment not completed').waitFor();
    await page
      .locator('#view')
      .getByText('The payment did not go through. Try again, or use another number or method.')
      .waitFor();
    await page.getByText('Card, GHS 500.00: you have not been charged for it.').waitFor();
    await heading(page, 'Try again').waitFor();
    assert.equal(await page.getByRole('radio', { name: /^Card/ }).count(), 1);

    // Declined while the page is confirming.
    const late = await newSession();
    const c = await startAttempt(t, late.id, { rail: 'card', amount_minor: 50000 });
    await page.goto(`${base}/pay/${late.id}?attempt=${c.attempt_reference}`);
    await heading(page, 'Confirming your payment…').waitFor();
    await simulate(t, late.m, c.attempt_reference, 'failed');
    await heading(page, 'Payment not completed').waitFor({ timeout: 15_000 });

    // Only an attempt of this session, shaped like an attempt id, is confirmed; anything else is the usual page.
    const other = await newSession();
    const d = await startAttempt(t, other.id, { rail: 'card', amount_minor: 50000 });
    for (const param of [
      c.attempt_reference,
      'att_<script>',
      `${d.attempt_reference}&attempt=${d.attempt_reference}`,
    ]) {
      const res = await page.goto(`${base}/pay/${other.id}?attempt=${encodeURI(param)}`);
      assert.equal(res!.status(), 200, param);
      await heading(page, 'Test card payment').waitFor();
    }
    assertCleanRun(g);
    await g.close();
  });

  it('bank transfer: bank, branch, account name and number, amount and a large grouped reference, each value with a copy button', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, PHONE);
    const { page, context } = g;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.goto(`${base}/pay/${id}`);
    await page.getByRole('radio', { name: /^Bank transfer/ }).check();
    await page.getByRole('button', { name: 'Get bank transfer details' }).click();
    await heading(page, 'Transfer GHS 500.00 from your bank').waitFor();
    const attempt = await pendingAttempt(t.db, id);
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
    const copyAndRead = async (what: string) => {
      await page.getByRole('button', { name: `Copy the ${what}` }).click();
      await page.locator('#live', { hasText: `Copied the ${what}.` }).waitFor();
      return clipboard();
    };
    assert.equal(await copyAndRead('account number'), '0000000000000');
    assert.equal(await copyAndRead('amount'), '500.00');
    assert.equal(await copyAndRead('payment reference'), attempt.provider_reference);
    await page.getByText('Sika Collections (GCB Bank)').waitFor();

    // A Live transfer's instructions: the short reference is shown in groups of four, copied whole.
    await setInstructions(attempt.id, {
      bank_name: 'GCB Bank',
      bank_code: '040100',
      branch: 'Accra Central',
      account_number: '1441000123456',
      account_name: 'Sika Collections Ltd',
      reference: 'SK7KQ2M9',
      note: 'Quote the reference exactly so the transfer is matched to this payment.',
      amount_minor: 50000,
      currency: 'GHS',
    });
    await page.reload();
    const rows = (await page.locator('#view .kv > div').allInnerTexts()).map((text) =>
      text.replace(/\s+/g, ' ').trim(),
    );
    assert.deepEqual(rows, [
      'Bank GCB Bank',
      'Branch Accra Central',
      'Account name Sika Collections Ltd',
      'Account number 1441000123456 Copy',
      'Amount GHS 500.00 Copy',
      'Payment reference SK7KQ2M9 Copy',
    ]);
    const groups = await page.evaluate(() => {
      const spans = [...document.querySelectorAll('#copy-reference .groups > span')];
      const first = spans[0]!.getBoundingClientRect();
      const second = spans[1]!.getBoundingClientRect();
      return {
        texts: spans.map((s) => s.textContent),
        gap: second.left - first.right,
        fontPx: parseFloat(getComputedStyle(spans[0]!).fontSize),
        copied: document.querySelector('#copy-reference')!.textContent,
      };
    });
    console.log(
      `reference groups ${JSON.stringify(groups.texts)}, ${groups.gap.toFixed(1)} px apart, ${groups.fontPx} px type`,
    );
    assert.deepEqual(groups.texts, ['SK7K', 'Q2M9']);
    assert.equal(groups.copied, 'SK7KQ2M9');
    assert.ok(groups.gap >= 6, 'the groups are spaced for reading out');
    assert.ok(groups.fontPx >= 24, 'the reference is large');
    assert.equal(await copyAndRead('payment reference'), 'SK7KQ2M9');
    assert.equal(await copyAndRead('account number'), '1441000123456');
    await page.getByText('Quote the reference exactly so the transfer is matched to this payment.').waitFor();
    await checkoutScreenshots(page, 'live-bank-transfer');
    assertCleanRun(g);
    await g.close();

    // Without the clipboard (an insecure context, an old browser): the value is selected for the payer to copy.
    const bare = await trackedPage(browser, PHONE);
    await bare.page.addInitScript(() => Object.defineProperty(navigator, 'clipboard', { value: undefined }));
    await bare.page.goto(`${base}/pay/${id}`);
    await bare.page.getByRole('button', { name: 'Copy the payment reference' }).click();
    await bare.page.locator('#live', { hasText: /payment reference/ }).waitFor();
    assert.equal(await bare.page.evaluate(() => String(window.getSelection())), 'SK7KQ2M9');
    assertCleanRun(bare);
    await bare.close();
  });

  it('one amount: the total of the chosen method, its fee on a line of its own, never the base beside it', async () => {
    const { id } = await newSession();
    const g = await trackedPage(browser, PHONE);
    const { page } = g;
    await page.goto(`${base}/pay/${id}`);
    const summary = async () => (await page.locator('.summary').innerText()).replace(/\s+/g, ' ');
    const amount = () => page.locator('.amount').innerText();
    const totals: Record<string, [string, string | null]> = {
      momo: ['GHS 507.50', 'Mobile Money fee GHS 7.50'],
      card: ['GHS 500.00', null],
      bank_transfer: ['GHS 500.00', null],
      cash: ['GHS 502.00', 'Cash at a bank branch fee GHS 2.00'],
    };
    for (const rail of ['momo', 'card', 'cash', 'bank_transfer', 'momo']) {
      const [total, fee] = totals[rail]!;
      await page.locator(`input[name=rail][value=${rail}]`).check();
      assert.equal(await amount(), total, rail);
      const text = await summary();
      assert.match(text, new RegExp(`Total ${total.replace('.', '\\.')}$`), rail);
      if (fee) {
        assert.ok(text.includes(fee), `${rail}: ${text}`);
        assert.ok(!text.includes('GHS 500.00'), `${rail}: the base is not shown beside the total: ${text}`);
      } else {
        assert.ok(!/\bfee\b/.test(text), `${rail}: ${text}`);
      }
      assert.equal(
        await page.title(),
        `Pay ${await page
          .locator('h1')
          .innerText()
          .then((h) => h.replace(/^Payment to\s*/, ''))} · ${total}`,
      );
      assert.equal(
        await page.locator('#pay-form button[type=submit]').innerText(),
        rail === 'bank_transfer'
          ? 'Get bank transfer details'
          : rail === 'cash'
            ? 'Get a cash deposit slip'
            : `Pay ${total}`,
      );
    }
    await page.getByLabel('Mobile Money number').fill('024 123 4567');
    await page.getByRole('button', { name: 'Pay GHS 507.50' }).click();
    await heading(page, 'Approve the payment on your phone').waitFor();
    assert.equal(await amount(), 'GHS 507.50');
    assert.ok(!(await summary()).includes('GHS 500.00'));

    // Without invoice lines the fee is said under the amount.
    const plain = await newSession(false);
    await page.goto(`${base}/pay/${plain.id}`);
    assert.equal(await amount(), 'GHS 507.50');
    await page.getByText('incl. GHS 7.50 Mobile Money fee').waitFor();
    await page.locator('input[name=rail][value=card]').check();
    assert.equal(await amount(), 'GHS 500.00');
    assert.equal(await page.getByText('incl. GHS 7.50 Mobile Money fee').count(), 0);
    assert.ok(!/\bfee\b/.test(await summary()));
    assertCleanRun(g);
    await g.close();
  });
});
