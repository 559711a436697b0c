// npm run bench:export (issue 17): exporting 1,000,000 balance transactions of one merchant as CSV over HTTP,
// on PostgreSQL (a fresh database, dropped at the end). Rows/s and the server's RSS, against a baseline in
// the same run: the same rows read with a plain server-side cursor (DECLARE / FETCH, no HTTP, no CSV).
// Memory must stay flat: the server's RSS after 1,000,000 rows is compared with its RSS after 100,000.
// The figures go to stdout and to bench/REPORT.md's "Export of balance transactions" section.
//
//   BENCH_EXPORT_ROWS   rows to seed and export (default 1000000)
//   BENCH_PG_URL        server to create the bench database on (default postgres://postgres@127.0.0.1:5432/postgres)
//
// Seeding is SQL (generate_series) straight into journal_entries, journal_lines and balance_transactions, one
// payment credit per row (GHS 100.00 charged, GHS 2.50 fee), each table consistent with the others and the
// cached balances moved to match, so the ledger's invariants hold. Triggers are off while seeding
// (session_replication_role = replica): the deferred balance check would otherwise run 3,000,000 times.
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createMerchant } from '../src/accounts/service.ts';
import { openDb } from '../src/db/index.ts';
import { checkInvariants } from '../src/ledger/service.ts';
import { createAccounts } from '../src/ledger/store.ts';
import { freePort, killAll, ROOT, startServer, type Server } from './processes.ts';
import { postgresScratch } from './storage.ts';

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);
if (!Number.isSafeInteger(ROWS) || ROWS < 100_000) throw new Error('BENCH_EXPORT_ROWS must be an integer >= 100000');
const CHARGED_MINOR = 10_000;
const FEE_MINOR = 250;
const NET_MINOR = CHARGED_MINOR - FEE_MINOR;
/** The seeded rows are spread over these days, ending yesterday (Accra is UTC). */
const SPAN_DAYS = 30;
const CURSOR_FETCH_ROWS = 2_000;
/** RSS may grow this much between 100,000 rows and the last row and still count as flat. */
const FLAT_RSS_GROWTH_MAX_BYTES = 64 * 1024 * 1024;
const SAMPLE_EVERY_ROWS = 100_000;

const MB = 1024 * 1024;
const mb = (bytes: number | null) => (bytes === null ? 'n/a' : `${Math.round(bytes / MB)} MB`);
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function rssBytes(pid: number): number | null {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

async function seed(
  databaseUrl: string,
): Promise<{ merchantId: string; testKey: string; from: string; to: string; seedMs: number }> {
  const db = await openDb({ databaseUrl, dataDir: null });
  let merchant: Awaited<ReturnType<typeof createMerchant>> | undefined;
  try {
    merchant = await createMerchant(
      db,
      { name: 'Bench Books', email: `bench-books-${Date.now()}@example.com`, webhookUrl: null, payoutApproval: false },
      { allowPrivateTargets: true },
    );
    await db.transaction((tx) => createAccounts(tx, merchant!.merchant_id, 'test'));
  } finally {
    await db.close();
  }
  const endMs = Date.parse(`${day(Date.now())}T00:00:00Z`);
  const startMs = endMs - SPAN_DAYS * 86_400_000;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = performance.now();
  try {
    const accounts = await client.query<{ id: string; kind: string }>(
      `SELECT id, kind FROM ledger_accounts WHERE merchant_id = $1 AND environment = 'test'`,
      [merchant.merchant_id],
    );
    const account = (kind: string) => accounts.rows.find((row) => row.kind === kind)!.id;
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    await client.query(
      `CREATE TEMP TABLE seed ON COMMIT DROP AS
       SELECT i, gen_random_uuid() AS id, to_timestamp($1::double precision / 1000) + (i::double precision * $2 / $3) * interval '1 millisecond' AS at
         FROM generate_series(1, $3::int) AS i`,
      [startMs, SPAN_DAYS * 86_400_000 - 1, ROWS],
    );
    await client.query(
      `INSERT INTO journal_entries (id, merchant_id, environment, kind, reference_type, reference_id, created_at)
       SELECT id, $1, 'test', 'payment_credit', 'payment', 'att_bench_' || i, at FROM seed ORDER BY i`,
      [merchant.merchant_id],
    );
    await client.query(
      `INSERT INTO journal_lines (entry_id, account_id, amount_minor)
       SELECT s.id, v.account_id, v.amount_minor FROM seed s CROSS JOIN (VALUES ($1::uuid, $4::bigint), ($2::uuid, $5::bigint), ($3::uuid, $6::bigint)) AS v (account_id, amount_minor)`,
      [
        account('provider_clearing'),
        account('merchant_available'),
        account('fee_revenue'),
        CHARGED_MINOR,
        -NET_MINOR,
        -FEE_MINOR,
      ],
    );
    await client.query(
      `INSERT INTO balance_transactions (entry_id, merchant_id, environment, net_minor, balance_after_minor, created_at)
       SELECT id, $1, 'test', $2, i::bigint * $2, at FROM seed ORDER BY i`,
      [merchant.merchant_id, NET_MINOR],
    );
    await client.query(
      `UPDATE ledger_accounts SET balance_minor = balance_minor + CASE kind WHEN 'provider_clearing' THEN $2::bigint WHEN 'merchant_available' THEN -$3::bigint ELSE -$4::bigint END
        WHERE merchant_id = $1 AND environment = 'test' AND kind IN ('provider_clearing', 'merchant_available', 'fee_revenue')`,
      [merchant.merchant_id, CHARGED_MINOR * ROWS, NET_MINOR * ROWS, FEE_MINOR * ROWS],
    );
    await client.query('COMMIT');
    await client.query('ANALYZE journal_entries, journal_lines, balance_transactions, ledger_accounts');
  } finally {
    await client.end();
  }
  const seedMs = performance.now() - started;
  return {
    merchantId: merchant.merchant_id,
    testKey: merchant.test_api_key,
    from: day(startMs),
    to: day(endMs - 1),
    seedMs,
  };
}

/** The baseline: the same rows, oldest first, through a server-side cursor in this process (no HTTP, no CSV). */
async function cursorBaseline(databaseUrl: string, merchantId: string): Promise<{ rows: number; ms: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const started = performance.now();
    await client.query('BEGIN');
    await client.query(
      `DECLARE bench NO SCROLL CURSOR FOR
       SELECT b.seq, b.entry_id, e.kind, e.reference_type, e.reference_id, b.net_minor, b.balance_after_minor, b.created_at
         FROM balance_transactions b JOIN journal_entries e ON e.id = b.entry_id
        WHERE b.merchant_id = $1 AND b.environment = 'test' ORDER BY b.seq`,
      [merchantId],
    );
    let rows = 0;
    for (;;) {
      const page = await client.query(`FETCH ${CURSOR_FETCH_ROWS} FROM bench`);
      rows += page.rowCount ?? 0;
      if ((page.rowCount ?? 0) < CURSOR_FETCH_ROWS) break;
    }
    await client.query('COMMIT');
    return { rows, ms: performance.now() - started };
  } finally {
    await client.end();
  }
}

