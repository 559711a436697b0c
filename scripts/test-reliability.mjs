// npm run test:reliability: the robustness suites under test/reliability/ (crash, database loss, slow and
// broken webhook receivers, fuzzing from /openapi.json, the security sweep), one file at a time: several
// start real server processes and load the machine, and their timings must not disturb each other.
// Embedded storage by default; DATABASE_URL runs them against PostgreSQL (the database-loss suite always
// starts its own private PostgreSQL). Extra arguments narrow the run to files whose path contains one of
// them. Ends with the same closing line as npm test.
import { join } from 'node:path';
import { runNodeTestGroups, testFilesIn } from './run-node-tests.mjs';

const dir = join('test', 'reliability');
const filters = process.argv.slice(2);
// The failover suite goes last, in a runner of its own (node --test orders one run's files itself): its
// three-node cluster leaves the disk and the CPU busy for a while after it stops (checkpoints, writeback),
// and the suites that measure latency (receivers) must not run in that wake.
const LAST = 'failover.test.ts';
const files = testFilesIn(dir, filters, 'reliability');
console.log(
  `running ${files.length} reliability test files on ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded storage'}`,
);
process.exit(
  runNodeTestGroups([files.filter((f) => !f.endsWith(LAST)), files.filter((f) => f.endsWith(LAST))], {
    concurrency: 1,
  }),
);
