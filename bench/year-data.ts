// BENCH_SCALE=year (issue 37, item 4): a busy merchant's year, written by SQL into the bench's PostgreSQL
// database before the scenarios run, so every figure is measured against a database that is not empty.
// The year belongs to the bench's checkout merchant (its Test environment), the merchant whose journeys,
// session reads and searches are measured.
//
//   BENCH_YEAR_FRACTION   scales every count (default 1: 5,000,000 sessions); e.g. 0.01 for a quick run
//
// Per session (i = 1..N, created in time order over the 365 days before now): one payment attempt (MoMo 85%
// over MTN/Telecel/AT, card 10%, bank transfer 5%), status as life has it (70% paid, 15% failed, 15% expired),
// the method and, for a paid one, a receipt number with its Damm check character, as the app writes them;
// two events (checkout.session.pending, then completed/failed/expired) with the payload the app signs, one
// webhook delivery per event and its tries (1 in 25 needed a second try after a 500); for a paid session its
// payment_credit journal entry (provider_clearing +charged, merchant_available -net, fee_revenue -fee: each
// entry sums to zero) and its balance transaction with the running balance, the ledger accounts' cached
// balances moved by the same sums (so unbookedBalances and the balance reads agree). Seeded in chunks of
// CHUNK_SESSIONS sessions per INSERT ... SELECT generate_series, triggers and foreign keys off for the
// seeding transaction (session_replication_role = replica: the rows are correct by construction), then
// VACUUM ANALYZE (autovacuum is off on the bench server).
import pg from 'pg';
import { paymentsFilter, paymentsPage, type PaymentsQuery } from '../src/checkout/payments-list.ts';
import { openDb } from '../src/db/index.ts';
import type { Db } from '../src/db/types.ts';

export const YEAR_SESSIONS = 5_000_000;
const CHUNK_SESSIONS = 250_000; // x2 events, x2 deliveries, ~x2 tries: about 500k rows per statement at most
// Two events per session (pending, then completed, failed or expired): the statements below write exactly two.

export interface YearSeed {
  sessions: number;
  fraction: number;
  /** Per table: rows written and the milliseconds its INSERTs took. */
  tables: { table: string; rows: number; ms: number }[];
  vacuumMs: number;
  totalMs: number;
  databaseBytes: number;
  /** pg_total_relation_size (heap, indexes, TOAST) per table, largest first. */
  tableBytes: { table: string; bytes: number }[];
}

export function yearFraction(): number {
  const raw = process.env.BENCH_YEAR_FRACTION;
  const n = raw === undefined || raw === '' ? 1 : Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new Error(`BENCH_YEAR_FRACTION must be in (0, 1] (got "${raw}")`);
  return n;
}

const SEEDED_TABLES = [
  'checkout_sessions',
  'payment_attempts',
  'events',
  'webhook_deliveries',
  'webhook_delivery_tries',
  'journal_entries',
  'journal_lines',
  'balance_transactions',
] as const;

/** Receipt numbers in SQL: a unique 8-character body from i (a bijection of 2^40) and the check of receipt-number.ts. */
const RECEIPT_FUNCTION = `
CREATE FUNCTION pg_temp.bench_receipt(i bigint) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  x bigint := (i * 1099511627) % 1099511627776;
  body text := '';
  v int;
  interim int := 0;
BEGIN
  FOR k IN 1..8 LOOP
    v := (x % 32)::int;
    x := x / 32;
    body := body || substr(alphabet, v + 1, 1);
    interim := (CASE WHEN interim & 16 <> 0 THEN ((interim << 1) # 37) & 31 ELSE interim << 1 END) # v;
  END LOOP;
  interim := CASE WHEN interim & 16 <> 0 THEN ((interim << 1) # 37) & 31 ELSE interim << 1 END;
  RETURN body || substr(alphabet, interim + 1, 1);
END $$`;

