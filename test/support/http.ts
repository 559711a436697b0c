// Shared request helpers for the API tests: bodies in the three accepted formats, and checks of the
// error envelope (SPEC 7, DESIGN §3 "Errors and limits").
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { TestContext } from './helpers.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** `{customer: {name: 'A'}, lines: [{code: 'X'}]}` -> `[['customer[name]', 'A'], ['lines[0][code]', 'X']]`. */
export function flattenFields(value: Json, prefix = ''): [string, string][] {
  if (value === null || typeof value !== 'object') return [[prefix, String(value)]];
  const entries: [string, Json][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  return entries.flatMap(([key, v]) => flattenFields(v, prefix ? `${prefix}[${key}]` : key));
}

/** application/x-www-form-urlencoded with bracketed names for nested fields. */
export function formBody(value: Record<string, Json>): string {
  return flattenFields(value)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

/** multipart/form-data built by hand: one text part per flattened field. */
export function multipartBody(value: Record<string, Json> | [string, string][]): {
  payload: Buffer;
  contentType: string;
} {
  const boundary = `----sika-test-${randomUUID()}`;
  const pairs = Array.isArray(value) ? value : flattenFields(value);
  const chunks: Buffer[] = [];
  for (const [name, v] of pairs) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`, 'utf8'));
    chunks.push(Buffer.from(v, 'utf8'));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export type BodyFormat = 'json' | 'form' | 'multipart';
export const BODY_FORMATS: readonly BodyFormat[] = ['json', 'form', 'multipart'];

/** The same logical body encoded as JSON, urlencoded form or multipart. */
export function encodeBody(
  format: BodyFormat,
  body: Record<string, Json>,
): { payload: string | Buffer; contentType: string } {
  if (format === 'json') return { payload: JSON.stringify(body), contentType: 'application/json' };
  if (format === 'form') return { payload: formBody(body), contentType: 'application/x-www-form-urlencoded' };
  return multipartBody(body);
}

export interface CallOptions {
  key?: string | null;
  body?: Record<string, Json>;
  format?: BodyFormat;
  idempotencyKey?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

/** One request through app.inject, with a Bearer key, an optional body in the chosen format and an Idempotency-Key. */
export async function call(
  t: TestContext,
  method: 'GET' | 'POST',
  url: string,
  options: CallOptions = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  let payload: string | Buffer | undefined;
  if (options.body !== undefined) {
    const encoded = encodeBody(options.format ?? 'json', options.body);
    payload = encoded.payload;
    headers['content-type'] = encoded.contentType;
  }
  return t.app.inject({ method, url, headers, payload, query: options.query });
}

/** SQL, stack frames or internals that must never reach a client. */
export const LEAK_PATTERNS = [
  /\bstack\b/i, // a whole word: "Paystack" is a provider's name, not a leak
  /\bat [\w.<>]+ \(/, // a stack frame
  /\.ts:\d+/,
  /\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM)\b/,
  /\bviolates\b|\bconstraint\b|\brelation "|syntax error at|pg_advisory|idempotency_keys|checkout_sessions/i,
];

const ENVELOPE_FIELDS = new Set(['code', 'message', 'retry_after_seconds', 'fields', 'detail']);

export interface ErrorBody {
  code: string;
  message: string;
  retry_after_seconds?: number;
  fields?: { field: string; message: string }[];
  detail?: string;
}

/** The response is exactly the SPEC 7 envelope {error: {code, message, ...}}, leaking nothing; returns error. */
export function checkEnvelope(
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
  context: string,
): ErrorBody {
  const where = `${res.statusCode} for ${context}: ${res.body.slice(0, 300)}`;
  assert.match(String(res.headers['content-type']), /^application\/json/, `not JSON: ${where}`);
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    assert.fail(`unparseable JSON: ${where}`);
  }
  assert.ok(body && typeof body === 'object' && !Array.isArray(body), `not an object: ${where}`);
  assert.deepEqual(Object.keys(body), ['error'], `not the envelope: ${where}`);
  const error = (body as { error: Record<string, unknown> }).error;
  assert.ok(error && typeof error === 'object', `error is not an object: ${where}`);
  assert.equal(typeof error.code, 'string', `error.code: ${where}`);
  assert.match(error.code as string, /^[A-Z][A-Z0-9_]*$/, `error.code is not a stable code: ${where}`);
  assert.equal(typeof error.message, 'string', `error.message: ${where}`);
  assert.ok((error.message as string).length > 0, `empty error.message: ${where}`);
  for (const key of Object.keys(error))
    assert.ok(ENVELOPE_FIELDS.has(key), `unexpected envelope field ${key}: ${where}`);
  if (error.retry_after_seconds !== undefined)
    assert.ok(Number.isInteger(error.retry_after_seconds), `retry_after_seconds: ${where}`);
  if (res.statusCode === 429)
    assert.ok(Number.isInteger(error.retry_after_seconds), `429 without retry_after_seconds: ${where}`);
  if (res.statusCode === 401) assert.equal(error.code, 'UNAUTHORIZED', `401 with another code: ${where}`);
  for (const pattern of LEAK_PATTERNS) assert.doesNotMatch(res.body, pattern, `error body leaks internals: ${where}`);
  return error as unknown as ErrorBody;
}

/** The response is the error envelope with this status and code, leaking nothing; returns the error. */
export function assertErrorEnvelope(
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
  status: number,
  code: string,
): ErrorBody {
  assert.equal(res.statusCode, status, `expected ${status} ${code}, got ${res.statusCode}: ${res.body}`);
  const error = checkEnvelope(res, `${status} ${code}`);
  assert.equal(error.code, code);
  return error;
}

/** A multipart body with one file part (and optional text fields). */
export function multipartFile(
  field: string,
  filename: string,
  contentType: string,
  data: Buffer,
  fields: Record<string, string> = {},
) {
  const boundary = `----sika-test-${randomUUID()}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n`,
    ),
  );
  parts.push(data);
  parts.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A response body without the fields that differ between two otherwise identical creations. */
export function withoutVolatile<T extends Record<string, unknown>>(
  body: T,
  volatile = ['id', 'created_at', 'expires_at', 'checkout_url'],
) {
  const copy: Record<string, unknown> = { ...body };
  for (const key of volatile) delete copy[key];
  return copy;
}

export const sessionCount = async (t: TestContext, merchantId: string): Promise<number> =>
  (
    await t.db.query<{ n: number }>('select count(*)::int as n from checkout_sessions where merchant_id=$1', [
      merchantId,
    ])
  )[0]!.n;

/** Syncs revenue lines (service codes) for a key and checks it succeeded. */
export async function syncCodes(
  t: TestContext,
  key: string,
  lines: { code: string; name: string }[],
  deactivateMissing = false,
) {
  const res = await call(t, 'POST', '/api/v1/revenue-lines', {
    key,
    body: { lines, deactivate_missing: deactivateMissing },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}
