// @sika/node's request logic (packages/node/src) against a small HTTP server on 127.0.0.1 that answers
// what each test scripts: an Idempotency-Key on every POST, the same key on each retry, retries on 429 and
// 503 after Retry-After, on lost answers of GETs and of the POSTs whose route honours the key (those the
// served /openapi.json declares it on; never the payer's resend), never on other errors; SikaError from
// the envelope; cursor paging; webhooks.verify() against the server's own signing; the package's engines.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  Sika,
  SikaError,
  WebhookVerificationError,
  paginate,
  retryAfterMs,
  RETRY_AFTER_MAX_MS,
} from '../../packages/node/src/index.ts';
import { honoursIdempotencyKey, KEYED_POSTS } from '../../packages/node/src/retry.ts';
import { openApiDocument } from '../../scripts/openapi.ts';
import { signatureHeader } from '../../src/events/signing.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  atMs: number;
}

type Handler = (request: Seen, res: ServerResponse, index: number) => void;

describe('@sika/node client: idempotency keys, retries, errors, paging', () => {
  let server: Server;
  let baseUrl: string;
  let seen: Seen[] = [];
  let handler: Handler = (_request, res) => res.end();

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          atMs: Date.now(),
        };
        seen.push(request);
        handler(request, res, seen.length - 1);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    seen = [];
  });

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const session = { id: 'cs_1', status: 'open', amount_minor: 1000 };
  const newSession = { amount_minor: 1000, invoice_ref: 'INV-1' };
  const client = (options: { maxRetries?: number; timeoutMs?: number } = {}) =>
    new Sika({ apiKey: 'ak_test_unit', baseUrl, ...options });

  it('a POST gets an Idempotency-Key, kept across a 429 retry made after Retry-After', async () => {
    handler = (_request, res, index) =>
      index === 0
        ? json(
            res,
            429,
            { error: { code: 'RATE_LIMITED', message: 'slow down', retry_after_seconds: 1 } },
            { 'retry-after': '1' },
          )
        : json(res, 201, session);
    const created = await client().sessions.create(newSession);
    assert.deepEqual(created, session);
    assert.equal(seen.length, 2);
    const [first, second] = seen as [Seen, Seen];
    assert.match(String(first.headers['idempotency-key']), /^[0-9a-f-]{36}$/);
    assert.equal(second.headers['idempotency-key'], first.headers['idempotency-key'], 'the retry sends the same key');
    assert.equal(second.body, first.body, 'and the same body');
    assert.deepEqual(JSON.parse(second.body), newSession);
    assert.ok(second.atMs - first.atMs >= 950, `waited ${second.atMs - first.atMs} ms for Retry-After: 1`);
    assert.equal(first.headers.authorization, 'Bearer ak_test_unit');
    assert.equal(first.headers['content-type'], 'application/json');
    assert.match(String(first.headers['user-agent']), /^sika-node\/0\.1\.0$/);
  });

  it('two POSTs get two keys; a given key is sent as given; a GET gets none', async () => {
    handler = (_request, res) => json(res, 201, session);
    const sika = client();
    await sika.sessions.create(newSession);
    await sika.sessions.create(newSession);
    await sika.sessions.create(newSession, { idempotencyKey: 'order-42' });
    handler = (_request, res) => json(res, 200, session);
    await sika.sessions.retrieve('cs_1');
    assert.equal(seen.length, 4);
    assert.notEqual(seen[0]!.headers['idempotency-key'], seen[1]!.headers['idempotency-key']);
    assert.equal(seen[2]!.headers['idempotency-key'], 'order-42');
    assert.equal(seen[3]!.method, 'GET');
    assert.equal(seen[3]!.url, '/api/v1/sessions/cs_1');
    assert.equal(seen[3]!.headers['idempotency-key'], undefined);
  });

  it('503 after maxRetries retries: SikaError with the status, code, message and request id of the last answer', async () => {
    handler = (_request, res, index) =>
      json(
        res,
        503,
        { error: { code: 'UNAVAILABLE', message: `down ${index}` } },
        { 'retry-after': '0', 'x-request-id': `req-${index}` },
      );
    const error = await client({ maxRetries: 2 })
      .sessions.create(newSession)
      .then(
        () => assert.fail('expected a SikaError'),
        (caught: unknown) => caught,
      );
    assert.ok(error instanceof SikaError);
    assert.equal(error.status, 503);
    assert.equal(error.code, 'UNAVAILABLE');
    assert.equal(error.message, 'down 2');
    assert.equal(error.requestId, 'req-2');
    assert.equal(seen.length, 3, 'the first try and 2 retries');
    assert.equal(new Set(seen.map((request) => request.headers['idempotency-key'])).size, 1);
  });

  it('maxRetries 0 tries once; other errors (400, 409, 500) are never retried', async () => {
    handler = (_request, res) =>
      json(res, 429, { error: { code: 'RATE_LIMITED', message: 'slow down' } }, { 'retry-after': '0' });
    await assert.rejects(
      client({ maxRetries: 0 }).sessions.list(),
      (error: unknown) => error instanceof SikaError && error.status === 429 && error.code === 'RATE_LIMITED',
    );
    assert.equal(seen.length, 1);
    for (const [status, code] of [
      [400, 'VALIDATION_FAILED'],
      [409, 'CONFLICT'],
      [500, 'INTERNAL'],
    ] as const) {
      seen = [];
      handler = (_request, res) => json(res, status, { error: { code, message: 'no' } });
      await assert.rejects(
        client().payouts.create({ recipient_id: 'r', amount_minor: 1, client_reference: 'c' }),
        (error: unknown) => error instanceof SikaError && error.status === status && error.code === code,
      );
      assert.equal(seen.length, 1, `${status} is not retried`);
    }
  });

  it('an answer that is not the envelope still gives a SikaError (HTTP_<status>)', async () => {
    handler = (_request, res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('bad gateway');
    };
    await assert.rejects(
      client().sessions.retrieve('cs_1'),
      (error: unknown) => error instanceof SikaError && error.status === 502 && error.code === 'HTTP_502',
    );
  });

  it('a lost answer (connection reset) is retried for a POST, with the same key', async () => {
    handler = (_request, res, index) => (index === 0 ? res.socket?.destroy() : json(res, 201, session));
    assert.deepEqual(await client().sessions.create(newSession), session);
    assert.equal(seen.length, 2);
    assert.equal(seen[1]!.headers['idempotency-key'], seen[0]!.headers['idempotency-key']);
  });

  // A payer's POST reached through sika.api whose route does not deduplicate by the key (issue 29): each
  // resend is one more prompt on the payer's phone, so the SDK must not send it again on its own.
  const resend = (sika: Sika) =>
    sika.api.POST('/api/v1/checkout/sessions/{reference}/provider-attempts/{attempt_reference}/resend', {
      params: { path: { reference: 'cs_1', attempt_reference: 'pa_1' } },
    });
  const attempt = { attempt_reference: 'pa_1', status: 'pending', resends_left: 2 };

  it("the payer's resend (its route ignores the key) is sent once after a lost answer, a timeout or a 503; a 429 is retried", async () => {
    handler = (_request, res, index) => (index === 0 ? res.socket?.destroy() : json(res, 200, attempt));
    await assert.rejects(
      resend(client()),
      (error: unknown) => error instanceof SikaError && error.status === 0 && error.code === 'CONNECTION_ERROR',
    );
    assert.equal(seen.length, 1, 'a lost answer: not sent again, the payer got one prompt');
    assert.equal(seen[0]!.url, '/api/v1/checkout/sessions/cs_1/provider-attempts/pa_1/resend');

    seen = [];
    handler = (_request, res, index) =>
      index === 0 ? setTimeout(() => json(res, 200, attempt), 1_000) : json(res, 200, attempt);
    await assert.rejects(
      resend(client({ timeoutMs: 150 })),
      (error: unknown) => error instanceof SikaError && error.status === 0 && error.code === 'TIMEOUT',
    );
    assert.equal(seen.length, 1, 'a timeout: not sent again');

    seen = [];
    handler = (_request, res, index) =>
      index === 0
        ? json(res, 503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'down' } }, { 'retry-after': '0' })
        : json(res, 200, attempt);
    const unavailable = await resend(client());
    assert.equal(unavailable.response.status, 503, 'a 503 may follow a commit: returned, not sent again');
    assert.equal(seen.length, 1);

    seen = [];
    handler = (_request, res, index) =>
      index === 0
        ? json(res, 429, { error: { code: 'RATE_LIMITED', message: 'slow down' } }, { 'retry-after': '0' })
        : json(res, 200, attempt);
    const limited = await resend(client());
    assert.equal(limited.response.status, 200, 'a 429 was refused before anything ran: retried');
    assert.deepEqual(limited.data, attempt);
    assert.equal(seen.length, 2);
  });

  it("the payer's attempt cancel honours the key: a lost answer or a 503 is resent with the same key, also under a base URL with a path", async () => {
    const cancelled = { attempt_reference: 'pa_1', status: 'cancelled' };
    handler = (_request, res, index) => (index === 0 ? res.socket?.destroy() : json(res, 200, cancelled));
    const sika = new Sika({ apiKey: 'ak_test_unit', baseUrl: `${baseUrl}/sika/` });
    const answer = await sika.api.POST(
      '/api/v1/checkout/sessions/{reference}/provider-attempts/{attempt_reference}/cancel',
      { params: { path: { reference: 'cs_1', attempt_reference: 'pa_1' } } },
    );
    assert.deepEqual(answer.data, cancelled);
    assert.equal(seen.length, 2);
    assert.equal(seen[1]!.url, '/sika/api/v1/checkout/sessions/cs_1/provider-attempts/pa_1/cancel');
    assert.match(String(seen[0]!.headers['idempotency-key']), /^[0-9a-f-]{36}$/);
    assert.equal(seen[1]!.headers['idempotency-key'], seen[0]!.headers['idempotency-key']);

    seen = [];
    handler = (_request, res, index) =>
      index === 0
        ? json(res, 503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'down' } }, { 'retry-after': '0' })
        : json(res, 201, session);
    assert.deepEqual(await client().sessions.create(newSession), session);
    assert.equal(seen.length, 2, 'a keyed POST after a 503: resent');
    assert.equal(seen[1]!.headers['idempotency-key'], seen[0]!.headers['idempotency-key']);
  });

  it('a try that takes longer than timeoutMs is abandoned and retried; TIMEOUT once retries run out', async () => {
    handler = (_request, res, index) =>
      index === 0 ? setTimeout(() => json(res, 200, session), 1_000) : json(res, 200, session);
    assert.deepEqual(await client({ timeoutMs: 200 }).sessions.retrieve('cs_1'), session);
    assert.equal(seen.length, 2);
    seen = [];
    handler = (_request, res) => setTimeout(() => json(res, 200, session), 1_000);
    await assert.rejects(
      client({ timeoutMs: 150, maxRetries: 1 }).sessions.retrieve('cs_1'),
      (error: unknown) => error instanceof SikaError && error.status === 0 && error.code === 'TIMEOUT',
    );
    assert.equal(seen.length, 2);
  });

  it('no server: CONNECTION_ERROR after the retries', async () => {
    const sika = new Sika({ apiKey: 'ak_test_unit', baseUrl: 'http://127.0.0.1:9', maxRetries: 1 });
    await assert.rejects(
      sika.sessions.retrieve('cs_1'),
      (error: unknown) => error instanceof SikaError && error.code === 'CONNECTION_ERROR' && error.status === 0,
    );
  });

  it('Retry-After: seconds or an HTTP date, capped at 60 s', () => {
    assert.equal(retryAfterMs('2'), 2_000);
    assert.equal(retryAfterMs('0'), 0);
    assert.equal(retryAfterMs('3600'), RETRY_AFTER_MAX_MS);
    assert.equal(
      retryAfterMs(new Date(Date.parse('2026-01-01T00:00:10Z')).toUTCString(), Date.parse('2026-01-01T00:00:00Z')),
      10_000,
    );
    assert.equal(retryAfterMs(null), null);
    assert.equal(retryAfterMs('soon'), null);
  });

  it('paginate and listAll walk the pages with starting_after = the last id while has_more', async () => {
    const ids = ['cs_5', 'cs_4', 'cs_3', 'cs_2', 'cs_1'];
    handler = (request, res) => {
      const url = new URL(request.url, baseUrl);
      const after = url.searchParams.get('starting_after');
      const start = after === null ? 0 : ids.indexOf(after) + 1;
      const data = ids.slice(start, start + 2).map((id) => ({ ...session, id }));
      json(res, 200, { object: 'list', data, has_more: start + 2 < ids.length });
    };
    const sika = client();
    const walked: string[] = [];
    for await (const s of sika.paginate(sika.sessions.list, { status: 'success', limit: 2 })) walked.push(s.id);
    assert.deepEqual(walked, ids);
    assert.deepEqual(
      seen.map((request) => request.url),
      [
        '/api/v1/sessions?status=success&limit=2',
        '/api/v1/sessions?status=success&limit=2&starting_after=cs_4',
        '/api/v1/sessions?status=success&limit=2&starting_after=cs_2',
      ],
    );
    const again: string[] = [];
    for await (const s of paginate(sika.sessions.list)) again.push(s.id);
    assert.deepEqual(again, ids);
    const listed: string[] = [];
    for await (const s of sika.sessions.listAll({ limit: 2 })) listed.push(s.id);
    assert.deepEqual(listed, ids);
  });

  it('settlements: the schedule read and saved, a Test rehearsal, and every page of what a settlement paid out', async () => {
    const rows = ['txn_3', 'txn_2', 'txn_1'];
    handler = (request, res) => {
      const url = new URL(request.url, baseUrl);
      if (url.pathname === '/api/v1/balance/transactions') {
        const after = url.searchParams.get('starting_after');
        const start = after === null ? 0 : rows.indexOf(after) + 1;
        const data = rows.slice(start, start + 2).map((id) => ({ id, net_minor: 100 }));
        return json(res, 200, { object: 'list', data, has_more: start + 2 < rows.length });
      }
      if (url.pathname === '/api/v1/test/settlements/run')
        return json(res, 200, { object: 'list', data: [], has_more: false });
      return json(res, 200, { object: 'settlement_schedule', interval: 'daily' });
    };
    const sika = client();
    assert.equal((await sika.settlements.retrieveSchedule()).interval, 'daily');
    await sika.settlements.updateSchedule({ interval: 'daily', recipient_id: 'rcp_1' });
    await sika.test.runSettlements(new Date('2026-12-01T10:00:00Z'));
    const paid: string[] = [];
    for await (const row of sika.settlements.transactions('po_1')) paid.push(row.id);
    assert.deepEqual(paid, rows);
    assert.deepEqual(
      seen.map((request) => `${request.method} ${request.url} ${request.body}`),
      [
        'GET /api/v1/settlements/schedule ',
        'POST /api/v1/settlements/schedule {"interval":"daily","recipient_id":"rcp_1"}',
        'POST /api/v1/test/settlements/run {"as_of":"2026-12-01T10:00:00.000Z"}',
        'GET /api/v1/balance/transactions?payout_id=po_1 ',
        'GET /api/v1/balance/transactions?payout_id=po_1&starting_after=txn_2 ',
      ],
    );
    assert.ok(seen[1]!.headers['idempotency-key'], 'a schedule save carries an Idempotency-Key');
  });

  it('payouts.listAll walks page numbers until total', async () => {
    const all = Array.from({ length: 5 }, (_, i) => ({ id: `po_${i}` }));
    handler = (request, res) => {
      const url = new URL(request.url, baseUrl);
      const page = Number(url.searchParams.get('page'));
      json(res, 200, { payouts: all.slice((page - 1) * 2, page * 2), page, limit: 2, total: all.length });
    };
    const ids: string[] = [];
    for await (const payout of client().payouts.listAll({ limit: 2 })) ids.push(payout.id);
    assert.deepEqual(
      ids,
      all.map((payout) => payout.id),
    );
    assert.equal(seen.length, 3);
  });

  it('options are checked', () => {
    assert.throws(() => new Sika({ apiKey: '', baseUrl }), TypeError);
    assert.throws(() => new Sika({ apiKey: 'ak_test_x', baseUrl: 'localhost:3000' }), TypeError);
    assert.throws(() => new Sika({ apiKey: 'ak_test_x', baseUrl, maxRetries: -1 }), TypeError);
  });
});

