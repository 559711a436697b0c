import pg from 'pg';
import { listenPostgres } from './notifications.ts';
import { ConnectionEpoch } from './epoch.ts';
import { Pipeline } from './pipeline.ts';
import { CommitSignals, Signals } from './signals.ts';
import {
  DbError,
  InFlight,
  isUnconfirmedCommitWarning,
  parseInt8,
  unconfirmedCommit,
  unpipelined,
  withRetries,
  checkChannelName,
  type Db,
  type Queryable,
  type Subscription,
} from './types.ts';

/** Connections per process; the benchmark baseline (bench/baseline.ts) uses the same size. */
export const POOL_SIZE_MAX = 20;
/** Pipelined connections for db.read and for db.write (src/db/pipeline.ts), besides the pool. */
const PIPELINE_CONNECTIONS = { read: 2, write: 4 } as const;
/** How long a pipelined write may wait on a lock before it gives up (and its caller takes the pool). */
const WRITE_PIPELINE_LOCK_TIMEOUT_MS = 100;
/** No statement of ours runs for long: one that does is stuck (a lock pile-up), and answers 503 instead of hanging. */
const STATEMENT_TIMEOUT_MS = 30_000;

/**
 * The session settings every connection starts with. JIT is off: PostgreSQL compiles a plan whose estimated cost
 * passes jit_above_cost, and at a year of data (5,000,000 sessions) the planner's guesses for the Payments search
 * passed it, so a query that reads 356 buffers took 557 ms at p50 with JIT on and 3 ms with it off (bench/REPORT.md,
 * "JIT at a year of data"). Sika's statements are short; none gains from compiling. An operator's own
 * options come after these (PGOPTIONS here; `options` in DATABASE_URL replaces them), so either can turn it back on.
 */
export function sessionOptions(pgOptions: string | undefined): string {
  return ['-c jit=off', pgOptions?.trim()].filter(Boolean).join(' ');
}

