// sika listen (issue 19): streams a Test key's events from a real, listening server (GET
// /api/v1/events/stream) through a TCP proxy the test can cut, and delivers each to a receiver on
// 127.0.0.1 that verifies its Standard Webhooks signature. Events committed while the connection is cut
// arrive after it is back, each exactly once and in order per object; --events filters; a receiver that
// is down is reported; Live and unknown keys are refused; SIGINT stops it cleanly. By default listen signs
// with the secrets of the key's Test webhook endpoints (GET /api/v1/events/stream/signing-secrets), so a
// receiver set up from the first-run banner verifies what it forwards.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, connect, type AddressInfo, type Socket } from 'node:net';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { LISTEN_HELP, RecentIds, SseParser, listen, newSecret, type Delivery } from '../../src/cli/listen.ts';
import { apiTarget } from '../../src/cli/api-client.ts';
import { UsageError } from '../../src/cli/common.ts';
import { fixedSecrets, LISTEN_SECRETS_REFRESH_MS, signingNow } from '../../src/cli/listen-secrets.ts';
import { Sika, WebhookVerificationError } from '../../packages/node/src/index.ts';
import { freePort, reliabilityStorage } from '../reliability/process-support.ts';
import { rotateAnyWebhookSecret } from '../../src/accounts/webhook-endpoints.ts';
import { trigger } from '../../src/cli/trigger.ts';
import { verifyWebhook } from '../../src/events/signing.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WAIT_MS_MAX = 30_000;
/** Payouts need a webhook endpoint paired with the key (Test too); the workers that would deliver to it are off. */
const WEBHOOK_URL = 'https://example.com/hook';

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = WAIT_MS_MAX): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A TCP proxy to the server that the test can cut (every socket destroyed, new ones refused) and restore. */
async function tcpProxy(targetPort: number) {
  const sockets = new Set<Socket>();
  let down = false;
  let connections = 0;
  const server = createTcpServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    connections++;
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return connections;
    },
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    restore() {
      down = false;
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Received {
  id: string;
  type: string;
  version: number;
  objectId: string;
  raw: string;
}

/** A webhook receiver on 127.0.0.1 that verifies each delivery's signature with the secret. */
async function receiver(secret: () => string) {
  const received: Received[] = [];
  const refused: string[] = [];
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        const event = verifyWebhook<{
          id: string;
          type: string;
          version: number;
          data: Record<string, { id: string }>;
        }>(raw, req.headers as IncomingHttpHeaders & Record<string, string>, secret());
        assert.equal(req.headers['webhook-id'], event.id);
        const objectId = (event.data.session ?? event.data.refund ?? event.data.payout)!.id;
        received.push({ id: event.id, type: event.type, version: event.version, objectId, raw });
        res.writeHead(200).end('ok');
      } catch (error) {
        refused.push(String(error));
        res.writeHead(400).end('bad signature');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe(`sika listen (${storageKind})`, () => {
  let t: TestContext;
  let baseUrl: string;
  let serverPort: number;
  before(async () => {
    t = await startTestApp();
    baseUrl = await t.listen();
    serverPort = Number(new URL(baseUrl).port);
  });
  after(() => t.close());

  /** Every event of the merchant's Test key, oldest first, as GET /api/v1/events lists them. */
  async function merchantEvents(
    m: CreatedMerchant,
  ): Promise<{ id: string; type: string; version: number; data: Record<string, { id: string }> }[]> {
    const res = await fetch(`${baseUrl}/api/v1/events?limit=100`, {
      headers: { authorization: `Bearer ${m.test_api_key}` },
    });
    assert.equal(res.status, 200);
    return (
      (await res.json()) as {
        data: { id: string; type: string; version: number; data: Record<string, { id: string }> }[];
      }
    ).data.reverse();
  }

  it('delivers every event once, in order per object, across a forced disconnect with events committed meanwhile', {
    timeout: 120_000,
  }, async () => {
    const m = await t.merchant({ webhookUrl: WEBHOOK_URL });
    const secret = newSecret();
    const hooks = await receiver(() => secret);
    const proxy = await tcpProxy(serverPort);
    const stop = new AbortController();
    const out: string[] = [];
    const err: string[] = [];
    const deliveries: Delivery[] = [];
    const running = listen({
      target: { apiKey: m.test_api_key, baseUrl: proxy.url },
      forwardTo: hooks.url,
      secrets: fixedSecrets(secret),
      types: [],
      signal: stop.signal,
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      onDelivery: (d) => deliveries.push(d),
    });
    try {
      await waitFor('listen to connect', () => out.some((line) => line.startsWith('Ready!')));
      const direct = { apiKey: m.test_api_key, baseUrl };
      for (let i = 0; i < 3; i++) await trigger(direct, 'checkout.session.completed', {});
      await waitFor('the first six events', () => hooks.received.length >= 6);

      proxy.cut();
      // Committed while listen cannot reach the server: more sessions, a refund, a reversal, a payout.
      await trigger(direct, 'checkout.session.completed', {});
      await trigger(direct, 'refund.succeeded', {});
      await trigger(direct, 'checkout.session.reversed', {});
      await trigger(direct, 'payout.paid', {});
      await waitFor('listen to notice the cut', () => err.some((line) => line.startsWith('Connection lost')));
      const deliveredWhileCut = hooks.received.length;
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal(hooks.received.length, deliveredWhileCut, 'nothing arrives while the connection is cut');
      proxy.restore();

      const expected = await merchantEvents(m);
      assert.ok(expected.length >= 18, `events made: ${expected.length}`);
      await waitFor(`all ${expected.length} events`, () => hooks.received.length >= expected.length);
      await new Promise((resolve) => setTimeout(resolve, 500)); // a duplicate would arrive by now

      assert.deepEqual(hooks.refused, []);
      const ids = hooks.received.map((r) => r.id);
      assert.equal(new Set(ids).size, ids.length, 'no event delivered twice');
      assert.deepEqual([...ids].sort(), expected.map((e) => e.id).sort(), 'every event delivered');
      // In order per object: the versions of each object's events rise, as the server's list has them.
      const objects = new Set(hooks.received.map((r) => r.objectId));
      for (const objectId of objects) {
        const got = hooks.received.filter((r) => r.objectId === objectId).map((r) => r.id);
        const want = expected
          .filter((e) => (e.data.session ?? e.data.refund ?? e.data.payout)!.id === objectId)
          .map((e) => e.id);
        assert.deepEqual(got, want, `order of ${objectId}`);
        const versions = hooks.received.filter((r) => r.objectId === objectId).map((r) => r.version);
        assert.deepEqual(
          versions,
          [...versions].sort((a, b) => a - b),
        );
      }
      // The body is exactly the event as the API lists it.
      const first = expected[0]!;
      assert.deepEqual(JSON.parse(hooks.received.find((r) => r.id === first.id)!.raw), first);
      assert.ok(
        err.some((line) => line.startsWith('Reconnected, resuming after ')),
        err.join('\n'),
      );
      assert.ok(proxy.connections >= 2);
      assert.equal(deliveries.length, expected.length);
      assert.ok(deliveries.every((d) => d.status === 200));
      const line = out.find((l) => l.includes(first.id))!;
      assert.match(
        line,
        new RegExp(
          `^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  ${first.type.replaceAll('.', '\\.')}\\s+${first.id}  -> 200 \\(\\d+ ms\\)$`,
        ),
      );
    } finally {
      stop.abort();
      await running;
      await proxy.close();
      await hooks.close();
    }
    assert.equal(out.at(-1), 'Stopped.');
  });

  it('--events streams only the types asked for, and resumes with them after a cut', { timeout: 60_000 }, async () => {
    const m = await t.merchant();
    const secret = newSecret();
    const hooks = await receiver(() => secret);
    const proxy = await tcpProxy(serverPort);
    const stop = new AbortController();
    const out: string[] = [];
    const err: string[] = [];
    const running = listen({
      target: { apiKey: m.test_api_key, baseUrl: proxy.url },
      forwardTo: hooks.url,
      secrets: fixedSecrets(secret),
      types: ['checkout.session.completed', 'refund.succeeded'],
      signal: stop.signal,
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    });
    try {
      await waitFor('listen to connect', () => out.some((line) => line.startsWith('Ready!')));
      const direct = { apiKey: m.test_api_key, baseUrl };
      await trigger(direct, 'checkout.session.reopened', {});
      await trigger(direct, 'checkout.session.completed', {});
      await waitFor('the completed event', () => hooks.received.length >= 1);
      proxy.cut();
      await trigger(direct, 'refund.succeeded', {});
      await trigger(direct, 'checkout.session.pending', {});
      await waitFor('listen to notice the cut', () => err.some((line) => line.startsWith('Connection lost')));
      proxy.restore();
      await waitFor('three events', () => hooks.received.length >= 3);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const all = await merchantEvents(m);
      const wanted = all
        .filter((e) => e.type === 'checkout.session.completed' || e.type === 'refund.succeeded')
        .map((e) => e.id);
      assert.equal(wanted.length, 3);
      assert.deepEqual(hooks.received.map((r) => r.id).sort(), [...wanted].sort());
    } finally {
      stop.abort();
      await running;
      await proxy.close();
      await hooks.close();
    }
  });

  it('reports a receiver that is not there and goes on with the next event', { timeout: 60_000 }, async () => {
    const m = await t.merchant();
    const gone = await receiver(() => 'whsec_AAAA');
    await gone.close(); // its port now refuses connections
    const stop = new AbortController();
    const out: string[] = [];
    const deliveries: Delivery[] = [];
    const running = listen({
      target: { apiKey: m.test_api_key, baseUrl },
      forwardTo: gone.url,
      secrets: fixedSecrets(newSecret()),
      types: [],
      signal: stop.signal,
      out: (l) => out.push(l),
      err: () => {},
      onDelivery: (d) => deliveries.push(d),
    });
    try {
      await waitFor('listen to connect', () => out.some((line) => line.startsWith('Ready!')));
      await trigger({ apiKey: m.test_api_key, baseUrl }, 'checkout.session.completed', {});
      await waitFor('two delivery tries', () => deliveries.length >= 2);
      assert.deepEqual(
        deliveries.map((d) => [d.type, d.status, d.error]),
        [
          ['checkout.session.pending', null, 'connection refused'],
          ['checkout.session.completed', null, 'connection refused'],
        ],
      );
      assert.ok(
        out.some((line) =>
          / {2}checkout\.session\.completed\s+evt_\S+ {2}-> error: connection refused \(\d+ ms\)$/.test(line),
        ),
        out.join('\n'),
      );
    } finally {
      stop.abort();
      await running;
    }
  });

  it('reports a receiver that does not answer in time', { timeout: 60_000 }, async () => {
    const m = await t.merchant();
    const held: import('node:http').ServerResponse[] = [];
    const silent = createHttpServer((_req, res) => void held.push(res));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const stop = new AbortController();
    const out: string[] = [];
    const deliveries: Delivery[] = [];
    const forwardTo = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hooks`;
    const running = listen({
      target: { apiKey: m.test_api_key, baseUrl },
      forwardTo,
      secrets: fixedSecrets(newSecret()),
      types: ['checkout.session.pending'],
      deliveryTimeoutMs: 300,
      signal: stop.signal,
      out: (l) => out.push(l),
      err: () => {},
      onDelivery: (d) => deliveries.push(d),
    });
    try {
      await waitFor('listen to connect', () => out.some((line) => line.startsWith('Ready!')));
      await trigger({ apiKey: m.test_api_key, baseUrl }, 'checkout.session.pending', {});
      await waitFor('the delivery try', () => deliveries.length >= 1);
      assert.equal(deliveries[0]!.error, 'timed out after 0.3 s');
      assert.ok(deliveries[0]!.latencyMs >= 290, String(deliveries[0]!.latencyMs));
      assert.ok(
        out.some((line) => /checkout\.session\.pending\s+evt_\S+ {2}-> error: timed out after 0\.3 s/.test(line)),
        out.join('\n'),
      );
    } finally {
      stop.abort();
      await running;
      for (const res of held) res.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('stops with the server’s reason when the key is unknown', async () => {
    const stop = new AbortController();
    await assert.rejects(
      listen({
        target: { apiKey: 'ak_test_doesnotexist000000000000', baseUrl },
        forwardTo: 'http://127.0.0.1:9/hooks',
        secrets: fixedSecrets(newSecret()),
        types: [],
        signal: stop.signal,
        out: () => {},
        err: () => {},
      }),
      /answered 401 UNAUTHORIZED/,
    );
  });

  it('as `sika listen` with a key that has no Test webhook endpoint: prints a new signing secret that verifies, forwards (--print-json shows bodies and answers), and exits 0 on SIGINT', {
    timeout: 60_000,
  }, async () => {
    const m = await t.merchant();
    let secret = '';
    const hooks = await receiver(() => secret);
    const child = spawn(process.execPath, ['bin/sika.mjs', 'listen', '--forward-to', hooks.url, '--print-json'], {
      cwd: ROOT,
      env: { ...process.env, SIKA_API_KEY: m.test_api_key, SIKA_BASE_URL: baseUrl, SIKA_WEBHOOK_SECRET: '' },
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor('the secret and Ready', () => /Ready!/.test(stdout));
      secret = /Your webhook signing secret: (whsec_\S+)/.exec(stdout)![1]!;
      await trigger({ apiKey: m.test_api_key, baseUrl }, 'checkout.session.completed', {});
      await waitFor('two deliveries', () => hooks.received.length >= 2);
      assert.deepEqual(hooks.refused, []);
      await waitFor('the delivery lines', () => (stdout.match(/-> 200 \(/g) ?? []).length >= 2);
      // --print-json: each body as delivered, then the receiver's answer.
      const completed = hooks.received.find((r) => r.type === 'checkout.session.completed')!;
      // The body is printed right after its delivery line: wait for it rather than race the pipe.
      await waitFor('the printed body', () => stdout.split('\n').includes(completed.raw));
      await waitFor("the receiver's answer", () => stdout.split('\n').includes('<- ok'));
      child.kill('SIGINT');
      assert.equal(await exited, 0);
      assert.match(stdout, /Stopped\.\n$/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await hooks.close();
    }
  });

  it("GET /api/v1/events/stream/signing-secrets: the Test secrets of the key's own endpoints (a rotation's previous one with its expiry), none for a key without one, 403 for a Live key", async () => {
    const m = await t.merchant({ webhookUrl: WEBHOOK_URL });
    const other = await t.merchant({ webhookUrl: WEBHOOK_URL });
    const bare = await t.merchant();
    const get = (key: string) =>
      fetch(`${baseUrl}/api/v1/events/stream/signing-secrets`, { headers: { authorization: `Bearer ${key}` } });
    const mine = await get(m.test_api_key);
    assert.equal(mine.status, 200);
    assert.equal(mine.headers.get('cache-control'), 'no-store');
    const body = (await mine.json()) as {
      object: string;
      secrets: { endpoint_id: string; url: string; status: string; secret: string; expires_at: string | null }[];
    };
    assert.equal(body.object, 'stream_signing_secrets');
    assert.equal(body.secrets.length, 1, "only the endpoint paired with this key, not another merchant's");
    assert.deepEqual(
      { ...body.secrets[0]!, endpoint_id: undefined },
      { endpoint_id: undefined, url: WEBHOOK_URL, status: 'active', secret: m.test_webhook_secret, expires_at: null },
    );
    assert.notEqual(body.secrets[0]!.secret, other.test_webhook_secret);

    // Rotated with an hour's overlap: the new secret, and the old one until the overlap ends.
    const rotated = await rotateAnyWebhookSecret(t.db, body.secrets[0]!.endpoint_id, 3_600, {
      type: 'cli',
      id: 'test@localhost',
      email: null,
    });
    const after = (await (await get(m.test_api_key)).json()) as typeof body;
    assert.deepEqual(
      after.secrets.map((s) => s.secret),
      [rotated.secret, m.test_webhook_secret],
    );
    assert.equal(after.secrets[0]!.expires_at, null);
    assert.ok(
      Math.abs(Date.parse(after.secrets[1]!.expires_at!) - Date.parse(rotated.previous_secret_expires_at)) < 1_000,
      JSON.stringify(after),
    );
    // Expired overlaps are left out, and what listen signs with follows them.
    assert.deepEqual(signingNow(after.secrets), [rotated.secret, m.test_webhook_secret]);
    assert.deepEqual(signingNow(after.secrets, Date.parse(after.secrets[1]!.expires_at!) + 1), [rotated.secret]);

    const none = await get(bare.test_api_key);
    assert.equal(none.status, 200);
    assert.deepEqual(await none.json(), { object: 'stream_signing_secrets', secrets: [] });

    const live = await get(m.live_api_key);
    assert.equal(live.status, 403);
    const liveText = await live.text();
    assert.equal((JSON.parse(liveText) as { error: { code: string } }).error.code, 'FORBIDDEN');
    assert.ok(!liveText.includes('whsec_'), liveText);
    assert.equal((await fetch(`${baseUrl}/api/v1/events/stream/signing-secrets`)).status, 401);
  });

  it('refuses a Live key before connecting, and --help prints the help (exit codes 2 and 0)', async () => {
    const m = await t.merchant();
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['bin/sika.mjs', ...args],
          { cwd: ROOT, env: { ...process.env, SIKA_API_KEY: '', SIKA_BASE_URL: '' }, timeout: 60_000 },
          (error, stdout, stderr) => {
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
          },
        );
      });
    const live = await run([
      'listen',
      '--forward-to',
      'http://127.0.0.1:3000/hooks',
      '--api-key',
      m.live_api_key,
      '--base-url',
      baseUrl,
    ]);
    assert.equal(live.code, 2);
    assert.match(live.stderr, /listen works with Test keys only, and this is a Live key/);
    const badType = await run([
      'listen',
      '--forward-to',
      'http://127.0.0.1:3000/hooks',
      '--api-key',
      m.test_api_key,
      '--events',
      'checkout.session.completed,payout.teleported',
    ]);
    assert.equal(badType.code, 2);
    assert.match(badType.stderr, /unknown event type payout\.teleported/);
    const help = await run(['listen', '--help']);
    assert.equal(help.code, 0);
    assert.equal(help.stdout.trim(), LISTEN_HELP);
  });
});

describe('sika listen against a stream that repeats itself', () => {
  // The real stream never repeats an event after Last-Event-ID; this stand-in does, to show listen drops
  // the repeat (its bounded set of delivered ids) and resumes from the last id, an id-only one included.
  it('sends Last-Event-ID on reconnect and delivers an event the server sends again only once', {
    timeout: 30_000,
  }, async () => {
    const secret = newSecret();
    const hooks = await receiver(() => secret);
    const body = (id: string) =>
      JSON.stringify({ id, type: 'checkout.session.completed', version: 1, data: { session: { id: `cs_${id}` } } });
    const lastIds: (string | undefined)[] = [];
    const sse = createHttpServer((req, res) => {
      lastIds.push(req.headers['last-event-id'] as string | undefined);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (lastIds.length === 1) {
        res.write(
          `retry: 1000\nid: 1.\n\nid: 2.evt_a\ndata: ${body('evt_a')}\n\nid: 3.evt_b\ndata: ${body('evt_b')}\n\nid: 4.\n\n`,
        );
        setTimeout(() => res.destroy(), 100);
      } else {
        res.write(`id: 3.evt_b\ndata: ${body('evt_b')}\n\nid: 5.evt_c\ndata: ${body('evt_c')}\n\n`);
      }
    });
    await new Promise<void>((resolve) => sse.listen(0, '127.0.0.1', resolve));
    const stop = new AbortController();
    const running = listen({
      target: { apiKey: 'ak_test_standin', baseUrl: `http://127.0.0.1:${(sse.address() as AddressInfo).port}` },
      forwardTo: hooks.url,
      secrets: fixedSecrets(secret),
      types: [],
      signal: stop.signal,
      out: () => {},
      err: () => {},
    });
    try {
      await waitFor('three deliveries', () => hooks.received.length >= 3);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(
        hooks.received.map((r) => r.id),
        ['evt_a', 'evt_b', 'evt_c'],
      );
      assert.deepEqual(lastIds.slice(0, 2), [undefined, '4.']);
    } finally {
      stop.abort();
      await running;
      sse.closeAllConnections();
      await new Promise<void>((resolve) => sse.close(() => resolve()));
      await hooks.close();
    }
  });
});

