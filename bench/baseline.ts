// The benchmark's floor: a bare Fastify app on the same storage driver as Sika, one INSERT route and
// one SELECT-by-primary-key route on a table shaped roughly like a checkout session row. No auth,
// no idempotency, no validation, no logging: what one statement per request costs on this machine.
// The issues' baseline is the plain pool (pool.query per request). On PostgreSQL the same two routes
// also run through Sika's pipelined connections (src/db/pipeline.ts) under /baseline/piped-rows, so
// the report can show Sika against a bare route that uses the same technique as it does.
//
//   BASELINE_STORAGE=postgres DATABASE_URL=... PORT=... node --import tsx bench/baseline.ts
//   BASELINE_STORAGE=embedded DATA_DIR=...    PORT=... node --import tsx bench/baseline.ts
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { Pipeline } from '../src/db/pipeline.ts';
import { POOL_SIZE_MAX } from '../src/db/postgres.ts';

type Query = <Row>(sql: string, params?: unknown[]) => Promise<Row[]>;

interface Storage {
  query: Query;
  /** Named statements on pipelined connections, as Sika's db.read and db.write (PostgreSQL only). */
  piped: { read: Pipeline; write: Pipeline } | null;
  close(): Promise<void>;
}

async function openStorage(): Promise<Storage> {
  if (process.env.BASELINE_STORAGE === 'postgres') {
    // Same pool size as src/db/postgres.ts; int8 parsed to a number as Sika does.
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: POOL_SIZE_MAX });
    pg.types.setTypeParser(20, Number);
    pool.on('error', () => {});
    // Sika's settings: two connections for reads, four for one-statement writes.
    const pipelined = () =>
      new pg.Client({ connectionString: process.env.DATABASE_URL, pipeline: true } as pg.ClientConfig);
    const piped = { read: new Pipeline(pipelined, 2), write: new Pipeline(pipelined, 4) };
    return {
      query: async <Row>(sql: string, params: unknown[] = []) => (await pool.query(sql, params)).rows as Row[],
      piped,
      close: async () => {
        await Promise.all([pool.end(), piped.read.close(), piped.write.close()]);
      },
    };
  }
  if (process.env.BASELINE_STORAGE === 'embedded') {
    const dataDir = process.env.DATA_DIR;
    if (!dataDir) throw new Error('DATA_DIR is required for embedded storage');
    mkdirSync(dataDir, { recursive: true });
    const db = await PGlite.create(join(dataDir, 'pgdata'));
    return {
      query: async <Row>(sql: string, params: unknown[] = []) => (await db.query<Row>(sql, params)).rows,
      piped: null,
      close: () => db.close(),
    };
  }
  throw new Error('BASELINE_STORAGE must be postgres or embedded');
}

const COLUMNS = 'id, merchant_id, amount_minor, invoice_ref, created_at';

async function main(): Promise<void> {
  const storage = await openStorage();
  await storage.query(`CREATE TABLE IF NOT EXISTS bench_baseline (
    id text PRIMARY KEY,
    merchant_id uuid NOT NULL,
    amount_minor bigint NOT NULL,
    invoice_ref text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`);
  const merchantId = randomUUID();

  const app = Fastify({ logger: false });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.post<{ Body: { amount_minor?: number; invoice_ref?: string } }>('/baseline/rows', async (request, reply) => {
    const body = request.body ?? {};
    const rows = await storage.query(
      `INSERT INTO bench_baseline (id, merchant_id, amount_minor, invoice_ref) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
      [`row_${randomBytes(12).toString('hex')}`, merchantId, body.amount_minor ?? 1, body.invoice_ref ?? 'none'],
    );
    return reply.code(201).send(rows[0]);
  });
  app.get<{ Params: { id: string } }>('/baseline/rows/:id', async (request, reply) => {
    const rows = await storage.query(`SELECT ${COLUMNS} FROM bench_baseline WHERE id = $1`, [request.params.id]);
    if (rows.length === 0) return reply.code(404).send({ error: 'not found' });
    return rows[0];
  });
  const piped = storage.piped;
  if (piped) {
    app.post<{ Body: { amount_minor?: number; invoice_ref?: string } }>(
      '/baseline/piped-rows',
      async (request, reply) => {
        const body = request.body ?? {};
        const rows = await piped.write.query(
          'baseline_insert',
          `INSERT INTO bench_baseline (id, merchant_id, amount_minor, invoice_ref) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
          [`row_${randomBytes(12).toString('hex')}`, merchantId, body.amount_minor ?? 1, body.invoice_ref ?? 'none'],
        );
        return reply.code(201).send(rows[0]);
      },
    );
    app.get<{ Params: { id: string } }>('/baseline/piped-rows/:id', async (request, reply) => {
      const rows = await piped.read.query('baseline_select', `SELECT ${COLUMNS} FROM bench_baseline WHERE id = $1`, [
        request.params.id,
      ]);
      if (rows.length === 0) return reply.code(404).send({ error: 'not found' });
      return rows[0];
    });
  }

  const shutdown = async () => {
    await app.close();
    await storage.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