/** bench/search.ts's 40 first and 40 last names: a name prefix matches many rows, as in life. */
const NAMES_FIRST = `'Ama','Kofi','Akosua','Kwame','Abena','Yaw','Efua','Kojo','Adwoa','Kwesi','Esi','Kwabena','Afua','Kwaku','Akua','Fiifi','Yaa','Ekow','Aba','Nana','Mawuli','Selasi','Dzifa','Elikem','Kafui','Senam','Edem','Delali','Fatima','Ibrahim','Amina','Yusif','Zainab','Issah','Mariam','Abdul','Rahina','Sule','Hawa','Musah'`;
const NAMES_LAST = `'Mensah','Owusu','Boateng','Asante','Osei','Appiah','Agyeman','Ofori','Amoah','Darko','Adjei','Badu','Frimpong','Gyamfi','Quaye','Tetteh','Lamptey','Quartey','Nkrumah','Acheampong','Addo','Annan','Sarpong','Bonsu','Opoku','Antwi','Baah','Kyei','Nyarko','Ansah','Mahama','Alhassan','Iddrisu','Abubakar','Dramani','Sulemana','Fuseini','Seidu','Tanko','Zakaria'`;

/** The chunk's sessions, with everything the other tables take from them. */
const SEED_CHUNK = `
CREATE TEMP TABLE seed ON COMMIT DROP AS
SELECT i,
       'cs_year' || lpad(i::text, 19, '0') AS id,
       'att_year' || lpad(i::text, 18, '0') AS attempt_id,
       $3::timestamptz + (i * 31536.0 / $4::float8) * interval '1000 seconds' AS at,
       CASE WHEN i % 10 < 3 THEN 50000 ELSE 100 + (i * 2654435761) % 500000 END::bigint AS amount,
       CASE WHEN i % 20 < 14 THEN 'success' WHEN i % 20 < 17 THEN 'failed' ELSE 'expired' END AS status,
       CASE WHEN i % 20 < 17 THEN 'momo' WHEN i % 20 < 19 THEN 'card' ELSE 'bank_transfer' END AS rail,
       CASE WHEN i % 20 >= 17 THEN NULL WHEN i % 20 < 10 THEN 'mtn' WHEN i % 20 < 14 THEN 'telecel' ELSE 'at' END AS network,
       (ARRAY[${NAMES_FIRST}])[1 + (i / 7) % 40] || ' ' || (ARRAY[${NAMES_LAST}])[1 + (i / 280) % 40] AS customer
  FROM generate_series($1::bigint, $2::bigint) AS i`;

const SEED_DERIVED = `
CREATE TEMP TABLE seed2 ON COMMIT DROP AS
SELECT s.*,
       amount * 15 / 1000 AS fee,
       amount + amount * 15 / 1000 AS charged,
       CASE WHEN status = 'success' THEN pg_temp.bench_receipt(i) END AS receipt,
       CASE WHEN network = 'mtn' THEN '+23324' WHEN network = 'telecel' THEN '+23320' ELSE '+23326' END
         || lpad(((i * 48271) % 10000000)::text, 7, '0') AS phone
  FROM seed s`;

const sessionJson = (status: string, version: string, receipt: string) => `json_build_object(
  'id', s.id, 'object', 'checkout.session', 'status', ${status}, 'amount_minor', s.amount, 'currency', 'GHS',
  'invoice_ref', 'INV-' || lpad(s.i::text, 9, '0'), 'description', 'Order ' || s.i,
  'checkout_url', 'http://127.0.0.1/pay/' || s.id, 'expires_at', s.at + interval '1 day', 'created_at', s.at,
  'livemode', false, 'customer', json_build_object('name', s.customer, 'email', 'payer' || s.i % 100000 || '@example.com'),
  'callback_url', 'https://merchant.example.com/return', 'metadata', json_build_object('order', s.i::text),
  'refunded_minor', 0, 'payment_link_id', null, 'custom_fields', null, 'receipt_number', ${receipt}, 'version', ${version})`;