describe('the names of the key and server variables (issue 29)', () => {
  it('SIKA_API_KEY and SIKA_BASE_URL only; an old name set without the new one is named, not used, not ignored', () => {
    const key = `ak_test_${'a'.repeat(40)}`;
    assert.deepEqual(apiTarget('listen', {}, { SIKA_API_KEY: key, SIKA_BASE_URL: 'http://127.0.0.1:9000/' }), {
      apiKey: key,
      baseUrl: 'http://127.0.0.1:9000',
    });
    assert.throws(
      () => apiTarget('listen', {}, { SIKA_KEY: key }),
      (error: Error) =>
        error instanceof UsageError &&
        error.message ===
          'SIKA_KEY is set, but Sika reads SIKA_API_KEY: export SIKA_API_KEY="$SIKA_KEY" (and unset SIKA_KEY)',
    );
    assert.throws(
      () => apiTarget('trigger', {}, { SIKA_API_KEY: key, SIKA_URL: 'http://127.0.0.1:9000' }),
      /SIKA_URL is set, but Sika reads SIKA_BASE_URL: export SIKA_BASE_URL="\$SIKA_URL"/,
    );
    // The new name, or the option, wins without a word: the old one is then simply not read.
    assert.equal(
      apiTarget(
        'listen',
        {},
        { SIKA_API_KEY: key, SIKA_KEY: 'ak_test_old', SIKA_URL: 'http://old.test', SIKA_BASE_URL: 'http://new.test' },
      ).baseUrl,
      'http://new.test',
    );
    assert.equal(
      apiTarget(
        'listen',
        { 'api-key': key, 'base-url': 'http://given.test' },
        { SIKA_KEY: 'ak_test_old', SIKA_URL: 'http://old.test' },
      ).baseUrl,
      'http://given.test',
    );
  });

  it('the READMEs, docs and examples name SIKA_API_KEY and SIKA_BASE_URL only, never SIKA_KEY or SIKA_URL', () => {
    // The check itself: old names are caught in code and prose; the current names are not caught.
    assert.deepEqual(otherKeyOrUrlNames('export SIKA_KEY=ak_test_x\nconst url = process.env.SIKA_URL;'), [
      'SIKA_KEY (line 1)',
      'SIKA_URL (line 2)',
    ]);
    assert.deepEqual(otherKeyOrUrlNames('`SIKA_API_KEY` and $SIKA_BASE_URL, SIKA_WEBHOOK_SECRET'), []);
    const files = documentationFiles();
    for (const expected of ['README.md', 'packages/node/README.md', 'docs/errors.md'])
      assert.ok(files.includes(expected), expected);
    const named: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const name of otherKeyOrUrlNames(text)) named.push(`${file}: ${name}`);
    }
    assert.deepEqual(named, [], 'say SIKA_API_KEY for the key and SIKA_BASE_URL for the server');
    // Both names are in the README and the SDK's README, where a merchant first sets them.
    for (const file of ['README.md', 'packages/node/README.md']) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      assert.match(text, /\bSIKA_API_KEY\b/, file);
      assert.match(text, /\bSIKA_BASE_URL\b/, file);
    }
  });
});

