// Running Sika for others (issue 14, findings 6, 8 and 9): TRUST_PROXY decides whose X-Forwarded-For is
// believed; request heads and bodies must arrive in bounded time and are answered 408 with the envelope;
// a refused body is drained so the answer is readable by a client that writes everything before reading;
// /metrics needs METRICS_TOKEN, or lives on its own METRICS_PORT, and is not served on a hosted
// instance's API port without either.
import assert from 'node:assert/strict';
import { connect, createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadConfig, ConfigError } from '../../src/config/index.ts';
import { multipartFile } from '../support/http.ts';
import { bearer, startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

/**
 * A free port below Linux's ephemeral range (32768 and up): a port freePort() found free and let go can be handed
 * straight back by the kernel to the next listen(0), here the API's own, and the metrics server then cannot bind
 * it (the failure seen once under load: /metrics answered 404 by the API on that port).
 */
async function portOutsideEphemeralRange(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
  }
  throw new Error('no free port found between 20000 and 32000');
}

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
  /** The socket error seen, if any (after or instead of an answer). */
  error: string | null;
  elapsedMs: number;
}

/**
 * Sends bytes over a raw socket exactly as given, optionally in timed pieces, half-closes only when asked,
 * and resolves with what came back once the server closes (or waitMs passes).
 */
function rawExchange(
  port: number,
  pieces: (string | Buffer)[],
  options: { gapMs?: number; end?: boolean; waitMs?: number; readAfterWriting?: boolean } = {},
): Promise<RawAnswer> {
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | null = null;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0),
        headers: split >= 0 ? text.slice(0, split) : text,
        body: split >= 0 ? text.slice(split + 4) : '',
        error,
        elapsedMs: Date.now() - started,
      });
    };
    const timer = setTimeout(finish, options.waitMs ?? 20_000);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    socket.on('close', finish);
    // Like curl: nothing is read until everything is written, so an answer the kernel threw away when the
    // server reset the connection is never seen.
    if (options.readAfterWriting) socket.pause();
    socket.on('connect', async () => {
      for (const piece of pieces) {
        if (socket.destroyed) break;
        await new Promise<void>((written) => socket.write(piece, () => written()));
        if (options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
      }
      if (options.end && !socket.destroyed) socket.end();
      socket.resume();
    });
  });
}

