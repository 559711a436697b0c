// Support for the webhook tests: a local receiver on 127.0.0.1, a private PostgreSQL database per test
// file (so a delivery worker never claims, and never sends, another suite's deliveries), event emission
// with a merchant's Test key, and a logger that keeps what the worker reports.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import type { Db, Queryable } from '../../src/db/index.ts';
import { emitEvent, type EventPayload } from '../../src/events/outbox.ts';
import { verifyWebhook } from '../../src/index.ts';
import { startTestApp, type TestContext } from './helpers.ts';

// ---------------------------------------------------------------------------------------------------
// Storage

const DB_PREFIX = 'sika_wh_';
const STALE_DB_MS = 3 * 3_600_000;

export interface IsolatedStorage {
  /** Environment overrides for startTestApp / a child process: DATABASE_URL of the private database, or nothing (embedded). */
  env: Record<string, string>;
  databaseUrl: string | null;
  drop(): Promise<void>;
}

/**
 * With DATABASE_URL: a fresh database on the same server, dropped at the end. The shared database holds
 * other suites' endpoints (e.g. https://example.com/hook); a worker there would claim and POST them.
 * Without DATABASE_URL: nothing to do, each test file has its own embedded storage.
 */
export async function isolatedStorage(): Promise<IsolatedStorage> {
  const base = process.env.DATABASE_URL;
  if (!base) return { env: {}, databaseUrl: null, drop: async () => {} };
  const name = `${DB_PREFIX}${Date.now()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    // Leftovers of runs that died before dropping theirs (the name carries its creation time).
    const old = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE '${DB_PREFIX}%'`,
    );
    for (const { datname } of old.rows) {
      const created = Number(/^sika_wh_(\d+)_/.exec(datname)?.[1] ?? Date.now());
      if (Date.now() - created > STALE_DB_MS)
        await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => {});
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE "${name}"`);
        break;
      } catch (error) {
        // "source database template1 is being accessed by other users": another file creating its own.
        if (attempt >= 20 || (error as { code?: string }).code !== '55006') throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    env: { DATABASE_URL: databaseUrl },
    databaseUrl,
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A test app on its own storage (isolatedStorage); close() also drops the database. env and options as startTestApp's. */
export async function isolatedTestApp(
  env: Record<string, string> = {},
  options: Parameters<typeof startTestApp>[1] = {},
): Promise<TestContext> {
  const storage = await isolatedStorage();
  const t = await startTestApp({ ...env, ...storage.env }, options);
  return {
    ...t,
    async close() {
      await t.close();
      await storage.drop();
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Receiver

export interface Received {
  /** 1-based arrival order. */
  n: number;
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** performance.now() at arrival of the full body. */
  at: number;
}

export type Handler = (request: Received, res: http.ServerResponse, req: http.IncomingMessage) => unknown;

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Requests whose response has not finished (or whose connection has not closed) yet. */
  inFlight(): number;
  close(): Promise<void>;
}

/** An HTTP receiver on 127.0.0.1 (port 0); the handler answers, every request is recorded. */
/** A receiver that counts arrivals per event id and signatures that do not verify (the crash and multi-process suites). */
export interface CountingReceiver {
  receiver: Receiver;
  /** webhook-id -> how many times it arrived. */
  arrivals: Map<string, number>;
  badSignatures(): number;
  lastArrivalMs(): number;
}

/**
 * secretOf is asked at each arrival, so the merchant whose endpoint this is may be made after the receiver;
 * answer sends the reply (by default 200 "ok" at once).
 */
export async function startCountingReceiver(
  secretOf: () => string,
  answer: (res: http.ServerResponse) => void = (res) => void res.end('ok'),
): Promise<CountingReceiver> {
  const arrivals = new Map<string, number>();
  let badSignatures = 0;
  let lastArrivalMs = performance.now();
  const receiver = await startReceiver((request, res) => {
    const id = String(request.headers['webhook-id']);
    arrivals.set(id, (arrivals.get(id) ?? 0) + 1);
    lastArrivalMs = performance.now();
    try {
      verifyWebhook(request.body, request.headers, secretOf());
    } catch {
      badSignatures++;
    }
    answer(res);
  });
  return { receiver, arrivals, badSignatures: () => badSignatures, lastArrivalMs: () => lastArrivalMs };
}

export async function startReceiver(handler: Handler = (_r, res) => void res.end('ok')): Promise<Receiver> {
  const requests: Received[] = [];
  let open = 0;
  const server = http.createServer((req, res) => {
    open++;
    let counted = true;
    const release = () => {
      if (counted) open--;
      counted = false;
    };
    res.on('close', release);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: Received = {
        n: requests.length + 1,
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      requests.push(received);
      Promise.resolve(handler(received, res, req)).catch((error: unknown) => {
        res.statusCode = 599;
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/webhooks/sika`,
    port,
    requests,
    inFlight: () => open,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Events and deliveries

