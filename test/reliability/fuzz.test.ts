// Fuzz (DESIGN §3 "Errors and limits", SPEC 7): requests generated from the app's own /openapi.json for every
// operation: fast-check arbitraries built from each operation's body, path and query schemas, then mixed with
// wrong types, missing required fields, 100 KB strings, nesting 100+ levels deep, invalid UTF-8 bytes, malformed
// JSON, bodies over BODY_LIMIT_BYTES, wrong content types, and the urlencoded and multipart forms of the same
// bodies; real keys (mostly Test, some Live, some another merchant's, some broken) and real ids (sessions,
// attempts, recipients, payouts, evidence) as well as random ones. At least 10,000 requests: none may be a 5xx,
// every 4xx is the SPEC 7 envelope, nothing may crash, and the app still serves health checks and a normal
// session afterwards. Routes the document hides (pages, health, metrics) are fuzzed too and counted.
// Reproduce a run with FUZZ_SEED=<seed> (printed first); FUZZ_SHRINK=1 shrinks a failure (slower).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { defaultFees, quoteRail } from '../../src/checkout/fees.ts';
import type { Rail } from '../../src/rails/registry.ts';
import { LivePayoutSimulator } from '../../src/rails/payouts.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { flattenFields, formBody, multipartBody, syncCodes, type Json } from '../support/http.ts';
import {
  api,
  checkEnvelope,
  createObjects,
  multipartFile,
  payoutReadyMerchant,
  TINY_PNG,
  type Objects,
} from './api-support.ts';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20_260_611;
const SHRINK = process.env.FUZZ_SHRINK === '1';
/** FUZZ_VERBOSE=1 prints each operation's status histogram and the undocumented statuses seen. */
const VERBOSE = process.env.FUZZ_VERBOSE === '1';
/** The documented operations share this many requests between them (each gets at least its share). */
const REQUESTS_MIN = 10_000;
/** Requests for each registered route the OpenAPI document does not describe (pages, health, metrics). */
const HIDDEN_ROUTE_REQUESTS = 40;
const HUGE_STRING_LENGTH = 100 * 1024;
const REVENUE_CODES = ['TUITION', 'FEES', 'BOOKS'];
const INVOICE_REFS = ['INV-FUZZ-1', 'INV-FUZZ-2', 'INV-FUZZ-3'];
const POOL_SIZE_MAX = 200;

// ---------------------------------------------------------------------------------------------------
// The OpenAPI document

interface Schema {
  $ref?: string;
  $id?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  enum?: Json[];
  const?: Json;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  nullable?: boolean;
}

interface Parameter {
  in: 'path' | 'query' | 'header' | 'cookie';
  name: string;
  required?: boolean;
  schema?: Schema;
}

interface RawOperation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: Schema }> };
  responses?: Record<string, unknown>;
  security?: Record<string, unknown>[];
}

interface OpenApiDoc {
  paths: Record<string, Record<string, RawOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

interface Operation {
  method: string;
  /** OpenAPI form: /api/v1/sessions/{reference}. */
  path: string;
  /** Router form: /api/v1/sessions/:reference. */
  route: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  headerParams: Parameter[];
  body: Schema | null;
  documented: Set<number>;
  secured: boolean;
  /** A stream (text/event-stream) never ends, so inject() cannot read it: test/events/api.test.ts covers it over HTTP. */
  streaming: boolean;
}

function operationsOf(doc: OpenApiDoc): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(methods)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const parameters = raw.parameters ?? [];
      const content = raw.requestBody?.content ?? {};
      const bodySchema = content['application/json']?.schema ?? Object.values(content)[0]?.schema ?? null;
      operations.push({
        method: method.toUpperCase(),
        path,
        route: path.replace(/\{(\w+)\}/g, ':$1'),
        pathParams: parameters.filter((p) => p.in === 'path'),
        queryParams: parameters.filter((p) => p.in === 'query'),
        headerParams: parameters.filter((p) => p.in === 'header'),
        body: bodySchema,
        documented: new Set(Object.keys(raw.responses ?? {}).map(Number)),
        secured: (raw.security ?? []).some((s) => 'apiKey' in s),
        streaming: JSON.stringify(raw.responses?.['200'] ?? {}).includes('text/event-stream'),
      });
    }
  }
  return operations;
}

// ---------------------------------------------------------------------------------------------------
// Schema -> arbitrary

type Hint = (name: string, schema: Schema) => fc.Arbitrary<Json> | null;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const wellFormed = (text: string) => text.replace(LONE_SURROGATE, '\uFFFD');

/** Integers in [lo, hi]: mostly small ones, some across the whole range, and both edges. */
function integerIn(lo: number, hi: number): fc.Arbitrary<number> {
  const small = { min: Math.max(lo, -1_000), max: Math.min(hi, 200_000) };
  const arbitraries: fc.Arbitrary<number>[] = [
    fc.bigInt({ min: BigInt(lo), max: BigInt(hi) }).map(Number),
    fc.constantFrom(lo, hi),
  ];
  if (small.min <= small.max) arbitraries.unshift(fc.integer(small), fc.integer(small));
  return fc.oneof(...arbitraries);
}

function lengthBetween(min: number, max: number) {
  return (value: string) => value.length >= min && value.length <= max;
}

/** Turns JSON Schema (as @fastify/swagger writes it for OpenAPI 3.1) into fast-check arbitraries of valid values. */
class SchemaArbitraries {
  constructor(
    private readonly doc: OpenApiDoc,
    private readonly hint: Hint,
  ) {}

