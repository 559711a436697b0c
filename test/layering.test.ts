// The layers (issue 15, DESIGN §2): routes parse, authorize and call a service; pages call services; only
// stores hold SQL. This reads the source of src/web and of every *routes.ts file and refuses SQL, a store
// import, and a query or transaction opened by hand; and it refuses SQL in any module of src outside
// src/db and the stores (store.ts, *-store.ts), so the layering cannot quietly regress.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = new URL('..', import.meta.url).pathname;
const SRC = join(ROOT, 'src');

/** Exceptions, each with its reason; empty when the layering holds everywhere. */
const ALLOWED: Record<string, string> = {};

/** Modules outside src/db and the stores that may still hold SQL, each with its reason; empty when only stores do. */
const SQL_OUTSIDE_STORES_ALLOWED: Record<string, string> = {};

const RULES: { name: string; pattern: RegExp }[] = [
  { name: 'SQL', pattern: /\b(SELECT|INSERT INTO|UPDATE [a-z_]+ SET|DELETE FROM)\b/ },
  // Any module named store.ts or *-store.ts, type-only imports included: pages and routes name a service's types.
  { name: 'a store import', pattern: /from\s+['"][^'"]*(?:\/|-)store\.ts['"]/ },
  { name: 'a query run by hand', pattern: /\.(?:query|read|write)\s*(?:<[^>]*>)?\s*\(\s*['"`]/ },
  { name: 'a transaction opened by hand', pattern: /\.transaction\s*\(/ },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(entry) ? [path] : [];
  });
}

function violations(files: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const name = relative(ROOT, file);
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, index) => {
        for (const rule of RULES) {
          if (rule.pattern.test(line) && !ALLOWED[`${name}:${rule.name}`])
            found.push(`${name}:${index + 1}: ${rule.name}: ${line.trim().slice(0, 120)}`);
        }
      });
  }
  return found;
}

const allSources = sourceFiles(SRC);
const webFiles = allSources.filter((file) => file.startsWith(join(SRC, 'web') + '/'));
const routeFiles = allSources.filter((file) => /routes\.ts$/.test(file));
// Every module but storage itself and the stores.
const nonStoreFiles = allSources.filter(
  (file) => !file.startsWith(join(SRC, 'db') + '/') && !/(?:^|\/|-)store\.ts$/.test(file),
);
const SQL = RULES.find((rule) => rule.name === 'SQL')!.pattern;
const holdsSql = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .some((line) => SQL.test(line));

describe('layering', () => {
  it('finds the files it checks: the web pages and every routes file', () => {
    assert.ok(webFiles.length >= 15, `src/web files: ${webFiles.length}`);
    const routes = routeFiles.map((file) => relative(SRC, file));
    for (const expected of [
      'checkout/merchant-routes.ts',
      'invoicing/routes.ts',
      'payouts/routes.ts',
      'web/ops/routes.ts',
      'web/dashboard/payouts/routes.ts',
    ]) {
      assert.ok(routes.includes(expected), `${expected} among ${routes.join(', ')}`);
    }
  });

  it('the rules catch what they are for', () => {
    const caught = (line: string) => RULES.filter((rule) => rule.pattern.test(line)).map((rule) => rule.name);
    assert.deepEqual(caught("await db.query('SELECT id FROM banks')"), ['SQL', 'a query run by hand']);
    assert.deepEqual(caught('tx.query(`UPDATE web_sessions SET environment = $2`)'), ['SQL', 'a query run by hand']);
    assert.deepEqual(caught("import { findEvidence } from './store.ts';"), ['a store import']);
    assert.deepEqual(caught("import type { Row } from '../../accounts/console-session-store.ts';"), ['a store import']);
    assert.deepEqual(caught('await deps.db.transaction((tx) => run(tx));'), ['a transaction opened by hand']);
    assert.deepEqual(caught("import * as ops from '../../ops/service.ts';"), []);
    assert.deepEqual(caught('<p>Select a recipient, then update the amount.</p>'), []);
  });

  it('no page or console module in src/web holds SQL, imports a store, or runs a query or transaction itself', () => {
    assert.deepEqual(violations(webFiles), []);
  });

  it('no routes file holds SQL, imports a store, or runs a query or transaction itself', () => {
    assert.deepEqual(violations(routeFiles), []);
  });

  it('finds the modules it checks for SQL: all of src but src/db and the stores', () => {
    const checked = nonStoreFiles.map((file) => relative(ROOT, file));
    for (const expected of [
      'src/cli/main.ts',
      'src/events/outbox.ts',
      'src/audit/log.ts',
      'src/accounts/webhook-endpoints.ts',
      'src/ops/service.ts',
      'src/main.ts',
    ]) {
      assert.ok(checked.includes(expected), `${expected} among the checked modules`);
    }
    for (const skipped of [
      'src/db/index.ts',
      'src/ops/store.ts',
      'src/events/outbox-store.ts',
      'src/accounts/console-session-store.ts',
    ]) {
      assert.ok(!checked.includes(skipped), `${skipped} is storage or a store`);
    }
    assert.ok(checked.length >= 80, `checked modules: ${checked.length}`);
  });

  it('outside src/db and the stores (store.ts, *-store.ts), no module in src holds SQL', () => {
    const found = nonStoreFiles.flatMap((file) => {
      const name = relative(ROOT, file);
      if (SQL_OUTSIDE_STORES_ALLOWED[name]) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) => (SQL.test(line) ? [`${name}:${index + 1}: SQL: ${line.trim().slice(0, 120)}`] : []));
    });
    assert.deepEqual(found, []);
  });

  it('every module listed as still holding SQL exists and holds SQL (a stale entry is removed)', () => {
    const checked = new Set(nonStoreFiles.map((file) => relative(ROOT, file)));
    const stale = Object.keys(SQL_OUTSIDE_STORES_ALLOWED).filter(
      (name) => !checked.has(name) || !holdsSql(join(ROOT, name)),
    );
    assert.deepEqual(stale, []);
  });

  it('every listed exception still exists (a stale one is removed)', () => {
    const current = new Set(
      [...webFiles, ...routeFiles].flatMap((file) => {
        const text = readFileSync(file, 'utf8');
        return RULES.filter((rule) => text.split('\n').some((line) => rule.pattern.test(line))).map(
          (rule) => `${relative(ROOT, file)}:${rule.name}`,
        );
      }),
    );
    assert.deepEqual(
      Object.keys(ALLOWED).filter((key) => !current.has(key)),
      [],
    );
  });
});
