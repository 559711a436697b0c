// The error catalogue (issue 15, item 3): every code in one place outside src/http with its meaning and
// whether a retry can help; its HTTP status decided once in src/http/errors.ts; database error codes
// read only in src/db; no service, store or model reaching into src/http.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { HTTP_STATUS_OF, errorHeaders, statusOf } from '../../src/http/errors.ts';
import { errorTableMarkdown } from '../../src/lib/error-table.ts';
import { ERROR_CATALOGUE, LINE_ERROR_CATALOGUE, SikaError, errors, type ErrorCode } from '../../src/lib/errors.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(entry) ? [path] : [];
  });
}
const sources = sourceFiles(SRC).map((file) => ({ name: relative(SRC, file), text: readFileSync(file, 'utf8') }));

describe('error catalogue', () => {
  it('gives every code a meaning, a retry answer and exactly one HTTP status', () => {
    const codes = Object.keys(ERROR_CATALOGUE).sort();
    assert.deepEqual(Object.keys(HTTP_STATUS_OF).sort(), codes);
    for (const code of codes as ErrorCode[]) {
      const entry = ERROR_CATALOGUE[code];
      assert.ok(entry.meaning.length > 10, `${code} has a meaning`);
      assert.equal(typeof entry.retryable, 'boolean');
      const status = HTTP_STATUS_OF[code];
      assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: ${status}`);
      // A code a retry can never help with is not a 5xx; a 5xx is always worth a retry.
      if (status >= 500) assert.equal(entry.retryable, true, `${code} is a ${status} and so retryable`);
    }
  });

  it('holds the SPEC 7 statuses', () => {
    const spec: Record<string, number> = {
      UNAUTHORIZED: 401,
      RATE_LIMITED: 429,
      IDEMPOTENCY_KEY_REUSED: 422,
      SESSION_NOT_PAYABLE: 409,
      PAYMENT_AMOUNT_MISMATCH: 409,
      RECIPIENT_UNAVAILABLE: 409,
      FEE_LIMIT_EXCEEDED: 409,
      REFERENCE_CONFLICT: 409,
      INSUFFICIENT_FUNDS: 409,
      PAYOUT_LIMIT: 409,
      PAYOUT_DAILY_LIMIT: 409,
      PAYOUTS_PAUSED: 409,
      INVALID_ARGUMENT: 400,
    };
    for (const [code, status] of Object.entries(spec)) assert.equal(HTTP_STATUS_OF[code as ErrorCode], status, code);
    for (const code of [
      'IDEMPOTENCY_KEY_IN_FLIGHT',
      'PAYMENT_ATTEMPT_PENDING',
      'PROVIDER_PAYMENT_REJECTED',
      'PROVIDER_RAIL_UNAVAILABLE',
    ]) {
      assert.ok(code in ERROR_CATALOGUE, `${code} is in the SPEC's enumeration`);
    }
    assert.ok('INVOICE_LINE_AMOUNT_INVALID' in LINE_ERROR_CATALOGUE);
  });

  it('sends Retry-After exactly when a retry time is known', () => {
    assert.deepEqual(errorHeaders(errors.rateLimited(7)), { 'retry-after': '7' });
    assert.deepEqual(errorHeaders(errors.unavailable()), { 'retry-after': '1' });
    assert.deepEqual(errorHeaders(errors.notFound('Payout')), {});
    assert.equal(statusOf(new SikaError('PROVIDER_RAIL_UNAVAILABLE', 'x')), 503);
  });

  it('docs/errors.md is the catalogue as it is (npm run docs:errors rewrites it)', () => {
    const published = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
    assert.equal(published, errorTableMarkdown(HTTP_STATUS_OF), 'docs/errors.md is stale: run npm run docs:errors');
    for (const code of Object.keys(ERROR_CATALOGUE))
      assert.ok(published.includes(`| \`${code}\` | ${HTTP_STATUS_OF[code as ErrorCode]} |`), code);
  });

  it('every code thrown in src is in the catalogue (also enforced by the type of SikaError)', () => {
    const thrown = new Set<string>();
    for (const { text } of sources) {
      for (const match of text.matchAll(/(?:new SikaError|conflict)\(\s*'([A-Z_]+)'/g)) thrown.add(match[1]!);
    }
    assert.ok(thrown.size >= 20, `found ${thrown.size} codes`);
    for (const code of thrown) assert.ok(code in ERROR_CATALOGUE, `${code} is catalogued`);
  });
});

describe('who may know about HTTP and SQLSTATE', () => {
  /**
   * Routes files, their wire schemas (*schemas.ts, the HTTP contract the routes validate against), the app
   * assembly (src/app.ts) and the web pages may import src/http; nothing else outside it.
   */
  const mayImportHttp = (name: string) =>
    name.startsWith('http/') ||
    name.startsWith('web/') ||
    /(?:routes|schemas)\.ts$/.test(name) ||
    ['main.ts', 'app.ts', 'workers.ts', 'index.ts'].includes(name);

  it('no service, store or model imports from src/http', () => {
    const offenders = sources
      .filter(({ name, text }) => !mayImportHttp(name) && /from\s+['"][^'"]*\/http\/[^'"]+['"]/.test(text))
      .map(({ name }) => name);
    assert.deepEqual(offenders, []);
  });

  it('no module outside src/http or src/web picks an HTTP status for an error', () => {
    const offenders = sources
      .filter(({ name }) => !name.startsWith('http/') && !name.startsWith('web/'))
      .filter(({ text }) => /new SikaError\(\s*\d{3}|statusCode\s*[:=]\s*\d{3}/.test(text))
      .map(({ name }) => name);
    assert.deepEqual(offenders, []);
  });

  it('SQLSTATE codes are read only in src/db', () => {
    const offenders = sources
      .filter(({ name, text }) => !name.startsWith('db/') && /\bsqlState\b/.test(text))
      .map(({ name }) => name);
    assert.deepEqual(offenders, []);
  });

  it('one JSON error renderer and one HTML error renderer set error handlers', () => {
    const handlers = sources
      .filter(({ text }) => /\.setErrorHandler\(/.test(text))
      .map(({ name }) => name)
      .sort();
    assert.deepEqual(handlers, ['http/error-handler.ts', 'web/error-pages.ts']);
    const handBuilt = sources
      .filter(({ name, text }) => name !== 'http/error-handler.ts' && /send\(\s*\{\s*error:\s*\{/.test(text))
      .map(({ name }) => name);
    assert.deepEqual(handBuilt, []);
  });
});