  resolve(schema: Schema): Schema {
    let current = schema;
    for (let hops = 0; current.$ref; hops++) {
      assert.ok(hops < 20, `$ref loop at ${schema.$ref}`);
      const ref = current.$ref;
      const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1];
      const schemas = this.doc.components?.schemas ?? {};
      const found =
        (name ? schemas[decodeURIComponent(name)] : undefined) ??
        Object.values(schemas).find((s) => s.$id === ref || s.$id === ref.replace(/#$/, ''));
      assert.ok(found, `unresolved $ref ${ref}`);
      current = found;
    }
    return current;
  }

  /** A valid value; a named field may be drawn from the hints (real ids, known codes) most of the time. */
  valid(schema: Schema, name = '', depth = 0): fc.Arbitrary<Json> {
    const resolved = this.resolve(schema);
    const base = this.fromSchema(resolved, depth);
    const hinted = name ? this.hint(name, resolved) : null;
    return hinted ? fc.oneof({ weight: 3, arbitrary: hinted }, { weight: 1, arbitrary: base }) : base;
  }

  private fromSchema(s: Schema, depth: number): fc.Arbitrary<Json> {
    if (s.const !== undefined) return fc.constant(s.const);
    if (s.enum) return fc.constantFrom(...s.enum);
    const alternatives = s.anyOf ?? s.oneOf;
    if (alternatives)
      return fc.oneof(...alternatives.map((alternative) => this.fromSchema(this.resolve(alternative), depth)));
    if (s.allOf) {
      const parts = s.allOf.map((part) => this.resolve(part));
      const merged: Schema = { ...s, allOf: undefined, type: 'object', properties: {}, required: [] };
      for (const part of parts) {
        Object.assign(merged.properties!, part.properties ?? {});
        merged.required!.push(...(part.required ?? []));
      }
      return this.fromSchema(merged, depth);
    }
    const types = Array.isArray(s.type)
      ? s.type
      : s.type
        ? [s.type]
        : s.properties
          ? ['object']
          : s.items
            ? ['array']
            : [];
    const arbitraries = types.map((type) => this.ofType(type, s, depth));
    if (s.nullable) arbitraries.push(fc.constant(null));
    if (arbitraries.length === 0) return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
    return arbitraries.length === 1 ? arbitraries[0]! : fc.oneof(...arbitraries);
  }

  private ofType(type: string, s: Schema, depth: number): fc.Arbitrary<Json> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer': {
        const lo = s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : (s.minimum ?? Number.MIN_SAFE_INTEGER);
        const hi = s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : (s.maximum ?? Number.MAX_SAFE_INTEGER);
        return integerIn(Math.ceil(lo), Math.floor(hi));
      }
      case 'number':
        return fc.double({ min: s.minimum ?? -1e12, max: s.maximum ?? 1e12, noNaN: true, noDefaultInfinity: true });
      case 'string':
        return this.string(s);
      case 'array': {
        const items = s.items
          ? this.valid(s.items, '', depth + 1)
          : (fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<Json>);
        const minLength = s.minItems ?? 0;
        return fc.array(items, { minLength, maxLength: Math.max(minLength, Math.min(s.maxItems ?? 4, 4)) });
      }
      case 'object': {
        const properties = s.properties ?? {};
        const model: Record<string, fc.Arbitrary<Json>> = {};
        for (const [key, property] of Object.entries(properties)) model[key] = this.valid(property, key, depth + 1);
        for (const key of s.required ?? []) model[key] ??= fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<Json>;
        const record = fc.record(model, { requiredKeys: s.required ?? [] }) as fc.Arbitrary<Record<string, Json>>;
        const extra =
          s.additionalProperties === true || (s.additionalProperties === undefined && !s.properties)
            ? (fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>, {
                maxKeys: 3,
              }) as fc.Arbitrary<Record<string, Json>>)
            : typeof s.additionalProperties === 'object'
              ? (fc.dictionary(fc.string({ maxLength: 12 }), this.valid(s.additionalProperties, '', depth + 1), {
                  maxKeys: 3,
                }) as fc.Arbitrary<Record<string, Json>>)
              : null;
        return extra ? fc.tuple(extra, record).map(([more, fields]) => ({ ...more, ...fields })) : record;
      }
      default:
        return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
    }
  }

  private string(s: Schema): fc.Arbitrary<string> {
    const min = s.minLength ?? 0;
    const max = s.maxLength ?? 5_000;
    const fits = lengthBetween(min, max);
    switch (s.format) {
      case 'email':
        return fc.emailAddress().filter(fits);
      case 'uri':
      case 'url':
        return fc.webUrl({ withQueryParameters: true, withFragments: true }).filter(fits);
      case 'date-time':
        return fc
          .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
          .map((d) => d.toISOString());
      case 'uuid':
        return fc.uuid();
    }
    if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).filter(fits);
    const cap = Math.max(min, Math.min(max, 60));
    const options = [
      fc.string({ minLength: min, maxLength: cap }),
      fc.string({ unit: 'grapheme', minLength: min, maxLength: cap }).filter(fits),
      fc.string({ unit: 'binary', minLength: min, maxLength: cap }).filter(fits),
    ];
    // A string of exactly the maximum length (the limit itself is valid).
    if (s.maxLength !== undefined && s.maxLength <= 5_000)
      options.push(fc.string({ unit: 'grapheme-ascii', minLength: s.maxLength, maxLength: s.maxLength }));
    return fc.oneof(...options);
  }
}

// ---------------------------------------------------------------------------------------------------
// Invalid values and bodies

/** Objects or arrays nested `depth` levels around a leaf, built without recursion. */
function nested(depth: number, objects: boolean): Json {
  let value: Json = 'leaf';
  for (let i = 0; i < depth; i++) value = objects ? { d: value } : [value];
  return value;
}

const oddStrings = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uDFFF',
  '\uFEFF',
  '\u202Eevil',
  '😀'.repeat(50),
  '%00',
  '%zz',
  '__proto__',
  'constructor',
  "'; DROP TABLE checkout_sessions; --",
  '<script>alert(1)</script>',
  '{{7*7}}',
  '../../etc/passwd',
  '1e309',
  'NaN',
  'null',
  '\r\nX-Injected: 1',
);

const wrongTypeValue: fc.Arbitrary<Json> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0.5, -1, 0, -0, 2 ** 53 + 2, Number.MAX_VALUE),
  fc.string({ maxLength: 20 }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }) as fc.Arbitrary<Json>,
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }) as fc.Arbitrary<Json>,
);

type Mutation =
  | { kind: 'replace'; value: Json; label: string }
  | { kind: 'remove'; label: string }
  | { kind: 'extra-field'; key: string; value: Json; label: string };

const mutations: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 5, arbitrary: wrongTypeValue.map((value) => ({ kind: 'replace' as const, value, label: 'wrong type' })) },
  { weight: 3, arbitrary: fc.constant({ kind: 'remove' as const, label: 'missing field' }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('x', 'é', '😀', '\u0000').map((unit) => ({
      kind: 'replace' as const,
      value: unit.repeat(Math.ceil(HUGE_STRING_LENGTH / unit.length)),
      label: `huge string (${unit})`,
    })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.integer({ min: 100, max: 2_000 }), fc.boolean()).map(([depth, objects]) => ({
      kind: 'replace' as const,
      value: nested(depth, objects),
      label: `nested ${depth} deep`,
    })),
  },
  { weight: 2, arbitrary: oddStrings.map((value) => ({ kind: 'replace' as const, value, label: 'odd string' })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('merchant_id', 'environment', '__proto__', 'constructor', 'extra', 'id', 'status'),
        wrongTypeValue,
      )
      .map(([key, value]) => ({
        kind: 'extra-field' as const,
        key,
        value,
        label: `extra field ${key}`,
      })),
  },
);

type Path = (string | number)[];

function pathsOf(value: Json, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (out.length > 200) return out;
  if (Array.isArray(value))
    value.forEach((child, i) => {
      pathsOf(child, [...path, i], out);
    });
  else if (value && typeof value === 'object')
    for (const [key, child] of Object.entries(value)) pathsOf(child, [...path, key], out);
  return out;
}