/**
 * The files a merchant reads for the key and server variables: the READMEs, docs/ and deploy/ (every .md),
 * and the examples outside them: the SDK's sources (its doc comments) and the consoles' pages.
 */
function documentationFiles(): string[] {
  const walk = (dir: string, keep: (name: string) => boolean): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'generated' ? [] : walk(path, keep);
      return keep(entry.name) ? [path] : [];
    });
  const markdown = (name: string) => name.endsWith('.md');
  return [
    'README.md',
    'ARCHITECTURE.md',
    'packages/node/README.md',
    ...walk('docs', markdown),
    ...walk('deploy', markdown),
    ...walk('packages/node/src', (name) => name.endsWith('.ts')),
    ...walk('src/web', (name) => name.endsWith('.ts')),
  ];
}

/** The variables naming an API key or a server address other than SIKA_API_KEY and SIKA_BASE_URL, each with its line. */
function otherKeyOrUrlNames(text: string): string[] {
  const found: string[] = [];
  for (const [index, line] of text.split('\n').entries())
    for (const [name] of line.matchAll(/\bSIKA_\w*(?:KEY|URL|HOST|SERVER|ENDPOINT)\b/g))
      if (name !== 'SIKA_API_KEY' && name !== 'SIKA_BASE_URL') found.push(`${name} (line ${index + 1})`);
  return found;
}

