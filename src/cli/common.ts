// What every sika command shares: the error that names the fix, who the audit log says acted, where a
// command writes and gets its storage (CliIo: the terminal and the configured storage, or, forwarded to a
// running server, a buffer and the server's own storage: src/cli/forward.ts), and the option parsing that
// answers --help and names a mistyped option.
import { hostname, userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import type { Actor } from '../audit/log.ts';
import type { Config } from '../config/index.ts';
import type { DeploymentSettings } from '../db/deployment-settings.ts';
import type { Db, Queryable } from '../db/index.ts';

/** A command used wrongly: the CLI prints the message and where its help is, and exits 2. */
export class UsageError extends Error {
  /** The command whose help names the fix ('merchant create'); '' for sika itself. */
  constructor(
    message: string,
    readonly command: string | null = null,
  ) {
    super(message);
  }
}

/** The longest user or host name a CLI actor keeps (a forwarded command's are the CLI side's, sent along). */
export const CLI_NAME_LENGTH_MAX = 255;

/** The actor of changes made from the command line (the audit log's "who"): the OS user and host, user@host. */
export const cliActor = (user: string, host: string): Actor & { type: 'cli' } => ({
  type: 'cli',
  id: `${user.slice(0, CLI_NAME_LENGTH_MAX) || 'unknown'}@${host.slice(0, CLI_NAME_LENGTH_MAX) || 'unknown'}`,
  email: null,
});

/** Who runs this process: the OS user and host name. */
export function localCliUser(): { user: string; host: string } {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // A uid with no passwd entry (some containers): the environment's name, else the uid.
    user = process.env.USER || process.env.LOGNAME || `uid-${process.getuid?.() ?? 'unknown'}`;
  }
  return { user, host: hostname() };
}

/** Where a command writes, reads and finds its storage. */
export interface CliIo {
  /** A line of the command's result (stdout). */
  out(line: string): void;
  /** A line of warning or error (stderr). */
  err(line: string): void;
  config(): Config;
  /** The deployment's links and webhook target rule (src/cli/deployment.ts), read on the command's storage. */
  deployment(db: Queryable): Promise<DeploymentSettings>;
  /** Runs fn on the storage: opened and closed around it, or the running server's. */
  withDb<T>(fn: (db: Db) => Promise<T>, options?: { migrate?: boolean }): Promise<T>;
  /** The whole of standard input. */
  stdin(): Promise<string>;
  /** Standard input is a terminal (a password can be asked for on it). */
  stdinIsTerminal: boolean;
  /** The directory relative file names are read from. */
  cwd: string;
  /** Who the audit log says made a change: the CLI side's OS user and host, also when forwarded to a server. */
  actor: Actor & { type: 'cli' };
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** Shown in the help: the value's name (NAME, ID) or nothing for a flag. */
  value?: string;
  description: string;
  default?: string | boolean;
}

/** --json: every command that prints a result can print it as JSON instead. */
export const JSON_OPTION = { type: 'boolean', description: 'the result as JSON', default: false } as const;

/** A string option's value (undefined when not given). */
export const str = (value: string | boolean | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined;

/** One command: its words, synopsis, help text, options, and what it does. */
export interface CommandSpec {
  /** 'merchant create', 'migrate' */
  name: string;
  /** What follows the name in the usage line. */
  synopsis: string;
  /** One line for the command list. */
  summary: string;
  /** More lines for its own --help. */
  details?: string;
  options: Record<string, OptionSpec>;
  /** Positional arguments it takes at most (0 by default). */
  positionals?: number;
  /** The whole --help text instead of the one drawn from the parts above. */
  help?: string;
  run(values: Record<string, string | boolean | undefined>, positionals: string[], io: CliIo): Promise<void>;
}

/** A command's --help. */
export function commandHelp(spec: CommandSpec): string {
  if (spec.help) return spec.help;
  const width =
    Math.max(...Object.entries(spec.options).map(([name, o]) => name.length + (o.value ? o.value.length + 1 : 0)), 4) +
    4;
  const lines = [
    `usage: sika ${spec.name}${spec.synopsis ? ` ${spec.synopsis}` : ''}`,
    '',
    spec.summary.replace(/\n +/g, '\n'),
  ];
  if (spec.details) lines.push('', spec.details);
  const options = Object.entries(spec.options);
  lines.push('', 'options:');
  for (const [name, o] of options)
    lines.push(`  ${`--${name}${o.value ? ` ${o.value}` : ''}`.padEnd(width)}${o.description}`);
  lines.push(`  ${'--help, -h'.padEnd(width)}this help`);
  return lines.join('\n');
}

/** The edit distance of two short words (for "did you mean"). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const kept = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = kept;
    }
  }
  return row[b.length]!;
}

/** The closest of `known` to `word`, when it is close enough to be a typo. */
export function closest(word: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = candidate.startsWith(word) && word.length >= 3 ? 0.5 : distance(word, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= Math.max(1, Math.floor(best.length / 3)) ? best : null;
}

/** Parses a command's arguments by its spec; null when --help was asked for. Mistakes are UsageErrors naming the fix. */
export function parseCommand(
  spec: CommandSpec,
  args: string[],
): { values: Record<string, string | boolean | undefined>; positionals: string[] } | null {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; default?: string | boolean }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const [name, o] of Object.entries(spec.options))
    options[name] = o.default === undefined ? { type: o.type } : { type: o.type, default: o.default };
  const see = `See: sika ${spec.name} --help`;
  // --help anywhere wins, even beside a mistake.
  if (args.includes('--help') || args.includes('-h')) return null;
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    const allowed = spec.positionals ?? 0;
    if (positionals.length > allowed) {
      const extra = positionals.slice(allowed).join(' ');
      throw new UsageError(
        allowed === 0
          ? `sika ${spec.name} takes no argument "${extra}"; options start with --. ${see}`
          : `sika ${spec.name} takes ${allowed} argument${allowed === 1 ? '' : 's'}; "${extra}" is one too many. ${see}`,
        spec.name,
      );
    }
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as { code?: string }).code ?? '';
    const message = (error as Error).message;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const option = /'([^']+)'/.exec(message)?.[1] ?? '';
      const name = option.replace(/^-+/, '').split('=')[0]!;
      const guess = closest(name, Object.keys(spec.options));
      throw new UsageError(
        `unknown option ${option} for sika ${spec.name}${guess ? `; did you mean --${guess}?` : '.'} ${see}`,
        spec.name,
      );
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const option = /'(-[^' ]+)/.exec(message)?.[1] ?? '';
      const o = spec.options[option.replace(/^-+/, '')];
      throw new UsageError(
        o?.type === 'boolean'
          ? `option ${option} of sika ${spec.name} takes no value. ${see}`
          : `option ${option} of sika ${spec.name} needs a value${o?.value ? ` (${option} ${o.value})` : ''}. ${see}`,
        spec.name,
      );
    }
    throw error;
  }
}
