// Request body parsing: JSON, urlencoded and multipart give the same parsed body. Bad UTF-8, malformed
// JSON, integers JSON would round and oversized bodies are 4xx errors here, never 500s; a charset other
// than UTF-8 or a Content-Encoding is a 415.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { errors, type SikaError } from '../lib/errors.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

const FORM_FIELDS_MAX = 1_000;
export const UPLOAD_BYTES_MAX = 5 * 1024 * 1024;

export interface Upload {
  fieldname: string;
  filename: string;
  mimetype: string;
  data: Buffer;
}

declare module 'fastify' {
  interface FastifyRequest {
    uploads: Upload[] | null;
  }
}
const FORM_DEPTH_MAX = 5;
/** Deeper JSON would overflow the recursive checks below (and PostgreSQL's jsonb parser): a 400, not a 500. */
export const JSON_DEPTH_MAX = 32;
const FORM_ARRAY_INDEX_MAX = 999;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** True when arrays/objects in the JSON text nest deeper than max; a linear scan, no recursion. */
function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER);

/** A JSON number literal: sign, integer digits, fraction digits, exponent. */
const NUMBER_LITERAL = /^-?(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?$/;

/**
 * Whether a JSON number literal's exact value is an integer beyond Number.MAX_SAFE_INTEGER in magnitude,
 * whatever its notation: `9007199254740993`, `9007199254740993.0`, `9.007199254740993e15` and `1e300` are;
 * `12345678901234567890.5` (not an integer) and `-3e2` (within range) are not. Exact: read from the digits,
 * never from the rounded double.
 */
export function unsafeIntegerLiteral(literal: string): boolean {
  const match = NUMBER_LITERAL.exec(literal);
  if (!match) return false;
  let digits = match[1]! + (match[2] ?? '');
  const exponent = match[3] ?? '0';
  // The value is digits × 10^scale. An exponent of more than 6 digits is far beyond either way.
  if (exponent.replace(/^[-+]?0*/, '').length > 6) return !exponent.startsWith('-') && /[1-9]/.test(digits);
  let scale = Number(exponent) - (match[2]?.length ?? 0);
  digits = digits.replace(/^0+/, '');
  const trimmed = digits.replace(/0+$/, '');
  scale += digits.length - trimmed.length;
  digits = trimmed;
  if (digits === '' || scale < 0) return false; // zero, or a fraction is left: not an integer
  const length = digits.length + scale;
  return (
    length > MAX_SAFE_DIGITS.length ||
    (length === MAX_SAFE_DIGITS.length && digits + '0'.repeat(scale) > MAX_SAFE_DIGITS)
  );
}

/** Whether a parsed JSON value holds a number beyond 2^53 - 1 in magnitude (an integer literal, or a float). */
function holdsUnsafeNumber(value: unknown): boolean {
  if (typeof value === 'number') return Math.abs(value) > Number.MAX_SAFE_INTEGER;
  if (value === null || typeof value !== 'object') return false;
  // Plain loops: about 5% of JSON.parse's time on a parsed body (Array.some costs twice that).
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (holdsUnsafeNumber(value[i])) return true;
    return false;
  }
  for (const key in value) if (holdsUnsafeNumber((value as Record<string, unknown>)[key])) return true;
  return false;
}

/**
 * The field (`a.b.0.c`; `body` for a bare number) holding the first number literal whose value is an integer
 * of magnitude beyond 2^53 - 1, in any notation (`9007199254740993`, `…993.0`, `9.007199254740993e15`,
 * `1e300`): JSON.parse would round it. Numbers with a fraction are left alone (their rounding is expected).
 * `text` is what parsed to `parsed`. A walk of the parsed numbers comes first, so the text is scanned only
 * when a number that large is there at all.
 */
