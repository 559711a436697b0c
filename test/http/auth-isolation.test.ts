// Authentication and isolation: SPEC 5, DESIGN §3 "Keys, environments, isolation".
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { revokeApiKey } from '../../src/accounts/store.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope, call, syncCodes, type Json } from '../support/http.ts';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomAlnum = (n: number) =>
  Array.from({ length: n }, () => ALNUM[Math.floor(Math.random() * ALNUM.length)]).join('');

interface Route {
  method: 'GET' | 'POST';
  url: string;
  body?: Record<string, Json>;
  query?: Record<string, string>;
}

/** Every merchant route of SPEC 4.1, with a request that would succeed with a good key. */
function merchantRoutes(t: TestContext, sessionId: string): Route[] {
  const routes: Route[] = [
    { method: 'POST', url: '/api/v1/sessions', body: { amount_minor: 100, invoice_ref: 'INV-AUTH' } },
    { method: 'GET', url: `/api/v1/sessions/${sessionId}` },
    {
      method: 'POST',
      url: '/api/v1/invoice-lines',
      body: { invoice_ref: 'INV-AUTH', lines: [{ code: 'FEE', name: 'Fee', amount_minor: 100 }] },
    },
    { method: 'GET', url: '/api/v1/invoice-lines', query: { invoice_ref: 'INV-AUTH' } },
    { method: 'GET', url: '/api/v1/revenue-lines' },
    { method: 'POST', url: '/api/v1/revenue-lines', body: { lines: [{ code: 'FEE', name: 'Fee' }] } },
  ];
  if (t.app.hasRoute({ method: 'POST', url: '/api/v1/test/payment-attempts/:reference/simulate' })) {
    routes.push({
      method: 'POST',
      url: '/api/v1/test/payment-attempts/att_unknown/simulate',
      body: { outcome: 'paid' },
    });
  }
  return routes;
}

const apiKeyRow = async (t: TestContext, key: string) =>
  (
    await t.db.query<{ id: string; prefix: string }>('select id, prefix from api_keys where prefix = $1', [
      key.slice(0, 16),
    ])
  )[0]!;

