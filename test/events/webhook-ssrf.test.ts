// The one rule for webhook targets (DESIGN §3 Webhooks), in Test and in Live alike: http or https (https for
// Live), no credentials, no redirect followed, and, unless the deployment sets WEBHOOK_ALLOW_PRIVATE_TARGETS=on,
// a host that resolves only to public unicast addresses. It is applied when an endpoint is created (createMerchant,
// the dashboard form) and before every delivery, and no refusal names a resolved address. Nothing here connects
// anywhere but 127.0.0.1 and ::1: names are "resolved" by stub resolvers (localhost once by the system's).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { insertWebhookEndpoint } from '../../src/accounts/store.ts';
import { ConfigError, loadConfig, type Config } from '../../src/config/index.ts';
import { DeliveryWorker, defaultDeliveryOptions } from '../../src/events/delivery.ts';
import { emitEvent } from '../../src/events/outbox.ts';
import {
  isBlockedAddress,
  isLoopbackHost,
  RESOLVE_TIMEOUT_MS,
  resolveTarget,
  systemResolver,
  targetUrlProblem,
  UnsafeUrlError,
  type Resolver,
  type TargetPolicy,
} from '../../src/lib/ssrf.ts';
import { listTries } from '../../src/events/store.ts';
import { buildApp } from '../../src/app.ts';
import { deliveryWorkerFor } from '../../src/workers.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import {
  attemptsOf,
  captureLogger,
  deliveryOf,
  emitTestEvent,
  isolatedTestApp,
  liveKeyId,
  startReceiver,
  testKeyId,
  type Receiver,
} from '../support/webhooks.ts';
import { statusOf } from '../../src/http/errors.ts';
import { SikaError } from '../../src/lib/errors.ts';

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:2800:220:1:248:1893:25c8:1946';
const STRICT: TargetPolicy = { allowPrivateTargets: false };
const OPEN: TargetPolicy = { allowPrivateTargets: true };
const PRIVATE_REFUSAL = /resolves to a private or reserved address/;

/** Issue 14, findings 1 and 2: each host was accepted, and delivered to, before the one rule. */
const ISSUE_HOSTS = [
  '127.0.0.1',
  'localhost',
  'loopback.example.com', // a name resolving to 127.0.0.1
  '[::1]',
  '[::ffff:127.0.0.1]',
  '2130706433',
  '0.0.0.0',
  '169.254.169.254',
  '10.0.0.1',
  '192.168.1.1',
  '[64:ff9b:1::a9fe:a9fe]',
  '[::ffff:0:a9fe:a9fe]',
  '[2002:a9fe:a9fe::1]',
  '[fec0::1]',
  '[2001::1]',
];
const ENVIRONMENTS = ['test', 'live'] as const;
type Environment = (typeof ENVIRONMENTS)[number];
/** An endpoint URL as a merchant would give it in that environment (Live needs https). */
const urlFor = (environment: Environment, host: string, port = 8443) =>
  `${environment === 'live' ? 'https' : 'http'}://${host}:${port}/hook`;

/** A resolver that answers from a table and records what it was asked; unknown names do not resolve. */
function stubResolver(table: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolver = async (hostname: string) => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolver, { asked });
}

