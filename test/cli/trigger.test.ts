// sika trigger (issue 19): every event a Test key can reach is made through the public API of a real,
// listening server, and is then listed by GET /api/v1/events for that merchant; overrides reach the
// main object; the command refuses Live keys and unknown events. Every event type Sika emits (EVENT_TYPES)
// is made: the refund and payout simulators and test_outcome reach the ones only Live reached before.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { WEBHOOK_EVENT_TYPES } from '../../src/cli/event-types.ts';
import { OPERATOR_EVENTS, TRIGGER_EVENTS, TRIGGER_HELP, parseOverrides, trigger } from '../../src/cli/trigger.ts';
import { EVENT_TYPES } from '../../src/events/event-schemas.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI_TIMEOUT_MS = 60_000;
/** Payouts need a webhook endpoint paired with the key (Test too); the workers that would deliver to it are off. */
const WEBHOOK_URL = 'https://example.com/hook';

function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/sika.mjs', ...args],
      { cwd: ROOT, env: { ...process.env, SIKA_API_KEY: '', SIKA_BASE_URL: '', ...env }, timeout: CLI_TIMEOUT_MS },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe(`sika trigger (${storageKind})`, () => {
  let t: TestContext;
  let baseUrl: string;
  before(async () => {
    t = await startTestApp();
    baseUrl = await t.listen();
  });
  after(() => t.close());

  /** The merchant's events of a type, as GET /api/v1/events lists them to its Test key. */
  async function listed(
    m: CreatedMerchant,
    type: string,
    objectId: string,
  ): Promise<{ id: string; type: string; data: Record<string, { id: string }> }[]> {
    const res = await fetch(
      `${baseUrl}/api/v1/events?type=${encodeURIComponent(type)}&object_id=${encodeURIComponent(objectId)}`,
      { headers: { authorization: `Bearer ${m.test_api_key}` } },
    );
    assert.equal(res.status, 200);
    return ((await res.json()) as { data: { id: string; type: string; data: Record<string, { id: string }> }[] }).data;
  }

  it('makes every event type Sika emits (EVENT_TYPES), each listed for the merchant by GET /api/v1/events?type=', {
    timeout: 180_000,
  }, async () => {
    const m = await t.merchant({ webhookUrl: WEBHOOK_URL });
    const other = await t.merchant({ webhookUrl: WEBHOOK_URL });
    const target = { apiKey: m.test_api_key, baseUrl };
    // Every event type has a recipe, but those an operator's decision causes (account.updated).
    assert.deepEqual(
      [...TRIGGER_EVENTS],
      EVENT_TYPES.filter((type) => !(type in OPERATOR_EVENTS)),
    );
    assert.deepEqual(Object.keys(OPERATOR_EVENTS), ['account.updated']);
    assert.equal(EVENT_TYPES.length, 20);
    for (const prefix of ['checkout.session.', 'refund.', 'payout.', 'payment_link.'])
      assert.ok(
        TRIGGER_EVENTS.some((type) => type.startsWith(prefix)),
        prefix,
      );
    const made = new Set<string>();
    // checkout.session.expired waits out the shortest session lifetime (60 s): it runs beside the others.
    const expired = trigger(target, 'checkout.session.expired', {});
    for (const event of TRIGGER_EVENTS.filter((type) => type !== 'checkout.session.expired')) {
      const result = await trigger(target, event, {});
      const found = await listed(m, event, result.objectId);
      assert.equal(found.length >= 1, true, `${event}: listed for the merchant`);
      assert.equal(found[0]!.type, event);
      assert.ok(
        result.events.some((e) => e.id === found[0]!.id && e.type === event),
        `${event}: the command saw the event it reports`,
      );
      // Another merchant's key sees none of it.
      const res = await fetch(`${baseUrl}/api/v1/events?object_id=${result.objectId}`, {
        headers: { authorization: `Bearer ${other.test_api_key}` },
      });
      assert.deepEqual(((await res.json()) as { data: unknown[] }).data, []);
      made.add(event);
    }
    const result = await expired;
    assert.equal((await listed(m, 'checkout.session.expired', result.objectId)).length, 1);
    made.add('checkout.session.expired');
    assert.deepEqual([...made].sort(), [...TRIGGER_EVENTS].sort(), 'each type trigger makes was made and listed');
    // By type alone too: the merchant's list of each type holds the one (or more) trigger made.
    for (const type of TRIGGER_EVENTS) {
      const res = await fetch(`${baseUrl}/api/v1/events?type=${encodeURIComponent(type)}`, {
        headers: { authorization: `Bearer ${m.test_api_key}` },
      });
      const data = ((await res.json()) as { data: { type: string }[] }).data;
      assert.ok(data.length >= 1 && data.every((e) => e.type === type), type);
    }
    assert.deepEqual(
      result.events.map((e) => e.type),
      ['checkout.session.pending', 'checkout.session.expired'],
    );
  });

  it('orders the events of one object as they happened: failed after five reopenings', async () => {
    const m = await t.merchant({ webhookUrl: WEBHOOK_URL });
    const result = await trigger({ apiKey: m.test_api_key, baseUrl }, 'checkout.session.failed', {});
    const types = result.events.map((e) => e.type);
    assert.equal(types.at(-1), 'checkout.session.failed');
    assert.equal(types.filter((type) => type === 'checkout.session.reopened').length, 4);
    assert.equal(types.filter((type) => type === 'checkout.session.pending').length, 5);
  });

  it('puts --override fields, dotted ones nested, into the main object: the session, the refund, the payout', async () => {
    const m = await t.merchant({ webhookUrl: WEBHOOK_URL });
    const target = { apiKey: m.test_api_key, baseUrl };
    const get = async (path: string) =>
      (await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${m.test_api_key}` } })).json() as Promise<
        Record<string, unknown>
      >;

    const session = await trigger(
      target,
      'checkout.session.completed',
      parseOverrides(['amount_minor=1234', 'customer.name=Ama Serwaa', 'customer.email=ama@example.com']),
    );
    const s = await get(`/api/v1/sessions/${session.objectId}`);
    assert.equal(s.amount_minor, 1234);
    assert.deepEqual(s.customer, { name: 'Ama Serwaa', email: 'ama@example.com' });
    assert.equal(s.status, 'success');

    const refund = await trigger(target, 'refund.succeeded', parseOverrides(['amount_minor=700', 'reason=damaged']));
    const r = await get(`/api/v1/refunds/${refund.objectId}`);
    assert.equal(r.amount_minor, 700);
    assert.equal(r.reason, 'damaged');
    assert.equal(r.status, 'succeeded');

    const payout = await trigger(target, 'payout.paid', parseOverrides(['amount_minor=25000']));
    const p = await get(`/api/v1/payouts/${payout.objectId}`);
    assert.equal(p.amount_minor, 25000);
    assert.equal(p.status, 'paid');
  });

  it('reads override values as JSON when they are, else as text, and refuses malformed ones', () => {
    assert.deepEqual(parseOverrides(['a=1', 'b=true', 'c=null', 'd=0241234567', 'e.f.g=x=y', 'h="12"']), {
      a: 1,
      b: true,
      c: null,
      d: '0241234567',
      e: { f: { g: 'x=y' } },
      h: '12',
    });
    assert.throws(() => parseOverrides(['=1']), /FIELD=VALUE/);
    assert.throws(() => parseOverrides(['novalue']), /FIELD=VALUE/);
    assert.throws(() => parseOverrides(['a=1', 'a.b=2']), /already set/);
  });

  it('runs as `sika trigger` with the key and server from the environment, and prints what it made', async () => {
    const m = await t.merchant({ webhookUrl: WEBHOOK_URL });
    const run = await runCli(['trigger', 'refund.failed', '--json'], {
      SIKA_API_KEY: m.test_api_key,
      SIKA_BASE_URL: baseUrl,
    });
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as {
      event: string;
      objectId: string;
      created: { kind: string; id: string }[];
      events: { type: string }[];
    };
    assert.equal(result.event, 'refund.failed');
    assert.deepEqual(
      result.created.map((c) => c.kind),
      ['checkout session', 'payment attempt', 'refund'],
    );
    assert.deepEqual(
      result.events.map((e) => e.type),
      ['refund.created', 'refund.failed'],
    );
    assert.equal((await listed(m, 'refund.failed', result.objectId)).length, 1);

    const plain = await runCli([
      'trigger',
      'checkout.session.pending',
      '--api-key',
      m.test_api_key,
      '--base-url',
      baseUrl,
    ]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /created\s+checkout session\s+\S+/);
    assert.match(plain.stdout, /event\s+checkout\.session\.pending\s+evt_/);
  });

  it('refuses a Live key before sending anything, with exit 2', async () => {
    const m = await t.merchant({ webhookUrl: WEBHOOK_URL });
    const run = await runCli([
      'trigger',
      'checkout.session.completed',
      '--api-key',
      m.live_api_key,
      '--base-url',
      baseUrl,
    ]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /Test keys only, and this is a Live key/);
    const res = await fetch(`${baseUrl}/api/v1/events`, { headers: { authorization: `Bearer ${m.live_api_key}` } });
    assert.deepEqual(((await res.json()) as { data: unknown[] }).data, []);
  });

  it('names the list for an unknown event (exit 2)', async () => {
    const unknown = await runCli(['trigger', 'checkout.session.teleported', '--api-key', 'ak_test_x']);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /unknown event checkout\.session\.teleported; trigger makes: checkout\.session\.\w+, /,
    );
    assert.match(unknown.stderr, /payout\.returned/);
  });

  it('--help lists every event with how it is made', async () => {
    const run = await runCli(['trigger', '--help']);
    assert.equal(run.code, 0);
    assert.equal(run.stdout.trim(), TRIGGER_HELP);
    assert.deepEqual([...TRIGGER_EVENTS, ...Object.keys(OPERATOR_EVENTS)].sort(), [...WEBHOOK_EVENT_TYPES].sort());
    assert.doesNotMatch(run.stdout, /not possible/);
    for (const type of WEBHOOK_EVENT_TYPES)
      assert.match(run.stdout, new RegExp(`^  ${type.replaceAll('.', '\\.')} `, 'm'), type);
  });
});
