// Property tests of the merchant API's input handling (DESIGN §3 "Errors and limits", SPEC 4.1 and 7):
// random and mutated bodies, random bytes and every accepted (and one refused) content type, sent with a
// valid key to each merchant checkout endpoint. Whatever arrives, the answer is never a 5xx, and every
// non-2xx answer is the one error envelope {error: {code, message}}.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { flattenFields, formBody, multipartBody, syncCodes, type Json } from '../support/http.ts';

type Method = 'GET' | 'POST';
type Encoding = 'json' | 'form' | 'multipart' | 'text';
type Kind = 'integer' | 'string' | 'object' | 'array' | 'boolean';
type Path = (string | number)[];

interface Endpoint {
  method: Method;
  url: string;
  /** A body the endpoint accepts (POST) or null (GET). */
  valid: Record<string, Json> | null;
  /** The fields of the valid body and the JSON type the schema asks for. */
  fields: { path: Path; kind: Kind }[];
}

const ENDPOINTS: Endpoint[] = [
  {
    method: 'POST',
    url: '/api/v1/sessions',
    valid: {
      amount_minor: 50000,
      invoice_ref: 'INV-PROP-1',
      description: 'Term 1 fees',
      currency: 'GHS',
      customer: { name: 'Ama Mensah', email: 'ama@example.com' },
      callback_url: 'https://shop.example.com/return',
      metadata: { order: 'A1' },
      expires_in_seconds: 3600,
    },
    fields: [
      { path: ['amount_minor'], kind: 'integer' },
      { path: ['invoice_ref'], kind: 'string' },
      { path: ['description'], kind: 'string' },
      { path: ['currency'], kind: 'string' },
      { path: ['customer'], kind: 'object' },
      { path: ['customer', 'name'], kind: 'string' },
      { path: ['customer', 'email'], kind: 'string' },
      { path: ['callback_url'], kind: 'string' },
      { path: ['metadata'], kind: 'object' },
      { path: ['expires_in_seconds'], kind: 'integer' },
    ],
  },
  { method: 'GET', url: '/api/v1/sessions/cs_01m82k2jyxsqqjnbpbdc2q4f3y', valid: null, fields: [] },
  {
    method: 'POST',
    url: '/api/v1/invoice-lines',
    valid: {
      invoice_ref: 'INV-PROP-2',
      currency: 'GHS',
      lines: [{ code: 'TUITION', name: 'Tuition', amount_minor: 150000 }],
    },
    fields: [
      { path: ['invoice_ref'], kind: 'string' },
      { path: ['currency'], kind: 'string' },
      { path: ['lines'], kind: 'array' },
      { path: ['lines', 0], kind: 'object' },
      { path: ['lines', 0, 'code'], kind: 'string' },
      { path: ['lines', 0, 'name'], kind: 'string' },
      { path: ['lines', 0, 'amount_minor'], kind: 'integer' },
    ],
  },
  { method: 'GET', url: '/api/v1/invoice-lines?invoice_ref=INV-PROP-2', valid: null, fields: [] },
  {
    method: 'POST',
    url: '/api/v1/revenue-lines',
    valid: { lines: [{ code: 'TUITION', name: 'Tuition' }], deactivate_missing: false },
    fields: [
      { path: ['lines'], kind: 'array' },
      { path: ['lines', 0], kind: 'object' },
      { path: ['lines', 0, 'code'], kind: 'string' },
      { path: ['lines', 0, 'name'], kind: 'string' },
      { path: ['deactivate_missing'], kind: 'boolean' },
    ],
  },
  { method: 'GET', url: '/api/v1/revenue-lines', valid: null, fields: [] },
];
const POSTS = ENDPOINTS.filter((e) => e.method === 'POST');
const ENCODINGS: Encoding[] = ['json', 'form', 'multipart', 'text'];

// ---- arbitraries ----

/** Strings a client might send: ASCII, any code point (lone surrogates included), and known troublemakers. */
const anyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\uD800',
    '\uDFFF',
    '\uFEFF',
    '\u202Eevil',
    '😀',
    '%00',
    '%zz',
    '__proto__',
    'constructor',
    "'; DROP TABLE x; --",
    '[]',
    '{}',
    'a[b]',
    'a[]',
    '1e309',
  ),
);