/** A copy of value with one mutation at the chosen node (the root included). */
function mutate(value: Json, pick: number, mutation: Mutation): Json | undefined {
  const paths = pathsOf(value);
  const path = paths[pick % paths.length]!;
  const copy = structuredClone(value);
  if (path.length === 0) {
    if (mutation.kind === 'replace') return mutation.value;
    if (mutation.kind === 'remove') return undefined;
    if (copy && typeof copy === 'object' && !Array.isArray(copy))
      Object.defineProperty(copy, mutation.key, {
        value: mutation.value,
        enumerable: true,
        configurable: true,
        writable: true,
      });
    return copy;
  }
  let node = copy as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  const last = path.at(-1)!;
  if (mutation.kind === 'replace') node[last] = mutation.value;
  else if (mutation.kind === 'remove') {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else {
    const target = node[last];
    if (target && typeof target === 'object' && !Array.isArray(target)) {
      Object.defineProperty(target, mutation.key, {
        value: mutation.value,
        enumerable: true,
        configurable: true,
        writable: true,
      });
    } else node[last] = { [mutation.key]: mutation.value };
  }
  return copy;
}

const INVALID_UTF8 = [
  [0xff],
  [0xfe],
  [0xc0, 0xaf],
  [0xc3],
  [0xc3, 0x28],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf0, 0x28, 0x8c, 0x28],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0x80],
].map((b) => Buffer.from(b));

const MALFORMED_JSON = [
  '{',
  '}',
  '{"a":}',
  '{"amount_minor": 1,}',
  "{'amount_minor': 1}",
  'NaN',
  '[1,2',
  '{"a":1}{"b":2}',
  '\u0000',
  'nul',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '1e309',
  '"just a string"',
  'null',
  'true',
  '[]',
  '12345678901234567890123',
  '{"amount_minor":1e309,"invoice_ref":"x"}',
  '{"amount_minor":-0,"invoice_ref":"x"}',
  '{"amount_minor":100,"amount_minor":"dup","invoice_ref":"x"}',
  ' \t\r\n ',
];

const WRONG_CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'application/octet-stream',
  'text/html; charset=utf-8',
  'application/json-patch+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=zzz',
  'multipart/mixed; boundary=zzz',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'application/jsonx',
  'image/png',
  '*/*',
  'application/json, text/plain',
];

interface Body {
  payload?: string | Buffer;
  contentType?: string;
  label: string;
}

const asObject = (value: Json | undefined): Record<string, Json> =>
  value !== null && value !== undefined && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, Json>)
    : { value: value ?? null };

/** Form fields travel as UTF-8 text: no lone surrogates; their bracketed names grow with depth, so deep trees are cut. */
function formSafe(value: Json, depth = 60): Json {
  if (typeof value === 'string') return wellFormed(value);
  if (depth === 0 && value && typeof value === 'object') return 'cut';
  if (Array.isArray(value)) return value.map((v) => formSafe(v, depth - 1));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [wellFormed(k), formSafe(v, depth - 1)]));
  return value;
}

function encodeAs(encoding: 'json' | 'form' | 'multipart', value: Json | undefined, label: string): Body {
  if (encoding === 'json')
    return value === undefined
      ? { label: `${label}, no body`, contentType: 'application/json' }
      : { payload: JSON.stringify(value), contentType: 'application/json', label };
  const fields = asObject(formSafe(value ?? {}) as Json);
  if (encoding === 'form')
    return {
      payload: formBody(fields),
      contentType: 'application/x-www-form-urlencoded',
      label: `${label} (urlencoded)`,
    };
  const multipart = multipartBody(flattenFields(fields));
  return { ...multipart, label: `${label} (multipart)` };
}

/** Every kind of body for an operation with a body schema. */
function bodies(valid: fc.Arbitrary<Json>, bodyLimitBytes: number): fc.Arbitrary<Body> {
  const mutated = fc
    .tuple(valid, fc.nat(), mutations)
    .map(([value, pick, mutation]) => ({ value: mutate(value, pick, mutation), label: mutation.label }));
  const encoding = fc.constantFrom('form' as const, 'multipart' as const);
  return fc.oneof(
    { weight: 16, arbitrary: valid.map((value) => encodeAs('json', value, 'valid')) },
    { weight: 10, arbitrary: mutated.map(({ value, label }) => encodeAs('json', value, label)) },
    { weight: 4, arbitrary: fc.tuple(valid, encoding).map(([value, e]) => encodeAs(e, value, 'valid')) },
    { weight: 3, arbitrary: fc.tuple(mutated, encoding).map(([{ value, label }, e]) => encodeAs(e, value, label)) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(valid, fc.nat(), fc.constantFrom(...INVALID_UTF8), fc.constantFrom('json' as const, 'form' as const))
        .map(([value, at, bad, e]) => {
          const text = Buffer.from(
            e === 'json' ? JSON.stringify(value) : formBody(asObject(formSafe(value)) as Record<string, Json>),
            'utf8',
          );
          // Inside a string value when there is one (after the first `":"`), else anywhere.
          const quote = text.indexOf('":"');
          const position = quote >= 0 ? quote + 3 : at % (text.length + 1);
          return {
            payload: Buffer.concat([text.subarray(0, position), bad, text.subarray(position)]),
            contentType: e === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
            label: `invalid UTF-8 ${bad.toString('hex')} (${e})`,
          };
        }),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.constantFrom(...MALFORMED_JSON),
          fc.tuple(valid, fc.nat()).map(([value, cut]) => {
            const text = JSON.stringify(value);
            return text.slice(0, cut % Math.max(1, text.length));
          }),
          fc
            .tuple(valid, fc.constantFrom(',', '}', ']', 'garbage', '\u0000', '"'))
            .map(([value, tail]) => JSON.stringify(value) + tail),
        )
        .map((payload) => ({ payload, contentType: 'application/json', label: 'malformed JSON' })),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, fc.constantFrom(...WRONG_CONTENT_TYPES)).map(([value, contentType]) => ({
        payload: JSON.stringify(value),
        contentType,
        label: `content-type ${contentType}`,
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.constantFrom(...WRONG_CONTENT_TYPES)).map(([value, contentType]) => ({
        payload: JSON.stringify(value),
        contentType: undefined,
        label: `no content-type (${contentType.length})`,
      })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.integer({ min: 100, max: 20_000 }),
          fc.constantFrom('[', '{"a":'),
          fc.constantFrom('metadata', 'lines', 'customer', 'x'),
        )
        .map(([depth, open, field]) => {
          const close = open === '[' ? ']' : '}';
          return {
            payload: `{"${field}":${open.repeat(depth)}1${close.repeat(depth)}}`,
            contentType: 'application/json',
            label: `raw nesting ${depth} deep`,
          };
        }),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 1, max: 300_000 }), fc.constantFrom('json', 'form', 'multipart', 'none'))
        .map(([over, kind]) => {
          const filler = 'x'.repeat(bodyLimitBytes + over);
          if (kind === 'form')
            return {
              payload: `invoice_ref=${filler}`,
              contentType: 'application/x-www-form-urlencoded',
              label: `oversized form (+${over})`,
            };
          if (kind === 'multipart')
            return { ...multipartBody([['invoice_ref', filler]]), label: `oversized multipart (+${over})` };
          return {
            payload: `{"invoice_ref":"${filler}"}`,
            contentType: kind === 'json' ? 'application/json' : undefined,
            label: `oversized ${kind} (+${over})`,
          };
        }),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Body>(
        { label: 'no body' },
        { payload: '', contentType: 'application/json', label: 'empty JSON body' },
        { payload: '', contentType: 'application/x-www-form-urlencoded', label: 'empty form' },
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ maxLength: 3_000 })
        .map((bytes) => ({ payload: Buffer.from(bytes), contentType: 'application/json', label: 'random bytes' })),
    },
  );
}