const STATEMENTS: { table: (typeof SEEDED_TABLES)[number]; sql: string }[] = [
  {
    table: 'checkout_sessions',
    sql: `INSERT INTO checkout_sessions (id, merchant_id, environment, api_key_id, status, amount_minor, currency, invoice_ref,
            description, customer_name, customer_email, callback_url, metadata, expires_at, finalized_at, version, created_at,
            updated_at, receipt_number, method_rail, method_network)
          SELECT id, $1, 'test', $2, status, amount, 'GHS', 'INV-' || lpad(i::text, 9, '0'), 'Order ' || i, customer,
                 'payer' || i % 100000 || '@example.com', 'https://merchant.example.com/return',
                 jsonb_build_object('order', i::text), at + interval '1 day',
                 CASE WHEN status = 'expired' THEN at + interval '1 day' ELSE at + interval '2 minutes' END, 3, at,
                 CASE WHEN status = 'expired' THEN at + interval '1 day' ELSE at + interval '2 minutes' END,
                 receipt, rail, network
            FROM seed2 ORDER BY i`,
  },
  {
    table: 'payment_attempts',
    sql: `INSERT INTO payment_attempts (id, session_id, merchant_id, environment, rail, provider, provider_reference, network,
            phone, account_name, status, raw_status, base_minor, fee_minor, bearer, amount_charged_minor, currency, instructions,
            version, created_at, updated_at, finalized_at, failure_reason, card_brand, card_last4)
          SELECT attempt_id, id, $1, 'test', rail, 'sika_test', 'TEST-' || upper(substr(md5(i::text), 1, 16)),
                 network, CASE WHEN rail = 'momo' THEN phone END, CASE WHEN rail = 'momo' THEN '' END,
                 CASE status WHEN 'success' THEN 'paid' WHEN 'failed' THEN 'failed' ELSE 'expired' END,
                 CASE status WHEN 'success' THEN 'SUCCESSFUL:simulated' WHEN 'failed' THEN 'FAILED:simulated' ELSE 'EXPIRED' END,
                 amount, fee, 'payer', charged, 'GHS', '{"resend_supported": true}'::jsonb, 2,
                 at + interval '1 minute',
                 CASE WHEN status = 'expired' THEN at + interval '1 day' ELSE at + interval '2 minutes' END,
                 CASE WHEN status = 'expired' THEN at + interval '1 day' ELSE at + interval '2 minutes' END,
                 CASE WHEN status = 'failed' THEN (ARRAY['insufficient_funds','wrong_pin','declined_by_payer','timed_out'])[1 + i % 4] END,
                 CASE WHEN rail = 'card' THEN 'visa' END, CASE WHEN rail = 'card' THEN lpad((i % 10000)::text, 4, '0') END
            FROM seed2`,
  },
  {
    table: 'events',
    sql: `INSERT INTO events (id, merchant_id, environment, api_key_id, type, object_type, object_id, object_version, payload, created_at)
          SELECT 'evt_year' || lpad(s.i::text, 17, '0') || e.n, $1, 'test', $2, e.type, 'checkout.session', s.id, e.n + 1,
                 json_build_object('id', 'evt_year' || lpad(s.i::text, 17, '0') || e.n, 'type', e.type, 'created_at', e.at,
                   'environment', 'test', 'livemode', false, 'version', e.n + 1,
                   'data', json_build_object('session', ${sessionJson('e.state', 'e.n + 1', 'CASE WHEN e.n = 2 THEN s.receipt END')}))::text,
                 e.at
            FROM seed2 s
            CROSS JOIN LATERAL (VALUES
              (1, 'checkout.session.pending', 'pending', s.at + interval '1 minute'),
              (2, CASE s.status WHEN 'success' THEN 'checkout.session.completed' WHEN 'failed' THEN 'checkout.session.failed'
                    ELSE 'checkout.session.expired' END, s.status,
                  CASE WHEN s.status = 'expired' THEN s.at + interval '1 day' ELSE s.at + interval '2 minutes' END)
            ) AS e (n, type, state, at)
           ORDER BY s.i, e.n`,
  },
  {
    table: 'webhook_deliveries',
    sql: `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, environment, status, tries, next_try_at,
            last_http_status, created_at, updated_at, delivered_at)
          SELECT md5('d' || s.i || '.' || n)::uuid, 'evt_year' || lpad(s.i::text, 17, '0') || n, $2, $1, 'test', 'delivered',
                 CASE WHEN s.i % 25 = 0 THEN 2 ELSE 1 END, dat, 200, dat,
                 dat + CASE WHEN s.i % 25 = 0 THEN interval '30 seconds' ELSE interval '80 milliseconds' END,
                 dat + CASE WHEN s.i % 25 = 0 THEN interval '30 seconds' ELSE interval '80 milliseconds' END
            FROM seed2 s
            CROSS JOIN LATERAL (VALUES (1, s.at + interval '1 minute'),
              (2, CASE WHEN s.status = 'expired' THEN s.at + interval '1 day' ELSE s.at + interval '2 minutes' END)) AS e (n, dat)`,
  },
  {
    table: 'webhook_delivery_tries',
    sql: `INSERT INTO webhook_delivery_tries (delivery_id, try_number, tried_at, http_status, latency_ms, error, response_excerpt, worker_id)
          SELECT md5('d' || s.i || '.' || n)::uuid, t, dat + (t - 1) * interval '30 seconds',
                 CASE WHEN t < tries THEN 500 ELSE 200 END, 5 + s.i % 40,
                 CASE WHEN t < tries THEN 'HTTP 500' END, CASE WHEN t < tries THEN 'internal error' ELSE 'ok' END,
                 'w_year' || s.i % 4
            FROM seed2 s
            CROSS JOIN LATERAL (VALUES (1, s.at + interval '1 minute'),
              (2, CASE WHEN s.status = 'expired' THEN s.at + interval '1 day' ELSE s.at + interval '2 minutes' END)) AS e (n, dat)
            CROSS JOIN LATERAL (SELECT CASE WHEN s.i % 25 = 0 THEN 2 ELSE 1 END AS tries) AS k
            CROSS JOIN LATERAL generate_series(1, k.tries) AS t
           ORDER BY s.i, n, t`,
  },
  {
    table: 'journal_entries',
    sql: `INSERT INTO journal_entries (id, merchant_id, environment, kind, reference_type, reference_id, created_at)
          SELECT md5('je' || i)::uuid, $1, 'test', 'payment_credit', 'payment', attempt_id, at + interval '2 minutes'
            FROM seed2 WHERE status = 'success' ORDER BY i`,
  },
  {
    table: 'journal_lines',
    sql: `INSERT INTO journal_lines (entry_id, account_id, amount_minor)
          SELECT md5('je' || i)::uuid, l.account_id, l.amount
            FROM seed2
            CROSS JOIN LATERAL (VALUES ($1::uuid, charged), ($2::uuid, -amount), ($3::uuid, -fee)) AS l (account_id, amount)
           WHERE status = 'success'`,
  },
  {
    table: 'balance_transactions',
    sql: `INSERT INTO balance_transactions (entry_id, merchant_id, environment, net_minor, balance_after_minor, created_at, pending)
          SELECT md5('je' || i)::uuid, $1, 'test', amount, $2::bigint + sum(amount) OVER (ORDER BY i), at + interval '2 minutes', false
            FROM seed2 WHERE status = 'success' ORDER BY i`,
  },
];

