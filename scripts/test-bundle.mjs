// npm test's files compiled once per run instead of once per process: esbuild bundles every test file (and the
// sources it imports) into plain ES modules, shared code split into chunks, packages left in node_modules. Each
// test process then loads a few chunks with no loader hooks, where through tsx it resolved and transformed some
// 300 modules one by one (scripts/test.mjs's header has the figures). Types are not checked here (npm run
// typecheck does); esbuild strips them as tsx does.
//
// The bundles go to node_modules/.cache/sika/test-js/<run>/ (inside the checkout, so packages resolve from its
// node_modules; .mjs, so they are ES modules whatever the folder's package scope), mirroring the files' paths, and
// are removed when the run ends. A module that reads import.meta.url, .filename or .dirname keeps its source
// file's (absolute), so fixtures, migrations and scripts beside the sources are found where they are. Source maps
// sit beside the bundles: stack traces name the .ts file and line (the runner starts with --enable-source-maps).
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadEsbuild, NODE_BUNDLE_OPTIONS, ROOT, sourceImportMetaPlugin } from './build.mjs';

const BUNDLES_DIR = join(ROOT, 'node_modules', '.cache', 'sika', 'test-js');

/**
 * Bundles `files` (test files, relative to the checkout or absolute). Returns the bundle of each file (absolute
 * path), the source file of a bundle, and the function that removes this run's bundles.
 */
export async function bundleTestFiles(files) {
  removeAbandonedRuns();
  const outDir = join(BUNDLES_DIR, `run-${process.pid}-${Date.now()}`);
  mkdirSync(outDir, { recursive: true });
  const sources = files.map((file) => resolve(ROOT, file));
  const esbuild = await loadEsbuild(ROOT);
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: sources,
    outdir: outDir,
    outbase: ROOT,
    outExtension: { '.js': '.mjs' },
    ...NODE_BUNDLE_OPTIONS,
    // Code several test files import is loaded from one chunk, not bundled into each.
    splitting: true,
    plugins: [sourceImportMetaPlugin((path) => `new URL(${JSON.stringify(pathToFileURL(path).href)})`)],
  });
  const bundleOf = (source) => join(outDir, relative(ROOT, source)).replace(/\.ts$/, '.mjs');
  const bySource = new Map(sources.map((source) => [source, bundleOf(source)]));
  const byBundle = new Map([...bySource].map(([source, bundle]) => [bundle, source]));
  return {
    /** The bundle to run for a file given as `files` gave it. */
    bundleOf: (file) => bySource.get(resolve(ROOT, file)),
    /** The source file (absolute) a bundle was made from; any other path unchanged. */
    sourceOf: (path) => byBundle.get(path) ?? path,
    remove: () => rmSync(outDir, { recursive: true, force: true }),
  };
}

/** A run killed before removing its bundles leaves them to the next run (named by the process that made them). */
function removeAbandonedRuns() {
  let entries = [];
  try {
    entries = readdirSync(BUNDLES_DIR);
  } catch {
    return;
  }
  for (const entry of entries) {
    const pid = Number(/^run-(\d+)-/.exec(entry)?.[1]);
    if (pid && pid !== process.pid && !processIsAlive(pid)) {
      rmSync(join(BUNDLES_DIR, entry), { recursive: true, force: true });
    }
  }
}

/** Whether process `pid` still runs (a run's leftovers are named by its process). */
export function processIsAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}
