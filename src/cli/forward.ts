// `sika` while the server runs (issue 19): embedded storage is one process's at a time, so a server on an
// embedded data dir listens on a Unix socket in it (DATA_DIR/cli.sock, mode 0600, removed when it stops)
// and runs the commands sent there in-process, on its own storage, with the same code as the CLI
// (src/cli/main.ts run()). The CLI sends a command there when the process holding the data dir is alive
// and its socket answers; otherwise it opens the storage itself. PostgreSQL is shared: nothing is sent.
//
// The exchange: one JSON line {argv, stdin, cwd, user, host} from the CLI; JSON lines {out} / {err} as the
// command writes them, then {exit}. Standard input is read by the CLI (a password it asked for on its
// terminal) and sent whole; file names are read relative to the CLI's directory; the audit log names the
// CLI side's OS user and host (user@host), not the server's.
import { chmodSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { Config } from '../config/index.ts';
import type { Db } from '../db/index.ts';
import { cliActor, CLI_NAME_LENGTH_MAX, type CliIo } from './common.ts';
import { deploymentSettingsOf } from './deployment.ts';
import { processIsAlive } from '../lib/process-alive.ts';

export const CLI_SOCKET_NAME = 'cli.sock';
/** The most a request line may hold (argv, cwd and a password from standard input). */
const REQUEST_BYTES_MAX = 1024 * 1024;

export interface CliRequest {
  argv: string[];
  stdin: string;
  cwd: string;
  /** The OS user and host the CLI runs as (the audit log's actor). */
  user: string;
  host: string;
}

const isName = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= CLI_NAME_LENGTH_MAX;

/** The socket of the running server that holds this embedded data dir, or null (PostgreSQL, no server, or one without a socket). */
export function runningServerSocket(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string | null {
  if (config.databaseUrl || !config.dataDir) return null;
  const socket = join(config.dataDir, CLI_SOCKET_NAME);
  if (!existsSync(socket)) return null;
  let pid: number;
  try {
    pid = Number(readFileSync(join(config.dataDir, 'sika.pid'), 'utf8').trim());
  } catch {
    return null;
  }
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && processIsAlive(pid) ? socket : null;
}

/**
 * Sends a command to the server's socket and writes what it answers through io; the command's exit code,
 * or null when the socket did not answer (nothing was run: the caller runs the command itself).
 */
export function forwardCommand(socketPath: string, request: CliRequest, io: CliIo): Promise<number | null> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    let connected = false;
    let exit: number | null = null;
    let partial = '';
    socket.setEncoding('utf8');
    socket.once('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify(request)}\n`);
    });
    socket.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!line) continue;
        const message = JSON.parse(line) as { out?: string; err?: string; exit?: number };
        if (message.out !== undefined) io.out(message.out);
        if (message.err !== undefined) io.err(message.err);
        if (message.exit !== undefined) exit = message.exit;
      }
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (!connected) return resolve(null);
      io.err(
        `sika: the running server closed the connection (${error.code ?? error.message}); the command may or may not have run`,
      );
      resolve(1);
    });
    socket.once('close', () => {
      if (!connected) return resolve(null);
      if (exit === null)
        io.err('sika: the running server stopped before the command finished; it may or may not have run');
      resolve(exit ?? 1);
    });
  });
}

export type CommandRunner = (argv: string[], io: CliIo) => Promise<number>;

/**
 * Listens on DATA_DIR/cli.sock and runs each command sent there with `runCommand`, on the server's storage
 * and configuration. A socket file left by a process that is gone is replaced (this process holds the
 * data dir's lock, so no other server is using it). close() stops listening, waits for commands running
 * and removes the socket.
 */
export async function serveCli(options: {
  db: Db;
  config: Config;
  dataDir: string;
  runCommand: CommandRunner;
  onError?: (error: Error) => void;
}): Promise<{ path: string; close(): Promise<void> }> {
  const path = join(options.dataDir, CLI_SOCKET_NAME);
  rmSync(path, { force: true });
  const server: Server = createServer((socket) => {
    let buffered = '';
    let started = false;
    socket.setEncoding('utf8');
    socket.on('error', () => {});
    socket.on('data', (chunk: string) => {
      if (started) return;
      buffered += chunk;
      const end = buffered.indexOf('\n');
      if (end === -1) {
        if (buffered.length > REQUEST_BYTES_MAX) socket.destroy();
        return;
      }
      started = true;
      const send = (message: object) => {
        if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
      };
      let request: CliRequest;
      try {
        request = JSON.parse(buffered.slice(0, end)) as CliRequest;
        if (
          !Array.isArray(request.argv) ||
          !request.argv.every((arg) => typeof arg === 'string') ||
          typeof request.stdin !== 'string' ||
          typeof request.cwd !== 'string' ||
          !isName(request.user) ||
          !isName(request.host)
        )
          throw new Error('malformed');
      } catch {
        send({ err: 'sika: the server could not read the command' });
        send({ exit: 1 });
        socket.end();
        return;
      }
      const io: CliIo = {
        out: (line) => send({ out: line }),
        err: (line) => send({ err: line }),
        config: () => options.config,
        // This server's own settings: it recorded them at start, and they are what it runs with.
        deployment: async () => deploymentSettingsOf(options.config),
        withDb: (fn) => fn(options.db),
        stdin: async () => request.stdin,
        stdinIsTerminal: false,
        cwd: request.cwd,
        actor: cliActor(request.user, request.host),
      };
      void options.runCommand(request.argv, io).then(
        (code) => {
          send({ exit: code });
          socket.end();
        },
        (error: Error) => {
          options.onError?.(error);
          send({ err: `sika: ${error.message}` });
          send({ exit: 1 });
          socket.end();
        },
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Only this user may run commands (the data dir's own files are theirs too).
  chmodSync(path, 0o600);
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          rmSync(path, { force: true });
          resolve();
        });
      }),
  };
}