/** Bodies for an operation without a body schema: mostly none, sometimes something anyway. */
function stray(operation: Operation): fc.Arbitrary<Body> {
  const evidence = operation.method === 'POST' && operation.route.endsWith('/evidence');
  const files = fc
    .tuple(
      fc.constantFrom(
        TINY_PNG,
        Buffer.from('%PDF-1.4\n%%EOF\n'),
        Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
        Buffer.alloc(0),
        Buffer.from('MZ\x90\x00 not an image'),
      ),
      fc.constantFrom('file', 'evidence', 'FILE', ''),
      fc.constantFrom('proof.png', '../../etc/passwd', 'a"b.png', 'ファイル.pdf', '', 'x'.repeat(500)),
      fc.constantFrom('image/png', 'application/pdf', 'text/plain', ''),
    )
    .map(([data, field, filename, type]) => ({
      ...multipartFile(field, filename, type, data),
      label: `file ${field}:${filename.slice(0, 20)} ${data.length} B`,
    }));
  return fc.oneof(
    { weight: evidence ? 2 : 10, arbitrary: fc.constant<Body>({ label: 'no body' }) },
    { weight: evidence ? 8 : 1, arbitrary: files },
    {
      weight: 1,
      arbitrary: fc
        .jsonValue({ maxDepth: 3 })
        .map((value) => ({ payload: JSON.stringify(value), contentType: 'application/json', label: 'stray JSON' })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...MALFORMED_JSON)
        .map((payload) => ({ payload, contentType: 'application/json', label: 'stray malformed JSON' })),
    },
    {
      weight: evidence ? 1 : 0,
      arbitrary: fc.integer({ min: 1, max: 200_000 }).map((over) => ({
        ...multipartFile('file', 'big.png', 'image/png', Buffer.concat([TINY_PNG, Buffer.alloc(1_048_576 + over)])),
        label: `oversized file (+${over})`,
      })),
    },
  );
}

// ---------------------------------------------------------------------------------------------------
// Paths, queries and headers

const nastySegment: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 30 }).map((s) => encodeURIComponent(wellFormed(s))),
  fc.string({ unit: 'binary', maxLength: 20 }).map((s) => encodeURIComponent(wellFormed(s))),
  fc.constantFrom(
    '',
    '%',
    '%zz',
    '%C0%AF',
    '%ED%A0%80',
    '%FF',
    '%00',
    '..',
    '.',
    'a%2Fb',
    '%2e%2e',
    `cs_${'x'.repeat(77)}`,
    'x'.repeat(81),
    'x'.repeat(5_000),
    '__proto__',
    'constructor',
    "'%20OR%201=1--",
    'null',
    '%F0%9F%98%80',
    'cs_00000000000000000000000000',
    'att_00000000000000000000000000',
    'po_00000000000000000000000000',
  ),
  fc.integer().map(String),
);

const nastyQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 20 }).map((s) => encodeURIComponent(wellFormed(s))),
  fc.constantFrom(
    '',
    'true',
    'false',
    '1',
    '0',
    'yes',
    '-1',
    '1.5',
    '1e309',
    'NaN',
    '99999999999999999999',
    '%zz',
    '%00',
    '%FF',
    'x'.repeat(20_000),
  ),
);

type AuthChoice = 'test' | 'live' | 'other' | 'bad';
const BAD_AUTHORIZATION = [
  '',
  'Bearer',
  'Bearer ',
  'Bearer garbage',
  'Basic dXNlcjpwYXNz',
  `Bearer ak_test_${'A'.repeat(40)}`,
  `Bearer ak_live_${'b'.repeat(40)}`,
  'Bearer ak_prod_short',
  `Bearer ${'x'.repeat(3_000)}`,
  'Bearer ak_test_\u00e9\u00e9',
];

interface Request {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  label: string;
  auth: AuthChoice;
  /** The path was made from valid or real ids (so routing cannot fail before authentication). */
  cleanPath: boolean;
}

/** Long runs of one character print as "x×N", so a 100 KB string or a 20,000-level nesting stays readable. */
const collapse = (text: string, max: number) =>
  text.replace(/(.)\1{19,}/gsu, (run, char: string) => `${char}×${[...run].length}`).slice(0, max);

const describeRequest = (r: Request) => {
  const payload = r.payload === undefined ? '' : Buffer.isBuffer(r.payload) ? r.payload.toString('utf8') : r.payload;
  const headers = Object.entries(r.headers)
    .filter(([name]) => name !== 'authorization')
    .map(([name, value]) => `${name}: ${collapse(value, 80)}`)
    .join('; ');
  return `${r.method} ${collapse(r.url, 300)} [auth ${r.auth}; ${headers}; ${r.label}] ${JSON.stringify(collapse(payload, 1_500))}`;
};

// ---------------------------------------------------------------------------------------------------
// The run

