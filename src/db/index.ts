import { migrate } from './migrate.ts';
import { openPostgres } from './postgres.ts';
import type { Db } from './types.ts';

export type { Db, Queryable, Subscription } from './types.ts';
export { DbError, TRANSACTION_ATTEMPTS_MAX } from './types.ts';
export { StorageAvailability, type AvailabilityChange } from './availability.ts';
export { withSavepoint } from './savepoint.ts';

/** PostgreSQL when DATABASE_URL is set, else embedded PGlite in DATA_DIR; migrated before use. */
/** dataDir null = embedded in memory (tests). */
/** options.poolSize: connections for PostgreSQL (default POOL_SIZE_MAX); embedded storage is one connection. */
export async function openDb(
  config: { databaseUrl: string | null; dataDir: string | null },
  options: { migrate?: boolean; poolSize?: number } = {},
): Promise<Db> {
  // Embedded storage (and PGlite with it) is loaded only when used: a PostgreSQL server never loads it.
  const db = config.databaseUrl
    ? await openPostgres(config.databaseUrl, options.poolSize)
    : await (await import('./embedded.ts')).openEmbedded(config.dataDir);
  if (options.migrate !== false) {
    try {
      await migrate(db);
    } catch (error) {
      await db.close();
      throw error;
    }
  }
  return db;
}
