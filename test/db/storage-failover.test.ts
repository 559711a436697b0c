// What Sika's storage layer does when its database server changes under it (issue 20), without a cluster:
// the server of a private database is made read-only (ALTER DATABASE ... SET default_transaction_read_only,
// then every connection is cut), as a client sees a failover through a proxy that routes to a standby not
// yet promoted, then writable again. Over real HTTP:
//   - while it is read-only, writes answer 503 SERVICE_UNAVAILABLE with Retry-After and the envelope (never a
//     500), and /readyz answers 503;
//   - once it takes writes again, the same process recovers without a restart: the pool and the pipelines
//     close the connections that reached the read-only server (src/db/epoch.ts), /readyz is 200 and every
//     write succeeds, none fails on a stale read-only connection;
//   - pipelined statements on a connection that broke fail as DbErrors that are unavailable (503), and the
//     next statement reconnects.
// The background jobs' pause (src/db/availability.ts) has its own tests at the end; the whole failover,
// through Patroni and HAProxy, is test/reliability/failover.test.ts. PostgreSQL only: PGlite has no server.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { Registry } from 'prom-client';
import { DbError, StorageAvailability, type Db } from '../../src/db/index.ts';
import { storageAvailabilityMetrics } from '../../src/http/metrics.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { bearer, startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const onlyPostgres = storageKind === 'postgres' ? false : 'needs a PostgreSQL server (DATABASE_URL)';
const WRITES_AFTER_RECOVERY = 60;

