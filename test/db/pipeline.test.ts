// Pipelined statements (src/db/pipeline.ts): many reads share two connections and go out in one write
// per connection per turn of the event loop, each read still gets its own rows and its own error, a lost
// connection fails only the reads in flight on it, and inside a transaction a read is the transaction's.
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { DbError, openDb, type Db } from '../../src/db/index.ts';
import { Pipeline } from '../../src/db/pipeline.ts';

const databaseUrl = process.env.DATABASE_URL ?? null;

describe('db.read on either storage', () => {
  let db: Db;
  before(async () => {
    db = await openDb({ databaseUrl, dataDir: null });
    await db.exec('CREATE TABLE IF NOT EXISTS read_pipeline_rows (id integer PRIMARY KEY, label text NOT NULL)');
    await db.exec('DELETE FROM read_pipeline_rows');
    await db.query(`INSERT INTO read_pipeline_rows SELECT n, 'row ' || n FROM generate_series(1, 300) AS n`);
  });
  after(async () => {
    await db.exec('DROP TABLE IF EXISTS read_pipeline_rows');
    await db.close();
  });

  it('gives 300 concurrent reads each its own row', async () => {
    const ids = Array.from({ length: 300 }, (_, i) => i + 1);
    const rows = await Promise.all(
      ids.map((id) =>
        db.read<{ id: number; label: string }>(
          'read_pipeline_row',
          'SELECT id, label FROM read_pipeline_rows WHERE id = $1',
          [id],
        ),
      ),
    );
    assert.deepEqual(
      rows.map((r) => r[0]),
      ids.map((id) => ({ id, label: `row ${id}` })),
    );
  });

  it('fails only the read whose statement fails, with a DbError', async () => {
    const sql = 'SELECT $1::integer AS n';
    const results = await Promise.allSettled(
      ['1', 'not a number', '3'].map((value) => db.read<{ n: number }>('read_pipeline_cast', sql, [value])),
    );
    assert.equal(results[0]!.status, 'fulfilled');
    assert.equal(results[2]!.status, 'fulfilled');
    assert.deepEqual((results[2] as PromiseFulfilledResult<{ n: number }[]>).value, [{ n: 3 }]);
    assert.equal(results[1]!.status, 'rejected');
    const error = (results[1] as PromiseRejectedResult).reason as unknown;
    assert.ok(error instanceof DbError);
    assert.equal(error.sqlState, '22P02');
    // The statement stays usable on the connection after the failure.
    assert.deepEqual(await db.read('read_pipeline_cast', sql, ['4']), [{ n: 4 }]);
  });

  it('reads inside a transaction see the transaction', async () => {
    await db.transaction(async (tx) => {
      await tx.query(`UPDATE read_pipeline_rows SET label = 'changed' WHERE id = 1`);
      const [row] = await tx.read<{ label: string }>(
        'read_pipeline_row',
        'SELECT id, label FROM read_pipeline_rows WHERE id = $1',
        [1],
      );
      assert.equal(row!.label, 'changed');
      if (db.kind === 'postgres') {
        // Outside the transaction (another connection) the change is not visible yet. Embedded storage is
        // one connection: a read outside would wait for the transaction to end.
        const [outside] = await db.read<{ label: string }>(
          'read_pipeline_row',
          'SELECT id, label FROM read_pipeline_rows WHERE id = $1',
          [1],
        );
        assert.equal(outside!.label, 'row 1');
      }
      await tx.query(`UPDATE read_pipeline_rows SET label = 'row 1' WHERE id = 1`);
    });
  });
});