export function unsafeIntegerField(text: string, parsed: unknown): string | null {
  if (!holdsUnsafeNumber(parsed)) return null;
  const path: (string | number)[] = [];
  const inArray: boolean[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = i + 1;
      while (text.charCodeAt(end) !== 0x22) end += text.charCodeAt(end) === 0x5c ? 2 : 1;
      if (expectKey) {
        path[path.length - 1] = JSON.parse(text.slice(i, end + 1)) as string;
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      inArray.push(c === 0x5b);
      path.push(c === 0x5b ? 0 : '');
      expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      inArray.pop();
      path.pop();
    } else if (c === 0x2c) {
      if (inArray.at(-1)) (path[path.length - 1] as number)++;
      else expectKey = true;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i;
      while (end < text.length && /[-+.\deE]/.test(text[end]!)) end++;
      const token = text.slice(i, end);
      if (unsafeIntegerLiteral(token)) return path.length ? path.join('.') : 'body';
      i = end - 1;
    }
  }
  return null;
}

/** The body's charset when it is not UTF-8 (no charset means UTF-8, as for JSON). */
function foreignCharset(contentType: string | undefined): string | null {
  const match = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType ?? '');
  if (!match) return null;
  const charset = match[2]!.toLowerCase();
  return charset === 'utf-8' || charset === 'utf8' ? null : match[2]!.slice(0, 40);
}

/**
 * Why a body cannot be read as sent, or null: a charset other than UTF-8, or a Content-Encoding (gzip, br,
 * ...) other than identity. Sika decodes no compression: its bodies are small, and an inflated body is one
 * more size limit to get right; a 415 tells the client to send it plain.
 */
export function unreadableBody(request: FastifyRequest): SikaError | null {
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined) {
    const codings = encoding.split(',').map((coding) => coding.trim().toLowerCase());
    const foreign = codings.find((coding) => coding !== '' && coding !== 'identity');
    if (foreign !== undefined) return errors.unsupportedContentEncoding(foreign.slice(0, 40));
  }
  const charset = foreignCharset(request.headers['content-type']);
  return charset === null ? null : errors.unsupportedCharset(charset);
}

function decodeUtf8(buffer: Buffer): string {
  try {
    return utf8.decode(buffer);
  } catch {
    throw errors.invalidArgument('The request body is not valid UTF-8.');
  }
}

function parseUrlEncoded(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = Object.create(null);
  if (text === '') return fields;
  const pairs = text.split('&');
  if (pairs.length > FORM_FIELDS_MAX)
    throw errors.invalidArgument(`A form body may have at most ${FORM_FIELDS_MAX} fields.`);
  for (const pair of pairs) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? '' : pair.slice(eq + 1);
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
      value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    } catch {
      throw errors.invalidArgument('The form body has a malformed percent-encoding or invalid UTF-8.');
    }
    addField(fields, key, value);
  }
  return fields;
}

function addField(fields: Record<string, string | string[]>, key: string, value: string): void {
  const existing = fields[key];
  if (existing === undefined) fields[key] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else fields[key] = [existing, value];
}

/** `customer[name]=A&lines[0][code]=X` -> `{customer: {name: 'A'}, lines: [{code: 'X'}]}`. */
export function nestFields(flat: Record<string, string | string[]>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flat)) {
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    if (!match) throw errors.invalidArgument(`Form field name "${key.slice(0, 100)}" is malformed.`);
    const path = [match[1]!, ...[...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!)];
    if (path.length > FORM_DEPTH_MAX)
      throw errors.invalidArgument(`Form field "${key.slice(0, 100)}" is nested too deeply.`);
    let node: Record<string, unknown> | unknown[] = root;
    for (let i = 0; i < path.length; i++) {
      let segment: string | number = path[i]!;
      if (FORBIDDEN_KEYS.has(segment))
        throw errors.invalidArgument(`Form field name "${key.slice(0, 100)}" is not allowed.`);
      if (Array.isArray(node)) {
        if (segment === '') segment = node.length;
        else if (/^\d+$/.test(segment) && Number(segment) <= FORM_ARRAY_INDEX_MAX) segment = Number(segment);
        else throw errors.invalidArgument(`Form field "${key.slice(0, 100)}" has a bad array index.`);
      } else if (segment === '') {
        throw errors.invalidArgument(`Form field "${key.slice(0, 100)}" has an empty name part.`);
      }
      const last = i === path.length - 1;
      const container = node as Record<string | number, unknown>;
      if (last) {
        container[segment] = value;
      } else {
        const nextIsArray = /^\d*$/.test(path[i + 1]!);
        let child = container[segment];
        if (child === undefined) {
          child = nextIsArray ? [] : {};
          container[segment] = child;
        } else if (typeof child !== 'object' || child === null || Array.isArray(child) !== nextIsArray) {
          throw errors.invalidArgument(`Form field "${key.slice(0, 100)}" conflicts with another field.`);
        }
        node = child as Record<string, unknown> | unknown[];
      }
    }
  }
  return compactArrays(root) as Record<string, unknown>;
}