interface ExportRun {
  rows: number;
  bytes: number;
  ms: number;
  rssBeforeBytes: number | null;
  rssAtBytes: { rows: number; bytes: number | null }[];
  sampledPeakBytes: number | null;
  lastLine: string;
}

/** GET the CSV over HTTP, counting lines as they arrive and sampling the server's RSS every SAMPLE_EVERY_ROWS rows. */
async function exportOverHttp(server: Server, key: string, from: string, to: string): Promise<ExportRun> {
  const rssBeforeBytes = rssBytes(server.pid);
  let sampledPeakBytes = rssBeforeBytes;
  const timer = setInterval(() => {
    const rss = rssBytes(server.pid);
    if (rss !== null && (sampledPeakBytes === null || rss > sampledPeakBytes)) sampledPeakBytes = rss;
  }, 50);
  const started = performance.now();
  const response = await fetch(`${server.baseUrl}/api/v1/balance/transactions?from=${from}&to=${to}`, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/csv' },
  });
  if (response.status !== 200 || !response.body)
    throw new Error(`export answered ${response.status}: ${await response.text()}`);
  let lines = 0;
  let bytes = 0;
  let tail = '';
  const rssAtBytes: ExportRun['rssAtBytes'] = [];
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    const text = decoder.decode(chunk, { stream: true });
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
      lines++;
      // The header is line 1: row n ends line n + 1.
      if ((lines - 1) % SAMPLE_EVERY_ROWS === 0 && lines > 1)
        rssAtBytes.push({ rows: lines - 1, bytes: rssBytes(server.pid) });
    }
    tail = (tail + text).slice(-400);
  }
  const ms = performance.now() - started;
  clearInterval(timer);
  return {
    rows: lines - 1,
    bytes,
    ms,
    rssBeforeBytes,
    rssAtBytes,
    sampledPeakBytes,
    lastLine: tail.trim().split('\r\n').at(-1) ?? '',
  };
}

function writeReport(markdown: string): void {
  const path = join(ROOT, 'bench', 'REPORT.md');
  const report = readFileSync(path, 'utf8');
  const heading = '## Export of balance transactions (issue 17)';
  const start = report.indexOf(heading);
  let next: string;
  if (start === -1) {
    const anchor = report.indexOf('## How to regenerate');
    next =
      anchor === -1
        ? `${report.trimEnd()}\n\n${markdown}\n`
        : `${report.slice(0, anchor)}${markdown}\n\n${report.slice(anchor)}`;
  } else {
    const end = report.indexOf('\n## ', start + heading.length);
    next = `${report.slice(0, start)}${markdown}\n${end === -1 ? '' : report.slice(end)}`;
  }
  writeFileSync(path, next);
}

