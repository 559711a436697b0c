// The sika command. Works against the configured storage (DATABASE_URL, else DATA_DIR); when a running
// server holds the embedded data dir, a command is sent to that server and run there on its storage
// (src/cli/forward.ts). Every command and group answers --help; a mistake names its fix. The commands
// themselves are commands.ts (storage), statements.ts, listen.ts and trigger.ts (a running server's API).
import { ConfigError, loadConfig } from '../config/index.ts';
import { openDb } from '../db/index.ts';
import { DataDirInUseError } from '../db/embedded.ts';
import { SikaError } from '../lib/errors.ts';
import { COMMANDS, readNewPassword } from './commands.ts';
import {
  cliActor,
  closest,
  commandHelp,
  localCliUser,
  parseCommand,
  UsageError,
  type CliIo,
  type CommandSpec,
} from './common.ts';
import { storedDeploymentSettings } from './deployment.ts';
import { forwardCommand, runningServerSocket } from './forward.ts';
import { LISTEN_HELP, listenCommand } from './listen.ts';
import { TRIGGER_HELP, triggerCommand } from './trigger.ts';

export { COMMANDS };

/** Commands that never touch storage: they call a running server's API, so they are never forwarded. */
const API_COMMANDS: Record<
  string,
  { help: string; synopsis: string; summary: string; run: (args: string[]) => Promise<void> }
> = {
  listen: {
    help: LISTEN_HELP,
    synopsis: '--forward-to URL [--events TYPE,...] [--secret whsec_…] [--api-key KEY] [--base-url URL]',
    summary:
      "Streams a Test key's events from a running server to a local URL, signed as webhooks (sika listen --help).",
    run: listenCommand,
  },
  trigger: {
    help: TRIGGER_HELP,
    synopsis: 'EVENT [--override FIELD=VALUE ...] [--api-key KEY] [--base-url URL]',
    summary: 'Makes real Test objects through the API so that the event happens (sika trigger --help lists them).',
    run: triggerCommand,
  },
};

const GROUPS = [...new Set(COMMANDS.map((c) => c.name.split(' ')[0]!))];

export const USAGE = `usage: sika <command> [options]

commands:
${[
  ...COMMANDS.map((c) => `  ${c.name}${c.synopsis ? ` ${c.synopsis}` : ''}\n      ${c.summary}`),
  ...Object.entries(API_COMMANDS).map(([name, c]) => `  ${name} ${c.synopsis}\n      ${c.summary}`),
].join('\n')}

Every command answers --help (sika merchant create --help).

Storage: PostgreSQL when DATABASE_URL is set, else the embedded data dir DATA_DIR (default ./.sika), which
one process holds at a time: while the server runs, commands are sent to it and run there.`;

function groupHelp(group: string): string {
  const members = COMMANDS.filter((c) => c.name.split(' ')[0] === group);
  if (members.length === 1) return commandHelp(members[0]!);
  return `usage: sika ${group} <command> [options]\n\ncommands:\n${members.map((c) => `  ${c.name}${c.synopsis ? ` ${c.synopsis}` : ''}\n      ${c.summary}`).join('\n')}\n\nsika ${group} <command> --help for its options.`;
}

const isHelp = (word: string | undefined) => word === '--help' || word === '-h' || word === 'help';

/** The command argv names, and the arguments after its words; null for a help request handled here. */
function findCommand(argv: string[], io: CliIo): { spec: CommandSpec; args: string[] } | null {
  const [first, second] = argv;
  if (first === undefined || isHelp(first)) {
    // sika help merchant create: the same as sika merchant create --help
    if (first === 'help' && argv.length > 1) return findCommand([...argv.slice(1), '--help'], io);
    io.out(USAGE);
    return null;
  }
  const single = COMMANDS.find((c) => c.name === first);
  if (single) return { spec: single, args: argv.slice(1) };
  if (!GROUPS.includes(first)) {
    const guess = closest(first, [...GROUPS, ...Object.keys(API_COMMANDS)]);
    throw new UsageError(
      `unknown command: ${first}${guess ? `; did you mean sika ${guess}?` : ''} See: sika --help`,
      '',
    );
  }
  if (second === undefined || isHelp(second)) {
    io.out(groupHelp(first));
    return null;
  }
  const spec = COMMANDS.find((c) => c.name === `${first} ${second}`);
  if (!spec) {
    const subs = COMMANDS.filter((c) => c.name.startsWith(`${first} `)).map((c) => c.name.slice(first.length + 1));
    const guess = closest(second, subs);
    throw new UsageError(
      `unknown command: sika ${first} ${second}${guess ? `; did you mean sika ${first} ${guess}?` : ''} See: sika ${first} --help`,
      first,
    );
  }
  return { spec, args: argv.slice(2) };
}