const LEDGER_KINDS = [
  'merchant_available',
  'merchant_held',
  'merchant_pending',
  'merchant_reserved',
  'provider_clearing',
  'fee_revenue',
  'payout_clearing',
];

/** Fills the database with the merchant's year (see the header). Its balance goes on from its last balance transaction. */
export async function seedYear(
  databaseUrl: string,
  merchant: { merchantId: string; testKeyId: string },
  fraction: number,
  log: (line: string) => void = () => {},
): Promise<YearSeed> {
  const sessions = Math.max(1_000, Math.round(YEAR_SESSIONS * fraction));
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = performance.now();
  const ms = new Map<string, number>(SEEDED_TABLES.map((t) => [t, 0]));
  let vacuumMs = 0;
  try {
    await client.query(RECEIPT_FUNCTION);
    const { merchantId, testKeyId } = merchant;
    const endpoint = await client.query<{ id: string }>(
      "SELECT id FROM webhook_endpoints WHERE merchant_id = $1 AND environment = 'test' ORDER BY created_at LIMIT 1",
      [merchantId],
    );
    if (!endpoint.rows[0]) throw new Error('the year merchant has no Test webhook endpoint');
    await client.query(
      `INSERT INTO ledger_accounts (merchant_id, environment, kind) SELECT $1, 'test', k FROM unnest($2::text[]) AS k
       ON CONFLICT (merchant_id, environment, kind) DO NOTHING`,
      [merchantId, LEDGER_KINDS],
    );
    const accounts = new Map(
      (
        await client.query<{ id: string; kind: string }>(
          "SELECT id, kind FROM ledger_accounts WHERE merchant_id = $1 AND environment = 'test'",
          [merchantId],
        )
      ).rows.map((r) => [r.kind, r.id]),
    );
    const yearStart = (await client.query<{ at: string }>("SELECT (now() - interval '365 days')::text AS at")).rows[0]!
      .at;
    // The running balance goes on from the merchant's last balance transaction (none on a fresh bench merchant).
    const last = await client.query<{ after: string }>(
      "SELECT balance_after_minor::text AS after FROM balance_transactions WHERE merchant_id = $1 AND environment = 'test' ORDER BY seq DESC LIMIT 1",
      [merchantId],
    );
    let balance = BigInt(last.rows[0]?.after ?? '0');
    for (let lo = 1; lo <= sessions; lo += CHUNK_SESSIONS) {
      const hi = Math.min(sessions, lo + CHUNK_SESSIONS - 1);
      await client.query('BEGIN');
      await client.query('SET LOCAL session_replication_role = replica');
      await client.query(SEED_CHUNK, [lo, hi, yearStart, sessions]);
      await client.query(SEED_DERIVED);
      for (const { table, sql } of STATEMENTS) {
        const params: unknown[] =
          table === 'events' || table === 'checkout_sessions'
            ? [merchantId, testKeyId]
            : table === 'webhook_deliveries'
              ? [merchantId, endpoint.rows[0].id]
              : table === 'journal_lines'
                ? [accounts.get('provider_clearing'), accounts.get('merchant_available'), accounts.get('fee_revenue')]
                : table === 'balance_transactions'
                  ? [merchantId, balance.toString()]
                  : table === 'webhook_delivery_tries'
                    ? []
                    : [merchantId];
        const t0 = performance.now();
        await client.query(sql, params);
        ms.set(table, ms.get(table)! + performance.now() - t0);
      }
      const moved = await client.query<{ net: string }>(
        "SELECT coalesce(sum(amount), 0)::text AS net FROM seed2 WHERE status = 'success'",
      );
      balance += BigInt(moved.rows[0]!.net);
      await client.query('COMMIT');
      log(
        `  year: sessions ${hi.toLocaleString('en')} of ${sessions.toLocaleString('en')} (${((performance.now() - started) / 1000).toFixed(0)} s)`,
      );
    }
    // The cached balances: moved by exactly the lines written.
    await client.query(
      `UPDATE ledger_accounts a SET balance_minor = a.balance_minor + t.total
         FROM (SELECT l.account_id, sum(l.amount_minor) AS total FROM journal_lines l
                WHERE l.entry_id IN (SELECT id FROM journal_entries WHERE merchant_id = $1 AND environment = 'test' AND reference_id LIKE 'att_year%')
                GROUP BY l.account_id) t
        WHERE a.id = t.account_id`,
      [merchantId],
    );
    const t0 = performance.now();
    await client.query('VACUUM ANALYZE');
    vacuumMs = performance.now() - t0;
    const counts = await client.query<{ table: string; rows: string }>(
      SEEDED_TABLES.map((t) => `SELECT '${t}' AS table, count(*)::text AS rows FROM ${t}`).join(' UNION ALL '),
    );
    const sizes = await client.query<{ table: string; bytes: string }>(
      `SELECT relname AS table, pg_total_relation_size(c.oid)::text AS bytes FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
       WHERE c.relkind = 'r' ORDER BY pg_total_relation_size(c.oid) DESC LIMIT 12`,
    );
    const db = await client.query<{ bytes: string }>('SELECT pg_database_size(current_database())::text AS bytes');
    const rows = new Map(counts.rows.map((r) => [r.table, Number(r.rows)]));
    return {
      sessions,
      fraction,
      tables: SEEDED_TABLES.map((t) => ({ table: t, rows: rows.get(t) ?? 0, ms: ms.get(t)! })),
      vacuumMs,
      totalMs: performance.now() - started,
      databaseBytes: Number(db.rows[0]!.bytes),
      tableBytes: sizes.rows.map((r) => ({ table: r.table, bytes: Number(r.bytes) })),
    };
  } finally {
    await client.end();
  }
}

