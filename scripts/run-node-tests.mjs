// Runs test files with node's test runner, bundled (npm test) or through tsx (node-test-run.mjs, the longest
// first): spec for people on stdout, tap to a file that is read back for the plain closing line CI looks for
// ("tests: N passed, N failed, N skipped").
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processIsAlive } from './test-bundle.mjs';

/**
 * Embedded storage only (no DATABASE_URL): builds the migrated database the test files copy
 * (test/support/embedded-template.ts) once, in a temporary file named by SIKA_TEST_EMBEDDED_TEMPLATE for the runners
 * started after it. Returns the function that removes it.
 */
export async function prepareEmbeddedTemplate() {
  if (process.env.DATABASE_URL) return () => {};
  const started = performance.now();
  const { tsImport } = await import('tsx/esm/api');
  const { EMBEDDED_TEMPLATE_ENV, writeEmbeddedTemplate } = await tsImport(
    '../test/support/embedded-template.ts',
    import.meta.url,
  );
  // Named by this process: a run killed before removing its template leaves it to the next run to remove.
  for (const entry of readdirSync(tmpdir())) {
    const pid = Number(/^sika-template-(\d+)-/.exec(entry)?.[1]);
    if (pid && !processIsAlive(pid)) rmSync(join(tmpdir(), entry), { recursive: true, force: true });
  }
  const dir = mkdtempSync(join(tmpdir(), `sika-template-${process.pid}-`));
  const path = join(dir, 'migrated.tar');
  await writeEmbeddedTemplate(path);
  process.env[EMBEDDED_TEMPLATE_ENV] = path;
  console.log(`embedded storage: migrated template built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return () => {
    delete process.env[EMBEDDED_TEMPLATE_ENV];
    rmSync(dir, { recursive: true, force: true });
  };
}

export function runNodeTests(files, options) {
  return runNodeTestGroups([files], options);
}

/**
 * Runs each group of files in its own test runner, one group after the other (node --test orders the files
 * of one run itself), and ends with one closing line over all of them; exits non-zero if any group failed.
 */
export function runNodeTestGroups(groups, { concurrency, bundled = false }) {
  const totals = { pass: 0, fail: 0, skipped: 0 };
  let status = 0;
  for (const files of groups.filter((group) => group.length > 0)) {
    const tapDir = mkdtempSync(join(tmpdir(), 'sika-test-'));
    const tapFile = join(tapDir, 'results.tap');
    const result = spawnSync(
      process.execPath,
      [
        ...(bundled ? ['--enable-source-maps'] : ['--import', 'tsx']),
        join(import.meta.dirname, 'node-test-run.mjs'),
        String(concurrency),
        tapFile,
        bundled ? 'bundled' : 'tsx',
        '--',
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
    totals.pass += count('pass');
    totals.fail += count('fail') + count('cancelled');
    totals.skipped += count('skipped');
    if ((result.status ?? 1) !== 0) status = result.status ?? 1;
  }
  console.log(`\ntests: ${totals.pass} passed, ${totals.fail} failed, ${totals.skipped} skipped`);
  return status;
}

/** The *.test.ts files directly in `dir` whose path contains one of `filters` (all when none), sorted; exits when none match. */
export function testFilesIn(dir, filters, what) {
  const files = readdirSync(dir)
    .filter((entry) => entry.endsWith('.test.ts'))
    .map((entry) => join(dir, entry))
    .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
    .sort();
  if (files.length === 0) {
    console.error(`no ${what} test files matched`);
    process.exit(1);
  }
  return files;
}
