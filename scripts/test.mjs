// npm test: every *.test.ts under test/ and src/ with node's test runner (through tsx), two files at a time.
// Embedded storage by default; set DATABASE_URL to run the same suite against PostgreSQL.
// Extra arguments narrow the run to files whose path contains one of them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function findTests(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...findTests(path));
    else if (entry.endsWith('.test.ts') && !path.includes(`${join('test', 'browser')}`)) out.push(path);
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
// spec for people on stdout; tap to a file, read back for the plain closing line CI looks for.
const tapDir = mkdtempSync(join(tmpdir(), 'sika-test-'));
const tapFile = join(tapDir, 'results.tap');
const result = spawnSync(
  process.execPath,
  [
    '--import', 'tsx', '--test', '--test-concurrency=2',
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
