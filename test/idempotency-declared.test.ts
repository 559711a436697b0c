// Idempotency is declared per route (`config: { idempotent: true }`), never called by hand (issue 15, item 6): the
// routes that declare it document the Idempotency-Key header, the others ignore it, and no routes file runs the
// idempotency functions itself. The routes come from the app itself (app.registeredRoutes).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { registerIdempotentRoutes } from '../src/http/idempotency.ts';
import { IdempotencyHeaders } from '../src/http/schemas.ts';
import { startTestApp, storageKind, type TestContext } from './helpers.ts';
import { assertErrorEnvelope, call } from './http.ts';

/** The routes that are idempotent today: losing the option on one of them must fail here. */
const IDEMPOTENT_ROUTES = [
  'POST /api/v1/sessions',
  'POST /api/v1/invoice-lines',
  'POST /api/v1/test/payment-attempts/:reference/simulate',
  'POST /api/v1/refunds',
  'POST /api/v1/test/refunds/:id/simulate',
  'POST /api/v1/test/payouts/:payout_id/simulate',
  'POST /api/v1/events/:id/replay',
  'POST /api/v1/events/replay',
];
/** What a routes file must not call: the idempotency plumbing runs from the hook alone. */
const BY_HAND = ['idempotencyKeyOf', 'requestHash', 'runIdempotent', 'insertOnce', 'sendOutcome'];

const SRC = new URL('../src/', import.meta.url).pathname;
const routesFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? routesFiles(join(dir, entry.name)) : entry.name.endsWith('routes.ts') ? [join(dir, entry.name)] : [],
  );

interface Operation {
  parameters?: { in: string; name: string; description?: string }[];
}