describe(`hosting: proxies, timeouts, refused bodies, metrics (${storageKind})`, () => {
  describe('TRUST_PROXY', () => {
    const contexts: TestContext[] = [];
    after(async () => {
      for (const t of contexts) await t.close();
    });
    const app = async (env: Record<string, string>) => {
      const t = await startTestApp({ RATE_LIMIT_IP_PER_S: '2', ...env });
      contexts.push(t);
      return t;
    };
    const options = (t: TestContext, forwardedFor: string) =>
      t.app.inject({ method: 'GET', url: '/api/v1/checkout/options', headers: { 'x-forwarded-for': forwardedFor } });

    it('off (the default): X-Forwarded-For is ignored, so a payer cannot pick a fresh rate-limit bucket by claiming another address', async () => {
      const t = await app({});
      assert.equal(t.config.trustProxy, false);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await options(t, `198.51.100.${i + 1}`)).statusCode);
      assert.deepEqual(statuses.slice(0, 2), [200, 200]);
      assert.ok(
        statuses.slice(2).every((s) => s === 429),
        `spoofed addresses shared one bucket: ${statuses}`,
      );
    });

    it('a hop count: payers behind the load balancer get a bucket each (the address the proxy saw), and one payer is still limited', async () => {
      const t = await app({ TRUST_PROXY: '1' });
      assert.equal(t.config.trustProxy, 1);
      for (let payer = 1; payer <= 3; payer++) {
        for (let i = 0; i < 2; i++)
          assert.equal((await options(t, `203.0.113.${payer}`)).statusCode, 200, `payer ${payer} request ${i + 1}`);
      }
      assert.equal((await options(t, '203.0.113.1')).statusCode, 429, 'one payer past the budget is limited');
      // Only the hop the proxy appended counts: a client-supplied first entry does not change the bucket.
      assert.equal((await options(t, '192.0.2.99, 203.0.113.1')).statusCode, 429);
    });

    it('a CIDR list: X-Forwarded-For counts only from a listed proxy (the loopback here), not from anyone else', async () => {
      const trusted = await app({ TRUST_PROXY: '127.0.0.0/8,10.0.0.0/8' });
      assert.deepEqual(trusted.config.trustProxy, ['127.0.0.0/8', '10.0.0.0/8']);
      for (let payer = 1; payer <= 3; payer++)
        assert.equal((await options(trusted, `203.0.113.${payer}`)).statusCode, 200);
      const untrusted = await app({ TRUST_PROXY: '10.0.0.0/8' });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await options(untrusted, `203.0.113.${i + 1}`)).statusCode);
      assert.deepEqual(
        statuses,
        [200, 200, 429],
        'the loopback is not a listed proxy, so its X-Forwarded-For is ignored',
      );
    });

    it('bad values are configuration errors that say what is accepted; "on" is refused', () => {
      for (const value of ['on', 'true', '0', '11', '10.0.0.0/33', 'proxy.example.com', '1.2.3.4,,']) {
        assert.throws(
          () => loadConfig({ TRUST_PROXY: value }),
          (error: unknown) =>
            error instanceof ConfigError && /TRUST_PROXY must be off, a hop count/.test(error.message),
          value,
        );
      }
      assert.deepEqual(loadConfig({ TRUST_PROXY: 'loopback, 2001:db8::/32' }).trustProxy, [
        'loopback',
        '2001:db8::/32',
      ]);
      assert.equal(loadConfig({ TRUST_PROXY: 'off' }).trustProxy, false);
    });
  });

  describe('timeouts and refused bodies over a real socket', () => {
    let t: TestContext;
    let port: number;
    let key: string;
    before(async () => {
      t = await startTestApp({
        HTTP_HEADERS_TIMEOUT_MS: '1500',
        HTTP_REQUEST_TIMEOUT_MS: '2500',
        HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
      });
      port = Number(new URL(await t.listen()).port);
      key = (await t.merchant()).test_api_key;
    });
    after(async () => t?.close());

    it('a client trickling its request head a byte at a time is answered 408 with the envelope when the head deadline passes', async () => {
      const head = 'GET /api/v1/checkout/options HTTP/1.1\r\nHost: sika.test\r\nX-Slow: ' + 'x'.repeat(200);
      const answer = await rawExchange(port, [...head], { gapMs: 50, waitMs: 10_000 });
      assert.equal(answer.status, 408, JSON.stringify(answer));
      assert.equal(JSON.parse(answer.body).error.code, 'REQUEST_TIMEOUT');
      assert.ok(answer.elapsedMs < 1_500 + 2_500, `cut off after ${answer.elapsedMs} ms`);
    });

    it('a body shorter than its Content-Length is answered 408 when the request deadline passes, and nothing is created', async () => {
      const body = JSON.stringify({ amount_minor: 1000, invoice_ref: 'INV-SHORT' });
      const head = `POST /api/v1/sessions HTTP/1.1\r\nHost: sika.test\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 10}\r\n\r\n`;
      const answer = await rawExchange(port, [head, body], { waitMs: 10_000 });
      assert.equal(answer.status, 408, JSON.stringify(answer));
      assert.equal(JSON.parse(answer.body).error.code, 'REQUEST_TIMEOUT');
      assert.ok(answer.elapsedMs >= 2_000 && answer.elapsedMs < 2_500 + 2_500, `answered after ${answer.elapsedMs} ms`);
      const rows = await t.db.query("SELECT 1 FROM checkout_sessions WHERE invoice_ref = 'INV-SHORT'");
      assert.equal(rows.length, 0);
    });

    it('an idle keep-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
      const answer = await rawExchange(port, ['GET /healthz HTTP/1.1\r\nHost: sika.test\r\n\r\n'], { waitMs: 10_000 });
      assert.equal(answer.status, 200);
      assert.ok(answer.elapsedMs >= 900 && answer.elapsedMs < 5_000, `closed after ${answer.elapsedMs} ms`);
    });

    // Each case writes its whole body before reading, then asks to close: the way curl and many clients
    // send an upload. Before the drain, the multipart cases ended in EPIPE/ECONNRESET every time.
    const bigJson = Buffer.alloc(2 * 1_048_576, 'a');
    const bigFile = multipartFile(
      'file',
      'proof.pdf',
      'application/pdf',
      Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(8 * 1_048_576, 'a')]),
    );
    const cases: [string, () => string, Buffer | string, string, number][] = [
      [
        'a 2 MB JSON body',
        () =>
          `POST /api/v1/sessions HTTP/1.1\r\nHost: sika.test\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n`,
        bigJson,
        'PAYLOAD_TOO_LARGE',
        413,
      ],
      [
        'an 8 MB evidence upload',
        () =>
          `POST /api/v1/payouts/po_missing/evidence HTTP/1.1\r\nHost: sika.test\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${bigFile.contentType}\r\n`,
        bigFile.payload,
        'PAYLOAD_TOO_LARGE',
        413,
      ],
      [
        'a 2 MB body without a key',
        () => 'POST /api/v1/sessions HTTP/1.1\r\nHost: sika.test\r\nContent-Type: application/json\r\n',
        bigJson,
        'UNAUTHORIZED',
        401,
      ],
    ];
    for (const [name, head, body, code, status] of cases) {
      it(`${name} is answered ${status} ${code}, readable every time by a client that writes the whole body first (10 tries, Connection: close)`, async () => {
        const outcomes: string[] = [];
        for (let i = 0; i < 10; i++) {
          const answer = await rawExchange(
            port,
            [`${head()}Connection: close\r\nContent-Length: ${body.length}\r\n\r\n`, body],
            { end: true, readAfterWriting: true },
          );
          outcomes.push(
            answer.status === status && JSON.parse(answer.body || '{}').error?.code === code
              ? 'ok'
              : `${answer.status} ${answer.error} ${answer.body.slice(0, 80)}`,
          );
        }
        assert.deepEqual(outcomes, Array(10).fill('ok'));
      });
    }
  });

  describe('metrics', () => {
    const contexts: TestContext[] = [];
    after(async () => {
      for (const t of contexts) await t.close();
    });

    it('with METRICS_TOKEN, /metrics answers only a Bearer with that token (401 envelope otherwise)', async () => {
      const token = 'a-long-metrics-token-123';
      const t = await startTestApp({ METRICS_TOKEN: token });
      contexts.push(t);
      for (const headers of [{}, bearer('wrong-token-of-some-length'), { authorization: token }, bearer(`${token}x`)]) {
        const refused = await t.app.inject({ method: 'GET', url: '/metrics', headers });
        assert.equal(refused.statusCode, 401, JSON.stringify(headers));
        assert.equal(refused.json().error.code, 'UNAUTHORIZED');
      }
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: bearer(token) });
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /sika_http_requests_total/);
    });

    it('a hosted instance (BASE_URL not loopback) without a token or port does not serve /metrics on its API port; a loopback one does', async () => {
      const hosted = await startTestApp({ BASE_URL: 'https://pay.example.com' });
      contexts.push(hosted);
      assert.equal((await hosted.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 404);
      const laptop = await startTestApp({ BASE_URL: 'http://127.0.0.1:8080' });
      contexts.push(laptop);
      assert.equal((await laptop.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 200);
    });

    it("with METRICS_PORT, /metrics is served on that port only (with the token when set), counting the API port's requests", async () => {
      const metricsPort = await portOutsideEphemeralRange();
      const token = 'port-metrics-token-456';
      const t = await startTestApp({ METRICS_PORT: String(metricsPort), METRICS_TOKEN: token, HOST: '127.0.0.1' });
      contexts.push(t);
      const api = await t.listen();
      assert.equal((await fetch(`${api}/metrics`, { headers: bearer(token) })).status, 404, 'not on the API port');
      await fetch(`${api}/healthz`);
      const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
      assert.equal((await fetch(metricsUrl)).status, 401);
      const res = await fetch(metricsUrl, { headers: bearer(token) });
      assert.equal(res.status, 200);
      assert.match(
        await res.text(),
        /sika_http_requests_total\{method="GET",route="\/healthz",status_code="200"\} \d+/,
      );
      assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/other`, { headers: bearer(token) })).status, 404);
    });

    it('a METRICS_TOKEN that is short or has spaces, or a METRICS_PORT equal to PORT, is a configuration error', () => {
      assert.throws(() => loadConfig({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN must be at least 16 characters/);
      assert.throws(() => loadConfig({ METRICS_TOKEN: 'has a space in it, long enough' }), /METRICS_TOKEN/);
      assert.throws(() => loadConfig({ PORT: '9000', METRICS_PORT: '9000' }), /METRICS_PORT must differ from PORT/);
    });
  });
});
