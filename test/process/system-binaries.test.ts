// `npm install && npm test` needs nothing but Node (issue 29): no file of the default suite (the files
// scripts/test.mjs runs, every local module they import and the programs they start) may spawn a system
// binary. This parses each of them and refuses any child_process call whose program is not Node, npm or git,
// and any use of child_process it cannot read, so a test that shells out to e.g. pdftotext fails here first.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..', '..');

/** Programs any file may start: Node itself (process.execPath), npm (it runs `npm test`) and git. */
const ALLOWED_PROGRAMS = new Set(['node', 'npm', 'git']);

/** Files that may start other programs, each with its reason; each skips its tests where the program is missing. */
const ALLOWED_FILES: Record<string, string> = {
  'test/support/private-postgres.ts':
    'a private PostgreSQL server (initdb, pg_ctl, run as the postgres user with id and runuser): the tests that use it skip without the PostgreSQL binaries',
  'test/cli/console-accounts.test.ts':
    'util-linux `script` gives the CLI a terminal for the hidden password prompt (Node has no pseudo-terminal of its own): those tests skip without it',
};

const CHILD_PROCESS = new Set(['node:child_process', 'child_process']);
/** The child_process functions whose first argument names the program, a shell command line, or (fork) a Node module. */
const PROGRAM_FIRST = new Set(['spawn', 'spawnSync', 'execFile', 'execFileSync']);
const SHELL_FIRST = new Set(['exec', 'execSync']);
const FUNCTIONS = new Set([...PROGRAM_FIRST, ...SHELL_FIRST, 'fork']);
const SOURCE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;

interface Scan {
  /** Programs started, as `line: program` (program is `?<expression>` when it cannot be read statically). */
  spawns: { line: number; program: string }[];
  /** Uses of child_process this scan cannot follow (require, a dynamic import, one of its functions passed around). */
  unreadable: { line: number; text: string }[];
  /** Local modules imported and local programs started (paths as written, resolved by the caller). */
  references: string[];
}

function literal(node: ts.Node): string | null {
  return ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : null;
}

function programOf(arg: ts.Expression | undefined, source: ts.SourceFile, shell: boolean): string {
  if (!arg) return '?';
  if (arg.getText(source) === 'process.execPath') return 'node';
  const text = literal(arg);
  if (text === null) return `?${arg.getText(source)}`;
  return shell ? (text.trim().split(/\s+/)[0] ?? '') : text;
}

