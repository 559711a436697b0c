// Browser tests of the merchant dashboard (/dashboard) in Debian's Chromium through playwright-core:
// sign-in and sign-out, lockout, CSRF, API keys, webhook endpoints and replay, four-eyes payout
// approval (also keyboard-only), checkout pages; screenshots of every page at 1280 and 390 px.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createMerchant, hashPassword } from '../../src/accounts/service.ts';
import { accountKey, addressKey, PAIR_BACKOFF } from '../../src/accounts/sign-in-throttle.ts';
import { totpCode, totpStep } from '../../src/accounts/totp.ts';
import { TRUSTED_DEVICE_LIFETIME_S } from '../../src/accounts/trusted-devices.ts';
import { DeliveryWorker, defaultDeliveryOptions } from '../../src/events/delivery.ts';
import { verifyWebhook } from '../../src/events/signing.ts';
import { creditPayment } from '../../src/ledger/service.ts';
import { payoutFeeMinor } from '../../src/payouts/model.ts';
import { processDuePayouts } from '../../src/payouts/processing.ts';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import { LivePayoutSimulator } from '../../src/rails/payouts.ts';
import { startTestApp, type TestContext } from '../support/helpers.ts';
import { call, syncCodes } from '../support/http.ts';
import { consolePage, launchChromium, screenshots, signIn, tabTo } from './console-support.ts';

const PASSWORD = 'correct horse battery';
// A 1x1 PNG, for the evidence upload.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

interface Merchant {
  id: string;
  email: string;
  testKey: string;
  liveKey: string;
  ownerId: string;
}

async function newMerchant(
  t: TestContext,
  options: { name?: string; webhookUrl?: string; payoutApproval?: boolean } = {},
): Promise<Merchant> {
  const email = `owner-${randomUUID().slice(0, 8)}@example.com`;
  const created = await createMerchant(
    t.db,
    {
      name: options.name ?? `Adwoa Textiles ${randomUUID().slice(0, 4)}`,
      email,
      password: PASSWORD,
      webhookUrl: options.webhookUrl ?? null,
      payoutApproval: options.payoutApproval ?? false,
    },
    t.webhookTargets,
  );
  return {
    id: created.merchant_id,
    email,
    testKey: created.test_api_key,
    liveKey: created.live_api_key,
    ownerId: created.owner_user_id,
  };
}

/** Every browser here signs in from 127.0.0.1: its failures across accounts start afresh (a kept database remembers earlier runs). */
const forgetLocalFailures = (t: TestContext) =>
  t.db.query('DELETE FROM sign_in_throttles WHERE key = ANY($1)', [
    [addressKey('merchant', '127.0.0.1'), addressKey('operator', '127.0.0.1')],
  ]);

/** Posts a form from inside the page (same origin, the session cookie goes along), like a crafted form would. */
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

/** A Live merchant ready for payouts: payout access on, a funded Live balance and an HTTPS endpoint on the Live key. */
async function liveReadyMerchant(t: TestContext, payoutApproval: boolean): Promise<Merchant> {
  const m = await newMerchant(t, {
    name: `Kofi Hardware ${randomUUID().slice(0, 4)}`,
    webhookUrl: 'https://hooks.example.com/sika',
    payoutApproval,
  });
  await setPayoutAccess(t.db, m.id, 'live', { payout_access: true });
  await t.db.transaction((tx) =>
    creditPayment(tx, {
      merchantId: m.id,
      environment: 'live',
      paymentId: `pay_${randomUUID()}`,
      chargedMinor: 500_000,
      payerFeeMinor: 0,
      merchantFeeMinor: 0,
    }),
  );
  return m;
}

const payoutRow = async (t: TestContext, id: string) =>
  (
    await t.db.query<{ status: string; requested_by_user_id: string | null; decided_by_user_id: string | null }>(
      'SELECT status, requested_by_user_id, decided_by_user_id FROM payouts WHERE id = $1',
      [id],
    )
  )[0]!;

/** Runs the Live payout steps (with the simulator) until the payout is final. */
async function processUntilFinal(t: TestContext, rail: LivePayoutSimulator, id: string): Promise<string> {
  for (let i = 0; i < 10; i++) {
    await processDuePayouts(t.db, rail);
    const { status } = await payoutRow(t, id);
    if (status !== 'processing') return status;
    await t.db.query('UPDATE payouts SET next_step_at = now() WHERE id = $1', [id]);
  }
  return (await payoutRow(t, id)).status;
}

