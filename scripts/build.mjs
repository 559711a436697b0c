// The compiled server that `npm start` runs: src/main.ts bundled by esbuild into one ES module,
// dist/main.js (packages stay in node_modules, imported from there), and the `sika` command's the same
// way, dist/cli.js (bin/sika.mjs runs it when it is fresh: 0.3 s to start instead of 0.7 s through tsx).
// Type checking stays with tsc (npm run typecheck); esbuild only strips types.
//
// Never stale: dist/build.json records a hash of every input (all of src/, migrations and pay.js
// included, package.json, tsconfig.json and this file); scripts/start.mjs rebuilds when the hash of
// the inputs on disk differs. The hash is taken before bundling, so a file changed during a build
// leaves a stamp that no longer matches and the next start builds again.
//
//   node scripts/build.mjs             build now
//   node scripts/build.mjs --if-stale  build only when the inputs changed (npm's prepare, the bench)
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Where the build goes (gitignored). */
export const OUT_DIR_NAME = 'dist';
const STAMP_NAME = 'build.json';
const BUNDLE_NAME = 'main.js';
const CLI_BUNDLE_NAME = 'cli.js';
/** Each bundle and its entry. */
const BUNDLES = [
  { name: BUNDLE_NAME, entry: join('src', 'main.ts') },
  { name: CLI_BUNDLE_NAME, entry: join('src', 'cli', 'main.ts') },
];

/** Every file the bundle depends on, relative to root, sorted: src/ whole, and the build's own settings. */
export function buildInputs(root = ROOT) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  walk('src');
  files.push('package.json', 'tsconfig.json', join('scripts', 'build.mjs'));
  return files.map((file) => file.split(sep).join('/')).sort();
}

/** sha256 over every input's path and bytes (about 250 files: a few milliseconds). */
export function inputsHash(root = ROOT) {
  const hash = createHash('sha256');
  for (const file of buildInputs(root)) {
    const data = readFileSync(join(root, file));
    hash.update(`${file}\0${data.length}\0`).update(data);
  }
  return hash.digest('hex');
}

export function bundlePath(root = ROOT) {
  return join(root, OUT_DIR_NAME, BUNDLE_NAME);
}

export function cliBundlePath(root = ROOT) {
  return join(root, OUT_DIR_NAME, CLI_BUNDLE_NAME);
}

/** The hash the current build was made from, or null when there is no complete build. */
export function builtHash(root = ROOT) {
  try {
    if (!existsSync(bundlePath(root)) || !existsSync(cliBundlePath(root))) return null;
    const stamp = JSON.parse(readFileSync(join(root, OUT_DIR_NAME, STAMP_NAME), 'utf8'));
    return typeof stamp.inputs_sha256 === 'string' ? stamp.inputs_sha256 : null;
  } catch {
    return null;
  }
}

export function isFresh(root = ROOT) {
  const built = builtHash(root);
  return built !== null && built === inputsHash(root);
}

/** esbuild comes with tsx (a dependency): resolved from tsx's own folder, so no second copy is needed. */
export async function loadEsbuild(root = ROOT) {
  const requireFromTsx = createRequire(createRequire(join(root, 'package.json')).resolve('tsx/package.json'));
  return import(pathToFileURL(requireFromTsx.resolve('esbuild')).href);
}

/**
 * In one bundle every module's import.meta.url would be dist/main.js. Modules that read files beside
 * them (migrations, pay.js) get their own source file's URL instead, written relative to the bundle so
 * the checkout can move; those files are read from src/ at run time, and they are inputs of the hash.
 */
function sourceUrlPlugin(outDir) {
  return sourceImportMetaPlugin((path) => {
    const fromBundle = relative(outDir, path).split(sep).join('/');
    return `new URL(${JSON.stringify(fromBundle)}, import.meta.url)`;
  });
}

/**
 * An esbuild plugin that gives every bundled .ts module that reads import.meta.url, .filename or .dirname its own
 * source file's: `urlOf(path)` is the expression of that file's URL object in the bundle (relative to the bundle
 * for dist/, absolute for the test bundles of test-bundle.mjs).
 */
export function sourceImportMetaPlugin(urlOf) {
  return {
    name: 'source-import-meta',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta.')) return undefined;
        const url = urlOf(args.path);
        const contents = source
          .replaceAll('import.meta.url', `${url}.href`)
          .replaceAll('import.meta.filename', `__sikaFileURLToPath(${url})`)
          .replaceAll('import.meta.dirname', `__sikaDirname(__sikaFileURLToPath(${url}))`);
        const helpers =
          contents === source
            ? ''
            : "import { fileURLToPath as __sikaFileURLToPath } from 'node:url';\nimport { dirname as __sikaDirname } from 'node:path';\n";
        return { contents: helpers + contents, loader: 'ts' };
      });
    },
  };
}

/** Builds dist/main.js and dist/cli.js (and their source maps) from the inputs as they are now; returns the inputs' hash. */
export async function build(root = ROOT) {
  const hash = inputsHash(root);
  const outDir = join(root, OUT_DIR_NAME);
  mkdirSync(outDir, { recursive: true });
  const esbuild = await loadEsbuild(root);
  for (const bundle of BUNDLES) await buildBundle(esbuild, root, outDir, bundle);
  const stampTmp = join(outDir, `.${STAMP_NAME}.${process.pid}.tmp`);
  writeFileSync(
    stampTmp,
    `${JSON.stringify({ inputs_sha256: hash, built_at: new Date().toISOString(), node: process.version }, null, 2)}\n`,
  );
  renameSync(stampTmp, join(outDir, STAMP_NAME));
  return hash;
}

/** How Sika's TypeScript is bundled for Node, here and for the tests (test-bundle.mjs). */
export const NODE_BUNDLE_OPTIONS = {
  bundle: true,
  // Packages stay in node_modules, imported from there.
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  // Names stay what the sources say (stack traces, logs, errors); the bundle is not minified.
  keepNames: true,
  logLevel: 'warning',
};

async function buildBundle(esbuild, root, outDir, { name, entry }) {
  // Written beside the final files, then renamed over them: a process starting meanwhile sees the old
  // build or the new one, never half a file. The stamp goes last, so a crash leaves a stale stamp.
  const tmpName = `.${name}.${process.pid}.${Date.now()}.tmp.js`;
  try {
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: [join(root, entry)],
      outfile: join(outDir, tmpName),
      ...NODE_BUNDLE_OPTIONS,
      legalComments: 'none',
      plugins: [sourceUrlPlugin(outDir)],
    });
    const code = readFileSync(join(outDir, tmpName), 'utf8').replace(
      `//# sourceMappingURL=${tmpName}.map`,
      `//# sourceMappingURL=${name}.map`,
    );
    writeFileSync(join(outDir, tmpName), code);
    renameSync(join(outDir, `${tmpName}.map`), join(outDir, `${name}.map`));
    renameSync(join(outDir, tmpName), join(outDir, name));
  } finally {
    rmSync(join(outDir, tmpName), { force: true });
    rmSync(join(outDir, `${tmpName}.map`), { force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && isFresh()) {
    console.log(`${OUT_DIR_NAME}/${BUNDLE_NAME} and ${CLI_BUNDLE_NAME} are up to date`);
  } else {
    const startedAt = performance.now();
    await build();
    console.log(
      `built ${OUT_DIR_NAME}/${BUNDLE_NAME} and ${CLI_BUNDLE_NAME} in ${Math.round(performance.now() - startedAt)} ms`,
    );
  }
}