function compactArrays(value: unknown): unknown {
  if (Array.isArray(value)) {
    // Array.from visits holes too (some() would skip them): lines[0] and lines[2] without lines[1] is a gap.
    if (Array.from(value, (_, index) => index in value).includes(false)) {
      throw errors.invalidArgument('Form array fields must be numbered from 0 without gaps.');
    }
    return value.map(compactArrays);
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) (value as Record<string, unknown>)[k] = compactArrays(v);
  }
  return value;
}

interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
}

/** Form values are strings: turn them into the integers and booleans the route's body schema asks for. */
export function coerceToSchema(value: unknown, schema: SchemaNode | undefined): unknown {
  if (!schema) return value;
  // A union reads form values as its first branch, the documented shape (invoice lines: a line, or anything else).
  if (schema.anyOf) return coerceToSchema(value, schema.anyOf[0]);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (typeof value === 'string') {
    // Beyond 2^53 - 1 a number would be rounded: the value stays text and the schema refuses it (400).
    if (
      (types.includes('integer') || types.includes('number')) &&
      /^-?\d{1,16}$/.test(value) &&
      Number.isSafeInteger(Number(value))
    )
      return Number(value);
    if (types.includes('boolean') && ['true', 'false', '1', '0'].includes(value))
      return value === 'true' || value === '1';
    if (types.includes('null') && value === '') return null;
    return value;
  }
  if (Array.isArray(value)) return schema.items ? value.map((item) => coerceToSchema(item, schema.items)) : value;
  if (value && typeof value === 'object' && schema.properties) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = coerceToSchema(v, schema.properties[k]);
    return out;
  }
  return value;
}

/** Whether any text in a parsed body, query or params (object keys included) passes `test`. Buffers (uploaded files) are not text. */
function someText(value: unknown, test: (text: string) => boolean): boolean {
  if (typeof value === 'string') return test(value);
  if (Array.isArray(value)) return value.some((v) => someText(v, test));
  if (value && typeof value === 'object' && !Buffer.isBuffer(value))
    return Object.entries(value).some(([k, v]) => test(k) || someText(v, test));
  return false;
}

/** An unpaired UTF-16 surrogate (JSON "\ud800") is not Unicode text: PostgreSQL's jsonb refuses it (a 500) and text columns would store U+FFFD. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text PostgreSQL cannot store as given, with the reason: U+0000 (text cannot hold it) or a lone surrogate. */
function unstorable(text: string): string | null {
  if (text.includes('\u0000')) return 'Text values must not contain the NUL character (U+0000).';
  if (LONE_SURROGATE.test(text)) return 'Text values must be well-formed Unicode (no unpaired surrogate code points).';
  return null;
}

export function isFormRequest(request: FastifyRequest): boolean {
  const type = request.headers['content-type'] ?? '';
  return /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(type);
}