/** What every connection, pooled or pipelined, is opened with (node-postgres' client settings), besides its URL. */
const CONNECTION_SETTINGS = {
  options: sessionOptions(process.env.PGOPTIONS),
  connectionTimeoutMillis: 3_000,
  statement_timeout: STATEMENT_TIMEOUT_MS,
  query_timeout: STATEMENT_TIMEOUT_MS + 5_000,
  // A server gone without a reset (a network cut) is noticed by TCP keepalive and the client read timeout.
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
  types: {
    getTypeParser: ((oid: number, format?: string) =>
      oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  },
};

/**
 * Runs a statement that commits (COMMIT, or one outside a transaction), refusing to report success for a commit
 * the synchronous standby never confirmed. A commit waiting for synchronous replication that is cancelled
 * (pg_cancel_backend: an operator clearing commits stuck behind a lost standby; statement_timeout is off by
 * then) is committed on the primary only, and PostgreSQL still answers it with success, after a WARNING
 * ("canceling wait for synchronous replication due to user request", detail "The transaction has already
 * committed locally, but might not have been replicated to the standby": SyncRepWaitForLSN in PostgreSQL's
 * src/backend/replication/syncrep.c, "a WARNING (which some clients may be able to interpret)"; the hazard:
 * https://www.mail-archive.com/pgsql-hackers%40lists.postgresql.org/msg126464.html).
 * A failover then would lose it, so its caller is told 503 (57014, not a connection failure): a retry with
 * the same key finds the stored result if the commit survived, or makes it once if it did not.
 */
async function confirmed<T>(client: pg.ClientBase, statement: () => Promise<T>): Promise<T> {
  let warning: string | null = null;
  const onNotice = (notice: { code?: string; message?: string }) => {
    if (isUnconfirmedCommitWarning(notice)) warning = notice.message ?? notice.code ?? 'warning';
  };
  client.on('notice', onNotice);
  let result: T;
  try {
    result = await statement();
  } catch (error) {
    throw DbError.from(error);
  } finally {
    client.off('notice', onNotice);
  }
  if (warning !== null) throw unconfirmedCommit(warning);
  return result;
}

/** One statement on a connection, its driver error mapped to a DbError. */
async function queryOn<Row>(
  client: pg.ClientBase,
  sql: string,
  params: readonly unknown[] = [],
  prepare?: string,
): Promise<Row[]> {
  try {
    const result = prepare
      ? await client.query({ name: prepare, text: sql, values: params as unknown[] })
      : await client.query(sql, params as unknown[]);
    return result.rows as Row[];
  } catch (error) {
    throw DbError.from(error);
  }
}

/** SQL text of one or more statements, without parameters or rows. */
async function execOn(client: pg.ClientBase, sql: string): Promise<void> {
  try {
    await client.query(sql);
  } catch (error) {
    throw DbError.from(error);
  }
}

/** For 'error' events whose error also reaches the statement in flight, or that pg-pool already handles. */
const ignoreError = () => {};

export async function openPostgres(databaseUrl: string, poolSize = POOL_SIZE_MAX): Promise<Db> {
  const connection = { connectionString: databaseUrl, ...CONNECTION_SETTINGS };
  const pool = new pg.Pool({ ...connection, max: poolSize });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', ignoreError);
  // A failover: once one connection finds its server gone or read-only, every connection opened before
  // that is suspect (they reached the same server), so each is closed when next taken instead of
  // failing one request each. Connections opened since are used as they are.
  const epoch = new ConnectionEpoch();
  pool.on('connect', (client) => epoch.stamp(client));
  const reads = new Pipeline(
    () => new pg.Client({ ...connection, pipeline: true } as pg.ClientConfig),
    PIPELINE_CONNECTIONS.read,
    epoch,
  );
  const writes = new Pipeline(
    () =>
      new pg.Client({ ...connection, pipeline: true, lock_timeout: WRITE_PIPELINE_LOCK_TIMEOUT_MS } as pg.ClientConfig),
    PIPELINE_CONNECTIONS.write,
    epoch,
  );
  const piped = <Row>(pipeline: Pipeline, name: string, sql: string, params: readonly unknown[] = []) =>
    inFlight.run(async () => {
      try {
        return await pipeline.query<Row>(name, sql, params);
      } catch (error) {
        throw DbError.from(error);
      }
    });

  /** A pooled connection opened in the current epoch. */
  const acquire = async (): Promise<pg.PoolClient> => {
    for (;;) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw DbError.from(error);
      }
      if (epoch.isCurrent(client)) return client;
      client.release(true);
    }
  };
  /** Runs work on a pooled connection; one that failed as a connection (DbError.dropsConnection) is closed, not pooled again. */
  const onConnection = async <T>(work: (client: pg.PoolClient, drop: () => void) => Promise<T>): Promise<T> => {
    const client = await acquire();
    // A checked-out client has no pool listener: a connection lost mid-statement would be an unhandled
    // 'error' event (a crash). The statement in flight gets the error itself.
    client.on('error', ignoreError);
    let drop = false;
    try {
      return await work(client, () => {
        drop = true;
      });
    } catch (error) {
      if (error instanceof DbError && error.dropsConnection) {
        drop = true;
        epoch.advance();
      }
      throw error;
    } finally {
      client.off('error', ignoreError);
      client.release(drop);
    }
  };

  // Other processes hear a signal through a NOTIFY of its own, pipelined (src/db/signals.ts).
  const signals = new Signals((channel) =>
    piped(writes, 'signal', "SELECT pg_notify($1, '')", [checkChannelName(channel)]),
  );

  const wrap = (client: pg.PoolClient, commitSignals: CommitSignals): Queryable => {
    const query = <Row>(sql: string, params: readonly unknown[] = [], prepare?: string) =>
      queryOn<Row>(client, sql, params, prepare);
    return {
      query,
      // Only the Db below pipelines; a transaction's connection runs them as they come.
      ...unpipelined(query),
      exec: (sql: string) => execOn(client, sql),
      signal: (channel: string) => commitSignals.add(channel),
    };
  };

  const inFlight = new InFlight();
  const subscriptions = new Set<Subscription>();
  const db: Db = {
    kind: 'postgres',
    // A statement outside a transaction commits by itself, so it is confirmed like a COMMIT.
    query: (sql, params, prepare) =>
      inFlight.run(() => onConnection((client) => confirmed(client, () => queryOn(client, sql, params, prepare)))),
    read: (name, sql, params) => piped(reads, name, sql, params),
    write: (name, sql, params) => piped(writes, name, sql, params),
    exec: (sql) => inFlight.run(() => onConnection((client) => confirmed(client, () => execOn(client, sql)))),
    signal: (channel) => signals.fire(channel),
    transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return inFlight.run(() =>
        withRetries(() =>
          onConnection(async (client, drop) => {
            // The driver's errors become DbErrors where the driver is called (here, in confirmed and in
            // wrap); whatever fn throws of its own (a use case's refusal) passes through unchanged.
            await client.query('BEGIN').catch((error: unknown) => Promise.reject(DbError.from(error)));
            const commitSignals = new CommitSignals(signals);
            try {
              const result = await fn(wrap(client, commitSignals));
              await confirmed(client, () => client.query('COMMIT'));
              commitSignals.committed();
              return result;
            } catch (error) {
              // A connection that failed is closed by onConnection; any other is rolled back, or closed if even that fails.
              if (!(error instanceof DbError && error.dropsConnection)) await client.query('ROLLBACK').catch(drop);
              throw error;
            }
          }),
        ),
      );
    },
    ping: () =>
      inFlight.run(() =>
        onConnection(async (client) => {
          // Storage is up when it takes writes: a standby (in recovery) answers SELECT 1 but takes no write,
          // and during a failover the proxy may route to one; that connection is then closed (dropsConnection).
          const [row] = await queryOn<{ read_only: string }>(
            client,
            "SELECT current_setting('transaction_read_only') AS read_only",
          );
          if (row?.read_only === 'on')
            throw new DbError(
              'the database takes no writes (a standby in recovery): no primary answers yet',
              '25006',
              null,
            );
        }),
      ),
    async listen(channel, handlers) {
      const subscription = await listenPostgres(() => new pg.Client(connection), channel, handlers);
      subscriptions.add(subscription);
      // This process's own signals reach it directly, without waiting for the NOTIFY's round trip.
      const unlisten = signals.listen(channel, () => handlers.message(''));
      return {
        get live() {
          return subscription.live;
        },
        async close() {
          unlisten();
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
