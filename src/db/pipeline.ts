// Pipelined statements on PostgreSQL. The hot lookups (a session by id, the payer's view, an API key
// by prefix) and the one-statement writes (the session insert, the payout statement) are short.
// Instead of one pooled connection each, with one socket write and one backend wake-up each, they
// share a few connections in pg's pipeline mode, and the statements started in one turn of the event loop go out as one write
// per connection (the sockets are corked until the loop's check phase). Measured on 2 cores under 50
// connections: PostgreSQL CPU per session read fell from about 80 to about 25 us, and the server's
// from about 220 to about 120 us.
//
// A statement queued behind one that waits on a lock waits with it, so only statements that cannot
// wait (plain reads), or that give up quickly (writes on connections with a short lock_timeout), are
// sent this way. Everything inside a transaction uses the pool.
import type { Socket } from 'node:net';
import type pg from 'pg';
import { ConnectionEpoch } from './epoch.ts';
import { DbError, isUnconfirmedCommitWarning, unconfirmedCommit } from './types.ts';

export class Pipeline {
  private readonly slots: (Promise<pg.Client> | null)[];
  /** The connected client of each slot (null while it connects). */
  private readonly clients: (pg.Client | null)[];
  /** The last commit warning each connection received, and how many (see query()). */
  private readonly warnings = new WeakMap<pg.Client, { count: number; message: string }>();
  private turn = 0;
  private readonly corked = new Set<Socket>();
  private flushScheduled = false;
  private closed = false;

  /**
   * newClient: a new, unconnected client with pipeline mode on; size: the connections shared; epoch: shared
   * with the pool, a connection opened before the last connection failure anywhere is replaced on next use.
   */
  constructor(
    private readonly newClient: () => pg.Client,
    size: number,
    private readonly epoch: ConnectionEpoch = new ConnectionEpoch(),
  ) {
    this.slots = new Array<Promise<pg.Client> | null>(size).fill(null);
    this.clients = new Array<pg.Client | null>(size).fill(null);
  }

  async query<Row>(name: string, text: string, values: readonly unknown[]): Promise<Row[]> {
    if (this.closed) throw new Error('the pipeline is closed');
    const i = this.turn++ % this.slots.length;
    let client = await this.client(i);
    if (!this.epoch.isCurrent(client)) {
      this.discard(i, client);
      client = await this.client(i);
    }
    this.cork(client);
    const warningsBefore = this.warnings.get(client)?.count ?? 0;
    try {
      const result = await client.query({ name, text, values: values as unknown[] });
      // A one-statement write commits by itself, and a commit the synchronous standby never confirmed is answered
      // with success after a warning (see confirmed in postgres.ts). In pipeline mode a notice is not tied
      // to its statement, so every statement answered on this connection since the warning arrived is
      // unconfirmed: a 503, and the client's retry with the same key finds what did commit. Such warnings
      // need an operator cancelling commits stuck behind a lost standby, so the statements caught with the
      // guilty one cost nothing in practice.
      const warning = this.warnings.get(client);
      if (warning && warning.count > warningsBefore) throw unconfirmedCommit(warning.message);
      return result.rows as Row[];
    } catch (error) {
      // A connection that failed, or reaches a server in recovery (a demoted primary, a standby not yet
      // promoted: failover), leaves its slot: the next statement connects again, through the proxy to the primary.
      if (DbError.from(error).dropsConnection) {
        this.discard(i, client);
        this.epoch.advance();
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((slot) => slot?.then((client) => client.end()).catch(() => {})));
  }

  /** The slot's connection, connecting it if it has none; a connection that fails or ends leaves its slot. */
  private client(i: number): Promise<pg.Client> {
    const existing = this.slots[i];
    if (existing) return existing;
    const client = this.newClient();
    this.epoch.stamp(client);
    const slot = client.connect().then(() => {
      if (this.slots[i] === slot) this.clients[i] = client;
      return client;
    });
    const leave = () => {
      if (this.slots[i] === slot) {
        this.slots[i] = null;
        this.clients[i] = null;
      }
    };
    // The statements in flight on a broken connection fail (pg errors them); the next one reconnects.
    client.on('error', () => {
      leave();
      client.end().catch(() => {});
    });
    client.on('end', leave);
    client.on('notice', (notice: { code?: string; message?: string }) => {
      if (!isUnconfirmedCommitWarning(notice)) return;
      const count = (this.warnings.get(client)?.count ?? 0) + 1;
      this.warnings.set(client, { count, message: notice.message ?? notice.code ?? 'warning' });
    });
    slot.catch(leave);
    this.slots[i] = slot;
    return slot;
  }

  /** Empties slot i if it still holds this client, and closes the client (statements still on it fail). */
  private discard(i: number, client: pg.Client): void {
    if (this.clients[i] === client) {
      this.slots[i] = null;
      this.clients[i] = null;
    }
    client.end().catch(() => {});
  }

  /** Holds the connection's writes until the event loop's check phase, then sends them together. */
  private cork(client: pg.Client): void {
    const stream = (client as unknown as { connection?: { stream?: Socket } }).connection?.stream;
    if (!stream || typeof stream.cork !== 'function' || this.corked.has(stream)) return;
    stream.cork();
    this.corked.add(stream);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    for (const stream of this.corked) stream.uncork();
    this.corked.clear();
  };
}
