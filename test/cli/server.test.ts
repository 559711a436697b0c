// `sika` while the server runs (issue 19 part 1): embedded storage is one process's, so the server listens on
// DATA_DIR/cli.sock (mode 0600) and runs the commands the CLI sends there. With a real server child process on
// a temp data dir: merchant create, keys list, events list and user set-password (the password read by the CLI,
// then sent) work and print what they print offline; a server killed without cleaning up leaves a socket the
// CLI sees past (it runs the command itself) and the next server replaces. On PostgreSQL nothing is sent:
// the CLI and the server share the database. The CLI takes links and the webhook target rule from what the
// server recorded at its start, not from its own shell.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { storageKind } from '../support/helpers.ts';
import { freePort, reliabilityStorage, ROOT, type Storage } from '../reliability/process-support.ts';

const CLI_TIMEOUT_MS = 90_000;
const PASSWORD = 'sent through the server';

describe(`sika while the server runs (${storageKind})`, { timeout: 300_000 }, () => {
  let storage: Storage;
  let env: NodeJS.ProcessEnv;
  let server: { child: ChildProcess; base: string } | null = null;

  function runCli(args: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        [join(ROOT, 'bin/sika.mjs'), ...args],
        { cwd: ROOT, env, timeout: CLI_TIMEOUT_MS },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        },
      );
      child.stdin!.end(stdin);
    });
  }

  async function startServer(): Promise<{ child: ChildProcess; base: string }> {
    const port = await freePort();
    const child = spawn(process.execPath, ['scripts/start.mjs'], {
      cwd: ROOT,
      env: { ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const deadline = Date.now() + 60_000;
    while (!output.includes('"msg":"Sika is ready"')) {
      if (child.exitCode !== null || Date.now() > deadline)
        assert.fail(`the server did not start: ${output.slice(0, 800)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { child, base: `http://127.0.0.1:${port}` };
  }

  async function stopServer(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (!server) return;
    const exited = once(server.child, 'exit');
    server.child.kill(signal);
    await exited;
    server = null;
  }

  before(async () => {
    storage = await reliabilityStorage('cli-server', undefined, { seeded: true });
    env = {
      ...process.env,
      ...storage.env(),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      REDIS_URL: '',
      WORKERS: 'off',
      DEMO_MERCHANT: 'off',
      BASE_URL: 'http://sika.cli.test',
      CHECKOUT_URL_HOST: '',
    };
    if (!storage.databaseUrl) delete env.DATABASE_URL;
  });
  after(async () => {
    await stopServer('SIGKILL');
    await storage.drop();
  });

  const socketPath = () => (storage.dataDir ? join(storage.dataDir, 'cli.sock') : null);

  it('merchant create, keys list, events list and user set-password work while the server runs, and print what they print offline', async () => {
    server = await startServer();
    if (storage.dataDir) {
      assert.ok(existsSync(socketPath()!), 'the server listens on DATA_DIR/cli.sock');
      assert.equal(statSync(socketPath()!).mode & 0o777, 0o600, 'only its user may use it');
    }
    const email = `running-${randomUUID()}@example.com`;
    const created = await runCli(['merchant', 'create', '--name', 'Made While Running', '--email', email, '--json']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stderr, '');
    const merchant = JSON.parse(created.stdout) as { merchant_id: string; test_api_key: string };
    assert.deepEqual(Object.keys(merchant).sort(), [
      'live_api_key',
      'live_webhook_secret',
      'merchant_id',
      'test_api_key',
      'test_webhook_secret',
    ]);

    // The key works on the running server at once, and makes an event to list.
    const session = await fetch(`${server.base}/api/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${merchant.test_api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount_minor: 2500, invoice_ref: 'INV-CLI-RUNNING' }),
    });
    assert.equal(session.status, 201);
    const started = await fetch(
      `${server.base}/api/v1/checkout/sessions/${((await session.json()) as { id: string }).id}/provider-attempts`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rail: 'card', amount_minor: 2500 }),
      },
    );
    assert.equal(started.status, 201, await started.clone().text());
    const reference = ((await started.json()) as { attempt_reference: string }).attempt_reference;
    const paid = await fetch(`${server.base}/api/v1/test/payment-attempts/${reference}/simulate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${merchant.test_api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'paid' }),
    });
    assert.equal(paid.status, 200, await paid.clone().text());

    const keysArgs = ['keys', 'list', '--merchant', merchant.merchant_id];
    const eventsArgs = ['events', 'list', '--merchant', merchant.merchant_id];
    const running = {
      keys: await runCli(keysArgs),
      keysJson: await runCli([...keysArgs, '--json']),
      events: await runCli(eventsArgs),
      eventsJson: await runCli([...eventsArgs, '--json']),
    };
    for (const [what, res] of Object.entries(running)) assert.equal(res.code, 0, `${what}: ${res.stderr}`);
    assert.equal((JSON.parse(running.keysJson.stdout) as unknown[]).length, 2);
    assert.match(running.events.stdout, /checkout\.session\.completed/);

    // The password is read here (standard input), then sent: the server sets it.
    const set = await runCli(['user', 'set-password', '--email', email, '--password-stdin'], `${PASSWORD}\n`);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /^password set for running-.+; their sessions are signed out\n$/);
    // Mistakes are answered as offline: exit 2 and the fix.
    const short = await runCli(['user', 'set-password', '--email', email, '--password-stdin'], 'short\n');
    assert.equal(short.code, 2);
    assert.match(short.stderr, /at least 10 characters/);
    const unknown = await runCli(['keys', 'list', '--merchant', randomUUID()]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^sika: merchant .+ not found\n$/);

    // The password signs in on the running server's dashboard.
    const form = await fetch(`${server.base}/dashboard/login`);
    const csrf = /sika_login_csrf=([^;]+)/.exec(form.headers.getSetCookie().join(';'))![1]!;
    const login = await fetch(`${server.base}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: `sika_login_csrf=${csrf}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, email, password: PASSWORD }).toString(),
    });
    assert.equal(login.status, 303, 'the password set through the server signs in');
    assert.equal(login.headers.get('location'), '/dashboard');

    await stopServer();
    if (storage.dataDir) assert.ok(!existsSync(socketPath()!), 'the socket is removed when the server stops');
    const offline = {
      keys: await runCli(keysArgs),
      keysJson: await runCli([...keysArgs, '--json']),
      events: await runCli(eventsArgs),
      eventsJson: await runCli([...eventsArgs, '--json']),
    };
    for (const what of Object.keys(running) as (keyof typeof running)[]) {
      assert.equal(offline[what].code, 0, `${what} offline: ${offline[what].stderr}`);
      assert.equal(
        offline[what].stdout,
        running[what].stdout,
        `${what}: the same output offline as through the server`,
      );
    }
  });

  it('a server killed without cleaning up: the CLI runs the command itself, the next server replaces the stale socket', {
    skip: storageKind === 'postgres' ? 'no socket on PostgreSQL' : false,
  }, async () => {
    server = await startServer();
    await stopServer('SIGKILL');
    assert.ok(existsSync(socketPath()!), 'the killed server left its socket');
    const offline = await runCli([
      'merchant',
      'create',
      '--name',
      'After A Crash',
      '--email',
      `crash-${randomUUID()}@example.com`,
      '--json',
    ]);
    assert.equal(offline.code, 0, offline.stderr);
    server = await startServer();
    const through = await runCli([
      'merchant',
      'create',
      '--name',
      'Next Server',
      '--email',
      `next-${randomUUID()}@example.com`,
      '--json',
    ]);
    assert.equal(through.code, 0, through.stderr);
    const migrateRes = await runCli(['migrate']);
    assert.equal(migrateRes.code, 0, migrateRes.stderr);
    assert.match(migrateRes.stdout, /nothing to apply/);
    await stopServer();
  });
});

