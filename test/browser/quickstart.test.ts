// The README's Quickstart as a reader runs it (issue 19 part 1): a fresh clone of this repository's HEAD,
// the sh blocks of the README's "Quickstart" section run with bash as they are written, in order, in the
// clone, then the printed dashboard link opened in Chromium: signed in, a first password chosen, the dashboard
// showing the paid Test session.
//
// What the test changes, as a reader would by copying: `ak_test_…` becomes the Test API key `npm start`
// printed, `cs_…` and `att_…` the session id and attempt reference of the answers before, and the port 8080
// a free port (PORT is set to it). `npm install` is not run: the clone links this checkout's node_modules
// (an install takes minutes), so its first block, `npm install && npm start`, runs as `npm start`, in the
// background. Storage is the clone's default, an embedded ./.sika, empty: a first run.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { freePort } from '../reliability/process-support.ts';
import { launchBrowser, screenshots, trackedPage } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const START_TIMEOUT_MS = 90_000;
const BLOCK_TIMEOUT_MS = 60_000;

/** The sh blocks of the README section whose heading starts with `heading`, dedented as a reader copies them. */
export function shBlocks(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n## ${heading}`);
  assert.ok(start >= 0, `the README has a "## ${heading}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
    body!
      .split('\n')
      .map((line) => (line.startsWith(indent!) ? line.slice(indent!.length) : line))
      .join('\n')
      .trimEnd(),
  );
}

/** A clean environment for the reader's shell: no storage or URL settings of this test run. */
function readerEnv(port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port) };
  for (const name of [
    'DATABASE_URL',
    'DATA_DIR',
    'BASE_URL',
    'CHECKOUT_URL_HOST',
    'REDIS_URL',
    'LOG_LEVEL',
    'WORKERS',
    'DEMO_MERCHANT',
    'HOST',
    'NODE_OPTIONS',
    'SIKA_API_KEY',
    'SIKA_BASE_URL',
    'SIKA_WEBHOOK_SECRET',
    'SESSION',
    'ATTEMPT',
  ])
    delete env[name];
  return env;
}

describe('the README Quickstart, run as written on a fresh clone', { timeout: 240_000 }, () => {
  let dir: string;
  let clone: string;
  let server: ChildProcess | null = null;
  let browser: Browser | null = null;
  let output = '';

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sika-quickstart-'));
    clone = join(dir, 'sika');
    execFileSync('git', ['clone', '--quiet', ROOT, clone], { stdio: 'pipe' });
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
  });
  after(async () => {
    await browser?.close();
    if (server?.pid && server.exitCode === null) {
      // npm start runs the server under npm and a shell: the whole group goes.
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      process.kill(-server.pid, 'SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      if (server.exitCode === null) process.kill(-server.pid, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('npm start prints a demo merchant; the curl steps pay a Test session; the printed link opens the dashboard showing it paid', async () => {
    const blocks = shBlocks(readFileSync(join(clone, 'README.md'), 'utf8'), 'Quickstart');
    assert.ok(blocks.length >= 5, `the Quickstart has its sh blocks: ${blocks.length}`);
    assert.equal(blocks[0], 'npm install && npm start', 'the Quickstart starts with npm install && npm start');
    const port = await freePort();
    const env = readerEnv(port);

    server = spawn('bash', ['-c', 'npm start'], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!/Dashboard +http:\S+\n[\s\S]*\n={20,}\n/.test(output)) {
      if (server.exitCode !== null) assert.fail(`npm start exited with ${server.exitCode}:\n${output.slice(-2_000)}`);
      if (Date.now() > deadline) assert.fail(`npm start printed no demo merchant in time:\n${output.slice(-2_000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const key = /Test API key +(ak_test_\w+)/.exec(output)?.[1];
    const link = /Dashboard +(http:\/\/\S+)/.exec(output)?.[1];
    assert.ok(key && link, output);
    assert.ok(link.startsWith(`http://127.0.0.1:${port}/dashboard/login/link/`), link);

    // The rest in order, each in bash with the exports of the ones before, as one terminal would have them.
    const copied: Record<string, string> = { 'ak_test_…': key };
    const exports: string[] = [];
    const answers: string[] = [];
    for (const block of blocks.slice(1)) {
      let script = block.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);
      for (const [placeholder, value] of Object.entries(copied)) script = script.replaceAll(placeholder, value);
      const uncopied = script.split('\n').filter((line) => !line.trimStart().startsWith('#') && line.includes('…'));
      assert.deepEqual(uncopied, [], `a value to copy that no answer before gave:\n${script}`);
      let stdout: string;
      try {
        stdout = execFileSync('bash', ['-euo', 'pipefail', '-c', [...exports, script].join('\n')], {
          cwd: clone,
          env,
          encoding: 'utf8',
          timeout: BLOCK_TIMEOUT_MS,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
      } catch (error) {
        const { stdout: out, stderr } = error as { stdout?: string; stderr?: string };
        assert.fail(`this Quickstart block failed:\n${script}\nstdout: ${out}\nstderr: ${stderr}`);
      }
      answers.push(stdout);
      exports.push(...script.split('\n').filter((line) => line.startsWith('export ')));
      // What a reader copies from the answer for the blocks after.
      const session = /"id":"(cs_\w+)"/.exec(stdout)?.[1];
      if (session && !copied['cs_…']) copied['cs_…'] = session;
      const attempt = /"attempt_reference":"(att_\w+)"/.exec(stdout)?.[1];
      if (attempt && !copied['att_…']) copied['att_…'] = attempt;
    }
    const sessionId = copied['cs_…'];
    assert.ok(sessionId && copied['att_…'], `the answers gave a session and an attempt: ${answers.join('\n')}`);
    // The last read of the session says it is paid.
    const reads = answers
      .map((answer) => (answer.trim().startsWith('{') ? (JSON.parse(answer) as Record<string, unknown>) : null))
      .filter((answer) => answer?.id === sessionId);
    assert.equal(reads.at(-1)?.status, 'success', `the session read back: ${JSON.stringify(reads.at(-1))}`);
    assert.equal(reads.at(-1)?.amount_minor, 50000);

    browser = await launchBrowser();
    const tracked = await trackedPage(browser);
    try {
      const { page } = tracked;
      await page.goto(link);
      // Signed in, offered a first password (the demo merchant has none): chosen here, then the dashboard.
      assert.equal(new URL(page.url()).pathname, '/dashboard/password/new', 'the link signs in and offers a password');
      await page.getByRole('heading', { name: 'You are signed in' }).waitFor({ timeout: 10_000 });
      await page.getByLabel('Password (at least 10 characters)').fill('quickstart password');
      await page.getByLabel('Password again').fill('quickstart password');
      await page.getByRole('button', { name: 'Save password' }).click();
      await page.waitForURL((url) => url.pathname === '/dashboard');
      await page.getByRole('heading', { name: 'Demo Shop' }).waitFor({ timeout: 10_000 });
      const row = page.getByRole('row').filter({ hasText: sessionId });
      await row.waitFor({ timeout: 10_000 });
      assert.match(await row.innerText(), /INV-1001[\s\S]*GHS 500\.00[\s\S]*success/i);
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await screenshots(page, 'quickstart-dashboard');
      // The link worked once.
      const again = await page.goto(link);
      assert.equal(again?.status(), 410);
      assert.deepEqual(tracked.offsite(), []);
      assert.deepEqual(tracked.pageErrors, []);
    } finally {
      await tracked.close();
    }
  });
});