export async function registerBodyParsers(app: FastifyInstance, bodyLimitBytes: number): Promise<void> {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json\s*(;|$)/i,
    { parseAs: 'buffer', bodyLimit: bodyLimitBytes },
    (request, body, done) => {
      try {
        const unreadable = unreadableBody(request);
        if (unreadable) throw unreadable;
        const text = decodeUtf8(body as Buffer);
        if (text.trim() === '') return done(null, undefined);
        if (jsonNestsDeeperThan(text, JSON_DEPTH_MAX))
          throw errors.invalidArgument(`The JSON body is nested more than ${JSON_DEPTH_MAX} levels deep.`);
        const parsed: unknown = JSON.parse(text);
        // JSON.parse rounds an integer beyond 2^53 - 1 without a word: refuse it, as a form body's is refused.
        const unsafe = unsafeIntegerField(text, parsed);
        if (unsafe !== null) {
          const message = `must be an integer between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER} (a JSON number beyond them loses digits)`;
          throw errors.invalidArgument(`${unsafe} ${message}`, [{ field: unsafe, message }]);
        }
        done(null, parsed);
      } catch (error) {
        done(
          error instanceof SyntaxError
            ? errors.invalidArgument(`The JSON body is malformed: ${error.message.slice(0, 200)}`)
            : (error as Error),
          undefined,
        );
      }
    },
  );
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer', bodyLimit: bodyLimitBytes },
    (request, body, done) => {
      try {
        const unreadable = unreadableBody(request);
        if (unreadable) throw unreadable;
        // Bytes beyond ASCII must be percent-encoded; check the raw body too so stray bytes are refused.
        decodeUtf8(body as Buffer);
        done(null, nestFields(parseUrlEncoded((body as Buffer).toString('latin1'))));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );
  app.decorateRequest('uploads', null);
  // The multipart plugin reads the raw request, past Fastify's bodyLimit: a declared length over the
  // body limit plus one upload is refused before a byte is read. (A chunked body stays bounded by the
  // field count, field size and file size limits below.)
  const multipartBytesMax = bodyLimitBytes + UPLOAD_BYTES_MAX;
  // Hooks on every request are callback-style: an async hook costs a promise and a microtask per request.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!/^multipart\//i.test(request.headers['content-type'] ?? '')) return done();
    const declared = Number(request.headers['content-length'] ?? 0);
    done(
      declared > multipartBytesMax ? errors.payloadTooLarge(multipartBytesMax) : (unreadableBody(request) ?? undefined),
    );
  });
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    limits: {
      fields: FORM_FIELDS_MAX,
      fieldSize: 64 * 1024,
      files: 1,
      fileSize: UPLOAD_BYTES_MAX,
      parts: FORM_FIELDS_MAX + 1,
    },
    // Files are read into memory (bounded by fileSize: over it is a 413) and kept with their names for the routes that take them.
    async onFile(part) {
      const data = await part.toBuffer();
      const request = this as FastifyRequest;
      request.uploads ??= [];
      request.uploads.push({ fieldname: part.fieldname, filename: part.filename, mimetype: part.mimetype, data });
    },
  });

  // Multipart arrives as flat key/values: nest it, and coerce both form kinds to the body schema.
  app.addHook('preValidation', (request, _reply, done) => {
    if (!isFormRequest(request) || request.body == null || typeof request.body !== 'object') return done();
    try {
      coerceFormBody(request);
      done();
    } catch (error) {
      done(error as Error);
    }
  });
  const coerceFormBody = (request: FastifyRequest) => {
    let body = request.body as Record<string, unknown>;
    if (/^multipart\//i.test(request.headers['content-type'] ?? '')) {
      const flat: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(body)) {
        if (typeof v === 'string' || (Array.isArray(v) && v.every((e) => typeof e === 'string')))
          flat[k] = v as string | string[];
        else if (Buffer.isBuffer(v))
          continue; // files are read by the routes that take them
        else throw errors.invalidArgument(`Multipart field "${k.slice(0, 100)}" is not a text field.`);
      }
      body = nestFields(flat);
    }
    if (someText(body, (text) => text.includes('\uFFFD')))
      throw errors.invalidArgument('The form body is not valid UTF-8.');
    const schema = (request.routeOptions.schema as { body?: SchemaNode } | undefined)?.body;
    request.body = coerceToSchema(body, schema);
  };

  app.addHook('preValidation', (request, _reply, done) => {
    // One walk over each part: refuse text storage would reject (a 500 there) before any handler runs.
    let problem: string | null = null;
    for (const part of [request.body, request.query, request.params]) {
      if (
        someText(part, (text) => {
          problem = unstorable(text);
          return problem !== null;
        })
      )
        return done(errors.invalidArgument(problem!));
    }
    done();
  });
}
