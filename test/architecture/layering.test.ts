// The layers (issue 15, DESIGN §2): routes parse, authorize and call a service; pages call services; only
// stores hold SQL. This reads the source of src/web and of every *routes.ts file and refuses SQL, a store
// import, and a query or transaction opened by hand; and it refuses SQL in any module of src outside
// src/db and the stores (store.ts, *-store.ts), so the layering cannot quietly regress.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = new URL('../..', import.meta.url).pathname;
const SRC = join(ROOT, 'src');

/** Exceptions, each with its reason; empty when the layering holds everywhere. */
const ALLOWED: Record<string, string> = {};

/** Modules outside src/db and the stores that may still hold SQL, each with its reason; empty when only stores do. */
const SQL_OUTSIDE_STORES_ALLOWED: Record<string, string> = {};

/**
 * Imports of another domain's store (`src/<a>/x.ts -> src/<b>/store.ts`), each with its reason; empty when
 * every domain reads and writes another's tables through that domain's service (issue 32).
 */
const CROSS_DOMAIN_STORE_IMPORTS_ALLOWED: Record<string, string> = {};

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

// `import … from`, `import type … from`, `export … from` (across lines too), and `import('…')`.
const IMPORT_SPECIFIERS = [
  /\b(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
];
const isStore = (file: string) => /^(?:.+-)?store\.ts$/.test(basename(file));
/** The folder of src a module is in (its domain); null for a file directly in src. */
const domainOf = (file: string) => {
  const parts = relative(SRC, file).split('/');
  return parts.length > 1 && !parts[0]!.startsWith('..') ? parts[0]! : null;
};

/** `src/<a>/x.ts -> src/<b>/y-store.ts` for each import of a store of another folder of src, comments left out. */
function crossDomainStoreImports(file: string, text = readFileSync(file, 'utf8')): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const from = domainOf(file);
  const found = new Set<string>();
  for (const pattern of IMPORT_SPECIFIERS) {
    for (const match of code.matchAll(pattern)) {
      if (!match[1]!.startsWith('.')) continue;
      const target = resolve(dirname(file), match[1]!);
      const to = domainOf(target);
      if (from && to && from !== to && isStore(target))
        found.add(`${relative(ROOT, file)} -> ${relative(ROOT, target)}`);
    }
  }
  return [...found];
}
const allCrossDomainStoreImports = () => allSources.flatMap((file) => crossDomainStoreImports(file));
const holdsSql = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .some((line) => SQL.test(line));

describe('layering', () => {
  it('finds the files it checks: the web pages and every routes file', () => {
    assert.ok(webFiles.length >= 15, `src/web files: ${webFiles.length}`);
    const routes = routeFiles.map((file) => relative(SRC, file));
    for (const expected of [
      'http/routes/checkout/merchant-routes.ts',
      'http/routes/invoicing/routes.ts',
      'http/routes/payouts/routes.ts',
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
  it('the store-import rule catches what it is for', () => {
    const at = (path: string, text: string) => crossDomainStoreImports(join(SRC, path), text);
    assert.deepEqual(at('payouts/quotes.ts', "import { x } from '../ops/store.ts';"), [
      'src/payouts/quotes.ts -> src/ops/store.ts',
    ]);
    assert.deepEqual(at('ops/service.ts', "import * as s from '../payouts/settings-store.ts';"), [
      'src/ops/service.ts -> src/payouts/settings-store.ts',
    ]);
    assert.deepEqual(at('payouts/create.ts', "import type {\n  AccountRow,\n} from '../ledger/store.ts';"), [
      'src/payouts/create.ts -> src/ledger/store.ts',
    ]);
    assert.deepEqual(at('ops/x.ts', "export { operatorQueue } from '../refunds/store.ts';"), [
      'src/ops/x.ts -> src/refunds/store.ts',
    ]);
    assert.deepEqual(at('cli/x.ts', "const s = await import('../events/store.ts');"), [
      'src/cli/x.ts -> src/events/store.ts',
    ]);
    assert.deepEqual(at('payouts/create.ts', "import { RECIPIENT_SELECT } from './recipient-store.ts';"), []);
    assert.deepEqual(at('web/ops/x.ts', "import * as ops from '../../ops/service.ts';"), []);
    assert.deepEqual(at('ops/x.ts', "// import { operatorQueue } from '../refunds/store.ts';"), []);
    assert.deepEqual(at('payouts/x.ts', "import { entriesCtes } from '../ledger/statement.ts';"), []);
  });

  it("no module of a folder of src imports another folder's store (store.ts, *-store.ts), type-only imports included", () => {
    assert.deepEqual(
      allCrossDomainStoreImports().filter((found) => !CROSS_DOMAIN_STORE_IMPORTS_ALLOWED[found]),
      [],
    );
  });

  it('every listed store import still exists (a stale one is removed)', () => {
    const current = new Set(allCrossDomainStoreImports());
    assert.deepEqual(
      Object.keys(CROSS_DOMAIN_STORE_IMPORTS_ALLOWED).filter((found) => !current.has(found)),
      [],
    );
  });
});
