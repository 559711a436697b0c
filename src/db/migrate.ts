import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db, Queryable } from './types.ts';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
// Any fixed number: every process that migrates takes the same lock, so only one applies at a time.
const MIGRATION_LOCK_ID = 7_415_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: readFileSync(join(MIGRATIONS_DIR, file), 'utf8'),
    }));
}

/**
 * Applies every migration not yet applied, in order, in one transaction. Returns the names applied.
 * `onApplied` runs in that transaction when any was (the CLI's audit row).
 */
export async function migrate(
  db: Db,
  options: { onApplied?: (tx: Queryable, names: string[]) => Promise<unknown> } = {},
): Promise<string[]> {
  const migrations = listMigrations();
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const rows = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => row.version));
    const names: string[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      names.push(`${String(migration.version).padStart(3, '0')}_${migration.name}`);
    }
    if (names.length > 0 && options.onApplied) await options.onApplied(tx, names);
    return names;
  });
}

export async function isMigrated(db: Db): Promise<boolean> {
  const latest = listMigrations().at(-1)?.version ?? 0;
  const rows = await db.query<{ version: number | null }>(
    "SELECT (SELECT max(version) FROM schema_migrations) AS version WHERE to_regclass('schema_migrations') IS NOT NULL",
  );
  return (rows[0]?.version ?? 0) >= latest;
}
