// npm run test:reliability: the robustness suites under test/reliability/ (crash, database loss, slow and
// broken webhook receivers, fuzzing from /openapi.json, the security sweep), one file at a time: several
// start real server processes and load the machine, and their timings must not disturb each other.
// Embedded storage by default; DATABASE_URL runs them against PostgreSQL (the database-loss suite always
// starts its own private PostgreSQL). Extra arguments narrow the run to files whose path contains one of
// them. Ends with the same closing line as npm test.
import { join } from 'node:path';
import { runNodeTests, testFilesIn } from './run-node-tests.mjs';

const dir = join('test', 'reliability');
const filters = process.argv.slice(2);
const files = testFilesIn(dir, filters, 'reliability');
console.log(`running ${files.length} reliability test files on ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded storage'}`);
process.exit(runNodeTests(files, { concurrency: 1 }));
