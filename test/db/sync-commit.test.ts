// A commit that waited for the synchronous standby and was cancelled before the standby confirmed it is
// committed on the primary only, yet PostgreSQL answers the COMMIT with success after a WARNING. With
// synchronous replication (deploy/ha, issue 20) a failover would then lose a write Sika had acknowledged.
// Sika (src/db/postgres.ts, confirmed; src/db/pipeline.ts for pipelined statements) reads that warning and
// fails the transaction, or the one-statement write, as unavailable (503: the client retries with the same
// key) instead of reporting success.
//
// A private PostgreSQL (test/support/private-postgres.ts) whose synchronous_standby_names names a standby that
// never connects makes every commit wait; pg_cancel_backend cancels the wait, as an operator clearing commits
// stuck behind a lost standby would (statement_timeout does not: PostgreSQL turns it off before the commit).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { DbError, type Db } from '../../src/db/index.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { toSikaError } from '../../src/http/error-handler.ts';
import { statusOf } from '../../src/http/errors.ts';
import { findPgBin, pgUser, PrivatePostgres } from '../support/private-postgres.ts';

const bin = findPgBin();
const WAIT_SEEN_WITHIN_MS = 5_000;

describe('a commit the synchronous standby never confirmed', {
  skip: bin ? false : 'no PostgreSQL binaries (initdb, pg_ctl) under /usr/lib/postgresql/*/bin and no PG_BIN',
}, () => {
  let instance: PrivatePostgres | null = null;
  let db: Db | null = null;
  /** A connection whose commits do not wait for the standby: setup and checks. */
  let local: pg.Client | null = null;
  let skipped: string | null = null;

  before(async () => {
    const user = await pgUser();
    if (typeof user === 'string') {
      skipped = user;
      return;
    }
    instance = await PrivatePostgres.create(bin!, user, ['synchronous_standby_names=standby_that_never_connects']);
    local = new pg.Client({ connectionString: `${instance.url}/postgres`, options: '-c synchronous_commit=local' });
    await local.connect();
    await local.query('CREATE TABLE sync_probe (id integer PRIMARY KEY)');
    db = await openPostgres(`${instance.url}/postgres`, 2);
  });
  after(async () => {
    await db?.close();
    await local?.end();
    await instance?.destroy();
  });

  /** Starts a write, cancels its wait for the standby once seen, and returns what the write answered. */
  async function cancelledWhileWaiting(write: () => Promise<unknown>): Promise<unknown> {
    const pending = write().catch((error: unknown) => error);
    const deadline = Date.now() + WAIT_SEEN_WITHIN_MS;
    let cancelled = false;
    while (!cancelled && Date.now() < deadline) {
      const { rows } = await local!.query<{ cancelled: boolean }>(
        "SELECT pg_cancel_backend(pid) AS cancelled FROM pg_stat_activity WHERE wait_event = 'SyncRep'",
      );
      cancelled = rows.some((row) => row.cancelled);
      if (!cancelled) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(cancelled, 'the commit was seen waiting for the standby (wait_event SyncRep) and cancelled');
    return pending;
  }

  /** The write failed as unconfirmed (a 503), yet the primary kept the row: only a retry with the same key may report it. */
  async function assertUnconfirmedButKept(outcome: unknown, id: number): Promise<void> {
    assert.ok(outcome instanceof DbError, `the write must fail, got ${JSON.stringify(outcome)}`);
    assert.equal(outcome.sqlState, '57014');
    assert.match(outcome.message, /not confirmed by the synchronous standby/);
    assert.equal(statusOf(toSikaError(outcome)), 503);
    const { rows } = await local!.query('SELECT id FROM sync_probe WHERE id = $1', [id]);
    assert.deepEqual(rows, [{ id }], 'the hazard is real: the row is committed on the primary');
  }

  it('is a 503, not a success, though the primary kept it', async (t) => {
    if (skipped) return t.skip(skipped);
    const outcome = await cancelledWhileWaiting(() =>
      db!.transaction(async (tx) => {
        await tx.query('INSERT INTO sync_probe (id) VALUES (1)');
        return 'acknowledged';
      }),
    );
    await assertUnconfirmedButKept(outcome, 1);
  });

  it('a statement outside a transaction (it commits by itself) is a 503 too', async (t) => {
    if (skipped) return t.skip(skipped);
    await assertUnconfirmedButKept(
      await cancelledWhileWaiting(() => db!.query('INSERT INTO sync_probe (id) VALUES (3) RETURNING id')),
      3,
    );
    await assertUnconfirmedButKept(
      await cancelledWhileWaiting(() => db!.exec('INSERT INTO sync_probe (id) VALUES (4)')),
      4,
    );
  });

  it('a pipelined one-statement write is a 503 too, and the statements sent on its connection afterwards are answered as usual', async (t) => {
    if (skipped) return t.skip(skipped);
    await assertUnconfirmedButKept(
      await cancelledWhileWaiting(() =>
        db!.write('sync_probe_insert', 'INSERT INTO sync_probe (id) VALUES ($1) RETURNING id', [5]),
      ),
      5,
    );
    // Every connection of the write pipeline (taken in turn) answers a statement sent after the warning.
    const reads = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        db!.write('sync_probe_count', 'SELECT count(*)::int AS n, $1::int AS i FROM sync_probe', [i]),
      ),
    );
    assert.deepEqual(
      reads.map((rows) => rows.length),
      Array.from({ length: 8 }, () => 1),
    );
  });

  it('a commit that does not wait for the standby is not affected', async (t) => {
    if (skipped) return t.skip(skipped);
    const outcome = await db!.transaction(async (tx) => {
      await tx.exec('SET LOCAL synchronous_commit = local');
      await tx.query('INSERT INTO sync_probe (id) VALUES (2)');
      return 'acknowledged';
    });
    assert.equal(outcome, 'acknowledged');
  });
});
