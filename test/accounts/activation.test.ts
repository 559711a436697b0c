// The account in the API and what a change of standing does (issue 33): GET /api/v1/account answers exactly
// {object, id, business_name, activation: {status, requirements}, suspended, live_enabled, created_at} for
// every status, to Test and Live keys alike (even suspended); every change of activation or suspension is
// audited, e-mailed to the owner (text and HTML, with the reason) and announced as account.updated to every
// webhook endpoint of the merchant, Test and Live, delivered for real. On embedded storage and PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { changeActivation, reinstateMerchant, suspendMerchant } from '../../src/accounts/activation.ts';
import type { ActivationStatus } from '../../src/accounts/activation-model.ts';
import { createApiKey } from '../../src/accounts/api-keys.ts';
import { createMerchant } from '../../src/accounts/service.ts';
import { insertWebhookEndpoint } from '../../src/accounts/store.ts';
import { DeliveryWorker, defaultDeliveryOptions } from '../../src/events/delivery.ts';
import { bearer, startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import {
  captureLogger,
  isolatedTestApp,
  liveKeyId,
  startReceiver,
  waitFor,
  type Receiver,
} from '../support/webhooks.ts';

const OPERATOR = { type: 'operator' as const, id: 'op-activation-test', email: 'op@example.com' };
const ACCOUNT_KEYS = ['activation', 'business_name', 'created_at', 'id', 'live_enabled', 'object', 'suspended'];

const pendingMerchant = (t: TestContext) =>
  createMerchant(t.db, {
    name: `Pending ${randomUUID().slice(0, 8)}`,
    email: `owner-${randomUUID()}@example.com`,
    pendingActivation: true,
  });

describe(`GET /api/v1/account and changes of standing (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => t?.close());

  const account = async (key: string) => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/account', headers: bearer(key) });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const move = (merchantId: string, to: ActivationStatus, reason?: string) =>
    t.db.transaction((tx) => changeActivation(tx, { merchantId, to, actor: OPERATOR, reason }));
  const mails = (merchantId: string) =>
    t.db.query<{ kind: string; to_address: string; subject: string; text_body: string; html_body: string }>(
      'SELECT kind, to_address, subject, text_body, html_body FROM mail_outbox WHERE merchant_id = $1 ORDER BY created_at, id',
      [merchantId],
    );

  it('answers the account exactly, for each status, to a Test key', async () => {
    const m = await pendingMerchant(t);
    const first = await account(m.test_api_key);
    assert.deepEqual(Object.keys(first).sort(), ACCOUNT_KEYS);
    assert.equal(first.object, 'account');
    assert.equal(first.id, m.merchant_id);
    assert.match(first.business_name, /^Pending /);
    assert.match(first.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.deepEqual(Object.keys(first.activation).sort(), ['requirements', 'status']);
    const expectations: [ActivationStatus, boolean][] = [
      ['not_submitted', true],
      ['under_review', false],
      ['changes_requested', true],
      ['under_review', false],
      ['rejected', false],
      ['approved', false],
    ];
    for (const [i, [status, missing]] of expectations.entries()) {
      if (i > 0) await move(m.merchant_id, status, status === 'rejected' ? 'no registration' : 'fix the TIN');
      const view = await account(m.test_api_key);
      assert.equal(view.activation.status, status);
      assert.equal(view.activation.requirements.length > 0, missing, `${status}: ${view.activation.requirements}`);
      assert.ok(view.activation.requirements.every((r: unknown) => typeof r === 'string'));
      assert.equal(view.suspended, false);
      assert.equal(view.live_enabled, status === 'approved');
    }
  });

  it('answers a Live key too, even while suspended, and says so', async () => {
    const m = await t.merchant();
    assert.equal((await account(m.live_api_key)).live_enabled, true);
    await suspendMerchant(t.db, m.merchant_id, 'Unusual refunds', OPERATOR);
    const view = await account(m.live_api_key);
    assert.equal(view.suspended, true);
    assert.equal(view.live_enabled, false);
    assert.equal(view.activation.status, 'approved');
    await reinstateMerchant(t.db, m.merchant_id, OPERATOR);
    assert.equal((await account(m.live_api_key)).live_enabled, true);
  });

  it('a pending merchant given a Live key is refused, then accepted once approved', async () => {
    const m = await pendingMerchant(t);
    const live = await createApiKey(t.db, { merchantId: m.merchant_id, environment: 'live', actor: OPERATOR });
    const sessions = () => t.app.inject({ method: 'GET', url: '/api/v1/sessions', headers: bearer(live.key) });
    assert.equal((await sessions()).json().error.code, 'ACCOUNT_NOT_ACTIVATED');
    await move(m.merchant_id, 'approved');
    // The gate heard the change (or its cache expired): at most 1 s.
    await waitFor('the Live key to be accepted', async () => (await sessions()).statusCode === 200, 1_000, 20);
  });

  it('mails the owner on each decision, suspension and reinstatement, with the reason, in text and HTML', async () => {
    const m = await pendingMerchant(t);
    await move(m.merchant_id, 'under_review');
    await move(m.merchant_id, 'changes_requested', 'Upload a clearer proof of address');
    await move(m.merchant_id, 'under_review');
    await move(m.merchant_id, 'rejected', 'The registration number does not exist');
    await move(m.merchant_id, 'approved');
    await suspendMerchant(t.db, m.merchant_id, 'Card testing seen', OPERATOR);
    await reinstateMerchant(t.db, m.merchant_id, OPERATOR);
    const sent = await mails(m.merchant_id);
    const kinds = sent
      .map((mail) => mail.kind)
      .filter((kind) => kind.startsWith('activation.') || kind.startsWith('account.'));
    assert.deepEqual(kinds, [
      'activation.changes_requested',
      'activation.rejected',
      'activation.approved',
      'account.suspended',
      'account.reinstated',
    ]);
    const of = (kind: string) => sent.find((mail) => mail.kind === kind)!;
    for (const mail of sent) {
      assert.ok(mail.text_body.length > 0 && mail.html_body.includes('<p>'), mail.kind);
      assert.match(mail.to_address, /^owner-/);
    }
    assert.equal(of('activation.approved').subject, 'You can now take Live payments');
    assert.ok(of('activation.approved').text_body.includes('http://sika.test/dashboard'));
    assert.ok(of('activation.approved').html_body.includes('href="http://sika.test/dashboard"'));
    assert.ok(of('activation.changes_requested').text_body.includes('Upload a clearer proof of address'));
    assert.ok(of('activation.rejected').html_body.includes('The registration number does not exist'));
    assert.ok(of('account.suspended').text_body.includes('Card testing seen'));
  });

  it('audits suspension and reinstatement, and a second suspension changes nothing', async () => {
    const m = await t.merchant();
    await suspendMerchant(t.db, m.merchant_id, 'first', OPERATOR);
    await suspendMerchant(t.db, m.merchant_id, 'second', OPERATOR);
    await reinstateMerchant(t.db, m.merchant_id, OPERATOR);
    await reinstateMerchant(t.db, m.merchant_id, OPERATOR);
    const rows = await t.db.query<{ action: string; actor_id: string; after: { reason?: string } }>(
      `SELECT action, actor_id, after FROM audit_log WHERE merchant_id = $1 AND action IN ('merchant.suspended', 'merchant.reinstated') ORDER BY id`,
      [m.merchant_id],
    );
    assert.deepEqual(
      rows.map((r) => r.action),
      ['merchant.suspended', 'merchant.reinstated'],
    );
    assert.equal(rows[0]!.after.reason, 'first');
    assert.equal(rows[0]!.actor_id, OPERATOR.id);
  });

  it('refuses an empty or over-long reason, and an unknown merchant', async () => {
    const m = await t.merchant();
    await assert.rejects(suspendMerchant(t.db, m.merchant_id, '  ', OPERATOR), { code: 'INVALID_ARGUMENT' });
    await assert.rejects(suspendMerchant(t.db, m.merchant_id, 'x'.repeat(501), OPERATOR), {
      code: 'INVALID_ARGUMENT',
    });
    await assert.rejects(suspendMerchant(t.db, randomUUID(), 'why', OPERATOR), { code: 'NOT_FOUND' });
  });
});

describe(`account.updated reaches every endpoint of the merchant, Test and Live (${storageKind})`, () => {
  let t: TestContext;
  let receiver: Receiver;
  before(async () => {
    // A private database on PostgreSQL: a delivery worker there claims only this file's deliveries.
    t = await isolatedTestApp();
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('writes account.updated for the Test and the Live endpoint in the change, and delivers it signed', async () => {
    const m = await t.merchant({ webhookUrl: receiver.url });
    // A Live endpoint must be https through the API; the test's receiver is http, so it is written directly.
    const liveKey = await liveKeyId(t.db, m.merchant_id);
    await t.db.transaction((tx) =>
      insertWebhookEndpoint(tx, {
        id: randomUUID(),
        merchantId: m.merchant_id,
        environment: 'live',
        apiKeyId: liveKey,
        url: `${receiver.url}?live`,
        secret: `whsec_${Buffer.from(randomUUID()).toString('base64')}`,
      }),
    );
    await suspendMerchant(t.db, m.merchant_id, 'Documents expired', OPERATOR);
    // One delivery per endpoint, Test and Live, written with the change.
    const deliveries = await t.db.query<{ environment: string; type: string; payload: string }>(
      `SELECT d.environment, e.type, e.payload FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE d.merchant_id = $1 ORDER BY d.environment`,
      [m.merchant_id],
    );
    assert.deepEqual(
      deliveries.map((d) => [d.environment, d.type]),
      [
        ['live', 'account.updated'],
        ['test', 'account.updated'],
      ],
    );
    for (const d of deliveries) {
      const event = JSON.parse(d.payload);
      assert.equal(event.livemode, d.environment === 'live');
      assert.equal(event.data.account.suspended, true);
      assert.equal(event.version, 1);
    }
    // The worker sends them: the Test one arrives (a Live endpoint is sent to over https only, and the
    // receiver here is http, so that one stays pending, refused by the worker's own rule).
    const worker = new DeliveryWorker(
      t.db,
      captureLogger(),
      defaultDeliveryOptions({ allowPrivateTargets: true, timeoutMs: 2_000 }),
    );
    worker.start();
    try {
      await waitFor('the Test delivery', () => receiver.requests.length >= 1, 10_000);
    } finally {
      await worker.stop();
    }
    const event = JSON.parse(receiver.requests[0]!.body);
    assert.equal(event.type, 'account.updated');
    assert.equal(event.livemode, false);
    assert.deepEqual(Object.keys(event.data.account).sort(), ACCOUNT_KEYS);
    assert.equal(event.data.account.id, m.merchant_id);
    assert.equal(event.data.account.suspended, true);
    assert.equal(event.data.account.live_enabled, false);
    assert.ok(receiver.requests[0]!.headers['webhook-signature'], 'signed');
    // A second change is a newer version of the account.
    await reinstateMerchant(t.db, m.merchant_id, OPERATOR);
    const versions = await t.db.query<{ v: number }>(
      `SELECT object_version AS v FROM events WHERE object_id = $1 AND environment = 'test' ORDER BY object_version`,
      [m.merchant_id],
    );
    assert.deepEqual(
      versions.map((r) => r.v),
      [1, 2],
    );
    const listed = await t.app.inject({
      method: 'GET',
      url: '/api/v1/events?type=account.updated',
      headers: bearer(m.test_api_key),
    });
    assert.equal(listed.statusCode, 200, listed.body);
    assert.equal(listed.json().data.length, 2, 'the Test key lists its environment’s two account.updated');
  });
});
