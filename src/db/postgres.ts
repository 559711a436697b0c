import pg from 'pg';
import { listenPostgres } from './notifications.ts';
import { Pipeline } from './pipeline.ts';
import { DbError, InFlight, parseInt8, unpipelined, withRetries, type Db, type Queryable, type Subscription } from './types.ts';

/** Connections per process; the benchmark baseline (bench/baseline.ts) uses the same size. */
export const POOL_SIZE_MAX = 20;
/** Pipelined connections for db.read and for db.write (src/db/pipeline.ts), besides the pool. */
const READ_PIPELINE_CONNECTIONS = 2;
const WRITE_PIPELINE_CONNECTIONS = 4;
/** How long a pipelined write may wait on a lock before it gives up (and its caller takes the pool). */
const WRITE_PIPELINE_LOCK_TIMEOUT_MS = 100;
const CONNECT_TIMEOUT_MS = 3_000;
/** No statement of ours runs for long: one that does is stuck (a lock pile-up), and answers 503 instead of hanging. */
const STATEMENT_TIMEOUT_MS = 30_000;
/** A server gone without a reset (a network cut) is noticed by TCP keepalive and the client read timeout. */
const KEEPALIVE_INITIAL_DELAY_MS = 10_000;
const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 5_000;

export async function openPostgres(databaseUrl: string, poolSize = POOL_SIZE_MAX): Promise<Db> {
  const connection = {
    connectionString: databaseUrl,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  };
  const pool = new pg.Pool({ ...connection, max: poolSize });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const reads = new Pipeline(() => new pg.Client({ ...connection, pipeline: true } as pg.ClientConfig), READ_PIPELINE_CONNECTIONS);
  const writes = new Pipeline(
    () => new pg.Client({ ...connection, pipeline: true, lock_timeout: WRITE_PIPELINE_LOCK_TIMEOUT_MS } as pg.ClientConfig),
    WRITE_PIPELINE_CONNECTIONS,
  );
  const piped = <Row>(pipeline: Pipeline, name: string, sql: string, params: readonly unknown[] = []) =>
    inFlight.run(async () => {
      try {
        return await pipeline.query<Row>(name, sql, params);
      } catch (error) {
        throw DbError.from(error);
      }
    });

  const wrap = (client: pg.Pool | pg.PoolClient): Queryable => {
    const query = async <Row>(sql: string, params: readonly unknown[] = [], prepare?: string) => {
      try {
        const result = prepare ? await client.query({ name: prepare, text: sql, values: params as unknown[] }) : await client.query(sql, params as unknown[]);
        return result.rows as Row[];
      } catch (error) {
        throw DbError.from(error);
      }
    };
    return {
      query,
      // Only the Db below pipelines; a transaction's connection runs them as they come.
      ...unpipelined(query),
      async exec(sql: string) {
        try {
          await client.query(sql);
        } catch (error) {
          throw DbError.from(error);
        }
      },
    };
  };

  const inFlight = new InFlight();
  const direct = wrap(pool);
  const subscriptions = new Set<Subscription>();
  const db: Db = {
    kind: 'postgres',
    query: (sql, params, prepare) => inFlight.run(() => direct.query(sql, params, prepare)),
    read: (name, sql, params) => piped(reads, name, sql, params),
    write: (name, sql, params) => piped(writes, name, sql, params),
    exec: (sql) => inFlight.run(() => direct.exec(sql)),
    transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return inFlight.run(() => withRetries(async () => {
        let client: pg.PoolClient;
        try {
          client = await pool.connect();
        } catch (error) {
          throw DbError.from(error);
        }
        let broken = false;
        // The driver's errors become DbErrors where the driver is called (here and in wrap); whatever fn
        // throws of its own (a use case's refusal) passes through unchanged.
        const control = (sql: 'BEGIN' | 'COMMIT') => client.query(sql).catch((error: unknown) => Promise.reject(DbError.from(error)));
        try {
          await control('BEGIN');
          const result = await fn(wrap(client));
          await control('COMMIT');
          return result;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {
            broken = true;
          });
          throw error;
        } finally {
          client.release(broken);
        }
      }));
    },
    async ping() {
      await db.query('SELECT 1');
    },
    async listen(channel, handlers) {
      const subscription = await listenPostgres(() => new pg.Client(connection), channel, handlers);
      subscriptions.add(subscription);
      return {
        get live() {
          return subscription.live;
        },
        async close() {
          subscriptions.delete(subscription);
          await subscription.close();
        },
      };
    },
    async close() {
      await inFlight.settle();
      await Promise.all([pool.end(), reads.close(), writes.close(), ...[...subscriptions].map((s) => s.close())]);
    },
  };
  await db.ping();
  return db;
}
