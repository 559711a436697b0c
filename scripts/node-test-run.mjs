// One run of node's test runner over the files named after `--`, longest first: started by run-node-tests.mjs as
// `node <loader> scripts/node-test-run.mjs <concurrency> <tap file> <bundled|tsx> -- <files…>`, where the loader is
// `--enable-source-maps` for bundled files and `--import tsx` for files run from their sources (the runner's children
// inherit it). Bundled: the files are compiled once here (test-bundle.mjs) and each child runs its bundle.
// `node --test` sorts its files by name, so a slow file late in the alphabet started last and the run waited for it
// alone; node:test's run() keeps the order it is given, and the files that took longest last time
// (test-durations.mjs) start first, so the slots finish together.
import { createWriteStream } from 'node:fs';
import { compose } from 'node:stream';
import { finished } from 'node:stream/promises';
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';
import { slowestFilesReporter } from './slowest-files-reporter.mjs';
import { bundleTestFiles } from './test-bundle.mjs';
import { longestFirst } from './test-durations.mjs';

const [concurrency, tapFile, mode, separator, ...files] = process.argv.slice(2);
if (separator !== '--' || files.length === 0 || !['bundled', 'tsx'].includes(mode)) {
  console.error('usage: node scripts/node-test-run.mjs <concurrency> <tap file> <bundled|tsx> -- <files…>');
  process.exit(2);
}

const ordered = longestFirst(files);
const bundles = mode === 'bundled' ? await bundleTestFiles(ordered) : null;
try {
  const stream = run({ files: bundles ? ordered.map(bundles.bundleOf) : ordered, concurrency: Number(concurrency) });
  // Every reporter and every running file listens for the stream's end: more than EventEmitter's default warning of 10.
  stream.setMaxListeners(64);
  let failed = false;
  stream.on('test:fail', () => {
    failed = true;
  });
  // As `node --test` does with several --test-reporter flags: each reporter reads the whole stream.
  const forPeople = compose(stream, new spec());
  forPeople.pipe(process.stdout, { end: false });
  const slowest = compose(stream, slowestFilesReporter(bundles?.sourceOf));
  slowest.pipe(process.stdout, { end: false });
  const tapOut = compose(stream, tap).pipe(createWriteStream(tapFile));
  await Promise.all([finished(forPeople), finished(slowest), finished(tapOut)]);
  process.exitCode = failed ? 1 : 0;
} finally {
  bundles?.remove();
}