/** Runs one command with its output and storage from io; the exit code (0 done, 1 failed, 2 used wrongly). */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  let current: string | null = null;
  try {
    const api = command === undefined ? undefined : API_COMMANDS[command];
    if (api) {
      if (rest.some(isHelp)) io.out(api.help);
      else await api.run(rest);
      return 0;
    }
    const found = findCommand(argv, io);
    if (!found) return 0;
    current = found.spec.name;
    const parsed = parseCommand(found.spec, found.args);
    if (!parsed) {
      io.out(commandHelp(found.spec));
      return 0;
    }
    await found.spec.run(parsed.values, parsed.positionals, io);
    return 0;
  } catch (error) {
    const parseError = error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
    if (error instanceof UsageError || parseError) {
      const where =
        error instanceof UsageError ? (error.command ?? current) : command && API_COMMANDS[command] ? command : null;
      const message = error.message.replace(/\.$/, '');
      io.err(
        `sika: ${message}${where !== null && !message.includes('See: sika') ? `\nSee: sika ${where ? `${where} ` : ''}--help` : ''}`,
      );
      return 2;
    }
    if (error instanceof DataDirInUseError || error instanceof ConfigError || error instanceof SikaError) {
      io.err(`sika: ${error.message}`);
      return 1;
    }
    io.err(`sika: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

/** This process's terminal and the configured storage, opened for each command and closed after it. */
export function localIo(): CliIo {
  const err = (line: string) => void process.stderr.write(`${line}\n`);
  const { user, host } = localCliUser();
  return {
    actor: cliActor(user, host),
    out: (line) => void process.stdout.write(`${line}\n`),
    err,
    config: () => loadConfig(),
    deployment: (db) => storedDeploymentSettings(db, () => loadConfig(), err),
    async withDb(fn, options) {
      const db = await openDb(loadConfig(), options);
      try {
        return await fn(db);
      } finally {
        await db.close();
      }
    },
    async stdin() {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    stdinIsTerminal: process.stdin.isTTY === true,
    cwd: process.cwd(),
  };
}

/** Whether argv opens storage (help and the API commands do not: they are never sent to a server). */
function usesStorage(argv: string[]): boolean {
  const [command] = argv;
  if (command === undefined || isHelp(command) || API_COMMANDS[command]) return false;
  return !argv.some((arg) => arg === '--help' || arg === '-h');
}

/** bin/sika.mjs: runs argv here, or, when a running server holds the embedded data dir, in that server. */
export async function main(argv: string[]): Promise<number> {
  const io = localIo();
  let socket: string | null = null;
  try {
    if (usesStorage(argv)) socket = runningServerSocket(loadConfig());
  } catch {
    // A bad configuration: run() says what is wrong.
  }
  if (!socket) return run(argv, io);
  let args = argv;
  let stdin = '';
  if (argv[0] === 'user' && argv[1] === 'set-password') {
    // The password is asked for here, on this terminal, then sent with the command.
    const spec = COMMANDS.find((c) => c.name === 'user set-password')!;
    try {
      const parsed = parseCommand(spec, argv.slice(2));
      if (!parsed || typeof parsed.values.email !== 'string') return run(argv, io);
      stdin = await readNewPassword(parsed.values['password-stdin'] === true, io);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      io.err(`sika: ${error.message}`);
      return 2;
    }
    if (!args.includes('--password-stdin')) args = [...argv, '--password-stdin'];
  }
  const forwarded = await forwardCommand(socket, { argv: args, stdin, cwd: io.cwd, ...localCliUser() }, io);
  // The socket did not answer: the server is stopping or was killed; try the storage here.
  return forwarded ?? run(args, { ...io, stdin: async () => stdin });
}
