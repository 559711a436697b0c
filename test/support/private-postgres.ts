// A private PostgreSQL server for tests that must change what a shared server cannot (stop it, make every
// commit wait for a standby): initdb in a temp dir, as the postgres user when run as root (initdb refuses
// root), on a free port, with fsync off. Needs the PostgreSQL binaries (/usr/lib/postgresql/*/bin or PG_BIN).
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../reliability/process-support.ts';

const run = promisify(execFile);

export function findPgBin(): string | null {
  const candidates = process.env.PG_BIN ? [process.env.PG_BIN] : [];
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(root, v, 'bin')));
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ?? null;
}

export interface PgUser {
  /** Prefix of every PostgreSQL command: runuser as postgres when we are root. */
  wrap: (file: string, args: string[]) => [string, string[]];
  chown: (path: string) => void;
}

export async function pgUser(): Promise<PgUser | string> {
  if (process.getuid?.() !== 0) return { wrap: (file, args) => [file, args], chown: () => {} };
  // initdb and postgres refuse to run as root: run them as the postgres user.
  try {
    const { stdout: uid } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await run('runuser', ['--help']).catch((error: { code?: unknown }) => {
      if (error.code === 'ENOENT') throw error;
    });
    return {
      wrap: (file, args) => ['runuser', ['-u', 'postgres', '--', file, ...args]],
      chown: (path) => chownSync(path, Number(uid), Number(gid)),
    };
  } catch {
    return 'running as root, and there is no postgres user (or no runuser) to run initdb as';
  }
}

export class PrivatePostgres {
  readonly data: string;
  readonly log: string;
  constructor(
    readonly bin: string,
    readonly user: PgUser,
    readonly dir: string,
    readonly port: number,
    readonly settings: string[] = [],
  ) {
    this.data = join(dir, 'data');
    this.log = join(dir, 'postgres.log');
  }

  /** settings: extra `-c name=value` server settings (e.g. synchronous_standby_names). */
  static async create(bin: string, user: PgUser, settings: string[] = []): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'sika-dbloss-pg-'));
    user.chown(dir);
    const instance = new PrivatePostgres(bin, user, dir, await freePort(), settings);
    await instance.pg('initdb', [
      '-D',
      instance.data,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
      '--no-instructions',
    ]);
    await instance.start();
    return instance;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}`;
  }

  private async pg(tool: string, args: string[]): Promise<string> {
    const [file, argv] = this.user.wrap(join(this.bin, tool), args);
    const { stdout } = await run(file, argv, { cwd: this.dir, timeout: 60_000 });
    return stdout;
  }

  async start(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-c listen_addresses=127.0.0.1`,
      `-c unix_socket_directories=${this.dir}`,
      // fsync off: fast, and safe here (an immediate stop loses no page the OS has). synchronous_commit
      // stays on: a commit acknowledged to the server must survive the stop.
      '-c fsync=off',
      '-c full_page_writes=off',
      '-c max_connections=60',
      '-c shared_buffers=32MB',
      ...this.settings.map((setting) => `-c ${setting}`),
    ].join(' ');
    await this.pg('pg_ctl', ['-D', this.data, '-l', this.log, '-o', options, '-w', '-t', '60', 'start']);
  }

  /** A crash as the server sees it: every backend is killed, connections reset, no checkpoint. */
  async stopImmediate(): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.data, '-m', 'immediate', '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    await this.stopImmediate().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}