const values = {
  integer: fc.oneof(
    fc.integer(),
    fc.constantFrom(0, -1, 1, 100_000_000, 100_000_001, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER),
  ),
  float: fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
    fc.constantFrom(0.5, -0.5, 1.0000001, -1e-300),
  ),
  string: anyString,
  boolean: fc.boolean(),
  null: fc.constant(null),
  array: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }) as fc.Arbitrary<Json>,
  object: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), {
    maxKeys: 4,
  }) as fc.Arbitrary<Json>,
};

/** A value whose JSON type differs from the one the schema asks for. */
function wrongType(kind: Kind): fc.Arbitrary<Json> {
  const others: Record<Kind, fc.Arbitrary<Json>[]> = {
    integer: [values.float, values.string, values.boolean, values.null, values.array, values.object],
    string: [values.integer, values.float, values.boolean, values.null, values.array, values.object],
    object: [values.integer, values.string, values.boolean, values.null, values.array],
    array: [values.integer, values.string, values.boolean, values.null, values.object],
    boolean: [values.integer, values.string, values.null, values.array, values.object],
  };
  return fc.oneof(...others[kind]) as fc.Arbitrary<Json>;
}

/** Arrays and objects nested `depth` levels deep around a leaf. */
const nested = (depth: number, objects: boolean): Json => {
  let value: Json = 'leaf';
  for (let i = 0; i < depth; i++) value = objects && i % 2 === 0 ? { d: value } : [value];
  return value;
};

type Mutation = { type: 'wrong-type' | 'other'; value: Json | undefined; label: string };

/** Counterexamples print as a short label: a 1 MB string or a 3,000-level tree would swamp (or overflow) the report. */
const labelled = (type: Mutation['type'], value: Json | undefined, label: string): Mutation => {
  const short = value === undefined ? 'undefined' : JSON.stringify(value).slice(0, 80);
  return Object.assign({ type, value, label }, { [fc.toStringMethod]: () => `${label}: ${short}` });
};

const mutation = (kind: Kind): fc.Arbitrary<Mutation> =>
  fc.oneof(
    { weight: 4, arbitrary: wrongType(kind).map((value) => labelled('wrong-type', value, 'wrong type')) },
    {
      weight: 2,
      arbitrary: fc
        .integer({ min: 1_000, max: 1_200_000 })
        .map((n) => labelled('other', 'x'.repeat(n), `huge string (${n})`)),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(fc.integer({ max: -1 }), fc.double({ max: -Number.MIN_VALUE, noNaN: true }))
        .map((n) => labelled('other', n, 'negative number')),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.integer({ min: 2, max: 3_000 }), fc.boolean())
        .map(([d, o]) => labelled('other', nested(d, o), `nested ${d} deep`)),
    },
    { weight: 1, arbitrary: anyString.map((s) => labelled('other', s, 'odd string')) },
    { weight: 1, arbitrary: fc.constant(null).map(() => labelled('other', undefined, 'removed')) },
  );

function setAt(body: Record<string, Json>, path: Path, value: Json | undefined): Record<string, Json> {
  const copy = structuredClone(body);
  let node: Record<string | number, Json> = copy as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  const last = path.at(-1)!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const toWellFormed = (text: string) => text.replace(LONE_SURROGATE, '\uFFFD');
const holdsLoneSurrogate = (value: Json | undefined): boolean =>
  typeof value === 'string'
    ? toWellFormed(value) !== value
    : Array.isArray(value)
      ? value.some(holdsLoneSurrogate)
      : value !== null && typeof value === 'object'
        ? Object.entries(value).some(([k, v]) => toWellFormed(k) !== k || holdsLoneSurrogate(v))
        : false;
const holdsNul = (value: Json | undefined): boolean => JSON.stringify(value ?? null).includes('\\u0000');
// An integer beyond 2^53 - 1 is refused by the parser however JSON.stringify writes it (digits, or an exponent from 1e21).
const holdsUnsafeInteger = (value: Json | undefined): boolean =>
  typeof value === 'number'
    ? Number.isInteger(value) && !Number.isSafeInteger(value)
    : Array.isArray(value)
      ? value.some(holdsUnsafeInteger)
      : value !== null && typeof value === 'object'
        ? Object.values(value).some(holdsUnsafeInteger)
        : false;
const wellFormed = (value: Json, depth: number): Json => {
  if (typeof value === 'string') return toWellFormed(value);
  if (depth === 0 && value && typeof value === 'object') return 'cut';
  if (Array.isArray(value)) return value.map((v) => wellFormed(v, depth - 1));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [toWellFormed(k), wellFormed(v, depth - 1)]));
  return value;
};

