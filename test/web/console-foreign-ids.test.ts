// A foreign id is a 404 everywhere on the merchant dashboard (issue 29, item 7): another merchant's key,
// endpoint, session, payout, refund, recipient, integration, event or payment link, and the other environment's, whether
// in the path or in a form field or query, gets the answer an unknown id gets, and nothing changes. The
// routes come from the app (app.registeredRoutes), so a new route with an id is walked too, or fails here
// until the walk knows what its id names. Over real HTTP, on both storages; the owner's own ids get past
// the lookup (the fixtures are real).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/index.ts';
import type { RegisteredRoute } from '../../src/app.ts';
import type { Environment } from '../../src/lib/environment.ts';
import { createPaymentLink } from '../../src/checkout/payment-links.ts';
import { LivePayoutSimulator } from '../../src/rails/payouts.ts';
import { HttpConsole, validForm, type FormSchema, type HttpAnswer } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { createObjects, payoutReadyMerchant, type Merchant } from '../reliability/api-support.ts';

type Kind = 'session' | 'payout' | 'refund' | 'recipient' | 'apiKey' | 'endpoint' | 'event' | 'integration' | 'link';
type Ids = Record<Kind, string>;

/** What a path id names, by the path segment before it. */
const PATH_KINDS: Record<string, Kind> = {
  sessions: 'session',
  payouts: 'payout',
  refunds: 'refund',
  recipients: 'recipient',
  keys: 'apiKey',
  webhooks: 'endpoint',
  events: 'event',
  links: 'link',
};
/** Path parameters that are not ids: a value the route takes. */
const PATH_WORDS: Record<string, string> = { action: 'disable' };
/** What a form field or query parameter naming an object names. */
const FIELD_KINDS: Record<string, Kind> = {
  recipient_id: 'recipient',
  previous_version_id: 'recipient',
  replace: 'recipient',
  api_key_id: 'apiKey',
  integration_id: 'integration',
  endpoint_id: 'endpoint',
  refund: 'refund',
};
/** Ids of objects every merchant shares (reference data), never foreign. */
const SHARED_FIELDS = new Set(['bank_id']);

interface Schema {
  body?: FormSchema;
  querystring?: FormSchema;
}

/** Every row of the merchant in every table with a merchant_id (last_used_at aside). */
async function snapshot(db: Db, merchantIds: string[]): Promise<string> {
  const tables = await db.query<{ table_name: string }>(
    "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'merchant_id' AND table_schema = current_schema() ORDER BY table_name",
  );
  const out: Record<string, string[]> = {};
  for (const { table_name: table } of tables) {
    const rows = await db.query<{ j: Record<string, unknown> | string }>(
      `SELECT row_to_json(x) AS j FROM "${table}" x WHERE merchant_id = ANY($1)`,
      [merchantIds],
    );
    out[table] = rows
      .map(({ j }) => {
        const row = typeof j === 'string' ? (JSON.parse(j) as Record<string, unknown>) : { ...j };
        delete row.last_used_at;
        return JSON.stringify(row);
      })
      .sort();
  }
  return JSON.stringify(out);
}

async function idsOf(t: TestContext, m: Merchant, environment: Environment): Promise<Ids> {
  const o = await createObjects(t, m, environment);
  const one = async (sql: string, params: unknown[] = [m.merchant_id, environment]) => {
    const [row] = await t.db.query<{ id: string }>(sql, params);
    assert.ok(row, sql);
    return row.id;
  };
  return {
    // The session whose payment the refund is of: its page names the refund.
    session: await one('SELECT session_id AS id FROM refunds WHERE id = $1', [o.refund]),
    payout: o.payout,
    refund: o.refund,
    recipient: o.recipient,
    apiKey: await one(
      'SELECT id FROM api_keys WHERE merchant_id = $1 AND environment = $2 AND revoked_at IS NULL ORDER BY created_at LIMIT 1',
    ),
    endpoint: await one(
      'SELECT id FROM webhook_endpoints WHERE merchant_id = $1 AND environment = $2 ORDER BY created_at LIMIT 1',
    ),
    event: o.event,
    integration: await one(
      'SELECT id FROM integrations WHERE merchant_id = $1 AND environment = $2 ORDER BY created_at LIMIT 1',
    ),
    link: (
      await createPaymentLink(
        t.db,
        { merchantId: m.merchant_id, environment, apiKeyId: null, userId: null },
        { name: `Isolation ${environment}`, amount_minor: 1_000 },
        t.config.checkoutUrlHost,
      )
    ).id,
  };
}

