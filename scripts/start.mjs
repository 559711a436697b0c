// `npm start`: runs the compiled server (dist/main.js, see scripts/build.mjs), building it first when
// it is missing or any input changed since it was built, so a start never runs stale code. Runs the
// bundle in this process: signals and the exit code are the server's own.
import { pathToFileURL } from 'node:url';
import { build, bundlePath, isFresh } from './build.mjs';

if (!isFresh()) {
  const startedAt = performance.now();
  await build();
  console.error(`rebuilt dist/ (sources changed since the last build) in ${Math.round(performance.now() - startedAt)} ms`);
}
await import(pathToFileURL(bundlePath()).href);
