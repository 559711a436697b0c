// Request body formats: JSON, application/x-www-form-urlencoded and multipart/form-data carry the same
// request (SPEC 4 preamble, DESIGN §3 "Idempotency"); malformed, oversized and unsupported bodies are
// 4xx errors in the one envelope (DESIGN §3 "Errors and limits").
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { UPLOAD_BYTES_MAX } from '../../src/http/body.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import {
  assertErrorEnvelope,
  BODY_FORMATS,
  call,
  encodeBody,
  flattenFields,
  multipartBody,
  sessionCount,
  syncCodes,
  withoutVolatile,
  type BodyFormat,
  type Json,
} from '../support/http.ts';

const BODY_LIMIT_BYTES = 2048;

// Form values are text, so metadata values are strings here: the three formats then mean the same thing.
const SESSION: Record<string, Json> = {
  amount_minor: 50000,
  invoice_ref: 'INV-FMT-1',
  description: 'School fees & books: "term 1" (Accra)',
  currency: 'GHS',
  customer: { name: 'Ama Mensah-Ɔboɔ', email: 'ama@example.com' },
  callback_url: 'https://shop.example.com/return?order=A1&x=1',
  metadata: { order: 'A1', note: 'a=b&c d+e', nested: { level: '2' } },
  expires_in_seconds: 3600,
};

const CODES = [
  { code: 'TUITION', name: 'Tuition' },
  { code: 'LIBRARY', name: 'Library fee' },
];

const INVOICE_LINES: Record<string, Json> = {
  invoice_ref: 'INV-FMT-2',
  currency: 'GHS',
  lines: [
    { code: 'TUITION', name: 'Tuition, term 1', amount_minor: 150000 },
    { code: 'LIBRARY', name: 'Library', amount_minor: 2500 },
    { code: 'UNKNOWN', name: 'Not synced', amount_minor: 100 },
    { code: 'TUITION', name: 'Duplicate', amount_minor: 1 },
  ],
};

const SYNC: Record<string, Json> = {
  lines: [
    { code: 'A', name: 'Alpha' },
    { code: 'B', name: 'Beta' },
    { code: '-bad', name: 'Bad code' },
  ],
  deactivate_missing: true,
};

