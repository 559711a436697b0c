// Imports between the top-level units of src go one way (issue 32). A unit is a folder directly under src
// (src/http, src/checkout, ...); the files directly in src (main.ts, app.ts, workers.ts, index.ts) are one
// unit, `src/*`, the top, which may import anything. This reads every .ts file under src, resolves its
// relative imports (`import`, `import type`, `export ... from`, `import('...')`), and fails on any cycle
// between units (Tarjan's strongly connected components, each printed with one offending import per edge)
// and on any arrow that ARCHITECTURE.md's "Allowed imports" table does not allow: the document is this
// test's table.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Arrows that still close a cycle, each with its reason; empty when the units form layers. A listed arrow is
 * left out of the cycle check (the table must still allow it); one that no longer exists fails the test.
 */
const CYCLE_ARROWS_ALLOWED: Record<string, string> = {};
const SRC = join(ROOT, 'src');
const TOP = 'src/*';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return entry.endsWith('.ts') ? [path] : [];
  });
}

/** `src/<folder>` for a file in a folder of src, `src/*` for a file directly in src. */
function unitOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  return parts.length === 1 ? TOP : `src/${parts[0]}`;
}

const IMPORT_PATTERNS = [
  // import x from '...', import type { X } from '...', export { x } from '...', export * from '...'
  /\b(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
  // import '...' (for its effects)
  /\bimport\s*['"]([^'"]+)['"]/g,
  // import('...'), a dynamic import or a type's
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** The relative specifiers a module imports, comments left out. */
function importsOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const found = new Set<string>();
  for (const pattern of IMPORT_PATTERNS) {
    for (const match of code.matchAll(pattern)) if (match[1]!.startsWith('.')) found.add(match[1]!);
  }
  return [...found];
}

function resolveImport(from: string, specifier: string): string | null {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

interface Edge {
  from: string;
  to: string;
  /** One import making the arrow: `src/a/x.ts -> src/b/y.ts`. */
  example: string;
}

function unitGraph(): { edges: Map<string, Edge>; units: Set<string>; unresolved: string[] } {
  const edges = new Map<string, Edge>();
  const units = new Set<string>();
  const unresolved: string[] = [];
  for (const file of sourceFiles(SRC).sort()) {
    const from = unitOf(file);
    units.add(from);
    for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
      const target = resolveImport(file, specifier);
      if (!target) {
        unresolved.push(`${relative(ROOT, file)}: ${specifier}`);
        continue;
      }
      if (!target.startsWith(`${SRC}/`)) continue;
      const to = unitOf(target);
      if (to === from) continue;
      const key = `${from} -> ${to}`;
      if (!edges.has(key))
        edges.set(key, { from, to, example: `${relative(ROOT, file)} -> ${relative(ROOT, target)}` });
    }
  }
  return { edges, units, unresolved };
}

/** Tarjan's strongly connected components of more than one unit. */
function cycles(units: Iterable<string>, edges: Iterable<{ from: string; to: string }>): string[][] {
  const next = new Map<string, string[]>();
  for (const unit of units) next.set(unit, []);
  for (const edge of edges) {
    if (!next.has(edge.from)) next.set(edge.from, []);
    if (!next.has(edge.to)) next.set(edge.to, []);
    next.get(edge.from)!.push(edge.to);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (unit: string) => {
    index.set(unit, counter);
    low.set(unit, counter);
    counter += 1;
    stack.push(unit);
    onStack.add(unit);
    for (const to of next.get(unit)!) {
      if (!index.has(to)) {
        visit(to);
        low.set(unit, Math.min(low.get(unit)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(unit, Math.min(low.get(unit)!, index.get(to)!));
    }
    if (low.get(unit) === index.get(unit)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== unit);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const unit of [...next.keys()].sort()) if (!index.has(unit)) visit(unit);
  return found;
}

/**
 * ARCHITECTURE.md's "Allowed imports" table: a row per unit, `| \`src/x\` | \`src/y\`, \`src/z\` |`, the
 * second column the units it may import (`anything` for the top, `nothing` for none).
 */
function allowedTable(markdown: string): Map<string, Set<string> | 'anything'> {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Allowed imports'));
  assert.ok(section, 'ARCHITECTURE.md has an "Allowed imports" section');
  const table = new Map<string, Set<string> | 'anything'>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    if (cells.length < 4 || !/^`src\/[^`]*`/.test(cells[1]!)) continue;
    const unit = /`([^`]+)`/.exec(cells[1]!)![1]!;
    const may = cells[2]!;
    assert.ok(!table.has(unit), `${unit} has one row in the table`);
    if (/^anything\b/.test(may)) table.set(unit, 'anything');
    else table.set(unit, new Set([...may.matchAll(/`(src\/[^`]+)`/g)].map((match) => match[1]!)));
  }
  return table;
}

describe('import cycles between the units of src', () => {
  const { edges, units, unresolved } = unitGraph();
  const table = allowedTable(readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8'));

  it('reads the imports it is for', () => {
    assert.deepEqual(
      importsOf(
        [
          "import { a } from './a.ts';",
          "import type { B } from '../b/model.ts';",
          "export { c } from './c.ts';",
          "export * from './d.ts';",
          "export type { E } from '../e.ts';",
          "import {\n  f,\n  type G,\n} from '../f.ts';",
          "const h = await import('../h.ts');",
          "let i: import('../i.ts').I;",
          "import './j.ts';",
          "import { k } from 'fastify';",
          "// see import { l } from './l.ts'",
          "/* import { m } from './m.ts' */",
        ].join('\n'),
      ).sort(),
      ['../b/model.ts', '../e.ts', '../f.ts', '../h.ts', '../i.ts', './a.ts', './c.ts', './d.ts', './j.ts'],
    );
    assert.deepEqual(
      cycles(
        ['a', 'b', 'c', 'd'],
        [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'c' },
          { from: 'c', to: 'a' },
          { from: 'c', to: 'd' },
        ],
      ),
      [['a', 'b', 'c']],
    );
    assert.ok(units.size >= 18, `units: ${[...units].join(', ')}`);
    assert.ok(edges.size >= 40, `arrows: ${edges.size}`);
  });

  it('every relative import names a file', () => {
    assert.deepEqual(unresolved, []);
  });

  it('no cycle between units (but the listed arrows, each with its reason)', () => {
    const found = cycles(
      units,
      [...edges.values()].filter((edge) => !CYCLE_ARROWS_ALLOWED[`${edge.from} -> ${edge.to}`]),
    );
    const described = found.map((component) => {
      const members = new Set(component);
      const inside = [...edges.values()].filter((edge) => members.has(edge.from) && members.has(edge.to));
      return [
        `cycle of ${component.length}: ${component.join(', ')}`,
        ...inside.map((edge) => `  ${edge.example}`),
      ].join('\n');
    });
    assert.equal(found.length, 0, `\n${described.join('\n')}`);
  });

  it('every listed cycle arrow still exists (a stale one is removed)', () => {
    assert.deepEqual(
      Object.keys(CYCLE_ARROWS_ALLOWED).filter((arrow) => !edges.has(arrow)),
      [],
    );
  });

  it('ARCHITECTURE.md has a row for every unit, and no row for a unit that is gone', () => {
    assert.deepEqual([...table.keys()].sort(), [...units].sort());
    for (const [unit, may] of table) {
      if (may === 'anything') continue;
      for (const to of may) assert.ok(units.has(to), `${unit}'s row names ${to}, which is no unit`);
    }
  });

  it('the table itself has no cycle (but the listed arrows)', () => {
    const arrows = [...table].flatMap(([from, may]) =>
      may === 'anything' ? [] : [...may].map((to) => ({ from, to })),
    );
    assert.deepEqual(
      cycles(
        table.keys(),
        arrows.filter((arrow) => !CYCLE_ARROWS_ALLOWED[`${arrow.from} -> ${arrow.to}`]),
      ),
      [],
    );
  });

  it('every arrow between units is one the table allows', (t) => {
    const lines = [...table].map(
      ([unit, may]) => `${unit} -> ${may === 'anything' ? 'anything' : [...may].join(', ') || 'nothing'}`,
    );
    t.diagnostic(`allowed imports:\n${lines.join('\n')}`);
    const refused = [...edges.values()]
      .filter((edge) => {
        const may = table.get(edge.from);
        return may !== 'anything' && !may?.has(edge.to);
      })
      .map((edge) => `${edge.from} -> ${edge.to}: ${edge.example}`);
    assert.deepEqual(refused, []);
  });
});
