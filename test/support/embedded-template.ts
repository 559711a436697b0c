// One migrated embedded database for the whole suite: `npm test` (scripts/test.mjs) builds it once before its
// runner starts and names the file in SIKA_TEST_EMBEDDED_TEMPLATE; each test's storage is a copy of it
// (PGlite's loadDataDir) instead of ~34 migrations applied again. A file run on its own (node --test) builds
// it once per process. Tests that exercise migrations open storage with openDb and still migrate from scratch.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbedded } from '../../src/db/embedded.ts';
import type { Db, Queryable } from '../../src/db/index.ts';
import { migrate } from '../../src/db/migrate.ts';

export const EMBEDDED_TEMPLATE_ENV = 'SIKA_TEST_EMBEDDED_TEMPLATE';

/** A fresh in-memory database with every migration applied, dumped as PGlite's uncompressed tarball. */
export async function buildEmbeddedTemplate(): Promise<Blob> {
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = await PGlite.create('memory://');
  try {
    // migrate() needs only transaction(): the migrations run as the server runs them, in one transaction.
    const wrap = (tx: Pick<typeof pglite, 'query' | 'exec'>) =>
      ({
        query: async (sql: string, params: readonly unknown[] = []) => (await tx.query(sql, [...params])).rows,
        exec: async (sql: string) => {
          await tx.exec(sql);
        },
      }) as unknown as Queryable;
    const db = { transaction: (fn: (tx: Queryable) => Promise<unknown>) => pglite.transaction((tx) => fn(wrap(tx))) };
    await migrate(db as unknown as Db);
    // Every copy is unpacked into memory at each open: without the two template databases (15 of 43 MB; only
    // CREATE DATABASE reads them, and no embedded test creates one) an open takes about 460 ms, not 650.
    for (const template of ['template0', 'template1']) {
      await pglite.query(`ALTER DATABASE ${template} IS_TEMPLATE false`);
      await pglite.query(`DROP DATABASE ${template}`);
    }
    return await pglite.dumpDataDir('none');
  } finally {
    await pglite.close();
  }
}

/** Builds the template and writes it to `path` (scripts/test.mjs, before the runner starts). */
export async function writeEmbeddedTemplate(path: string): Promise<void> {
  const template = await buildEmbeddedTemplate();
  writeFileSync(path, new Uint8Array(await template.arrayBuffer()));
}

let template: Promise<Blob> | null = null;

/** The suite's template (read once per process), or one built here when the runner gave none. */
export function embeddedTemplate(): Promise<Blob> {
  template ??= (async () => {
    const path = process.env[EMBEDDED_TEMPLATE_ENV];
    return path ? new Blob([readFileSync(path)]) : buildEmbeddedTemplate();
  })();
  return template;
}

/** A fresh in-memory database, a copy of the migrated template; migrate() finds nothing left to apply. */
export async function openEmbeddedFromTemplate(): Promise<Db> {
  const db = await openEmbedded(null, { template: await embeddedTemplate() });
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}

/**
 * A new data dir (DATA_DIR) for a server or `sika` command a test starts, holding a copy of the template: what a
 * first start leaves, without the migrations applied again (about 10 s of a CLI test's first command). For tests
 * whose subject is not the first start itself.
 */
export async function seededDataDir(prefix: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = await PGlite.create(join(dir, 'pgdata'), { loadDataDir: await embeddedTemplate() });
  await pglite.close();
  return dir;
}
