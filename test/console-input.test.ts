// Console input (issue 14 finding 7; DESIGN §3 "Errors and limits"): every merchant-dashboard and operator-console
// route declares schemas for its path, query and form input (src/web/console-schemas.ts), so a repeated or odd
// parameter is a 400 page, never a 500 and never JSON. The routes come from the app itself (app.registeredRoutes),
// so a new console route is checked here, or fails the first test until it declares its schemas.
// Bad input is judged after the session check: an anonymous request is sent to sign in (GET) or refused as signed
// out (POST) whatever it carries. Text that storage cannot hold (U+0000) is refused for everyone before that, by
// the body parser, with a bare page that shows nothing but the problem.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createMerchant } from '../src/accounts/service.ts';
import type { Db } from '../src/db/index.ts';
import type { RegisteredRoute } from '../src/http/app.ts';
import { createOperator } from '../src/ops/service.ts';
import { startTestApp, storageKind, type TestContext } from './helpers.ts';
import { multipartBody } from './http.ts';

interface Signed {
  cookie: string;
  csrf: string;
}

interface StringSchema {
  type?: string | string[];
  maxLength?: number;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, StringSchema>;
  items?: StringSchema;
  anyOf?: StringSchema[];
}

interface RouteSchema {
  querystring?: StringSchema;
  params?: StringSchema;
  body?: StringSchema;
}

const PASSWORD = 'console-input-password-1';
const isConsole = (url: string) => url === '/dashboard' || url === '/ops' || url.startsWith('/dashboard/') || url.startsWith('/ops/');
/** Routes a browser without a session may use: the sign-in forms, and the dashboard's one-time sign-in links (issue 19). */
const isLogin = (url: string) => url.endsWith('/login') || url.startsWith('/dashboard/login/link/');
const schemaOf = (route: RegisteredRoute) => (route.schema ?? {}) as RouteSchema;
/** The named fields of a part of a route's input, with their length limits. */
const fieldsOf = (part: StringSchema | undefined, skip: string[] = []) =>
  Object.entries(part?.properties ?? {})
    .filter(([name]) => !skip.includes(name))
    .map(([name, schema]) => ({ name, maxLength: schema.maxLength ?? 0 }));
/** A path with every parameter named: a random uuid fits both the uuid and the plain id parameters. */
const withIds = (url: string, value: string = randomUUID()) => url.replace(/:(\w+)/g, value);

/**
 * An error page from the console: HTML, never the API's JSON envelope; with a given status it is a refusal that
 * says what is wrong (the alert flash); 'any 4xx' also allows a handler's own answer (a not-found page).
 */
