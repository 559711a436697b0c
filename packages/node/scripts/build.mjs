// Builds @sika/node into dist/:
//   1. the OpenAPI document from the server's code (../../scripts/openapi.ts: the app on an in-memory
//      embedded storage, no server running) -> openapi.json
//   2. its types with openapi-typescript -> src/generated/schema.ts
//   3. dist/index.js (ESM) and dist/index.cjs (CommonJS) with esbuild, packages left as imports
//   4. the declarations with tsc (which type-checks the package): dist/**/*.d.ts, and a .d.cts beside
//      each for require() users (the generated types only as dist/generated/schema.d.cts, for both).
//
//   node scripts/build.mjs   (npm run build -w @sika/node; npm pack runs it as prepack)
//   node scripts/build.mjs --if-stale   only when an input changed (the root's npm prepare)
//   node scripts/build.mjs --openapi <file>   types from a saved document instead of the server's code
//                                             (or SIKA_OPENAPI_FILE=<file>, e.g. for npm pack)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const REPO_ROOT = join(PACKAGE_DIR, '..', '..');
const DIST = join(PACKAGE_DIR, 'dist');
const require = createRequire(join(PACKAGE_DIR, 'package.json'));

function step(name, run) {
  const startedAt = performance.now();
  const result = run();
  const finish = () => console.log(`  ${name}: ${Math.round(performance.now() - startedAt)} ms`);
  if (result instanceof Promise)
    return result.then((value) => {
      finish();
      return value;
    });
  finish();
  return result;
}

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0)
    throw new Error(`${[command, ...args].join(' ')} failed (${result.status ?? result.signal})`);
}

const givenDocument =
  process.argv.indexOf('--openapi') > 0
    ? process.argv[process.argv.indexOf('--openapi') + 1]
    : process.env.SIKA_OPENAPI_FILE || undefined;
const pkg = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8'));
const versionSource = readFileSync(join(PACKAGE_DIR, 'src', 'version.ts'), 'utf8');
if (!versionSource.includes(`'${pkg.version}'`))
  throw new Error(`src/version.ts does not say ${pkg.version} (package.json's version)`);

// --if-stale (npm's prepare at the root): nothing to do when neither the server's code (the document's
// source, hashed as the server's build hashes it) nor this package's sources changed since the last build.
const { inputsHash } = await import(pathToFileURL(join(REPO_ROOT, 'scripts', 'build.mjs')).href);
function packageHash() {
  const hash = createHash('sha256')
    .update(inputsHash(REPO_ROOT))
    .update(readFileSync(join(REPO_ROOT, 'scripts', 'openapi.ts')));
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'generated') walk(path);
      else if (entry.isFile()) hash.update(`${path}\0`).update(readFileSync(path));
    }
  };
  walk(join(PACKAGE_DIR, 'src'));
  walk(join(PACKAGE_DIR, 'scripts'));
  for (const file of ['package.json', 'tsconfig.json']) hash.update(readFileSync(join(PACKAGE_DIR, file)));
  return hash.digest('hex');
}
// A production install (npm ci --omit=dev) runs the root's prepare without the generator and tsc: the
// server needs no SDK, so prepare skips it then; a direct build still fails loudly.
if (process.argv.includes('--if-stale')) {
  const missing = ['openapi-typescript', 'typescript'].filter((name) => {
    try {
      require.resolve(`${name}/package.json`);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) {
    console.log(`${pkg.name}: not built (${missing.join(', ')} not installed: dev dependencies omitted)`);
    process.exit(0);
  }
}
const STAMP = join(DIST, 'build.json');
const inputs = packageHash();
if (process.argv.includes('--if-stale') && !givenDocument) {
  try {
    if (JSON.parse(readFileSync(STAMP, 'utf8')).inputs_sha256 === inputs) {
      console.log(`${pkg.name}: dist/ is up to date`);
      process.exit(0);
    }
  } catch {
    // no build yet
  }
}

const startedAt = performance.now();
console.log(`building ${pkg.name} ${pkg.version}`);

const openApiPath = join(PACKAGE_DIR, 'openapi.json');
if (givenDocument) {
  copyFileSync(givenDocument, openApiPath);
} else {
  step('openapi.json from the server code', () =>
    run(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts', 'openapi.ts'), openApiPath], REPO_ROOT),
  );
}

await step('types (openapi-typescript)', async () => {
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  const ast = await openapiTS(JSON.parse(readFileSync(openApiPath, 'utf8')), { alphabetize: false, silent: true });
  const banner = "// Generated by packages/node/scripts/build.mjs from the server's OpenAPI document. Do not edit.\n";
  mkdirSync(join(PACKAGE_DIR, 'src', 'generated'), { recursive: true });
  writeFileSync(join(PACKAGE_DIR, 'src', 'generated', 'schema.ts'), banner + astToString(ast));
});

rmSync(DIST, { recursive: true, force: true });

await step('bundles (esbuild, ESM + CJS)', async () => {
  // esbuild comes with tsx (a dependency of the server), as in the root scripts/build.mjs.
  const fromTsx = createRequire(require.resolve('tsx/package.json'));
  const esbuild = await import(pathToFileURL(fromTsx.resolve('esbuild')).href);
  const common = {
    absWorkingDir: PACKAGE_DIR,
    entryPoints: [join(PACKAGE_DIR, 'src', 'index.ts')],
    bundle: true,
    packages: 'external',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
  };
  await Promise.all([
    esbuild.build({ ...common, format: 'esm', outfile: join(DIST, 'index.js') }),
    esbuild.build({ ...common, format: 'cjs', outfile: join(DIST, 'index.cjs') }),
  ]);
});

step('declarations (tsc)', () => {
  run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(PACKAGE_DIR, 'tsconfig.json')], PACKAGE_DIR);
  // The generated types (300 kB) exist once, as a .d.cts: declarations of types only, which ES modules
  // and CommonJS both import.
  const schema = join(DIST, 'generated', 'schema.d.ts');
  renameSync(schema, schema.replace(/\.d\.ts$/, '.d.cts'));
  // The .d.cts twins of the rest: the same declarations, their relative imports pointing at the twins.
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.d.ts')) {
        const text = readFileSync(path, 'utf8');
        const toCjs = (from) => from.replace(/(from\s+|import\()(['"])(\.{1,2}\/[^'"]+)\.js\2/g, '$1$2$3.cjs$2');
        writeFileSync(path.replace(/\.d\.ts$/, '.d.cts'), toCjs(text));
        writeFileSync(path, text.replace(/(['"])(\.{1,2}\/(?:[^'"]+\/)?generated\/schema)\.js\1/g, '$1$2.cjs$1'));
      }
    }
  };
  walk(DIST);
});

writeFileSync(
  STAMP,
  `${JSON.stringify({ inputs_sha256: givenDocument ? null : inputs, built_at: new Date().toISOString() }, null, 2)}\n`,
);
console.log(`built ${pkg.name} in ${Math.round(performance.now() - startedAt)} ms`);
