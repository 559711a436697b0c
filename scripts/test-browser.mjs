// npm run test:browser: every test/browser/*.test.ts with node's test runner (through tsx), one file at a
// time (each drives its own Chromium). Chromium is Debian's /usr/bin/chromium (CHROMIUM_PATH overrides);
// no browser is ever downloaded. Screenshots land in test-results/. Extra arguments narrow the run to
// files whose path contains one of them. Ends with the same closing line as npm test.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runNodeTests, testFilesIn } from './run-node-tests.mjs';

const dir = join('test', 'browser');
const filters = process.argv.slice(2);
const files = testFilesIn(dir, filters, 'browser');
const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
if (!existsSync(chromium)) {
  console.error(
    `Chromium not found at ${chromium}: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH`,
  );
  process.exit(1);
}
mkdirSync('test-results', { recursive: true });
console.log(
  `running ${files.length} browser test files with ${chromium} on ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded storage'}`,
);

process.exit(runNodeTests(files, { concurrency: 1 }));
