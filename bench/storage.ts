// Fresh storage per benchmark run: a new PostgreSQL database (dropped at the end) or a temp data dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The server to create the bench database on; BENCH_PG_URL overrides. */
export const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

export interface Scratch {
  /** DATABASE_URL or DATA_DIR for the service and the baseline. */
  env: Record<string, string>;
  /** Where the baseline keeps its table (same database for PostgreSQL, its own data dir for PGlite). */
  baselineEnv: Record<string, string>;
  description: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function postgresScratch(stamp: string): Promise<Scratch> {
  const name = `sika_bench_${stamp}`;
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`bad database name ${name}`);
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const server = await admin(async (client) => {
    const rows = await client.query<{ version: string; max_connections: string }>(
      "SELECT current_setting('server_version') AS version, current_setting('max_connections') AS max_connections",
    );
    return rows.rows[0]!;
  });
  let dropped = false;
  return {
    env: { DATABASE_URL: databaseUrl },
    baselineEnv: { DATABASE_URL: databaseUrl, BASELINE_STORAGE: 'postgres' },
    description: `PostgreSQL ${server.version} at ${url.host}, database ${name}`,
    async drop() {
      if (dropped) return;
      dropped = true;
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

export function embeddedScratch(): Scratch {
  const dir = mkdtempSync(join(tmpdir(), 'sika-bench-'));
  return {
    env: { DATA_DIR: join(dir, 'service') },
    baselineEnv: { DATA_DIR: join(dir, 'baseline'), BASELINE_STORAGE: 'embedded' },
    description: `embedded PGlite in ${dir}`,
    async drop() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
