// Security (SPEC 5; DESIGN §3 "Keys, environments, isolation" and "Webhooks"). The routes come from the app
// itself (app.registeredRoutes, filled by an onRoute hook), so a new route is covered, or fails here until it
// is, without editing a list by hand:
// - every route with an id parameter: another merchant's id and the other environment's id get 404 (the same
//   answer as an id that does not exist), nothing of the owner leaks into the answer and nothing changes;
// - missing, malformed, unknown and revoked keys get 401 UNAUTHORIZED on every authenticated /api/v1 route;
// - with private targets off (a hosted deployment), Live webhook endpoints at private, loopback, link-local,
//   metadata or special-purpose addresses (in every spelling, or behind a name), or with another scheme, are
//   refused at creation without naming an address, and again at delivery, where nothing is ever sent;
// - payer pages and the payer API for one session never show another session's data, and unknown ids are 404.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { Environment } from '../../src/lib/environment.ts';
import { createMerchant } from '../../src/accounts/service.ts';
import { insertWebhookEndpoint, revokeApiKey } from '../../src/accounts/store.ts';
import type { Db } from '../../src/db/index.ts';
import { DeliveryWorker, defaultDeliveryOptions } from '../../src/events/delivery.ts';
import { emitEvent } from '../../src/events/outbox.ts';
import { resolveTarget, UnsafeUrlError, type Resolver } from '../../src/lib/ssrf.ts';
import { LivePayoutSimulator } from '../../src/rails/payouts.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { syncCodes } from '../support/http.ts';
import { attemptsOf, captureLogger, isolatedStorage, type IsolatedStorage } from '../support/webhooks.ts';
import {
  api,
  checkEnvelope,
  createObjects,
  expectError,
  keyOf,
  LEAK_PATTERNS,
  multipartFile,
  otherEnvironment,
  payoutReadyMerchant,
  TINY_PNG,
  type Merchant,
  type Objects,
} from './api-support.ts';
import { statusOf } from '../../src/http/errors.ts';
import { SikaError } from '../../src/lib/errors.ts';

const ENVIRONMENTS: Environment[] = ['test', 'live'];
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomAlnum = (n: number) =>
  Array.from({ length: n }, () => ALNUM[Math.floor(Math.random() * ALNUM.length)]).join('');

/** Ids of the right shape that name nothing. */
const UNKNOWN: Objects = {
  environment: 'test',
  session: 'cs_00000000000000000000000000',
  attempt: 'att_00000000000000000000000000',
  recipient: 'rcp_00000000000000000000000000',
  payout: 'po_00000000000000000000000000',
  evidence: 'evd_00000000000000000000000000',
  refund: 're_00000000000000000000000000',
  event: 'evt_00000000000000000000000000',
  paymentLink: 'pl_00000000000000000000000000',
  secrets: [],
  customerName: '',
  customerEmail: '',
  invoiceRef: '',
  amountMinor: 0,
};

// ---------------------------------------------------------------------------------------------------
// Which routes are checked how

type Scope = 'key' | 'payer' | 'dashboard' | 'exempt';

/** Every route with an id parameter falls under one of these (first match); one under none fails the test. */
const SCOPES: { prefix: string; scope: Scope; reason?: string }[] = [
  { prefix: '/api/v1/checkout/', scope: 'payer' },
  { prefix: '/api/v1/', scope: 'key' },
  { prefix: '/pay/', scope: 'payer' },
  {
    prefix: '/l/',
    scope: 'exempt',
    reason:
      "a payment link's public page, form, QR codes and poster (issue 35): its random slug is what the merchant shares with every payer; it shows only what the link shows and makes a new session, never reads one (test/web/payment-link-page.test.ts)",
  },
  {
    prefix: '/dashboard/login/link/',
    scope: 'exempt',
    reason:
      'a one-time sign-in link (issue 19): its token is the credential, no object of a merchant; used, unknown or expired it opens nothing (test/process/first-run.test.ts)',
  },
  {
    prefix: '/signup/verify/',
    scope: 'exempt',
    reason:
      'a sign-up confirmation link (issue 33): its token is the credential, no object of a merchant; used, unknown or expired it opens nothing (test/web/signup.test.ts)',
  },
  { prefix: '/dashboard/', scope: 'dashboard' },
  {
    prefix: '/ops/',
    scope: 'exempt',
    reason: 'the operator console works across merchants by design; anonymous requests are checked below',
  },
];

interface ApiRequest {
  url: string;
  body?: unknown;
  multipart?: { payload: Buffer; contentType: string };
}

interface KeyRoute {
  request(o: Objects): ApiRequest;
  /** What a Live key gets whatever the id (the simulate endpoint is for Test keys only). */
  liveKeyStatus?: { status: number; code: string };
  /** A request naming the owner's parent object with a child that is not its own (evidence of another payout). */
  mixed?(own: Objects, foreign: Objects): ApiRequest;
}

const evidenceUpload = () => multipartFile('file', 'proof.png', 'image/png', TINY_PNG);

/** Key-authenticated /api/v1 routes with an id: how to call each with an owner's objects. */
const KEY_ROUTES: Record<string, KeyRoute> = {
  'GET /api/v1/sessions/:reference': { request: (o) => ({ url: `/api/v1/sessions/${o.session}` }) },
  'POST /api/v1/test/payment-attempts/:reference/simulate': {
    request: (o) => ({ url: `/api/v1/test/payment-attempts/${o.attempt}/simulate`, body: { outcome: 'failed' } }),
    liveKeyStatus: { status: 403, code: 'FORBIDDEN' },
  },
  'GET /api/v1/payouts/recipients/:recipient_id': {
    request: (o) => ({ url: `/api/v1/payouts/recipients/${o.recipient}` }),
  },
  'DELETE /api/v1/payouts/recipients/:recipient_id': {
    request: (o) => ({ url: `/api/v1/payouts/recipients/${o.recipient}` }),
  },
  'GET /api/v1/refunds/:id': { request: (o) => ({ url: `/api/v1/refunds/${o.refund}` }) },
  'POST /api/v1/test/refunds/:id/simulate': {
    request: (o) => ({ url: `/api/v1/test/refunds/${o.refund}/simulate`, body: { outcome: 'failed' } }),
    liveKeyStatus: { status: 403, code: 'FORBIDDEN' },
  },
  'GET /api/v1/events/:id': { request: (o) => ({ url: `/api/v1/events/${o.event}` }) },
  'GET /api/v1/payment-links/:id': { request: (o) => ({ url: `/api/v1/payment-links/${o.paymentLink}` }) },
  'POST /api/v1/payment-links/:id': {
    request: (o) => ({ url: `/api/v1/payment-links/${o.paymentLink}`, body: { active: false } }),
  },
  'POST /api/v1/events/:id/replay': { request: (o) => ({ url: `/api/v1/events/${o.event}/replay` }) },
  'GET /api/v1/payouts/:payout_id': { request: (o) => ({ url: `/api/v1/payouts/${o.payout}` }) },
  'POST /api/v1/payouts/:payout_id/cancel': {
    request: (o) => ({ url: `/api/v1/payouts/${o.payout}/cancel`, body: { reason: 'isolation check' } }),
  },
  // The owner's Test payout is paid (the Test default): returned is a move its table allows.
  'POST /api/v1/test/payouts/:payout_id/simulate': {
    request: (o) => ({ url: `/api/v1/test/payouts/${o.payout}/simulate`, body: { outcome: 'returned' } }),
    liveKeyStatus: { status: 403, code: 'FORBIDDEN' },
  },
  'GET /api/v1/payouts/:payout_id/receipt': { request: (o) => ({ url: `/api/v1/payouts/${o.payout}/receipt` }) },
  'POST /api/v1/payouts/:payout_id/evidence': {
    request: (o) => ({ url: `/api/v1/payouts/${o.payout}/evidence`, multipart: evidenceUpload() }),
  },
  'GET /api/v1/payouts/:payout_id/evidence/:evidence_id': {
    request: (o) => ({ url: `/api/v1/payouts/${o.payout}/evidence/${o.evidence}` }),
    mixed: (own, foreign) => ({ url: `/api/v1/payouts/${own.payout}/evidence/${foreign.evidence}` }),
  },
};

