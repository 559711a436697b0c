// SSRF guard for webhook endpoints (DESIGN §3 Webhooks): Live endpoints must be HTTPS and must not resolve
// to private, loopback or link-local addresses; Test endpoints may be http://localhost / 127.0.0.1. The
// worker never follows a redirect. Nothing here connects anywhere but 127.0.0.1: public names are
// "resolved" by a stub resolver and only resolveTarget is called for them.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { DeliveryWorker, defaultDeliveryOptions } from '../src/events/delivery.ts';
import { emitEvent } from '../src/events/outbox.ts';
import { isBlockedAddress, resolveTarget, systemResolver, UnsafeUrlError, type Resolver } from '../src/events/ssrf.ts';
import { storageKind, type TestContext } from './helpers.ts';
import { attemptsOf, captureLogger, deliveryOf, emitTestEvent, isolatedTestApp, liveKeyId, startReceiver, type Receiver } from './webhook-support.ts';

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:2800:220:1:248:1893:25c8:1946';

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

const publicResolver = () =>
  stubResolver({
    'hooks.example.com': [PUBLIC_V4],
    'v6.example.com': [PUBLIC_V6],
    'internal.example.com': ['127.0.0.1'],
    'metadata.example.com': ['169.254.169.254'],
    'mixed.example.com': [PUBLIC_V4, '10.0.0.7'],
    'mapped.example.com': ['::ffff:127.0.0.1'],
    'ula.example.com': ['fd00:ec2::254'],
  });

async function assertRefused(url: string, environment: 'test' | 'live', resolver: Resolver, message?: RegExp) {
  await assert.rejects(resolveTarget(url, environment, resolver), (error: unknown) => {
    assert.ok(error instanceof UnsafeUrlError, `${url}: expected UnsafeUrlError, got ${String(error)}`);
    if (message) assert.match(error.message, message, url);
    return true;
  });
}

