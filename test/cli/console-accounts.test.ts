// `sika user set-password` and `sika user reset-2fa` as a user runs them (issue 14 finding 5): the CLI as a
// child process on the configured storage (an embedded data dir, or DATABASE_URL), then the dashboard on the
// same storage. A Quickstart merchant made without --password can sign in afterwards; the password is read
// from standard input or asked twice on a terminal without echo; sessions are signed out and the sign-in
// backoff is cleared.
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { confirmTotpEnrolment, pendingTotpSecret } from '../../src/accounts/console-accounts.ts';
import { accountKey, PAIR_BACKOFF } from '../../src/accounts/sign-in-throttle.ts';
import { totpCode } from '../../src/accounts/totp.ts';
import { loadConfig } from '../../src/config/index.ts';
import { openDb, type Db } from '../../src/db/index.ts';
import { buildApp } from '../../src/app.ts';
import { CLI_USER_AT_HOST } from '../support/cli-io.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import { seededDataDir } from '../support/embedded-template.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI_TIMEOUT_MS = 90_000;
const PASSWORD = 'set from the command line';

function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['bin/sika.mjs', ...args],
      { cwd: ROOT, env, timeout: CLI_TIMEOUT_MS },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
    if (stdin !== undefined) child.stdin!.end(stdin);
    else child.stdin!.end();
  });
}

// Node has no pseudo-terminal of its own: the terminal tests need util-linux `script` (BSD's takes other
// flags), and skip without it so `npm test` needs nothing but Node.
const NO_TERMINAL =
  spawnSync('script', ['-qec', 'true', '/dev/null'], { stdio: 'ignore', timeout: 10_000 }).status === 0
    ? false
    : 'no util-linux `script` to give the CLI a terminal';

/** Runs the CLI on a terminal (util-linux `script` gives it one) and types each answer once its prompt shows; everything the terminal showed. */
function runCliOnTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  answers: [prompt: string, typed: string][],
): Promise<{ code: number; screen: string }> {
  return new Promise((resolve, reject) => {
    const command = [process.execPath, 'bin/sika.mjs', ...args]
      .map((part) => `'${part.replace(/'/g, "'\\''")}'`)
      .join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    let answeredUpTo = 0;
    const pending = [...answers];
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`no exit in time; the terminal showed: ${screen}`));
    }, CLI_TIMEOUT_MS);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      screen += chunk;
      // Type only after the prompt shows, so nothing is typed while the terminal still echoes.
      while (pending[0] && screen.indexOf(pending[0][0], answeredUpTo) !== -1) {
        answeredUpTo = screen.indexOf(pending[0][0], answeredUpTo) + pending[0][0].length;
        child.stdin.write(`${pending.shift()![1]}\r`);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, screen });
    });
  });
}