interface PayerRoute {
  request(session: Objects, attempt: string): { method: string; url: string; body?: unknown };
  /** The route names an attempt of the session too (and must refuse another session's attempt). */
  takesAttempt?: boolean;
  /** Answer for a session id that does not exist. */
  unknown: number;
  /** HTML page (else the JSON API). */
  html?: boolean;
  /** A form whose refusals are pages too (a POST of the payer page otherwise answers with the API's envelope). */
  formPage?: boolean;
}

/** Public payer routes (the unguessable session id is the capability): how to call each for a session. */
const PAYER_ROUTES: Record<string, PayerRoute> = {
  'GET /api/v1/checkout/sessions/:reference': {
    request: (s) => ({ method: 'GET', url: `/api/v1/checkout/sessions/${s.session}` }),
    unknown: 404,
  },
  'GET /api/v1/checkout/sessions/:reference/quote': {
    request: (s) => ({ method: 'GET', url: `/api/v1/checkout/sessions/${s.session}/quote` }),
    unknown: 404,
  },
  'POST /api/v1/checkout/sessions/:reference/provider-attempts': {
    // A wrong amount: refused (409) without changing anything, whatever state the session is in.
    request: (s) => ({
      method: 'POST',
      url: `/api/v1/checkout/sessions/${s.session}/provider-attempts`,
      body: { rail: 'card', amount_minor: 1 },
    }),
    unknown: 404,
  },
  'GET /api/v1/checkout/sessions/:reference/provider-attempts/:attempt_reference': {
    request: (s, attempt) => ({
      method: 'GET',
      url: `/api/v1/checkout/sessions/${s.session}/provider-attempts/${attempt}`,
    }),
    takesAttempt: true,
    unknown: 404,
  },
  'POST /api/v1/checkout/sessions/:reference/provider-attempts/:attempt_reference/authorize': {
    request: (s, attempt) => ({
      method: 'POST',
      url: `/api/v1/checkout/sessions/${s.session}/provider-attempts/${attempt}/authorize`,
      body: { code: '123456' },
    }),
    takesAttempt: true,
    unknown: 404,
  },
  'POST /api/v1/checkout/sessions/:reference/provider-attempts/:attempt_reference/resend': {
    request: (s, attempt) => ({
      method: 'POST',
      url: `/api/v1/checkout/sessions/${s.session}/provider-attempts/${attempt}/resend`,
    }),
    takesAttempt: true,
    unknown: 404,
  },
  'POST /api/v1/checkout/sessions/:reference/provider-attempts/:attempt_reference/cancel': {
    request: (s, attempt) => ({
      method: 'POST',
      url: `/api/v1/checkout/sessions/${s.session}/provider-attempts/${attempt}/cancel`,
    }),
    takesAttempt: true,
    unknown: 404,
  },
  'GET /pay/:reference': { request: (s) => ({ method: 'GET', url: `/pay/${s.session}` }), unknown: 404, html: true },
  'GET /pay/:reference/slip': {
    request: (s) => ({ method: 'GET', url: `/pay/${s.session}/slip` }),
    unknown: 404,
    html: true,
  },
  // Without JavaScript the form posts back to the page: a redirect to the same session, nothing looked up.
  'POST /pay/:reference': { request: (s) => ({ method: 'POST', url: `/pay/${s.session}` }), unknown: 303, html: true },
  // "Use another number or method" without JavaScript: the payer API's cancel, then back to the page.
  'POST /pay/:reference/change': {
    request: (s, attempt) => ({
      method: 'POST',
      url: `/pay/${s.session}/change`,
      body: { attempt_reference: attempt },
    }),
    takesAttempt: true,
    unknown: 404,
    html: true,
  },
  // A payer's receipt (issue 35): 404 before success and for an unknown id.
  'GET /pay/:reference/receipt': {
    request: (s) => ({ method: 'GET', url: `/pay/${s.session}/receipt` }),
    unknown: 404,
    html: true,
  },
  'GET /pay/:reference/receipt.pdf': {
    request: (s) => ({ method: 'GET', url: `/pay/${s.session}/receipt.pdf` }),
    unknown: 404,
    html: true,
  },
  'POST /pay/:reference/receipt/email': {
    request: (s) => ({ method: 'POST', url: `/pay/${s.session}/receipt/email`, body: { email: 'payer@example.com' } }),
    unknown: 404,
    html: true,
    formPage: true,
  },
  'POST /pay/:reference/test-outcome': {
    request: (s, attempt) => ({
      method: 'POST',
      url: `/pay/${s.session}/test-outcome`,
      body: { attempt_reference: attempt, outcome: 'failed' },
    }),
    takesAttempt: true,
    unknown: 404,
  },
};

interface ConsoleIds extends Objects {
  apiKey: string;
  endpoint: string;
  event: string;
}

interface DashboardRoute {
  request(o: ConsoleIds): { method: 'GET' | 'POST'; url: string; fields?: Record<string, string>; file?: boolean };
}