describe('webhook SSRF guard: resolveTarget and isBlockedAddress', () => {
  it('Live refuses plain http even for a public name', async () => {
    const resolver = publicResolver();
    await assertRefused('http://hooks.example.com/sika', 'live', resolver, /https/);
    await assertRefused(`http://${PUBLIC_V4}/sika`, 'live', resolver, /https/);
  });

  it('Live refuses loopback, private, link-local, metadata and IPv4-mapped or unique-local IPv6 literals', async () => {
    const resolver = publicResolver();
    for (const url of [
      'https://127.0.0.1/',
      'https://127.0.0.1:8443/hook',
      'https://10.0.0.1/',
      'https://172.16.5.4/',
      'https://192.168.1.10/',
      'https://169.254.169.254/latest/meta-data/',
      'https://100.100.100.200/',
      'https://0.0.0.0/',
      'https://[::1]/',
      'https://[::]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:169.254.169.254]/',
      'https://[fd00:ec2::254]/',
      'https://[fe80::1]/',
      'https://[64:ff9b::7f00:1]/',
      'https://[::127.0.0.1]/', // IPv4-compatible form (the URL parser writes it [::7f00:1])
      // Other spellings of 127.0.0.1 that the URL parser normalises.
      'https://2130706433/',
      'https://0x7f.1/',
      'https://127.1/',
    ]) {
      await assertRefused(url, 'live', resolver, /private or reserved/);
    }
    assert.deepEqual(resolver.asked, [], 'address literals are judged without a DNS lookup');
  });

  it('Live refuses a name resolving to a private address, including one private answer among public ones', async () => {
    const resolver = publicResolver();
    await assertRefused('https://internal.example.com/hook', 'live', resolver, /127\.0\.0\.1/);
    await assertRefused('https://metadata.example.com/hook', 'live', resolver, /169\.254\.169\.254/);
    await assertRefused('https://mixed.example.com/hook', 'live', resolver, /10\.0\.0\.7/);
    await assertRefused('https://mapped.example.com/hook', 'live', resolver, /::ffff:127\.0\.0\.1/);
    await assertRefused('https://ula.example.com/hook', 'live', resolver, /fd00:ec2::254/);
  });

  it('Live refuses the real localhost through the system resolver', async () => {
    await assertRefused('https://localhost/hook', 'live', systemResolver, /private or reserved/);
    await assert.rejects(resolveTarget('https://localhost:8443/hook', 'live'), UnsafeUrlError, 'the system resolver is the default');
  });

  it('a name that does not resolve, a URL with credentials, a non-http scheme or a non-URL is refused', async () => {
    const resolver = publicResolver();
    await assertRefused('https://nowhere.example.com/hook', 'live', resolver, /does not resolve/);
    await assertRefused('https://nowhere.example.com/hook', 'test', resolver, /does not resolve/);
    await assertRefused('https://user:pass@hooks.example.com/hook', 'live', resolver, /credentials/);
    await assertRefused('http://user@127.0.0.1/hook', 'test', resolver, /credentials/);
    await assertRefused('ftp://hooks.example.com/hook', 'test', resolver, /http/);
    await assertRefused('file:///etc/passwd', 'test', resolver);
    await assertRefused('not a url', 'test', resolver, /not a URL/);
    await assertRefused('', 'live', resolver);
    await assertRefused('https://empty.example.com/', 'live', Object.assign(async () => [], {}), /does not resolve/);
  });

  it('Live allows a name resolving only to public addresses, and pins the connection to the checked address', async () => {
    const resolver = publicResolver();
    const v4 = await resolveTarget('https://hooks.example.com/sika?x=1', 'live', resolver);
    assert.equal(v4.address, PUBLIC_V4);
    assert.equal(v4.family, 4);
    assert.equal(v4.url.href, 'https://hooks.example.com/sika?x=1');
    const v6 = await resolveTarget('https://v6.example.com/sika', 'live', resolver);
    assert.deepEqual([v6.address, v6.family], [PUBLIC_V6, 6]);
    const literal = await resolveTarget(`https://${PUBLIC_V4}/sika`, 'live', resolver);
    assert.deepEqual([literal.address, literal.family], [PUBLIC_V4, 4]);
    const literal6 = await resolveTarget(`https://[${PUBLIC_V6}]/sika`, 'live', resolver);
    assert.deepEqual([literal6.address, literal6.family], [PUBLIC_V6, 6]);
    assert.deepEqual(resolver.asked, ['hooks.example.com', 'v6.example.com']);
  });

  it('Test endpoints may use http and loopback or private addresses (local development)', async () => {
    const resolver = publicResolver();
    const local = await resolveTarget('http://127.0.0.1:8080/hook', 'test', resolver);
    assert.deepEqual([local.address, local.family, local.url.port], ['127.0.0.1', 4, '8080']);
    const named = await resolveTarget('http://internal.example.com/hook', 'test', resolver);
    assert.equal(named.address, '127.0.0.1');
    const v6 = await resolveTarget('http://[::1]:9000/hook', 'test', resolver);
    assert.deepEqual([v6.address, v6.family], ['::1', 6]);
    const localhost = await resolveTarget('http://localhost:9000/hook', 'test');
    assert.ok(['127.0.0.1', '::1'].includes(localhost.address), localhost.address);
  });

  describe('isBlockedAddress', () => {
    const blocked = [
      '0.0.0.0',
      '0.1.2.3',
      '10.0.0.1',
      '10.255.255.255',
      '100.64.0.1',
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
      'febf::1',
      'ff02::1',
      '2001:db8::1',
      '100::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::FFFF:7F00:1',
      '::ffff:10.0.0.1',
      '::ffff:a9fe:a9fe',
      '::ffff:192.168.1.1',
      '64:ff9b::127.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '::127.0.0.1',
      '::7f00:1',
      '::a00:1',
      '::a9fe:a9fe',
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
      PUBLIC_V6,
      '2001:4860:4860::8888',
      '::ffff:93.184.216.34',
      '::ffff:5db8:d822',
      '64:ff9b::808:808',
    ];
    for (const address of blocked) {
      it(`blocks ${JSON.stringify(address)}`, () => assert.equal(isBlockedAddress(address), true));
    }
    it('allows public IPv4 and IPv6 addresses, including public IPv4 written in IPv6 forms', () => {
      assert.deepEqual(
        allowed.filter((address) => isBlockedAddress(address)),
        [],
      );
    });
  });
});

