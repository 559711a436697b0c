// Issue 30 finding 9: raw schema text reached console pages (`id must match format "uuid"`, `payer_account
// must NOT have more than 120 characters`, "The slip is for 12200 pesewas"). Over HTTP on both storages, every
// console route's schema is walked: each field gets a value its schema refuses (outside its set, pattern or
// format, one character too long, sent twice, left out or empty when required) and each path id a malformed
// one; every refusal is a page whose message is a sentence naming the field by its label (its schema's
// title, else its name in words; a path id by what the path holds), with no validator text in it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMerchant } from '../../src/accounts/service.ts';
import type { RegisteredRoute } from '../../src/app.ts';
import { createOperator } from '../../src/ops/service.ts';
import { consoleSentence, fieldWords, pathParamLabel } from '../../src/web/console-messages.ts';
import { HttpConsole, validForm, type FormSchema } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'console-messages-password-1';
const BOGUS = '<b>bogus</b>';
/** What a validator says and a person should never read. */
const RAW = [
  /must match/i,
  /must NOT/,
  /pesewas/i,
  /format "/,
  /must have required property/,
  /must be string/,
  /must be equal to one of/,
  /\b(minLength|maxLength|pattern|enum|additionalProperties|instancePath|querystring|params|body)\b/,
];

interface FieldSchema {
  title?: string;
  maxLength?: number;
  enum?: unknown[];
  pattern?: string;
  format?: string;
  examples?: unknown[];
}
interface PartSchema {
  required?: string[];
  properties?: Record<string, FieldSchema>;
}

const isConsole = (url: string) =>
  url === '/dashboard' || url === '/ops' || url.startsWith('/dashboard/') || url.startsWith('/ops/');
const isLogin = (url: string) => url.endsWith('/login') || url.includes('/login/');
const decode = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
const flashOf = (body: string) => decode(/class="flash[^"]*" role="alert">([^<]*)</.exec(body)?.[1] ?? '');