/** Merchant dashboard routes with an id (cookie session + CSRF): how to call each with an owner's objects. */
const DASHBOARD_ROUTES: Record<string, DashboardRoute> = {
  'GET /dashboard/sessions/:id': { request: (o) => ({ method: 'GET', url: `/dashboard/sessions/${o.session}` }) },
  'GET /dashboard/payouts/:id': { request: (o) => ({ method: 'GET', url: `/dashboard/payouts/${o.payout}` }) },
  'GET /dashboard/links/:id': { request: (o) => ({ method: 'GET', url: `/dashboard/links/${o.paymentLink}` }) },
  'POST /dashboard/links/:id': {
    request: (o) => ({ method: 'POST', url: `/dashboard/links/${o.paymentLink}`, fields: { name: 'isolation check' } }),
  },
  'POST /dashboard/links/:id/active': {
    request: (o) => ({ method: 'POST', url: `/dashboard/links/${o.paymentLink}/active`, fields: { active: 'off' } }),
  },
  'POST /dashboard/sessions/:id/refunds': {
    request: (o) => ({
      method: 'POST',
      url: `/dashboard/sessions/${o.session}/refunds`,
      fields: { amount: '1.00', reason: 'isolation check' },
    }),
  },
  'POST /dashboard/refunds/:id/decision': {
    request: (o) => ({
      method: 'POST',
      url: `/dashboard/refunds/${o.refund}/decision`,
      fields: { decision: 'reject', reason: 'isolation check' },
    }),
  },
  'POST /dashboard/payouts/:id/decision': {
    request: (o) => ({
      method: 'POST',
      url: `/dashboard/payouts/${o.payout}/decision`,
      fields: { decision: 'reject', reason: 'isolation check' },
    }),
  },
  'POST /dashboard/payouts/:id/cancel': {
    request: (o) => ({ method: 'POST', url: `/dashboard/payouts/${o.payout}/cancel` }),
  },
  'GET /dashboard/payouts/:id/receipt': {
    request: (o) => ({ method: 'GET', url: `/dashboard/payouts/${o.payout}/receipt` }),
  },
  'GET /dashboard/payouts/:id/transactions.csv': {
    request: (o) => ({ method: 'GET', url: `/dashboard/payouts/${o.payout}/transactions.csv` }),
  },
  'POST /dashboard/payouts/:id/evidence': {
    request: (o) => ({ method: 'POST', url: `/dashboard/payouts/${o.payout}/evidence`, file: true }),
  },
  'POST /dashboard/recipients/:id/deactivate': {
    request: (o) => ({ method: 'POST', url: `/dashboard/recipients/${o.recipient}/deactivate` }),
  },
  'POST /dashboard/keys/:id/revoke': {
    request: (o) => ({ method: 'POST', url: `/dashboard/keys/${o.apiKey}/revoke` }),
  },
  'GET /dashboard/webhooks/:id': { request: (o) => ({ method: 'GET', url: `/dashboard/webhooks/${o.endpoint}` }) },
  'POST /dashboard/webhooks/:id/:action': {
    request: (o) => ({ method: 'POST', url: `/dashboard/webhooks/${o.endpoint}/disable` }),
  },
  'POST /dashboard/events/:id/replay': {
    request: (o) => ({
      method: 'POST',
      url: `/dashboard/events/${o.event}/replay`,
      fields: { endpoint_id: o.endpoint },
    }),
  },
};

const routeKey = (method: string, url: string) => `${method} ${url}`;

// ---------------------------------------------------------------------------------------------------
// Helpers

async function sendWithKey(
  t: TestContext,
  key: string | null,
  method: string,
  request: ApiRequest,
): Promise<LightMyRequestResponse> {
  if (request.multipart) {
    return t.app.inject({
      method: method as 'POST',
      url: request.url,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': request.multipart.contentType },
      payload: request.multipart.payload,
    });
  }
  return api(t, key, method, request.url, request.body);
}

/** Every row of the merchant in every table that has a merchant_id (last_used_at aside): to prove a refused call changed nothing. */
async function snapshot(db: Db, merchantId: string): Promise<Record<string, string[]>> {
  const tables = await db.query<{ table_name: string }>(
    "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'merchant_id' AND table_schema = current_schema() ORDER BY table_name",
  );
  const out: Record<string, string[]> = {};
  for (const { table_name: table } of tables) {
    const rows = await db.query<{ j: Record<string, unknown> }>(
      `SELECT row_to_json(x) AS j FROM "${table}" x WHERE merchant_id = $1`,
      [merchantId],
    );
    out[table] = rows
      .map(({ j }) => {
        const row = typeof j === 'string' ? (JSON.parse(j) as Record<string, unknown>) : { ...j };
        delete row.last_used_at;
        return JSON.stringify(row);
      })
      .sort();
  }
  return out;
}

function assertNoSecrets(body: string, secrets: string[], context: string): void {
  for (const secret of secrets)
    assert.ok(!body.includes(secret), `${context} shows ${JSON.stringify(secret)}: ${body.slice(0, 300)}`);
}

interface ConsoleSession {
  cookie: string;
  csrf: string;
}

const cookieValue = (res: LightMyRequestResponse, name: string) => res.cookies.find((c) => c.name === name)?.value;