/** The body as the bytes and Content-Type of one encoding ('text' is refused: 415). */
function encode(encoding: Encoding, body: Json): { payload: string | Buffer; contentType: string } {
  // Form fields travel as UTF-8 text, which cannot hold a lone surrogate (random bytes cover invalid UTF-8).
  // Their bracketed names grow with depth, so trees are cut at 200 levels (the server refuses beyond 5).
  if (encoding === 'form' || encoding === 'multipart') body = wellFormed(body, 200);
  const asObject = (
    body !== null && typeof body === 'object' && !Array.isArray(body) ? body : { value: body }
  ) as Record<string, Json>;
  switch (encoding) {
    case 'json':
      return { payload: JSON.stringify(body), contentType: 'application/json' };
    case 'form':
      return { payload: formBody(asObject), contentType: 'application/x-www-form-urlencoded' };
    case 'multipart':
      return multipartBody(flattenFields(asObject));
    case 'text':
      return { payload: JSON.stringify(body), contentType: 'text/plain' };
  }
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=----sika-prop',
  'multipart/form-data',
  'text/plain',
];

// ---- checks ----

const describeRequest = (
  method: Method,
  url: string,
  contentType: string | undefined,
  payload: string | Buffer | undefined,
) =>
  `${method} ${url.slice(0, 200)} [${contentType ?? 'no content-type'}] ${payload === undefined ? '' : String(payload).slice(0, 300)}`;

/** Never a 5xx; a 2xx is JSON; anything else is exactly the error envelope. */
function assertWellFormed(res: LightMyRequestResponse, context: string): void {
  assert.ok(res.statusCode < 500, `${res.statusCode} for ${context}: ${res.body.slice(0, 300)}`);
  assert.match(String(res.headers['content-type']), /^application\/json/, `not JSON for ${context}`);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  if (res.statusCode >= 200 && res.statusCode < 300) return;
  assert.deepEqual(
    Object.keys(body),
    ['error'],
    `${res.statusCode} is not the envelope for ${context}: ${res.body.slice(0, 300)}`,
  );
  const error = body.error as Record<string, unknown>;
  assert.equal(typeof error.code, 'string', `error.code for ${context}`);
  assert.ok((error.code as string).length > 0);
  assert.equal(typeof error.message, 'string', `error.message for ${context}`);
  assert.ok((error.message as string).length > 0);
}

/** A 2xx POST response stored what the schema allows (a created session holds a valid amount). */
function assertAcceptedIsValid(endpoint: Endpoint, res: LightMyRequestResponse): void {
  if (res.statusCode >= 300 || endpoint.url !== '/api/v1/sessions') return;
  const session = res.json() as { amount_minor: unknown; invoice_ref: unknown };
  assert.ok(
    Number.isInteger(session.amount_minor) &&
      (session.amount_minor as number) >= 1 &&
      (session.amount_minor as number) <= 100_000_000,
    res.body,
  );
  assert.ok(
    typeof session.invoice_ref === 'string' && session.invoice_ref.length >= 1 && session.invoice_ref.length <= 120,
    res.body,
  );
}

const idempotencyKey = fc.option(fc.string({ unit: 'grapheme-ascii', minLength: 0, maxLength: 300 }), { freq: 3 });