async function main(): Promise<void> {
  const stamp = `export_${Date.now()}`;
  const scratch = await postgresScratch(stamp);
  const databaseUrl = scratch.env.DATABASE_URL!;
  let server: Server | null = null;
  try {
    console.log(`seeding ${ROWS.toLocaleString('en')} balance transactions on ${scratch.description} ...`);
    const seeded = await seed(databaseUrl);
    console.log(`seeded in ${(seeded.seedMs / 1000).toFixed(1)} s`);
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['DATA_DIR', 'REDIS_URL', 'BASE_URL', 'NODE_OPTIONS']) delete env[name];
    server = await startServer(
      'sika',
      'src/main.ts',
      { ...env, DATABASE_URL: databaseUrl, PORT: String(await freePort()), LOG_LEVEL: 'warn', WORKERS: 'off' },
      '/readyz',
    );

    const baseline = await cursorBaseline(databaseUrl, seeded.merchantId);
    const run = await exportOverHttp(server, seeded.testKey, seeded.from, seeded.to);
    const invariants = await (async () => {
      const db = await openDb({ databaseUrl, dataDir: null }, { migrate: false });
      try {
        return await checkInvariants(db, seeded.merchantId);
      } finally {
        await db.close();
      }
    })();

    const expectedLast = String(NET_MINOR * ROWS);
    const complete = run.rows === ROWS && baseline.rows === ROWS && run.lastLine.split(',')[9] === expectedLast;
    const at100k = run.rssAtBytes.find((s) => s.rows === SAMPLE_EVERY_ROWS)?.bytes ?? null;
    const atEnd = run.rssAtBytes.at(-1)?.bytes ?? null;
    const growth = at100k !== null && atEnd !== null ? atEnd - at100k : null;
    const flat = growth !== null && growth <= FLAT_RSS_GROWTH_MAX_BYTES;
    const exportRate = Math.round(run.rows / (run.ms / 1000));
    const baselineRate = Math.round(baseline.rows / (baseline.ms / 1000));
    const lines = [
      '## Export of balance transactions (issue 17)',
      '',
      `Generated by \`npm run bench:export\` at ${new Date().toISOString()} on ${cpus().length} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), ${(totalmem() / 1024 ** 3).toFixed(1)} GB, Node ${process.version}; ${scratch.description.replace(/, database .*/, '')}. ` +
        `${ROWS.toLocaleString('en')} balance transactions of one merchant seeded with SQL (generate_series) in ${(seeded.seedMs / 1000).toFixed(1)} s over ${SPAN_DAYS} days, ` +
        `then \`GET /api/v1/balance/transactions?from=${seeded.from}&to=${seeded.to}\` with \`Accept: text/csv\` read over HTTP on the same machine (the server: \`src/main.ts\`, workers off). ` +
        'Baseline: the same rows, oldest first, through a plain server-side cursor (DECLARE, FETCH 2,000) in the bench process, no HTTP and no CSV, in the same run.',
      '',
      '| figure | value |',
      '|---|---|',
      `| CSV export over HTTP | ${run.rows.toLocaleString('en')} rows in ${(run.ms / 1000).toFixed(1)} s: **${exportRate.toLocaleString('en')} rows/s**, ${(run.bytes / MB).toFixed(0)} MB |`,
      `| baseline: server-side cursor, no HTTP/CSV | ${baseline.rows.toLocaleString('en')} rows in ${(baseline.ms / 1000).toFixed(1)} s: ${baselineRate.toLocaleString('en')} rows/s |`,
      `| export / baseline | ${(exportRate / baselineRate).toFixed(2)} |`,
      `| server RSS before the export | ${mb(run.rssBeforeBytes)} |`,
      ...run.rssAtBytes.map((s) => `| server RSS after ${s.rows.toLocaleString('en')} rows | ${mb(s.bytes)} |`),
      `| server peak RSS during the export (sampled every 50 ms) | ${mb(run.sampledPeakBytes)} |`,
      `| server peak RSS since start (VmHWM) | ${mb(server.peakRssBytes())} |`,
      `| memory flat (RSS after the last row - after 100,000 rows <= ${FLAT_RSS_GROWTH_MAX_BYTES / MB} MB) | ${flat ? 'yes' : 'NO'} (${growth === null ? 'n/a' : `${growth >= 0 ? '+' : ''}${Math.round(growth / MB)} MB`}) |`,
      `| every row exported, the last balance_after_minor = ${expectedLast}; ledger invariants | ${complete ? 'yes' : 'NO'}; ${invariants.length === 0 ? 'hold' : invariants.join('; ')} |`,
      '',
      'The export reads keyset pages of 2,000 rows on `seq` (src/books/service.ts balanceTransactionsBetween: one index probe per end of the range, then `seq > last` pages), ' +
        "joined to the journal entry, its fee line, the payout and the attempt (three index probes per row more than the baseline's join: most of the difference), each row turned into cells and written by csv-stringify with backpressure: memory is a page, whatever the range holds. RSS moves with garbage collection, not with the rows sent.",
    ];
    const markdown = lines.join('\n');
    console.log(`\n${markdown}\n`);
    writeReport(markdown);
    if (!complete || !flat || invariants.length > 0) process.exitCode = 1;
  } finally {
    await server?.stop();
    await scratch.drop();
  }
}

main().catch((error) => {
  console.error(error);
  killAll();
  process.exit(1);
});
