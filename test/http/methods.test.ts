// Issue 29: a method a known path does not take is 405 METHOD_NOT_ALLOWED with an Allow header listing what
// it takes (HEAD beside GET), in the SPEC 7 envelope (console paths: their HTML error page); an unknown path
// stays 404. Over a listening server with node:http, which sends any method (fetch refuses TRACE).
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { methodsOfPath, routesByPath } from '../../src/http/methods.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { checkEnvelope } from '../support/http.ts';

interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ statusCode: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe(`unknown methods on known paths (${storageKind})`, () => {
  let t: TestContext;
  let baseUrl: string;
  let key: string;
  before(async () => {
    t = await startTestApp();
    baseUrl = await t.listen();
    key = (await t.merchant()).test_api_key;
  });
  after(() => t.close());

  const assertNotAllowed = (res: Answer, allow: string, context: string) => {
    assert.equal(res.statusCode, 405, `${context}: ${res.body}`);
    assert.equal(res.headers.allow, allow, context);
    const error = checkEnvelope(res as never, context);
    assert.equal(error.code, 'METHOD_NOT_ALLOWED');
    assert.ok(error.message.includes(allow), error.message);
  };

  it('answers 405 with Allow and the envelope: TRACE /api/v1/sessions, PATCH /api/v1/sessions/{id}, PUT /api/v1/payouts', async () => {
    const session = await send(
      baseUrl,
      'POST',
      '/api/v1/sessions',
      { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      JSON.stringify({ amount_minor: 500, invoice_ref: 'INV-405' }),
    );
    assert.equal(session.statusCode, 201, session.body);
    const id = (JSON.parse(session.body) as { id: string }).id;
    const cases: [string, string, string][] = [
      ['TRACE', '/api/v1/sessions', 'GET, HEAD, POST'],
      ['PATCH', `/api/v1/sessions/${id}`, 'GET, HEAD'],
      ['PUT', '/api/v1/payouts', 'GET, HEAD, POST'],
      ['DELETE', '/api/v1/checkout/cash-slips', 'POST'],
      // GET fits /api/v1/payouts/{payout_id} (a payout id `quote` is simply not found): the router would take it.
      ['DELETE', '/api/v1/payouts/quote', 'GET, HEAD, POST'],
      ['PUT', '/api/v1/payouts/recipients/rcp_x', 'DELETE, GET, HEAD'],
      ['OPTIONS', '/api/v1/checkout/options', 'GET, HEAD'],
      ['GET', '/api/v1/providers/paystack/webhook', 'POST'],
      ['DELETE', '/api/v1/providers/mtn-momo/callback', 'POST, PUT'],
      ['PATCH', '/api/v1/sessions?limit=1', 'GET, HEAD, POST'],
      // The router reads a trailing slash as an empty id: /api/v1/sessions/{reference}.
      ['PATCH', '/api/v1/sessions/', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      // With a key and without one: the method is refused before authentication, the same for everyone.
      assertNotAllowed(
        await send(baseUrl, method, path, { authorization: `Bearer ${key}` }),
        allow,
        `${method} ${path}`,
      );
      assertNotAllowed(await send(baseUrl, method, path), allow, `${method} ${path} without a key`);
    }
    // The session was not changed by any of them.
    const again = await send(baseUrl, 'GET', `/api/v1/sessions/${id}`, { authorization: `Bearer ${key}` });
    assert.equal((JSON.parse(again.body) as { status: string }).status, 'open');
  });

  it('a HEAD request gets the status and Allow without a body; the methods a path takes still answer', async () => {
    const head = await send(baseUrl, 'HEAD', '/api/v1/checkout/cash-slips');
    assert.equal(head.statusCode, 405);
    assert.equal(head.headers.allow, 'POST');
    assert.equal(head.body, '');
    assert.equal((await send(baseUrl, 'GET', '/api/v1/sessions', { authorization: `Bearer ${key}` })).statusCode, 200);
    assert.equal((await send(baseUrl, 'HEAD', '/api/v1/sessions', { authorization: `Bearer ${key}` })).statusCode, 200);
  });

  it('unknown paths stay 404 NOT_FOUND without Allow, whatever the method', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/no-such-thing'],
      ['TRACE', '/api/v1/no-such-thing'],
      ['PATCH', '/api/v1/sessions/cs_1/nothing'],
      ['GET', '/api/v2/sessions'],
    ] as const) {
      const res = await send(baseUrl, method, path);
      assert.equal(res.statusCode, 404, `${method} ${path}: ${res.body}`);
      assert.equal(res.headers.allow, undefined);
      assert.equal(checkEnvelope(res as never, `${method} ${path}`).code, 'NOT_FOUND');
    }
  });

  it('console and page paths answer 405 with Allow too: HTML for the consoles, the envelope elsewhere', async () => {
    for (const [method, path, allow] of [
      ['DELETE', '/dashboard', 'GET, HEAD'],
      ['PUT', '/ops/login', 'GET, HEAD, POST'],
    ] as const) {
      const res = await send(baseUrl, method, path, { accept: 'text/html' });
      assert.equal(res.statusCode, 405, `${method} ${path}`);
      assert.equal(res.headers.allow, allow);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /is not allowed on this path/);
    }
    const pay = await send(baseUrl, 'PUT', '/pay/cs_missing');
    assert.equal(pay.statusCode, 405);
    assert.equal(pay.headers.allow, 'GET, HEAD, POST');
    const docs = await send(baseUrl, 'POST', '/openapi.json');
    assert.equal(docs.statusCode, 405);
    assert.equal(docs.headers.allow, 'GET, HEAD');
  });

  it('the Allow list is the routes whose pattern fits the path: static and parameter routes together', () => {
    const routes = routesByPath([
      { method: 'GET', url: '/a/b' },
      { method: 'POST', url: '/a/b' },
      { method: 'GET', url: '/a/:id' },
      { method: 'DELETE', url: '/a/:id' },
      { method: 'PUT', url: '/a/:id/c' },
      { method: 'GET', url: '/files/*' },
    ]);
    assert.deepEqual(methodsOfPath(routes, '/a/b'), ['DELETE', 'GET', 'POST']);
    assert.deepEqual(methodsOfPath(routes, '/a/x'), ['DELETE', 'GET']);
    assert.deepEqual(methodsOfPath(routes, '/a/x/c'), ['PUT']);
    assert.deepEqual(methodsOfPath(routes, '/a/x.y/c'), ['PUT']);
    assert.deepEqual(methodsOfPath(routes, '/files/one/two'), ['GET']);
    assert.deepEqual(methodsOfPath(routes, '/a'), []);
    assert.deepEqual(methodsOfPath(routes, '/a/x/c/d'), []);
  });
});
