// Operational surface (DESIGN §1 and §3): liveness and readiness, Prometheus metrics by route pattern,
// the OpenAPI 3.1 document generated from the validating schemas, the docs page, request ids, and the
// error envelope for unknown routes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { bearer, startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const METRICS_TOKEN = 'metrics-token-for-ops-tests';
import { assertErrorEnvelope } from '../support/http.ts';

interface OpenApiOperation {
  summary?: string;
  parameters?: { in: string; name: string; required?: boolean; schema: Record<string, unknown> }[];
  requestBody?: {
    content: Record<
      string,
      { schema: { type?: string; required?: string[]; properties?: Record<string, Record<string, unknown>> } }
    >;
  };
  responses?: Record<string, unknown>;
}
type OpenApi = { openapi: string; paths: Record<string, Record<string, OpenApiOperation>> };

/** Every route the app serves, as "METHOD /path/{param}", read from Fastify's own route tree (HEAD left out). */
function servedRoutes(t: TestContext): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of t.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)[├└]── (.*?) \(([A-Z, ]+)\)$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    const path = stack.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of match[3]!.split(', ')) if (method !== 'HEAD') out.push(`${method} ${path}`);
  }
  return out;
}

/** Sample value of a Prometheus series, or 0 when the series is absent. */
function sample(metrics: string, series: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

async function followRedirects(t: TestContext, url: string, hops = 5): Promise<LightMyRequestResponse> {
  let res = await t.app.inject({ method: 'GET', url });
  for (let i = 0; i < hops && res.statusCode >= 300 && res.statusCode < 400; i++) {
    const location = String(res.headers.location);
    res = await t.app.inject({ method: 'GET', url: new URL(location, `http://sika.test${url}`).pathname });
  }
  return res;
}

describe(`operations endpoints (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ METRICS_TOKEN });
  });
  after(() => t.close());

  it('GET /healthz answers 200 while the process is alive', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { status: 'ok' });
  });

  it('GET /readyz answers 200 with the storage kind once storage is reachable and migrated', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { status: 'ready', storage: storageKind });
  });

  it('GET /metrics counts requests and their latency by route pattern, never by raw URL', async () => {
    const m = await t.merchant();
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      headers: bearer(m.test_api_key),
      payload: { amount_minor: 1000, invoice_ref: 'INV-MET' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    const series = 'sika_http_requests_total{method="GET",route="/api/v1/sessions/:reference",status_code="200"}';
    const before = sample(
      (await t.app.inject({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) })).body,
      series,
    );
    for (let i = 0; i < 2; i++) {
      const read = await t.app.inject({
        method: 'GET',
        url: `/api/v1/sessions/${id}`,
        headers: bearer(m.test_api_key),
      });
      assert.equal(read.statusCode, 200);
    }
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    assert.match(res.body, /^# TYPE sika_http_requests_total counter$/m);
    assert.match(res.body, /^# TYPE sika_http_request_duration_seconds histogram$/m);
    assert.equal(sample(res.body, series) - before, 2, 'both reads are counted under the route pattern');
    assert.ok(
      sample(res.body, 'sika_http_request_duration_seconds_count{method="GET",route="/api/v1/sessions/:reference"}') >=
        2,
    );
    assert.match(
      res.body,
      /^sika_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/api\/v1\/sessions\/:reference"\} \d+$/m,
    );
    assert.ok(!res.body.includes(id), 'a session id must never become a label value');
  });

  it('GET /openapi.json is an OpenAPI 3.1.0 document listing every /api/v1 route the app serves', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json() as OpenApi;
    assert.equal(doc.openapi, '3.1.0');
    const served = servedRoutes(t).filter((r) => r.split(' ')[1]!.startsWith('/api/v1/'));
    // The route tree parsed: the SPEC 4.1 routes are among those served.
    for (const route of [
      'POST /api/v1/sessions',
      'GET /api/v1/sessions/{reference}',
      'POST /api/v1/invoice-lines',
      'GET /api/v1/invoice-lines',
      'POST /api/v1/revenue-lines',
      'GET /api/v1/revenue-lines',
    ]) {
      assert.ok(served.includes(route), `${route} is served`);
    }
    assert.ok(served.length >= 20, `only ${served.length} /api/v1 routes found in the route tree`);
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    for (const route of served) assert.ok(documented.includes(route), `${route} is missing from /openapi.json`);
    for (const route of documented.filter((r) => r.split(' ')[1]!.startsWith('/api/v1/')))
      assert.ok(served.includes(route), `${route} is documented but not served`);
  });

  it('the OpenAPI document carries the same body and query schemas that validate requests', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApi;
    const bodyOf = (path: string) => {
      const body = doc.paths[path]?.post?.requestBody?.content['application/json']?.schema;
      assert.ok(body, `POST ${path} has no application/json requestBody`);
      return body;
    };
    const session = bodyOf('/api/v1/sessions');
    assert.deepEqual([...(session.required ?? [])].sort(), ['amount_minor', 'invoice_ref']);
    assert.equal(session.properties!.amount_minor!.type, 'integer');
    assert.equal(session.properties!.amount_minor!.minimum, 1);
    assert.equal(session.properties!.invoice_ref!.maxLength, 120);
    assert.equal(session.properties!.description!.maxLength, 240);
    assert.equal(session.properties!.callback_url!.maxLength, 500);
    assert.equal(session.properties!.expires_in_seconds!.minimum, 60);
    assert.equal(session.properties!.expires_in_seconds!.maximum, 86400);

    const ingest = bodyOf('/api/v1/invoice-lines');
    assert.equal(ingest.properties!.lines!.type, 'array');
    assert.deepEqual([...(ingest.required ?? [])].sort(), ['invoice_ref', 'lines']);
    const sync = bodyOf('/api/v1/revenue-lines');
    assert.equal(sync.properties!.lines!.type, 'array');
    assert.equal(sync.properties!.deactivate_missing!.type, 'boolean');
    assert.ok(bodyOf('/api/v1/test/payment-attempts/{reference}/simulate').properties!.outcome);
    assert.ok(bodyOf('/api/v1/checkout/cash-slips').properties!.session_id);
    assert.ok(bodyOf('/api/v1/payouts').properties!.client_reference);

    // Every documented POST on the API that validates a JSON body publishes it with its fields.
    for (const [path, ops] of Object.entries(doc.paths)) {
      const schema = ops.post?.requestBody?.content['application/json']?.schema;
      if (schema)
        assert.ok(
          schema.properties && Object.keys(schema.properties).length > 0,
          `POST ${path} documents a body without fields`,
        );
    }

    const listLines = doc.paths['/api/v1/invoice-lines']!.get!.parameters ?? [];
    const invoiceRef = listLines.find((p) => p.name === 'invoice_ref');
    assert.ok(
      invoiceRef && invoiceRef.in === 'query' && invoiceRef.required,
      'GET /api/v1/invoice-lines documents its required invoice_ref query',
    );
    const reference = (doc.paths['/api/v1/sessions/{reference}']!.get!.parameters ?? []).find(
      (p) => p.name === 'reference',
    );
    assert.ok(reference && reference.in === 'path' && reference.required);
    assert.ok(doc.paths['/api/v1/sessions']!.post!.responses!['201'], 'the 201 response is documented');
    assert.ok(doc.paths['/api/v1/sessions']!.post!.responses!['429'], 'the 429 response is documented');
  });

  it('GET /docs serves the HTML API reference (after any redirect)', async () => {
    const res = await followRedirects(t, '/docs');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /<html/i);
    assert.match(res.body, /swagger-ui/);
  });

  it('every response carries an x-request-id, and a valid incoming one is echoed', async () => {
    const m = await t.merchant();
    const responses = [
      await t.app.inject({ method: 'GET', url: '/healthz' }),
      await t.app.inject({ method: 'GET', url: '/no/such/route' }),
      await t.app.inject({ method: 'GET', url: '/api/v1/revenue-lines' }), // 401
      await t.app.inject({ method: 'GET', url: '/api/v1/revenue-lines', headers: bearer(m.test_api_key) }),
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/sessions',
        headers: bearer(m.test_api_key),
        payload: { amount_minor: 0 },
      }), // 400
    ];
    const ids = responses.map((res) => String(res.headers['x-request-id'] ?? ''));
    for (const [i, id] of ids.entries())
      assert.match(id, /^[0-9a-f-]{36}$/, `response ${i} (${responses[i]!.statusCode}) has no generated x-request-id`);
    assert.equal(new Set(ids).size, ids.length, 'request ids are unique');

    const echoed = await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'req-abc.123:xyz' },
    });
    assert.equal(echoed.headers['x-request-id'], 'req-abc.123:xyz');
    const echoedOnError = await t.app.inject({
      method: 'GET',
      url: '/nowhere',
      headers: { 'x-request-id': 'trace-42' },
    });
    assert.equal(echoedOnError.headers['x-request-id'], 'trace-42');

    // An id that could inject into logs (spaces, too long) is replaced, not echoed.
    for (const bad of ['has spaces in it', 'x'.repeat(65), 'semi;colon']) {
      const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': bad } });
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, `"${bad}" must not be echoed`);
    }
  });

  it('an unknown route is a 404 in the error envelope (a known path with another method is a 405: test/http/methods.test.ts)', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/nothing-here'],
      ['POST', '/api/v2/sessions'],
      ['DELETE', '/api/v1/sessions-of-nobody'],
      ['GET', '/healthz/extra?x=1'],
    ] as const) {
      const res = await t.app.inject({ method, url });
      const error = assertErrorEnvelope(res, 404, 'NOT_FOUND');
      assert.ok(error.message.includes(url.split('?')[0]!), `the message names the route: ${error.message}`);
    }
  });
});
