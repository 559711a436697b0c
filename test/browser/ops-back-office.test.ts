// The back office in Chromium (issue 30): the teller desk (a Live slip found without its dashes; a Test slip
// refused with its environment shown and no form), Statements (the one collection account, a mistyped
// reference's near match, a cash slip's reference recognised, the paged list, an import voided), the bank
// transfer reconciliation (one row per difference, totals per collection account) and Refunds (the payer's
// details, stuck provider refunds, finished refunds). Each page passes axe-core with no violation at 1280 px
// and is screenshotted at 1280 and 390 px (test-results/ops-back-office-*.png).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Actor } from '../../src/audit/log.ts';
import { createOperator } from '../../src/ops/service.ts';
import { collectionAccounts } from '../../src/rails/bank-transfer/accounts.ts';
import { PAYMENT_REFERENCE_ALPHABET } from '../../src/rails/bank-transfer/reference.ts';
import { importStatement } from '../../src/statements/service.ts';
import { BANK_ENV, cedis, gcbStatement, liveTransfer, uniqueWords } from '../support/bank-statements.ts';
import type { TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import { useBrowserApp } from '../support/browser-app.ts';
import { axeViolations, consolePage, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'operator passphrase 1';
/** The page at 1280 px passes axe, then is screenshotted at 1280 and 390 px. */
async function checked(page: Page, name: string): Promise<void> {
  assert.deepEqual(await axeViolations(page), [], `${name}: axe at 1280 px`);
  await screenshots(page, `ops-back-office-${name}`);
}

describe('the back office in Chromium', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  const operator = { email: `ops-bo-${randomUUID().slice(0, 8)}@sika.example`, password: PASSWORD };
  const teller = { email: `teller-bo-${randomUUID().slice(0, 8)}@sika.example`, password: PASSWORD };
  let importer: Actor;

  useBrowserApp(async (app) => {
    ({ t, base: baseUrl, browser } = app);
    const created = await createOperator(t.db, { ...operator, role: 'operator' });
    importer = { type: 'operator', id: created.operator_id, email: operator.email };
    await createOperator(t.db, { ...teller, role: 'teller' });
  }, BANK_ENV);

  async function slip(key: string) {
    const session = await call(t, 'POST', '/api/v1/sessions', {
      key,
      body: {
        amount_minor: 122_000,
        invoice_ref: `INV-${randomUUID().slice(0, 6)}`,
        customer: { name: 'Efua Owusu' },
      } as never,
    });
    const quote = await call(t, 'GET', `/api/v1/checkout/sessions/${session.json().id}/quote`);
    const res = await call(t, 'POST', '/api/v1/checkout/cash-slips', {
      body: { session_id: session.json().id, amount_minor: quote.json().surcharges.cash.total_minor },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { reference: string; amount_minor: number };
  }

  it('teller desk: a Live slip found without dashes; a Test slip refused with its environment and no form', async () => {
    const m = await t.merchant();
    const live = await slip(m.live_api_key);
    const test = await slip(m.test_api_key);
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', teller.email, teller.password);
    await page.getByLabel('Slip reference').fill(live.reference.replace(/-/g, '').toLowerCase());
    await page.getByRole('button', { name: 'Find slip' }).click();
    const card = page.getByRole('region', { name: `Slip ${live.reference}` });
    await card.waitFor();
    assert.match(await card.innerText(), /Live/);
    assert.match(await card.innerText(), /Amount to collect: GHS [\d,]+\.\d\d/);
    await checked(page, 'teller-live');

    await page.getByLabel('Slip reference').fill(test.reference);
    await page.getByRole('button', { name: 'Find slip' }).click();
    const testCard = page.getByRole('region', { name: `Slip ${test.reference}` });
    await testCard.waitFor();
    const shown = await testCard.innerText();
    assert.match(shown, /Test/);
    assert.match(
      shown,
      /This is a Test slip: take no cash for it\. Test deposits are recorded through the Test simulator only\./,
    );
    assert.doesNotMatch(shown, /Amount to collect/);
    assert.equal(await testCard.getByRole('button', { name: 'Record deposit' }).count(), 0);
    await checked(page, 'teller-test-refused');
    await close();
  });

  it('statements: the collection account, hints on the queue, the paged list, an import voided', async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 33_000);
    const at = 4;
    const typo =
      transfer.reference.slice(0, at) +
      PAYMENT_REFERENCE_ALPHABET[
        (PAYMENT_REFERENCE_ALPHABET.indexOf(transfer.reference[at]!) + 5) % PAYMENT_REFERENCE_ALPHABET.length
      ] +
      transfer.reference.slice(at + 1);
    const cash = await slip(m.live_api_key);
    const words = uniqueWords();
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    await page.goto(`${baseUrl}/ops/statements`);
    assert.match(
      await page.getByRole('form', { name: 'Import a statement' }).innerText(),
      /Collection account: GCB Bank \(GCB\) 1011130012345, Sika Collections Ltd/,
    );
    const csv = gcbStatement([
      { narration: `${words} TRF ${typo}`, credit: cedis(transfer.chargedMinor) },
      { narration: `${words} CASH ${cash.reference}`, credit: '1,220.00' },
      { narration: `${words} UNKNOWN PAYER`, credit: '45.00' },
    ]);
    await page
      .getByLabel('Statement file (CSV)')
      .setInputFiles({ name: 'march.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Import statement' }).click();
    await page.getByRole('status').filter({ hasText: '3 unmatched' }).waitFor();
    await page.goto(`${baseUrl}/ops/statements?q=${encodeURIComponent(words)}`);
    const body = await page.locator('main').innerText();
    assert.ok(body.includes(`Did the payer mean:`) && body.includes(transfer.reference), 'the near match is offered');
    assert.ok(body.includes(`This is a cash slip reference, ${cash.reference}`));
    await checked(page, 'statements');

    // The import: void it (every line is unmatched).
    await page.getByRole('link', { name: 'march.csv' }).first().click();
    const voidForm = page.getByRole('form', { name: 'Void this import' });
    await voidForm.getByLabel('Reason').fill('Imported for the wrong account');
    await checked(page, 'statement-import');
    await voidForm.getByRole('button', { name: 'Void import' }).click();
    await page.getByRole('status').filter({ hasText: 'voided: 3 unmatched lines' }).first().waitFor();
    await checked(page, 'statement-import-voided');
    await close();
  });

  it('reconciliation: bank transfers, one row per difference and totals per collection account', async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 21_000);
    const day = new Date().toISOString().slice(0, 10);
    const [y, mo, d] = day.split('-');
    await importStatement(t.db, {
      bankCode: 'GCB',
      fileName: `${randomUUID()}.csv`,
      csv: gcbStatement([
        { date: `${d}/${mo}/${y}`, narration: `TRF ${transfer.reference}`, credit: cedis(transfer.chargedMinor) },
        { date: `${d}/${mo}/${y}`, narration: uniqueWords(), credit: '75.00' },
      ]),
      importedBy: importer,
      checkoutUrlHost: t.config.checkoutUrlHost,
      collectionAccounts: collectionAccounts(t.config.providers.bankTransfer),
    });
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    await page.goto(`${baseUrl}/ops/reconciliation?provider=bank_transfer&day=${day}`);
    await page.getByText('Statement credits, GCB Bank (GCB) 1011130012345, Sika Collections Ltd').first().waitFor();
    await checked(page, 'reconciliation');
    await page.goto(`${baseUrl}/ops/reconciliation?provider=bank_transfer&day=2041-06-14`);
    await page.getByText('No records on either side for this day.').waitFor();
    await checked(page, 'reconciliation-empty');
    await close();
  });

  it("refunds: the payer's details, stuck provider refunds and finished refunds", async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 40_000);
    await importStatement(t.db, {
      bankCode: 'GCB',
      fileName: `${randomUUID()}.csv`,
      csv: gcbStatement([
        { narration: `TRF FROM KOFI ANNAN 0012345678 ${transfer.reference}`, credit: cedis(transfer.chargedMinor) },
      ]),
      importedBy: importer,
      checkoutUrlHost: t.config.checkoutUrlHost,
      collectionAccounts: collectionAccounts(t.config.providers.bankTransfer),
    });
    const refund = async (amountMinor: number) => {
      const res = await call(t, 'POST', '/api/v1/refunds', {
        key: m.live_api_key,
        idempotencyKey: randomUUID(),
        body: { session_id: transfer.sessionId, amount_minor: amountMinor },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const queued = await refund(5_000);
    const stuck = await refund(2_000);
    const finished = await refund(1_000);
    await t.db.query(
      `UPDATE refunds SET route = 'provider', provider = 'paystack', provider_reference = $2, processing_step = 'awaiting_result', created_at = now() - interval '50 hours' WHERE id = $1`,
      [stuck, `sika_rf_${randomUUID().slice(0, 8)}`],
    );
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    await page.goto(`${baseUrl}/ops/refunds`);
    const card = page.getByRole('region', { name: `Refund ${finished}` });
    await card.getByLabel("Payer's account (bank and number, or wallet)").fill('GCB 0012345678 Kofi Annan');
    await card.getByLabel('Transfer reference').fill('TRF-8812');
    await card.getByRole('button', { name: 'Record transfer' }).click();
    await page.getByRole('status').filter({ hasText: 'is succeeded' }).waitFor();
    const queue = await page.getByRole('region', { name: `Refund ${queued}` }).innerText();
    assert.match(queue, /TRF FROM KOFI ANNAN 0012345678/);
    assert.match(await page.locator(`tr[data-stuck="${stuck}"]`).innerText(), /2 days 2 hours/);
    assert.match(await page.locator(`tr[data-finished="${finished}"]`).innerText(), /succeeded/);
    await checked(page, 'refunds');
    await close();
  });
});