describe("@sika/node resends exactly the POSTs the served document says honour Idempotency-Key; its engines are the server's", () => {
  interface Operation {
    parameters?: { in: string; name: string }[];
  }

  it('KEYED_POSTS is the set of POST operations of /openapi.json that declare the header, and every other POST (resend included) is not resent', async () => {
    const document = (await openApiDocument()) as { paths: Record<string, { post?: Operation }> };
    const posts = Object.entries(document.paths).flatMap(([path, operations]) =>
      operations.post ? [[path, operations.post] as const] : [],
    );
    assert.ok(posts.length >= 20, `found ${posts.length} POST operations`);
    const declares = (operation: Operation) =>
      (operation.parameters ?? []).some((p) => p.in === 'header' && p.name === 'idempotency-key');
    const keyed = posts.filter(([, operation]) => declares(operation)).map(([path]) => path);
    assert.deepEqual([...KEYED_POSTS].sort(), keyed.sort());
    const resendPath = '/api/v1/checkout/sessions/{reference}/provider-attempts/{attempt_reference}/resend';
    assert.ok(
      posts.some(([path, operation]) => path === resendPath && !declares(operation)),
      'resend is a POST that takes no key',
    );
    // What the retry reads: a URL (ids in place of the names, a base URL with or without a path of its own).
    for (const [path, operation] of posts) {
      const concrete = path.replace(/\{(\w+)\}/g, (_, name: string) => `${name}_1`);
      for (const base of ['https://pay.example.com', 'https://example.com/sika'])
        assert.equal(honoursIdempotencyKey(`${base}${concrete}?x=1`), declares(operation), `${base}${concrete}`);
    }
  });

  it("packages/node/package.json's engines are the root's (and the lockfile's entry says the same)", () => {
    const read = (path: string) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));
    const root = read('../../package.json').engines.node;
    assert.equal(read('../../packages/node/package.json').engines.node, root);
    assert.equal(read('../../package-lock.json').packages['packages/node'].engines.node, root);
    assert.match(
      readFileSync(new URL('../../packages/node/README.md', import.meta.url), 'utf8'),
      new RegExp(`\`${root.replace(/[|^.]/g, '\\$&')}\``),
      "the SDK's README names the same range",
    );
  });
});

