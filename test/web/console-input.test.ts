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
import { createMerchant } from '../../src/accounts/service.ts';
import type { Db } from '../../src/db/index.ts';
import type { RegisteredRoute } from '../../src/app.ts';
import { feeSchedule } from '../../src/checkout/fee-settings.ts';
import { createOperator, merchantPayoutControls } from '../../src/ops/service.ts';
import { BEARERS, railDescriptor, railIds } from '../../src/rails/registry.ts';
import { fieldWords } from '../../src/web/console-messages.ts';
import { ConsoleClient, HttpConsole, validForm, type FormSchema } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { multipartBody } from '../support/http.ts';

interface Signed {
  cookie: string;
  csrf: string;
}

interface StringSchema {
  type?: string | string[];
  maxLength?: number;
  enum?: unknown[];
  pattern?: string;
  format?: string;
  description?: string;
  required?: string[];
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
/** A field's label on a refusal: its schema's title, else its name in words (src/web/console-messages.ts). */
const labelOf = (name: string, schema: object | undefined) =>
  (schema as { title?: string } | undefined)?.title ?? fieldWords(name);
const isConsole = (url: string) =>
  url === '/dashboard' || url === '/ops' || url.startsWith('/dashboard/') || url.startsWith('/ops/');
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
  if (status === 'any 4xx')
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${context}: ${res.statusCode} ${excerpt}`);
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
    const rows = await db.query<{ j: unknown }>(`SELECT row_to_json(x) AS j FROM "${table}" x WHERE merchant_id = $1`, [
      merchantId,
    ]);
    out[table] = rows.map((r) => JSON.stringify(r.j)).sort();
  }
  out.operatorActions = (
    await db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE actor_id = $1', [operatorId])
  )[0]!.n;
  return JSON.stringify(out);
}

describe(`console input schemas (${storageKind})`, () => {
  let t: TestContext;
  let merchantId: string;
  let operatorId: string;
  const signed = {} as Record<'dashboard' | 'ops', Signed>;
  /** The same owner and operator in a browser over real HTTP. */
  const browsers = {} as Record<'dashboard' | 'ops', HttpConsole>;

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
    merchantId = (
      await createMerchant(t.db, { name: 'Console Input Ltd', email, password: PASSWORD, webhookUrl: null })
    ).merchant_id;
    const operatorEmail = `operator-${randomUUID()}@example.com`;
    operatorId = (await createOperator(t.db, { email: operatorEmail, password: PASSWORD, role: 'operator' }))
      .operator_id;
    signed.dashboard = await signIn('/dashboard', email);
    // An operator signs in with a second factor (issue 30): ConsoleClient enrols it and answers the code step.
    const operator = await new ConsoleClient(t, '/ops').signedIn(operatorEmail, PASSWORD);
    await operator.get('/ops');
    signed.ops = { cookie: `sika_ops=${operator.session}`, csrf: operator.csrf! };
    const baseUrl = await t.listen();
    browsers.dashboard = await new HttpConsole(baseUrl, '/dashboard').signedIn(email, PASSWORD);
    browsers.ops = await new HttpConsole(baseUrl, '/ops').signedIn(operatorEmail, PASSWORD);
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
    t.app.inject({
      method: 'POST',
      url,
      headers: { ...(cookie ? { cookie } : {}), 'content-type': 'application/x-www-form-urlencoded' },
      payload,
    });

  it('every /dashboard and /ops route declares schemas for the input it has: params with a path parameter, querystring for GET, body for POST; every string bounded', () => {
    const routes = consoleRoutes();
    assert.ok(routes.length >= 45, `only ${routes.length} console routes: is app.registeredRoutes complete?`);
    const missing: string[] = [];
    const unbounded: string[] = [];
    const walk = (schema: StringSchema | undefined, where: string) => {
      if (!schema) return;
      const types = [schema.type ?? []].flat();
      if (
        types.includes('string') &&
        schema.maxLength === undefined &&
        schema.enum === undefined &&
        schema.const === undefined
      )
        unbounded.push(where);
      for (const [name, child] of Object.entries(schema.properties ?? {})) walk(child, `${where}.${name}`);
      walk(schema.items, `${where}[]`);
      for (const branch of schema.anyOf ?? []) walk(branch, where);
    };
    for (const route of routes) {
      const key = `${route.method} ${route.url}`;
      const schema = schemaOf(route);
      const parts = [
        ...(route.url.includes(':') ? (['params'] as const) : []),
        ...(route.method === 'GET' ? (['querystring'] as const) : (['body'] as const)),
      ];
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
      assert.match(res.body, new RegExp(`${fieldWords(field)} must be sent once, as plain text\\.`), url);
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
        assert.doesNotMatch(
          atLimit.body,
          /can be at most \d+ characters/,
          `GET ${route.url} with ${name} at its limit was refused`,
        );
      }
      for (const noise of [
        '__proto__=x',
        '__proto__[polluted]=1',
        'constructor=x&toString=y',
        'a[b]=c&a[]=d',
        'x=1&x=2',
        '=&&=x',
        `${'k'.repeat(200)}=${'v'.repeat(2_000)}`,
      ]) {
        const res = await get(`${path}?${noise}`, cookie);
        assert.ok(
          res.statusCode < 500,
          `GET ${route.url}?${noise.slice(0, 60)}: ${res.statusCode} ${res.body.slice(0, 200)}`,
        );
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
        const res =
          route.method === 'GET'
            ? await get(url, session.cookie)
            : await postForm(url, `_csrf=${session.csrf}`, session.cookie);
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
      const send = (payload: string | Buffer, contentType: string) =>
        t.app.inject({ method: 'POST', url, headers: { cookie, 'content-type': contentType }, payload });
      const form = (payload: string) => send(payload, 'application/x-www-form-urlencoded');
      for (const { name, maxLength } of fieldsOf(schemaOf(route).body, ['_csrf'])) {
        const f = encodeURIComponent(name);
        for (const [label, res] of [
          ['repeated', await form(`_csrf=${csrf}&${f}=a&${f}=b`)],
          ['one over its limit', await form(`_csrf=${csrf}&${f}=${'x'.repeat(maxLength + 1)}`)],
          ['U+0000', await form(`_csrf=${csrf}&${f}=%00`)],
          ['nested', await form(`_csrf=${csrf}&${f}[a]=b`)],
          ['a number in JSON', await send(JSON.stringify({ _csrf: csrf, [name]: 5 }), 'application/json')],
          [
            'an object in JSON',
            await send(JSON.stringify({ _csrf: csrf, [name]: { toString: 'x' } }), 'application/json'),
          ],
          [
            'repeated in multipart',
            await (async () => {
              const body = multipartBody([
                ['_csrf', csrf],
                [name, 'a'],
                [name, 'b'],
              ]);
              return send(body.payload, body.contentType);
            })(),
          ],
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
      const junk = [
        ...fields.map(({ name }) => `${encodeURIComponent(name)}=a&${encodeURIComponent(name)}=b`),
        `x=${'y'.repeat(3_000)}`,
      ].join('&');
      for (const cookie of [undefined, 'sika_dashboard=forged; sika_ops=forged']) {
        const context = `${route.method} ${route.url} ${cookie ? 'with a forged cookie' : 'anonymous'}`;
        if (route.method === 'GET') {
          const res = await get(`${path}?${junk}`, cookie);
          assert.equal(res.statusCode, 303, `${context}: ${res.body.slice(0, 200)}`);
          assert.equal(res.headers.location, `${base}/login`, context);
        } else {
          const res = await postForm(path, junk, cookie);
          assert.equal(res.statusCode, 401, `${context}: ${res.body.slice(0, 200)}`);
          assert.doesNotMatch(res.body, /must be string|must NOT have|must be sent once|can be at most/, context);
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
      assertErrorPage(
        await postForm(
          `${base}/login`,
          `_csrf=${loginCsrf}&email=a@example.com&email=b@example.com&password=x`,
          cookie,
        ),
        400,
        `${base}/login with email repeated`,
      );
      assertErrorPage(
        await postForm(`${base}/login`, `_csrf=${loginCsrf}&email=${'e'.repeat(255)}&password=x`, cookie),
        400,
        `${base}/login with a 255-character email`,
      );
      assertErrorPage(
        await postForm(`${base}/login`, `_csrf=${loginCsrf}&email=a@example.com&password=${'p'.repeat(1_001)}`, cookie),
        400,
        `${base}/login with a 1,001-character password`,
      );
      // A wrong password is still the sign-in form's own answer.
      const wrong = await postForm(
        `${base}/login`,
        `_csrf=${loginCsrf}&email=nobody@example.com&password=${'p'.repeat(1_000)}`,
        cookie,
      );
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
  /** The part of a route's input its form fills: the query of a GET, the body of a POST. */
  const formOf = (route: RegisteredRoute) =>
    (route.method === 'GET' ? schemaOf(route).querystring : schemaOf(route).body) as
      | (StringSchema & FormSchema)
      | undefined;
  const BOGUS = '<b>bogus</b>';
  const pageText = (body: string) =>
    body
      .replace(/<style>[\s\S]*<\/style>/, '')
      .replace(/\s+/g, ' ')
      .slice(0, 400);
  /** The flash of an error page, as a person reads it (entities decoded). */
  const flashText = (body: string) =>
    (/class="flash[^"]*" role="alert">([^<]*)</.exec(body)?.[1] ?? '')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&');

  it('over HTTP, every console field with a closed set, a pattern or a format refuses a value outside it, and every required field its absence, with a 400 page naming the field and what it accepts; the value is never echoed, nothing changes', async () => {
    const before = await snapshot(t.db, merchantId, operatorId);
    let closed = 0;
    let required = 0;
    for (const route of consoleRoutes().filter((r) => !isLogin(r.url))) {
      const schema = formOf(route);
      const browser = route.url.startsWith('/ops') ? browsers.ops : browsers.dashboard;
      const path = withIds(
        route.url.replace(':table', 'banks').replace(':action', route.url.startsWith('/ops') ? 'activate' : 'disable'),
      );
      const send = (fields: Record<string, string>) =>
        route.method === 'GET' ? browser.get(`${path}?${new URLSearchParams(fields)}`) : browser.post(path, fields);
      for (const [name, field] of Object.entries(schema?.properties ?? {})) {
        if (!field.enum && !field.pattern && !field.format) continue;
        const res = await send(validForm(schema, { [name]: BOGUS }));
        const context = `${route.method} ${route.url} with ${name}=${BOGUS}`;
        assert.equal(res.status, 400, `${context}: ${pageText(res.body)}`);
        assert.match(res.type, /^text\/html/, context);
        const flash = flashText(res.body);
        const label = labelOf(name, field);
        assert.ok(
          flash.toLowerCase().includes(label.toLowerCase()),
          `${context}: the page names the field by its label (${label}): ${flash}`,
        );
        if (field.enum)
          for (const value of field.enum.filter((v) => v !== ''))
            assert.ok(flash.includes(String(value)), `${context}: the page says ${value} is accepted: ${flash}`);
        else if (field.format) assert.match(flash, /is not valid\.$/, `${context}: ${flash}`);
        else assert.ok(flash.includes(field.description!), `${context}: the page says what is accepted: ${flash}`);
        assert.ok(!res.body.includes(BOGUS) && !res.body.includes('bogus'), `${context}: the value is not echoed`);
        closed++;
      }
      for (const name of (schema?.required ?? []).filter((n) => n !== '_csrf')) {
        const fields = validForm(schema);
        delete fields[name];
        const res = await send(fields);
        const context = `${route.method} ${route.url} without ${name}`;
        assert.equal(res.status, 400, `${context}: ${pageText(res.body)}`);
        const label = labelOf(name, schema?.properties?.[name]);
        assert.ok(flashText(res.body).startsWith(`${label} is required.`), `${context}: ${flashText(res.body)}`);
        const empty = await send({ ...fields, [name]: '' });
        assert.equal(empty.status, 400, `${context} (empty): ${pageText(empty.body)}`);
        assert.match(
          flashText(empty.body),
          new RegExp(`^(The )?${label} (is required|must be|is not valid)`, 'i'),
          `${context} (empty)`,
        );
        required++;
      }
    }
    // Bearers per rail, environments, on/off switches, decisions, statuses, roles, networks, amounts, ids, days, pages.
    assert.ok(closed >= 30, `only ${closed} closed or patterned fields`);
    assert.ok(required >= 25, `only ${required} required fields`);
    assert.equal(await snapshot(t.db, merchantId, operatorId), before, 'a refused form changed data');
  });

  it('over HTTP, the fee settings refuse a bearer that is not payer or merchant (400 naming the field, escaped, nothing saved); a real change is saved', async () => {
    const [rail] = railIds();
    const before = await feeSchedule(t.db, merchantId, 'test');
    const others = Object.fromEntries(railIds().map((r) => [`bearer_${r}`, before[r].bearer]));
    for (const bearer of [BOGUS, 'PAYER', 'payer ', 'nobody', '']) {
      const res = await browsers.dashboard.post('/dashboard/settings/fees', { ...others, [`bearer_${rail}`]: bearer });
      assert.equal(res.status, 400, `${JSON.stringify(bearer)}: ${pageText(res.body)}`);
      assert.equal(
        flashText(res.body),
        `Who pays the ${railDescriptor(rail!).labels.dashboard} fee must be ${BEARERS.join(' or ')}.`,
      );
      assert.doesNotMatch(res.body, /Fee settings saved|<b>bogus/);
      assert.deepEqual(
        await feeSchedule(t.db, merchantId, 'test'),
        before,
        `${JSON.stringify(bearer)} changed the schedule`,
      );
    }
    const none = await browsers.dashboard.post('/dashboard/settings/fees', {});
    assert.equal(none.status, 400, 'a form naming no bearer saves nothing');
    assert.deepEqual(await feeSchedule(t.db, merchantId, 'test'), before);
    const flipped = before[rail!].bearer === 'payer' ? 'merchant' : 'payer';
    const saved = await browsers.dashboard.post('/dashboard/settings/fees', { ...others, [`bearer_${rail}`]: flipped });
    assert.equal(saved.status, 200, pageText(saved.body));
    assert.match(saved.body, /Fee settings saved/);
    assert.equal((await feeSchedule(t.db, merchantId, 'test'))[rail!].bearer, flipped);
    assert.equal(
      (await browsers.dashboard.post('/dashboard/settings/fees', { ...others })).status,
      200,
      'the form as the page sends it',
    );
  });

  it("over HTTP, the operators' payout settings refuse garbage in every field (400 naming it, settings unchanged), save real values, and answer an unknown merchant with 404", async () => {
    const url = `/ops/merchants/${merchantId}/payouts`;
    // Test settings apply at once (opening Live payouts waits for a second operator: test/ops/approvals.test.ts).
    const valid = { environment: 'test', access: 'on', paused: 'off', limit: '1,500.50', daily_limit: '20000' };
    const before = (await merchantPayoutControls(t.db, merchantId))!.settings;
    for (const [field, garbage] of [
      ['environment', 'staging'],
      ['access', 'yes'],
      ['access', BOGUS],
      ['paused', 'true'],
      ['limit', '-5'],
      ['limit', '0.00'],
      ['limit', '1e9'],
      ['limit', '12.345'],
      ['limit', '9999999999'],
      ['daily_limit', 'lots'],
      ['daily_limit', '0'],
    ] as const) {
      const res = await browsers.ops.post(url, { ...valid, [field]: garbage });
      assert.equal(res.status, 400, `${field}=${garbage}: ${pageText(res.body)}`);
      const label = {
        environment: 'Environment',
        access: 'Access',
        paused: 'Paused',
        limit: 'Limit per payout',
        daily_limit: 'Daily limit',
      }[field];
      assert.ok(
        flashText(res.body).startsWith(`${label} must be `) ||
          flashText(res.body).startsWith(`${label} is not valid: enter an amount in GHS`),
        `${field}=${garbage}: ${flashText(res.body)}`,
      );
      assert.ok(!res.body.includes(BOGUS));
      assert.deepEqual(
        (await merchantPayoutControls(t.db, merchantId))!.settings,
        before,
        `${field}=${garbage} changed the settings`,
      );
    }
    const saved = await browsers.ops.post(url, valid);
    assert.equal(saved.status, 200, pageText(saved.body));
    assert.match(saved.body, /Test payout settings saved/);
    const after = (await merchantPayoutControls(t.db, merchantId))!.settings.test;
    assert.deepEqual(
      [after.payout_access, after.paused, Number(after.payout_limit_minor), Number(after.daily_limit_minor)],
      [true, false, 150_050, 2_000_000],
    );
    const unknown = randomUUID();
    const res = await browsers.ops.post(`/ops/merchants/${unknown}/payouts`, valid);
    assert.equal(res.status, 404, pageText(res.body));
    assert.equal(await merchantPayoutControls(t.db, unknown), null);
  });

  it('over HTTP, every console form with an id in its path answers an id that names nothing with a 404 page, never a 5xx, and changes nothing', async () => {
    const before = await snapshot(t.db, merchantId, operatorId);
    let checked = 0;
    for (const route of consoleRoutes().filter((r) => r.url.includes(':') && !isLogin(r.url))) {
      const browser = route.url.startsWith('/ops') ? browsers.ops : browsers.dashboard;
      const path = withIds(
        route.url.replace(':table', 'banks').replace(':action', route.url.startsWith('/ops') ? 'activate' : 'disable'),
      );
      const fields = validForm(formOf(route));
      const res = route.method === 'GET' ? await browser.get(path) : await browser.post(path, fields);
      assert.equal(res.status, 404, `${route.method} ${route.url} with an unknown id: ${pageText(res.body)}`);
      assert.match(res.type, /^text\/html/, route.url);
      checked++;
    }
    assert.ok(checked >= 25, `only ${checked} routes with an id`);
    assert.equal(await snapshot(t.db, merchantId, operatorId), before, 'an unknown id changed data');
  });
});
