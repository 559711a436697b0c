import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import {
  checkChannelName,
  DbError,
  InFlight,
  parseInt8,
  unpipelined,
  withRetries,
  type Db,
  type Queryable,
} from './types.ts';
import { processIsAlive } from '../lib/process-alive.ts';
import { CommitSignals, Signals } from './signals.ts';

export class DataDirInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `the embedded data dir ${dataDir} is in use by another Sika process (pid ${pid}). ` +
        'Embedded storage allows one process at a time: stop the running server first, ' +
        'or point both at PostgreSQL with DATABASE_URL.',
    );
  }
}

/** One process owns an embedded data dir at a time; a lock file holds its pid. */
function takeLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = join(dataDir, 'sika.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      return () => rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processIsAlive(pid))
        throw new DataDirInUseError(dataDir, pid);
      rmSync(lockPath, { force: true }); // stale lock from a process that is gone
    }
  }
  throw new Error(`could not lock ${dataDir}`);
}

/**
 * PostgreSQL's buffer cache inside PGlite. Its default, 128 MB, is all touched at start (110 MB more
 * resident before the first query); the data files are read through the operating system's page cache
 * anyway. Measured under journeys, creates and reads (issue 18): peak RSS 417-434 MB -> 325-347 MB at
 * 32 MB, the same rates; the full bench (with payouts) still peaked at 352-353 MB in two runs of three, so
 * 16 MB (about 12 MB less). A memory setting only: fsync and commit behaviour stay PGlite's defaults.
 */
const SHARED_BUFFERS_MB = 16;

/**
 * dataDir null = in memory (tests). options.template: a data dir dumped by PGlite's dumpDataDir() (tests: one
 * migrated database, copied per test file instead of migrated again); the server never passes one.
 */
export async function openEmbedded(dataDir: string | null, options: { template?: Blob } = {}): Promise<Db> {
  const release = dataDir ? takeLock(dataDir) : () => {};
  let pglite: PGlite;
  try {
    // Loaded here, not at the top: a server on PostgreSQL never loads PGlite (issue 18).
    const { PGlite, types } = await import('@electric-sql/pglite');
    pglite = await PGlite.create(dataDir ? join(dataDir, 'pgdata') : 'memory://', {
      parsers: { [types.INT8]: parseInt8 },
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS_MB}MB`],
      ...(options.template ? { loadDataDir: options.template } : {}),
    });
  } catch (error) {
    release();
    throw error;
  }

  // One process holds the data dir: every listener is in it, told directly (src/db/signals.ts).
  const signals = new Signals(null);
  const wrap = (client: Pick<PGlite, 'query' | 'exec'>, signal: (channel: string) => void): Queryable => {
    const query = async <Row>(sql: string, params: readonly unknown[] = []) => {
      try {
        const result = await client.query<Row>(sql, params as unknown[]);
        return result.rows;
      } catch (error) {
        throw DbError.from(error);
      }
    };
    return {
      query,
      // One connection in process: nothing to pipeline.
      ...unpipelined(query),
      async exec(sql: string) {
        try {
          await client.exec(sql);
        } catch (error) {
          throw DbError.from(error);
        }
      },
      signal,
    };
  };

  const inFlight = new InFlight();
  const direct = wrap(pglite, (channel) => signals.fire(channel));
  const query: Queryable['query'] = (sql, params) => inFlight.run(() => direct.query(sql, params));
  const db: Db = {
    kind: 'embedded',
    query,
    ...unpipelined(query),
    exec: (sql) => inFlight.run(() => direct.exec(sql)),
    signal: direct.signal,
    transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      // PGlite is one connection: its transaction() serialises writers, so row locks never contend.
      return inFlight.run(() =>
        withRetries(async () => {
          const commitSignals = new CommitSignals(signals);
          const result = await pglite.transaction((tx) => fn(wrap(tx, (channel) => commitSignals.add(channel))));
          commitSignals.committed();
          return result;
        }),
      );
    },
    async ping() {
      await db.query('SELECT 1');
    },
    async listen(channel, handlers) {
      // One process, one connection: every NOTIFY of this database is seen here, so always live.
      const unlisten = await pglite.listen(checkChannelName(channel), (payload) => handlers.message(payload));
      const unsignal = signals.listen(channel, () => handlers.message(''));
      return {
        live: true,
        close: () => {
          unsignal();
          return unlisten().catch(() => {});
        },
      };
    },
    async close() {
      await inFlight.settle();
      await pglite.close();
      release();
    },
  };
  return db;
}