describe(`webhook SSRF guard in the delivery worker (${storageKind})`, () => {
  let t: TestContext;
  const receivers: Receiver[] = [];
  const workers: DeliveryWorker[] = [];
  before(async () => {
    t = await isolatedTestApp();
  });
  after(() => t.close());
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
    for (const r of receivers.splice(0)) await r.close();
  });

  async function receiver(handler: Parameters<typeof startReceiver>[0]) {
    const r = await startReceiver(handler);
    receivers.push(r);
    return r;
  }
  function worker(resolver?: Resolver) {
    const log = captureLogger();
    const w = new DeliveryWorker(t.db, log, defaultDeliveryOptions({ retryScheduleS: [60], timeoutMs: 2_000, claimTtlS: 10, ...(resolver ? { resolver } : {}) }));
    workers.push(w);
    return w;
  }

  it('a receiver answering 302 to http://10.0.0.1/ is a failed try with status 302, and the Location is never requested', async () => {
    const r = await receiver((_request, res) => {
      res.writeHead(302, { location: 'http://10.0.0.1/' });
      res.end('moved');
    });
    const m = await t.merchant({ webhookUrl: r.url });
    const event = await emitTestEvent(t.db, m);
    assert.equal(await worker().runOnce(), 1);
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
    const trap = await receiver((_request, res) => res.end('should not be reached'));
    const statuses = [301, 302, 303, 307, 308];
    const r = await receiver((request, res) => {
      res.writeHead(statuses[request.n - 1]!, { location: `${trap.url}?from=${request.n}` });
      res.end();
    });
    const m = await t.merchant({ webhookUrl: r.url });
    const w = worker();
    for (const status of statuses) {
      const event = await emitTestEvent(t.db, m);
      assert.equal(await w.runOnce(), 1);
      const delivery = await deliveryOf(t.db, event.id);
      assert.deepEqual([delivery.status, delivery.last_http_status], ['pending', status]);
    }
    assert.equal(r.requests.length, statuses.length);
    assert.equal(trap.requests.length, 0);
  });

  it('a Live endpoint whose name resolves to a loopback address is refused at delivery time and nothing is sent', async () => {
    const r = await receiver((_request, res) => res.end('should not be reached'));
    // An https Live endpoint whose name a (stub) DNS answers with 127.0.0.1, the receiver's address.
    const m = await t.merchant({ webhookUrl: `https://rebind.example.com:${r.port}/hook` });
    const liveKey = await liveKeyId(t.db, m.merchant_id);
    const event = await t.db.transaction((tx) =>
      emitEvent(tx, { merchantId: m.merchant_id, environment: 'live', apiKeyId: liveKey, type: 'payout.paid', objectType: 'payout', objectId: 'po_rebind', objectVersion: 1, data: {} }),
    );
    const resolver = stubResolver({ 'rebind.example.com': ['127.0.0.1'] });
    assert.equal(await worker(resolver).runOnce(), 1);
    assert.deepEqual(resolver.asked, ['rebind.example.com']);
    assert.equal(r.requests.length, 0);
    const [attempt] = await attemptsOf(t.db, event.id);
    assert.equal(attempt!.http_status, null);
    assert.match(attempt!.error ?? '', /^refused: .*private or reserved/);
    const delivery = await deliveryOf(t.db, event.id);
    assert.equal(delivery.status, 'pending');
    assert.match(delivery.last_error ?? '', /refused/);
  });
});