interface Pools {
  sessions: string[];
  attempts: string[];
  recipients: string[];
  payouts: string[];
  evidence: string[];
  banks: string[];
  /** session id -> amount_minor, for bodies that must carry the quoted total. */
  sessionAmounts: Map<string, number>;
  /** attempt id -> its session id, for paths that name both. */
  attemptSessions: Map<string, string>;
  /** evidence id -> its payout id, for paths that name both. */
  evidencePayouts: Map<string, string>;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const remember = (pool: string[], id: unknown) => {
  if (typeof id !== 'string' || pool.includes(id)) return;
  pool.push(id);
  // Keep the first (fixture) ids and the newest ones.
  if (pool.length > POOL_SIZE_MAX) pool.splice(10, 1);
};

describe(`fuzz: requests generated from /openapi.json (${storageKind})`, () => {
  let t: TestContext;
  let doc: OpenApiDoc;
  let operations: Operation[];
  let merchant: CreatedMerchant;
  let other: CreatedMerchant;
  const pools: Pools = {
    sessions: [],
    attempts: [],
    recipients: [],
    payouts: [],
    evidence: [],
    banks: [],
    sessionAmounts: new Map(),
    attemptSessions: new Map(),
    evidencePayouts: new Map(),
  };
  const statuses = new Map<number, number>();
  const undocumented = new Map<string, number>();
  /** "METHOD path" -> "status CODE" -> count (FUZZ_VERBOSE). */
  const perOperation = new Map<string, Map<string, number>>();
  const crashes: string[] = [];
  let requests = 0;
  let hiddenRoutes = 0;
  const started = Date.now();
  const onUncaught = (error: unknown) =>
    crashes.push(`uncaught exception: ${String((error as Error)?.stack ?? error)}`);
  const onRejection = (reason: unknown) =>
    crashes.push(`unhandled rejection: ${String((reason as Error)?.stack ?? reason)}`);

  before(async () => {
    console.log(`fuzz seed ${SEED} (${storageKind}); repeat with FUZZ_SEED=${SEED}`);
    process.on('uncaughtExceptionMonitor', onUncaught);
    process.on('unhandledRejection', onRejection);
    t = await startTestApp({}, { payoutRail: new LivePayoutSimulator() });
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    doc = res.json();
    operations = operationsOf(doc);
    merchant = await payoutReadyMerchant(t);
    other = await payoutReadyMerchant(t);
    for (const key of [merchant.test_api_key, merchant.live_api_key])
      await syncCodes(
        t,
        key,
        REVENUE_CODES.map((code) => ({ code, name: `Line ${code}` })),
      );
    const fixtures: Objects[] = [];
    for (const m of [merchant, other])
      for (const environment of ['test', 'live'] as const) fixtures.push(await createObjects(t, m, environment));
    for (const o of fixtures) {
      remember(pools.sessions, o.session);
      remember(pools.attempts, o.attempt);
      pools.sessionAmounts.set(o.session, o.amountMinor);
      pools.attemptSessions.set(o.attempt, o.session);
      pools.evidencePayouts.set(o.evidence, o.payout);
      remember(pools.recipients, o.recipient);
      remember(pools.payouts, o.payout);
      remember(pools.evidence, o.evidence);
    }
    // A Telecel attempt waits for a verification code (authorize), and sessions with lines to pay.
    const capabilities = (await api(t, merchant.test_api_key, 'GET', '/api/v1/payouts/capabilities')).json();
    pools.banks.push(...(capabilities.banks as { id: string }[]).map((b) => b.id));
    for (const [rail, extra] of [
      ['momo', { operator: 'telecel', phone: '0201234567' }],
      ['card', {}],
      ['bank_transfer', {}],
    ] as const) {
      const session = (
        await api(t, merchant.test_api_key, 'POST', '/api/v1/sessions', {
          amount_minor: 12_000,
          invoice_ref: INVOICE_REFS[0],
        })
      ).json();
      remember(pools.sessions, session.id);
      pools.sessionAmounts.set(session.id, 12_000);
      const quote = (await api(t, null, 'GET', `/api/v1/checkout/sessions/${session.id}/quote`)).json();
      const attempt = await api(t, null, 'POST', `/api/v1/checkout/sessions/${session.id}/provider-attempts`, {
        rail,
        amount_minor: quote.surcharges[rail].total_minor,
        ...extra,
      });
      assert.equal(attempt.statusCode, 201, attempt.body);
      remember(pools.attempts, attempt.json().attempt_reference);
      pools.attemptSessions.set(attempt.json().attempt_reference, session.id);
    }
    for (let i = 0; i < 5; i++) {
      const session = (
        await api(t, merchant.test_api_key, 'POST', '/api/v1/sessions', {
          amount_minor: 1_000 * (i + 1),
          invoice_ref: INVOICE_REFS[i % 3],
        })
      ).json();
      remember(pools.sessions, session.id);
      pools.sessionAmounts.set(session.id, session.amount_minor);
    }
  });

  after(async () => {
    process.off('uncaughtExceptionMonitor', onUncaught);
    process.off('unhandledRejection', onRejection);
    await t?.close();
  });

  /** Real ids for a named parameter or field (by what the route is about), or null when the name is not an id. */
  function idPool(route: string, name: string): string[] | null {
    if (name === 'reference') return route.includes('/payment-attempts/') ? pools.attempts : pools.sessions;
    if (name === 'attempt_reference') return pools.attempts;
    if (name === 'session_id') return pools.sessions;
    if (name === 'recipient_id' || name === 'previous_version_id') return pools.recipients;
    if (name === 'payout_id') return pools.payouts;
    if (name === 'evidence_id') return pools.evidence;
    if (name === 'bank_id') return pools.banks;
    return null;
  }

  const fromPool = (pool: string[]) => fc.nat().map((i) => (pool.length ? pool[i % pool.length]! : 'empty-pool'));

  function hintsFor(route: string): Hint {
    return (name) => {
      const pool = idPool(route, name);
      if (pool) return fromPool(pool);
      switch (name) {
        case 'amount_minor':
          return fc.integer({ min: 1, max: 200_000 });
        case 'invoice_ref':
          return fc.constantFrom(...INVOICE_REFS);
        case 'currency':
          return fc.constantFrom('GHS', 'ghs', 'USD');
        case 'code':
          return fc.constantFrom(...REVENUE_CODES, '123456', '000000');
        case 'rail':
          return fc.constantFrom('momo', 'card', 'bank_transfer', 'cash', 'crypto');
        case 'operator':
        case 'network':
          return fc.constantFrom('mtn', 'telecel', 'at', 'vodafone');
        case 'phone':
          return fc.constantFrom(
            '0241234567',
            '+233241234567',
            '024-123-4567',
            '0201234567',
            '0271234567',
            '0301234567',
          );
        case 'account_type':
          return fc.constantFrom('bank', 'momo', 'card');
        case 'account_number':
          return fc.stringMatching(/^\d{4,34}$/);
        case 'client_reference':
          return fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,30}$/);
        case 'outcome':
          return null;
        default:
          return null;
      }
    };
  }

  /** The total a payer must send for a rail on a session of the pool (the default fee schedule). */
  const quotedTotal = (sessionId: string, rail: Rail) =>
    quoteRail(pools.sessionAmounts.get(sessionId) ?? 1, defaultFees()[rail], 'GHS').total_minor;

  const ATTEMPT_INPUTS: { rail: Rail; operator?: string; phone?: string }[] = [
    { rail: 'card' },
    { rail: 'bank_transfer' },
    { rail: 'momo', operator: 'mtn', phone: '0241234567' },
    { rail: 'momo', operator: 'telecel', phone: '+233201234567' },
    { rail: 'momo', operator: 'at', phone: '027 123 4567' },
    { rail: 'cash' },
  ];

