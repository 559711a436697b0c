// Revoking an API key from the dashboard's Developers page goes through the audited use case, as the CLI
// does: one api_key.revoked entry with the signed-in user as actor, and the key is refused at once. Another
// merchant's key, or the other environment's, is a 404 (as every foreign id) and keeps working. Over
// real HTTP (the app listening on 127.0.0.1, a browser's cookies and CSRF fields), on embedded storage and
// on PostgreSQL (DATABASE_URL).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { API_KEY_PREFIX_LENGTH } from '../../src/accounts/model.ts';
import { createMerchant } from '../../src/accounts/service.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'correct horse battery';
const TIMEOUT_MS = 10_000;

interface Browser {
  base: string;
  cookie: string;
  csrf: string;
}

function setCookie(res: Response, name: string): string {
  const header = res.headers.getSetCookie().find((cookie) => cookie.startsWith(`${name}=`));
  assert.ok(header, `the answer sets the ${name} cookie`);
  return header.slice(name.length + 1).split(';')[0]!;
}

function csrfField(html: string): string {
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(csrf, 'the page carries a CSRF field');
  return csrf;
}

const flash = (html: string): string => /class="flash[^"]*" role="(?:alert|status)">([^<]*)</.exec(html)?.[1] ?? '';
const formHeaders = (cookie: string) => ({ cookie, 'content-type': 'application/x-www-form-urlencoded' });

/** Signs in through the login form and opens the Developers page (the session's CSRF token comes from it). */
async function signIn(base: string, email: string, password: string): Promise<Browser> {
  const form = await fetch(`${base}/dashboard/login`, { redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  const formHtml = await form.text();
  assert.equal(form.status, 200, formHtml.slice(0, 300));
  const login = await fetch(`${base}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: formHeaders(`sika_login_csrf=${setCookie(form, 'sika_login_csrf')}`),
    body: new URLSearchParams({ _csrf: csrfField(formHtml), email, password }).toString(),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  assert.equal(login.status, 303, `sign-in: ${(await login.text()).slice(0, 300)}`);
  const cookie = `sika_dashboard=${setCookie(login, 'sika_dashboard')}`;
  const page = await fetch(`${base}/dashboard/developers`, {
    headers: { cookie },
    redirect: 'manual',
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const pageHtml = await page.text();
  assert.equal(page.status, 200, pageHtml.slice(0, 300));
  return { base, cookie, csrf: csrfField(pageHtml) };
}

async function post(
  browser: Browser,
  path: string,
  fields: Record<string, string> = {},
): Promise<{ status: number; html: string }> {
  const res = await fetch(`${browser.base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: formHeaders(browser.cookie),
    body: new URLSearchParams({ _csrf: browser.csrf, ...fields }).toString(),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  return { status: res.status, html: await res.text() };
}

describe(`dashboard API key revocation is audited (${storageKind})`, () => {
  let t: TestContext;
  let base: string;

  before(async () => {
    t = await startTestApp();
    base = await t.listen();
  });
  after(async () => t?.close());

  const apiStatus = async (key: string) =>
    (
      await fetch(`${base}/api/v1/revenue-lines`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      })
    ).status;
  const keyId = async (key: string) =>
    (
      await t.db.query<{ id: string }>('SELECT id FROM api_keys WHERE prefix = $1', [
        key.slice(0, API_KEY_PREFIX_LENGTH),
      ])
    )[0]!.id;
  const auditOf = (objectId: string) =>
    t.db.query<{
      actor_type: string;
      actor_id: string;
      actor_email: string | null;
      merchant_id: string | null;
      action: string;
      object_type: string;
      before: unknown;
      after: unknown;
    }>(
      'SELECT actor_type, actor_id, actor_email, merchant_id, action, object_type, before, after FROM audit_log WHERE object_id = $1 ORDER BY id',
      [objectId],
    );

  it('revoking a key from the Developers page writes api_key.revoked with the signed-in user as actor, and the key stops working', async () => {
    const email = `owner-${randomUUID()}@example.com`;
    const m = await createMerchant(t.db, { name: `Revoke ${randomUUID().slice(0, 6)}`, email, password: PASSWORD });
    const [ownerRow] = await t.db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [m.owner_user_id]);
    assert.equal(await apiStatus(m.test_api_key), 200, 'the Test key works before');
    const testKeyId = await keyId(m.test_api_key);
    const liveKeyId = await keyId(m.live_api_key);

    const browser = await signIn(base, email, PASSWORD);
    // The session opens on Test: the Live key is not found from there (404, as any foreign id), stays valid and nothing is audited.
    const otherEnvironment = await post(browser, `/dashboard/keys/${liveKeyId}/revoke`);
    assert.equal(otherEnvironment.status, 404);
    assert.equal(flash(otherEnvironment.html), 'API key not found.');
    assert.equal(await apiStatus(m.live_api_key), 200, 'the Live key still works');
    assert.deepEqual(await auditOf(liveKeyId), []);

    // Another merchant's key: the same 404, and that key keeps working.
    const other = await createMerchant(t.db, {
      name: `Other ${randomUUID().slice(0, 6)}`,
      email: `other-${randomUUID()}@example.com`,
      password: PASSWORD,
    });
    const otherKeyId = await keyId(other.test_api_key);
    const foreign = await post(browser, `/dashboard/keys/${otherKeyId}/revoke`);
    assert.equal(foreign.status, 404, foreign.html.slice(0, 300));
    assert.equal(flash(foreign.html), 'API key not found.');
    assert.doesNotMatch(
      foreign.html,
      new RegExp(other.test_api_key.slice(0, API_KEY_PREFIX_LENGTH)),
      "the page shows nothing of the other merchant's key",
    );
    assert.equal(await apiStatus(other.test_api_key), 200, "the other merchant's key still works");
    assert.deepEqual(await auditOf(otherKeyId), []);

    const revoked = await post(browser, `/dashboard/keys/${testKeyId}/revoke`);
    assert.equal(revoked.status, 200, revoked.html.slice(0, 300));
    assert.match(flash(revoked.html), /revoked: it stops working at once/);
    assert.equal(await apiStatus(m.test_api_key), 401, 'the revoked key is refused at once');
    const [row] = await t.db.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE id = $1', [
      testKeyId,
    ]);
    assert.ok(row?.revoked_at, 'the key is revoked in storage');
    const entries = await auditOf(testKeyId);
    assert.deepEqual(entries, [
      {
        actor_type: 'user',
        actor_id: m.owner_user_id,
        actor_email: ownerRow!.email,
        merchant_id: m.merchant_id,
        action: 'api_key.revoked',
        object_type: 'api_key',
        before: { revoked: false },
        after: { revoked: true },
      },
    ]);

    // Revoking it again (a second click, a reload) changes nothing, says so and writes no second entry.
    const again = await post(browser, `/dashboard/keys/${testKeyId}/revoke`);
    assert.equal(again.status, 200);
    assert.match(flash(again.html), /was already revoked/);
    assert.equal((await auditOf(testKeyId)).length, 1);
  });
});
