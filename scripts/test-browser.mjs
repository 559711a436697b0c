// npm run test:browser: every test/browser/*.test.ts with node's test runner (through tsx), one file at a
// time (each drives its own Chromium). Chromium is Debian's /usr/bin/chromium (CHROMIUM_PATH overrides);
// no browser is ever downloaded. Screenshots land in test-results/. Extra arguments narrow the run to
// files whose path contains one of them. Ends with the same closing line as npm test.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = join('test', 'browser');
const filters = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((entry) => entry.endsWith('.test.ts'))
  .map((entry) => join(dir, entry))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
if (files.length === 0) {
  console.error('no browser test files matched');
  process.exit(1);
}
const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
if (!existsSync(chromium)) {
  console.error(`Chromium not found at ${chromium}: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH`);
  process.exit(1);
}
mkdirSync('test-results', { recursive: true });
console.log(`running ${files.length} browser test files with ${chromium} on ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded storage'}`);

const tapDir = mkdtempSync(join(tmpdir(), 'sika-browser-test-'));
const tapFile = join(tapDir, 'results.tap');
const result = spawnSync(
  process.execPath,
  [
    '--import', 'tsx', '--test', '--test-concurrency=1',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=tap', `--test-reporter-destination=${tapFile}`,
    ...files,
  ],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
let tap = '';
try {
  tap = readFileSync(tapFile, 'utf8');
} catch {
  /* the runner died before writing */
}
rmSync(tapDir, { recursive: true, force: true });
const count = (name) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(tap)?.[1] ?? 0);
console.log(`\ntests: ${count('pass')} passed, ${count('fail') + count('cancelled')} failed, ${count('skipped')} skipped`);
process.exit(result.status ?? 1);
