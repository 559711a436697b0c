// The one small storage interface every module uses: parameterised SQL and a transaction helper.

export interface Queryable {
  /**
   * One parameterised statement; rows as plain objects (int8 as number, timestamptz as Date).
   * `prepare` names a hot statement: PostgreSQL parses and plans it once per connection instead of on
   * every call (embedded storage ignores it). Only for fixed SQL text; one name, one text.
   */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[], prepare?: string): Promise<Row[]>;
  /**
   * A hot lookup by a named statement: a plain SELECT that takes no locks and writes nothing, so it can
   * never wait. Outside a transaction on PostgreSQL it shares a pipelined connection with other such
   * reads (src/db/pipeline.ts); in a transaction, and on embedded storage, it is query().
   */
  read<Row = Record<string, unknown>>(name: string, sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /**
   * One self-contained write by a named statement (its own transaction), pipelined like read() outside a
   * transaction on PostgreSQL, on connections whose lock_timeout is short: a statement that would wait
   * on a lock longer fails with a DbError that isLockTimeout, and the caller takes its general way
   * (a transaction on the pool). In a transaction, and on embedded storage, it is query().
   */
  write<Row = Record<string, unknown>>(name: string, sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Tells the channel's listeners (db.listen, in every process) that the work written so far has committed:
   * at once outside a transaction, after COMMIT in one (never when it rolls back). A hint that wakes a
   * worker waiting on its poll interval (src/db/signals.ts), not a message: it carries nothing.
   */
  signal(channel: string): void;
}

export interface Db extends Queryable {
  readonly kind: 'embedded' | 'postgres';
  /** Runs fn in one transaction; retried on serialization failure or deadlock. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Resolves when storage takes writes now: on PostgreSQL a reachable primary (a standby in recovery is a 25006 DbError). */
  ping(): Promise<void>;
  /**
   * Receives NOTIFY messages on a channel (on PostgreSQL from every process on the database, over a
   * connection of its own that reconnects by itself). handlers.reset runs whenever messages may have been
   * missed (the connection dropped, or came back): whoever caches on the strength of these messages must
   * drop its cache then, and must not trust it while `live` is false.
   */
  listen(channel: string, handlers: NotificationHandlers): Promise<Subscription>;
  close(): Promise<void>;
}

export interface NotificationHandlers {
  message(payload: string): void;
  reset(): void;
}

export interface Subscription {
  /** True while every message on the channel reaches the handler; false while (re)connecting. */
  readonly live: boolean;
  close(): Promise<void>;
}

/** Channel names are fixed identifiers of ours, never user input; checked anyway, as they go into SQL text. */
export function checkChannelName(channel: string): string {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`invalid notification channel name: ${channel}`);
  return channel;
}

/** read() and write() where nothing is pipelined (a transaction, embedded storage): query() with the statement's name. */
export function unpipelined(query: Queryable['query']): Pick<Queryable, 'read' | 'write'> {
  return {
    read: <Row>(name: string, sql: string, params?: readonly unknown[]) => query<Row>(sql, params, name),
    write: <Row>(name: string, sql: string, params?: readonly unknown[]) => query<Row>(sql, params, name),
  };
}

/** A storage failure with its SQLSTATE, mapped once here (as supabase's DBError.fromDBError). */
export class DbError extends Error {
  constructor(
    message: string,
    readonly sqlState: string | null,
    readonly constraint: string | null,
  ) {
    super(message);
  }
  get isUniqueViolation(): boolean {
    return this.sqlState === '23505';
  }
  /** A CHECK constraint (23514 check_violation) refused the write; PGlite may name it only in the message. */
  violatesCheck(constraint: string): boolean {
    return this.sqlState === '23514' && (this.constraint === constraint || this.message.includes(constraint));
  }
  /** lock_timeout ran out (55P03 lock_not_available): the statement gave up waiting, nothing was written. */
  get isLockTimeout(): boolean {
    return this.sqlState === '55P03';
  }
  get isRetryable(): boolean {
    return this.sqlState === '40001' || this.sqlState === '40P01';
  }
  /**
   * The database could not be reached, went away (57P01-57P03), is read-only for now (25006), cancelled a stuck statement (57014) or a statement gave
   * up waiting on a lock (55P03, where its caller had no way around it): a 503, not a 500.
   */
  get isUnavailable(): boolean {
    return (
      this.sqlState === null ||
      this.sqlState.startsWith('08') ||
      this.sqlState === '57P01' ||
      this.sqlState === '57P02' ||
      this.sqlState === '57P03' ||
      // A read-only transaction: Sika opens none itself, so this is a server in recovery, e.g. a standby a
      // proxy routed to before its promotion finished during a failover (deploy/ha/README.md).
      this.sqlState === '25006' ||
      this.sqlState === '57014' ||
      this.sqlState === '55P03'
    );
  }

  /**
   * The connection that raised this should not be used again: it is gone (no SQLSTATE, 08*), its server is
   * shutting down or crashed (57P01-57P03), or it reaches a server in recovery (25006), which after a
   * failover means a demoted primary or a standby not yet promoted: a new connection through the proxy
   * reaches the primary. A cancelled statement (57014) or a lock timeout (55P03) leaves a good connection.
   */
  get dropsConnection(): boolean {
    return this.isUnavailable && this.sqlState !== '57014' && this.sqlState !== '55P03';
  }

  static from(error: unknown): DbError {
    if (error instanceof DbError) return error;
    const e = error as { message?: string; code?: string; constraint?: string };
    const sqlState = typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : null;
    return new DbError(e?.message ?? String(error), sqlState, e?.constraint ?? null);
  }
}

/**
 * A warning (SQLSTATE class 01) while a statement commits (COMMIT, or a statement outside a transaction). The one
 * PostgreSQL sends there is a commit waiting for the synchronous standby being cancelled: "canceling wait for
 * synchronous replication", committed locally only (src/backend/replication/syncrep.c). Sika's statements warn
 * of nothing else, so any class 01 warning counts.
 */
export const isUnconfirmedCommitWarning = (notice: { code?: string }): boolean =>
  notice.code?.startsWith('01') === true;

/** A commit the synchronous standby never confirmed: 503 (57014), so the client retries with the same key. */
export const unconfirmedCommit = (warning: string): DbError =>
  new DbError(`the commit was not confirmed by the synchronous standby: ${warning}`, '57014', null);

/**
 * Storage work in flight, so close() lets handlers that are still running finish first: a request whose
 * client hung up is no longer tracked by the HTTP server, but its handler goes on querying.
 */
export class InFlight {
  private active = 0;
  private lastEndMs = 0;

  async run<T>(work: () => Promise<T>): Promise<T> {
    this.active++;
    try {
      return await work();
    } finally {
      this.active--;
      this.lastEndMs = Date.now();
    }
  }

  /** Resolves once nothing has run for quietMs (a handler between two queries), or after maxMs. */
  async settle(quietMs = 50, maxMs = 5_000): Promise<void> {
    const deadline = Date.now() + maxMs;
    while (Date.now() < deadline && (this.active > 0 || Date.now() - this.lastEndMs < quietMs)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

export const TRANSACTION_ATTEMPTS_MAX = 5;

export async function withRetries<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      const dbError = error instanceof DbError ? error : null;
      if (!dbError?.isRetryable || attempt >= TRANSACTION_ATTEMPTS_MAX) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * 5 + Math.random() * 10));
    }
  }
}

/** int8 values travel as JS numbers; refuse any that would lose precision. */
export function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`int8 value ${value} exceeds the safe integer range`);
  return n;
}