describe('@sika/node webhooks.verify against the server signing', () => {
  const secret = `whsec_${Buffer.from('an endpoint secret of 24 bytes!').toString('base64')}`;
  const body = JSON.stringify({
    id: 'evt_1',
    type: 'checkout.session.completed',
    created_at: '2026-11-24T00:00:00Z',
    environment: 'test',
    livemode: false,
    data: { session: { id: 'cs_1' } },
  });
  const signed = (overrides: { secret?: string; timestampS?: number; body?: string } = {}) => {
    const timestampS = overrides.timestampS ?? Math.floor(Date.now() / 1000);
    return {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(timestampS),
      'webhook-signature': signatureHeader([overrides.secret ?? secret], 'msg_1', timestampS, overrides.body ?? body),
    };
  };

  it('accepts what the server signs (string, Buffer, Headers, header arrays, a rotated secret) and returns the event', () => {
    assert.equal(Sika.webhooks.verify(body, signed(), secret).id, 'evt_1');
    assert.equal(
      Sika.webhooks.verify(Buffer.from(body), new Headers(signed()), secret).type,
      'checkout.session.completed',
    );
    const headers = signed();
    const rotated = `whsec_${Buffer.from('the next secret').toString('base64')}`;
    const both = {
      ...headers,
      'Webhook-Signature': [
        `${signatureHeader([rotated, secret], 'msg_1', Number(headers['webhook-timestamp']), body)}`,
      ],
    };
    delete (both as Record<string, unknown>)['webhook-signature'];
    assert.equal(
      new Sika({ apiKey: 'ak_test_x', baseUrl: 'http://127.0.0.1' }).webhooks.verify(
        new TextEncoder().encode(body),
        both,
        secret,
      ).id,
      'evt_1',
    );
  });

  it('refuses an altered body, another secret, an old timestamp and missing headers', () => {
    const refused = (run: () => unknown) =>
      assert.throws(run, (error: unknown) => error instanceof WebhookVerificationError);
    refused(() => Sika.webhooks.verify(body.replace('cs_1', 'cs_2'), signed(), secret));
    refused(() =>
      Sika.webhooks.verify(
        body,
        signed({ secret: `whsec_${Buffer.from('somebody else').toString('base64')}` }),
        secret,
      ),
    );
    refused(() => Sika.webhooks.verify(body, signed({ timestampS: Math.floor(Date.now() / 1000) - 600 }), secret));
    refused(() => Sika.webhooks.verify(body, { 'webhook-id': 'msg_1' }, secret));
  });
});