describe(`request body formats (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES) });
  });
  after(() => t.close());

  const post = (
    m: CreatedMerchant,
    url: string,
    format: BodyFormat,
    body: Record<string, Json>,
    idempotencyKey?: string,
  ) => call(t, 'POST', url, { key: m.test_api_key, body, format, idempotencyKey });

  /** A raw POST with an explicit content type and payload. */
  const raw = (m: CreatedMerchant | null, url: string, contentType: string | undefined, payload: string | Buffer) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: {
        ...(m ? { authorization: `Bearer ${m.test_api_key}` } : {}),
        ...(contentType ? { 'content-type': contentType } : {}),
      },
      payload,
    });

  describe('the same request in three formats', () => {
    it('a session sent as JSON, urlencoded form (customer[name], metadata[order]) and multipart gives the same session', async () => {
      const m = await t.merchant();
      const results = [];
      for (const format of BODY_FORMATS) {
        const res = await post(m, '/api/v1/sessions', format, SESSION);
        assert.equal(res.statusCode, 201, `${format}: ${res.body}`);
        results.push(res.json());
      }
      const [json, form, multipart] = results;
      assert.deepEqual(withoutVolatile(json), withoutVolatile(form));
      assert.deepEqual(withoutVolatile(json), withoutVolatile(multipart));
      // Spot checks that the shared result really is the request (not three identical defaults).
      assert.equal(form.amount_minor, 50000);
      assert.deepEqual(form.customer, SESSION.customer);
      assert.deepEqual(multipart.metadata, SESSION.metadata);
      assert.equal(multipart.description, SESSION.description);
      assert.equal(form.callback_url, SESSION.callback_url);
      for (const s of results) {
        const lifetime = Date.parse(s.expires_at) - Date.parse(s.created_at);
        assert.ok(Math.abs(lifetime - 3600_000) < 2_000, 'expires_in_seconds was read as a number in every format');
      }
      assert.equal(new Set(results.map((s) => s.id)).size, 3);
      assert.equal(await sessionCount(t, m.merchant_id), 3);
    });

    it('a revenue-lines sync sent in each format gives the same counts, errors and stored lines', async () => {
      const outcomes = [];
      for (const format of BODY_FORMATS) {
        const m = await t.merchant();
        await syncCodes(t, m.test_api_key, [{ code: 'OLD', name: 'Old' }]);
        const res = await post(m, '/api/v1/revenue-lines', format, SYNC);
        assert.equal(res.statusCode, 207, `${format}: ${res.body}`);
        const listed = (
          await call(t, 'GET', '/api/v1/revenue-lines', { key: m.test_api_key, query: { include_inactive: 'true' } })
        ).json();
        outcomes.push({
          sync: res.json(),
          lines: listed.lines.map((l: { code: string; name: string; active: boolean }) => [l.code, l.name, l.active]),
          counts: listed.counts,
        });
      }
      assert.deepEqual(outcomes[1], outcomes[0]);
      assert.deepEqual(outcomes[2], outcomes[0]);
      // deactivate_missing=true was read as a boolean: OLD is deactivated in every format.
      assert.equal(outcomes[0]!.sync.deactivated, 1);
      assert.deepEqual(outcomes[0]!.lines, [
        ['A', 'Alpha', true],
        ['B', 'Beta', true],
        ['OLD', 'Old', false],
      ]);
      assert.deepEqual(
        outcomes[0]!.sync.errors.map((e: { index: number }) => e.index),
        [2],
      );
    });

    it('invoice lines sent as JSON, form (lines[0][code]) and multipart give the same 207 result and stored lines', async () => {
      const outcomes = [];
      for (const format of BODY_FORMATS) {
        const m = await t.merchant();
        await syncCodes(t, m.test_api_key, CODES);
        const res = await post(m, '/api/v1/invoice-lines', format, INVOICE_LINES);
        assert.equal(res.statusCode, 207, `${format}: ${res.body}`);
        const listed = (
          await call(t, 'GET', '/api/v1/invoice-lines', { key: m.test_api_key, query: { invoice_ref: 'INV-FMT-2' } })
        ).json();
        outcomes.push({ ingest: res.json(), listed });
      }
      assert.deepEqual(outcomes[1], outcomes[0]);
      assert.deepEqual(outcomes[2], outcomes[0]);
      assert.equal(outcomes[0]!.ingest.ingested, 2);
      assert.equal(outcomes[0]!.ingest.billed_minor, 152500);
      assert.equal(outcomes[0]!.listed.total_minor, 152500);
      assert.deepEqual(
        outcomes[0]!.ingest.errors.map((e: { index: number }) => e.index),
        [2, 3],
      );
    });

    it('an invoice line with amount_minor "0" in a form is INVOICE_LINE_AMOUNT_INVALID for that line, as in JSON', async () => {
      for (const format of BODY_FORMATS) {
        const m = await t.merchant();
        await syncCodes(t, m.test_api_key, CODES);
        const res = await post(m, '/api/v1/invoice-lines', format, {
          invoice_ref: 'INV-0',
          lines: [{ code: 'TUITION', name: 'T', amount_minor: 0 }],
        });
        assert.equal(res.statusCode, 207, `${format}: ${res.body}`);
        assert.equal(res.json().errors[0].code, 'INVOICE_LINE_AMOUNT_INVALID');
      }
    });

    it('a multipart body built by FormData and sent with fetch to a listening server creates the same session as JSON', async () => {
      const m = await t.merchant();
      const base = await t.listen();
      const formData = new FormData();
      for (const [name, value] of flattenFields(SESSION)) formData.append(name, value);
      const viaFetch = await fetch(`${base}/api/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${m.test_api_key}` },
        body: formData,
      });
      assert.equal(viaFetch.status, 201, await viaFetch.clone().text());
      const urlEncoded = await fetch(`${base}/api/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${m.test_api_key}` },
        body: new URLSearchParams(flattenFields(SESSION)),
      });
      assert.equal(urlEncoded.status, 201);
      const json = await post(m, '/api/v1/sessions', 'json', SESSION);
      assert.deepEqual(withoutVolatile(await viaFetch.json()), withoutVolatile(json.json()));
      assert.deepEqual(withoutVolatile(await urlEncoded.json()), withoutVolatile(json.json()));
    });

    it('content types with parameters (application/json; charset=utf-8, form; charset=UTF-8) and +json types are accepted', async () => {
      const m = await t.merchant();
      const body = { amount_minor: 100, invoice_ref: 'INV-CT' };
      for (const [contentType, payload] of [
        ['application/json; charset=utf-8', JSON.stringify(body)],
        ['Application/JSON', JSON.stringify(body)],
        ['application/vnd.api+json', JSON.stringify(body)],
        ['application/x-www-form-urlencoded; charset=UTF-8', 'amount_minor=100&invoice_ref=INV-CT'],
      ] as const) {
        const res = await raw(m, '/api/v1/sessions', contentType, payload);
        assert.equal(res.statusCode, 201, `${contentType}: ${res.body}`);
        assert.equal(res.json().amount_minor, 100);
      }
    });

    it('a form field repeated where one value is expected is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      const res = await raw(
        m,
        '/api/v1/sessions',
        'application/x-www-form-urlencoded',
        'amount_minor=100&amount_minor=200&invoice_ref=INV-R',
      );
      assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it('a form amount that is not a whole number ("12.5", "abc") is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      for (const amount of ['12.5', 'abc', '', '1e3']) {
        const res = await raw(
          m,
          '/api/v1/sessions',
          'application/x-www-form-urlencoded',
          `amount_minor=${encodeURIComponent(amount)}&invoice_ref=INV-R`,
        );
        assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
      }
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it('form array indexes with a gap are refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, CODES);
      const res = await raw(
        m,
        '/api/v1/invoice-lines',
        'application/x-www-form-urlencoded',
        'invoice_ref=INV-G&lines[0][code]=TUITION&lines[0][name]=T&lines[0][amount_minor]=1&lines[2][code]=LIBRARY&lines[2][name]=L&lines[2][amount_minor]=1',
      );
      assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
    });
  });

  describe('one Idempotency-Key across formats', () => {
    it('JSON, form and multipart versions of one session request under one key are the same request: replays, not 422', async () => {
      const m = await t.merchant();
      const key = `fmt-${randomUUID()}`;
      const first = await post(m, '/api/v1/sessions', 'json', SESSION, key);
      assert.equal(first.statusCode, 201, first.body);
      for (const format of ['form', 'multipart'] as const) {
        const res = await post(m, '/api/v1/sessions', format, SESSION, key);
        assert.equal(res.statusCode, 201, `${format}: ${res.body}`);
        assert.equal(res.headers['idempotent-replayed'], 'true', format);
        assert.equal(res.body, first.body, format);
      }
      assert.equal(await sessionCount(t, m.merchant_id), 1);
    });

    it('a form first and JSON second under one key also replay; a changed form body under that key is 422 IDEMPOTENCY_KEY_REUSED', async () => {
      const m = await t.merchant();
      const key = `fmt-${randomUUID()}`;
      const first = await post(m, '/api/v1/sessions', 'multipart', SESSION, key);
      assert.equal(first.statusCode, 201, first.body);
      const json = await post(m, '/api/v1/sessions', 'json', SESSION, key);
      assert.equal(json.headers['idempotent-replayed'], 'true');
      assert.equal(json.body, first.body);
      const changed = await post(m, '/api/v1/sessions', 'form', { ...SESSION, amount_minor: 50001 }, key);
      assertErrorEnvelope(changed, 422, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(await sessionCount(t, m.merchant_id), 1);
    });

    it('invoice lines under one key in JSON, form and multipart are one ingest, replayed', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, CODES);
      const key = `fmt-${randomUUID()}`;
      const first = await post(m, '/api/v1/invoice-lines', 'form', INVOICE_LINES, key);
      assert.equal(first.statusCode, 207, first.body);
      for (const format of ['json', 'multipart'] as const) {
        const res = await post(m, '/api/v1/invoice-lines', format, INVOICE_LINES, key);
        assert.equal(res.statusCode, 207, `${format}: ${res.body}`);
        assert.equal(res.headers['idempotent-replayed'], 'true', format);
        assert.equal(res.body, first.body);
      }
    });
  });

  describe('malformed, oversized and unsupported bodies', () => {
    it('malformed JSON is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      for (const payload of [
        '{"amount_minor": 100, "invoice_ref": ',
        '{amount_minor: 100}',
        "{'a': 1}",
        '{"a":1}}',
        'nul',
      ]) {
        assertErrorEnvelope(await raw(m, '/api/v1/sessions', 'application/json', payload), 400, 'INVALID_ARGUMENT');
      }
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it('an empty JSON body is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      assertErrorEnvelope(await raw(m, '/api/v1/sessions', 'application/json', ''), 400, 'INVALID_ARGUMENT');
      assertErrorEnvelope(await raw(m, '/api/v1/sessions', 'application/json', '   '), 400, 'INVALID_ARGUMENT');
    });

    it('invalid UTF-8 bytes in a JSON body are refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      const payload = Buffer.concat([
        Buffer.from('{"amount_minor":100,"invoice_ref":"INV-'),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('"}'),
      ]);
      const error = assertErrorEnvelope(
        await raw(m, '/api/v1/sessions', 'application/json', payload),
        400,
        'INVALID_ARGUMENT',
      );
      assert.match(error.message, /UTF-8/);
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it('invalid UTF-8 in a form body, as raw bytes or percent-encoded, is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      const rawBytes = Buffer.concat([Buffer.from('amount_minor=100&invoice_ref=INV-'), Buffer.from([0xff, 0xfe])]);
      assertErrorEnvelope(
        await raw(m, '/api/v1/sessions', 'application/x-www-form-urlencoded', rawBytes),
        400,
        'INVALID_ARGUMENT',
      );
      assertErrorEnvelope(
        await raw(
          m,
          '/api/v1/sessions',
          'application/x-www-form-urlencoded',
          'amount_minor=100&invoice_ref=INV-%FF%FE',
        ),
        400,
        'INVALID_ARGUMENT',
      );
      assertErrorEnvelope(
        await raw(
          m,
          '/api/v1/sessions',
          'application/x-www-form-urlencoded',
          'amount_minor=100&invoice_ref=INV-%E0%A4%A',
        ),
        400,
        'INVALID_ARGUMENT',
      );
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it('invalid UTF-8 in a multipart text field is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      const boundary = `b-${randomUUID()}`;
      const payload = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="amount_minor"\r\n\r\n100\r\n`),
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="invoice_ref"\r\n\r\nINV-`),
        Buffer.from([0xff, 0xfe]),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      assertErrorEnvelope(
        await raw(m, '/api/v1/sessions', `multipart/form-data; boundary=${boundary}`, payload),
        400,
        'INVALID_ARGUMENT',
      );
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it('a NUL character in a form or multipart text field is refused with 400 INVALID_ARGUMENT, never a 500', async () => {
      const m = await t.merchant();
      assertErrorEnvelope(
        await raw(
          m,
          '/api/v1/sessions',
          'application/x-www-form-urlencoded',
          'amount_minor=100&invoice_ref=INV-1&description=a%00b',
        ),
        400,
        'INVALID_ARGUMENT',
      );
      const { payload, contentType } = multipartBody({
        amount_minor: 100,
        invoice_ref: 'INV-1',
        customer: { name: 'A\u0000' },
      });
      assertErrorEnvelope(await raw(m, '/api/v1/sessions', contentType, payload), 400, 'INVALID_ARGUMENT');
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it('a malformed multipart body (no boundary, or truncated) is refused with a 400, never a 500', async () => {
      const m = await t.merchant();
      assertErrorEnvelope(
        await raw(m, '/api/v1/sessions', 'multipart/form-data', 'amount_minor=100'),
        400,
        'INVALID_ARGUMENT',
      );
      const { payload, contentType } = multipartBody({ amount_minor: 100, invoice_ref: 'INV-T' });
      assertErrorEnvelope(
        await raw(m, '/api/v1/sessions', contentType, payload.subarray(0, payload.length - 30)),
        400,
        'INVALID_ARGUMENT',
      );
      const longBoundary = 'b'.repeat(300);
      assertErrorEnvelope(
        await raw(
          m,
          '/api/v1/sessions',
          `multipart/form-data; boundary=${longBoundary}`,
          `--${longBoundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--${longBoundary}--\r\n`,
        ),
        400,
        'INVALID_ARGUMENT',
      );
      assertErrorEnvelope(
        await raw(m, '/api/v1/sessions', 'multipart/form-data; boundary=', '--\r\n'),
        400,
        'INVALID_ARGUMENT',
      );
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it(`a JSON body over BODY_LIMIT_BYTES (${BODY_LIMIT_BYTES}) is refused with 413 PAYLOAD_TOO_LARGE`, async () => {
      const m = await t.merchant();
      const payload = JSON.stringify({
        amount_minor: 100,
        invoice_ref: 'INV-BIG',
        metadata: { pad: 'x'.repeat(BODY_LIMIT_BYTES) },
      });
      assertErrorEnvelope(await raw(m, '/api/v1/sessions', 'application/json', payload), 413, 'PAYLOAD_TOO_LARGE');
      assert.equal(await sessionCount(t, m.merchant_id), 0);
      // Just under the limit is fine.
      const fits = JSON.stringify({ amount_minor: 100, invoice_ref: 'INV-OK', description: 'x'.repeat(200) });
      assert.ok(Buffer.byteLength(fits) < BODY_LIMIT_BYTES);
      assert.equal((await raw(m, '/api/v1/sessions', 'application/json', fits)).statusCode, 201);
    });

    it(`a form body over BODY_LIMIT_BYTES (${BODY_LIMIT_BYTES}) is refused with 413 PAYLOAD_TOO_LARGE`, async () => {
      const m = await t.merchant();
      const payload = `amount_minor=100&invoice_ref=INV-BIG&metadata[pad]=${'x'.repeat(BODY_LIMIT_BYTES)}`;
      assertErrorEnvelope(
        await raw(m, '/api/v1/sessions', 'application/x-www-form-urlencoded', payload),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it('a multipart body longer than BODY_LIMIT_BYTES plus one upload is refused with 413 PAYLOAD_TOO_LARGE before it is read', async () => {
      const m = await t.merchant();
      // 100 text fields of 60 KiB: each within the per-field limit, 6 MB in all.
      const metadata = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`pad${i}`, 'x'.repeat(60 * 1024)]));
      const { payload, contentType } = multipartBody({ amount_minor: 100, invoice_ref: 'INV-BIG', metadata });
      assert.ok(payload.length > BODY_LIMIT_BYTES + UPLOAD_BYTES_MAX);
      assertErrorEnvelope(await raw(m, '/api/v1/sessions', contentType, payload), 413, 'PAYLOAD_TOO_LARGE');
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it('an oversized body on invoice lines is 413 PAYLOAD_TOO_LARGE as well', async () => {
      const m = await t.merchant();
      const lines = Array.from({ length: 40 }, (_, i) => ({
        code: `CODE-${i}`,
        name: `Line number ${i}`,
        amount_minor: 100,
      }));
      const payload = JSON.stringify({ invoice_ref: 'INV-BIG', lines });
      assert.ok(Buffer.byteLength(payload) > BODY_LIMIT_BYTES);
      assertErrorEnvelope(await raw(m, '/api/v1/invoice-lines', 'application/json', payload), 413, 'PAYLOAD_TOO_LARGE');
    });

    it('an unsupported content type (text/xml, text/plain, application/xml) is refused with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const m = await t.merchant();
      for (const contentType of ['text/xml', 'text/plain', 'application/xml', 'application/octet-stream']) {
        const res = await raw(
          m,
          '/api/v1/sessions',
          contentType,
          '<session><amount_minor>100</amount_minor></session>',
        );
        const error = assertErrorEnvelope(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
        assert.ok(error.message.includes(contentType), `the message names the refused type: ${error.message}`);
      }
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it('a JSON integer beyond 2^53 - 1 anywhere in the body, in any notation, is 400 INVALID_ARGUMENT naming its field, as in a form; floats and digit strings pass', async () => {
      const m = await t.merchant();
      const cases: [string, string][] = [
        ['{"amount_minor": 9007199254740993, "invoice_ref": "INV-BIG-1"}', 'amount_minor'],
        ['{"amount_minor": 9007199254740992, "invoice_ref": "INV-BIG-2"}', 'amount_minor'],
        [
          '{"amount_minor": 500, "invoice_ref": "INV-BIG-3", "metadata": {"ids": ["a", {"n": -123456789012345678901234567890}]}}',
          'metadata.ids.1.n',
        ],
        [
          '{"invoice_ref": "INV-BIG-4", "metadata": {"a\\"b": 18446744073709551615}, "amount_minor": 500}',
          'metadata.a"b',
        ],
        // An integer value written with a fraction or an exponent is rounded just the same (issue 29).
        ['{"amount_minor": 500, "invoice_ref": "INV-BIG-7", "metadata": {"n": 9007199254740993.0}}', 'metadata.n'],
        ['{"amount_minor": 500, "invoice_ref": "INV-BIG-8", "metadata": {"n": 9.007199254740993e15}}', 'metadata.n'],
        ['{"amount_minor": 500, "invoice_ref": "INV-BIG-9", "metadata": {"huge": 1e300}}', 'metadata.huge'],
        ['{"amount_minor": 500, "invoice_ref": "INV-BIG-10", "metadata": {"l": [1.5, -1E+17]}}', 'metadata.l.1'],
        ['{"amount_minor": 500, "invoice_ref": "INV-BIG-11", "metadata": {"n": 90071992547409930e-1}}', 'metadata.n'],
        ['{"amount_minor": 500, "invoice_ref": "INV-BIG-12", "metadata": {"inf": 1e400}}', 'metadata.inf'],
        ['{"amount_minor": 9007199254740993.00, "invoice_ref": "INV-BIG-13"}', 'amount_minor'],
      ];
      for (const [payload, field] of cases) {
        const error = assertErrorEnvelope(
          await raw(m, '/api/v1/sessions', 'application/json', payload),
          400,
          'INVALID_ARGUMENT',
        );
        assert.deepEqual(
          error.fields?.map((f) => f.field),
          [field],
          payload,
        );
        assert.ok(error.message.startsWith(field), error.message);
      }
      // The largest safe integer itself reaches the schema (its own bound), floats of any size and long digit strings are kept.
      const safe = assertErrorEnvelope(
        await raw(
          m,
          '/api/v1/sessions',
          'application/json',
          '{"amount_minor": 9007199254740991, "invoice_ref": "INV-BIG-5"}',
        ),
        400,
        'INVALID_ARGUMENT',
      );
      assert.deepEqual(
        safe.fields?.map((f) => f.field),
        ['amount_minor'],
      );
      assert.doesNotMatch(safe.message, /9007199254740991/);
      const kept = await raw(
        m,
        '/api/v1/sessions',
        'application/json',
        '{"amount_minor": 500, "invoice_ref": "INV-BIG-6", "metadata": {"ratio": 12345678901234567890.5, "tiny": 1e-300, "half": 1.5, "hundred": 100, "tenth": 0.1, "minus": -3e2, "edge": 9.007199254740991e15, "whole": 4.0, "id": "123456789012345678901234"}}',
      );
      assert.equal(kept.statusCode, 201, kept.body);
      assert.deepEqual(kept.json().metadata, {
        ratio: 12345678901234567000,
        tiny: 1e-300,
        half: 1.5,
        hundred: 100,
        tenth: 0.1,
        minus: -300,
        edge: 9007199254740991,
        whole: 4,
        id: '123456789012345678901234',
      });
      assert.equal(await sessionCount(t, m.merchant_id), 1);
      // A form value beyond 2^53 - 1 is refused too, never rounded (16 digits used to become a number).
      for (const value of ['9999999999999999', '9007199254740993']) {
        const form = await raw(
          m,
          '/api/v1/sessions',
          'application/x-www-form-urlencoded',
          `amount_minor=${value}&invoice_ref=INV-BIG-F`,
        );
        assert.deepEqual(
          assertErrorEnvelope(form, 400, 'INVALID_ARGUMENT').fields?.map((f) => f.field),
          ['amount_minor'],
        );
      }
    });

    it('a charset other than UTF-8 is 415 UNSUPPORTED_MEDIA_TYPE for JSON, form and multipart bodies; utf-8 in any case is read', async () => {
      const m = await t.merchant();
      const { payload: multipart, contentType: multipartType } = encodeBody('multipart', {
        amount_minor: '500',
        invoice_ref: 'INV-CS-M',
      });
      for (const charset of ['utf-16', 'UTF-16LE', '"iso-8859-1"', 'us-ascii', 'windows-1252', '']) {
        const json = await raw(
          m,
          '/api/v1/sessions',
          `application/json; charset=${charset}`,
          JSON.stringify({ amount_minor: 500, invoice_ref: 'INV-CS-J' }),
        );
        assert.match(assertErrorEnvelope(json, 415, 'UNSUPPORTED_MEDIA_TYPE').message, /charset/, charset);
        assertErrorEnvelope(
          await raw(
            m,
            '/api/v1/sessions',
            `application/x-www-form-urlencoded;charset=${charset}`,
            'amount_minor=500&invoice_ref=INV-CS-F',
          ),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        );
        assertErrorEnvelope(
          await raw(m, '/api/v1/sessions', `${multipartType}; charset=${charset}`, multipart),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
        );
      }
      assert.equal(await sessionCount(t, m.merchant_id), 0);
      for (const [i, contentType] of [
        'application/json; charset=UTF-8',
        'application/json;charset="utf-8"',
        'application/json; charset=utf8',
      ].entries()) {
        const res = await raw(
          m,
          '/api/v1/sessions',
          contentType,
          JSON.stringify({ amount_minor: 500, invoice_ref: `INV-CS-OK-${i}` }),
        );
        assert.equal(res.statusCode, 201, `${contentType}: ${res.body}`);
      }
      assert.equal((await raw(m, '/api/v1/sessions', `${multipartType}; charset=utf-8`, multipart)).statusCode, 201);
    });

    it('a Content-Encoding other than identity (gzip, br, deflate) is 415 UNSUPPORTED_MEDIA_TYPE, over HTTP, for every body type', async () => {
      const m = await t.merchant();
      const baseUrl = await t.listen();
      const json = JSON.stringify({ amount_minor: 500, invoice_ref: 'INV-CE' });
      const { payload: multipart, contentType: multipartType } = encodeBody('multipart', {
        amount_minor: '500',
        invoice_ref: 'INV-CE',
      });
      const bodies: [string, string | Buffer][] = [
        ['application/json', gzipSync(json)],
        ['application/x-www-form-urlencoded', gzipSync('amount_minor=500&invoice_ref=INV-CE')],
        [multipartType, multipart],
      ];
      for (const encoding of ['gzip', 'br', 'deflate', 'identity, gzip']) {
        for (const [contentType, body] of bodies) {
          const res = await fetch(`${baseUrl}/api/v1/sessions`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${m.test_api_key}`,
              'content-type': contentType,
              'content-encoding': encoding,
            },
            body: new Uint8Array(Buffer.from(body)),
          });
          assert.equal(res.status, 415, `${encoding} ${contentType}`);
          const error = ((await res.json()) as { error: { code: string; message: string } }).error;
          assert.equal(error.code, 'UNSUPPORTED_MEDIA_TYPE');
          assert.match(error.message, /Content-Encoding/);
        }
      }
      assert.equal(await sessionCount(t, m.merchant_id), 0);
      const plain = await fetch(`${baseUrl}/api/v1/sessions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${m.test_api_key}`,
          'content-type': 'application/json',
          'content-encoding': 'identity',
        },
        body: json,
      });
      assert.equal(plain.status, 201);
    });

    it('a form field named __proto__[x] (or constructor[prototype]) is refused with 400 INVALID_ARGUMENT and pollutes nothing', async () => {
      const m = await t.merchant();
      for (const field of [
        '__proto__[x]',
        '__proto__',
        'constructor',
        'constructor[prototype][x]',
        'metadata[__proto__][x]',
        'customer[prototype]',
      ]) {
        const body = `amount_minor=100&invoice_ref=INV-P&${encodeURIComponent(field).replace(/%5B/g, '[').replace(/%5D/g, ']')}=1`;
        assertErrorEnvelope(
          await raw(m, '/api/v1/sessions', 'application/x-www-form-urlencoded', body),
          400,
          'INVALID_ARGUMENT',
        );
        const { payload, contentType } = multipartBody([
          ['amount_minor', '100'],
          ['invoice_ref', 'INV-P'],
          [field, '1'],
        ]);
        assertErrorEnvelope(await raw(m, '/api/v1/sessions', contentType, payload), 400, 'INVALID_ARGUMENT');
      }
      assert.equal(({} as Record<string, unknown>).x, undefined, 'Object.prototype is untouched');
      assert.equal(await sessionCount(t, m.merchant_id), 0);
    });

    it('a form nested deeper than five levels is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      const res = await raw(
        m,
        '/api/v1/sessions',
        'application/x-www-form-urlencoded',
        'amount_minor=100&invoice_ref=INV-D&metadata[a][b][c][d][e]=1',
      );
      assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
    });

    it('error bodies of every kind are the envelope {error: {code, message}} without stack traces or SQL', async () => {
      const m = await t.merchant();
      const cases: [Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>, number, string][] =
        [
          [raw(m, '/api/v1/sessions', 'application/json', '{"amount_minor":'), 400, 'INVALID_ARGUMENT'],
          [
            raw(m, '/api/v1/sessions', 'application/json', JSON.stringify({ amount_minor: 'x', invoice_ref: 1 })),
            400,
            'INVALID_ARGUMENT',
          ],
          [raw(m, '/api/v1/sessions', 'text/xml', '<a/>'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
          [raw(m, '/api/v1/sessions', 'application/json', 'x'.repeat(BODY_LIMIT_BYTES + 1)), 413, 'PAYLOAD_TOO_LARGE'],
          [raw(null, '/api/v1/sessions', 'application/json', '{}'), 401, 'UNAUTHORIZED'],
          [raw(m, '/api/v1/no-such-route', 'application/json', '{}'), 404, 'NOT_FOUND'],
          [call(t, 'GET', '/api/v1/sessions/cs_missing', { key: m.test_api_key }), 404, 'NOT_FOUND'],
          [
            raw(
              m,
              '/api/v1/sessions',
              'application/json',
              JSON.stringify({
                amount_minor: 100,
                invoice_ref: "x'; DROP TABLE checkout_sessions; --",
                currency: 'USD',
              }),
            ),
            400,
            'INVALID_ARGUMENT',
          ],
          [
            raw(m, '/api/v1/invoice-lines', 'application/x-www-form-urlencoded', 'invoice_ref=%ZZ'),
            400,
            'INVALID_ARGUMENT',
          ],
        ];
      for (const [pending, status, code] of cases) assertErrorEnvelope(await pending, status, code);
    });
  });

  it('encodeBody produces the three formats this file relies on', () => {
    // Guards the helpers: a broken encoder would make the format comparisons above vacuous.
    assert.equal(encodeBody('form', { a: { b: ['x', 'y'] } }).payload, 'a%5Bb%5D%5B0%5D=x&a%5Bb%5D%5B1%5D=y');
    const multipart = encodeBody('multipart', { a: '1' });
    assert.match(multipart.contentType, /^multipart\/form-data; boundary=/);
    assert.match(String(multipart.payload), /name="a"\r\n\r\n1\r\n/);
  });
});
