// `sika --help` and every command's (issue 19 part 6): each command and group named in the usage answers
// --help and -h with its own usage and exits 0; a mistyped option, command or subcommand exits 2 with the
// mistake, a guess when one is close, and the help that names the fix. The walk runs the CLI's run() in
// this process (the same code bin/sika.mjs runs); a few cases run the real command.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run, USAGE } from '../../src/cli/main.ts';
import { cliActor, type CliIo } from '../../src/cli/common.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function runHere(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    config: () => assert.fail(`${argv.join(' ')} read the configuration`),
    deployment: () => assert.fail(`${argv.join(' ')} read the deployment's settings`),
    withDb: () => assert.fail(`${argv.join(' ')} opened storage`),
    stdin: async () => assert.fail(`${argv.join(' ')} read standard input`),
    stdinIsTerminal: false,
    cwd: ROOT,
    actor: cliActor('test', 'localhost'),
  };
  const code = await run(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/sika.mjs', ...args],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'silent' }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

const GROUPS = ['merchant', 'events', 'user', 'operator', 'payouts', 'keys', 'webhooks', 'statements'];
/** The commands the usage lists ("  merchant create --name ...", "  migrate", "  listen --forward-to ..."): their words. */
const listed = USAGE.split('\n')
  .filter((line) => /^ {2}[a-z]/.test(line))
  .map((line) =>
    line
      .trim()
      .split(' ')
      .slice(0, GROUPS.includes(line.trim().split(' ')[0]!) ? 2 : 1),
  );

describe('sika --help on every command', () => {
  it('the usage lists every command (the walk below covers them all)', () => {
    const names = listed.map((words) => words.join(' '));
    for (const expected of [
      'merchant create',
      'merchant activate',
      'merchant suspend',
      'merchant reinstate',
      'migrate',
      'events list',
      'events show',
      'events replay',
      'user set-password',
      'user reset-2fa',
      'user sign-in-link',
      'operator create',
      'payouts settings',
      'keys list',
      'keys create',
      'keys revoke',
      'webhooks list',
      'webhooks rotate-secret',
      'statements import',
      'listen',
      'trigger',
    ]) {
      assert.ok(names.includes(expected), `${expected} among ${names.join(', ')}`);
    }
  });

  it('every listed command answers --help and -h with its usage and exit 0, touching no storage', async () => {
    for (const words of listed) {
      for (const flag of ['--help', '-h']) {
        const res = await runHere([...words, flag]);
        assert.equal(res.code, 0, `${words.join(' ')} ${flag}: ${res.stderr}`);
        assert.equal(res.stderr, '');
        assert.match(
          res.stdout,
          new RegExp(`^usage: sika ${words.join(' ')}( |$)`, 'm'),
          `${words.join(' ')} ${flag}:\n${res.stdout}`,
        );
        assert.ok(res.stdout.split('\n').length >= 3, `${words.join(' ')} ${flag} explains more than its usage line`);
      }
      // --help wins over anything else given.
      const mixed = await runHere([...words, '--no-such-option', '--help']);
      assert.equal(mixed.code, 0, `${words.join(' ')} --no-such-option --help: ${mixed.stderr}`);
    }
  });

  it('every group answers --help with its commands; sika, sika --help and sika help COMMAND too', async () => {
    for (const group of GROUPS) {
      for (const argv of [[group], [group, '--help'], [group, '-h'], ['help', group]]) {
        const res = await runHere(argv);
        assert.equal(res.code, 0, `${argv.join(' ')}: ${res.stderr}`);
        assert.match(res.stdout, new RegExp(`usage: sika ${group}`), argv.join(' '));
      }
    }
    for (const argv of [[], ['--help'], ['-h'], ['help']]) {
      const res = await runHere(argv);
      assert.equal(res.code, 0);
      assert.equal(res.stdout, USAGE);
    }
    const helpOf = await runHere(['help', 'events', 'replay']);
    assert.equal(helpOf.code, 0);
    assert.match(helpOf.stdout, /^usage: sika events replay EVENT_ID \| --failed-since ISO_TIME/);
    assert.match(helpOf.stdout, /--failed-since ISO_TIME +every event whose delivery failed since then/);
  });

  it('a mistyped option, command or subcommand exits 2 naming the mistake, a close guess and the help to read', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['merchant', 'create', '--name', 'A', '--email', 'a@example.com', '--pasword', 'x'],
        /^sika: unknown option --pasword for sika merchant create; did you mean --password\? See: sika merchant create --help$/,
      ],
      [
        ['merchant', 'crete'],
        /^sika: unknown command: sika merchant crete; did you mean sika merchant create\? See: sika merchant --help$/,
      ],
      [['merchnt', 'create'], /^sika: unknown command: merchnt; did you mean sika merchant\? See: sika --help$/],
      [['events', 'list', '--limt', '5'], /unknown option --limt for sika events list; did you mean --limit\?/],
      [['keys', 'list', '--zzz'], /^sika: unknown option --zzz for sika keys list\. See: sika keys list --help$/],
      [
        ['merchant', 'create', '--name'],
        /^sika: option --name of sika merchant create needs a value \(--name NAME\)\. See: sika merchant create --help$/,
      ],
      [
        ['events', 'show', 'evt_1', 'evt_2'],
        /^sika: sika events show takes 1 argument; "evt_2" is one too many\. See: sika events show --help$/,
      ],
      [
        ['migrate', 'now'],
        /^sika: sika migrate takes no argument "now"; options start with --\. See: sika migrate --help$/,
      ],
      [
        ['merchant', 'create', '--name', 'A'],
        /^sika: merchant create needs --name and --email\nSee: sika merchant create --help$/,
      ],
      [
        ['keys', 'list', '--merchant', 'not-a-uuid'],
        /^sika: keys list needs --merchant MERCHANT_ID \(a uuid\)\nSee: sika keys list --help$/,
      ],
    ];
    for (const [argv, expected] of cases) {
      const res = await runHere(argv);
      assert.equal(res.code, 2, `${argv.join(' ')}: ${res.stderr}`);
      assert.equal(res.stdout, '', argv.join(' '));
      assert.match(res.stderr, expected, argv.join(' '));
    }
  });

  it('the real command: sika merchant create --help exits 0 with its options; a typo exits 2 with the fix', async () => {
    const help = await runCli(['merchant', 'create', '--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^usage: sika merchant create --name NAME --email EMAIL \[--password PW\]/);
    assert.match(help.stdout, /--password PW +the owner's dashboard password/);
    const typo = await runCli(['merchant', 'create', '--pasword', 'x']);
    assert.equal(typo.code, 2);
    assert.equal(typo.stdout, '');
    assert.match(typo.stderr, /did you mean --password\? See: sika merchant create --help/);
    const listenHelp = await runCli(['listen', '--help']);
    assert.equal(listenHelp.code, 0, listenHelp.stderr);
    assert.match(listenHelp.stdout, /^usage: sika listen --forward-to URL/);
  });
});