/** Signs in to the merchant dashboard through its login form and switches to an environment. */
async function signIn(t: TestContext, m: Merchant, environment: Environment): Promise<ConsoleSession> {
  const form = await t.app.inject({ method: 'GET', url: '/dashboard/login' });
  const loginCsrf = cookieValue(form, 'sika_login_csrf');
  assert.ok(loginCsrf, 'the login form sets its CSRF cookie');
  const login = await t.app.inject({
    method: 'POST',
    url: '/dashboard/login',
    headers: { cookie: `sika_login_csrf=${loginCsrf}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: loginCsrf, email: m.email, password: m.password }).toString(),
  });
  assert.equal(login.statusCode, 303, login.body.slice(0, 300));
  const token = cookieValue(login, 'sika_dashboard');
  assert.ok(token, 'signed in');
  const cookie = `sika_dashboard=${token}`;
  const home = await t.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(home.body)?.[1];
  assert.ok(csrf, 'the dashboard pages carry a CSRF token');
  const session = { cookie, csrf };
  const switched = await consolePost(t, session, '/dashboard/environment', { environment });
  assert.equal(switched.statusCode, 303);
  return session;
}

function consolePost(
  t: TestContext,
  session: ConsoleSession,
  url: string,
  fields: Record<string, string> = {},
  file = false,
): Promise<LightMyRequestResponse> {
  if (file) {
    const body = multipartFile('file', 'proof.png', 'image/png', TINY_PNG, { _csrf: session.csrf, ...fields });
    return t.app.inject({
      method: 'POST',
      url,
      headers: { cookie: session.cookie, 'content-type': body.contentType },
      payload: body.payload,
    });
  }
  return t.app.inject({
    method: 'POST',
    url,
    headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: session.csrf, ...fields }).toString(),
  });
}

async function consoleIds(db: Db, o: Objects, merchantId: string): Promise<ConsoleIds> {
  const one = async (sql: string) => {
    const rows = await db.query<{ id: string }>(sql, [merchantId, o.environment]);
    assert.ok(rows[0], sql);
    return rows[0].id;
  };
  return {
    ...o,
    apiKey: await one(
      'SELECT id FROM api_keys WHERE merchant_id = $1 AND environment = $2 ORDER BY created_at LIMIT 1',
    ),
    endpoint: await one(
      'SELECT id FROM webhook_endpoints WHERE merchant_id = $1 AND environment = $2 ORDER BY created_at LIMIT 1',
    ),
    event: await one('SELECT id FROM events WHERE merchant_id = $1 AND environment = $2 ORDER BY created_at LIMIT 1'),
  };
}

// ---------------------------------------------------------------------------------------------------

describe(`security: isolation, keys, SSRF and payer pages (${storageKind})`, () => {
  let t: TestContext;
  /** Another merchant, with objects of its own in both environments. */
  let other: Merchant;
  const otherObjects = {} as Record<Environment, Objects>;

  before(async () => {
    t = await startTestApp({}, { payoutRail: new LivePayoutSimulator() });
    other = await payoutReadyMerchant(t, { password: true });
    for (const environment of ENVIRONMENTS) otherObjects[environment] = await createObjects(t, other, environment);
  });
  after(() => t.close());

  const idRoutes = () => {
    const seen = new Set<string>();
    return t.app.registeredRoutes.filter((r) => {
      const key = routeKey(r.method, r.url);
      if (r.method === 'HEAD' || !/:\w+/.test(r.url) || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  };
  const scopeOf = (url: string) => SCOPES.find((s) => url.startsWith(s.prefix));

  it('every registered route with an id parameter has a fixture here (a new route fails until it is covered)', () => {
    const routes = idRoutes();
    assert.ok(routes.length >= 20, `only ${routes.length} routes with an id: is app.registeredRoutes complete?`);
    const fixtures: Record<Exclude<Scope, 'exempt'>, Record<string, unknown>> = {
      key: KEY_ROUTES,
      payer: PAYER_ROUTES,
      dashboard: DASHBOARD_ROUTES,
    };
    const missing: string[] = [];
    for (const route of routes) {
      const scope = scopeOf(route.url);
      const key = routeKey(route.method, route.url);
      if (!scope) missing.push(`${key} (under no known prefix: add it to SCOPES)`);
      else if (scope.scope !== 'exempt' && !(key in fixtures[scope.scope]))
        missing.push(`${key} (add it to the ${scope.scope} fixtures)`);
    }
    assert.deepEqual(
      missing,
      [],
      `routes with an id parameter and no isolation fixture in test/reliability/security.test.ts:\n  ${missing.join('\n  ')}`,
    );
    const registered = new Set(routes.map((r) => routeKey(r.method, r.url)));
    const stale = [...Object.keys(KEY_ROUTES), ...Object.keys(PAYER_ROUTES), ...Object.keys(DASHBOARD_ROUTES)].filter(
      (key) => !registered.has(key),
    );
    assert.deepEqual(stale, [], 'fixtures for routes that no longer exist');
  });

  describe("another merchant's id and the other environment's id get 404 on every /api/v1 route with an id", () => {
    for (const [key, route] of Object.entries(KEY_ROUTES)) {
      const [method, pattern] = key.split(' ') as [string, string];
      it(`${key}: refused for another merchant and the other environment exactly like an unknown id; nothing leaks or changes`, async () => {
        const owner = await payoutReadyMerchant(t);
        const objects = {} as Record<Environment, Objects>;
        for (const environment of ENVIRONMENTS) objects[environment] = await createObjects(t, owner, environment);
        for (const environment of ENVIRONMENTS) {
          const own = objects[environment];
          const before = await snapshot(t.db, owner.merchant_id);
          const callers = [
            { who: `another merchant's ${environment} key`, key: keyOf(other, environment), environment },
            {
              who: `another merchant's ${otherEnvironment(environment)} key`,
              key: keyOf(other, otherEnvironment(environment)),
              environment: otherEnvironment(environment),
            },
            {
              who: `the owner's ${otherEnvironment(environment)} key`,
              key: keyOf(owner, otherEnvironment(environment)),
              environment: otherEnvironment(environment),
            },
          ];
          for (const caller of callers) {
            const context = `${key} on the owner's ${environment} objects with ${caller.who}`;
            const expected =
              caller.environment === 'live' && route.liveKeyStatus
                ? route.liveKeyStatus
                : { status: 404, code: 'NOT_FOUND' };
            const res = await sendWithKey(t, caller.key, method, route.request(own));
            const error = expectError(res, expected.status, expected.code, context);
            const unknown = await sendWithKey(t, caller.key, method, route.request(UNKNOWN));
            const unknownError = expectError(
              unknown,
              expected.status,
              expected.code,
              `${key} with an unknown id and ${caller.who}`,
            );
            assert.deepEqual(error, unknownError, `${context}: the answer differs from an unknown id's`);
            assertNoSecrets(res.body, [...objects.test.secrets, ...objects.live.secrets, owner.merchant_id], context);
          }
          if (route.mixed) {
            // The owner's own parent with a child of another merchant or of the other environment.
            for (const foreign of [otherObjects[environment], objects[otherEnvironment(environment)]]) {
              const res = await sendWithKey(t, keyOf(owner, environment), method, route.mixed(own, foreign));
              expectError(res, 404, 'NOT_FOUND', `${key} with the owner's ${environment} parent and a foreign child`);
              assertNoSecrets(res.body, foreign.secrets, key);
            }
          }
          assert.deepEqual(
            await snapshot(t.db, owner.merchant_id),
            before,
            `${key}: a refused request changed the owner's data`,
          );
          // The fixture is real: the owner's own key gets past the lookup.
          const ownRes = await sendWithKey(t, keyOf(owner, environment), method, route.request(own));
          const ownExpected = environment === 'live' && route.liveKeyStatus ? [route.liveKeyStatus.status] : null;
          if (ownExpected) assert.deepEqual([ownRes.statusCode], ownExpected, ownRes.body.slice(0, 300));
          else
            assert.ok(
              ![401, 403, 404].includes(ownRes.statusCode),
              `${key}: the owner's own ${environment} key got ${ownRes.statusCode}: ${ownRes.body.slice(0, 300)}`,
            );
        }
        assert.ok(pattern.startsWith('/api/v1/'));
      });
    }
  });

  describe('missing, malformed, unknown and revoked keys', () => {
    it('get 401 UNAUTHORIZED on every authenticated /api/v1 route (every /api/v1 route is in the OpenAPI document), and nothing is written', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
        paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>>;
      };
      const secured = new Set<string>();
      const documented = new Set<string>();
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          const key = routeKey(method.toUpperCase(), path.replace(/\{(\w+)\}/g, ':$1'));
          documented.add(key);
          if (operation.security?.some((s) => 'apiKey' in s)) secured.add(key);
        }
      }
      const apiRoutes = t.app.registeredRoutes
        .filter((r) => r.url.startsWith('/api/') && r.method !== 'HEAD')
        .map((r) => routeKey(r.method, r.url));
      assert.deepEqual(
        apiRoutes.filter((key) => !documented.has(key)),
        [],
        'API routes missing from /openapi.json (their authentication cannot be checked)',
      );
      // Public routes are the hosted-checkout API, and the provider notifications: Paystack's webhook carries
      // its own signature (refused without it, test/rails/live-paystack.test.ts) and MTN's callback is trusted for
      // nothing (it only makes Sika ask MTN, test/rails/live-mtn-momo.test.ts).
      const PROVIDER_NOTIFICATIONS = [
        'POST /api/v1/providers/paystack/webhook',
        'PUT /api/v1/providers/mtn-momo/callback',
        'POST /api/v1/providers/mtn-momo/callback',
      ];
      assert.deepEqual(
        apiRoutes.filter(
          (key) =>
            !secured.has(key) &&
            !key.split(' ')[1]!.startsWith('/api/v1/checkout/') &&
            !PROVIDER_NOTIFICATIONS.includes(key),
        ),
        [],
        'API routes outside /api/v1/checkout/ without API-key security',
      );
      assert.ok(secured.size >= 19, `${secured.size} authenticated routes`);

      const m = await payoutReadyMerchant(t);
      const live = await createObjects(t, m, 'live');
      const test = await createObjects(t, m, 'test');
      // Revoked as the dashboard does it: the row is marked, and this process forgets its cached lookup.
      const revokedKey = m.live_api_key;
      const keyRow = (
        await t.db.query<{ id: string }>('SELECT id FROM api_keys WHERE merchant_id = $1 AND environment = $2', [
          m.merchant_id,
          'live',
        ])
      )[0]!;
      assert.equal(
        (await api(t, revokedKey, 'GET', `/api/v1/payouts/${live.payout}`)).statusCode,
        200,
        'the key works before revocation',
      );
      assert.equal((await revokeApiKey(t.db, keyRow.id, m.merchant_id, 'live')).length, 1);
      t.app.deps.authenticator.forget(revokedKey.slice(0, 16));
      const before = await snapshot(t.db, m.merchant_id);

      const credentials: { what: string; authorization?: string; objects: Objects }[] = [
        { what: 'no Authorization header', objects: test },
        { what: '"Bearer" alone', authorization: 'Bearer', objects: test },
        { what: '"Bearer " and nothing', authorization: 'Bearer ', objects: test },
        { what: 'Bearer garbage', authorization: 'Bearer garbage', objects: test },
        {
          what: 'Basic credentials',
          authorization: `Basic ${Buffer.from(`${m.test_api_key}:`).toString('base64')}`,
          objects: test,
        },
        { what: 'the key without a scheme', authorization: m.test_api_key, objects: test },
        { what: 'another scheme', authorization: `Token ${m.test_api_key}`, objects: test },
        { what: 'the key and trailing junk', authorization: `Bearer ${m.test_api_key} extra`, objects: test },
        { what: 'a wrong prefix', authorization: `Bearer sk_test_${m.test_api_key.slice(8)}`, objects: test },
        { what: 'an unknown environment prefix', authorization: `Bearer ak_prod_${randomAlnum(40)}`, objects: test },
        {
          what: 'an upper-case prefix',
          authorization: `Bearer ${m.test_api_key.replace('ak_test_', 'AK_TEST_')}`,
          objects: test,
        },
        { what: 'a key one character short', authorization: `Bearer ${m.test_api_key.slice(0, -1)}`, objects: test },
        { what: 'a well-formed unknown Test key', authorization: `Bearer ak_test_${randomAlnum(40)}`, objects: test },
        { what: 'a well-formed unknown Live key', authorization: `Bearer ak_live_${randomAlnum(40)}`, objects: live },
        {
          what: "a real key's prefix with another secret",
          authorization: `Bearer ${m.test_api_key.slice(0, 16)}${randomAlnum(m.test_api_key.length - 16)}`,
          objects: test,
        },
        { what: 'a revoked key', authorization: `Bearer ${revokedKey}`, objects: live },
      ];
      let checked = 0;
      for (const key of secured) {
        const [method, pattern] = key.split(' ') as [string, string];
        for (const credential of credentials) {
          const fixture = KEY_ROUTES[key];
          const request: ApiRequest = fixture
            ? fixture.request(credential.objects)
            : {
                url: pattern.replace(/:(\w+)/g, 'x_unknown'),
                body: method === 'GET' || method === 'HEAD' ? undefined : {},
              };
          const res = await t.app.inject({
            method: method as 'GET',
            url: request.url,
            headers: {
              ...(credential.authorization !== undefined ? { authorization: credential.authorization } : {}),
              ...(request.multipart
                ? { 'content-type': request.multipart.contentType }
                : request.body !== undefined
                  ? { 'content-type': 'application/json' }
                  : {}),
            },
            payload: request.multipart
              ? request.multipart.payload
              : request.body !== undefined
                ? JSON.stringify(request.body)
                : undefined,
          });
          const error = expectError(res, 401, 'UNAUTHORIZED', `${key} with ${credential.what}`);
          assert.ok(!/ak_(test|live)_[A-Za-z0-9]{10,}/.test(error.message), 'the message never echoes a key');
          assertNoSecrets(res.body, [...test.secrets, ...live.secrets], `${key} with ${credential.what}`);
          checked++;
        }
      }
      assert.equal(checked, secured.size * credentials.length);
      assert.deepEqual(await snapshot(t.db, m.merchant_id), before, 'a refused request wrote nothing');
      // The merchant's other key still works.
      assert.equal((await api(t, m.test_api_key, 'GET', `/api/v1/payouts/${test.payout}`)).statusCode, 200);
    });
  });

  describe('payer pages and the payer API', () => {
    let sessions: { name: string; objects: Objects; secrets: string[]; merchantId: string }[];
    let merchants: string[];

    before(async () => {
      const owner = await payoutReadyMerchant(t);
      const invoiceRef = `INV-SHARED-${randomUUID().slice(0, 8)}`;
      // Both merchants use the same invoice_ref with their own invoice lines: each session shows its own only.
      const lineNames: Record<string, string> = {};
      for (const [name, m] of [
        ['owner', owner],
        ['other', other],
      ] as const) {
        lineNames[name] = `Line of ${name} ${randomUUID().slice(0, 8)}`;
        await syncCodes(t, m.test_api_key, [{ code: 'FEE', name: 'Fee' }]);
        const lines = await api(t, m.test_api_key, 'POST', '/api/v1/invoice-lines', {
          invoice_ref: invoiceRef,
          lines: [{ code: 'FEE', name: lineNames[name], amount_minor: 700 }],
        });
        assert.equal(lines.statusCode, 200, lines.body);
      }
      const x = await createObjects(t, owner, 'test', { invoiceRef });
      const xCash = await createObjects(t, owner, 'test', { invoiceRef, rail: 'cash' });
      const y = await createObjects(t, other, 'test', { invoiceRef });
      const z = await createObjects(t, owner, 'live', { invoiceRef });
      const amounts = (o: Objects) => [`"amount_minor":${o.amountMinor}`, (o.amountMinor / 100).toFixed(2)];
      sessions = [
        {
          name: 'a Test session with a momo attempt',
          objects: x,
          secrets: [...x.secrets, ...amounts(x)],
          merchantId: owner.merchant_id,
        },
        {
          name: 'a Test session with a cash slip',
          objects: xCash,
          secrets: [...xCash.secrets, ...amounts(xCash)],
          merchantId: owner.merchant_id,
        },
        {
          name: "another merchant's Test session",
          objects: y,
          secrets: [...y.secrets, ...amounts(y), lineNames.other!],
          merchantId: other.merchant_id,
        },
        {
          name: 'a Live session with a cash slip',
          objects: z,
          secrets: [...z.secrets, ...amounts(z)],
          merchantId: owner.merchant_id,
        },
      ];
      merchants = [owner.merchant_id, other.merchant_id];
      // The owner's Test lines belong to the Test sessions; the Live session must not show them.
      sessions[0]!.secrets.push(lineNames.owner!);
      sessions[1]!.secrets.push(lineNames.owner!);
    });

    const payerRequest = (request: { method: string; url: string; body?: unknown }) =>
      t.app.inject({
        method: request.method as 'GET',
        url: request.url,
        headers: request.body !== undefined ? { 'content-type': 'application/json' } : {},
        payload: request.body !== undefined ? JSON.stringify(request.body) : undefined,
      });

    it('each payer route for one session shows nothing of any other session (other customers, amounts, ids, invoice lines, other environment)', async () => {
      for (const [key, route] of Object.entries(PAYER_ROUTES)) {
        for (const session of sessions) {
          // A session's own capability may change its own state (the Test buttons); never another merchant's.
          const elsewhere = merchants.find((id) => id !== session.merchantId)!;
          const before = await snapshot(t.db, elsewhere);
          const res = await payerRequest(route.request(session.objects, session.objects.attempt));
          const context = `${key} for ${session.name}`;
          assert.ok(res.statusCode < 500, `${context}: ${res.statusCode} ${res.body.slice(0, 300)}`);
          if (!route.html && res.statusCode >= 400) checkEnvelope(res, context);
          for (const others of sessions)
            if (others !== session)
              assertNoSecrets(
                res.body,
                others.secrets.filter((s) => !session.secrets.includes(s)),
                `${context} (data of ${others.name})`,
              );
          // (Pages carry CSS, where "stack" is an ordinary word: for them only SQL and stack frames count.)
          for (const pattern of route.html ? LEAK_PATTERNS.slice(1) : LEAK_PATTERNS)
            assert.doesNotMatch(res.body, pattern, `${context} leaks internals`);
          assert.deepEqual(await snapshot(t.db, elsewhere), before, `${context} changed another merchant's data`);
        }
      }
      // The page really is the session's own: it names its own customer.
      const page = await t.app.inject({ method: 'GET', url: `/pay/${sessions[0]!.objects.session}` });
      assert.equal(page.statusCode, 200);
      assert.ok(page.body.includes(sessions[0]!.objects.customerName), 'the page shows its own session');
    });

    it("another session's attempt, named under a session's path, is 404 (403 on a Live session's Test-outcome buttons) and is left as it was", async () => {
      for (const [key, route] of Object.entries(PAYER_ROUTES)) {
        if (!route.takesAttempt) continue;
        for (const session of sessions) {
          for (const foreign of sessions) {
            if (foreign === session) continue;
            const beforeRows = await t.db.query(
              'SELECT status, raw_status, resend_count, verification_required FROM payment_attempts WHERE id = $1',
              [foreign.objects.attempt],
            );
            const res = await payerRequest(route.request(session.objects, foreign.objects.attempt));
            const context = `${key} for ${session.name} with the attempt of ${foreign.name}`;
            const liveButtons = key === 'POST /pay/:reference/test-outcome' && session.objects.environment === 'live';
            if (liveButtons) expectError(res, 403, 'FORBIDDEN', context);
            else expectError(res, 404, 'NOT_FOUND', context);
            assertNoSecrets(res.body, foreign.secrets, context);
            const afterRows = await t.db.query(
              'SELECT status, raw_status, resend_count, verification_required FROM payment_attempts WHERE id = $1',
              [foreign.objects.attempt],
            );
            assert.deepEqual(afterRows, beforeRows, `${context} changed the other attempt`);
          }
        }
      }
    });

    it('unknown session ids get 404 on every payer route (a page for the pages, the envelope for the API)', async () => {
      for (const [key, route] of Object.entries(PAYER_ROUTES)) {
        for (const id of [
          UNKNOWN.session,
          'cs_x',
          'not-a-session',
          'x'.repeat(80),
          encodeURIComponent('../../etc/passwd'),
        ]) {
          const res = await payerRequest(route.request({ ...UNKNOWN, session: id }, sessions[0]!.objects.attempt));
          const context = `${key} for unknown session ${id.slice(0, 40)}`;
          if (route.unknown === 303) {
            assert.equal(res.statusCode, 303, context);
            assert.equal(res.headers.location, `/pay/${encodeURIComponent(decodeURIComponent(id))}`, context);
            continue;
          }
          assert.equal(res.statusCode, 404, `${context}: ${res.statusCode} ${res.body.slice(0, 200)}`);
          if (route.html && (route.formPage || route.request(sessions[0]!.objects, '').method === 'GET'))
            assert.match(String(res.headers['content-type']), /^text\/html/, context);
          else checkEnvelope(res, context);
          for (const session of sessions) assertNoSecrets(res.body, session.secrets, context);
        }
      }
    });
  });

  describe('the merchant dashboard', () => {
    it("every dashboard route with an id refuses another merchant's id and the other environment's id (404 or a not-found page); nothing leaks or changes", async () => {
      const owner = await payoutReadyMerchant(t, { password: true });
      const objects = {} as Record<Environment, ConsoleIds>;
      for (const environment of ENVIRONMENTS)
        objects[environment] = await consoleIds(t.db, await createObjects(t, owner, environment), owner.merchant_id);
      const consoles = {} as Record<string, ConsoleSession>;
      for (const environment of ENVIRONMENTS) {
        consoles[`owner ${environment}`] = await signIn(t, owner, environment);
        consoles[`other ${environment}`] = await signIn(t, other, environment);
      }
      const ownerSecrets = [...objects.test.secrets, ...objects.live.secrets, objects.test.apiKey, objects.live.apiKey];
      for (const [key, route] of Object.entries(DASHBOARD_ROUTES)) {
        for (const environment of ENVIRONMENTS) {
          const request = route.request(objects[environment]);
          const before = await snapshot(t.db, owner.merchant_id);
          for (const who of [
            `other ${environment}`,
            `other ${otherEnvironment(environment)}`,
            `owner ${otherEnvironment(environment)}`,
          ]) {
            const session = consoles[who]!;
            const res =
              request.method === 'GET'
                ? await t.app.inject({ method: 'GET', url: request.url, headers: { cookie: session.cookie } })
                : await consolePost(t, session, request.url, request.fields, request.file);
            const context = `${key} on the owner's ${environment} object, signed in as ${who}`;
            assert.ok(
              res.statusCode === 404 || (res.statusCode < 500 && /not found/i.test(res.body)),
              `${context}: ${res.statusCode} without a not-found answer: ${res.body.slice(0, 300)}`,
            );
            assert.ok(!/^application\/pdf/.test(String(res.headers['content-type'])), `${context} sent a file`);
            // Another merchant sees none of the owner's data; the owner in the other environment sees that environment's own
            // pages, but nothing of this one. An id the caller sent may be echoed back.
            const hidden = (
              who.startsWith('other') ? ownerSecrets : [...objects[environment].secrets, objects[environment].apiKey]
            ).filter(
              (secret) => !request.url.includes(secret) && !Object.values(request.fields ?? {}).includes(secret),
            );
            assertNoSecrets(res.body, hidden, context);
          }
          assert.deepEqual(
            await snapshot(t.db, owner.merchant_id),
            before,
            `${key}: a refused request changed the owner's ${environment} data`,
          );
        }
        // The fixture is real: the owner, in the object's environment, gets past the lookup.
        const request = route.request(objects.test);
        const session = consoles['owner test']!;
        const res =
          request.method === 'GET'
            ? await t.app.inject({ method: 'GET', url: request.url, headers: { cookie: session.cookie } })
            : await consolePost(t, session, request.url, request.fields, request.file);
        assert.ok(
          res.statusCode < 500 && res.statusCode !== 404 && !/not found/i.test(res.body),
          `${key}: the owner got ${res.statusCode}: ${res.body.slice(0, 300)}`,
        );
      }
    });

    it('console routes refuse anonymous requests, and a dashboard session does not open the operator console', async () => {
      // The sign-in forms and the one-time sign-in links are for browsers without a session (a link's refusals: test/process/first-run.test.ts).
      const consoleRoutes = t.app.registeredRoutes.filter(
        (r) =>
          r.method !== 'HEAD' &&
          (r.url.startsWith('/dashboard') || r.url.startsWith('/ops')) &&
          !r.url.endsWith('/login') &&
          !r.url.startsWith('/dashboard/login/link/'),
      );
      assert.ok(consoleRoutes.length >= 30, `${consoleRoutes.length} console routes`);
      const m = await payoutReadyMerchant(t, { password: true });
      const dashboard = await signIn(t, m, 'test');
      for (const route of consoleRoutes) {
        const url = route.url.replace(/:(\w+)/g, 'x').replace('*', 'x');
        const cookies = route.url.startsWith('/ops')
          ? ['', dashboard.cookie, dashboard.cookie.replace('sika_dashboard', 'sika_ops')]
          : ['', 'sika_dashboard=forged'];
        for (const cookie of cookies) {
          const res = await t.app.inject({
            method: route.method as 'GET',
            url,
            headers: {
              ...(cookie ? { cookie } : {}),
              ...(route.method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
            },
            payload: route.method === 'POST' ? `_csrf=${dashboard.csrf}` : undefined,
          });
          const context = `${route.method} ${route.url} with ${cookie || 'no cookie'}`;
          if (route.method === 'GET') {
            assert.equal(res.statusCode, 303, `${context}: ${res.statusCode}`);
            assert.match(String(res.headers.location), /\/(dashboard|ops)\/login$/, context);
          } else assert.equal(res.statusCode, 401, `${context}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        }
      }
    });
  });

  describe('SSRF: Live webhook endpoints', () => {
    const TRAP_PORT_PLACEHOLDER = '{trap}';
    /** Each is refused for Live with private targets off, when the endpoint is created and again at every delivery. */
    const SSRF_URLS = [
      // Not https, another scheme, credentials: refused when the endpoint is created.
      'http://hooks.example.com/sika',
      `http://127.0.0.1:${TRAP_PORT_PLACEHOLDER}/hook`,
      'ftp://hooks.example.com/hook',
      'file:///etc/passwd',
      'gopher://127.0.0.1:70/_',
      'javascript:alert(1)',
      'data:text/plain,hello',
      'ws://127.0.0.1/hook',
      'https://user:pass@hooks.example.com/hook',
      'not a url',
      // Private, loopback, link-local, metadata and reserved addresses and localhost, in every spelling.
      'https://127.0.0.1/hook',
      `https://127.0.0.1:${TRAP_PORT_PLACEHOLDER}/hook`,
      'https://10.0.0.1/hook',
      'https://172.16.5.4/hook',
      'https://192.168.1.10/hook',
      'https://169.254.169.254/latest/meta-data/',
      'https://100.100.100.200/latest/meta-data/',
      'https://0.0.0.0/hook',
      'https://[::1]/hook',
      'https://[::]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:169.254.169.254]/hook',
      'https://[fd00:ec2::254]/latest/meta-data/',
      'https://[fc00::1]/hook',
      'https://[fe80::1]/hook',
      'https://[64:ff9b::a9fe:a9fe]/hook',
      'https://[::127.0.0.1]/hook',
      'https://2130706433/hook',
      `https://2130706433:${TRAP_PORT_PLACEHOLDER}/hook`,
      'https://0x7f000001/hook',
      'https://0x7f.1/hook',
      'https://0177.0.0.1/hook',
      'https://127.1/hook',
      'https://0xa9.0xfe.0xa9.0xfe/latest/meta-data/',
      'https://2852039166/latest/meta-data/',
      'https://localhost/hook',
      `https://localhost:${TRAP_PORT_PLACEHOLDER}/hook`,
      'https://LOCALHOST./hook',
      // IPv6 forms that carry an IPv4 address (NAT64, translated, 6to4, Teredo) and site-local (issue 14, finding 2).
      'https://[64:ff9b:1::a9fe:a9fe]/hook',
      'https://[::ffff:0:a9fe:a9fe]/hook',
      'https://[2002:a9fe:a9fe::1]/hook',
      'https://[fec0::1]/hook',
      'https://[2001::1]/hook',
      // Names that resolve to such addresses: looked up at creation, and again at each delivery (DNS can change).
      'https://internal.example.com/hook',
      'https://metadata.example.com/latest/meta-data/',
      `https://rebind.example.com:${TRAP_PORT_PLACEHOLDER}/hook`,
      'https://ula.example.com/hook',
      'https://mapped.example.com/hook',
      'https://nat64.example.com/hook',
      'https://nowhere.invalid/hook',
    ];

    /** A DNS stand-in that answers private addresses (a refused name must never reach a real host), and one public name. */
    const resolver: Resolver = async (hostname) => {
      const table: Record<string, string[]> = {
        'example.com': ['93.184.216.34'], // payoutReadyMerchant's endpoints (nothing is delivered to them here)
        localhost: ['127.0.0.1', '::1'],
        'localhost.': ['127.0.0.1', '::1'],
        'internal.example.com': ['10.0.0.7'],
        'metadata.example.com': ['169.254.169.254'],
        'rebind.example.com': ['127.0.0.1'],
        'ula.example.com': ['fd00:ec2::254'],
        'mapped.example.com': ['::ffff:127.0.0.1'],
        'nat64.example.com': ['64:ff9b::a9fe:a9fe'],
      };
      const answers = table[hostname.toLowerCase()];
      if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };

    let trap: net.Server;
    let trapPort: number;
    let trapConnections = 0;
    /** A hosted deployment: private targets off (BASE_URL is not loopback), names looked up through the stand-in. */
    let hosted: TestContext;
    const urls = () => SSRF_URLS.map((url) => url.replace(TRAP_PORT_PLACEHOLDER, String(trapPort)));

    before(async () => {
      hosted = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'off' }, { webhookResolver: resolver });
      trap = net.createServer((socket) => {
        trapConnections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
      trapPort = (trap.address() as net.AddressInfo).port;
    });
    after(async () => {
      await new Promise<void>((resolve) => trap.close(() => resolve()));
      await hosted.close();
    });

    it('the dashboard refuses every listed Live endpoint URL (not https, another scheme, credentials, a private address or a name resolving to one, localhost); createMerchant adds no endpoint for one', async () => {
      const m = await payoutReadyMerchant(hosted, { password: true });
      const dashboard = await signIn(hosted, m, 'live');
      const liveKey = (
        await hosted.db.query<{ id: string }>(
          "SELECT id FROM api_keys WHERE merchant_id = $1 AND environment = 'live'",
          [m.merchant_id],
        )
      )[0]!.id;
      const endpoints = async () =>
        (
          await hosted.db.query<{ url: string }>(
            "SELECT url FROM webhook_endpoints WHERE merchant_id = $1 AND environment = 'live'",
            [m.merchant_id],
          )
        ).map((r) => r.url);
      const initial = await endpoints();
      for (const url of urls()) {
        const res = await consolePost(hosted, dashboard, '/dashboard/webhooks', { url, api_key_id: liveKey });
        assert.equal(res.statusCode, 400, `${url} was accepted as a Live endpoint: ${res.body.slice(0, 200)}`);
        for (const address of [
          '10.0.0.7',
          '169.254.169.254',
          'fd00:ec2::254',
          '::ffff:127.0.0.1',
          '64:ff9b::a9fe:a9fe',
        ]) {
          assert.ok(!res.body.includes(address), `the refusal of ${url} names ${address}`);
        }
      }
      assert.deepEqual(await endpoints(), initial);
      for (const url of urls()) {
        let created: Awaited<ReturnType<typeof createMerchant>>;
        try {
          created = await createMerchant(
            hosted.db,
            { name: 'SSRF check', email: `ssrf-${randomUUID()}@example.com`, webhookUrl: url },
            hosted.webhookTargets,
          );
        } catch (error) {
          assert.ok(error instanceof SikaError, `${url}: ${String(error)}`);
          assert.equal(statusOf(error), 400, `${url}: ${String(error)}`);
          continue;
        }
        assert.equal(created.live_webhook_secret, null, `${url}: a Live endpoint was created`);
        assert.ok(created.warnings.length > 0, url);
      }
    });

    it('every listed Live endpoint is refused at delivery: nothing is sent, each try is recorded as refused', async () => {
      // Judge every URL first, without the worker: if the rule let one through, no request is ever attempted.
      for (const url of urls()) {
        await assert.rejects(
          resolveTarget(url, 'live', { allowPrivateTargets: false }, resolver),
          UnsafeUrlError,
          `${url} passed the SSRF guard`,
        );
      }
      // A storage of its own, holding only these endpoints (written directly, as if saved before the rule or
      // before their name changed): the worker claims every due delivery it sees.
      let storage: IsolatedStorage | null = null;
      let w: TestContext | null = null;
      try {
        storage = await isolatedStorage();
        w = await startTestApp({ ...storage.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'off' });
        const events: { url: string; id: string }[] = [];
        for (const url of urls()) {
          const m = await w.merchant();
          const liveKey = (
            await w.db.query<{ id: string }>(
              "SELECT id FROM api_keys WHERE merchant_id = $1 AND environment = 'live'",
              [m.merchant_id],
            )
          )[0]!.id;
          await w.db.transaction((tx) =>
            insertWebhookEndpoint(tx, {
              id: randomUUID(),
              merchantId: m.merchant_id,
              environment: 'live',
              apiKeyId: liveKey,
              url,
              secret: `whsec_${randomUUID()}`,
            }),
          );
          const event = await w.db.transaction((tx) =>
            emitEvent(tx, {
              merchantId: m.merchant_id,
              environment: 'live',
              apiKeyId: liveKey,
              type: 'payout.paid',
              objectType: 'payout',
              objectId: `po_ssrf_${events.length}`,
              objectVersion: 1,
              data: {},
            }),
          );
          events.push({ url, id: event.id });
        }
        const worker = new DeliveryWorker(
          w.db,
          captureLogger(),
          defaultDeliveryOptions({
            retryScheduleS: [3_600],
            timeoutMs: 1_000,
            claimTtlS: 10,
            resolver,
            allowPrivateTargets: w.config.webhookAllowPrivateTargets,
          }),
        );
        let claimed = 0;
        for (let pass = 0; pass < 50; pass++) {
          const n = await worker.runOnce();
          if (n === 0) break;
          claimed += n;
        }
        await worker.stop();
        assert.equal(claimed, events.length, 'every delivery was tried once');
        for (const { url, id } of events) {
          const attempts = await attemptsOf(w.db, id);
          assert.equal(attempts.length, 1, url);
          assert.equal(attempts[0]!.http_status, null, `${url} got an HTTP answer`);
          assert.match(attempts[0]!.error ?? '', /^refused: /, `${url}: ${attempts[0]!.error}`);
        }
        assert.equal(trapConnections, 0, 'nothing connected to the local trap');
      } finally {
        await w?.close();
        await storage?.drop();
      }
    });
  });
});
