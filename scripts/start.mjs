// `npm start`: runs the compiled server (dist/main.js, see scripts/build.mjs), building it first when
// it is missing or any input changed since it was built, so a start never runs stale code. Runs the
// bundle in this process: signals and the exit code are the server's own.
import { setFlagsFromString } from 'node:v8';
import { pathToFileURL } from 'node:url';
import { build, bundlePath, isFresh } from './build.mjs';

// Under load, rows parsed for requests in flight outlive young-generation collections, and V8 lets the
// old generation grow to 4x its live size before collecting (--trace-gc on PostgreSQL at 4,000 reads/s:
// 119 MB -> 30 MB); peak RSS went to 215-225 MB. Growing it 2x keeps the peak near 170 MB; CPU per
// request did not change beyond the noise of three interleaved runs (issue 18). `node
// --heap-growing-percent=N scripts/start.mjs` overrides it.
const HEAP_GROWING_PERCENT = 100;
if (!process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent')))
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);

if (!isFresh()) {
  const startedAt = performance.now();
  await build();
  console.error(
    `rebuilt dist/ (sources changed since the last build) in ${Math.round(performance.now() - startedAt)} ms`,
  );
}
await import(pathToFileURL(bundlePath()).href);