const RESOLVER_TABLE: Record<string, string[]> = {
  'hooks.example.com': [PUBLIC_V4],
  'v6.example.com': [PUBLIC_V6],
  'loopback.example.com': ['127.0.0.1'],
  'internal.example.com': ['127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'mixed.example.com': [PUBLIC_V4, '10.0.0.7'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'ula.example.com': ['fd00:ec2::254'],
  'nat64.example.com': ['64:ff9b:1::a9fe:a9fe'],
};
const publicResolver = () => stubResolver(RESOLVER_TABLE);

/** Every address the stub table can answer with that is not public: no refusal may contain one. */
const PRIVATE_ANSWERS = [...new Set(Object.values(RESOLVER_TABLE).flat())].filter(
  (address) => address !== PUBLIC_V4 && address !== PUBLIC_V6,
);

function assertNamesNoAddress(text: string, context: string, addresses: string[] = PRIVATE_ANSWERS) {
  for (const address of addresses)
    assert.ok(!text.includes(address), `${context}: ${JSON.stringify(text.slice(0, 300))} names ${address}`);
}

async function assertRefused(
  url: string,
  environment: Environment,
  policy: TargetPolicy,
  resolver: Resolver,
  message?: RegExp,
) {
  await assert.rejects(resolveTarget(url, environment, policy, resolver), (error: unknown) => {
    assert.ok(error instanceof UnsafeUrlError, `${url}: expected UnsafeUrlError, got ${String(error)}`);
    if (message) assert.match(error.message, message, url);
    assertNamesNoAddress(error.message, url);
    return true;
  });
}

describe('webhook target rule: resolveTarget and isBlockedAddress', () => {
  it('Live refuses plain http even for a public name, whether private targets are allowed or not', async () => {
    const resolver = publicResolver();
    for (const policy of [STRICT, OPEN]) {
      await assertRefused('http://hooks.example.com/sika', 'live', policy, resolver, /https/);
      await assertRefused(`http://${PUBLIC_V4}/sika`, 'live', policy, resolver, /https/);
    }
  });

  it("with private targets off, every host of the issue's findings 1 and 2 is refused in Test and in Live, naming no address", async () => {
    const resolver = publicResolver();
    for (const environment of ENVIRONMENTS) {
      for (const host of ISSUE_HOSTS)
        await assertRefused(urlFor(environment, host), environment, STRICT, resolver, PRIVATE_REFUSAL);
    }
    assert.deepEqual(
      resolver.asked,
      ['loopback.example.com', 'loopback.example.com'],
      'literals and localhost are judged without a lookup',
    );
  });

  it('with private targets off, loopback, private, link-local, metadata and special-purpose literals in every spelling are refused', async () => {
    const resolver = publicResolver();
    for (const url of [
      'https://127.0.0.1/',
      'https://127.0.0.1:8443/hook',
      'https://10.0.0.1/',
      'https://172.16.5.4/',
      'https://192.168.1.10/',
      'https://169.254.169.254/latest/meta-data/',
      'https://100.100.100.200/',
      'https://100.64.0.1/',
      'https://0.0.0.0/',
      'https://255.255.255.255/',
      'https://192.0.2.1/',
      'https://198.18.0.1/',
      'https://224.0.0.1/',
      'https://[::1]/',
      'https://[::]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:169.254.169.254]/',
      'https://[fd00:ec2::254]/',
      'https://[fe80::1]/',
      'https://[ff02::1]/',
      'https://[2001:db8::1]/',
      'https://[64:ff9b::7f00:1]/',
      'https://[64:ff9b::808:808]/', // NAT64 of a public address: the translator is on the operator's network
      'https://[64:ff9b:1::a9fe:a9fe]/',
      'https://[::ffff:0:a9fe:a9fe]/',
      'https://[2002:a9fe:a9fe::1]/',
      'https://[2002:808:808::1]/',
      'https://[2001::1]/',
      'https://[fec0::1]/',
      'https://[::127.0.0.1]/', // IPv4-compatible form (the URL parser writes it [::7f00:1])
      // Other spellings of 127.0.0.1 that the WHATWG URL parser normalises before the rule sees them.
      'https://2130706433/',
      'https://0x7f.1/',
      'https://0x7f000001/',
      'https://017700000001/',
      'https://0177.0.0.1/',
      'https://127.1/',
      'https://0xa9.0xfe.0xa9.0xfe/',
      'https://LOCALHOST./',
      'https://api.localhost/',
    ]) {
      await assertRefused(url, 'live', STRICT, resolver, PRIVATE_REFUSAL);
      await assertRefused(url.replace('https:', 'http:'), 'test', STRICT, resolver, PRIVATE_REFUSAL);
    }
    assert.deepEqual(resolver.asked, [], 'address literals and localhost names are judged without a DNS lookup');
  });

  it('a name resolving to a private address, or one private answer among public ones, is refused without naming the address', async () => {
    const resolver = publicResolver();
    for (const environment of ENVIRONMENTS) {
      for (const name of [
        'internal.example.com',
        'metadata.example.com',
        'mixed.example.com',
        'mapped.example.com',
        'ula.example.com',
        'nat64.example.com',
      ]) {
        await assertRefused(urlFor(environment, name), environment, STRICT, resolver, PRIVATE_REFUSAL);
      }
    }
  });

  it('the real localhost through the system resolver is refused with private targets off', async () => {
    await assertRefused('https://localhost/hook', 'live', STRICT, systemResolver, PRIVATE_REFUSAL);
    await assert.rejects(
      resolveTarget('http://localhost:8443/hook', 'test', STRICT),
      UnsafeUrlError,
      'the system resolver is the default',
    );
  });

  it('a name that does not resolve, a URL with credentials, a non-http scheme or a non-URL is refused under either setting', async () => {
    const resolver = publicResolver();
    for (const policy of [STRICT, OPEN]) {
      await assertRefused('https://nowhere.example.com/hook', 'live', policy, resolver, /does not resolve/);
      await assertRefused('https://nowhere.example.com/hook', 'test', policy, resolver, /does not resolve/);
      await assertRefused('https://user:pass@hooks.example.com/hook', 'live', policy, resolver, /credentials/);
      await assertRefused('http://user@127.0.0.1/hook', 'test', policy, resolver, /credentials/);
      await assertRefused('ftp://hooks.example.com/hook', 'test', policy, resolver, /http/);
      await assertRefused('file:///etc/passwd', 'test', policy, resolver);
      await assertRefused('not a url', 'test', policy, resolver, /absolute URL/);
      await assertRefused('', 'live', policy, resolver);
      await assertRefused(
        'https://empty.example.com/',
        'live',
        policy,
        Object.assign(async () => [], {}),
        /does not resolve/,
      );
    }
  });

  it('with private targets off, a name that does not resolve and a name that resolves to a private address get the same answer (no map of internal names)', async () => {
    const resolver: Resolver = async (hostname) => {
      if (hostname === 'db.internal.example') return [{ address: '10.1.2.3', family: 4 }];
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    };
    const problems = await Promise.all(
      ['https://db.internal.example/hook', 'https://nothing.internal.example/hook'].map((url) =>
        targetUrlProblem(url, 'live', STRICT, resolver),
      ),
    );
    assert.ok(problems[0], 'the private name is refused');
    assert.equal(problems[1], problems[0], 'an unknown name is refused with the same words');
    assert.doesNotMatch(problems[0]!, /10\.1\.2\.3|db\.internal|nothing\.internal/);
    // With private targets allowed (a developer's machine) there is nothing to hide: a typo is named as such.
    await assert.rejects(
      resolveTarget('https://nothing.internal.example/hook', 'test', OPEN, resolver),
      /names a host that does not resolve/,
    );
  });

  it(`a lookup that does not answer is refused after RESOLVE_TIMEOUT_MS (${RESOLVE_TIMEOUT_MS} ms), not before`, async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let outcome: unknown = 'pending';
    const silent: Resolver = () => new Promise(() => {});
    const judged = resolveTarget('https://slow.example.com/hook', 'live', STRICT, silent).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    void judged.then((value) => (outcome = value));
    t.mock.timers.tick(RESOLVE_TIMEOUT_MS - 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(outcome, 'pending', 'still waiting 1 ms before the limit');
    t.mock.timers.tick(1);
    const error = await judged;
    assert.ok(error instanceof UnsafeUrlError, String(error));
    assert.match(error.message, new RegExp(`did not resolve within ${RESOLVE_TIMEOUT_MS} ms`));
  });

  it('public names and literals are allowed with private targets off, and the connection is pinned to the checked address', async () => {
    const resolver = publicResolver();
    const v4 = await resolveTarget('https://hooks.example.com/sika?x=1', 'live', STRICT, resolver);
    assert.equal(v4.address, PUBLIC_V4);
    assert.equal(v4.family, 4);
    assert.equal(v4.url.href, 'https://hooks.example.com/sika?x=1');
    const v6 = await resolveTarget('https://v6.example.com/sika', 'live', STRICT, resolver);
    assert.deepEqual([v6.address, v6.family], [PUBLIC_V6, 6]);
    const literal = await resolveTarget(`https://${PUBLIC_V4}/sika`, 'live', STRICT, resolver);
    assert.deepEqual([literal.address, literal.family], [PUBLIC_V4, 4]);
    const literal6 = await resolveTarget(`https://[${PUBLIC_V6}]/sika`, 'live', STRICT, resolver);
    assert.deepEqual([literal6.address, literal6.family], [PUBLIC_V6, 6]);
    for (const [url, address] of [
      ['http://8.8.8.8/hook', '8.8.8.8'],
      ['http://[2606:4700::1111]/hook', '2606:4700::1111'],
      ['http://[::ffff:8.8.8.8]/hook', '::ffff:808:808'],
    ] as const) {
      assert.equal((await resolveTarget(url, 'test', STRICT, resolver)).address, address, url);
    }
    assert.deepEqual(resolver.asked, ['hooks.example.com', 'v6.example.com']);
  });

  it("with private targets allowed (a developer's machine), Test and Live endpoints may use loopback and private addresses", async () => {
    const resolver = publicResolver();
    const local = await resolveTarget('http://127.0.0.1:8080/hook', 'test', OPEN, resolver);
    assert.deepEqual([local.address, local.family, local.url.port], ['127.0.0.1', 4, '8080']);
    const named = await resolveTarget('http://internal.example.com/hook', 'test', OPEN, resolver);
    assert.equal(named.address, '127.0.0.1');
    const v6 = await resolveTarget('http://[::1]:9000/hook', 'test', OPEN, resolver);
    assert.deepEqual([v6.address, v6.family], ['::1', 6]);
    const localhost = await resolveTarget('http://localhost:9000/hook', 'test', OPEN);
    assert.ok(['127.0.0.1', '::1'].includes(localhost.address), localhost.address);
    const live = await resolveTarget('https://10.0.0.1:8443/hook', 'live', OPEN, resolver);
    assert.equal(live.address, '10.0.0.1');
  });

  describe('isBlockedAddress', () => {
    const blocked = [
      '0.0.0.0',
      '0.1.2.3',
      '10.0.0.1',
      '10.255.255.255',
      '100.64.0.1',
      '100.100.100.200',
      '100.127.255.254',
      '127.0.0.1',
      '127.255.255.254',
      '169.254.0.1',
      '169.254.169.254',
      '172.16.0.1',
      '172.31.255.255',
      '192.0.0.8',
      '192.0.2.1',
      '192.88.99.1',
      '192.168.0.1',
      '192.168.255.255',
      '198.18.0.1',
      '198.19.255.255',
      '198.51.100.7',
      '203.0.113.9',
      '224.0.0.1',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      'fc00::1',
      'fd00:ec2::254',
      'fdff:ffff::1',
      'fe80::1',
      'fe80::1%lo',
      'febf::1',
      'fec0::1',
      'ff02::1',
      '2001:db8::1',
      '3fff::1',
      '2001:2::1',
      '100::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::FFFF:7F00:1',
      '::ffff:10.0.0.1',
      '::ffff:a9fe:a9fe',
      '::ffff:192.168.1.1',
      '64:ff9b::127.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::808:808',
      '64:ff9b:1::a9fe:a9fe',
      '64:ff9b:1::808:808',
      '::ffff:0:a9fe:a9fe',
      '::ffff:0:808:808',
      '2002:a9fe:a9fe::1',
      '2002:808:808::1',
      '2001::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '::127.0.0.1',
      '::7f00:1',
      '::a00:1',
      '::a9fe:a9fe',
      '::808:808',
      // Not the canonical text a resolver or the URL parser hands over: never trusted.
      '2130706433',
      '0x7f.1',
      '0177.0.0.1',
      'not-an-address',
      '',
      'localhost',
      '127.0.0.1.nip.io',
    ];
    const allowed = [
      '93.184.216.34',
      '8.8.8.8',
      '1.1.1.1',
      '9.255.255.255',
      '11.0.0.1',
      '100.63.255.255',
      '100.128.0.1',
      '126.255.255.255',
      '128.0.0.1',
      '169.253.255.255',
      '169.255.0.1',
      '172.15.255.255',
      '172.32.0.1',
      '192.167.255.255',
      '192.169.0.1',
      '198.17.255.255',
      '198.20.0.1',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2606:4700::1111',
      PUBLIC_V6,
      '2001:4860:4860::8888',
      '::ffff:93.184.216.34',
      '::ffff:5db8:d822',
    ];
    for (const address of blocked) {
      it(`blocks ${JSON.stringify(address)}`, () => assert.equal(isBlockedAddress(address), true));
    }
    it('allows public IPv4 and IPv6 addresses, including public IPv4 written as IPv4-mapped IPv6', () => {
      assert.deepEqual(
        allowed.filter((address) => isBlockedAddress(address)),
        [],
      );
    });
  });

  it('isLoopbackHost is true for 127.0.0.0/8, ::1 and localhost only', () => {
    const loopback = [
      '127.0.0.1',
      '127.5.6.7',
      '[::1]',
      '::1',
      'localhost',
      'LOCALHOST',
      'localhost.',
      '::ffff:127.0.0.1',
    ];
    const other = [
      '0.0.0.0',
      '10.0.0.1',
      '192.168.1.1',
      'sika.test',
      'pay.example.com',
      '[::]',
      '8.8.8.8',
      'localhost.example.com',
      '128.0.0.1',
    ];
    assert.deepEqual(
      loopback.filter((host) => !isLoopbackHost(host)),
      [],
    );
    assert.deepEqual(
      other.filter((host) => isLoopbackHost(host)),
      [],
    );
  });
});

describe('WEBHOOK_ALLOW_PRIVATE_TARGETS', () => {
  const load = (env: Record<string, string>) => loadConfig({ LOG_LEVEL: 'silent', ...env });

  it('defaults to on only when BASE_URL (or, without one, HOST) is loopback', () => {
    for (const baseUrl of [
      'http://127.0.0.1:8080',
      'http://127.9.9.9',
      'http://[::1]:8080',
      'http://localhost:8080',
      'https://localhost',
    ]) {
      assert.equal(load({ BASE_URL: baseUrl }).webhookAllowPrivateTargets, true, baseUrl);
    }
    for (const baseUrl of [
      'https://pay.example.com',
      'http://sika.test',
      'http://10.0.0.1:8080',
      'http://192.168.1.5',
      'http://0.0.0.0:8080',
      'http://[fd00::1]',
    ]) {
      assert.equal(load({ BASE_URL: baseUrl }).webhookAllowPrivateTargets, false, baseUrl);
    }
    assert.equal(load({}).webhookAllowPrivateTargets, true, 'the default BASE_URL is http://127.0.0.1:8080');
    assert.equal(load({ HOST: '0.0.0.0' }).webhookAllowPrivateTargets, false, 'listening on every interface');
  });

  it('on and off override the default either way', () => {
    assert.equal(
      load({ BASE_URL: 'https://pay.example.com', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on' }).webhookAllowPrivateTargets,
      true,
    );
    assert.equal(
      load({ BASE_URL: 'http://127.0.0.1:8080', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'off' }).webhookAllowPrivateTargets,
      false,
    );
    assert.equal(
      load({ BASE_URL: 'https://pay.example.com', WEBHOOK_ALLOW_PRIVATE_TARGETS: '' }).webhookAllowPrivateTargets,
      false,
      'empty is unset',
    );
  });

  it('any other value is a configuration error naming the variable', () => {
    for (const value of ['yes', 'true', '1', 'ON']) {
      assert.throws(
        () => load({ WEBHOOK_ALLOW_PRIVATE_TARGETS: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.problems.some((p) => p === `WEBHOOK_ALLOW_PRIVATE_TARGETS must be on or off (got "${value}")`),
        value,
      );
    }
  });
});

interface ConsoleSession {
  cookie: string;
  csrf: string;
}

/** Signs in to the merchant dashboard of `app` through its login form and switches to an environment. */
async function signIn(
  app: FastifyInstance,
  email: string,
  password: string,
  environment: Environment,
): Promise<ConsoleSession> {
  const cookieOf = (res: LightMyRequestResponse, name: string) => res.cookies.find((c) => c.name === name)?.value;
  const form = await app.inject({ method: 'GET', url: '/dashboard/login' });
  const loginCsrf = cookieOf(form, 'sika_login_csrf');
  assert.ok(loginCsrf, 'the login form sets its CSRF cookie');
  const login = await app.inject({
    method: 'POST',
    url: '/dashboard/login',
    headers: { cookie: `sika_login_csrf=${loginCsrf}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: loginCsrf, email, password }).toString(),
  });
  assert.equal(login.statusCode, 303, login.body.slice(0, 300));
  const token = cookieOf(login, 'sika_dashboard');
  assert.ok(token, 'signed in');
  const cookie = `sika_dashboard=${token}`;
  const home = await app.inject({ method: 'GET', url: '/dashboard', headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(home.body)?.[1];
  assert.ok(csrf, 'the dashboard pages carry a CSRF token');
  const session = { cookie, csrf };
  assert.equal((await consolePost(app, session, '/dashboard/environment', { environment })).statusCode, 303);
  return session;
}

const consolePost = (app: FastifyInstance, session: ConsoleSession, url: string, fields: Record<string, string>) =>
  app.inject({
    method: 'POST',
    url,
    headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: session.csrf, ...fields }).toString(),
  });

const PASSWORD = 'ssrf test passphrase';

/** A TCP server on 127.0.0.1 and ::1 (one port) that counts connections and closes each at once. */
async function startTrap() {
  let connections = 0;
  const count = (socket: net.Socket) => {
    connections++;
    socket.destroy();
  };
  const v4 = net.createServer(count);
  await new Promise<void>((resolve) => v4.listen(0, '127.0.0.1', resolve));
  const port = (v4.address() as net.AddressInfo).port;
  const v6 = net.createServer(count);
  await new Promise<void>((resolve, reject) =>
    v6.once('error', reject).listen({ host: '::1', port, ipv6Only: true }, resolve),
  );
  return {
    port,
    connections: () => connections,
    close: () => Promise.all([v4, v6].map((server) => new Promise<void>((resolve) => server.close(() => resolve())))),
  };
}

describe(`webhook target rule at endpoint creation and at delivery, private targets off (${storageKind})`, () => {
  let t: TestContext;
  let trap: Awaited<ReturnType<typeof startTrap>>;
  const receivers: Receiver[] = [];
  const workers: DeliveryWorker[] = [];
  before(async () => {
    // A hosted deployment: BASE_URL is not loopback and the setting is off; names resolve through the stub table.
    t = await isolatedTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'off' }, { webhookResolver: publicResolver() });
    assert.equal(t.config.webhookAllowPrivateTargets, false);
    trap = await startTrap();
  });
  after(async () => {
    await trap.close();
    await t.close();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
    for (const r of receivers.splice(0)) await r.close();
  });

  async function receiver(handler: Parameters<typeof startReceiver>[0]) {
    const r = await startReceiver(handler);
    receivers.push(r);
    return r;
  }
  function worker(policy: TargetPolicy, resolver?: Resolver) {
    const w = new DeliveryWorker(
      t.db,
      captureLogger(),
      defaultDeliveryOptions({
        retryScheduleS: [60, 60, 60],
        timeoutMs: 2_000,
        claimTtlS: 10,
        allowPrivateTargets: policy.allowPrivateTargets,
        ...(resolver ? { resolver } : {}),
      }),
    );
    workers.push(w);
    return w;
  }
  const newEmail = () => `owner-${randomUUID()}@example.com`;
  /** A merchant (whose owner can sign in unless password is false) created under the given rule. */
  const merchantWith = (
    options: { webhookUrl?: string | null; policy?: TargetPolicy; resolver?: Resolver; password?: boolean } = {},
  ) =>
    createMerchant(
      t.db,
      {
        name: `SSRF ${randomUUID().slice(0, 8)}`,
        email: newEmail(),
        password: options.password === false ? null : PASSWORD,
        webhookUrl: options.webhookUrl ?? null,
      },
      {
        allowPrivateTargets: (options.policy ?? STRICT).allowPrivateTargets,
        resolver: options.resolver ?? publicResolver(),
      },
    );
  const emailOf = async (m: CreatedMerchant) =>
    (await t.db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [m.owner_user_id]))[0]!.email;
  const endpointsOf = async (merchantId: string) =>
    (
      await t.db.query<{ url: string; environment: string }>(
        'SELECT url, environment FROM webhook_endpoints WHERE merchant_id = $1',
        [merchantId],
      )
    ).map((r) => `${r.environment} ${r.url}`);
  const keyIdOf = (merchantId: string, environment: Environment) =>
    environment === 'live' ? liveKeyId(t.db, merchantId) : testKeyId(t.db, merchantId);

  it("createMerchant refuses every host of the issue's findings 1 and 2, as a Test (http) and a Live (https) URL, and creates nothing", async () => {
    for (const environment of ENVIRONMENTS) {
      for (const host of ISSUE_HOSTS) {
        const url = urlFor(environment, host, trap.port);
        const email = newEmail();
        await assert.rejects(
          createMerchant(t.db, { name: 'SSRF check', email, webhookUrl: url }, t.webhookTargets),
          (error: unknown) => {
            assert.ok(error instanceof SikaError, `${url}: ${String(error)}`);
            const { code, message } = error;
            assert.deepEqual([statusOf(error), code], [400, 'INVALID_ARGUMENT'], `${url}: ${String(error)}`);
            assert.match(message, PRIVATE_REFUSAL, url);
            assertNamesNoAddress(message, url);
            return true;
          },
        );
        assert.deepEqual(
          await t.db.query('SELECT 1 FROM users WHERE email = $1', [email]),
          [],
          `${url}: a merchant was created`,
        );
      }
    }
  });

  it("the dashboard form refuses every host of the issue's findings 1 and 2 in Test and in Live, and stores no endpoint", async () => {
    for (const environment of ENVIRONMENTS) {
      const m = await merchantWith();
      const session = await signIn(t.app, await emailOf(m), PASSWORD, environment);
      const apiKeyId = await keyIdOf(m.merchant_id, environment);
      for (const host of ISSUE_HOSTS) {
        const url = urlFor(environment, host, trap.port);
        const res = await consolePost(t.app, session, '/dashboard/webhooks', { url, api_key_id: apiKeyId });
        assert.equal(res.statusCode, 400, `${environment} ${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        assert.match(res.body, PRIVATE_REFUSAL, url);
      }
      assert.deepEqual(await endpointsOf(m.merchant_id), []);
    }
  });

  it('a name resolving to a private address is refused at creation with a message that does not contain the address', async () => {
    for (const environment of ENVIRONMENTS) {
      const m = await merchantWith();
      const session = await signIn(t.app, await emailOf(m), PASSWORD, environment);
      const apiKeyId = await keyIdOf(m.merchant_id, environment);
      for (const name of [
        'loopback.example.com',
        'metadata.example.com',
        'mixed.example.com',
        'mapped.example.com',
        'ula.example.com',
        'nat64.example.com',
      ]) {
        const url = urlFor(environment, name);
        const res = await consolePost(t.app, session, '/dashboard/webhooks', { url, api_key_id: apiKeyId });
        assert.equal(res.statusCode, 400, url);
        assert.match(res.body, PRIVATE_REFUSAL, url);
        assertNamesNoAddress(res.body, `the dashboard's answer to ${url}`);
        await assert.rejects(merchantWith({ webhookUrl: url }), (error: unknown) => {
          assert.match((error as Error).message, PRIVATE_REFUSAL, url);
          assertNamesNoAddress((error as Error).message, `createMerchant's refusal of ${url}`);
          return true;
        });
      }
      assert.deepEqual(await endpointsOf(m.merchant_id), []);
    }
  });

  it('public targets are accepted at creation in both environments: a name resolving to public addresses, 8.8.8.8 and [2606:4700::1111]', async () => {
    for (const url of [
      'https://hooks.example.com/sika',
      'https://v6.example.com/sika',
      'https://8.8.8.8/hook',
      'https://[2606:4700::1111]/hook',
    ]) {
      const m = await merchantWith({ webhookUrl: url });
      assert.ok(m.test_webhook_secret && m.live_webhook_secret, url);
      assert.deepEqual((await endpointsOf(m.merchant_id)).sort(), [`live ${url}`, `test ${url}`]);
      const session = await signIn(t.app, await emailOf(m), PASSWORD, 'live');
      const res = await consolePost(t.app, session, '/dashboard/webhooks', {
        url: `${url}/second`,
        api_key_id: await liveKeyId(t.db, m.merchant_id),
      });
      assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 200)}`);
    }
  });

  it("every host of the issue's findings 1 and 2 is refused at every delivery in Test and in Live: nothing connects, and the log, the dashboard and sika events show name no address", async () => {
    // Endpoints stored before the rule (or whose name changed what it resolves to since): written directly.
    // One merchant per host, so each key has one endpoint (an event goes to every endpoint of its key).
    const resolver = publicResolver();
    const sent: {
      url: string;
      environment: Environment;
      eventId: string;
      endpointId: string;
      merchant: CreatedMerchant;
    }[] = [];
    for (const host of ISSUE_HOSTS) {
      const m = await merchantWith({ password: host === 'loopback.example.com' });
      for (const environment of ENVIRONMENTS) {
        const apiKeyId = await keyIdOf(m.merchant_id, environment);
        const url = urlFor(environment, host, trap.port);
        const endpointId = randomUUID();
        await t.db.transaction((tx) =>
          insertWebhookEndpoint(tx, {
            id: endpointId,
            merchantId: m.merchant_id,
            environment,
            apiKeyId,
            url,
            secret: `whsec_${randomUUID()}`,
          }),
        );
        const event = await t.db.transaction((tx) =>
          emitEvent(tx, {
            merchantId: m.merchant_id,
            environment,
            apiKeyId,
            type: 'payout.paid',
            objectType: 'payout',
            objectId: `po_ssrf_${sent.length}`,
            objectVersion: 1,
            data: {},
          }),
        );
        sent.push({ url, environment, eventId: event.id, endpointId, merchant: m });
      }
    }
    const w = worker(STRICT, resolver);
    for (let round = 1; round <= 2; round++) {
      let claimed = 0;
      for (let pass = 0; pass < 20; pass++) {
        const n = await w.runOnce();
        if (n === 0) break;
        claimed += n;
      }
      assert.equal(claimed, sent.length, `round ${round}: every delivery was tried`);
      for (const { url, eventId } of sent) {
        const attempts = await attemptsOf(t.db, eventId);
        assert.equal(attempts.length, round, url);
        const attempt = attempts[round - 1]!;
        assert.equal(attempt.http_status, null, url);
        assert.equal(attempt.response_excerpt, null, url);
        assert.match(
          attempt.error ?? '',
          /^refused: the endpoint URL does not resolve to public addresses only: it resolves to a private or reserved address/,
          url,
        );
        assertNamesNoAddress(attempt.error ?? '', url);
        const delivery = await deliveryOf(t.db, eventId);
        assert.equal(delivery.status, 'pending', `${url}: refused tries follow the retry schedule`);
      }
      // The next try is due again at once: the rule is applied to each one, not only the first.
      await t.db.query(`UPDATE webhook_deliveries SET next_try_at = now() WHERE event_id = ANY($1)`, [
        sent.map((s) => s.eventId),
      ]);
    }
    await t.db.query(`UPDATE webhook_deliveries SET next_try_at = now() + interval '1 hour' WHERE event_id = ANY($1)`, [
      sent.map((s) => s.eventId),
    ]);
    assert.equal(trap.connections(), 0, 'no refused target was connected to');
    assert.deepEqual(
      resolver.asked,
      ['loopback.example.com', 'loopback.example.com', 'loopback.example.com', 'loopback.example.com'],
      'only the name was looked up, once per try',
    );

    // What `sika events show` prints and what the dashboard delivery log shows, for the name resolving to 127.0.0.1.
    for (const environment of ENVIRONMENTS) {
      const named = sent.find((s) => s.environment === environment && s.url.includes('loopback.example.com'))!;
      for (const row of await listTries(t.db, named.eventId))
        assertNamesNoAddress(`${row.error ?? ''} ${row.response_excerpt ?? ''}`, `events show ${named.url}`);
      const session = await signIn(t.app, await emailOf(named.merchant), PASSWORD, environment);
      const log = await t.app.inject({
        method: 'GET',
        url: `/dashboard/webhooks/${named.endpointId}`,
        headers: { cookie: session.cookie },
      });
      assert.equal(log.statusCode, 200);
      assert.match(
        log.body,
        /refused: the endpoint URL does not resolve to public addresses only: it resolves to a private or reserved address/,
      );
      assertNamesNoAddress(log.body, 'the delivery log');
    }

    // Control: the same kind of endpoint with private targets allowed does reach the trap, so the count above can fail.
    const control = await merchantWith({ webhookUrl: `http://127.0.0.1:${trap.port}/hook`, policy: OPEN });
    const event = await emitTestEvent(t.db, control);
    assert.equal(await worker(OPEN).runOnce(), 1);
    assert.equal(trap.connections(), 1);
    assert.match((await attemptsOf(t.db, event.id))[0]!.error ?? '', /ECONNRESET|socket hang up/);
    await t.db.query(`UPDATE webhook_deliveries SET next_try_at = now() + interval '1 hour' WHERE event_id = $1`, [
      event.id,
    ]);
  });

  it('the deployment setting reaches the worker: the same Test endpoint on 127.0.0.1 is refused with it off and delivered with WEBHOOK_ALLOW_PRIVATE_TARGETS=on', async () => {
    const r = await receiver((_request, res) => res.end('ok'));
    const openConfig: Config = loadConfig({
      LOG_LEVEL: 'silent',
      WORKERS: 'off',
      BASE_URL: 'http://sika.test',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on',
    });
    assert.equal(openConfig.webhookAllowPrivateTargets, true);
    // A second app on the same storage, as a developer's deployment would run it.
    const openApp = await buildApp({ config: openConfig, db: t.db, logger: false });
    try {
      const m = await merchantWith();
      const session = await signIn(openApp, await emailOf(m), PASSWORD, 'test');
      const created = await consolePost(openApp, session, '/dashboard/webhooks', {
        url: r.url,
        api_key_id: await testKeyId(t.db, m.merchant_id),
      });
      assert.equal(created.statusCode, 200, created.body.slice(0, 300));
      assert.deepEqual(await endpointsOf(m.merchant_id), [`test ${r.url}`]);
      const event = await emitTestEvent(t.db, m);

      const strictWorker = deliveryWorkerFor(t.db, captureLogger(), t.config);
      workers.push(strictWorker);
      await strictWorker.runOnce();
      const [refused] = await attemptsOf(t.db, event.id);
      assert.match(refused?.error ?? '', PRIVATE_REFUSAL);
      assert.equal(r.requests.length, 0);

      await t.db.query('UPDATE webhook_deliveries SET next_try_at = now() WHERE event_id = $1', [event.id]);
      const openWorker = deliveryWorkerFor(t.db, captureLogger(), openConfig);
      workers.push(openWorker);
      await openWorker.runOnce();
      assert.equal(r.requests.length, 1);
      assert.equal((await deliveryOf(t.db, event.id)).status, 'delivered');
    } finally {
      await openApp.close();
    }
  });

  it('a receiver answering 302 to http://10.0.0.1/ is a failed try with status 302, and the Location is never requested', async () => {
    const r = await receiver((_request, res) => {
      res.writeHead(302, { location: 'http://10.0.0.1/' });
      res.end('moved');
    });
    // The receiver is on 127.0.0.1: a developer's machine, private targets allowed.
    const m = await merchantWith({ webhookUrl: r.url, policy: OPEN });
    const event = await emitTestEvent(t.db, m);
    assert.equal(await worker(OPEN).runOnce(), 1);
    assert.equal(r.requests.length, 1);
    const [attempt, ...more] = await attemptsOf(t.db, event.id);
    assert.equal(more.length, 0, 'one try, no follow-up request');
    assert.equal(attempt!.http_status, 302);
    assert.equal(attempt!.error, 'HTTP 302');
    const delivery = await deliveryOf(t.db, event.id);
    assert.equal(delivery.status, 'pending', 'a redirect is not a delivery; it is retried on the schedule');
    assert.equal(delivery.last_http_status, 302);
  });

  it('redirects of every kind to another local receiver are never followed: the second receiver sees nothing', async () => {
    const trapReceiver = await receiver((_request, res) => res.end('should not be reached'));
    const statuses = [301, 302, 303, 307, 308];
    const r = await receiver((request, res) => {
      res.writeHead(statuses[request.n - 1]!, { location: `${trapReceiver.url}?from=${request.n}` });
      res.end();
    });
    const m = await merchantWith({ webhookUrl: r.url, policy: OPEN });
    const w = worker(OPEN);
    for (const status of statuses) {
      const event = await emitTestEvent(t.db, m);
      assert.equal(await w.runOnce(), 1);
      const delivery = await deliveryOf(t.db, event.id);
      assert.deepEqual([delivery.status, delivery.last_http_status], ['pending', status]);
    }
    assert.equal(r.requests.length, statuses.length);
    assert.equal(trapReceiver.requests.length, 0);
  });

  it('a Live endpoint whose name resolved to a public address at creation and to a loopback one at delivery is refused then, and nothing is sent', async () => {
    const r = await receiver((_request, res) => res.end('should not be reached'));
    // DNS rebinding: the name answered a public address when the endpoint was saved, 127.0.0.1 (the receiver) now.
    const url = `https://rebind.example.com:${r.port}/hook`;
    const m = await merchantWith({ webhookUrl: url, resolver: stubResolver({ 'rebind.example.com': [PUBLIC_V4] }) });
    assert.deepEqual((await endpointsOf(m.merchant_id)).sort(), [`live ${url}`, `test ${url}`]);
    const liveKey = await liveKeyId(t.db, m.merchant_id);
    const event = await t.db.transaction((tx) =>
      emitEvent(tx, {
        merchantId: m.merchant_id,
        environment: 'live',
        apiKeyId: liveKey,
        type: 'payout.paid',
        objectType: 'payout',
        objectId: 'po_rebind',
        objectVersion: 1,
        data: {},
      }),
    );
    const resolver = stubResolver({ 'rebind.example.com': ['127.0.0.1'] });
    assert.equal(await worker(STRICT, resolver).runOnce(), 1);
    assert.deepEqual(resolver.asked, ['rebind.example.com']);
    assert.equal(r.requests.length, 0);
    const [attempt] = await attemptsOf(t.db, event.id);
    assert.equal(attempt!.http_status, null);
    assert.match(attempt!.error ?? '', /^refused: .*private or reserved/);
    assertNamesNoAddress(attempt!.error ?? '', url, ['127.0.0.1']);
    const delivery = await deliveryOf(t.db, event.id);
    assert.equal(delivery.status, 'pending');
    assert.match(delivery.last_error ?? '', /refused/);
  });
});