describe(`idempotency declared per route (${storageKind})`, () => {
  let t: TestContext;
  let paths: Record<string, Record<string, Operation>>;
  before(async () => {
    t = await startTestApp();
    paths = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json().paths;
  });
  after(() => t.close());

  const operationOf = (method: string, url: string): Operation | undefined =>
    paths[url.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()];
  const documentsKey = (operation: Operation | undefined) =>
    operation?.parameters?.find((p) => p.in === 'header' && p.name === 'idempotency-key');

  it('the idempotent routes are the ones that declare the option', () => {
    const declared = t.app.registeredRoutes.filter((r) => r.idempotent).map((r) => `${r.method} ${r.url}`);
    assert.deepEqual(declared.sort(), [...IDEMPOTENT_ROUTES].sort());
  });

  it('every route declaring the option validates and documents the Idempotency-Key header; no other operation documents it', () => {
    for (const route of t.app.registeredRoutes.filter((r) => r.idempotent)) {
      const headers = (route.schema as { headers?: { properties?: Record<string, unknown> } }).headers;
      assert.equal(headers?.properties?.['idempotency-key'], IdempotencyHeaders.properties['idempotency-key'], `${route.method} ${route.url} schema`);
      const parameter = documentsKey(operationOf(route.method, route.url));
      assert.ok(parameter, `${route.method} ${route.url} documents Idempotency-Key in /openapi.json`);
      assert.equal(parameter.description, IdempotencyHeaders.properties['idempotency-key'].description);
    }
    const documented = Object.entries(paths).flatMap(([path, operations]) =>
      Object.entries(operations).filter(([, operation]) => documentsKey(operation)).map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    assert.deepEqual(documented.sort(), IDEMPOTENT_ROUTES.map((r) => r.replace(/:(\w+)/g, '{$1}')).sort());
  });

  it('a declared route refuses a malformed key with 400 INVALID_ARGUMENT; routes without the option ignore the header', async () => {
    const m = await t.merchant();
    const malformed = 'k'.repeat(256);
    const declared = await call(t, 'POST', '/api/v1/sessions', { key: m.test_api_key, body: { amount_minor: 100, invoice_ref: 'INV-D' }, idempotencyKey: malformed });
    assertErrorEnvelope(declared, 400, 'INVALID_ARGUMENT');

    // POST /api/v1/revenue-lines is not idempotent: a malformed key is not refused, and the same key runs twice.
    for (const idempotencyKey of [malformed, `same-${randomUUID()}`, `same-${randomUUID()}`]) {
      const first = await call(t, 'POST', '/api/v1/revenue-lines', { key: m.test_api_key, body: { lines: [{ code: 'A', name: 'Alpha' }] }, idempotencyKey });
      assert.equal(first.statusCode, 200, first.body);
      const second = await call(t, 'POST', '/api/v1/revenue-lines', { key: m.test_api_key, body: { lines: [{ code: 'A', name: 'Renamed' }] }, idempotencyKey });
      assert.equal(second.statusCode, 200, second.body);
      assert.equal(second.headers['idempotent-replayed'], undefined);
      assert.equal(second.json().updated, 1, 'the second request ran (a changed body under the same key is not refused)');
      await call(t, 'POST', '/api/v1/revenue-lines', { key: m.test_api_key, body: { lines: [{ code: 'A', name: 'Alpha' }] } });
    }
    const read = await call(t, 'GET', '/api/v1/revenue-lines', { key: m.test_api_key, idempotencyKey: malformed });
    assert.equal(read.statusCode, 200, read.body);
    const stored = await t.db.query<{ n: number }>('select count(*)::int as n from idempotency_keys where merchant_id = $1', [m.merchant_id]);
    assert.equal(stored[0]!.n, 0, 'no key is stored for a route without the option');
  });

  it('the hook adds the header to a declared route\'s own headers schema and leaves undeclared routes alone', async () => {
    const app = Fastify({ logger: false });
    registerIdempotentRoutes(app, t.db);
    const own = { type: 'object', properties: { 'x-trace': { type: 'string' } } };
    const plain = { type: 'object', properties: { 'x-trace': { type: 'string' } } };
    const schemas: Record<string, { headers?: { properties?: Record<string, unknown> } } | undefined> = {};
    app.addHook('onRoute', (route) => {
      schemas[route.url] = route.schema as (typeof schemas)[string];
    });
    app.post('/declared', { config: { idempotent: true }, schema: { headers: own } }, async () => ({ run: async () => ({ status: 200, body: {} }) }));
    app.post('/bare', { config: { idempotent: true } }, async () => ({ run: async () => ({ status: 200, body: {} }) }));
    app.post('/plain', { schema: { headers: plain } }, async () => ({}));
    await app.ready();
    assert.deepEqual(Object.keys(schemas['/declared']!.headers!.properties!).sort(), ['idempotency-key', 'x-trace']);
    assert.equal(schemas['/bare']!.headers, IdempotencyHeaders);
    assert.deepEqual(schemas['/plain']!.headers, { type: 'object', properties: { 'x-trace': { type: 'string' } } });
    await app.close();
  });

  it('no routes file under src calls the idempotency plumbing by hand', () => {
    const files = routesFiles(SRC);
    const named = files.map((file) => relative(SRC, file));
    for (const expected of ['checkout/merchant-routes.ts', 'checkout/simulate-routes.ts', 'invoicing/routes.ts']) assert.ok(named.includes(expected), expected);
    for (const file of files) {
      const source = readFileSync(file, 'utf8');
      for (const name of BY_HAND) assert.doesNotMatch(source, new RegExp(`\\b${name}\\b`), `${relative(SRC, file)} uses ${name}`);
    }
    // Each idempotent route's file declares the option (the registered routes above say which).
    for (const file of ['checkout/merchant-routes.ts', 'checkout/simulate-routes.ts', 'invoicing/routes.ts', 'refunds/routes.ts', 'payouts/routes.ts']) {
      assert.match(readFileSync(join(SRC, file), 'utf8'), /config: \{ idempotent: true \}/, file);
    }
  });
});
