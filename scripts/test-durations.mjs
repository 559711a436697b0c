// How long each test file took when it last ran, so the runner starts the longest first (node-test-run.mjs).
// The slowest-files reporter records every run's figures in node_modules/.cache (this checkout's own machine);
// a fresh clone starts from scripts/test-durations.json, a run's figures committed with the tests.
// A file with no figure (a new one) is started first: it may be slow, and a short file costs little there.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const committed = join(root, 'scripts', 'test-durations.json');
// Per storage: a file's time on PostgreSQL is not its time on embedded storage.
const cached = join(
  root,
  'node_modules',
  '.cache',
  'sika',
  `test-durations.${process.env.DATABASE_URL ? 'postgresql' : 'embedded'}.json`,
);

function read(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return {};
  }
}

/** Seconds per file (paths relative to the checkout): the committed figures, overridden by this machine's. */
export function knownDurations() {
  return { ...read(committed), ...read(cached) };
}

/** `files` (relative or absolute), the ones without a figure first, then by the last figure, longest first. */
export function longestFirst(files) {
  const seconds = knownDurations();
  const figure = (file) => seconds[relative(root, join(root, file))] ?? Number.POSITIVE_INFINITY;
  return [...files].sort((a, b) => figure(b) - figure(a) || (a < b ? -1 : a > b ? 1 : 0));
}

/** Adds a run's figures (absolute paths → seconds) to this machine's record. */
export function recordDurations(secondsByFile, path = cached) {
  if (!existsSync(join(root, 'node_modules'))) return;
  const record = read(path);
  for (const [file, seconds] of secondsByFile) record[relative(root, file)] = Math.round(seconds * 10) / 10;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(Object.fromEntries(Object.entries(record).sort()), null, 2)}\n`);
}
