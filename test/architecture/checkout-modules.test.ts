// The checkout modules form no import loop (issue 32): every file of src/checkout may import only files that
// do not import it back, directly or through others, so each use case can be read, loaded and tested from
// its dependencies up. Type-only imports count too: a loop of types is still a loop in what must be read.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const CHECKOUT = new URL('../../src/checkout', import.meta.url).pathname;

/** The sibling files a module imports (`import … from './x.ts'`, `export … from`, `import('./x.ts')`). */
export function siblingImports(source: string): string[] {
  const found = new Set<string>();
  for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]\.\/([^'"/]+\.ts)['"]/gm))
    found.add(match[1]!);
  return [...found].sort();
}

/** Every import loop of a graph, each as the files around it (the first repeated at the end). */
export function importLoops(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const loops: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') loops.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return loops;
}

const checkoutGraph = () =>
  new Map(
    readdirSync(CHECKOUT)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => [name, siblingImports(readFileSync(join(CHECKOUT, name), 'utf8'))] as const),
  );

describe('src/checkout modules', () => {
  it('reads the imports and finds loops (the check catches what it is for)', () => {
    assert.deepEqual(
      siblingImports(
        [
          "import { a } from './a.ts';",
          "import type { B } from './b.ts';",
          'import {\n  c,\n  d,\n} from "./c.ts";',
          "export { e } from './e.ts';",
          "const f = await import('./f.ts');",
          "import './g.ts';",
          "import { h } from '../rails/h.ts';",
        ].join('\n'),
      ),
      ['a.ts', 'b.ts', 'c.ts', 'e.ts', 'f.ts', 'g.ts'],
    );
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'outside.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['d.ts']],
    ]);
    assert.deepEqual(importLoops(graph), [
      ['a.ts', 'b.ts', 'c.ts', 'a.ts'],
      ['d.ts', 'd.ts'],
    ]);
    assert.deepEqual(
      importLoops(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', []],
        ]),
      ),
      [],
    );
  });

  it('finds the attempt modules and their imports', () => {
    const graph = checkoutGraph();
    for (const file of ['attempts.ts', 'attempt-initiation.ts', 'attempt-start.ts', 'provider-status.ts'])
      assert.ok(graph.has(file), `${file} in src/checkout`);
    assert.ok(graph.get('attempts.ts')!.includes('attempt-initiation.ts'), 'attempts.ts imports attempt-initiation.ts');
  });

  it('no file of src/checkout imports itself back through its imports (the files form a DAG)', () => {
    assert.deepEqual(
      importLoops(checkoutGraph()).map((loop) => loop.join(' -> ')),
      [],
    );
  });
});