describe(`console refusals in sentences (${storageKind})`, () => {
  let t: TestContext;
  const browsers = {} as Record<'/dashboard' | '/ops', HttpConsole>;

  before(async () => {
    t = await startTestApp();
    const email = `owner-${randomUUID()}@example.com`;
    await createMerchant(t.db, { name: 'Console Messages Ltd', email, password: PASSWORD, webhookUrl: null });
    const operatorEmail = `operator-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: operatorEmail, password: PASSWORD, role: 'operator' });
    const baseUrl = await t.listen();
    browsers['/dashboard'] = await new HttpConsole(baseUrl, '/dashboard').signedIn(email, PASSWORD);
    browsers['/ops'] = await new HttpConsole(baseUrl, '/ops').signedIn(operatorEmail, PASSWORD);
  });
  after(() => t.close());

  const consoleRoutes = (): RegisteredRoute[] => {
    const seen = new Set<string>();
    return t.app.registeredRoutes.filter((r) => {
      const key = `${r.method} ${r.url}`;
      if (r.method === 'HEAD' || !isConsole(r.url) || isLogin(r.url) || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  };

  /** Asserts a refusal page: a 4xx whose alert is a sentence naming `label`, free of validator text. */
  function assertSentence(res: { status: number; body: string }, label: string, context: string): void {
    assert.ok(res.status >= 400 && res.status < 500, `${context}: ${res.status}`);
    const flash = flashOf(res.body);
    assert.ok(flash, `${context}: the page says what is wrong`);
    assert.ok(flash.toLowerCase().includes(label.toLowerCase()), `${context}: the message names "${label}": ${flash}`);
    assert.match(flash, /^[A-Z].*\.$/, `${context}: a sentence: ${flash}`);
    for (const raw of RAW) assert.doesNotMatch(flash, raw, `${context}: ${flash}`);
    const page = decode(res.body.replace(/<style>[\s\S]*?<\/style>/g, ''));
    for (const raw of [/must match/i, /must NOT/, /format "/]) assert.doesNotMatch(page, raw, `${context}: the page`);
    assert.ok(!res.body.includes(BOGUS), `${context}: the value is not echoed`);
  }

  it('every console field refused by its schema is a sentence naming its label, with no schema text', async () => {
    let checks = 0;
    for (const route of consoleRoutes()) {
      const base = route.url.startsWith('/ops') ? '/ops' : '/dashboard';
      const browser = browsers[base];
      const schema = (route.schema ?? {}) as { querystring?: PartSchema; body?: PartSchema };
      const part = (route.method === 'GET' ? schema.querystring : schema.body) as (PartSchema & FormSchema) | undefined;
      const path = route.url
        .replace(':table', 'banks')
        .replace(':action', base === '/ops' ? 'activate' : 'disable')
        .replace(/:(\w+)/g, randomUUID());
      const send = (fields: Record<string, string> | [string, string][]) =>
        route.method === 'GET' ? browser.get(`${path}?${new URLSearchParams(fields)}`) : browser.post(path, fields);
      for (const [name, field] of Object.entries(part?.properties ?? {})) {
        if (name === '_csrf') continue;
        const label = field.title ?? fieldWords(name);
        const context = `${route.method} ${route.url} ${name}`;
        // The other fields valid, so the refusal is this field's (an id field gets a well-formed id).
        const valid = validForm(
          part,
          Object.fromEntries(
            Object.entries(part?.properties ?? {})
              .filter(([n, f]) => f.format === 'uuid' && n !== name && !f.examples)
              .map(([n]) => [n, randomUUID()]),
          ),
        );
        if (field.enum || field.pattern || field.format) {
          assertSentence(await send({ ...valid, [name]: BOGUS }), label, `${context} outside its set`);
          checks++;
        }
        if (field.maxLength) {
          assertSentence(
            await send({ ...valid, [name]: 'x'.repeat(field.maxLength + 1) }),
            label,
            `${context} too long`,
          );
          checks++;
        }
        const others = Object.entries(valid).filter(([key]) => key !== name);
        assertSentence(await send([...others, [name, 'a'], [name, 'b']]), label, `${context} sent twice`);
        checks++;
        if (part?.required?.includes(name)) {
          assertSentence(await send(Object.fromEntries(others)), label, `${context} left out`);
          assertSentence(await send({ ...Object.fromEntries(others), [name]: '' }), label, `${context} empty`);
          checks += 2;
        }
      }
    }
    assert.ok(checks >= 150, `only ${checks} refusals checked`);
  });

  it('a malformed id in a console path is a sentence naming what the path holds ("The payout id is not valid.")', async () => {
    let checked = 0;
    for (const route of consoleRoutes().filter((r) => r.url.includes(':'))) {
      const params = ((route.schema ?? {}) as { params?: PartSchema }).params;
      for (const [name, field] of Object.entries(params?.properties ?? {})) {
        if (!field.format) continue;
        const base = route.url.startsWith('/ops') ? '/ops' : '/dashboard';
        const url = route.url
          .replace(`:${name}`, 'not-an-id')
          .replace(':table', 'banks')
          .replace(':action', base === '/ops' ? 'activate' : 'disable')
          .replace(/:(\w+)/g, randomUUID());
        const res = route.method === 'GET' ? await browsers[base].get(url) : await browsers[base].post(url, {});
        const label = pathParamLabel(route.url, name);
        assert.doesNotMatch(label, /The id$/, `${route.url}: the id is named by what the path holds`);
        assertSentence(res, label, `${route.method} ${route.url} with a malformed ${name}`);
        assert.equal(flashOf(res.body), `${label} is not valid.`);
        checked++;
      }
    }
    assert.ok(checked >= 10, `only ${checked} path ids checked`);
    const payout = await browsers['/dashboard'].get('/dashboard/webhooks/not-an-id');
    assert.equal(flashOf(payout.body), 'The webhook endpoint id is not valid.');
  });

  it('the sentences of the issue: a refund transfer with a payer account too long, an amount as GHS', async () => {
    const refund = await browsers['/ops'].post(`/ops/refunds/${randomUUID()}/complete`, {
      payer_account: 'x'.repeat(121),
      transfer_reference: 'TRF-1',
    });
    assert.equal(refund.status, 400);
    assert.equal(flashOf(refund.body), 'Payer account can be at most 120 characters.');
    const limit = await browsers['/ops'].post(`/ops/merchants/${randomUUID()}/payouts`, {
      environment: 'live',
      access: 'on',
      paused: 'off',
      limit: '12.345',
      daily_limit: '100.00',
    });
    assert.equal(limit.status, 400);
    assert.equal(
      flashOf(limit.body),
      'Limit per payout is not valid: enter an amount in GHS above zero with at most 2 decimals, e.g. 502.00.',
    );
    const environment = await browsers['/ops'].post(`/ops/merchants/${randomUUID()}/payouts`, {
      environment: 'staging',
      access: 'on',
      paused: 'off',
      limit: '1.00',
      daily_limit: '100.00',
    });
    assert.equal(flashOf(environment.body), 'Environment must be test or live.');
  });

  it("a service's refusal that begins with an API field name names the field in words on the page", async () => {
    assert.equal(consoleSentence('account_number must be 13 digits.'), 'Account number must be 13 digits.');
    assert.equal(
      consoleSentence('The slip is for GHS 122.00; take exactly that amount.'),
      'The slip is for GHS 122.00; take exactly that amount.',
    );
    const res = await browsers['/dashboard'].post('/dashboard/recipients', {
      account_type: 'momo',
      network: 'mtn',
      phone: '0241234567',
    });
    assert.equal(res.status, 400, res.body.slice(0, 300));
    assert.match(flashOf(res.body), /^Account name is required/);
  });
});
