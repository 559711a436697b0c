// Live keys in the dashboard (issue 33): a merchant that signed up has no Live key; its owner cannot create one
// before approval (a clear message, and the form is not offered), can once approved (shown once, and it works),
// and cannot while suspended. Test keys can be created throughout. On embedded storage and PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { changeActivation, reinstateMerchant, suspendMerchant } from '../../src/accounts/activation.ts';
import { createMerchant } from '../../src/accounts/service.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { bearer, startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'a dashboard passphrase';
const OPERATOR = { type: 'operator' as const, id: 'op-dashboard-test', email: null };

describe(`Live API keys in the dashboard only once approved and not suspended (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => t?.close());

  const integrationIn = (body: string) =>
    /<select id="key-integration" name="integration_id"><option value="([^"]+)"/.exec(body)?.[1];
  const keyIn = (body: string) => /<p class="secret" id="new-api-key">([^<]+)<\/p>/.exec(body)?.[1];

  it('refuses a Live key before approval and while suspended, creates one after approval', async () => {
    const email = `owner-${randomUUID()}@example.com`;
    const m = await createMerchant(t.db, {
      name: 'Signed Up Shop',
      email,
      password: PASSWORD,
      pendingActivation: true,
    });
    const liveIntegration = (
      await t.db.query<{ id: string }>("SELECT id FROM integrations WHERE merchant_id = $1 AND environment = 'live'", [
        m.merchant_id,
      ])
    )[0]!.id;
    const client = await new ConsoleClient(t, '/dashboard', '203.0.113.77').signedIn(email, PASSWORD);

    // Test: the form is there and makes a key.
    const testPage = await client.get('/dashboard/developers');
    assert.ok(integrationIn(testPage.body), 'a Test key can be created');
    assert.match(
      keyIn((await client.post('/dashboard/keys', { integration_id: integrationIn(testPage.body)! })).body) ?? '',
      /^ak_test_/,
    );

    // Live before approval: no form, a clear message, and a forged post is refused.
    assert.equal((await client.post('/dashboard/environment', { environment: 'live' })).statusCode, 303);
    const before = await client.get('/dashboard/developers');
    assert.equal(integrationIn(before.body), undefined, 'no Live key form before approval');
    assert.match(before.body, /once your Go-Live application is approved/);
    const forged = await client.post('/dashboard/keys', { integration_id: liveIntegration });
    assert.equal(forged.statusCode, 403);
    assert.match(forged.body, /once your Go-Live application is approved/);
    assert.equal(keyIn(forged.body), undefined);

    // Approved: the key is created, shown once, and takes Live calls.
    await t.db.transaction((tx) =>
      changeActivation(tx, { merchantId: m.merchant_id, to: 'approved', actor: OPERATOR }),
    );
    const approved = await client.get('/dashboard/developers');
    assert.equal(integrationIn(approved.body), liveIntegration);
    const created = await client.post('/dashboard/keys', { integration_id: liveIntegration });
    assert.equal(created.statusCode, 200, created.body.slice(0, 300));
    const liveKey = keyIn(created.body);
    assert.match(liveKey ?? '', /^ak_live_/);
    const sessions = await t.app.inject({ method: 'GET', url: '/api/v1/sessions', headers: bearer(liveKey!) });
    assert.equal(sessions.statusCode, 200, sessions.body);

    // Suspended: refused again, with its own message; reinstated: allowed.
    await suspendMerchant(t.db, m.merchant_id, 'Review', OPERATOR);
    const whileSuspended = await client.post('/dashboard/keys', { integration_id: liveIntegration });
    assert.equal(whileSuspended.statusCode, 403);
    assert.match(whileSuspended.body, /suspended/);
    await reinstateMerchant(t.db, m.merchant_id, OPERATOR);
    const again = await client.post('/dashboard/keys', { integration_id: liveIntegration });
    assert.match(keyIn(again.body) ?? '', /^ak_live_/);
  });
});
