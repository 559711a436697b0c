// npm test: every *.test.ts under test/ and src/ with node's test runner (through tsx), two files at a time.
// Embedded storage by default; set DATABASE_URL to run the same suite against PostgreSQL.
// Extra arguments narrow the run to files whose path contains one of them.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runNodeTests } from './run-node-tests.mjs';

function findTests(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...findTests(path));
    // Browser and reliability suites have their own commands (npm run test:browser, npm run test:reliability).
    else if (entry.endsWith('.test.ts') && !path.includes(join('test', 'browser')) && !path.includes(join('test', 'reliability'))) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = [...findTests('test'), ...findTests('src')]
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
console.log(`running ${files.length} test files on ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded storage'}`);
process.exit(runNodeTests(files, { concurrency: 2 }));