function databaseUrlFor(name: string): string {
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A TCP proxy to PostgreSQL whose cut() closes every connection through it at once, with no word from the server. */
async function startCuttableProxy(target: URL): Promise<{ port: number; cut(): void; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        sockets.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Ends every other connection to the database: what a crash or a switchover does to a client's connections. */
const cutConnections = (name: string) =>
  admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);

describe('storage through a server that turns read-only and back (PostgreSQL)', { skip: onlyPostgres }, () => {
  const name = `sika_failover_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let t: TestContext;
  let base: string;
  let key: string;

  const createSession = (n: number) =>
    fetch(`${base}/api/v1/sessions`, {
      method: 'POST',
      headers: {
        ...bearer(key),
        'content-type': 'application/json',
        'idempotency-key': `failover-${n}-${randomUUID()}`,
      },
      body: JSON.stringify({ amount_minor: 1000 + n, invoice_ref: `FAILOVER-${n}` }),
    });

  before(async () => {
    await admin(`CREATE DATABASE ${name}`);
    t = await startTestApp({ DATABASE_URL: databaseUrlFor(name) });
    base = await t.listen();
    key = (await t.merchant()).test_api_key;
  });
  after(async () => {
    await t?.close();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('answers 503 with Retry-After while no server takes writes, then recovers without a restart', async () => {
    // Warm: pool and pipelined connections open to the writable server.
    for (let n = 0; n < 10; n++) assert.equal((await createSession(n)).status, 201);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);

    await admin(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    await cutConnections(name);
    for (let n = 10; n < 30; n++) {
      const res = await createSession(n);
      const body = (await res.json()) as { error?: { code: string; retry_after_seconds?: number } };
      assert.equal(res.status, 503, `write ${n} on a read-only server: ${res.status} ${JSON.stringify(body)}`);
      assert.equal(body.error?.code, 'SERVICE_UNAVAILABLE');
      assert.equal(res.headers.get('retry-after'), '1');
    }
    const notReady = await fetch(`${base}/readyz`);
    assert.equal(notReady.status, 503);
    assert.equal(notReady.headers.get('retry-after'), '1');
    // Reads still work meanwhile (a standby has the data). Many at once leave the pool full of connections
    // to the read-only server, as a busy process would have after a failover routed it to a standby.
    const reads = await Promise.all(
      Array.from({ length: 40 }, () => fetch(`${base}/api/v1/sessions?limit=1`, { headers: bearer(key) })),
    );
    assert.deepEqual([...new Set(reads.map((r) => r.status))], [200]);

    // The server takes writes again. Connections opened while it was read-only stay read-only (the setting is
    // read at connect): they are in the pool and the pipelines now, and the first failure closes them all.
    await admin(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
    const statuses: number[] = [];
    let readyAt = -1;
    for (let n = 0; n < 10 && readyAt < 0; n++) {
      if ((await fetch(`${base}/readyz`)).status === 200) readyAt = n;
    }
    assert.ok(readyAt >= 0, '/readyz stayed 503 after the server took writes again');
    for (let n = 0; n < WRITES_AFTER_RECOVERY; n++) statuses.push((await createSession(100 + n)).status);
    assert.deepEqual(
      statuses.filter((s) => s !== 201),
      [],
      `every write after /readyz turned 200 succeeds, none on a stale read-only connection: ${statuses.join(' ')}`,
    );
  });
});

describe('the pool and the pipelines after their connections are cut (PostgreSQL)', { skip: onlyPostgres }, () => {
  let db: Db;
  before(async () => {
    db = await openPostgres(process.env.DATABASE_URL!, 4);
  });
  after(() => db?.close());

  it('fails the statements on cut connections as unavailable, then reconnects by itself', async () => {
    const read = () => db.read<{ n: number }>('failover_backend', 'SELECT pg_backend_pid() AS n', []);
    const write = () => db.write<{ n: number }>('failover_backend_write', 'SELECT pg_backend_pid() AS n', []);
    const before = new Set(
      [
        ...(await Promise.all([
          read(),
          read(),
          write(),
          write(),
          db.query<{ n: number }>('SELECT pg_backend_pid() AS n'),
        ])),
      ].map((rows) => rows[0]!.n),
    );
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid IN (${[...before].join(',')})`);
    const results = await Promise.allSettled([read(), read(), write(), write()]);
    for (const result of results) {
      if (result.status === 'rejected') {
        assert.ok(result.reason instanceof DbError, `a DbError, not ${String(result.reason)}`);
        assert.equal(result.reason.isUnavailable, true, `unavailable (503): ${result.reason.message}`);
      }
    }
    // Whatever failed, the next statements run on new connections.
    for (let i = 0; i < 4; i++) {
      const [r] = await read();
      const [w] = await write();
      const [q] = await db.query<{ n: number }>('SELECT pg_backend_pid() AS n');
      for (const pid of [r!.n, w!.n, q!.n])
        assert.ok(!before.has(pid), `statement ran on a cut connection (backend ${pid})`);
    }
    await db.transaction(async (tx) => {
      await tx.query('SELECT 1');
    });
    await db.ping();
  });

  it('statements whose connections are cut while they run fail with a DbError, and the process lives on', async () => {
    // As HAProxy cuts a client's connections when it marks the old primary down (on-marked-down
    // shutdown-sessions), or a crash resets them: the socket closes with no message from PostgreSQL. A client
    // checked out of the pool has no pool listener then: without one of ours, the lost connection's 'error'
    // event would be unhandled and end the process (this test file with it).
    const proxy = await startCuttableProxy(new URL(process.env.DATABASE_URL!));
    const url = new URL(process.env.DATABASE_URL!);
    url.host = `127.0.0.1:${proxy.port}`;
    const cutDb = await openPostgres(url.toString(), 4);
    try {
      const pending = [
        cutDb.transaction((tx) => tx.query('SELECT pg_sleep(5)')),
        cutDb.query('SELECT pg_sleep(5)'),
        cutDb.read('failover_sleep_read', 'SELECT pg_sleep(5)', []),
        cutDb.write('failover_sleep_write', 'SELECT pg_sleep(5)', []),
      ].map((p) =>
        p.then(
          () => null,
          (e: unknown) => e,
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      proxy.cut();
      for (const error of await Promise.all(pending)) {
        assert.ok(error instanceof DbError, `a DbError, not ${String(error)}`);
        assert.equal(error.isUnavailable, true, error.message);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Everything works again on new connections through the same proxy.
      await cutDb.transaction((tx) => tx.query('SELECT 1'));
      await cutDb.read('failover_one', 'SELECT 1', []);
      await cutDb.write('failover_one_write', 'SELECT 1', []);
      await cutDb.ping();
    } finally {
      await cutDb.close();
      await proxy.close();
    }
  });
});

describe('background jobs pause while storage is unavailable (src/db/availability.ts)', () => {
  const lines: { level: string; obj: object; msg: string }[] = [];
  // The probe's timer does not hold a process open (a server's sockets do): these tests keep the loop alive.
  let keepAlive: NodeJS.Timeout;
  before(() => {
    keepAlive = setInterval(() => {}, 1_000);
  });
  after(() => clearInterval(keepAlive));
  const log = {
    warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj, msg }),
    info: (obj: object, msg: string) => lines.push({ level: 'info', obj, msg }),
  };

  it('pauses on an outage, probes until a primary answers, resumes once, logging one line each way', async () => {
    lines.length = 0;
    let pings = 0;
    let up = false;
    const availability = new StorageAvailability(
      {
        ping: async () => {
          pings++;
          if (!up) throw new DbError('connection refused', null, null);
        },
      },
      log,
      10,
    );
    assert.equal(
      availability.report(new Error('a job bug')),
      false,
      'a job error that is not an outage is the job’s own',
    );
    assert.equal(availability.report(new DbError('duplicate key', '23505', 'x')), false);
    assert.equal(
      availability.report(new DbError('lock timeout', '55P03', null)),
      false,
      'a lock timeout leaves storage up',
    );
    assert.equal(availability.available, true);

    assert.equal(
      availability.report(new DbError('terminating connection due to administrator command', '57P01', null)),
      true,
    );
    assert.equal(availability.report(new DbError('read-only transaction', '25006', null)), true);
    assert.equal(availability.available, false);
    let resumed = false;
    const waiting = availability.whenAvailable().then(() => {
      resumed = true;
    });
    // Wait for the probes, not a fixed time: under npm test on Node 22, 80 ms saw only 2 probes of 10 ms
    // each (timers ran late), where a quiet process sees 7.
    const deadline = Date.now() + 5_000;
    while (pings < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(resumed, false, 'jobs stay paused while the probe fails');
    assert.ok(pings >= 3, `the probe asks again and again (${pings})`);
    up = true;
    await waiting;
    assert.equal(availability.available, true);
    assert.deepEqual(
      lines.map((l) => l.level),
      ['warn', 'info'],
      'one warning when paused, one line when resumed, not one per job or per probe',
    );
    const pingsAfter = pings;
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(pings, pingsAfter, 'no probing once storage is back');
    availability.stop();
  });

  it('the metrics say whether storage takes work, how many outages paused the jobs and for how long', async () => {
    let up = false;
    const availability = new StorageAvailability(
      {
        ping: async () => {
          if (!up) throw new DbError('connection refused', null, null);
        },
      },
      log,
      10,
    );
    const registry = new Registry();
    storageAvailabilityMetrics(registry, availability);
    const sample = async (name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await registry.metrics())?.[1]);
    assert.deepEqual(
      [
        await sample('sika_storage_available'),
        await sample('sika_storage_outages_total'),
        await sample('sika_storage_outage_seconds_total'),
      ],
      [1, 0, 0],
    );

    for (let outage = 1; outage <= 2; outage++) {
      up = false;
      availability.report(new DbError('the database system is shutting down', '57P03', null));
      availability.report(new DbError('connection refused', null, null));
      assert.equal(await sample('sika_storage_available'), 0);
      assert.equal(
        await sample('sika_storage_outages_total'),
        outage,
        'an outage counts once, however many jobs report it',
      );
      await new Promise((resolve) => setTimeout(resolve, 60));
      up = true;
      await availability.whenAvailable();
      assert.equal(await sample('sika_storage_available'), 1);
    }
    const seconds = await sample('sika_storage_outage_seconds_total');
    assert.ok(
      seconds >= 0.12 && seconds < 5,
      `two outages of at least 60 ms each, counted when they ended: ${seconds} s`,
    );
    availability.stop();
  });

  it('stop() releases jobs waiting for storage, so a shutdown during an outage does not hang', async () => {
    const availability = new StorageAvailability(
      { ping: () => Promise.reject(new DbError('refused', null, null)) },
      log,
      10,
    );
    availability.report(new DbError('gone', '08006', null));
    const waiting = availability.whenAvailable();
    availability.stop();
    await waiting;
  });
});