describe(`sika user set-password and reset-2fa (${storageKind})`, () => {
  let dataDir: string | null = null;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dataDir = process.env.DATABASE_URL ? null : await seededDataDir('sika-user-cli-');
    env = { ...process.env, LOG_LEVEL: 'silent', ...(dataDir ? { DATA_DIR: dataDir, DATABASE_URL: '' } : {}) };
  });
  after(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** The dashboard on the CLI's storage, open only while fn runs (one process at a time holds an embedded data dir). */
  async function withApp<T>(fn: (t: TestContext) => Promise<T>): Promise<T> {
    const db: Db = await openDb({ databaseUrl: process.env.DATABASE_URL || null, dataDir });
    const config = loadConfig({
      ...process.env,
      LOG_LEVEL: 'silent',
      WORKERS: 'off',
      BASE_URL: 'http://sika.test',
      REDIS_URL: '',
    });
    const app = await buildApp({ config, db, logger: false });
    await app.ready();
    try {
      return await fn({ app, db, config } as TestContext);
    } finally {
      await app.close();
      await db.close();
    }
  }

  const quickstartMerchant = async () => {
    const email = `quickstart-${randomUUID()}@example.com`;
    const created = await runCli(['merchant', 'create', '--name', 'Quickstart Ltd', '--email', email, '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    return email;
  };

  it('a merchant created without --password gets one from standard input and signs in; its sessions are signed out, its trusted devices revoked and its backoff cleared by the next set (audited)', async () => {
    const email = await quickstartMerchant();
    const where = `2001:db8::${randomUUID().slice(0, 4)}`;
    const stale = await withApp(async (t) => {
      const res = await new ConsoleClient(t, '/dashboard', where).signIn(email, PASSWORD);
      assert.equal(res.statusCode, 401, 'no password: no sign-in');
      return null;
    });
    assert.equal(stale, null);

    const set = await runCli(
      ['user', 'set-password', '--email', email.toUpperCase(), '--password-stdin'],
      env,
      `${PASSWORD}\n`,
    );
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /password set for quickstart-.+; their sessions are signed out/);
    assert.ok(!set.stdout.includes(PASSWORD) && !set.stderr.includes(PASSWORD));

    const session = await withApp(async (t) => {
      const client = await new ConsoleClient(t, '/dashboard', where).signedIn(email, PASSWORD);
      // Then a stranger at the same address (another browser) backs it off.
      const stranger = new ConsoleClient(t, '/dashboard', where);
      for (let i = 0; i < PAIR_BACKOFF.failuresFree; i++) await stranger.signIn(email, 'wrong password');
      assert.equal((await stranger.signIn(email, PASSWORD)).statusCode, 429);
      assert.ok(client.device, 'the browser that signed in is a trusted device');
      assert.equal(
        (await t.db.query('SELECT 1 FROM trusted_devices WHERE account_key = $1', [accountKey('merchant', email)]))
          .length,
        1,
      );
      return client.session!;
    });

    const reset = await runCli(
      ['user', 'set-password', '--email', email, '--password-stdin'],
      env,
      `${PASSWORD} 2\r\n`,
    );
    assert.equal(reset.code, 0, reset.stderr);
    await withApp(async (t) => {
      const old = await t.app.inject({
        method: 'GET',
        url: '/dashboard',
        headers: { cookie: `sika_dashboard=${session}` },
      });
      assert.equal(old.statusCode, 303, 'the earlier session is signed out');
      assert.equal(
        (await t.db.query('SELECT 1 FROM trusted_devices WHERE account_key = $1', [accountKey('merchant', email)]))
          .length,
        0,
        'its trusted devices are revoked',
      );
      await new ConsoleClient(t, '/dashboard', where).signedIn(email, `${PASSWORD} 2`);
      const audit = await t.db.query<{ action: string; actor_id: string }>(
        "SELECT action, actor_id FROM audit_log WHERE action = 'user.password_set' AND object_id = (SELECT id::text FROM users WHERE email = $1)",
        [email],
      );
      assert.deepEqual(
        audit.map((row) => [row.action, row.actor_id]),
        [
          ['user.password_set', CLI_USER_AT_HOST],
          ['user.password_set', CLI_USER_AT_HOST],
        ],
      );
    });
  });

  it('on a terminal it asks twice without echoing the password', { skip: NO_TERMINAL }, async () => {
    const email = await quickstartMerchant();
    const typed = 'typed at a terminal 42';
    const run = await runCliOnTerminal(['user', 'set-password', '--email', email], env, [
      ['New password:', typed],
      ['Again:', typed],
    ]);
    assert.equal(run.code, 0, run.screen);
    assert.match(run.screen, /New password:/);
    assert.match(run.screen, /Again:/);
    assert.ok(!run.screen.includes(typed), `the password was echoed: ${JSON.stringify(run.screen)}`);
    await withApp(async (t) => {
      await new ConsoleClient(t, '/dashboard', `2001:db8::${randomUUID().slice(0, 4)}`).signedIn(email, typed);
    });
  });

  it('refuses a short password, an unknown email and a missing terminal, each with a message that names the fix', async () => {
    const email = await quickstartMerchant();
    const short = await runCli(['user', 'set-password', '--email', email, '--password-stdin'], env, 'short\n');
    assert.equal(short.code, 2);
    assert.match(short.stderr, /at least 10 characters/);
    const unknown = await runCli(
      ['user', 'set-password', '--email', `nobody-${randomUUID()}@example.com`, '--password-stdin'],
      env,
      `${PASSWORD}\n`,
    );
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no user with email nobody-/);
    const noTerminal = await runCli(['user', 'set-password', '--email', email], env, '');
    assert.equal(noTerminal.code, 2);
    assert.match(noTerminal.stderr, /no terminal to ask for the password on: pipe it in with --password-stdin/);
    const noEmail = await runCli(['user', 'set-password', '--password-stdin'], env, `${PASSWORD}\n`);
    assert.equal(noEmail.code, 2);
    assert.match(noEmail.stderr, /needs --email/);
  });

  it('on a terminal it refuses two passwords that differ', { skip: NO_TERMINAL }, async () => {
    const email = await quickstartMerchant();
    const differ = await runCliOnTerminal(['user', 'set-password', '--email', email], env, [
      ['New password:', PASSWORD],
      ['Again:', `${PASSWORD}!`],
    ]);
    assert.equal(differ.code, 2);
    assert.match(differ.screen, /the two passwords differ/);
  });

  it('--operator sets an operator password for /ops', async () => {
    const email = `operator-${randomUUID()}@example.com`;
    const created = await runCli(
      ['operator', 'create', '--email', email, '--password', 'first operator password'],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const set = await runCli(
      ['user', 'set-password', '--operator', '--email', email, '--password-stdin'],
      env,
      `${PASSWORD}\n`,
    );
    assert.equal(set.code, 0, set.stderr);
    await withApp(async (t) => {
      await new ConsoleClient(t, '/ops', `2001:db8::${randomUUID().slice(0, 4)}`).signedIn(email, PASSWORD);
      assert.equal(
        (
          await new ConsoleClient(t, '/ops', `2001:db8::${randomUUID().slice(0, 4)}`).signIn(
            email,
            'first operator password',
          )
        ).statusCode,
        401,
      );
    });
  });

  it('reset-2fa turns off a lost second factor and signs the user out; sign-in then needs only the password', async () => {
    const email = await quickstartMerchant();
    assert.equal((await runCli(['user', 'set-password', '--email', email, '--password-stdin'], env, PASSWORD)).code, 0);
    await withApp(async (t) => {
      const [user] = await t.db.query<{ id: string; merchant_id: string }>(
        'SELECT id, merchant_id FROM users WHERE email = $1',
        [email],
      );
      const secret = await pendingTotpSecret(t.db, user!.id);
      const confirmed = await confirmTotpEnrolment(
        t.db,
        {
          kind: 'merchant',
          accountId: user!.id,
          email,
          merchantId: user!.merchant_id,
          tokenHash: 'none',
          address: '2001:db8::1',
        },
        totpCode(secret),
      );
      assert.ok(confirmed.ok);
      assert.equal(
        (await new ConsoleClient(t, '/dashboard', `2001:db8::${randomUUID().slice(0, 4)}`).signIn(email, PASSWORD))
          .headers.location,
        '/dashboard/login/code',
      );
    });
    const reset = await runCli(['user', 'reset-2fa', '--email', email], env);
    assert.equal(reset.code, 0, reset.stderr);
    assert.match(reset.stdout, /two-factor authentication is off for/);
    await withApp(async (t) => {
      assert.equal(
        (await t.db.query('SELECT 1 FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1', [email]))
          .length,
        0,
        'signed out',
      );
      await new ConsoleClient(t, '/dashboard', `2001:db8::${randomUUID().slice(0, 4)}`).signedIn(email, PASSWORD);
      const audit = await t.db.query<{ action: string }>(
        'SELECT action FROM audit_log WHERE object_id = (SELECT id::text FROM users WHERE email = $1) ORDER BY id',
        [email],
      );
      assert.deepEqual(
        audit.map((row) => row.action),
        ['user.password_set', 'user.2fa_enrol', 'user.2fa_disable'],
      );
    });
  });
});