// Issue 29: what the CLI's links and webhook target rule come from (the server records its settings at start).
describe(`sika takes the deployment's settings from storage (${storageKind})`, { timeout: 600_000 }, () => {
  it("takes links and the webhook target rule from the deployment: its shell's own guess only before any server started, with a warning", async () => {
    // Storage of its own: no server has ever started on it.
    const fresh = await reliabilityStorage('cli-deployment', undefined, { seeded: true });
    // The CLI's shell knows nothing of the deployment: no BASE_URL, no PORT, so on its own it would guess
    // http://127.0.0.1:8080 and, that being loopback, allow private webhook targets.
    const shell: NodeJS.ProcessEnv = { ...process.env, ...fresh.env(), LOG_LEVEL: 'silent', REDIS_URL: '' };
    for (const name of ['BASE_URL', 'PORT', 'HOST', 'CHECKOUT_URL_HOST', 'WEBHOOK_ALLOW_PRIVATE_TARGETS'])
      delete shell[name];
    if (!fresh.databaseUrl) delete shell.DATABASE_URL;
    const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [join(ROOT, 'bin/sika.mjs'), ...args],
          { cwd: ROOT, env: { ...shell, ...extra }, timeout: CLI_TIMEOUT_MS },
          (error, stdout, stderr) => {
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
          },
        );
      });
    let deployed: ChildProcess | null = null;
    try {
      const email = `deployment-${randomUUID()}@example.com`;
      const before = await cli(['merchant', 'create', '--name', 'Before Any Start', '--email', email, '--json']);
      assert.equal(before.code, 0, before.stderr);
      assert.match(
        before.stderr,
        /^warning: no Sika server has started on this storage yet, so this command uses this shell's settings: BASE_URL http:\/\/127\.0\.0\.1:8080, .*private webhook targets allowed/,
      );
      const guessed = await cli(['user', 'sign-in-link', '--email', email]);
      assert.equal(guessed.code, 0, guessed.stderr);
      assert.match(guessed.stdout, /^http:\/\/127\.0\.0\.1:8080\/dashboard\/login\/link\//);
      assert.match(guessed.stderr, /no Sika server has started on this storage yet/);

      // A hosted deployment starts once on this storage: a public BASE_URL, private targets refused (its default).
      const port = await freePort();
      const serverEnv: NodeJS.ProcessEnv = {
        ...shell,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        WORKERS: 'off',
        DEMO_MERCHANT: 'off',
        BASE_URL: 'https://pay.deployment.test',
      };
      deployed = spawn(process.execPath, ['scripts/start.mjs'], {
        cwd: ROOT,
        env: serverEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      deployed.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      deployed.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const deadline = Date.now() + 60_000;
      while (!output.includes('"msg":"Sika is ready"')) {
        if (deployed.exitCode !== null || Date.now() > deadline)
          assert.fail(`the server did not start: ${output.slice(0, 800)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const checkWhileRunning = async () => {
        const link = await cli(['user', 'sign-in-link', '--email', email, '--json']);
        assert.equal(link.code, 0, link.stderr);
        assert.equal(link.stderr, '', 'no warning once a server has started');
        assert.match(
          (JSON.parse(link.stdout) as { url: string }).url,
          /^https:\/\/pay\.deployment\.test\/dashboard\/login\/link\/[\w-]+$/,
        );
        // The shell's loopback guess would allow this endpoint; the deployment never delivers to it.
        const privateTarget = await cli([
          'merchant',
          'create',
          '--name',
          'Private Hook',
          '--email',
          `private-${randomUUID()}@example.com`,
          '--webhook-url',
          'http://127.0.0.1:3000/hooks',
        ]);
        assert.equal(privateTarget.code, 1, privateTarget.stdout);
        assert.match(privateTarget.stderr, /^sika: webhook URL .*private/);
      };
      // Embedded: sent to the server (its own settings); PostgreSQL: read from the shared database.
      await checkWhileRunning();
      const exited = once(deployed, 'exit');
      deployed.kill('SIGTERM');
      await exited;
      // Stopped: the CLI opens the storage itself and reads what the server recorded at its start.
      await checkWhileRunning();
      // Even a shell that says otherwise: the deployment is what the server runs with.
      const otherShell = await cli(['user', 'sign-in-link', '--email', email], { BASE_URL: 'http://127.0.0.1:9999' });
      assert.match(otherShell.stdout, /^https:\/\/pay\.deployment\.test\/dashboard\/login\/link\//);
    } finally {
      if (deployed && deployed.exitCode === null) deployed.kill('SIGKILL');
      await fresh.drop();
    }
  });
});
