// The compiled server `npm start` runs (scripts/build.mjs, scripts/start.mjs; issue 18): it is never
// stale (a changed input, by content, makes the next start rebuild), files read at run time are found
// from the bundle, and a server on PostgreSQL never loads PGlite. Works on a copy of the checkout in a
// temp dir, so the real dist/ is left alone.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { storageKind } from '../support/helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..');
// A first start migrates a fresh data dir: about 20 s on a busy 2-core machine, over 30 s when it is
// shared with other test runs. This checks that the build starts, not how fast (bench:startup does).
const READY_TIMEOUT_MS = 90_000;

interface BuildModule {
  build(root?: string): Promise<string>;
  builtHash(root?: string): string | null;
  inputsHash(root?: string): string;
  isFresh(root?: string): boolean;
  bundlePath(root?: string): string;
}

/** src/, the build's inputs and scripts of this checkout in a temp dir, using this checkout's node_modules. */
function copyCheckout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sika-build-test-'));
  cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
  for (const file of ['package.json', 'tsconfig.json', 'scripts/build.mjs', 'scripts/start.mjs'])
    cpSync(join(ROOT, file), join(dir, file));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** `node [nodeArgs] scripts/start.mjs` in `dir`: its exit code and output, or, with `readyPort`, stopped once /readyz answers. */
async function runStart(
  dir: string,
  env: NodeJS.ProcessEnv,
  options: { nodeArgs?: string[]; readyPort?: number } = {},
) {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), 'scripts/start.mjs'], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
  let ready: { status: number; body: unknown } | null = null;
  if (options.readyPort) {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!ready && child.exitCode === null && Date.now() < deadline) {
      try {
        const response = await fetch(`http://127.0.0.1:${options.readyPort}/readyz`);
        if (response.status === 200) ready = { status: response.status, body: await response.json() };
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    child.kill('SIGTERM');
  }
  const [code] = await exited;
  return { code, output, ready };
}

/** The environment of a server started by the test: storage from this run, nothing else of the caller's. */
function serverEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', WORKERS: 'off', REDIS_URL: '', ...extra };
  delete env.NODE_OPTIONS;
  return env;
}

describe('the compiled build (npm start)', () => {
  let dir: string;
  let builder: BuildModule;
  before(async () => {
    dir = copyCheckout();
    builder = (await import(pathToFileURL(join(dir, 'scripts', 'build.mjs')).href)) as BuildModule;
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('is stale until built, then fresh; a file touched without a change keeps it fresh', async () => {
    assert.equal(builder.isFresh(dir), false);
    const hash = await builder.build(dir);
    assert.equal(builder.builtHash(dir), hash);
    assert.equal(builder.isFresh(dir), true);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(dir, 'src', 'main.ts'), later, later);
    assert.equal(builder.isFresh(dir), true);
  });

  it('a changed source, a new migration or a changed package.json makes it stale', async () => {
    await builder.build(dir);
    const changes: [string, () => void, () => void][] = [
      ['src/lib/ids.ts', () => appendFileSync(join(dir, 'src/lib/ids.ts'), '\n// changed\n'), () => {}],
      [
        'a migration',
        () => writeFileSync(join(dir, 'src/db/migrations/999_build_test.sql'), 'SELECT 1;\n'),
        () => rmSync(join(dir, 'src/db/migrations/999_build_test.sql')),
      ],
      ['pay.js', () => appendFileSync(join(dir, 'src/web/checkout/pay.js'), '\n// changed\n'), () => {}],
      ['package.json', () => appendFileSync(join(dir, 'package.json'), '\n'), () => {}],
    ];
    for (const [what, change, undo] of changes) {
      change();
      assert.equal(builder.isFresh(dir), false, `${what} changed, yet the build counts as fresh`);
      await builder.build(dir);
      assert.equal(builder.isFresh(dir), true);
      undo();
    }
  });

  it('npm start rebuilds a stale build before it runs: a new line in src/main.ts runs at the next start', async () => {
    await builder.build(dir);
    const main = join(dir, 'src', 'main.ts');
    writeFileSync(main, `console.error('build-test marker');\n${readFileSync(main, 'utf8')}`);
    assert.equal(builder.isFresh(dir), false);
    // A bad PORT stops the server right after start: enough to see which code ran.
    const result = await runStart(dir, serverEnv({ PORT: 'abc' }));
    assert.equal(result.code, 2, result.output);
    assert.match(result.output, /rebuilt dist\//);
    assert.match(result.output, /build-test marker/);
    assert.match(result.output, /PORT must be a whole number/);
    assert.equal(builder.isFresh(dir), true);
  });

  it('files read at run time are read from src/, beside the module that reads them', () => {
    const bundle = readFileSync(builder.bundlePath(dir), 'utf8');
    const uses = [...bundle.matchAll(/.{0,60}import\.meta\.\w+/g)].map((match) => match[0]);
    assert.ok(uses.length >= 2, 'the migrations and pay.js are read beside their modules');
    for (const use of uses) assert.match(use, /new URL\("\.\.\/src\/[\w/.-]+\.ts", import\.meta\.url$/, use);
    assert.ok(existsSync(join(dir, 'dist', 'main.js.map')));
  });

  it(`starts and answers ready on ${storageKind} storage (migrations and pay.js found)${storageKind === 'postgres' ? ' without loading PGlite' : ''}`, async () => {
    await builder.build(dir);
    // Every module the process resolves, written to a file by a resolve hook.
    const trace = join(dir, 'modules.txt');
    const hooks = join(dir, 'trace-hooks.mjs');
    writeFileSync(
      hooks,
      "import { appendFileSync } from 'node:fs';\n" +
        'export async function resolve(specifier, context, next) {\n' +
        '  const result = await next(specifier, context);\n' +
        `  appendFileSync(${JSON.stringify(trace)}, result.url + '\\n');\n` +
        '  return result;\n' +
        '}\n',
    );
    const register = join(dir, 'trace-register.mjs');
    // module.register() is deprecated from Node 26 (DEP0205); registerHooks (Node 22.15 and later) runs the
    // same hook in this thread, for require() too.
    writeFileSync(
      register,
      "import * as module from 'node:module';\n" +
        "import { appendFileSync } from 'node:fs';\n" +
        'if (module.registerHooks) {\n' +
        '  module.registerHooks({ resolve(specifier, context, next) {\n' +
        '    const result = next(specifier, context);\n' +
        `    appendFileSync(${JSON.stringify(trace)}, result.url + '\\n');\n` +
        '    return result;\n' +
        '  } });\n' +
        `} else module.register(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    const port = await freePort();
    const storage: Record<string, string> =
      storageKind === 'postgres' ? { DATABASE_URL: process.env.DATABASE_URL! } : { DATA_DIR: join(dir, 'data') };
    const result = await runStart(dir, serverEnv({ ...storage, PORT: String(port) }), {
      nodeArgs: ['--import', pathToFileURL(register).href],
      readyPort: port,
    });
    assert.deepEqual(result.ready, { status: 200, body: { status: 'ready', storage: storageKind } }, result.output);
    const modules = readFileSync(trace, 'utf8');
    assert.match(modules, /\/dist\/main\.js/);
    assert.match(modules, /node_modules\/fastify\//);
    if (storageKind === 'postgres') assert.doesNotMatch(modules, /pglite/i);
    else assert.match(modules, /@electric-sql\/pglite/);
  });
});