/** Reads one module's source: what it spawns, what it imports. */
function scanSource(text: string, fileName: string): Scan {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const scan: Scan = { spawns: [], unreadable: [], references: [] };
  const line = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  // Local name -> child_process function; namespaces hold the whole module.
  const functions = new Map<string, string>();
  const namespaces = new Set<string>();

  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !CHILD_PROCESS.has(literal(statement.moduleSpecifier) ?? '')) continue;
    const clause = statement.importClause;
    if (!clause || clause.isTypeOnly) continue;
    if (clause.name) namespaces.add(clause.name.text);
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) {
        const imported = (element.propertyName ?? element.name).text;
        if (!element.isTypeOnly && FUNCTIONS.has(imported)) functions.set(element.name.text, imported);
      }
    }
  }

  /** The child_process function an expression stands for: `spawn`, `cp.spawn`, `promisify(execFile)`. */
  const functionOf = (expression: ts.Expression): string | null => {
    if (ts.isIdentifier(expression)) return functions.get(expression.text) ?? null;
    if (
      ts.isPropertyAccessExpression(expression) &&
      ts.isIdentifier(expression.expression) &&
      namespaces.has(expression.expression.text)
    )
      return expression.name.text;
    if (
      ts.isCallExpression(expression) &&
      expression.expression.getText(source) === 'promisify' &&
      expression.arguments[0]
    )
      return functionOf(expression.arguments[0]);
    return null;
  };

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      const specifier = node.moduleSpecifier && literal(node.moduleSpecifier);
      if (specifier?.startsWith('.')) scan.references.push(specifier);
    }
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const aliased = functionOf(node.initializer);
      if (aliased) functions.set(node.name.text, aliased);
    }
    if (ts.isCallExpression(node)) {
      const called = functionOf(node.expression);
      const args = node.arguments;
      const first = args[0] ? literal(args[0]) : null;
      const importing =
        node.expression.kind === ts.SyntaxKind.ImportKeyword || node.expression.getText(source) === 'require';
      if (importing && first?.startsWith('.')) scan.references.push(first);
      // import('node:child_process'), require(…), createRequire(…)(…), process.getBuiltinModule(…).
      if (first !== null && CHILD_PROCESS.has(first))
        scan.unreadable.push({ line: line(node), text: node.getText(source).slice(0, 80) });
      else if (called && (PROGRAM_FIRST.has(called) || SHELL_FIRST.has(called))) {
        const program = programOf(args[0], source, SHELL_FIRST.has(called));
        scan.spawns.push({ line: line(node), program });
        // A Node child runs a module of this checkout: follow it (e.g. bin/sika.mjs, src/main.ts).
        if (program === 'node' && args[1]) {
          const walk = (inner: ts.Node): void => {
            const path = literal(inner);
            if (path !== null && SOURCE.test(path)) scan.references.push(path.startsWith('.') ? path : `/${path}`);
            ts.forEachChild(inner, walk);
          };
          walk(args[1]);
        }
      } else if (called === 'fork') {
        scan.spawns.push({ line: line(node), program: 'node' });
      } else if (called) {
        scan.unreadable.push({ line: line(node), text: node.getText(source).slice(0, 80) });
      }
    }
    // A child_process function used other than by calling it (passed on, stored in an object): cannot follow.
    if (ts.isIdentifier(node) && functions.has(node.text)) {
      const parent = node.parent;
      const understood =
        (ts.isCallExpression(parent) &&
          (parent.expression === node || parent.expression.getText(source) === 'promisify')) ||
        ts.isImportSpecifier(parent) ||
        (ts.isVariableDeclaration(parent) && parent.name === node) ||
        (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
        ts.isTypeQueryNode(parent);
      if (!understood) scan.unreadable.push({ line: line(node), text: parent.getText(source).slice(0, 80) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return scan;
}

/** A reference from `from` as a source file of this checkout, or null (JSON, a package, a missing file). */
function resolveReference(from: string, reference: string): string | null {
  const path = reference.startsWith('/') ? join(ROOT, reference) : resolve(dirname(from), reference);
  if (
    !SOURCE.test(path) ||
    !existsSync(path) ||
    !path.startsWith(ROOT) ||
    path.includes(`${join(ROOT, 'node_modules')}`)
  )
    return null;
  return path;
}

/** Every module of the default suite (test files, what they import, what they start), and what each spawns. */
async function scanDefaultSuite(): Promise<{ files: string[]; findings: string[]; spawns: number }> {
  const { defaultSuiteFiles } = (await import(pathToFileURL(join(ROOT, 'scripts', 'test-files.mjs')).href)) as {
    defaultSuiteFiles(root: string): string[];
  };
  const queue = defaultSuiteFiles(ROOT).map((file) => join(ROOT, file));
  const seen = new Set<string>();
  const findings: string[] = [];
  let spawns = 0;
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const name = relative(ROOT, file);
    const scan = scanSource(readFileSync(file, 'utf8'), file);
    spawns += scan.spawns.length;
    if (!ALLOWED_FILES[name]) {
      for (const { line, program } of scan.spawns)
        if (!ALLOWED_PROGRAMS.has(program)) findings.push(`${name}:${line}: starts ${program}`);
      for (const { line, text } of scan.unreadable)
        findings.push(`${name}:${line}: child_process used in a way this check cannot read: ${text}`);
    }
    for (const reference of scan.references) {
      const next = resolveReference(file, reference);
      if (next) queue.push(next);
    }
  }
  return { files: [...seen].map((file) => relative(ROOT, file)).sort(), findings, spawns };
}

describe('the default suite needs no system binary', () => {
  it('reads the spawns it must refuse: a literal program, a promisified alias, a namespace, a shell line, require', () => {
    const programs = (text: string) => scanSource(text, 'probe.ts').spawns.map((spawn) => spawn.program);
    assert.deepEqual(
      programs(`import { execFileSync } from 'node:child_process';\nexecFileSync('pdftotext', ['-', '-']);`),
      ['pdftotext'],
    );
    assert.deepEqual(
      programs(
        `import { execFile as ef } from 'child_process';\nimport { promisify } from 'node:util';\nconst run = promisify(ef);\nawait run('convert', []);`,
      ),
      ['convert'],
    );
    assert.deepEqual(
      programs(
        `import * as cp from 'node:child_process';\ncp.spawnSync(process.execPath, ['x.mjs']);\ncp.spawn('chromium');`,
      ),
      ['node', 'chromium'],
    );
    assert.deepEqual(
      programs(`import { execSync } from 'node:child_process';\nexecSync('pdftotext -layout a.pdf -');`),
      ['pdftotext'],
    );
    assert.deepEqual(programs(`import { spawn } from 'node:child_process';\nconst tool = pick();\nspawn(tool, []);`), [
      '?tool',
    ]);
    assert.equal(scanSource(`const cp = require('child_process');`, 'probe.cjs').unreadable.length, 1);
    assert.equal(scanSource(`const { spawn } = await import('node:child_process');`, 'probe.ts').unreadable.length, 1);
    assert.equal(
      scanSource(`import { spawn } from 'node:child_process';\nconst tools = { spawn };`, 'probe.ts').unreadable.length,
      1,
    );
    assert.equal(
      scanSource(`import { spawn } from 'node:child_process';\nlet child: ReturnType<typeof spawn>;`, 'probe.ts')
        .unreadable.length,
      0,
    );
    assert.deepEqual(
      scanSource(
        `import { spawn } from 'node:child_process';\nspawn(process.execPath, [join(ROOT, 'bin/sika.mjs')]);`,
        'probe.ts',
      ).references,
      ['/bin/sika.mjs'],
    );
  });

  it('no test file, module it imports or program it starts spawns anything but Node, npm or git (listed exceptions skip without theirs)', async () => {
    const { files, findings, spawns } = await scanDefaultSuite();
    // The walk reaches what the suite runs: test files, their helpers, src modules and the CLI the tests start.
    for (const file of [
      'test/payouts/cancel-files.test.ts',
      'test/support/helpers.ts',
      'src/app.ts',
      'bin/sika.mjs',
      'src/cli/main.ts',
    ])
      assert.ok(files.includes(file), `scanned ${file}`);
    assert.ok(spawns >= 20, `child processes found: ${spawns}`);
    for (const file of Object.keys(ALLOWED_FILES))
      assert.ok(files.includes(file), `${file} is still part of the default suite (else drop its exception)`);
    assert.deepEqual(findings, []);
  });
});