export async function testKeyId(db: Queryable, merchantId: string): Promise<string> {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM api_keys WHERE merchant_id = $1 AND environment = 'test'`,
    [merchantId],
  );
  assert.equal(rows.length, 1, 'the merchant has one Test key');
  return rows[0]!.id;
}

export async function liveKeyId(db: Queryable, merchantId: string): Promise<string> {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM api_keys WHERE merchant_id = $1 AND environment = 'live'`,
    [merchantId],
  );
  assert.equal(rows.length, 1, 'the merchant has one Live key');
  return rows[0]!.id;
}

let objectCounter = 0;

/** One committed event created with the merchant's Test key (as checkout would emit it). */
export async function emitTestEvent(
  db: Db,
  merchant: CreatedMerchant,
  options: { apiKeyId?: string | null; type?: string; data?: Record<string, unknown> } = {},
): Promise<EventPayload> {
  const apiKeyId = options.apiKeyId === undefined ? await testKeyId(db, merchant.merchant_id) : options.apiKeyId;
  objectCounter++;
  return db.transaction((tx) =>
    emitEvent(tx, {
      merchantId: merchant.merchant_id,
      environment: 'test',
      apiKeyId,
      type: options.type ?? 'checkout.session.completed',
      objectType: 'checkout.session',
      objectId: `cs_test_${objectCounter}_${randomBytes(4).toString('hex')}`,
      objectVersion: 1,
      data: options.data ?? {
        session: { id: `cs_test_${objectCounter}`, status: 'success', amount_minor: 1000, currency: 'GHS' },
      },
    }),
  );
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: 'pending' | 'delivered' | 'failed' | 'skipped';
  tries: number;
  next_try_at: Date;
  locked_until: Date | null;
  last_http_status: number | null;
  last_error: string | null;
  delivered_at: Date | null;
}

export const deliveriesOf = (db: Queryable, eventId: string) =>
  db.query<DeliveryRow>(
    `SELECT id, event_id, endpoint_id, status, tries, next_try_at, locked_until, last_http_status, last_error, delivered_at
       FROM webhook_deliveries WHERE event_id = $1 ORDER BY created_at`,
    [eventId],
  );

export async function deliveryOf(db: Queryable, eventId: string): Promise<DeliveryRow> {
  const rows = await deliveriesOf(db, eventId);
  assert.equal(rows.length, 1, `event ${eventId} should have exactly one delivery (has ${rows.length})`);
  return rows[0]!;
}

export interface AttemptRow {
  try_number: number;
  tried_at: Date;
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string | null;
  worker_id: string;
}

export const attemptsOf = (db: Queryable, eventId: string) =>
  db.query<AttemptRow>(
    `SELECT a.try_number, a.tried_at, a.http_status, a.latency_ms, a.error, a.response_excerpt, a.worker_id
       FROM webhook_delivery_tries a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.event_id = $1 ORDER BY a.try_number, a.id`,
    [eventId],
  );

export async function endpointOf(db: Queryable, merchantId: string, environment: 'test' | 'live' = 'test') {
  const rows = await db.query<{
    id: string;
    status: string;
    disabled_reason: string | null;
    secret: string;
    url: string;
  }>(
    'SELECT id, status, disabled_reason, secret, url FROM webhook_endpoints WHERE merchant_id = $1 AND environment = $2',
    [merchantId, environment],
  );
  assert.equal(rows.length, 1, `the merchant should have one ${environment} endpoint`);
  return rows[0]!;
}

/** Polls until check() returns a truthy value; fails with the last seen value after timeoutMs. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T> | T,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<NonNullable<T>> {
  const deadline = performance.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await check();
    if (last) return last as NonNullable<T>;
    if (performance.now() > deadline)
      assert.fail(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------------
// Logger

export interface CapturedLog {
  level: string;
  object: unknown;
  message: string | undefined;
}

/** A FastifyBaseLogger that prints nothing and keeps each record, so a test can assert the worker logged no error. */
export function captureLogger(): FastifyBaseLogger & { records: CapturedLog[]; errors(): CapturedLog[] } {
  const records: CapturedLog[] = [];
  const at = (level: string) => (object: unknown, message?: string) =>
    void records.push({ level, object, message: typeof object === 'string' ? object : message });
  const logger = {
    level: 'info',
    records,
    errors: () => records.filter((r) => r.level === 'error' || r.level === 'fatal'),
    fatal: at('fatal'),
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
    silent: () => {},
    child: () => logger,
  };
  return logger as unknown as FastifyBaseLogger & { records: CapturedLog[]; errors(): CapturedLog[] };
}