describe('merchant dashboard in Chromium: sign-in, lockout, CSRF, keyboard', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  before(async () => {
    t = await startTestApp({}, { payoutRail: new LivePayoutSimulator() });
    baseUrl = await t.listen();
    browser = await launchChromium();
    await forgetLocalFailures(t);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in with email and password (HttpOnly SameSite session and device cookies), shows the Test/Live switch and balances, and signs out', async () => {
    const m = await newMerchant(t, { name: 'Adwoa Textiles' });
    const { context, page, close } = await consolePage(browser);
    await page.goto(`${baseUrl}/dashboard`);
    assert.equal(new URL(page.url()).pathname, '/dashboard/login', 'signed-out visitors are sent to the sign-in page');
    await screenshots(page, 'dashboard-login');

    await page.getByLabel('Email').fill(m.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
    assert.equal(await page.getByLabel('Email').inputValue(), m.email, 'the email is kept after a failed attempt');
    await screenshots(page, 'dashboard-login-error');

    await signIn(page, baseUrl, '/dashboard', m.email, PASSWORD);
    assert.equal(new URL(page.url()).pathname, '/dashboard');
    const cookie = (await context.cookies()).find((c) => c.name === 'sika_dashboard');
    assert.ok(cookie, 'a session cookie is set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/dashboard');
    assert.ok(cookie.value.length >= 40, 'the session token is long and random');
    assert.ok(
      !(await page.evaluate(() => document.cookie)).includes('sika_dashboard'),
      'scripts cannot read the session cookie',
    );
    const stored = await t.db.query<{ token_hash: string }>('SELECT token_hash FROM web_sessions WHERE user_id = $1', [
      m.ownerId,
    ]);
    assert.equal(stored.length, 1);
    assert.notEqual(stored[0]!.token_hash, cookie.value, 'only a hash of the token is stored');
    // The trusted-device cookie: its attempts back off on their own, whatever strangers do to the account.
    const device = (await context.cookies()).find((c) => c.name === 'sika_dashboard_device');
    assert.ok(device, 'a device cookie is set');
    assert.equal(device.httpOnly, true);
    assert.equal(device.sameSite, 'Lax');
    assert.equal(device.path, '/dashboard');
    const lifetimeS = device.expires - Date.now() / 1_000;
    assert.ok(
      Math.abs(lifetimeS - TRUSTED_DEVICE_LIFETIME_S) < 600,
      `the device cookie lasts 180 days (${lifetimeS} s)`,
    );
    assert.ok(
      !(await page.evaluate(() => document.cookie)).includes('sika_dashboard_device'),
      'scripts cannot read the device cookie',
    );

    // Home: the merchant, both balances, recent activity, and the Test/Live switch in the header.
    await page.getByRole('heading', { level: 1, name: 'Adwoa Textiles' }).waitFor();
    assert.ok(await page.getByRole('region', { name: 'Test balance' }).isVisible());
    assert.ok(await page.getByRole('region', { name: 'Live balance' }).isVisible());
    await page.getByRole('heading', { name: 'Recent payments (test)' }).waitFor();
    const envSwitch = page.getByRole('form', { name: 'Environment' });
    assert.equal(await envSwitch.getByRole('button', { name: 'Test' }).getAttribute('aria-pressed'), 'true');
    assert.equal(await envSwitch.getByRole('button', { name: 'Live' }).getAttribute('aria-pressed'), 'false');
    assert.match(await page.getByRole('status').first().innerText(), /Test mode/);
    await screenshots(page, 'dashboard-home');

    // The switch is on every page and keeps the page you are on.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payouts' }).click();
    await envSwitch.getByRole('button', { name: 'Live' }).click();
    await page.getByText('Live mode: real money.').waitFor();
    assert.equal(new URL(page.url()).pathname, '/dashboard/payouts');
    assert.equal(await envSwitch.getByRole('button', { name: 'Live' }).getAttribute('aria-pressed'), 'true');
    await envSwitch.getByRole('button', { name: 'Test' }).click();
    await page.getByText('Test mode: no real money moves.').waitFor();

    await Promise.all([page.waitForURL('**/dashboard/login'), page.getByRole('button', { name: 'Sign out' }).click()]);
    assert.equal(
      (await context.cookies()).find((c) => c.name === 'sika_dashboard'),
      undefined,
      'the cookie is cleared',
    );
    assert.ok(
      (await context.cookies()).find((c) => c.name === 'sika_dashboard_device'),
      'the browser stays a trusted device after signing out',
    );
    assert.equal(
      (await t.db.query('SELECT 1 FROM web_sessions WHERE user_id = $1', [m.ownerId])).length,
      0,
      'the session is deleted',
    );
    await page.goto(`${baseUrl}/dashboard/payouts`);
    assert.equal(new URL(page.url()).pathname, '/dashboard/login', 'after sign-out the pages need a new sign-in');
    await close();
  });

  it('backs off after five wrong passwords: even the right password waits (429 with Retry-After) until the delay is over, then works', async () => {
    const m = await newMerchant(t);
    const { context, page, close } = await consolePage(browser);
    await page.goto(`${baseUrl}/dashboard/login`);
    let lastFailure = 0;
    for (let i = 1; i <= PAIR_BACKOFF.failuresFree; i++) {
      await page.getByLabel('Email').fill(m.email);
      await page.getByLabel('Password').fill(`wrong password ${i}`);
      lastFailure = Date.now();
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
    }
    await page.getByLabel('Email').fill(m.email);
    await page.getByLabel('Password').fill(PASSWORD);
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/dashboard/login') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    assert.equal(refused.status(), 429);
    // Retry-After rounds the time left up: the first delay, less any whole second gone since the last failure.
    const waitS = Number(refused.headers()['retry-after']);
    const gone = Math.ceil((Date.now() - lastFailure) / 1000);
    assert.ok(waitS <= PAIR_BACKOFF.delayFirstS && waitS >= PAIR_BACKOFF.delayFirstS - gone, `Retry-After ${waitS}`);
    await page
      .getByRole('alert')
      .filter({ hasText: `Too many attempts. Try again in ${waitS} seconds.` })
      .waitFor();
    assert.equal(new URL(page.url()).pathname, '/dashboard/login');
    assert.equal(
      (await context.cookies()).find((c) => c.name === 'sika_dashboard'),
      undefined,
      'no session while backing off',
    );
    await screenshots(page, 'dashboard-login-throttled');

    // When the delay is over the right password works, and the count starts over.
    await t.db.query(
      `UPDATE sign_in_throttles SET next_allowed_at = now() - interval '1 second' WHERE account_key = $1`,
      [accountKey('merchant', m.email)],
    );
    await signIn(page, baseUrl, '/dashboard', m.email, PASSWORD);
    const counts = await t.db.query<{ failures: number }>(
      `SELECT failures FROM sign_in_throttles WHERE account_key = $1`,
      [accountKey('merchant', m.email)],
    );
    assert.deepEqual(
      counts.map((row) => row.failures),
      [0, 0],
    );
    await close();
  });

  it('refuses form posts without the CSRF token (also the sign-in form), and a cross-site form gets no session (SameSite)', async () => {
    const m = await newMerchant(t);
    const { context, page, close } = await consolePage(browser);

    // The sign-in form itself: without its token the password is not even checked.
    await page.goto(`${baseUrl}/dashboard/login`);
    await page.locator('input[name=_csrf]').evaluate((input) => input.remove());
    await page.getByLabel('Email').fill(m.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'CSRF check failed' }).waitFor();
    assert.equal(
      (await context.cookies()).find((c) => c.name === 'sika_dashboard'),
      undefined,
    );

    await signIn(page, baseUrl, '/dashboard', m.email, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    // A real form with its hidden token removed.
    const approvalForm = page.locator('form[action="/dashboard/settings/approval"]');
    await approvalForm.locator('input[name=_csrf]').evaluate((input) => input.remove());
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/dashboard/settings/approval')),
      approvalForm.getByRole('button').click(),
    ]);
    assert.equal(response.status(), 403);
    await page.getByRole('alert').filter({ hasText: 'CSRF check failed' }).waitFor();
    await screenshots(page, 'dashboard-csrf-refused');
    const [merchant] = await t.db.query<{ payout_approval_required: boolean }>(
      'SELECT payout_approval_required FROM merchants WHERE id = $1',
      [m.id],
    );
    assert.equal(merchant!.payout_approval_required, false, 'nothing changed');

    // A wrong token and no token at all, posted directly.
    await page.goto(`${baseUrl}/dashboard/developers`);
    const integration = await page.locator('#key-integration option').first().getAttribute('value');
    const keysBefore = (await t.db.query('SELECT 1 FROM api_keys WHERE merchant_id = $1', [m.id])).length;
    assert.equal((await postFromPage(page, '/dashboard/keys', { integration_id: integration! })).status, 403);
    assert.equal(
      (
        await postFromPage(page, '/dashboard/keys', {
          integration_id: integration!,
          _csrf: 'A'.repeat((await csrfOf(page)).length),
        })
      ).status,
      403,
    );
    assert.equal(
      (await t.db.query('SELECT 1 FROM api_keys WHERE merchant_id = $1', [m.id])).length,
      keysBefore,
      'no key was created',
    );
    // With the token the same post works (the refusals above were about the token only).
    assert.equal(
      (await postFromPage(page, '/dashboard/keys', { integration_id: integration!, _csrf: await csrfOf(page) })).status,
      200,
    );

    // Another site (localhost is not the same site as 127.0.0.1) auto-submits a form to the dashboard:
    // the SameSite=Lax cookie stays home, so the post arrives without a session.
    const evil = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        `<form id=f method=post action="${baseUrl}/dashboard/settings/approval"><input name=required value=on></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    try {
      const [crossSite] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/dashboard/settings/approval')),
        page.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`),
      ]);
      assert.equal(crossSite.status(), 401, 'the cross-site post is treated as signed out');
    } finally {
      evil.close();
    }
    const [still] = await t.db.query<{ payout_approval_required: boolean }>(
      'SELECT payout_approval_required FROM merchants WHERE id = $1',
      [m.id],
    );
    assert.equal(still!.payout_approval_required, false);
    await close();
  });

  it('keyboard only: an approver signs in, switches to Live and approves a payout', async () => {
    const m = await liveReadyMerchant(t, true);
    const approverEmail = `approver-${randomUUID().slice(0, 8)}@example.com`;
    const approverId = randomUUID();
    await t.db.query(
      'INSERT INTO users (id, merchant_id, email, password_hash, role, invited_by_user_id) VALUES ($1, $2, $3, $4, $5, $6)',
      [approverId, m.id, approverEmail, await hashPassword(PASSWORD), 'approver', m.ownerId],
    );
    const recipient = await call(t, 'POST', '/api/v1/payouts/recipients', {
      key: m.liveKey,
      body: {
        account_type: 'bank',
        bank_id: (await t.db.query<{ id: string }>('SELECT id FROM banks WHERE active ORDER BY name LIMIT 1'))[0]!.id,
        account_number: '0012345678901',
        account_name: 'Yaw Boateng',
      },
    });
    assert.equal(recipient.statusCode, 201, recipient.body);
    const created = await call(t, 'POST', '/api/v1/payouts', {
      key: m.liveKey,
      body: { recipient_id: recipient.json().id, amount_minor: 75_000, client_reference: 'kbd-1' },
    });
    assert.ok([200, 201].includes(created.statusCode), created.body);
    const payout = created.json() as { id: string; reference: string; status: string };
    assert.equal(payout.status, 'requested');

    const { page, close } = await consolePage(browser);
    await page.goto(`${baseUrl}/dashboard/login`);
    await tabTo(page, (f) => f.name === 'email', 'the email field');
    await page.keyboard.type(approverEmail);
    await tabTo(page, (f) => f.name === 'password', 'the password field');
    await page.keyboard.type(PASSWORD);
    await Promise.all([page.waitForURL((url) => url.pathname === '/dashboard'), page.keyboard.press('Enter')]);

    await tabTo(page, (f) => f.tag === 'button' && f.text === 'Live', 'the Live switch');
    await Promise.all([page.waitForLoadState('load'), page.keyboard.press('Enter')]);
    await page.getByText('Live mode: real money.').waitFor();

    await tabTo(page, (f) => f.tag === 'a' && f.text === 'Payouts', 'the Payouts link');
    await Promise.all([page.waitForURL('**/dashboard/payouts'), page.keyboard.press('Enter')]);
    await tabTo(page, (f) => f.tag === 'a' && f.text === payout.reference, 'the payout');
    await Promise.all([page.waitForURL(`**/dashboard/payouts/${payout.id}`), page.keyboard.press('Enter')]);

    await tabTo(page, (f) => f.name === 'reason', 'the reason field');
    await page.keyboard.type('Matches invoice 4471');
    await tabTo(page, (f) => f.tag === 'button' && f.text === 'Approve payout', 'the Approve button');
    await Promise.all([page.waitForLoadState('load'), page.keyboard.press('Enter')]);
    await page.getByRole('status').filter({ hasText: 'Payout approved: it is processing.' }).waitFor();

    const row = await payoutRow(t, payout.id);
    assert.equal(row.status, 'processing');
    assert.equal(row.decided_by_user_id, approverId);
    assert.equal(row.requested_by_user_id, m.ownerId, 'an API payout is requested by the creator of its key');
    const audited = await t.db.query<{ after: { reason: string } }>(
      `SELECT after FROM audit_log WHERE object_id = $1 AND action = 'payout.approve' AND actor_id = $2`,
      [payout.id, approverId],
    );
    assert.equal(audited.length, 1);
    assert.equal(audited[0]!.after.reason, 'Matches invoice 4471');
    await close();
  });
});