export interface SearchTiming {
  name: string;
  p50: number;
  p99: number;
  /**
   * Per timed query, from pg_stat_database on the one connection that ran them: blocks found in PostgreSQL's
   * shared buffers, blocks read from outside them (the OS cache or the disk) and the time spent reading those
   * (track_io_timing). Absent where the server cannot say (before PostgreSQL 15).
   */
  io?: { blocksHit: number; blocksRead: number; readMs: number };
}

interface IoCounters {
  hit: number;
  read: number;
  readMs: number;
}

/** This database's block counters, after this connection's own counts are flushed (PostgreSQL 15+), or null. */
async function ioCounters(db: Db): Promise<IoCounters | null> {
  try {
    await db.query('SELECT pg_stat_force_next_flush()'); // flushed when this statement's transaction ends
    const [row] = await db.query<{ hit: string; read: string; read_ms: number }>(
      'SELECT blks_hit::text AS hit, blks_read::text AS read, blk_read_time AS read_ms FROM pg_stat_database WHERE datname = current_database()',
    );
    return { hit: Number(row!.hit), read: Number(row!.read), readMs: row!.read_ms };
  } catch {
    return null;
  }
}

/** The Payments page's query kinds of bench/search.ts (a fragment from the merchant's own rows), each timed `runs` times. */
export async function timeSearches(databaseUrl: string, merchantId: string, runs = 100): Promise<SearchTiming[]> {
  // One connection, so that its own block counters are all the searches' (ioCounters); the server is stopped by now.
  const db = await openDb({ databaseUrl, dataDir: null }, { migrate: false, poolSize: 1 });
  try {
    await db.exec('SET track_io_timing = on').catch(() => {}); // a superuser's setting; without it readMs is 0
    // Statistics as autovacuum would keep them (it is off on the bench server): the journeys just wrote thousands of rows.
    await db.exec('ANALYZE checkout_sessions, payment_attempts');
    const sample = await db.query<{
      id: string;
      invoice_ref: string;
      customer_name: string;
      phone: string;
      provider_reference: string;
      receipt_number: string | null;
    }>(
      `SELECT s.id, s.invoice_ref, s.customer_name, a.phone, a.provider_reference, s.receipt_number
         FROM checkout_sessions s JOIN payment_attempts a ON a.session_id = s.id
        WHERE s.merchant_id = $1 AND s.environment = 'test' AND a.phone IS NOT NULL AND s.receipt_number IS NOT NULL
        ORDER BY random() LIMIT $2`,
      [merchantId, runs],
    );
    if (sample.length === 0) return [];
    const row = (n: number) => sample[n % sample.length]!;
    const day = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
    const kinds: [string, (n: number) => PaymentsQuery][] = [
      ['no search, newest page', () => ({})],
      ['no search, status=failed', () => ({ status: 'failed' })],
      ['no search, network=at, last 30 days', () => ({ network: 'at', from: day(30) })],
      ['no search, rail=cash (none)', () => ({ rail: 'cash' })],
      ['session id', (n) => ({ q: row(n).id })],
      ['receipt number (lower case)', (n) => ({ q: row(n).receipt_number!.toLowerCase() })],
      ['invoice reference, exact', (n) => ({ q: row(n).invoice_ref })],
      ['customer name, first 3 letters', (n) => ({ q: row(n).customer_name.slice(0, 3) })],
      ['phone, last four digits', (n) => ({ q: row(n).phone.slice(-4) })],
      ['amount, common (500.00)', () => ({ q: '500' })],
      ['provider reference', (n) => ({ q: row(n).provider_reference })],
    ];
    const owner = { merchantId, environment: 'test' };
    const out: SearchTiming[] = [];
    for (const [name, query] of kinds) {
      for (let n = 0; n < 5; n++) await paymentsPage(db, paymentsFilter(owner, query(n)), null);
      const took: number[] = [];
      const before = await ioCounters(db);
      for (let n = 0; n < runs; n++) {
        const t0 = performance.now();
        await paymentsPage(db, paymentsFilter(owner, query(n)), null);
        took.push(performance.now() - t0);
      }
      took.sort((a, b) => a - b);
      const at = (p: number) => took[Math.min(took.length - 1, Math.ceil((p / 100) * took.length) - 1)]!;
      const after = before && (await ioCounters(db));
      const io = before &&
        after && {
          blocksHit: (after.hit - before.hit) / runs,
          blocksRead: (after.read - before.read) / runs,
          readMs: (after.readMs - before.readMs) / runs,
        };
      out.push({ name, p50: at(50), p99: at(99), ...(io ? { io } : {}) });
    }
    return out;
  } finally {
    await db.close();
  }
}