describe(`authentication and isolation (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const newSession = async (m: CreatedMerchant, key = m.test_api_key) => {
    const res = await call(t, 'POST', '/api/v1/sessions', {
      key,
      body: { amount_minor: 4200, invoice_ref: 'INV-ISO' },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };

  /** Every merchant route answers 401 UNAUTHORIZED with these headers, and nothing was written. */
  async function assertAllUnauthorized(headers: Record<string, string>, sessionId: string, merchantId?: string) {
    for (const route of merchantRoutes(t, sessionId)) {
      const res = await t.app.inject({
        method: route.method,
        url: route.url,
        query: route.query,
        headers: { ...headers, ...(route.body ? { 'content-type': 'application/json' } : {}) },
        payload: route.body ? JSON.stringify(route.body) : undefined,
      });
      const error = assertErrorEnvelope(res, 401, 'UNAUTHORIZED');
      assert.ok(!/ak_(test|live)_[A-Za-z0-9]{10,}/.test(error.message), 'the message never echoes a key');
    }
    if (merchantId) {
      const counts = await t.db.query<{ sessions: number; lines: number }>(
        `select (select count(*)::int from checkout_sessions where merchant_id = $1) as sessions,
                (select count(*)::int from revenue_lines where merchant_id = $1) as lines`,
        [merchantId],
      );
      assert.deepEqual(counts[0], { sessions: 1, lines: 0 }, 'a refused request wrote nothing');
    }
  }

  describe('401 UNAUTHORIZED', () => {
    it('a request without an Authorization header is 401 UNAUTHORIZED on every merchant route', async () => {
      const m = await t.merchant();
      const s = await newSession(m);
      await assertAllUnauthorized({}, s.id, m.merchant_id);
    });

    it('"Bearer" without a key, or with a malformed key, is 401 UNAUTHORIZED on every merchant route', async () => {
      const m = await t.merchant();
      const s = await newSession(m);
      for (const authorization of [
        'Bearer',
        'Bearer ',
        'Bearer not-a-key',
        `Bearer ak_test_${randomAlnum(39)}`,
        `Bearer ak_test_${randomAlnum(41)}`,
        `Bearer ak_prod_${randomAlnum(40)}`,
        `Bearer ${m.test_api_key.slice(0, -1)}!`,
        `Basic ${Buffer.from(`${m.test_api_key}:`).toString('base64')}`,
        m.test_api_key, // the key without the Bearer scheme
        `Bearer ${m.test_api_key} extra`,
      ]) {
        await assertAllUnauthorized({ authorization }, s.id, m.merchant_id);
      }
    });

    it('an unknown well-formed key (ak_test_ + 40 alphanumerics) is 401 UNAUTHORIZED on every merchant route', async () => {
      const m = await t.merchant();
      const s = await newSession(m);
      await assertAllUnauthorized({ authorization: `Bearer ak_test_${randomAlnum(40)}` }, s.id, m.merchant_id);
      await assertAllUnauthorized({ authorization: `Bearer ak_live_${randomAlnum(40)}` }, s.id, m.merchant_id);
    });

    it("a key with a real key's visible prefix but a different secret is 401 UNAUTHORIZED", async () => {
      const m = await t.merchant();
      const s = await newSession(m);
      const forged = m.test_api_key.slice(0, 16) + randomAlnum(m.test_api_key.length - 16);
      assert.notEqual(forged, m.test_api_key);
      await assertAllUnauthorized({ authorization: `Bearer ${forged}` }, s.id, m.merchant_id);
    });

    it("a revoked key is 401 UNAUTHORIZED on every merchant route, while the merchant's other key still works", async () => {
      const m = await t.merchant();
      const s = await newSession(m);
      assert.equal(
        (await call(t, 'GET', `/api/v1/sessions/${s.id}`, { key: m.test_api_key })).statusCode,
        200,
        'the key works before revocation',
      );
      const row = await apiKeyRow(t, m.test_api_key);
      const revoked = await revokeApiKey(t.db, row.id, m.merchant_id, 'test');
      assert.equal(revoked.length, 1);
      t.app.deps.authenticator.forget(m.test_api_key.slice(0, 16));
      await assertAllUnauthorized({ authorization: `Bearer ${m.test_api_key}` }, s.id, m.merchant_id);
      assert.equal((await call(t, 'GET', '/api/v1/revenue-lines', { key: m.live_api_key })).statusCode, 200);
    });

    it('every operation the OpenAPI document marks with API-key security (payouts included) is 401 UNAUTHORIZED without a key, with an unknown key and with a revoked key', async () => {
      const m = await t.merchant();
      const revokedKey = m.live_api_key;
      await revokeApiKey(t.db, (await apiKeyRow(t, revokedKey)).id, m.merchant_id, 'live');
      t.app.deps.authenticator.forget(revokedKey.slice(0, 16));
      const doc = t.app.swagger() as {
        paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>>;
      };
      const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => op.security?.some((s) => 'apiKey' in s))
          .map(([method, op]) => ({
            method: method.toUpperCase() as 'GET' | 'POST' | 'DELETE',
            url: path.replace(/\{\w+\}/g, 'x_unknown'),
            op,
          })),
      );
      assert.ok(operations.length >= 6, 'the SPEC 4.1 merchant routes at least');
      for (const headers of [
        {},
        { authorization: `Bearer ak_test_${randomAlnum(40)}` },
        { authorization: `Bearer ${revokedKey}` },
      ]) {
        for (const { method, url } of operations) {
          const res = await t.app.inject({
            method,
            url,
            headers: { ...headers, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
            payload: method === 'POST' ? '{}' : undefined,
          });
          assert.equal(res.statusCode, 401, `${method} ${url}: ${res.body}`);
          assert.equal(res.json().error.code, 'UNAUTHORIZED', `${method} ${url}`);
        }
      }
    });

    it('the Bearer scheme is case-insensitive: "bearer <key>" is accepted', async () => {
      const m = await t.merchant();
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/v1/revenue-lines',
        headers: { authorization: `bearer ${m.test_api_key}` },
      });
      assert.equal(res.statusCode, 200, res.body);
    });
  });

  describe('isolation between merchants and environments', () => {
    it("another merchant's key gets 404 NOT_FOUND for a session id, exactly like an unknown id", async () => {
      const owner = await t.merchant();
      const other = await t.merchant();
      const s = await newSession(owner);
      const foreign = await call(t, 'GET', `/api/v1/sessions/${s.id}`, { key: other.test_api_key });
      const foreignError = assertErrorEnvelope(foreign, 404, 'NOT_FOUND');
      const unknown = await call(t, 'GET', '/api/v1/sessions/cs_00000000000000000000000000', {
        key: other.test_api_key,
      });
      const unknownError = assertErrorEnvelope(unknown, 404, 'NOT_FOUND');
      assert.equal(foreignError.message, unknownError.message);
      assert.ok(!foreign.body.includes(owner.merchant_id));
      assert.ok(!foreign.body.includes('INV-ISO'));
      // The owner still reads it.
      assert.equal((await call(t, 'GET', `/api/v1/sessions/${s.id}`, { key: owner.test_api_key })).statusCode, 200);
    });

    it("another merchant's Live key gets 404 for a Live session too", async () => {
      const owner = await t.merchant();
      const other = await t.merchant();
      const s = await newSession(owner, owner.live_api_key);
      assertErrorEnvelope(
        await call(t, 'GET', `/api/v1/sessions/${s.id}`, { key: other.live_api_key }),
        404,
        'NOT_FOUND',
      );
    });

    it("the same merchant's Live key gets 404 for its Test session, and the Test key 404 for its Live session", async () => {
      const m = await t.merchant();
      const testSession = await newSession(m, m.test_api_key);
      const liveSession = await newSession(m, m.live_api_key);
      assertErrorEnvelope(
        await call(t, 'GET', `/api/v1/sessions/${testSession.id}`, { key: m.live_api_key }),
        404,
        'NOT_FOUND',
      );
      assertErrorEnvelope(
        await call(t, 'GET', `/api/v1/sessions/${liveSession.id}`, { key: m.test_api_key }),
        404,
        'NOT_FOUND',
      );
      assert.equal(
        (await call(t, 'GET', `/api/v1/sessions/${testSession.id}`, { key: m.test_api_key })).statusCode,
        200,
      );
      assert.equal(
        (await call(t, 'GET', `/api/v1/sessions/${liveSession.id}`, { key: m.live_api_key })).statusCode,
        200,
      );
    });

    it('revenue lines synced in Test are invisible in Live and cannot back a Live invoice line', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'FEE', name: 'Fee' },
        { code: 'BOOK', name: 'Book' },
      ]);
      const live = (
        await call(t, 'GET', '/api/v1/revenue-lines', { key: m.live_api_key, query: { include_inactive: 'true' } })
      ).json();
      assert.deepEqual(live.lines, []);
      assert.deepEqual(live.counts, { total: 0, active: 0, inactive: 0 });
      const test = (await call(t, 'GET', '/api/v1/revenue-lines', { key: m.test_api_key })).json();
      assert.equal(test.counts.total, 2);
      const ingest = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.live_api_key,
        body: { invoice_ref: 'INV-ENV', lines: [{ code: 'FEE', name: 'Fee', amount_minor: 100 }] },
      });
      assert.equal(ingest.statusCode, 207);
      assert.equal(ingest.json().ingested, 0);
      assert.equal(ingest.json().errors[0].code, 'INVALID_ARGUMENT');
    });

    it('a Live sync with deactivate_missing does not touch the Test revenue lines', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [{ code: 'FEE', name: 'Fee' }]);
      const res = await call(t, 'POST', '/api/v1/revenue-lines', {
        key: m.live_api_key,
        body: { lines: [{ code: 'OTHER', name: 'Other' }], deactivate_missing: true },
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().deactivated, 0);
      assert.equal(res.json().total, 1);
      const test = (await call(t, 'GET', '/api/v1/revenue-lines', { key: m.test_api_key })).json();
      assert.deepEqual(test.counts, { total: 1, active: 1, inactive: 0 });
    });

    it('invoice lines of the Test environment are invisible to the Live key and to another merchant', async () => {
      const m = await t.merchant();
      const other = await t.merchant();
      await syncCodes(t, m.test_api_key, [{ code: 'FEE', name: 'Fee' }]);
      const stored = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: { invoice_ref: 'INV-SHARED', lines: [{ code: 'FEE', name: 'Fee', amount_minor: 1234 }] },
      });
      assert.equal(stored.statusCode, 200);
      assert.equal(
        (
          await call(t, 'GET', '/api/v1/invoice-lines', { key: m.test_api_key, query: { invoice_ref: 'INV-SHARED' } })
        ).json().total_minor,
        1234,
      );
      for (const key of [m.live_api_key, other.test_api_key, other.live_api_key]) {
        const res = await call(t, 'GET', '/api/v1/invoice-lines', { key, query: { invoice_ref: 'INV-SHARED' } });
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), {
          object: 'invoice.line_items',
          invoice_ref: 'INV-SHARED',
          lines: [],
          total_minor: 0,
        });
      }
    });

    it("another merchant with the same codes and invoice_ref keeps separate lines: its ingest does not overwrite the first merchant's", async () => {
      const a = await t.merchant();
      const b = await t.merchant();
      for (const m of [a, b]) await syncCodes(t, m.test_api_key, [{ code: 'FEE', name: 'Fee' }]);
      await call(t, 'POST', '/api/v1/invoice-lines', {
        key: a.test_api_key,
        body: { invoice_ref: 'INV-1', lines: [{ code: 'FEE', name: 'A', amount_minor: 100 }] },
      });
      await call(t, 'POST', '/api/v1/invoice-lines', {
        key: b.test_api_key,
        body: { invoice_ref: 'INV-1', lines: [{ code: 'FEE', name: 'B', amount_minor: 999 }] },
      });
      const linesA = (
        await call(t, 'GET', '/api/v1/invoice-lines', { key: a.test_api_key, query: { invoice_ref: 'INV-1' } })
      ).json();
      assert.deepEqual(
        linesA.lines.map((l: { name: string; amount_minor: number }) => [l.name, l.amount_minor]),
        [['A', 100]],
      );
    });
  });

  describe('key storage', () => {
    it('API keys are stored hashed: neither the raw key nor its secret part appears in the api_keys table', async () => {
      const m = await t.merchant();
      const rows = await t.db.query<{ j: string; prefix: string; key_hash: Uint8Array }>(
        'select row_to_json(k)::text as j, prefix, key_hash from api_keys k where merchant_id = $1 order by environment',
        [m.merchant_id],
      );
      assert.equal(rows.length, 2);
      const keys = [m.live_api_key, m.test_api_key];
      for (const [i, row] of rows.entries()) {
        const key = keys[i]!;
        assert.match(key, /^ak_(test|live)_[A-Za-z0-9]{40}$/);
        for (const other of keys) {
          assert.ok(!row.j.includes(other), 'the raw key is not stored');
          assert.ok(!row.j.includes(other.slice(16)), 'the secret part of the key is not stored');
        }
        assert.equal(row.prefix, key.slice(0, 16), 'only the visible prefix is kept in clear');
        assert.deepEqual(
          Buffer.from(row.key_hash),
          createHash('sha256').update(key).digest(),
          'the key is kept as its SHA-256',
        );
      }
    });

    it('the raw key appears nowhere in the database after it has been used', async () => {
      const m = await t.merchant();
      await newSession(m);
      const secret = m.test_api_key.slice(16);
      const tables = await t.db.query<{ table_name: string }>(
        "select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'",
      );
      assert.ok(tables.length > 3);
      for (const { table_name } of tables) {
        const hits = await t.db.query<{ n: number }>(
          `select count(*)::int as n from "${table_name}" x where row_to_json(x)::text like $1`,
          [`%${secret}%`],
        );
        assert.equal(hits[0]!.n, 0, `the key secret appears in ${table_name}`);
      }
    });
  });
});