describe('Pipeline on PostgreSQL', { skip: databaseUrl ? false : 'needs DATABASE_URL' }, () => {
  /** A pipeline whose sockets count the writes they make (each _write or _writev is one system call). */
  function countingPipeline() {
    const counter = { writes: 0 };
    const pipeline = new Pipeline(() => {
      const client = new pg.Client({ connectionString: databaseUrl!, pipeline: true } as pg.ClientConfig);
      const stream = (
        client as unknown as {
          connection: {
            stream: Socket & { _write: (...args: unknown[]) => unknown; _writev: (...args: unknown[]) => unknown };
          };
        }
      ).connection.stream;
      for (const method of ['_write', '_writev'] as const) {
        const original = stream[method];
        stream[method] = function (this: Socket, ...args: unknown[]) {
          counter.writes++;
          return original.apply(this, args);
        };
      }
      return client;
    }, 2);
    return { pipeline, counter };
  }

  it('sends the reads of one turn as one write per connection', async () => {
    const { pipeline, counter } = countingPipeline();
    try {
      // Connect both connections and prepare the statement on each first.
      await Promise.all([1, 2, 3, 4].map((n) => pipeline.query('pipeline_count', 'SELECT $1::integer AS n', [n])));
      counter.writes = 0;
      const rows = await Promise.all(
        Array.from({ length: 100 }, (_, n) =>
          pipeline.query<{ n: number }>('pipeline_count', 'SELECT $1::integer AS n', [n]),
        ),
      );
      assert.deepEqual(
        rows.map((r) => r[0]!.n),
        Array.from({ length: 100 }, (_, n) => n),
      );
      assert.ok(
        counter.writes <= 2,
        `100 reads in one turn took ${counter.writes} socket writes (expected one per connection)`,
      );
    } finally {
      await pipeline.close();
    }
  });

  it('fails the reads in flight on a lost connection and reconnects for the next', async () => {
    const db = await openDb({ databaseUrl, dataDir: null }, { migrate: false });
    const admin = new pg.Client({ connectionString: databaseUrl! });
    await admin.connect();
    try {
      const pids = async () =>
        (await db.read<{ pid: number }>('pipeline_pid', 'SELECT pg_backend_pid() AS pid', [])).map((r) => r.pid);
      const before = new Set([...(await pids()), ...(await pids()), ...(await pids()), ...(await pids())]);
      assert.equal(before.size, 2, 'reads share two connections');
      // A read in flight (sleeping) when its backend is terminated fails as unavailable (a 503), not a 500.
      const slow = Array.from({ length: 4 }, () => db.read('pipeline_sleep', 'SELECT pg_sleep(1) AS slept', []));
      // Settled from the start: the reads may fail before the terminate call returns, and a rejection nobody
      // is waiting for yet would fail the test as unhandled.
      const settled = Promise.allSettled(slow);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [[...before]]);
      for (const result of await settled) {
        assert.equal(result.status, 'rejected');
        const error = (result as PromiseRejectedResult).reason as unknown;
        assert.ok(
          error instanceof DbError && error.isUnavailable,
          `expected an unavailable DbError, got ${String(error)}`,
        );
      }
      // The next reads run on new connections. (A read sent before the client has seen its connection
      // close may still fail, as unavailable; the one after it reconnects.)
      const after = new Set<number>();
      for (let round = 0; round < 10 && after.size < 2; round++) {
        try {
          for (const pid of await pids()) after.add(pid);
        } catch (error) {
          assert.ok(
            error instanceof DbError && error.isUnavailable,
            `expected an unavailable DbError, got ${String(error)}`,
          );
        }
      }
      assert.equal(after.size, 2);
      for (const pid of after) assert.ok(!before.has(pid), 'the next reads run on new connections');
    } finally {
      await admin.end();
      await db.close();
    }
  });

  it('refuses reads once closed, as unavailable storage', async () => {
    const db = await openDb({ databaseUrl, dataDir: null }, { migrate: false });
    await db.read('pipeline_one', 'SELECT 1 AS one', []);
    await db.close();
    await assert.rejects(
      () => db.read('pipeline_one', 'SELECT 1 AS one', []),
      (error: unknown) => error instanceof DbError && error.isUnavailable,
    );
  });
});