describe('merchant dashboard in Chromium: developers, payouts, checkout, settings', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  const rail = new LivePayoutSimulator();
  before(async () => {
    t = await startTestApp({}, { payoutRail: rail });
    baseUrl = await t.listen();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('creates an API key and shows its secret once; the key works, shows when it was last used, and stops at revocation', async () => {
    const m = await newMerchant(t);
    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', m.email, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Developers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Developers (Test)' }).waitFor();
    await screenshots(page, 'dashboard-developers');

    const keysTable = page.locator('table').nth(1);
    assert.equal(await keysTable.locator('tbody tr').count(), 1, 'the key made with the merchant');
    await page.getByLabel('Integration').selectOption({ label: 'Default test integration' });
    await page.getByRole('button', { name: 'Create API key' }).click();
    const secret = page.locator('#new-api-key');
    await secret.waitFor();
    const key = (await secret.innerText()).trim();
    assert.match(key, /^ak_test_\S{20,}$/);
    assert.match(await page.getByRole('alert').first().innerText(), /shown once/);
    assert.equal(await keysTable.locator('tbody tr').count(), 2);
    await screenshots(page, 'dashboard-developers-new-key');

    // The secret is never shown again: the stored key is a hash and the page only shows the prefix.
    const [stored] = await t.db.query<{ id: string; prefix: string }>(
      'SELECT id, prefix FROM api_keys WHERE merchant_id = $1 ORDER BY created_at DESC LIMIT 1',
      [m.id],
    );
    assert.ok(key.startsWith(stored!.prefix));
    await page.goto(`${baseUrl}/dashboard/developers`);
    assert.equal(await page.locator('#new-api-key').count(), 0);
    assert.ok(!(await page.content()).includes(key), 'the full key is not on the page any more');
    const row = keysTable.locator('tbody tr', { hasText: `${stored!.prefix}…` });
    assert.match(await row.innerText(), /never/);

    // It works with the API, and the dashboard shows it was used.
    assert.equal((await call(t, 'GET', '/api/v1/payouts/balance', { key })).statusCode, 200);
    for (let i = 0; i < 20 && /never/.test(await row.innerText()); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await page.reload();
    }
    assert.doesNotMatch(await row.innerText(), /never/, 'last used is shown');

    await row.getByRole('button', { name: `Revoke key ${stored!.prefix}` }).click();
    await page.getByRole('status').filter({ hasText: 'revoked' }).waitFor();
    assert.match(await keysTable.locator('tbody tr', { hasText: `${stored!.prefix}…` }).innerText(), /revoked/);
    assert.equal(
      (await call(t, 'GET', '/api/v1/payouts/balance', { key })).statusCode,
      401,
      'a revoked key stops working at once',
    );
    await close();
  });

  it('adds a webhook endpoint (Live needs HTTPS), shows the delivery log and replays a failed delivery; rotates and disables', async () => {
    const received: { status: number; headers: http.IncomingHttpHeaders; body: string }[] = [];
    const answers = [500, 200];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const status = answers.shift() ?? 200;
        received.push({ status, headers: req.headers, body });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'receiver is down');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/sika/hooks`;
    // No retries (a failure is final at once), and no DNS: only the local receiver is ever contacted.
    const worker = new DeliveryWorker(
      t.db,
      t.app.log,
      defaultDeliveryOptions({
        retryScheduleS: [],
        resolver: async () => [],
        allowPrivateTargets: t.config.webhookAllowPrivateTargets,
      }),
    );
    /** Runs the worker until the receiver has had `count` requests (other due deliveries may share the storage). */
    const deliverUntil = async (count: number) => {
      for (let i = 0; i < 20 && received.length < count; i++) if ((await worker.runOnce()) === 0) break;
      assert.equal(received.length, count);
    };
    try {
      const m = await newMerchant(t);
      const { page, close } = await consolePage(browser);
      await signIn(page, baseUrl, '/dashboard', m.email, PASSWORD);

      // Live refuses a plain-http URL.
      await page.getByRole('button', { name: 'Live' }).click();
      await page.goto(`${baseUrl}/dashboard/developers`);
      await page.getByLabel(/Endpoint URL/).fill(hookUrl);
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByRole('alert').filter({ hasText: 'must use https for Live' }).waitFor();
      await page.getByRole('button', { name: 'Test' }).click();

      await page.goto(`${baseUrl}/dashboard/developers`);
      await page.getByLabel(/Endpoint URL/).fill(hookUrl);
      await page.getByLabel('Pair with API key').selectOption({ index: 0 });
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByRole('status').filter({ hasText: 'Endpoint added.' }).waitFor();
      const secret = (await page.locator('.secret').innerText()).trim();
      assert.match(secret, /^whsec_/);
      const endpointLink = page.getByRole('link', { name: hookUrl });
      assert.ok(await endpointLink.isVisible());

      // A payment attempt moves the session to pending: one event, delivered to the endpoint (the receiver answers 500).
      const session = await call(t, 'POST', '/api/v1/sessions', {
        key: m.testKey,
        body: { amount_minor: 12_000, invoice_ref: 'INV-HOOK-1' },
      });
      assert.equal(session.statusCode, 201, session.body);
      const sessionId = session.json().id as string;
      const quote = (await call(t, 'GET', `/api/v1/checkout/sessions/${sessionId}/quote`)).json();
      const attempt = await call(t, 'POST', `/api/v1/checkout/sessions/${sessionId}/provider-attempts`, {
        body: { rail: 'momo', amount_minor: quote.surcharges.momo.total_minor, operator: 'mtn', phone: '0241234567' },
      });
      assert.equal(attempt.statusCode, 201, attempt.body);
      await deliverUntil(1);

      await endpointLink.click();
      await page.getByRole('heading', { level: 1, name: 'Delivery log' }).waitFor();
      const delivery = page.locator('tbody tr').first();
      assert.match(await delivery.innerText(), /checkout\.session\.pending/);
      assert.match(await delivery.innerText(), /failed/);
      assert.match(await delivery.innerText(), /500/);
      assert.match(await delivery.innerText(), /receiver is down/);
      await screenshots(page, 'dashboard-webhook-deliveries');

      const eventId = received[0]!.headers['webhook-id'] as string;
      await page.getByRole('button', { name: `Replay ${eventId}` }).click();
      await page.getByRole('status').filter({ hasText: 'queued again' }).waitFor();
      assert.match(await delivery.innerText(), /pending/);
      await deliverUntil(2);
      await page.reload();
      assert.match(await delivery.innerText(), /delivered/);
      assert.match(await delivery.innerText(), /\b200\b/);

      // The replay is the same event, signed with the endpoint's secret.
      assert.equal(received.length, 2);
      assert.equal(received[1]!.headers['webhook-id'], eventId);
      assert.equal(received[1]!.body, received[0]!.body);
      const verified = verifyWebhook<{ type: string }>(
        received[1]!.body,
        received[1]!.headers as Record<string, string>,
        secret,
      );
      assert.equal(verified.type, 'checkout.session.pending');

      // "Replay all failed" with nothing failed queues nothing.
      await page.getByRole('button', { name: 'Replay all failed' }).click();
      await page.getByRole('status').filter({ hasText: '0 failed deliveries queued again.' }).waitFor();

      // Rotate the secret (the new one is shown once) and disable the endpoint.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Developers' }).click();
      const endpointRow = page.locator('tbody tr', { hasText: hookUrl });
      await endpointRow.getByRole('button', { name: 'Rotate secret' }).click();
      await page.getByRole('status').filter({ hasText: 'Secret rotated.' }).waitFor();
      const rotated = (await page.locator('.secret').innerText()).trim();
      assert.match(rotated, /^whsec_/);
      assert.notEqual(rotated, secret);
      assert.match(await endpointRow.innerText(), /old secret still signs until/);
      await endpointRow.getByRole('button', { name: 'Disable' }).click();
      await page.getByRole('status').filter({ hasText: 'Endpoint disabled.' }).waitFor();
      assert.match(await endpointRow.innerText(), /disabled/);
      await endpointRow.getByRole('button', { name: 'Enable' }).waitFor();
      await close();
    } finally {
      await worker.stop();
      receiver.close();
    }
  });

  it('four eyes: the owner requires approval, invites an approver and requests a Live payout; the requester is refused, the approver approves', async () => {
    const m = await liveReadyMerchant(t, false);
    const owner = await consolePage(browser);
    const page = owner.page;
    await signIn(page, baseUrl, '/dashboard', m.email, PASSWORD);

    // Settings (owner): fee bearer per rail, payout approval, users.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await screenshots(page, 'dashboard-settings');
    await page.getByLabel('Bearer for Mobile Money').selectOption('merchant');
    await page.getByRole('button', { name: 'Save fee settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Fee settings saved.' }).waitFor();
    assert.equal(await page.getByLabel('Bearer for Mobile Money').inputValue(), 'merchant');
    await page.getByRole('button', { name: 'Require approval (four eyes)' }).click();
    await page.getByRole('status').filter({ hasText: 'Live payouts now need approval.' }).waitFor();
    const approverEmail = `approver-${randomUUID().slice(0, 8)}@example.com`;
    await page.getByLabel('Email').fill(approverEmail);
    await page.getByLabel('Role').selectOption('approver');
    await page.getByRole('button', { name: 'Invite user' }).click();
    const temporaryPassword = (await page.locator('#temporary-password').innerText()).trim();
    assert.ok(temporaryPassword.length >= 12);
    assert.match(
      await page.getByRole('region', { name: 'Users' }).innerText(),
      new RegExp(`${approverEmail}\\s+approver`),
    );
    await screenshots(page, 'dashboard-settings-invited');

    // Live: a recipient, then a payout from the form with its live fee quote. The switch works from a
    // page that answered a form (here /dashboard/users) and lands on the section's own page.
    assert.equal(new URL(page.url()).pathname, '/dashboard/users');
    await page.getByRole('button', { name: 'Live' }).click();
    await page.getByText('Live mode: real money.').waitFor();
    assert.equal(new URL(page.url()).pathname, '/dashboard/settings');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payouts' }).click();
    await page.getByRole('link', { name: 'Recipients' }).click();
    await page.getByLabel('Account type').selectOption('bank');
    await page.getByLabel('Account name').fill('Ama Mensah');
    await page.getByLabel('Bank', { exact: true }).selectOption({ index: 0 });
    await page.getByLabel('Account number').fill('0012345678901');
    await page.getByRole('button', { name: 'Save recipient' }).click();
    await page.getByRole('status').filter({ hasText: 'Recipient Ama Mensah saved' }).waitFor();
    await screenshots(page, 'dashboard-recipients');

    await page.goto(`${baseUrl}/dashboard/payouts/new`);
    await page.getByLabel('Recipient').selectOption({ index: 0 });
    await page.getByLabel('Amount (GHS)').fill('250.00');
    const fee = payoutFeeMinor('bank', 25_000);
    await page
      .locator('#fee-quote')
      .filter({ hasText: `Fee GHS ${(fee / 100).toFixed(2)}` })
      .waitFor();
    assert.match(
      await page.locator('#fee-quote').innerText(),
      new RegExp(`total debit GHS ${((25_000 + fee) / 100).toFixed(2)}`),
    );
    await screenshots(page, 'dashboard-payout-new');
    await Promise.all([
      page.waitForURL(/\/dashboard\/payouts\/po_/),
      page.getByRole('button', { name: 'Create payout' }).click(),
    ]);
    const payoutId = new URL(page.url()).pathname.split('/').pop()!;
    assert.match(await page.getByRole('heading', { level: 1 }).innerText(), /requested/);

    // The requester sees no decision buttons, and a direct post is refused.
    assert.equal(await page.getByRole('button', { name: 'Approve payout' }).count(), 0);
    assert.match(
      await page.getByRole('note').innerText(),
      /You requested this payout, so another approver must approve or reject it\./,
    );
    await screenshots(page, 'dashboard-payout-requested');
    const direct = await postFromPage(page, `/dashboard/payouts/${payoutId}/decision`, {
      _csrf: await csrfOf(page),
      decision: 'approve',
    });
    assert.equal(direct.status, 403);
    assert.match(direct.text, /approver role/);
    assert.equal((await payoutRow(t, payoutId)).status, 'requested');

    // API keys cannot approve: there is no such route, and the payout stays requested.
    const byKey = await call(t, 'POST', `/api/v1/payouts/${payoutId}/approve`, { key: m.liveKey, body: {} });
    assert.equal(byKey.statusCode, 404);
    const paths = Object.keys((await call(t, 'GET', '/openapi.json')).json().paths as object);
    assert.ok(!paths.some((path) => /approv|decision/.test(path)), 'no API route decides payouts');
    assert.equal((await payoutRow(t, payoutId)).status, 'requested');

    // The approver signs in with the temporary password, must choose their own first, then approves.
    const approver = await consolePage(browser);
    await signIn(approver.page, baseUrl, '/dashboard', approverEmail, temporaryPassword);
    assert.equal(
      new URL(approver.page.url()).pathname,
      '/dashboard/account',
      'a temporary password opens only the password page',
    );
    await approver.page.getByRole('heading', { name: 'Choose your password' }).first().waitFor();
    await screenshots(approver.page, 'dashboard-password-forced');
    await approver.page.goto(`${baseUrl}/dashboard/payouts`);
    assert.equal(new URL(approver.page.url()).pathname, '/dashboard/account', 'other pages send back to it');
    await approver.page.getByLabel('Temporary password').fill(temporaryPassword);
    await approver.page.getByLabel(/^New password \(at least/).fill(`${PASSWORD} for the approver`);
    await approver.page.getByLabel('New password again').fill(`${PASSWORD} for the approver`);
    await approver.page.getByRole('button', { name: 'Save password' }).click();
    await approver.page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    await approver.page.getByRole('button', { name: 'Live' }).click();
    await approver.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payouts' }).click();
    await screenshots(approver.page, 'dashboard-payouts');
    await approver.page.locator(`a[href="/dashboard/payouts/${payoutId}"]`).click();
    await approver.page.getByRole('region', { name: 'Approval' }).waitFor();
    await screenshots(approver.page, 'dashboard-payout-approval');
    await approver.page.getByRole('button', { name: 'Approve payout' }).click();
    await approver.page.getByRole('status').filter({ hasText: 'Payout approved: it is processing.' }).waitFor();
    const decided = await payoutRow(t, payoutId);
    assert.equal(decided.status, 'processing');
    assert.notEqual(decided.decided_by_user_id, decided.requested_by_user_id);

    // The simulator pays it: receipt download and evidence upload.
    assert.equal(await processUntilFinal(t, rail, payoutId), 'paid');
    await approver.page.reload();
    assert.match(await approver.page.getByRole('heading', { level: 1 }).innerText(), /paid/);
    const [download] = await Promise.all([
      approver.page.waitForEvent('download'),
      approver.page.getByRole('link', { name: 'Download receipt (PDF)' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^receipt-PO-.+\.pdf$/);
    const chunks: Buffer[] = [];
    for await (const chunk of (await download.createReadStream())!) chunks.push(chunk as Buffer);
    assert.equal(Buffer.concat(chunks).subarray(0, 5).toString(), '%PDF-');
    await approver.page
      .getByLabel(/Attach a file/)
      .setInputFiles({ name: 'bank-advice.png', mimeType: 'image/png', buffer: PNG });
    await approver.page.getByRole('button', { name: 'Upload evidence' }).click();
    await approver.page.getByRole('status').filter({ hasText: 'Evidence uploaded.' }).waitFor();
    assert.match(await approver.page.locator('main ul').innerText(), /bank-advice\.png · image\/png/);
    await screenshots(approver.page, 'dashboard-payout-detail');

    await owner.close();
    await approver.close();
  });

  it('checkout: sessions with filters and paging, a session with attempts, invoice lines and events, and revenue lines', async () => {
    const m = await newMerchant(t);
    await syncCodes(t, m.testKey, [
      { code: 'TUITION', name: 'Tuition' },
      { code: 'EXAM', name: 'Examination fee' },
    ]);
    const lines = await call(t, 'POST', '/api/v1/invoice-lines', {
      key: m.testKey,
      body: {
        invoice_ref: 'INV-0001',
        lines: [
          { code: 'TUITION', name: 'Tuition', amount_minor: 40_000 },
          { code: 'EXAM', name: 'Examination fee', amount_minor: 10_000 },
        ],
      },
    });
    assert.ok(lines.statusCode < 300, lines.body);
    const ids: string[] = [];
    for (let i = 1; i <= 27; i++) {
      const res = await call(t, 'POST', '/api/v1/sessions', {
        key: m.testKey,
        body: {
          amount_minor: 50_000 + i,
          invoice_ref: `INV-${String(i).padStart(4, '0')}`,
          description: `Term ${i} fees`,
          customer: { name: 'Kwame Asante' },
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id);
    }
    // The first one is paid with Mobile Money.
    const quote = (await call(t, 'GET', `/api/v1/checkout/sessions/${ids[0]}/quote`)).json();
    const attempt = (
      await call(t, 'POST', `/api/v1/checkout/sessions/${ids[0]}/provider-attempts`, {
        body: { rail: 'momo', amount_minor: quote.surcharges.momo.total_minor, operator: 'mtn', phone: '0241234567' },
      })
    ).json();
    const simulated = await call(t, 'POST', `/api/v1/test/payment-attempts/${attempt.attempt_reference}/simulate`, {
      key: m.testKey,
      body: { outcome: 'paid' },
    });
    assert.equal(simulated.statusCode, 200, simulated.body);

    const { page, close } = await consolePage(browser);
    await signIn(page, baseUrl, '/dashboard', m.email, PASSWORD);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payments' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payments' }).waitFor();
    assert.equal(await page.locator('tbody tr').count(), 25);
    await screenshots(page, 'dashboard-sessions');
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.getByRole('link', { name: 'Newest' }).waitFor();
    assert.equal(await page.locator('tbody tr').count(), 2);

    await page.getByLabel('Status').selectOption('success');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/status=success/);
    assert.equal(await page.locator('tbody tr').count(), 1);
    await page.getByRole('link', { name: 'Clear' }).click();
    await page.getByLabel('Search', { exact: true }).fill('INV-0007');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=INV-0007/);
    assert.equal(await page.locator('tbody tr').count(), 1);
    assert.match(await page.locator('tbody tr').innerText(), /INV-0007/);

    await page.goto(`${baseUrl}/dashboard/sessions?invoice_ref=INV-0001`);
    await page.getByRole('link', { name: ids[0]! }).click();
    await page.getByRole('heading', { level: 1 }).filter({ hasText: ids[0]! }).waitFor();
    const main = await page.locator('main').innerText();
    assert.match(main, /success/);
    assert.match(main, new RegExp(attempt.attempt_reference));
    assert.match(main, /momo \(mtn\)/);
    assert.match(main, /TUITION\s+Tuition\s+GHS 400\.00/);
    assert.match(main, /checkout\.session\.completed/);
    await screenshots(page, 'dashboard-session-detail');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payments' }).click();
    await page.getByRole('link', { name: 'Revenue lines' }).click();
    await page.getByRole('heading', { level: 1, name: 'Revenue lines' }).waitFor();
    assert.match(await page.locator('tbody').innerText(), /EXAM\s+Examination fee\s+active/);
    await screenshots(page, 'dashboard-revenue-lines');

    // Live shows Live data only.
    await page.getByRole('button', { name: 'Live' }).click();
    await page.goto(`${baseUrl}/dashboard/sessions`);
    assert.match(await page.locator('main').innerText(), /No payments match\./);
    await page.goto(`${baseUrl}/dashboard/sessions/${ids[0]}`);
    await page.getByRole('heading', { level: 1, name: 'Session not found' }).waitFor();
    await close();
  });
});

describe('merchant dashboard in Chromium: two-factor authentication', () => {
  let t: TestContext;
  let baseUrl: string;
  let browser: Browser;
  before(async () => {
    t = await startTestApp({}, { payoutRail: new LivePayoutSimulator() });
    baseUrl = await t.listen();
    browser = await launchChromium();
    await forgetLocalFailures(t);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Enrols on the open enrolment page with the app's current code; the secret, the code typed and the recovery codes shown. */
  async function enrolOnPage(page: Page): Promise<{ secret: string; code: string; recoveryCodes: string[] }> {
    await page.getByRole('img', { name: 'QR code of the two-factor secret' }).waitFor();
    const secret = (await page.locator('#totp-secret').innerText()).replace(/\s+/g, '');
    const code = totpCode(secret);
    await page.getByLabel('6-digit code').fill(code);
    await page.getByLabel('Your password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
    await page.getByRole('region', { name: 'Recovery codes' }).waitFor();
    return { secret, code, recoveryCodes: await page.locator('#recovery-codes li').allInnerTexts() };
  }

  it('the owner turns on a second factor (QR code, recovery codes once) and requires it; an approver is sent to enrol, signs in with a code and approves with a fresh one', async () => {
    const m = await liveReadyMerchant(t, true);
    const approverEmail = `approver-${randomUUID().slice(0, 8)}@example.com`;
    const approverId = randomUUID();
    await t.db.query('INSERT INTO users (id, merchant_id, email, password_hash, role) VALUES ($1, $2, $3, $4, $5)', [
      approverId,
      m.id,
      approverEmail,
      await hashPassword(PASSWORD),
      'approver',
    ]);
    const recipient = await call(t, 'POST', '/api/v1/payouts/recipients', {
      key: m.liveKey,
      body: {
        account_type: 'bank',
        bank_id: (await t.db.query<{ id: string }>('SELECT id FROM banks WHERE active ORDER BY name LIMIT 1'))[0]!.id,
        account_number: '0012345678902',
        account_name: 'Efua Sarpong',
      },
    });
    assert.equal(recipient.statusCode, 201, recipient.body);
    const created = await call(t, 'POST', '/api/v1/payouts', {
      key: m.liveKey,
      body: { recipient_id: recipient.json().id, amount_minor: 42_000, client_reference: '2fa-1' },
    });
    const payout = created.json() as { id: string; reference: string; status: string };
    assert.equal(payout.status, 'requested');

    // The owner enrols from the Account page (the email in the header).
    const owner = await consolePage(browser);
    await signIn(owner.page, baseUrl, '/dashboard', m.email, PASSWORD);
    await owner.page.getByRole('link', { name: `Account: ${m.email}` }).click();
    await screenshots(owner.page, 'dashboard-account');
    await owner.page.getByRole('link', { name: 'Set up two-factor authentication' }).click();
    await owner.page.getByRole('img', { name: 'QR code of the two-factor secret' }).waitFor();
    await screenshots(owner.page, 'dashboard-2fa-enrol');
    const { secret, recoveryCodes } = await enrolOnPage(owner.page);
    assert.equal(recoveryCodes.length, 10);
    assert.ok(recoveryCodes.every((code) => /^[0-9a-z]{4}(-[0-9a-z]{4}){3}$/.test(code)));
    await screenshots(owner.page, 'dashboard-2fa-recovery-codes');

    // The rule: approvers and key managers must use a second factor.
    await owner.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await owner.page.getByRole('button', { name: 'Require two-factor for approvers and key managers' }).click();
    await owner.page
      .getByRole('status')
      .filter({ hasText: 'Approvers and key managers now need two-factor authentication.' })
      .waitFor();

    // Signing in again asks for the code after the password.
    await Promise.all([
      owner.page.waitForURL('**/dashboard/login'),
      owner.page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    await owner.page.getByLabel('Email').fill(m.email);
    await owner.page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([
      owner.page.waitForURL('**/dashboard/login/code'),
      owner.page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    await screenshots(owner.page, 'dashboard-login-code');
    await owner.page.getByLabel('Code').fill(totpCode(secret, Date.now() + 30_000));
    await Promise.all([
      owner.page.waitForURL((url) => url.pathname === '/dashboard'),
      owner.page.getByRole('button', { name: 'Verify' }).click(),
    ]);
    await owner.page.getByRole('button', { name: 'Sign out' }).waitFor();
    await owner.close();

    // The approver has none yet: sent to enrol before anything else works.
    const approver = await consolePage(browser);
    const page = approver.page;
    await signIn(page, baseUrl, '/dashboard', approverEmail, PASSWORD);
    assert.equal(new URL(page.url()).pathname, '/dashboard/account/2fa');
    await page.getByRole('note').filter({ hasText: 'requires two-factor authentication for your role' }).waitFor();
    await page.goto(`${baseUrl}/dashboard/payouts/${payout.id}`);
    assert.equal(new URL(page.url()).pathname, '/dashboard/account/2fa', 'the approval screen waits for enrolment');
    const { secret: approverSecret, code: enrolmentCode } = await enrolOnPage(page);
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/dashboard'),
      page.getByRole('link', { name: 'I have saved them: continue' }).click(),
    ]);

    await page.getByRole('button', { name: 'Live' }).click();
    await page.getByText('Live mode: real money.').waitFor();
    await page.goto(`${baseUrl}/dashboard/payouts/${payout.id}`);
    const approval = page.getByRole('region', { name: 'Approval' });
    await approval.getByLabel('Code from your authenticator app (to approve)').waitFor();
    await screenshots(page, 'dashboard-payout-approval-code');

    // Without a code, and with the code already used to enrol: refused.
    await approval.getByRole('button', { name: 'Approve payout' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'Enter the current code from your authenticator app to approve' })
      .waitFor();
    await page
      .getByRole('region', { name: 'Approval' })
      .getByLabel('Code from your authenticator app (to approve)')
      .fill(enrolmentCode);
    await page.getByRole('region', { name: 'Approval' }).getByRole('button', { name: 'Approve payout' }).click();
    await page.getByRole('alert').filter({ hasText: 'each code works once' }).waitFor();
    assert.equal((await payoutRow(t, payout.id)).status, 'requested');

    // A fresh code (as half a minute later) approves.
    await t.db.query('UPDATE users SET totp_last_step = $2 WHERE id = $1', [approverId, totpStep(Date.now()) - 2]);
    await page
      .getByRole('region', { name: 'Approval' })
      .getByLabel('Code from your authenticator app (to approve)')
      .fill(totpCode(approverSecret));
    await page.getByRole('region', { name: 'Approval' }).getByRole('button', { name: 'Approve payout' }).click();
    await page.getByRole('status').filter({ hasText: 'Payout approved: it is processing.' }).waitFor();
    const row = await payoutRow(t, payout.id);
    assert.equal(row.status, 'processing');
    assert.equal(row.decided_by_user_id, approverId);
    await approver.close();
  });
});