describe('the SSE parser and the delivered ids', () => {
  it('reads events split anywhere, CRLF or LF, keeps ids of id-only messages and skips comments', () => {
    const text =
      'retry: 1000\r\nid: 7.\r\n\r\n: heartbeat\n\nid: 8.evt_a\nevent: checkout.session.completed\ndata: {"id":"evt_a"}\n\nid: 9.\n\ndata: line1\ndata: line2\n\n';
    for (let split = 0; split <= text.length; split++) {
      const parser = new SseParser();
      const got = [...parser.feed(text.slice(0, split)), ...parser.feed(text.slice(split))];
      assert.deepEqual(
        got,
        [
          { id: '7.', event: null, data: null },
          { id: '8.evt_a', event: 'checkout.session.completed', data: '{"id":"evt_a"}' },
          { id: '9.', event: null, data: null },
          { id: '9.', event: null, data: 'line1\nline2' },
        ],
        `split at ${split}`,
      );
    }
  });

  it('remembers the most recent ids only', () => {
    const ids = new RecentIds(3);
    for (const id of ['a', 'b', 'c', 'd']) ids.add(id);
    assert.equal(ids.has('a'), false);
    assert.equal(ids.has('b') && ids.has('c') && ids.has('d'), true);
  });
});

// Issue 29: the first hour's trap. A receiver set up from the first-run banner (its Test webhook secret,
// verified with the SDK's standardwebhooks check as the README's receiver does) accepts what a plain
// `sika listen --forward-to` forwards: listen signs with the secret of the key's Test endpoint. After a
// rotation with an overlap, both the old and the new secret verify until the overlap ends.
describe(`sika listen and the first run's webhook secret (${storageKind})`, { timeout: 600_000 }, () => {
  it("a receiver verifying with the banner's secret accepts what `sika listen` forwards, with no flag; a rotation is followed", async () => {
    const storage = await reliabilityStorage('listen-first-run');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const serverEnv: NodeJS.ProcessEnv = {
      ...process.env,
      ...storage.env(),
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: base,
      LOG_LEVEL: 'info',
      REDIS_URL: '',
      WORKERS: 'off',
      CHECKOUT_URL_HOST: '',
    };
    if (!storage.databaseUrl) delete serverEnv.DATABASE_URL;
    delete serverEnv.DEMO_MERCHANT;
    const server = spawn(process.execPath, ['scripts/start.mjs'], {
      cwd: ROOT,
      env: serverEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let printed = '';
    server.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
    server.stderr.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
    let listener: ReturnType<typeof spawn> | null = null;
    let hooks: Awaited<ReturnType<typeof sdkReceiver>> | null = null;
    try {
      await waitFor('the first-run banner', () => /Webhook secret +whsec_\S+[\s\S]*\n={20,}\n/.test(printed), 120_000);
      const key = /Test API key +(ak_test_\w+)/.exec(printed)![1]!;
      const bannerSecret = /Webhook secret +(whsec_\S+)/.exec(printed)![1]!;

      let rotatedSecret: string | null = null;
      hooks = await sdkReceiver(() => [bannerSecret, ...(rotatedSecret ? [rotatedSecret] : [])]);
      const env: NodeJS.ProcessEnv = { ...process.env, SIKA_API_KEY: key, SIKA_BASE_URL: base };
      delete env.SIKA_WEBHOOK_SECRET;
      listener = spawn(process.execPath, ['bin/sika.mjs', 'listen', '--forward-to', hooks.url], { cwd: ROOT, env });
      let stdout = '';
      let stderr = '';
      listener.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      listener.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      await waitFor('Ready', () => /Ready!/.test(stdout), 60_000);
      assert.ok(
        stdout.includes(`Your webhook signing secret: ${bannerSecret}\n`),
        `listen names the banner's secret:\n${stdout}`,
      );
      assert.match(stdout, /of your Test webhook endpoint http:\/\/localhost:3000\/hooks/);

      await trigger({ apiKey: key, baseUrl: base }, 'checkout.session.completed', {});
      await waitFor('the forwarded events', () => hooks!.received.length >= 2);
      assert.deepEqual(hooks.refused, [], "the banner's secret verifies every forwarded event");
      assert.ok(hooks.received.every((r) => r.verifiedWith.includes(bannerSecret)));

      // The endpoint's secret is rotated with an hour's overlap: once listen has asked again (within
      // LISTEN_SECRETS_REFRESH_MS), each event is signed with both, as the server's deliveries are.
      const endpoints = (await (
        await fetch(`${base}/api/v1/events/stream/signing-secrets`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as { secrets: { endpoint_id: string }[] };
      const rotated = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const cliEnv: NodeJS.ProcessEnv = { ...process.env, ...storage.env(), LOG_LEVEL: 'silent' };
        if (!storage.databaseUrl) delete cliEnv.DATABASE_URL;
        execFile(
          process.execPath,
          ['bin/sika.mjs', 'webhooks', 'rotate-secret', endpoints.secrets[0]!.endpoint_id, '--overlap-hours', '1'],
          { cwd: ROOT, env: cliEnv, timeout: 120_000 },
          (error, out, err) => resolve({ code: error ? 1 : 0, stdout: out, stderr: err }),
        );
      });
      assert.equal(rotated.code, 0, rotated.stderr);
      rotatedSecret = (JSON.parse(rotated.stdout) as { secret: string }).secret;
      await new Promise((resolve) => setTimeout(resolve, LISTEN_SECRETS_REFRESH_MS + 500));
      const before = hooks.received.length;
      await trigger({ apiKey: key, baseUrl: base }, 'checkout.session.completed', {});
      await waitFor('the events after the rotation', () => hooks!.received.length >= before + 2);
      assert.deepEqual(hooks.refused, []);
      for (const r of hooks.received.slice(before))
        assert.deepEqual(
          r.verifiedWith,
          [bannerSecret, rotatedSecret],
          'signed with the old and the new secret during the overlap',
        );
      assert.ok(stderr.includes(`was rotated: now ${rotatedSecret}`), stderr);
    } finally {
      listener?.kill('SIGKILL');
      await hooks?.close();
      const exited = once(server, 'exit');
      if (server.exitCode === null) server.kill('SIGTERM');
      await exited;
      await storage.drop();
    }
  });
});

/** A receiver as the README's: the SDK's Sika.webhooks.verify over the raw body; notes which of the secrets verify. */
async function sdkReceiver(secrets: () => string[]) {
  const received: { id: string; verifiedWith: string[] }[] = [];
  const refused: string[] = [];
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const verifiedWith: string[] = [];
      let id = '';
      for (const secret of secrets()) {
        try {
          id = Sika.webhooks.verify<{ id: string }>(raw, req.headers, secret).id;
          verifiedWith.push(secret);
        } catch (error) {
          if (!(error instanceof WebhookVerificationError)) throw error;
        }
      }
      if (verifiedWith.length === 0) {
        refused.push(String(req.headers['webhook-id']));
        res.writeHead(400).end();
        return;
      }
      received.push({ id, verifiedWith });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