  /**
   * Whole valid bodies for operations whose schema cannot say what goes together (a bank or a wallet
   * recipient; the quoted total of the session in the path). Mixed with the schema's own values.
   */
  function exampleBody(operation: Operation, pathIds: string[]): fc.Arbitrary<Json> | null {
    const banks = fromPool(pools.banks);
    const recipients = fromPool(pools.recipients);
    switch (`${operation.method} ${operation.route}`) {
      case 'POST /api/v1/payouts/recipients':
        return fc.oneof(
          fc.record(
            {
              bank_id: banks,
              account_number: fc.stringMatching(/^\d{4,34}$/),
              account_name: fc.constantFrom('Kofi Mensah', 'Ama Owusu'),
            },
            { requiredKeys: ['bank_id', 'account_number', 'account_name'] },
          ),
          fc.record({
            account_type: fc.constant('momo'),
            network: fc.constant('mtn'),
            phone: fc.constantFrom('0241234567', '+233 54 123 4567'),
            account_name: fc.constant('Ama Owusu'),
          }),
          fc.record({
            bank_id: banks,
            account_number: fc.constant('1234567890'),
            account_name: fc.constant('Kofi Mensah'),
            previous_version_id: recipients,
          }),
        );
      case 'POST /api/v1/payouts':
        return fc.record(
          {
            recipient_id: recipients,
            amount_minor: fc.integer({ min: 1, max: 50_000 }),
            client_reference: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,30}$/),
            currency: fc.constant('GHS'),
            notes: fc.string({ maxLength: 40 }),
            max_fee_minor: fc.integer({ min: 0, max: 5_000 }),
          },
          { requiredKeys: ['recipient_id', 'amount_minor', 'client_reference'] },
        );
      case 'POST /api/v1/checkout/sessions/:reference/provider-attempts':
        return fc
          .tuple(fc.constantFrom(...ATTEMPT_INPUTS), fc.constantFrom('', 'Ama Owusu'))
          .map(([input, accountName]) => ({
            ...input,
            amount_minor: quotedTotal(pathIds[0]!, input.rail),
            ...(accountName ? { account_name: accountName } : {}),
          }));
      case 'POST /api/v1/checkout/cash-slips':
        return fromPool(pools.sessions).map((sessionId) => ({
          session_id: sessionId,
          amount_minor: quotedTotal(sessionId, 'cash'),
        }));
      case 'POST /api/v1/invoice-lines':
        return fc.record({
          invoice_ref: fc.constantFrom(...INVOICE_REFS),
          currency: fc.constant('GHS'),
          lines: fc.array(
            fc.record({
              code: fc.constantFrom(...REVENUE_CODES),
              name: fc.constantFrom('Tuition', 'Books'),
              amount_minor: fc.integer({ min: 1, max: 100_000 }),
            }),
            { minLength: 1, maxLength: 3 },
          ),
        });
      case 'POST /api/v1/checkout/sessions/:reference/provider-attempts/:attempt_reference/authorize':
        return fc.record({ code: fc.constantFrom('123456', '654321') });
      default:
        return null;
    }
  }

  /** The request arbitrary of one operation. */
  function requestsFor(operation: Operation): fc.Arbitrary<Request> {
    const schemas = new SchemaArbitraries(doc, hintsFor(operation.route));
    type Segment = { text: string; clean: boolean };
    const independent = fc.tuple(
      ...operation.pathParams.map((param) => {
        const pool = idPool(operation.route, param.name);
        const validValue = schemas
          .valid(param.schema ?? { type: 'string' }, '')
          .map((v): Segment => ({ text: encodeURIComponent(wellFormed(String(v))), clean: String(v).length > 0 }));
        return fc.oneof(
          {
            weight: 5,
            arbitrary: pool ? fromPool(pool).map((id): Segment => ({ text: id, clean: true })) : validValue,
          },
          { weight: 2, arbitrary: validValue },
          { weight: 2, arbitrary: nastySegment.map((text): Segment => ({ text, clean: false })) },
        );
      }),
    );
    // A path naming a parent and a child (session and attempt, payout and evidence): mostly a real pair.
    const names = operation.pathParams.map((p) => p.name);
    const pair = (parent: string, child: string, children: string[], parentOf: Map<string, string>) =>
      names.length === 2 && names.includes(parent) && names.includes(child)
        ? fromPool(children).map((id) =>
            names.map(
              (name): Segment => ({ text: name === child ? id : (parentOf.get(id) ?? 'unknown-parent'), clean: true }),
            ),
          )
        : null;
    const coherent =
      pair('reference', 'attempt_reference', pools.attempts, pools.attemptSessions) ??
      pair('payout_id', 'evidence_id', pools.evidence, pools.evidencePayouts);
    const segments = coherent
      ? fc.oneof({ weight: 3, arbitrary: coherent }, { weight: 2, arbitrary: independent })
      : independent;
    const query = fc
      .tuple(
        fc.tuple(
          ...operation.queryParams.map((param) =>
            fc.oneof(
              {
                weight: param.required ? 6 : 3,
                arbitrary: schemas
                  .valid(param.schema ?? { type: 'string' }, param.name)
                  .map((v) => [[param.name, encodeURIComponent(wellFormed(String(v)))]]),
              },
              { weight: 2, arbitrary: fc.constant([] as string[][]) },
              { weight: 2, arbitrary: nastyQueryValue.map((v) => [[param.name, v]]) },
              {
                weight: 1,
                arbitrary: fc
                  .array(nastyQueryValue, { minLength: 2, maxLength: 3 })
                  .map((vs) => vs.map((v) => [param.name, v])),
              },
            ),
          ),
        ),
        fc.array(
          fc.tuple(fc.constantFrom('x', '__proto__', 'constructor', 'a[b]', 'page[]', 'limit', ''), nastyQueryValue),
          { maxLength: 2 },
        ),
      )
      .map(([declared, noise]) =>
        [...declared.flat(), ...noise].map(([k, v]) => `${encodeURIComponent(k!)}=${v}`).join('&'),
      );
    const schemaBody = operation.body ? schemas.valid(operation.body) : null;
    const plainBodies = schemaBody ? bodies(schemaBody, t.config.bodyLimitBytes) : stray(operation);
    const hasExamples =
      exampleBody(
        operation,
        operation.pathParams.map(() => 'x'),
      ) !== null;
    // Bodies that depend on the path (the quoted total of the session named in it) are drawn after it.
    const pathAndBody = hasExamples
      ? segments.chain((values) =>
          fc.tuple(
            fc.constant(values),
            bodies(
              fc.oneof(
                { weight: 1, arbitrary: schemaBody! },
                {
                  weight: 2,
                  arbitrary: exampleBody(
                    operation,
                    values.map((v) => decodeURIComponentSafe(v.text)),
                  )!,
                },
              ),
              t.config.bodyLimitBytes,
            ),
          ),
        )
      : fc.tuple(segments, plainBodies);
    const auth = fc.oneof(
      { weight: 14, arbitrary: fc.constant<AuthChoice>('test') },
      { weight: 3, arbitrary: fc.constant<AuthChoice>('live') },
      { weight: 1, arbitrary: fc.constant<AuthChoice>('other') },
      { weight: 2, arbitrary: fc.constant<AuthChoice>('bad') },
    );
    const idempotency = operation.headerParams.some((p) => p.name === 'idempotency-key')
      ? fc.oneof(
          { weight: 4, arbitrary: fc.constant<string | null>(null) },
          { weight: 2, arbitrary: fc.constantFrom('fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3') },
          { weight: 2, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 }) },
          { weight: 1, arbitrary: fc.constantFrom('', ' ', 'x'.repeat(256), 'ключ', 'tab\there') },
        )
      : fc.constant<string | null>(null);
    return fc
      .record({
        pathAndBody,
        query,
        auth,
        badAuthorization: fc.constantFrom(...BAD_AUTHORIZATION),
        idempotency,
        head: fc.integer({ min: 0, max: 19 }),
        requestId: fc.oneof(fc.constant(null), fc.constantFrom('req-1', 'x'.repeat(100), '../etc', '')),
      })
      .map(
        ({
          pathAndBody: [values, b],
          query: queryString,
          auth: who,
          badAuthorization,
          idempotency: key,
          head,
          requestId,
        }) => {
          let url = operation.path;
          operation.pathParams.forEach((param, i) => {
            url = url.replace(`{${param.name}}`, values[i]!.text);
          });
          if (queryString) url += `?${queryString}`;
          const headers: Record<string, string> = {};
          const keys = { test: merchant.test_api_key, live: merchant.live_api_key, other: other.test_api_key };
          if (who === 'bad') {
            if (badAuthorization) headers.authorization = badAuthorization;
          } else headers.authorization = `Bearer ${keys[who]}`;
          if (b.contentType !== undefined) headers['content-type'] = b.contentType;
          if (key !== null) headers['idempotency-key'] = key;
          if (requestId !== null) headers['x-request-id'] = requestId;
          // GET routes answer HEAD too: one in twenty GETs goes as HEAD.
          const method = operation.method === 'GET' && head === 0 ? 'HEAD' : operation.method;
          const request: Request = {
            method,
            url,
            headers,
            payload: b.payload,
            label: b.label,
            auth: who,
            cleanPath: values.every((v) => v.clean),
          };
          return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) });
        },
      );
  }

  async function send(request: Request): Promise<LightMyRequestResponse> {
    requests++;
    const res = await t.app.inject({
      method: request.method as 'GET',
      url: request.url,
      headers: request.headers,
      payload: request.payload,
    });
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    return res;
  }

  function check(operation: Operation, request: Request, res: LightMyRequestResponse): void {
    const context = describeRequest(request);
    assert.ok(res.statusCode < 500, `${res.statusCode} for ${context}: ${res.body.slice(0, 500)}`);
    assert.deepEqual(crashes, [], `crashed after ${context}`);
    const seen = perOperation.get(`${operation.method} ${operation.path}`) ?? new Map<string, number>();
    const outcome = `${res.statusCode}${res.statusCode >= 400 && request.method !== 'HEAD' ? ` ${/"code":"(\w+)"/.exec(res.body)?.[1] ?? '?'}` : ''}`;
    perOperation.set(`${operation.method} ${operation.path}`, seen.set(outcome, (seen.get(outcome) ?? 0) + 1));
    // A path value that is not clean (empty, or holding a slash) can name another path of the API, one that does
    // not take this method: that path's 405 with Allow (src/http/methods.ts) stands where an unknown path's 404 would.
    const otherPathsMethod =
      res.statusCode === 405 &&
      !request.cleanPath &&
      typeof res.headers.allow === 'string' &&
      !res.headers.allow.split(', ').includes(request.method);
    if (!operation.documented.has(res.statusCode) && !otherPathsMethod) {
      const key = `${operation.method} ${operation.path} ${res.statusCode}`;
      undocumented.set(key, (undocumented.get(key) ?? 0) + 1);
    }
    if (request.auth === 'bad' && operation.secured) {
      assert.ok(res.statusCode >= 400, `a request without a valid key was accepted: ${res.statusCode} for ${context}`);
      if (request.cleanPath)
        assert.equal(res.statusCode, 401, `expected 401 for ${context}: ${res.body.slice(0, 200)}`);
    }
    if (request.method === 'HEAD') return;
    if (res.statusCode >= 400) {
      checkEnvelope(res, context);
      return;
    }
    if (res.statusCode === 204) {
      assert.equal(res.body, '', `204 with a body for ${context}`);
      return;
    }
    const type = String(res.headers['content-type'] ?? '');
    if (/^(application\/pdf|image\/(png|jpeg))/.test(type)) {
      assert.ok(
        operation.route.endsWith('/receipt') || operation.route.includes('/evidence/'),
        `a file from ${context}`,
      );
      return;
    }
    assert.match(type, /^application\/json/, `${res.statusCode} is not JSON for ${context}`);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    // Grow the id pools with what the fuzz created, so later requests hit fresh rows too.
    const id = body.id;
    if (typeof id === 'string') {
      if (id.startsWith('cs_')) {
        remember(pools.sessions, id);
        if (typeof body.amount_minor === 'number') pools.sessionAmounts.set(id, body.amount_minor);
      } else if (id.startsWith('rcp_')) remember(pools.recipients, id);
      else if (id.startsWith('po_')) remember(pools.payouts, id);
      else if (id.startsWith('evd_')) {
        remember(pools.evidence, id);
        if (typeof body.payout_id === 'string') pools.evidencePayouts.set(id, body.payout_id);
      }
    }
    if (typeof body.attempt_reference === 'string') {
      remember(pools.attempts, body.attempt_reference);
      const session = /\/checkout\/sessions\/([^/?]+)\//.exec(request.url)?.[1];
      if (session && !pools.attemptSessions.has(body.attempt_reference))
        pools.attemptSessions.set(body.attempt_reference, decodeURIComponentSafe(session));
    }
  }

  it('the OpenAPI document lists operations with schemas, and every $ref in them resolves', () => {
    assert.ok(operations.length >= 25, `only ${operations.length} operations`);
    const schemas = new SchemaArbitraries(doc, () => null);
    for (const operation of operations) {
      if (operation.body) fc.sample(schemas.valid(operation.body), { numRuns: 3, seed: SEED });
      for (const param of [...operation.pathParams, ...operation.queryParams])
        fc.sample(schemas.valid(param.schema ?? {}), { numRuns: 3, seed: SEED });
    }
  });

  it(`at least ${REQUESTS_MIN.toLocaleString('en')} generated requests over every documented operation: no 5xx, every error in the envelope`, async () => {
    const fuzzed = operations.filter((operation) => !operation.streaming);
    const runs = Math.ceil(REQUESTS_MIN / fuzzed.length);
    for (const [index, operation] of fuzzed.entries()) {
      const property = fc.asyncProperty(requestsFor(operation), async (request) =>
        check(operation, request, await send(request)),
      );
      await fc.assert(property, {
        numRuns: runs,
        seed: SEED + index,
        endOnFailure: !SHRINK,
        includeErrorInReport: true,
      });
    }
    assert.ok(requests >= REQUESTS_MIN, `${requests} requests`);
  });

  it('routes the document hides (pages, health, metrics, docs) answer random requests without a 5xx; JSON errors are the envelope', async () => {
    const documented = new Set(operations.map((op) => `${op.method} ${op.route}`));
    const hidden = t.app.registeredRoutes.filter((r) => r.method !== 'HEAD' && !documented.has(`${r.method} ${r.url}`));
    const seen = new Set<string>();
    const cookie = fc.constantFrom(
      '',
      'sika_dashboard=garbage',
      `sika_dashboard=${'x'.repeat(300)}`,
      'sika_ops=abc; sika_login_csrf=abc',
      'sika_dashboard=%zz',
    );
    for (const [index, route] of hidden.entries()) {
      const key = `${route.method} ${route.url}`;
      if (seen.has(key)) continue;
      seen.add(key);
      hiddenRoutes++;
      const params = [...route.url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
      const segment = (name: string) =>
        fc.oneof(
          { weight: 2, arbitrary: fromPool(name === 'reference' || name === 'id' ? pools.sessions : pools.payouts) },
          { weight: 2, arbitrary: nastySegment },
          { weight: 1, arbitrary: fc.uuid() },
        );
      const form = fc.dictionary(
        fc.constantFrom(
          '_csrf',
          'email',
          'password',
          'url',
          'api_key_id',
          'amount',
          'outcome',
          'attempt_reference',
          'environment',
          'x',
          'a[b]',
        ),
        fc.oneof(fc.string({ maxLength: 30 }), oddStrings),
        {
          maxKeys: 5,
        },
      );
      const request = fc
        .record({
          values: fc.tuple(...params.map(segment)),
          tail: fc.oneof(fc.constant('index.html'), nastySegment),
          form,
          encoding: fc.constantFrom('form', 'multipart', 'json', 'none', 'bytes'),
          bytes: fc.uint8Array({ maxLength: 500 }),
          cookie,
        })
        .map(({ values, tail, form: fields, encoding, bytes, cookie: c }): Request => {
          let url = route.url.replace('*', tail);
          params.forEach((name, i) => {
            url = url.replace(`:${name}`, values[i]!);
          });
          const headers: Record<string, string> = c ? { cookie: c } : {};
          let payload: string | Buffer | undefined;
          if (route.method !== 'GET') {
            const safe = asObject(formSafe(fields as Json));
            if (encoding === 'form')
              [payload, headers['content-type']] = [formBody(safe), 'application/x-www-form-urlencoded'];
            else if (encoding === 'multipart') {
              const m = multipartBody(flattenFields(safe));
              [payload, headers['content-type']] = [m.payload, m.contentType];
            } else if (encoding === 'json')
              [payload, headers['content-type']] = [JSON.stringify(fields), 'application/json'];
            else if (encoding === 'bytes')
              [payload, headers['content-type']] = [Buffer.from(bytes), 'application/x-www-form-urlencoded'];
          }
          const r: Request = {
            method: route.method,
            url,
            headers,
            payload,
            label: `hidden route ${key}, ${encoding}`,
            auth: 'bad',
            cleanPath: false,
          };
          return Object.assign(r, { [fc.toStringMethod]: () => describeRequest(r) });
        });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const res = await send(r);
          const context = describeRequest(r);
          assert.ok(res.statusCode < 500, `${res.statusCode} for ${context}: ${res.body.slice(0, 300)}`);
          assert.deepEqual(crashes, [], `crashed after ${context}`);
          if (res.statusCode >= 400 && /^application\/json/.test(String(res.headers['content-type'])))
            checkEnvelope(res, context);
        }),
        {
          numRuns: HIDDEN_ROUTE_REQUESTS,
          seed: SEED + 1_000 + index,
          endOnFailure: !SHRINK,
          includeErrorInReport: true,
        },
      );
    }
    assert.ok(hiddenRoutes >= 10, `only ${hiddenRoutes} hidden routes: is the route list complete?`);
  });

  it('found by this fuzz (seed 1): an unpaired surrogate anywhere in a JSON body is a 400, not a 500 from the jsonb column', async () => {
    for (const body of [
      { amount_minor: 100, invoice_ref: 'INV-SURROGATE', metadata: { note: '\udfff' } },
      { amount_minor: 100, invoice_ref: 'INV-SURROGATE', metadata: { '\ud800': 1 } },
      { amount_minor: 100, invoice_ref: 'INV-\ud800', customer: { name: 'Ama \udc00' } },
    ]) {
      const res = await api(t, merchant.test_api_key, 'POST', '/api/v1/sessions', body);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(checkEnvelope(res, JSON.stringify(body)).code, 'INVALID_ARGUMENT');
    }
    // A well-formed pair (an emoji) is ordinary text.
    const emoji = await api(t, merchant.test_api_key, 'POST', '/api/v1/sessions', {
      amount_minor: 100,
      invoice_ref: 'INV-😀',
      metadata: { note: '😀' },
    });
    assert.equal(emoji.statusCode, 201, emoji.body);
    assert.deepEqual(emoji.json().metadata, { note: '😀' });
  });

  it('afterwards the process is alive and well: health checks, a normal session create and read', async () => {
    assert.deepEqual(crashes, []);
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200, ready.body);
    const created = await api(t, merchant.test_api_key, 'POST', '/api/v1/sessions', {
      amount_minor: 5_000,
      invoice_ref: 'INV-AFTER-FUZZ',
      customer: { name: 'Ama', email: 'ama@example.com' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const read = await api(t, merchant.test_api_key, 'GET', `/api/v1/sessions/${created.json().id}`);
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(read.json().amount_minor, 5_000);
    const histogramOf = (counts: Map<number, number>) =>
      [...counts.entries()]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status}:${n}`)
        .join(' ');
    const histogram = histogramOf(statuses);
    const fiveXx = [...statuses.entries()].filter(([status]) => status >= 500).reduce((sum, [, n]) => sum + n, 0);
    console.log(
      `fuzz summary (${storageKind}, seed ${SEED}): ${requests} requests, ${operations.length}/${operations.length} documented operations + ${hiddenRoutes} hidden routes, ` +
        `${fiveXx} 5xx, ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${histogram}; ${undocumented.size} (operation, status) pairs not in the document`,
    );
    if (VERBOSE) {
      for (const [operation, counts] of perOperation)
        console.log(
          `  ${operation}: ${[...counts.entries()]
            .sort()
            .map(([outcome, n]) => `${outcome}:${n}`)
            .join(' ')}`,
        );
      console.log(
        `statuses not listed in the operation's documented responses: ${[...undocumented.entries()].map(([k, n]) => `${k} (${n})`).join('; ')}`,
      );
    }
    // The document is the contract: every status the API really answered is listed for its operation.
    assert.deepEqual([...undocumented.keys()], [], 'statuses the API answered that /openapi.json does not list');
  });
});