function assertErrorPage(res: LightMyRequestResponse, status: number | 'any 4xx', context: string): void {
  const excerpt = res.body.replace(/<style>[\s\S]*<\/style>/, '').slice(0, 300);
  if (status === 'any 4xx') assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${context}: ${res.statusCode} ${excerpt}`);
  else assert.equal(res.statusCode, status, `${context}: ${excerpt}`);
  assert.match(String(res.headers['content-type']), /^text\/html/, `${context}: ${excerpt}`);
  if (status !== 'any 4xx') assert.match(res.body, /role="alert"/, `${context}: the page says what is wrong`);
}

/** Every row of the merchant (tables with a merchant_id) and the number of audited operator actions: to show a refused request changed nothing. */
async function snapshot(db: Db, merchantId: string, operatorId: string): Promise<string> {
  const tables = await db.query<{ table_name: string }>(
    "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'merchant_id' AND table_schema = current_schema() ORDER BY table_name",
  );
  const out: Record<string, unknown> = {};
  for (const { table_name: table } of tables) {
    const rows = await db.query<{ j: unknown }>(`SELECT row_to_json(x) AS j FROM "${table}" x WHERE merchant_id = $1`, [merchantId]);
    out[table] = rows.map((r) => JSON.stringify(r.j)).sort();
  }
  out.operatorActions = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE actor_id = $1', [operatorId]))[0]!.n;
  return JSON.stringify(out);
}

describe(`console input schemas (${storageKind})`, () => {
  let t: TestContext;
  let merchantId: string;
  let operatorId: string;
  const signed = {} as Record<'dashboard' | 'ops', Signed>;

  async function signIn(base: '/dashboard' | '/ops', email: string): Promise<Signed> {
    const form = await t.app.inject({ method: 'GET', url: `${base}/login` });
    const loginCsrf = form.cookies.find((c) => c.name === 'sika_login_csrf')?.value;
    assert.ok(loginCsrf, 'the login form sets its CSRF cookie');
    const login = await t.app.inject({
      method: 'POST',
      url: `${base}/login`,
      headers: { cookie: `sika_login_csrf=${loginCsrf}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: loginCsrf, email, password: PASSWORD }).toString(),
    });
    assert.equal(login.statusCode, 303, login.body.slice(0, 300));
    const name = base === '/dashboard' ? 'sika_dashboard' : 'sika_ops';
    const cookie = `${name}=${login.cookies.find((c) => c.name === name)?.value}`;
    const home = await t.app.inject({ method: 'GET', url: base, headers: { cookie } });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(home.body)?.[1];
    assert.ok(csrf, `${base} pages carry a CSRF token`);
    return { cookie, csrf };
  }

  before(async () => {
    t = await startTestApp();
    const email = `owner-${randomUUID()}@example.com`;
    merchantId = (await createMerchant(t.db, { name: 'Console Input Ltd', email, password: PASSWORD, webhookUrl: null })).merchant_id;
    const operatorEmail = `operator-${randomUUID()}@example.com`;
    operatorId = (await createOperator(t.db, { email: operatorEmail, password: PASSWORD, role: 'operator' })).operator_id;
    signed.dashboard = await signIn('/dashboard', email);
    signed.ops = await signIn('/ops', operatorEmail);
  });
  after(() => t.close());

  /** Each console route once (HEAD answers as GET does). */
  const consoleRoutes = () => {
    const seen = new Set<string>();
    return t.app.registeredRoutes.filter((r) => {
      const key = `${r.method} ${r.url}`;
      if (r.method === 'HEAD' || !isConsole(r.url) || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  };
  const sessionFor = (url: string) => (url.startsWith('/ops') ? signed.ops : signed.dashboard);
  const get = (url: string, cookie?: string) => t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });
  const postForm = (url: string, payload: string, cookie?: string) =>
    t.app.inject({ method: 'POST', url, headers: { ...(cookie ? { cookie } : {}), 'content-type': 'application/x-www-form-urlencoded' }, payload });

  it('every /dashboard and /ops route declares schemas for the input it has: params with a path parameter, querystring for GET, body for POST; every string bounded', () => {
    const routes = consoleRoutes();
    assert.ok(routes.length >= 45, `only ${routes.length} console routes: is app.registeredRoutes complete?`);
    const missing: string[] = [];
    const unbounded: string[] = [];
    const walk = (schema: StringSchema | undefined, where: string) => {
      if (!schema) return;
      const types = [schema.type ?? []].flat();
      if (types.includes('string') && schema.maxLength === undefined && schema.enum === undefined && schema.const === undefined) unbounded.push(where);
      for (const [name, child] of Object.entries(schema.properties ?? {})) walk(child, `${where}.${name}`);
      walk(schema.items, `${where}[]`);
      for (const branch of schema.anyOf ?? []) walk(branch, where);
    };
    for (const route of routes) {
      const key = `${route.method} ${route.url}`;
      const schema = schemaOf(route);
      const parts = [...(route.url.includes(':') ? (['params'] as const) : []), ...(route.method === 'GET' ? (['querystring'] as const) : (['body'] as const))];
      for (const part of parts) {
        if (!schema[part]) missing.push(`${key} has no ${part} schema`);
        walk(schema[part], `${key} ${part}`);
      }
    }
    assert.deepEqual(missing, [], 'add the schemas to src/web/console-schemas.ts (or beside the route)');
    assert.deepEqual(unbounded, [], 'give every string a maxLength');
  });

  it('the pages of the report answer a repeated query parameter with a 400 page naming it, not a 500', async () => {
    for (const [url, field] of [
      ['/dashboard/payouts/quote?amount=1&amount=2', 'amount'],
      ['/dashboard/sessions?invoice_ref=a&invoice_ref=b', 'invoice_ref'],
      ['/ops/teller?reference=a&reference=b', 'reference'],
    ] as const) {
      const res = await get(url, sessionFor(url).cookie);
      assertErrorPage(res, 400, url);
      assert.match(res.body, new RegExp(`${field} must be string`), url);
      assert.match(res.body, /Sign out/, `${url}: the page is the signed-in console's`);
    }
  });

  it('signed in, every console GET route answers each query parameter repeated, one character too long or holding U+0000 with a 400 page; at its limit and with odd keys it is not refused and never a 5xx', async () => {
    let checked = 0;
    let fieldChecks = 0;
    for (const route of consoleRoutes().filter((r) => r.method === 'GET')) {
      const { cookie } = sessionFor(route.url);
      const path = withIds(route.url);
      for (const { name, maxLength } of fieldsOf(schemaOf(route).querystring)) {
        const p = encodeURIComponent(name);
        for (const [label, query] of [
          ['repeated', `${p}=a&${p}=b`],
          ['repeated thrice', `${p}=1&${p}=1&${p}=1`],
          ['one over its limit', `${p}=${'x'.repeat(maxLength + 1)}`],
          ['U+0000', `${p}=%00`],
        ] as const) {
          assertErrorPage(await get(`${path}?${query}`, cookie), 400, `GET ${route.url} with ${name} ${label}`);
          fieldChecks++;
        }
        const atLimit = await get(`${path}?${p}=${'x'.repeat(maxLength)}`, cookie);
        assert.ok(atLimit.statusCode < 500, `GET ${route.url} with ${name} at its limit: ${atLimit.statusCode}`);
        assert.doesNotMatch(atLimit.body, new RegExp(`${name} must NOT have more than`), `GET ${route.url} with ${name} at its limit was refused`);
      }
      for (const noise of ['__proto__=x', '__proto__[polluted]=1', 'constructor=x&toString=y', 'a[b]=c&a[]=d', 'x=1&x=2', '=&&=x', `${'k'.repeat(200)}=${'v'.repeat(2_000)}`]) {
        const res = await get(`${path}?${noise}`, cookie);
        assert.ok(res.statusCode < 500, `GET ${route.url}?${noise.slice(0, 60)}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        checked++;
      }
    }
    // At least: sessions (5 filters), payouts, quote (2), recipients, webhook log and teller: 11 parameters, 4 checks each.
    assert.ok(fieldChecks >= 44, `only ${fieldChecks} checks of declared query parameters`);
    assert.ok(checked > 100, `only ${checked} requests with odd keys`);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing reached Object.prototype');
  });

  it('signed in, a console path parameter holding U+0000, a malformed escape, 101 characters or a word where an id belongs is a 4xx page on every route', async () => {
    for (const route of consoleRoutes().filter((r) => r.url.includes(':'))) {
      const session = sessionFor(route.url);
      for (const [label, value, status] of [
        ['U+0000', '%00', 400],
        ['a malformed escape', '%zz', 400],
        ['101 characters', 'x'.repeat(101), 414],
        ['__proto__', '__proto__', 'any 4xx'],
        ['a word', 'nothing', 'any 4xx'],
      ] as const) {
        const url = withIds(route.url, value);
        const res = route.method === 'GET' ? await get(url, session.cookie) : await postForm(url, `_csrf=${session.csrf}`, session.cookie);
        assertErrorPage(res, status, `${route.method} ${route.url} with ${label}`);
      }
    }
  });

  it('signed in with a valid CSRF token, every console POST route answers odd forms with a 4xx page and changes nothing', async () => {
    const before = await snapshot(t.db, merchantId, operatorId);
    let checked = 0;
    let fieldChecks = 0;
    for (const route of consoleRoutes().filter((r) => r.method === 'POST' && !isLogin(r.url))) {
      const { cookie, csrf } = sessionFor(route.url);
      const url = withIds(route.url);
      const send = (payload: string | Buffer, contentType: string) => t.app.inject({ method: 'POST', url, headers: { cookie, 'content-type': contentType }, payload });
      const form = (payload: string) => send(payload, 'application/x-www-form-urlencoded');
      for (const { name, maxLength } of fieldsOf(schemaOf(route).body, ['_csrf'])) {
        const f = encodeURIComponent(name);
        for (const [label, res] of [
          ['repeated', await form(`_csrf=${csrf}&${f}=a&${f}=b`)],
          ['one over its limit', await form(`_csrf=${csrf}&${f}=${'x'.repeat(maxLength + 1)}`)],
          ['U+0000', await form(`_csrf=${csrf}&${f}=%00`)],
          ['nested', await form(`_csrf=${csrf}&${f}[a]=b`)],
          ['a number in JSON', await send(JSON.stringify({ _csrf: csrf, [name]: 5 }), 'application/json')],
          ['an object in JSON', await send(JSON.stringify({ _csrf: csrf, [name]: { toString: 'x' } }), 'application/json')],
          ['repeated in multipart', await (async () => {
            const body = multipartBody([['_csrf', csrf], [name, 'a'], [name, 'b']]);
            return send(body.payload, body.contentType);
          })()],
        ] as const) {
          assertErrorPage(res, 400, `POST ${route.url} with ${name} ${label}`);
          fieldChecks++;
        }
      }
      for (const [label, res, status] of [
        ['__proto__ field', await form(`_csrf=${csrf}&__proto__[admin]=1`), 400],
        ['a malformed escape', await form(`_csrf=${csrf}&x=%zz`), 400],
        ['the CSRF token repeated', await form(`_csrf=${csrf}&_csrf=${csrf}`), 403],
        ['an over-long CSRF token', await form(`_csrf=${csrf}${'x'.repeat(200)}`), 403],
        ['an empty form', await form(''), 403],
        ['a JSON array', await send(JSON.stringify([csrf]), 'application/json'), 403],
        ['plain text', await send(`_csrf=${csrf}`, 'text/plain'), 415],
      ] as const) {
        assertErrorPage(res, status, `POST ${route.url} with ${label}`);
        checked++;
      }
    }
    // At least the 42 fields of the dashboard and operator forms (sign-in aside), 7 checks each.
    assert.ok(fieldChecks >= 294, `only ${fieldChecks} checks of declared form fields`);
    assert.ok(checked > 150, `only ${checked} requests with odd forms`);
    assert.equal(await snapshot(t.db, merchantId, operatorId), before, 'a refused form changed data');
    for (const base of ['/dashboard', '/ops'] as const) {
      const res = await get(base, (base === '/ops' ? signed.ops : signed.dashboard).cookie);
      assert.equal(res.statusCode, 200, `${base}: still signed in (sign-out refused its odd forms too)`);
    }
  });

  it('an anonymous request with bad input is sent to sign in (GET) or refused as signed out (POST), learning nothing from validation', async () => {
    for (const route of consoleRoutes().filter((r) => !isLogin(r.url))) {
      const base = route.url.startsWith('/ops') ? '/ops' : '/dashboard';
      const path = withIds(route.url, 'not-an-id');
      const fields = fieldsOf(route.method === 'GET' ? schemaOf(route).querystring : schemaOf(route).body, ['_csrf']);
      const junk = [...fields.map(({ name }) => `${encodeURIComponent(name)}=a&${encodeURIComponent(name)}=b`), `x=${'y'.repeat(3_000)}`].join('&');
      for (const cookie of [undefined, 'sika_dashboard=forged; sika_ops=forged']) {
        const context = `${route.method} ${route.url} ${cookie ? 'with a forged cookie' : 'anonymous'}`;
        if (route.method === 'GET') {
          const res = await get(`${path}?${junk}`, cookie);
          assert.equal(res.statusCode, 303, `${context}: ${res.body.slice(0, 200)}`);
          assert.equal(res.headers.location, `${base}/login`, context);
        } else {
          const res = await postForm(path, junk, cookie);
          assert.equal(res.statusCode, 401, `${context}: ${res.body.slice(0, 200)}`);
          assert.doesNotMatch(res.body, /must be string|must NOT have/, context);
        }
      }
    }
  });

  it('U+0000 is refused before the session check, for everyone alike, with a page that shows no console data', async () => {
    for (const [url, session] of [
      ['/dashboard/sessions?invoice_ref=%00', undefined],
      ['/dashboard/sessions?invoice_ref=%00', signed.dashboard],
      ['/ops/teller?reference=%00', undefined],
    ] as const) {
      const res = await get(url, session?.cookie);
      assertErrorPage(res, 400, url);
      assert.match(res.body, /NUL character/, url);
      assert.doesNotMatch(res.body, /Sign out|Console Input Ltd|<nav/, `${url}: no console data on the page`);
    }
  });

  it('the login forms answer a repeated or over-long field with a 400 page and ignore unknown query parameters', async () => {
    for (const base of ['/dashboard', '/ops'] as const) {
      const page = await get(`${base}/login?next=a&next=b&__proto__=x`);
      assert.equal(page.statusCode, 200, page.body.slice(0, 200));
      const loginCsrf = page.cookies.find((c) => c.name === 'sika_login_csrf')!.value;
      const cookie = `sika_login_csrf=${loginCsrf}`;
      assertErrorPage(await postForm(`${base}/login`, `_csrf=${loginCsrf}&email=a@example.com&email=b@example.com&password=x`, cookie), 400, `${base}/login with email repeated`);
      assertErrorPage(await postForm(`${base}/login`, `_csrf=${loginCsrf}&email=${'e'.repeat(255)}&password=x`, cookie), 400, `${base}/login with a 255-character email`);
      assertErrorPage(await postForm(`${base}/login`, `_csrf=${loginCsrf}&email=a@example.com&password=${'p'.repeat(1_001)}`, cookie), 400, `${base}/login with a 1,001-character password`);
      // A wrong password is still the sign-in form's own answer.
      const wrong = await postForm(`${base}/login`, `_csrf=${loginCsrf}&email=nobody@example.com&password=${'p'.repeat(1_000)}`, cookie);
      assert.equal(wrong.statusCode, 401, wrong.body.slice(0, 200));
    }
  });

  it('router errors on console paths (malformed escape, over-long segment) are HTML pages, while the API keeps its JSON envelope', async () => {
    assertErrorPage(await get('/dashboard/sessions/%zz'), 400, 'malformed escape');
    assertErrorPage(await get(`/ops/merchants/${'x'.repeat(101)}`), 414, 'over-long segment');
    assertErrorPage(await get('/dashboard/sessions/%zz', signed.dashboard.cookie), 400, 'malformed escape, signed in');
    const api = await get('/api/v1/sessions/%zz');
    assert.equal(api.statusCode, 400);
    assert.match(String(api.headers['content-type']), /^application\/json/);
    assert.equal(api.json().error.code, 'INVALID_ARGUMENT');
  });
});