const isNotFound = (res: HttpAnswer) => res.status === 404;

describe(`dashboard: a foreign id is a 404 everywhere (${storageKind})`, () => {
  let t: TestContext;
  let browser: HttpConsole;
  let owner: Merchant;
  let other: Merchant;
  let own: Ids;
  /** Another merchant's objects (same environment), and the owner's own in the other environment. */
  const foreign = {} as Record<'another merchant' | 'the other environment', Ids>;
  let bankId: string;

  before(async () => {
    t = await startTestApp({}, { payoutRail: new LivePayoutSimulator() });
    owner = await payoutReadyMerchant(t, { password: true });
    other = await payoutReadyMerchant(t, { password: true });
    own = await idsOf(t, owner, 'test');
    foreign['another merchant'] = await idsOf(t, other, 'test');
    foreign['the other environment'] = await idsOf(t, owner, 'live');
    bankId = (await t.db.query<{ id: string }>('SELECT id FROM banks WHERE active ORDER BY name LIMIT 1'))[0]!.id;
    // The dashboard opens on Test.
    browser = await new HttpConsole(await t.listen()).signedIn(owner.email, owner.password);
  });
  after(() => t.close());

  const dashboardRoutes = (): RegisteredRoute[] => {
    const seen = new Set<string>();
    return t.app.registeredRoutes.filter((r) => {
      const key = `${r.method} ${r.url}`;
      if (
        r.method === 'HEAD' ||
        !r.url.startsWith('/dashboard/') ||
        r.url.startsWith('/dashboard/login') ||
        seen.has(key)
      )
        return false;
      seen.add(key);
      return true;
    });
  };
  const pathWith = (url: string, ids: Ids) =>
    url
      .replace(/\/([^/]+)\/:(\w+)/g, (_all, segment: string, param: string) => {
        if (param in PATH_WORDS) return `/${segment}/${PATH_WORDS[param]}`;
        const kind = PATH_KINDS[segment];
        assert.ok(kind, `${url}: what does :${param} after /${segment}/ name? Add it to PATH_KINDS`);
        return `/${segment}/${ids[kind]}`;
      })
      .replace(/:(\w+)/g, (_all, param: string) => PATH_WORDS[param] ?? assert.fail(`${url}: a value for :${param}`));
  /** The route's form or query with the owner's own ids and valid values, `changes` applied. */
  const input = (route: RegisteredRoute, changes: Record<string, string> = {}) => {
    const schema = ((route.schema ?? {}) as Schema)[route.method === 'GET' ? 'querystring' : 'body'];
    const typed: Record<string, string> = {
      client_reference: `iso-${randomUUID()}`,
      account_name: 'Isolation Check',
      account_number: '1234567890',
      url: 'http://127.0.0.1:9/hook',
    };
    const values: Record<string, string> = {};
    for (const name of Object.keys(schema?.properties ?? {})) {
      if (FIELD_KINDS[name] && schema?.required?.includes(name)) values[name] = own[FIELD_KINDS[name]];
      if (SHARED_FIELDS.has(name)) values[name] = bankId;
      if (typed[name]) values[name] = typed[name];
    }
    return validForm(schema, { ...values, ...changes });
  };
  const send = (route: RegisteredRoute, path: string, fields: Record<string, string>) =>
    route.method === 'GET'
      ? browser.get(Object.keys(fields).length ? `${path}?${new URLSearchParams(fields)}` : path)
      : browser.post(path, fields);

  it("every dashboard form field and query parameter naming an object answers another merchant's id and the other environment's with 404, and changes nothing", async () => {
    const merchants = [owner.merchant_id, other.merchant_id];
    const unknownIdFields: string[] = [];
    let checked = 0;
    for (const route of dashboardRoutes()) {
      const schema = ((route.schema ?? {}) as Schema)[route.method === 'GET' ? 'querystring' : 'body'];
      for (const name of Object.keys(schema?.properties ?? {})) {
        if (name.endsWith('_id') && !FIELD_KINDS[name] && !SHARED_FIELDS.has(name))
          unknownIdFields.push(`${route.method} ${route.url} ${name}`);
        const kind = FIELD_KINDS[name];
        if (!kind) continue;
        const path = pathWith(route.url, own);
        const before = await snapshot(t.db, merchants);
        for (const [whose, ids] of Object.entries(foreign)) {
          const res = await send(route, path, input(route, { [name]: ids[kind] }));
          const context: string = `${route.method} ${route.url} with ${name} = ${whose}'s ${kind}`;
          assert.equal(
            res.status,
            404,
            `${context}: ${res.status} ${res.body.replace(/<style>[\s\S]*<\/style>/, '').slice(0, 300)}`,
          );
          assert.match(res.body, /not found/i, `${context}: the answer says so`);
          checked++;
        }
        assert.equal(
          await snapshot(t.db, merchants),
          before,
          `${route.method} ${route.url} ${name}: a foreign id changed data`,
        );
        const mine = await send(route, path, input(route, { [name]: own[kind] }));
        assert.ok(
          !isNotFound(mine) && mine.status < 500,
          `${route.method} ${route.url} with ${name} = the owner's own ${kind}: ${mine.status} ${mine.body.slice(0, 300)}`,
        );
      }
    }
    assert.deepEqual(
      unknownIdFields,
      [],
      'say what each id field names (FIELD_KINDS), or that it is shared (SHARED_FIELDS)',
    );
    // recipient_id (new payout, fee quote), api_key_id (new payout, webhook), integration_id, endpoint_id, previous_version_id, replace, refund.
    assert.ok(checked >= 18, `only ${checked} foreign ids sent in fields`);
  });

  it("every dashboard route with an id in its path answers another merchant's id and the other environment's id with 404, and changes nothing", async () => {
    const routes = dashboardRoutes().filter((r) => r.url.includes(':'));
    assert.ok(routes.length >= 13, `only ${routes.length} dashboard routes with a path id`);
    const merchants = [owner.merchant_id, other.merchant_id];
    for (const route of routes) {
      const before = await snapshot(t.db, merchants);
      for (const [whose, ids] of Object.entries(foreign)) {
        const res = await send(route, pathWith(route.url, ids), input(route));
        const context = `${route.method} ${route.url} with ${whose}'s id`;
        assert.equal(
          res.status,
          404,
          `${context}: ${res.status} ${res.body.replace(/<style>[\s\S]*<\/style>/, '').slice(0, 300)}`,
        );
        assert.match(res.type, /^text\/html/, context);
        assert.match(res.body, /not found/i, `${context}: the page says so`);
      }
      assert.equal(await snapshot(t.db, merchants), before, `${route.method} ${route.url}: a foreign id changed data`);
    }
    // The fixtures are real: the owner's own ids get past the lookup (last: this revokes, cancels, disables).
    for (const route of routes) {
      const res = await send(route, pathWith(route.url, own), input(route));
      assert.ok(
        !isNotFound(res) && res.status < 500,
        `${route.method} ${route.url} with the owner's own id: ${res.status} ${res.body.slice(0, 300)}`,
      );
    }
  });

  it("revoking another merchant's API key, or the other environment's, is a 404 and the key keeps working", async () => {
    for (const [whose, ids] of Object.entries(foreign)) {
      const res = await browser.post(`/dashboard/keys/${ids.apiKey}/revoke`);
      assert.equal(res.status, 404, `${whose}: ${res.body.slice(0, 300)}`);
      assert.match(res.body, /API key not found/);
      const [row] = await t.db.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE id = $1', [
        ids.apiKey,
      ]);
      assert.equal(row?.revoked_at, null, `${whose}'s key is not revoked`);
    }
    const stillWorks = await fetch(`${await t.listen()}/api/v1/revenue-lines`, {
      headers: { authorization: `Bearer ${other.test_api_key}` },
    });
    assert.equal(stillWorks.status, 200);
  });
});
