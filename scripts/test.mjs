// npm test: every *.test.ts under test/ and src/ with node's test runner, the longest first, several files at a
// time (SIKA_TEST_CONCURRENCY below), each file run from a bundle compiled once for the run (test-bundle.mjs: on 2
// cores 312 to 319 s, where tsx in every process took 351 s); SIKA_TEST_FROM_SOURCES=1 runs them through tsx.
// Embedded storage by default (each file's database a copy of one migrated here first, test/support/embedded-template.ts);
// set DATABASE_URL to run the same suite against PostgreSQL.
// Extra arguments narrow the run to files whose path contains one of them.
// SIKA_TEST_CONCURRENCY=N runs N files at a time instead of the default: four on embedded storage (each file has its
// own database, and a file often waits on a process it started: on 2 cores, longest first and through tsx, 351 s
// at four, 374 s at three, 394 s at two), two on PostgreSQL (the files share one database, and its CPU is the same two cores).
import { defaultSuiteFiles } from './test-files.mjs';
import { build, isFresh } from './build.mjs';
import { prepareEmbeddedTemplate, runNodeTests } from './run-node-tests.mjs';

const filters = process.argv.slice(2);
const files = defaultSuiteFiles().filter(
  (file) => filters.length === 0 || filters.some((filter) => file.includes(filter)),
);
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
console.log(`running ${files.length} test files on ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded storage'}`);
// The tests start the server and the sika command as a merchant does (npm start, bin/sika.mjs), from dist/:
// built here once when the sources changed, rather than by each process that finds it stale.
if (!isFresh()) await build();
// Embedded: every file's storage is a copy of one database migrated here, before the runner starts.
const removeTemplate = await prepareEmbeddedTemplate();
let status;
try {
  const concurrency = Number(process.env.SIKA_TEST_CONCURRENCY ?? (process.env.DATABASE_URL ? 2 : 4));
  status = runNodeTests(files, { concurrency, bundled: process.env.SIKA_TEST_FROM_SOURCES !== '1' });
} finally {
  removeTemplate();
}
process.exit(status);
