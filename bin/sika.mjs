#!/usr/bin/env node
// The sika command. Runs the compiled CLI (dist/cli.js, scripts/build.mjs) when it was built from the sources
// as they are now (npm install builds it), else the TypeScript through tsx: never stale, no build step needed.
import { pathToFileURL } from 'node:url';
import { cliBundlePath, isFresh } from '../scripts/build.mjs';

let main;
if (isFresh()) ({ main } = await import(pathToFileURL(cliBundlePath()).href));
else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
