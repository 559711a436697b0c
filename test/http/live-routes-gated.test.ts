// Live only when approved (issue 33): this walks every operation of /openapi.json that takes an API key and
// calls it with a Live key of (a) a merchant not approved yet (made as sign-up makes it; its Live key issued
// directly, as an operator could have before) and (b) an approved merchant since suspended. Each answers 403
// with ACCOUNT_NOT_ACTIVATED or ACCOUNT_SUSPENDED, whatever its path or body, except the documented
// exemption GET /api/v1/account; each documents that 403. Test keys of the same merchants keep working.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { suspendMerchant } from '../../src/accounts/activation.ts';
import { issueApiKey } from '../../src/accounts/api-keys.ts';
import { createMerchant } from '../../src/accounts/service.ts';
import { listIntegrations } from '../../src/accounts/store.ts';
import { bearer, startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const EXEMPT = new Set(['GET /api/v1/account']);
const CLI_ACTOR = { type: 'cli' as const, id: 'tester@test', email: null };

interface Operation {
  method: string;
  path: string;
  security?: unknown[];
  responses: Record<string, { description?: string }>;
}

describe(`Live routes refused before approval and while suspended (${storageKind})`, () => {
  let t: TestContext;
  let operations: Operation[];
  let pending: { merchantId: string; testKey: string; liveKey: string };
  let suspended: { merchantId: string; testKey: string; liveKey: string };

  before(async () => {
    t = await startTestApp();
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, op]) => ({ ...op, method: method.toUpperCase(), path })),
    );
    const made = await createMerchant(t.db, {
      name: `Pending ${randomUUID().slice(0, 8)}`,
      email: `pending-${randomUUID()}@example.com`,
      pendingActivation: true,
    });
    assert.equal(made.live_api_key, null);
    const liveKey = await t.db.transaction(async (tx) => {
      const [integration] = await listIntegrations(tx, made.merchant_id, 'live');
      return issueApiKey(tx, {
        merchantId: made.merchant_id,
        integrationId: integration!.id,
        environment: 'live',
        createdByUserId: made.owner_user_id,
      });
    });
    pending = { merchantId: made.merchant_id, testKey: made.test_api_key, liveKey: liveKey.key };
    const approved = await t.merchant();
    await suspendMerchant(t.db, approved.merchant_id, 'Chargebacks under investigation', CLI_ACTOR);
    suspended = { merchantId: approved.merchant_id, testKey: approved.test_api_key, liveKey: approved.live_api_key };
  });
  after(async () => t?.close());

  const keyed = () => operations.filter((op) => op.security && op.security.length > 0);
  const urlOf = (path: string) => path.replace(/\{[^}]+\}/g, (name) => `${name.slice(1, 4)}_${'0'.repeat(24)}`);
  const send = (op: Operation, key: string) =>
    t.app.inject({
      method: op.method as 'GET',
      url: urlOf(op.path),
      headers: {
        ...bearer(key),
        ...(op.method === 'POST' ? { 'content-type': 'application/json', 'idempotency-key': randomUUID() } : {}),
      },
      payload: op.method === 'POST' ? '{}' : undefined,
    });

  it('finds the API-key operations in the document (the walk is not empty)', () => {
    assert.ok(keyed().length >= 30, `only ${keyed().length} operations take a key`);
    for (const name of ['POST /api/v1/sessions', 'POST /api/v1/payouts', 'GET /api/v1/account'])
      assert.ok(
        keyed().some((op) => `${op.method} ${op.path}` === name),
        `${name} is in the document with its security`,
      );
  });

  for (const [label, code] of [
    ['not approved', 'ACCOUNT_NOT_ACTIVATED'],
    ['suspended', 'ACCOUNT_SUSPENDED'],
  ] as const) {
    it(`every Live-gated operation answers a Live key of a ${label} merchant 403 ${code}`, async () => {
      const key = label === 'not approved' ? pending.liveKey : suspended.liveKey;
      const wrong: string[] = [];
      for (const op of keyed()) {
        const name = `${op.method} ${op.path}`;
        const res = await send(op, key);
        if (EXEMPT.has(name)) {
          if (res.statusCode !== 200) wrong.push(`${name}: exempt, answered ${res.statusCode}`);
          continue;
        }
        const body = res.json() as { error?: { code?: string } };
        if (res.statusCode !== 403 || body.error?.code !== code)
          wrong.push(`${name}: ${res.statusCode} ${body.error?.code ?? res.body.slice(0, 80)}`);
      }
      assert.deepEqual(wrong, []);
    });
  }

  it('documents the 403 with both codes on every Live-gated operation, and not on the exemption', () => {
    for (const op of keyed()) {
      const name = `${op.method} ${op.path}`;
      const description = op.responses['403']?.description ?? '';
      if (EXEMPT.has(name)) assert.ok(!description.includes('ACCOUNT_SUSPENDED'), name);
      else
        assert.ok(
          description.includes('ACCOUNT_NOT_ACTIVATED') && description.includes('ACCOUNT_SUSPENDED'),
          `${name} documents its 403: ${description}`,
        );
    }
  });

  it('Test keys of the same merchants keep working: a Test session is created', async () => {
    for (const merchant of [pending, suspended]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/sessions',
        headers: { ...bearer(merchant.testKey), 'idempotency-key': randomUUID() },
        payload: { amount_minor: 5000, invoice_ref: `INV-${randomUUID().slice(0, 8)}` },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
  });

  it('a Live key of an approved merchant not suspended is not refused by the gate', async () => {
    const m = await t.merchant();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/sessions', headers: bearer(m.live_api_key) });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('a Live payer page of a suspended merchant says it cannot take payments; new attempts and slips are 403', async () => {
    const m = await t.merchant();
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      headers: { ...bearer(m.live_api_key), 'idempotency-key': randomUUID() },
      payload: { amount_minor: 5000, invoice_ref: `INV-${randomUUID().slice(0, 8)}` },
    });
    assert.equal(created.statusCode, 201, created.body);
    const sessionId: string = created.json().id;
    const page = () => t.app.inject({ method: 'GET', url: `/pay/${sessionId}` });
    assert.equal((await page()).statusCode, 200);
    assert.doesNotMatch((await page()).body, /cannot take payments/);

    await suspendMerchant(t.db, m.merchant_id, 'Investigation', CLI_ACTOR);
    // Within 1 s everywhere; this app hears it too.
    const start = Date.now();
    while ((await page()).statusCode !== 403) {
      assert.ok(Date.now() - start < 1_000, 'the page changes within 1 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const refusedPage = await page();
    assert.match(refusedPage.body, /This merchant cannot take payments right now/);
    assert.match(refusedPage.headers['content-type'] as string, /text\/html/);

    const attempt = await t.app.inject({
      method: 'POST',
      url: `/api/v1/checkout/sessions/${sessionId}/provider-attempts`,
      payload: { rail: 'momo', operator: 'mtn', phone: '0241234567', amount_minor: 5000 },
    });
    assert.equal(attempt.statusCode, 403, attempt.body);
    assert.equal(attempt.json().error.code, 'ACCOUNT_SUSPENDED');
    const slip = await t.app.inject({
      method: 'POST',
      url: '/api/v1/checkout/cash-slips',
      payload: { session_id: sessionId, amount_minor: 5000 },
    });
    assert.equal(slip.statusCode, 403, slip.body);
    assert.equal(slip.json().error.code, 'ACCOUNT_SUSPENDED');
    // Reading the session stays open (a payer polling what is already under way).
    const view = await t.app.inject({ method: 'GET', url: `/api/v1/checkout/sessions/${sessionId}` });
    assert.equal(view.statusCode, 200);
  });

  it('a Test payer page of the same suspended merchant still takes payments', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      headers: { ...bearer(suspended.testKey), 'idempotency-key': randomUUID() },
      payload: { amount_minor: 5000, invoice_ref: `INV-${randomUUID().slice(0, 8)}` },
    });
    const page = await t.app.inject({ method: 'GET', url: `/pay/${created.json().id}` });
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /cannot take payments/);
  });
});
