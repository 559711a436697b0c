// Write probe for the HA deployment: N clients, each on its own connection through HAProxy's read-write
// port, insert a row into ha_probe.probe every few milliseconds until stopped (SIGINT/SIGTERM) or for
// --seconds. A failed statement or connection is recorded (SQLSTATE, message, time) and the client
// reconnects on its next turn. At the end every acknowledged id is looked up again through the same port:
// with synchronous_mode on none may be missing after a failover. Prints one JSON summary on stdout.
//
//   node deploy/ha/probe.mjs [--seconds 30] [--clients 4] [--interval-ms 20] [--url postgres://...]
//
// The URL defaults to DATABASE_URL from $SIKA_HA_DIR/env (written by up.sh) with the database ha_probe.
// Uses the `pg` driver from the repository's node_modules (run it from the repository).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
if (args.includes('--help') || args.includes('-h')) {
  console.log(
    readFileSync(new URL(import.meta.url), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('//'))
      .map((l) => l.slice(3))
      .join('\n'),
  );
  process.exit(0);
}

function defaultUrl() {
  const dir = process.env.SIKA_HA_DIR ?? '/tmp/sika-ha';
  const env = readFileSync(join(dir, 'env'), 'utf8');
  const line = env.split('\n').find((l) => l.startsWith('DATABASE_URL='));
  if (!line) throw new Error(`no DATABASE_URL in ${join(dir, 'env')}`);
  const url = new URL(line.slice('DATABASE_URL='.length));
  url.pathname = '/ha_probe';
  return url.toString();
}

const url = opt('url', null) ?? defaultUrl();
const seconds = Number(opt('seconds', '0'));
const clients = Number(opt('clients', '4'));
const intervalMs = Number(opt('interval-ms', '20'));
const started = performance.now();
const rel = () => Math.round(performance.now() - started) / 1000;

const acked = [];
const errors = [];
let stopping = false;
const stop = () => {
  stopping = true;
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
if (seconds > 0) setTimeout(stop, seconds * 1000);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function record(client, phase, error) {
  errors.push({ at: rel(), client, phase, code: error.code ?? null, message: String(error.message ?? error) });
}

async function worker(n) {
  let conn = null;
  while (!stopping) {
    try {
      if (!conn) {
        conn = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000, statement_timeout: 10000 });
        // An error while idle (a FATAL such as 57P01 between two inserts, the socket closing): recorded,
        // and the next query on this connection fails too, which makes the worker reconnect.
        conn.on('error', (error) => record(n, 'idle', error));
        try {
          await conn.connect();
        } catch (error) {
          record(n, 'connect', error);
          conn = null;
          await sleep(intervalMs);
          continue;
        }
      }
      const res = await conn.query('insert into probe (note) values ($1) returning id', [`probe client ${n}`]);
      acked.push({ id: Number(res.rows[0].id), at: rel() });
    } catch (error) {
      record(n, 'query', error);
      conn?.end().catch(() => {});
      conn = null;
    }
    await sleep(intervalMs);
  }
  await conn?.end().catch(() => {});
}

await Promise.all(Array.from({ length: clients }, (_, i) => worker(i + 1)));

// Every acknowledged write must still be there (looked up on the current primary).
let missing = null;
for (let attempt = 0; attempt < 60 && missing === null; attempt++) {
  const conn = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  conn.on('error', () => {});
  try {
    await conn.connect();
    const ids = acked.map((a) => a.id);
    const res = await conn.query('select count(*)::int as n from probe where id = any($1::bigint[])', [ids]);
    missing = ids.length - res.rows[0].n;
  } catch {
    await sleep(500);
  } finally {
    await conn.end().catch(() => {});
  }
}

// The outage as a client sees it: from the first error to the first acknowledged write after the last error.
const firstError = errors.length ? errors[0].at : null;
const lastError = errors.length ? errors[errors.length - 1].at : null;
const firstOkAfter = lastError === null ? null : (acked.find((a) => a.at > lastError)?.at ?? null);
const kinds = {};
for (const e of errors) {
  const key = `${e.phase} ${e.code ?? '-'} ${e.message}`;
  kinds[key] = (kinds[key] ?? 0) + 1;
}
console.log(
  JSON.stringify(
    {
      seconds: rel(),
      clients,
      writes_acknowledged: acked.length,
      errors: errors.length,
      error_kinds: kinds,
      first_error_at: firstError,
      last_error_at: lastError,
      first_write_after_errors_at: firstOkAfter,
      client_outage_seconds:
        firstError === null || firstOkAfter === null ? null : Math.round((firstOkAfter - firstError) * 10) / 10,
      acknowledged_missing: missing,
    },
    null,
    2,
  ),
);
process.exit(missing === 0 ? 0 : 1);
