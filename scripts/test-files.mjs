// The files `npm test` runs: every *.test.ts under test/ and src/, except the browser and reliability
// suites (they have their own commands: npm run test:browser, npm run test:reliability).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function findTests(root, dir) {
  const out = [];
  for (const entry of readdirSync(join(root, dir))) {
    const path = join(dir, entry);
    if (statSync(join(root, path)).isDirectory()) out.push(...findTests(root, path));
    else if (
      entry.endsWith('.test.ts') &&
      !path.includes(join('test', 'browser')) &&
      !path.includes(join('test', 'reliability'))
    )
      out.push(path);
  }
  return out;
}

/** Paths relative to root (the checkout), sorted. */
export function defaultSuiteFiles(root = '.') {
  return [...findTests(root, 'test'), ...findTests(root, 'src')].sort();
}
