// Browser tests of the operator console (/ops) in Debian's Chromium through playwright-core: operator
// sign-in, merchants and payout controls, banks and branches, the teller desk (cash slip -> paid ->
// the payer sees success), held-attempt review, Live payout reconciliation, the audit log, CSRF;
// screenshots of every page at 1280 and 390 px.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createMerchant } from '../../src/accounts/service.ts';
import { creditPayment } from '../../src/ledger/service.ts';
import type { Actor } from '../../src/audit/log.ts';
import { createOperator, decideApproval } from '../../src/ops/service.ts';
import { processDuePayouts } from '../../src/payouts/processing.ts';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import { LivePayoutSimulator } from '../../src/rails/payouts.ts';
import { startTestApp, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import { consolePage, launchChromium, screenshots, signIn } from './console-support.ts';

const PASSWORD = 'operator passphrase 1';

describe('operator console in Chromium', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  const rail = new LivePayoutSimulator();
  const operator = { email: `ops-${randomUUID().slice(0, 8)}@sika.example`, password: PASSWORD };
  const teller = { email: `teller-${randomUUID().slice(0, 8)}@sika.example`, password: PASSWORD };
  let operatorId = '';
  // The second operator who approves a money decision (issue 30: the requester cannot).
  let approver: Actor;
  /** The second operator approves the request waiting for this object. */
  async function approveWaiting(objectId: string): Promise<void> {
    const [request] = await t.db.query<{ id: string }>(
      "SELECT id FROM operator_approvals WHERE object_id = $1 AND status = 'pending'",
      [objectId],
    );
    assert.ok(request, `a request waits for ${objectId}`);
    assert.equal(
      (await decideApproval(t.db, approver, t.config.checkoutUrlHost, request.id, 'approve')).status,
      'approved',
    );
  }

  before(async () => {
    t = await startTestApp({}, { payoutRail: rail });
    baseUrl = await t.listen();
    browser = await launchChromium();
    operatorId = (await createOperator(t.db, { ...operator, role: 'operator' })).operator_id;
    await createOperator(t.db, { ...teller, role: 'teller' });
    const second = await createOperator(t.db, {
      email: `approver-${randomUUID().slice(0, 8)}@sika.example`,
      password: PASSWORD,
      role: 'operator',
    });
    approver = { type: 'operator', id: second.operator_id, email: second.email };
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function newMerchant(name = `Asante Schools ${randomUUID().slice(0, 4)}`, webhookUrl: string | null = null) {
    const email = `owner-${randomUUID().slice(0, 8)}@example.com`;
    const created = await createMerchant(
      t.db,
      { name, email, password: 'merchant passphrase', webhookUrl },
      t.webhookTargets,
    );
    return { id: created.merchant_id, name, email, testKey: created.test_api_key, liveKey: created.live_api_key };
  }

  /** A Test checkout session created with the merchant's key, and its quote. */
  async function sessionWithQuote(testKey: string, body: Record<string, unknown> = {}) {
    const created = await call(t, 'POST', '/api/v1/sessions', {
      key: testKey,
      body: {
        amount_minor: 50_000,
        invoice_ref: `INV-${randomUUID().slice(0, 6)}`,
        customer: { name: 'Efua Owusu' },
        ...body,
      } as never,
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    const quote = await call(t, 'GET', `/api/v1/checkout/sessions/${id}/quote`);
    assert.equal(quote.statusCode, 200, quote.body);
    return { id, quote: quote.json() as { surcharges: Record<string, { total_minor: number }> } };
  }

  const publicStatus = async (sessionId: string) =>
    (await call(t, 'GET', `/api/v1/checkout/sessions/${sessionId}`)).json().status as string;

  const postFromPage = (page: Page, path: string, fields: Record<string, string>) =>
    page.evaluate(
      async ({ path, fields }) => {
        const res = await fetch(path, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(fields),
          redirect: 'manual',
        });
        return { status: res.status, text: await res.text() };
      },
      { path, fields },
    );
  const csrfOf = (page: Page) => page.locator('input[name=_csrf]').first().inputValue();
  const ghs = (minor: number) => `GHS ${(minor / 100).toFixed(2)}`;

  it('operators have their own sign-in: a merchant user cannot sign in at /ops; an operator signs in and out', async () => {
    const m = await newMerchant('Asante Schools');
    const { context, page, close } = await consolePage(browser);
    await page.goto(`${baseUrl}/ops`);
    assert.equal(new URL(page.url()).pathname, '/ops/login');
    await page.getByRole('heading', { name: 'Sign in to Sika operations' }).waitFor();
    await screenshots(page, 'ops-login');

    await page.getByLabel('Email').fill(m.email);
    await page.getByLabel('Password').fill('merchant passphrase');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();

    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    const cookie = (await context.cookies()).find((c) => c.name === 'sika_ops');
    assert.ok(cookie);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/ops');
    assert.equal(
      (await context.cookies()).find((c) => c.name === 'sika_dashboard'),
      undefined,
    );
    // The ops cookie does not open the dashboard.
    await page.goto(`${baseUrl}/dashboard`);
    assert.equal(new URL(page.url()).pathname, '/dashboard/login');

    await page.goto(`${baseUrl}/ops`);
    await page.getByRole('heading', { level: 1, name: 'Merchants' }).waitFor();
    assert.match(await page.locator('tbody').innerText(), /Asante Schools/);
    await screenshots(page, 'ops-merchants');
    await Promise.all([page.waitForURL('**/ops/login'), page.getByRole('button', { name: 'Sign out' }).click()]);
    await page.goto(`${baseUrl}/ops/audit`);
    assert.equal(new URL(page.url()).pathname, '/ops/login');
    await close();
  });

  it('merchant detail: enables Live payout access, sets limits, pauses and resumes payouts; each change is audited', async () => {
    const m = await newMerchant();
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    await page.getByRole('link', { name: m.name }).click();
    await page.getByRole('heading', { level: 1, name: m.name }).waitFor();
    const live = page.locator('form', { has: page.locator('input[name=environment][value=live]') });
    assert.match(await live.innerText(), /Payout access: off/);
    await live.getByLabel('Payout access').selectOption('on');
    await live.getByLabel('Limit per payout (GHS)').fill('2500.00');
    await live.getByLabel(/Daily limit/).fill('10000');
    await live.getByLabel(/Reason/).fill('KYC complete, bank letter on file');
    await live.getByLabel('The merchant is cleared for these Live payouts').check();
    await live.getByRole('button', { name: 'Save live payout settings' }).click();
    // Opening Live payouts waits for a second operator (issue 30).
    await page.getByRole('status').filter({ hasText: 'needs a second operator' }).waitFor();
    assert.match(await live.innerText(), /Payout access: off/);
    await approveWaiting(`${m.id}:live`);
    await page.goto(`${baseUrl}/ops/merchants/${m.id}`);
    assert.match(await live.innerText(), /Payout access: enabled/);
    const settings = async () =>
      (
        await t.db.query<{
          payout_access: boolean;
          paused: boolean;
          payout_limit_minor: number;
          daily_limit_minor: number;
        }>(
          `SELECT payout_access, paused, payout_limit_minor::int AS payout_limit_minor, daily_limit_minor::int AS daily_limit_minor FROM payout_settings WHERE merchant_id = $1 AND environment = 'live'`,
          [m.id],
        )
      )[0]!;
    assert.deepEqual(await settings(), {
      payout_access: true,
      paused: false,
      payout_limit_minor: 250_000,
      daily_limit_minor: 1_000_000,
    });
    await screenshots(page, 'ops-merchant-detail');

    await live.getByLabel('Payouts', { exact: true }).selectOption('on');
    await live.getByRole('button', { name: 'Save live payout settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Live payout settings saved.' }).waitFor();
    assert.equal((await settings()).paused, true);
    assert.match(await live.innerText(), /paused/);
    // The merchant's API sees the pause.
    const capabilities = (await call(t, 'GET', '/api/v1/payouts/capabilities', { key: m.liveKey })).json();
    assert.match(JSON.stringify(capabilities), /"paused":true/);
    await live.getByLabel('Payouts', { exact: true }).selectOption('off');
    await live.getByRole('button', { name: 'Save live payout settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Live payout settings saved.' }).waitFor();
    assert.equal((await settings()).paused, false);

    // Bad limits are refused on the error page, which names the field and what it takes; nothing is saved.
    await live.getByLabel('Limit per payout (GHS)').fill('lots');
    await live.getByRole('button', { name: 'Save live payout settings' }).click();
    await page
      .getByRole('alert')
      .filter({
        hasText:
          'Limit per payout is not valid: enter an amount in GHS above zero with at most 2 decimals, e.g. 502.00.',
      })
      .waitFor();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
    const audited = await t.db.query<{ action: string }>(
      `SELECT action FROM audit_log WHERE merchant_id = $1 AND actor_id = $2 ORDER BY created_at`,
      [m.id, operatorId],
    );
    assert.deepEqual(
      audited.map((a) => a.action),
      ['approval.request.payout_settings', 'payout_settings.update', 'payout_settings.update'],
    );
    const rows = page.locator('tbody tr', { hasText: `${m.id}:live` });
    assert.ok((await rows.count()) >= 3, 'the approved opening, the pause and the resume');
    assert.match(
      await rows.first().innerText(),
      new RegExp(`${operator.email.replace(/[.]/g, '\\.')}[\\s\\S]*operator[\\s\\S]*payout_settings\\.update`),
    );
    await close();
  });

  it('banks and branches: adds a bank and a branch, deactivates the branch (payers no longer see it)', async () => {
    const code = `V${randomUUID().replace(/\W/g, '').slice(0, 5).toUpperCase()}`;
    const branchName = `Ho Main ${code}`;
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Banks' }).click();
    const addBank = page.locator('form[action="/ops/banks"]');
    await addBank.getByLabel('Bank name').fill(`Volta Rural Bank ${code}`);
    await addBank.getByLabel('Code').fill(code);
    await addBank.getByRole('button', { name: 'Add bank' }).click();
    await page.getByRole('status').filter({ hasText: 'Bank added.' }).waitFor();
    const bank = page.getByRole('region', { name: `Volta Rural Bank ${code}` });
    await bank.getByLabel('New branch').fill(branchName);
    await bank.getByLabel('Code').fill(`${code}-HO`);
    await bank.getByRole('button', { name: 'Add branch' }).click();
    await page.getByRole('status').filter({ hasText: 'Branch added.' }).waitFor();
    assert.match(await bank.innerText(), new RegExp(`${branchName}\\s+${code}-HO\\s+active`));
    const options = async () => JSON.stringify((await call(t, 'GET', '/api/v1/checkout/options')).json());
    assert.ok((await options()).includes(branchName), 'payers are offered the new branch');
    await screenshots(page, 'ops-banks');

    await bank.getByRole('button', { name: `Deactivate ${branchName}` }).click();
    await page.getByRole('status').filter({ hasText: 'Branch deactivated.' }).waitFor();
    assert.match(await bank.innerText(), new RegExp(`${branchName}\\s+${code}-HO\\s+inactive`));
    assert.ok(!(await options()).includes(branchName), 'payers are not offered an inactive branch');

    // A duplicate bank code is refused with a clear message.
    await addBank.getByLabel('Bank name').fill('Another Volta Bank');
    await addBank.getByLabel('Code').fill(code);
    await addBank.getByRole('button', { name: 'Add bank' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: `bank code ${code} is already used` })
      .waitFor();
    const actions = (
      await t.db.query<{ action: string }>(
        `SELECT action FROM audit_log WHERE actor_id = $1 AND action LIKE 'b%' ORDER BY created_at`,
        [operatorId],
      )
    ).map((r) => r.action);
    assert.deepEqual(actions, ['bank.create', 'branch.create', 'branch.deactivate']);
    await close();
  });

  it('teller: finds a cash slip by its reference, records the deposit at a branch; the payer page then shows success', async () => {
    const m = await newMerchant('Tamale Poly');
    const { id: sessionId, quote } = await sessionWithQuote(m.liveKey, {
      amount_minor: 50_000,
      description: 'Hostel fees',
    });
    const cashTotal = quote.surcharges.cash!.total_minor;
    const slipRes = await call(t, 'POST', '/api/v1/checkout/cash-slips', {
      body: { session_id: sessionId, amount_minor: cashTotal },
    });
    assert.equal(slipRes.statusCode, 201, slipRes.body);
    const slip = slipRes.json() as { reference: string; amount_minor: number; expires_at: string };
    assert.equal(slip.amount_minor, cashTotal);
    assert.equal(await publicStatus(sessionId), 'pending');

    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', teller.email, teller.password);
    assert.equal(new URL(page.url()).pathname, '/ops/teller', 'tellers land on the teller desk');
    await page.goto(`${baseUrl}/ops/review`);
    assert.equal(new URL(page.url()).pathname, '/ops/teller', 'tellers see only the teller desk');
    assert.deepEqual(
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts(),
      ['Teller'],
      'and only it in the menu',
    );
    await screenshots(page, 'ops-teller');

    await page.getByLabel('Slip reference').fill('SK-NOPE-NOPE');
    await page.getByRole('button', { name: 'Find slip' }).click();
    await page.getByRole('alert').filter({ hasText: 'No slip with reference SK-NOPE-NOPE.' }).waitFor();

    // The reference as a payer might read it out: lower case.
    await page.getByLabel('Slip reference').fill(slip.reference.toLowerCase());
    await page.getByRole('button', { name: 'Find slip' }).click();
    const card = page.getByRole('region', { name: `Slip ${slip.reference}` });
    await card.waitFor();
    const shown = await card.innerText();
    assert.match(shown, new RegExp(`Amount to collect: ${ghs(cashTotal)}`));
    assert.match(shown, /Tamale Poly/);
    assert.match(shown, /Efua Owusu/);
    assert.match(shown, new RegExp(`Expires ${slip.expires_at.slice(0, 16).replace('T', ' ')} UTC`));
    assert.match(shown, /active/);
    await screenshots(page, 'ops-teller-slip');

    // The wrong amount is refused; the right one at a branch is recorded.
    await card.getByLabel('Branch').selectOption({ index: 0 });
    await card.getByLabel('Cash received (GHS)').fill(((cashTotal - 100) / 100).toFixed(2));
    await card.getByRole('button', { name: 'Record deposit' }).click();
    await page.getByRole('alert').filter({ hasText: 'take exactly that amount' }).waitFor();
    assert.equal(await publicStatus(sessionId), 'pending');
    await card.getByLabel('Branch').selectOption({ index: 0 });
    await card.getByLabel('Cash received (GHS)').fill((cashTotal / 100).toFixed(2));
    await card.getByRole('button', { name: 'Record deposit' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Deposit recorded: ${ghs(cashTotal)}. The payment is paid and the checkout is success.` })
      .waitFor();
    assert.match(await card.innerText(), /Do not take cash for this slip: it is used\./);
    assert.equal(await card.getByRole('button', { name: 'Record deposit' }).count(), 0);
    await screenshots(page, 'ops-teller-recorded');

    // Recording the same slip again (a second click, another teller) is refused.
    const again = await postFromPage(page, '/ops/teller/record', {
      _csrf: await csrfOf(page),
      reference: slip.reference,
      branch_id: (await t.db.query<{ id: string }>('SELECT id FROM bank_branches WHERE active LIMIT 1'))[0]!.id,
      amount: (cashTotal / 100).toFixed(2),
    });
    assert.equal(again.status, 409);
    assert.match(again.text, /This slip is used; do not take the cash\./);

    // The session succeeded: the API says so, and so does the payer's page.
    assert.equal(await publicStatus(sessionId), 'success');
    const payer = await consolePage(browser);
    const payerPage = await payer.page.goto(`${baseUrl}/pay/${sessionId}`);
    assert.equal(payerPage?.status(), 200);
    await payer.page.getByRole('heading', { name: /payment successful/i }).waitFor();
    assert.match(await payer.page.locator('body').innerText(), new RegExp(`You paid ${ghs(cashTotal)} to Tamale Poly`));
    await screenshots(payer.page, 'ops-teller-payer-success');
    await payer.close();
    const [audit] = await t.db.query<{ actor_email: string; after: { status: string; session_status: string } }>(
      `SELECT actor_email, after FROM audit_log WHERE action = 'cash_slip.record_deposit' AND object_id = $1`,
      [slip.reference],
    );
    assert.equal(audit!.actor_email, teller.email);
    assert.equal(audit!.after.session_status, 'success');
    await close();
  });

  it('teller: an expired slip is refused clearly, with no way to record it', async () => {
    const m = await newMerchant();
    const { id: sessionId, quote } = await sessionWithQuote(m.liveKey);
    const slip = (
      await call(t, 'POST', '/api/v1/checkout/cash-slips', {
        body: { session_id: sessionId, amount_minor: quote.surcharges.cash!.total_minor },
      })
    ).json() as { reference: string; amount_minor: number };
    await t.db.query(`UPDATE cash_slips SET expires_at = now() - interval '1 minute' WHERE reference = $1`, [
      slip.reference,
    ]);
    await t.db.query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 minute' WHERE id = $1`, [
      sessionId,
    ]);

    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', teller.email, teller.password);
    await page.goto(`${baseUrl}/ops/teller?reference=${encodeURIComponent(slip.reference)}`);
    const card = page.getByRole('region', { name: `Slip ${slip.reference}` });
    assert.match(await card.innerText(), /expired/);
    assert.match(await card.innerText(), /Do not take cash for this slip: it is expired\./);
    assert.equal(await card.getByRole('button', { name: 'Record deposit' }).count(), 0);
    await screenshots(page, 'ops-teller-expired');
    const forced = await postFromPage(page, '/ops/teller/record', {
      _csrf: await csrfOf(page),
      reference: slip.reference,
      branch_id: (await t.db.query<{ id: string }>('SELECT id FROM bank_branches WHERE active LIMIT 1'))[0]!.id,
      amount: (slip.amount_minor / 100).toFixed(2),
    });
    assert.equal(forced.status, 409);
    assert.match(forced.text, /This slip has expired; do not take the cash\./);
    assert.notEqual(await publicStatus(sessionId), 'success');
    await close();
  });

  it('an operator decides a manual_review attempt (credit as charged, approved by a second operator: paid, session success) and rejects an amount_mismatch one (failed)', async () => {
    const m = await newMerchant('Cape Coast Clinic');
    const held: { sessionId: string; attempt: string }[] = [];
    for (const outcome of ['manual_review', 'amount_mismatch'] as const) {
      const { id: sessionId, quote } = await sessionWithQuote(m.testKey);
      const attempt = await call(t, 'POST', `/api/v1/checkout/sessions/${sessionId}/provider-attempts`, {
        body: { rail: 'momo', amount_minor: quote.surcharges.momo!.total_minor, operator: 'mtn', phone: '0241234567' },
      });
      assert.equal(attempt.statusCode, 201, attempt.body);
      const reference = attempt.json().attempt_reference as string;
      const simulated = await call(t, 'POST', `/api/v1/test/payment-attempts/${reference}/simulate`, {
        key: m.testKey,
        body: { outcome },
      });
      assert.equal(simulated.statusCode, 200, simulated.body);
      assert.equal(simulated.json().status, outcome);
      held.push({ sessionId, attempt: reference });
    }

    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Review' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payments held for review' }).waitFor();
    const first = page.locator('tbody tr', { hasText: held[0]!.attempt });
    assert.match(await first.innerText(), /momo[\s\S]*Cape Coast Clinic[\s\S]*manual review/);
    assert.match(await page.locator('tbody tr', { hasText: held[1]!.attempt }).innerText(), /amount mismatch/);
    await screenshots(page, 'ops-review');

    await first.getByRole('link', { name: `Decide ${held[0]!.attempt}` }).click();
    await page.getByRole('heading', { level: 1, name: 'Decide a held payment' }).waitFor();
    await page.getByLabel('Credit the payment as charged').check();
    await page.getByLabel(/^Reason/).fill('Provider dashboard shows it paid');
    await page.getByLabel('I have checked the statement line, deposit or provider record behind this payment').check();
    await page.getByRole('button', { name: 'Submit decision' }).click();
    await page.getByRole('status').filter({ hasText: 'Filed for a second operator' }).waitFor();
    assert.notEqual(await publicStatus(held[0]!.sessionId), 'success', 'nothing moves before the second operator');
    await approveWaiting(held[0]!.attempt);
    assert.equal(await publicStatus(held[0]!.sessionId), 'success');

    // A Test amount_mismatch with no amount received on record can only be rejected; a reject applies at once.
    await page.goto(`${baseUrl}/ops/review/${held[1]!.attempt}`);
    assert.deepEqual(await page.getByRole('radio').count(), 1);
    await page.getByLabel('Reject: the payment failed, no money moves').check();
    await page.getByLabel(/^Reason/).fill('No money arrived');
    await page.getByLabel('I have checked the statement line, deposit or provider record behind this payment').check();
    await page.getByRole('button', { name: 'Submit decision' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Attempt ${held[1]!.attempt} is rejected` })
      .waitFor();
    assert.notEqual(await publicStatus(held[1]!.sessionId), 'success');
    assert.equal(
      await page.locator('tbody tr', { hasText: held[0]!.attempt }).count(),
      0,
      'decided attempts leave the queue',
    );

    // Deciding an attempt that is no longer held is refused.
    const twice = await postFromPage(page, `/ops/review/${held[0]!.attempt}`, {
      _csrf: await csrfOf(page),
      choice: 'reject',
      reason: 'again',
      confirm: 'yes',
    });
    assert.equal(twice.status, 409);
    assert.match(twice.text, /only held attempts are decided here/);
    assert.equal(await publicStatus(held[0]!.sessionId), 'success');

    const actions = await t.db.query<{ action: string; object_id: string }>(
      `SELECT action, object_id FROM audit_log WHERE actor_id IN ($1, $2) AND action LIKE 'attempt.%' ORDER BY created_at`,
      [operatorId, approver.id],
    );
    assert.deepEqual(actions, [
      { action: 'attempt.decide', object_id: held[0]!.attempt },
      { action: 'attempt.reject', object_id: held[1]!.attempt },
    ]);
    await close();
  });

  it('reconciles a paid Live payout with the bank statement and records a return', async () => {
    // The Live key needs an HTTPS endpoint before it can pay out.
    const m = await newMerchant('Kumasi Traders', 'https://hooks.example.com/sika');
    await setPayoutAccess(t.db, m.id, 'live', { payout_access: true });
    await t.db.transaction((tx) =>
      creditPayment(tx, {
        merchantId: m.id,
        environment: 'live',
        paymentId: `pay_${randomUUID()}`,
        chargedMinor: 300_000,
        payerFeeMinor: 0,
        merchantFeeMinor: 0,
      }),
    );
    const bankId = (await t.db.query<{ id: string }>('SELECT id FROM banks WHERE active ORDER BY name LIMIT 1'))[0]!.id;
    const payouts: { id: string; reference: string }[] = [];
    for (const [i, account] of ['0099887766551', '0099887766552'].entries()) {
      const recipient = await call(t, 'POST', '/api/v1/payouts/recipients', {
        key: m.liveKey,
        body: { account_type: 'bank', bank_id: bankId, account_number: account, account_name: `Supplier ${i + 1}` },
      });
      assert.equal(recipient.statusCode, 201, recipient.body);
      const created = await call(t, 'POST', '/api/v1/payouts', {
        key: m.liveKey,
        body: { recipient_id: recipient.json().id, amount_minor: 40_000 + i, client_reference: `rec-${i}` },
      });
      assert.ok(created.statusCode < 300, created.body);
      payouts.push(created.json());
    }
    for (let i = 0; i < 10; i++) {
      await processDuePayouts(t.db, rail);
      const left = await t.db.query(`SELECT 1 FROM payouts WHERE merchant_id = $1 AND status = 'processing'`, [m.id]);
      if (left.length === 0) break;
      await t.db.query(`UPDATE payouts SET next_step_at = now() WHERE merchant_id = $1 AND status = 'processing'`, [
        m.id,
      ]);
    }
    const statuses = await t.db.query<{ status: string }>(`SELECT status FROM payouts WHERE merchant_id = $1`, [m.id]);
    assert.deepEqual(
      statuses.map((s) => s.status),
      ['paid', 'paid'],
    );

    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payouts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Live payouts' }).waitFor();
    const first = page.locator('tbody tr', { hasText: payouts[0]!.reference });
    assert.match(await first.innerText(), /Kumasi Traders[\s\S]*paid[\s\S]*GIP[\s\S]*unreconciled/);
    await screenshots(page, 'ops-payouts');
    await first.getByRole('button', { name: 'Matched' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Payout ${payouts[0]!.reference} is matched.` })
      .waitFor();
    assert.match(await page.locator('tbody tr', { hasText: payouts[0]!.reference }).innerText(), /matched/);

    const second = page.locator('tbody tr', { hasText: payouts[1]!.reference });
    // A return: the bank's reference, a reason and the confirmation, then a second operator (issue 30).
    await second.getByText('Record return').click();
    await second.getByLabel("Bank's return reference").fill('RET-2026-0042');
    await second.getByLabel('Reason').fill('Beneficiary account closed');
    await second.getByRole('checkbox').check();
    await second.getByRole('button', { name: 'File the return for a second operator' }).click();
    await page.getByRole('status').filter({ hasText: 'filed for a second operator' }).waitFor();
    await approveWaiting(payouts[1]!.id);
    await page.goto(`${baseUrl}/ops/payouts`);
    const returned = page.locator('tbody tr', { hasText: payouts[1]!.reference });
    assert.match(await returned.innerText(), /returned[\s\S]*RET-2026-0042/);
    assert.equal(
      await returned.getByRole('button', { name: /Matched|Exception/ }).count(),
      0,
      'a returned payout is not reconciled',
    );

    const actions = (
      await t.db.query<{ action: string }>(
        `SELECT action FROM audit_log WHERE merchant_id = $1 AND actor_id IN ($2, $3) ORDER BY created_at`,
        [m.id, operatorId, approver.id],
      )
    ).map((r) => r.action);
    assert.deepEqual(actions.sort(), [
      'approval.approve.payout_return',
      'approval.request.payout_return',
      'payout.reconcile_matched',
      'payout.returned',
    ]);
    await close();
  });

  it('the audit log shows every operator and approver action and is append-only in storage; console forms need the CSRF token', async () => {
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/ops', operator.email, operator.password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    const text = await page.locator('main table').first().locator(':scope > tbody').innerText();
    for (const action of [
      'operator.create',
      'payout_settings.update',
      'bank.create',
      'branch.deactivate',
      'cash_slip.record_deposit',
      'attempt.decide',
      'payout.reconcile_matched',
    ]) {
      assert.match(text, new RegExp(action.replace('.', '\\.')), `the audit log shows ${action}`);
    }
    await screenshots(page, 'ops-audit');

    // Storage refuses to change or delete audit rows.
    const before = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log'))[0]!.n;
    await assert.rejects(t.db.query(`UPDATE audit_log SET action = 'nothing.happened'`), /append-only/);
    await assert.rejects(t.db.query('DELETE FROM audit_log'), /append-only/);
    assert.equal((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log'))[0]!.n, before);

    // CSRF: the console's forms are refused without their token.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Banks' }).click();
    const addBank = page.locator('form[action="/ops/banks"]');
    await addBank.locator('input[name=_csrf]').evaluate((input) => input.remove());
    await addBank.getByLabel('Bank name').fill('Forged Bank');
    await addBank.getByLabel('Code').fill('FRG');
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/ops/banks') && r.request().method() === 'POST'),
      addBank.getByRole('button', { name: 'Add bank' }).click(),
    ]);
    assert.equal(response.status(), 403);
    await page.getByRole('alert').filter({ hasText: 'CSRF check failed' }).waitFor();
    assert.equal((await t.db.query(`SELECT 1 FROM banks WHERE code = 'FRG'`)).length, 0);
    await screenshots(page, 'ops-csrf-refused');
    await close();
  });
});