describe(`property: merchant endpoints answer any input with a 4xx envelope, never a 5xx (${storageKind})`, () => {
  let t: TestContext;
  let key: string;
  before(async () => {
    t = await startTestApp({ BODY_LIMIT_BYTES: String(1_048_576) });
  });
  after(() => t.close());

  const send = async (
    endpoint: Endpoint,
    options: { url?: string; payload?: string | Buffer; contentType?: string; idempotencyKey?: string | null },
  ) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (options.contentType !== undefined) headers['content-type'] = options.contentType;
    if (options.idempotencyKey != null && endpoint.method === 'POST')
      headers['idempotency-key'] = options.idempotencyKey;
    const url = options.url ?? endpoint.url;
    const res = await t.app.inject({ method: endpoint.method, url, headers, payload: options.payload });
    return { res, context: describeRequest(endpoint.method, url, options.contentType, options.payload) };
  };

  it('random JSON values in every encoding never cause a 5xx and errors use the envelope', async () => {
    key = (await t.merchant()).test_api_key;
    await syncCodes(t, key, [{ code: 'TUITION', name: 'Tuition' }]);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS),
        fc.jsonValue({ maxDepth: 4 }),
        fc.constantFrom(...ENCODINGS),
        idempotencyKey,
        async (endpoint, body, encoding, idem) => {
          const { payload, contentType } = encode(encoding, body as Json);
          const { res, context } = await send(endpoint, { payload, contentType, idempotencyKey: idem });
          assertWellFormed(res, context);
          assertAcceptedIsValid(endpoint, res);
          if (encoding === 'text' && endpoint.method === 'POST') assert.equal(res.statusCode, 415, context);
        },
      ),
      { numRuns: 100 },
    );
  });

  /** Batches whose lines are checked one by one (a bad line is reported in errors with 207, SPEC 4.1). */
  const PER_LINE_BATCHES = ['/api/v1/invoice-lines', '/api/v1/revenue-lines'];

  it('a valid body with one field mutated (wrong type, huge string, negative number, deep nesting) is refused or accepted cleanly', async () => {
    key = (await t.merchant()).test_api_key;
    await syncCodes(t, key, [{ code: 'TUITION', name: 'Tuition' }]);
    // The valid bodies themselves succeed, so the mutations below are what the endpoint reacts to.
    for (const endpoint of POSTS) {
      const { payload, contentType } = encode('json', endpoint.valid!);
      const { res, context } = await send(endpoint, { payload, contentType });
      assert.ok(res.statusCode === 200 || res.statusCode === 201, `${res.statusCode} for ${context}: ${res.body}`);
    }
    const mutated = fc
      .constantFrom(...POSTS)
      .chain((endpoint) => fc.tuple(fc.constant(endpoint), fc.constantFrom(...endpoint.fields)))
      .chain(([endpoint, field]) =>
        fc.tuple(
          fc.constant(endpoint),
          fc.constant(field),
          mutation(field.kind),
          fc.constantFrom<Encoding>('json', 'json', 'form', 'multipart'),
        ),
      );
    // Short generated keys repeat within a run ('' and '__' often do): a key sent before with another request
    // is rightly refused as reused (422) before the body is looked at, so the type checks below do not apply.
    const keysSent = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(mutated, idempotencyKey, async ([endpoint, field, change, encoding], idem) => {
        const body = setAt(endpoint.valid!, field.path, change.value);
        const { payload, contentType } = encode(encoding, body);
        const { res, context } = await send(endpoint, { payload, contentType, idempotencyKey: idem });
        const what = `${field.path.join('.')} ${change.label}: ${context}`;
        assertWellFormed(res, what);
        assertAcceptedIsValid(endpoint, res);
        const request = `${endpoint.method} ${endpoint.url} ${contentType} ${payload.toString()}`;
        const sentBefore = idem === null ? undefined : keysSent.get(idem);
        if (idem !== null && sentBefore === undefined) keysSent.set(idem, request);
        if (
          sentBefore !== undefined &&
          sentBefore !== request &&
          res.statusCode === 422 &&
          res.json().error.code === 'IDEMPOTENCY_KEY_REUSED'
        )
          return;
        // JSON keeps types, so a wrong type is always refused (DESIGN §3: wrong types are 400), except inside one
        // line of a batch checked line by line (SPEC 4.1): that line goes to errors with 207, the others are kept.
        if (
          encoding === 'json' &&
          change.type === 'wrong-type' &&
          !(idem !== null && (idem.length === 0 || idem.length > 255))
        ) {
          const inOneLine =
            PER_LINE_BATCHES.includes(endpoint.url) && field.path[0] === 'lines' && field.path.length >= 2;
          // Text with a lone surrogate is not Unicode, text holding NUL cannot be stored, and an integer beyond 2^53 - 1
          // cannot be read without losing digits (src/http/body.ts): each refuses the whole body before any line is read.
          if (
            inOneLine &&
            !holdsLoneSurrogate(change.value) &&
            !holdsNul(change.value) &&
            !holdsUnsafeInteger(change.value)
          ) {
            assert.equal(
              res.statusCode,
              207,
              `wrong type in a line not reported for that line: ${what} -> ${res.statusCode} ${res.body.slice(0, 200)}`,
            );
            const lineErrors = res.json().errors as { index: number; code: string }[];
            assert.deepEqual(
              lineErrors.map((e) => e.index),
              [field.path[1]],
              what,
            );
            assert.ok(['INVALID_ARGUMENT', 'INVOICE_LINE_AMOUNT_INVALID'].includes(lineErrors[0]!.code), what);
          } else {
            assert.equal(
              res.statusCode,
              400,
              `wrong type accepted: ${what} -> ${res.statusCode} ${res.body.slice(0, 200)}`,
            );
            assert.equal(res.json().error.code, 'INVALID_ARGUMENT');
          }
        }
      }),
      {
        numRuns: 150,
        ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH } : {}),
      },
    );
  });

  it('random bytes under any content type never cause a 5xx', async () => {
    key = (await t.merchant()).test_api_key;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS),
        fc.oneof(
          fc.uint8Array({ maxLength: 2_000 }),
          fc.string({ unit: 'binary', maxLength: 500 }).map((s) => Buffer.from(s, 'utf8')),
        ),
        fc.constantFrom(...CONTENT_TYPES),
        async (endpoint, bytes, contentType) => {
          const payload = Buffer.from(bytes);
          const { res, context } = await send(endpoint, { payload, contentType });
          assertWellFormed(res, `${context} (${payload.length} bytes: ${payload.subarray(0, 60).toString('hex')})`);
          assertAcceptedIsValid(endpoint, res);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('random path references and query strings on the GET endpoints never cause a 5xx', async () => {
    key = (await t.merchant()).test_api_key;
    const rawPiece = fc.oneof(
      fc.string({ unit: 'grapheme-ascii', maxLength: 30 }).map((s) => s.replace(/[#?]/g, '')),
      fc.string({ maxLength: 30 }).map((s) => encodeURIComponent(s)),
      fc.constantFrom('%', '%zz', '%C0%AF', '%ED%A0%80', '%00', '..', 'a%2Fb', 'x'.repeat(2_000)),
    );
    const request = fc.oneof(
      rawPiece.map((ref) => ({ endpoint: ENDPOINTS[1]!, url: `/api/v1/sessions/${ref}` })),
      fc
        .array(fc.tuple(fc.constantFrom('invoice_ref', 'invoice_ref[]', 'invoice_ref[a]', 'x', ''), rawPiece), {
          maxLength: 4,
        })
        .map((pairs) => ({
          endpoint: ENDPOINTS[3]!,
          url: `/api/v1/invoice-lines?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`,
        })),
      fc
        .array(fc.tuple(fc.constantFrom('include_inactive', 'include_inactive[]', 'other'), rawPiece), { maxLength: 3 })
        .map((pairs) => ({
          endpoint: ENDPOINTS[5]!,
          url: `/api/v1/revenue-lines?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`,
        })),
    );
    await fc.assert(
      fc.asyncProperty(request, async ({ endpoint, url }) => {
        const { res, context } = await send(endpoint, { url });
        assertWellFormed(res, context);
      }),
      { numRuns: 80 },
    );
  });

  it('JSON nested far deeper than any real body is a 400, not a crash', async () => {
    key = (await t.merchant()).test_api_key;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...POSTS),
        fc.integer({ min: 40, max: 150_000 }),
        fc.constantFrom('[', '{"a":'),
        async (endpoint, depth, open) => {
          const close = open === '[' ? ']' : '}';
          const deep = `${open.repeat(depth)}1${close.repeat(depth)}`;
          const field = endpoint.url === '/api/v1/sessions' ? 'metadata' : 'lines';
          const payload = `{"${field}":${deep}}`;
          const { res, context } = await send(endpoint, { payload, contentType: 'application/json' });
          assertWellFormed(res, `${context.slice(0, 120)} (depth ${depth})`);
          assert.equal(res.statusCode, 400, `depth ${depth}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        },
      ),
      { numRuns: 20 },
    );
    // Ordinary nesting still works: metadata a few levels deep is stored and returned as given.
    const metadata = nested(20, true);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      headers: { authorization: `Bearer ${key}` },
      payload: { amount_minor: 100, invoice_ref: 'INV-DEEP', metadata: { tree: metadata } },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().metadata, { tree: metadata });
  });
});
