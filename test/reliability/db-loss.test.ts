// Database loss: PostgreSQL stops for 5 s under load. Requests fail fast with 503 SERVICE_UNAVAILABLE and
// the error envelope (never a 500, never a hang), the service recovers by itself when PostgreSQL returns
// (same process, no restart), every request that got a 2xx is in storage, and retrying each failed request
// with its Idempotency-Key succeeds exactly once (one session per key).
//
// The shared PostgreSQL on 127.0.0.1:5432 is never touched: this file initdb's a private instance (test/support/private-postgres.ts) in a temp
// dir (as the postgres user when run as root, which initdb refuses) on a free port with fsync=off, and
// stops it with `pg_ctl stop -m immediate` (a crash for the server: connections reset, no clean shutdown).
// It does not read DATABASE_URL, so it runs the same in the embedded and in the PostgreSQL pass of the suite:
// storage loss only exists for a server in another process, and running it in both passes keeps it covered
// when only one pass is run (it costs ~25 s). Without PostgreSQL binaries (initdb, pg_ctl under
// /usr/lib/postgresql/*/bin, or PG_BIN) it is skipped with a message saying so.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { sleep, waitFor } from '../support/webhooks.ts';
import { findPgBin, pgUser, PrivatePostgres } from '../support/private-postgres.ts';
import {
  call,
  killAllServers,
  newMerchant,
  NoAnswer,
  quantile,
  reliabilityStorage,
  round1,
  startServer,
  type Server,
} from './process-support.ts';

const OUTAGE_MS = 5_000;
const CLIENTS = 6;
const PAUSE_BETWEEN_REQUESTS_MS = 15;
const REQUEST_TIMEOUT_MS = 10_000; // a request still unanswered after this is a hang
const FAIL_FAST_P99_MS = 2_000;
const RECOVERY_MAX_MS = 5_000;

// ---------------------------------------------------------------------------------------------------

interface Sent {
  invoiceRef: string;
  key: string;
  amount: number;
  /** performance.now() at send and at answer. */
  at: number;
  ms: number;
  status: number | null; // null: no answer
  code: string | null;
  envelopeOk: boolean;
  sessionId: string | null;
  /** Idempotent-Replayed: true (the key's first request had committed). */
  replayed: boolean;
  detail: string;
}

const bin = findPgBin();

describe('database loss: a private PostgreSQL stops for 5 s under load', () => {
  let instance: PrivatePostgres | null = null;
  after(async () => {
    killAllServers();
    await instance?.destroy();
  });

  it('requests fail fast with 503 and the envelope, the service recovers by itself, nothing is lost', {
    timeout: 120_000,
    skip: bin
      ? false
      : 'no PostgreSQL binaries (initdb, pg_ctl) under /usr/lib/postgresql/*/bin and no PG_BIN: nothing to stop',
  }, async (t) => {
    const user = await pgUser();
    if (typeof user === 'string') return t.skip(user);
    instance = await PrivatePostgres.create(bin!, user);
    {
      const admin = new pg.Client({ connectionString: `${instance.url}/postgres` });
      await admin.connect();
      await admin.query('CREATE DATABASE sika');
      await admin.end();
    }
    const storage = await reliabilityStorage('dbloss', `${instance.url}/sika`);
    let merchant!: CreatedMerchant;
    await storage.with(async (db) => {
      merchant = await newMerchant(db, 'DB Loss Shop', null);
    });
    const server: Server = await startServer(storage.env());
    const pid = server.child.pid;

    const sent: Sent[] = [];
    let n = 0;
    let stopLoad = false;
    const send = async (invoiceRef: string, key: string, amount: number): Promise<Sent> => {
      const at = performance.now();
      try {
        const answer = await call(server.base, 'POST', '/api/v1/sessions', {
          key: merchant.test_api_key,
          idempotencyKey: key,
          body: { amount_minor: amount, invoice_ref: invoiceRef },
          timeoutMs: REQUEST_TIMEOUT_MS,
        });
        const error = answer.body?.error;
        const envelopeOk =
          answer.status < 300 ||
          (typeof error?.code === 'string' &&
            typeof error?.message === 'string' &&
            Object.keys(answer.body).length === 1 &&
            !/at \S+ \(|SELECT|INSERT|ECONN/.test(answer.text));
        return {
          invoiceRef,
          key,
          amount,
          at,
          ms: answer.ms,
          status: answer.status,
          code: error?.code ?? null,
          envelopeOk,
          sessionId: answer.status < 300 ? answer.body.id : null,
          replayed: answer.headers.get('idempotent-replayed') === 'true',
          detail: answer.text.slice(0, 200),
        };
      } catch (error) {
        if (!(error instanceof NoAnswer)) throw error;
        return {
          invoiceRef,
          key,
          amount,
          at,
          ms: error.ms,
          status: null,
          code: null,
          envelopeOk: false,
          sessionId: null,
          replayed: false,
          detail: error.message,
        };
      }
    };
    const client = async () => {
      while (!stopLoad) {
        const i = n++;
        sent.push(await send(`INV-DBLOSS-${i}`, `dbloss-${i}-${randomUUID()}`, 1_000 + i));
        await sleep(PAUSE_BETWEEN_REQUESTS_MS);
      }
    };

    const load = Array.from({ length: CLIENTS }, client);
    await sleep(2_000); // steady state
    const outageStart = performance.now();
    await instance.stopImmediate();
    const stoppedAt = performance.now();
    await sleep(OUTAGE_MS);
    const restartAt = performance.now();
    await instance.start();
    const backAt = performance.now(); // pg_ctl -w: accepting connections
    // Recovery: the first 2xx sent after PostgreSQL is back.
    await waitFor(
      'a 2xx after PostgreSQL returned',
      () => sent.some((s) => s.at >= backAt && s.status !== null && s.status < 300),
      RECOVERY_MAX_MS + 5_000,
      20,
    );
    const recoveredAt = Math.min(
      ...sent.filter((s) => s.at >= backAt && s.status !== null && s.status < 300).map((s) => s.at + s.ms),
    );
    await sleep(2_000); // steady state again
    const tailFrom = performance.now() - 1_500;
    stopLoad = true;
    await Promise.all(load);

    const before = sent.filter((s) => s.at + s.ms < outageStart);
    const during = sent.filter((s) => s.at >= stoppedAt && s.at + s.ms <= restartAt);
    const failed = sent.filter((s) => s.status === null || s.status >= 300);
    const tail = sent.filter((s) => s.at >= tailFrom);
    const failedMs = failed.map((s) => s.ms);
    const statusCounts = Object.fromEntries(
      [...new Set(sent.map((s) => String(s.status)))].map((status) => [
        status,
        sent.filter((s) => String(s.status) === status).length,
      ]),
    );
    t.diagnostic(
      `${sent.length} requests: ${JSON.stringify(statusCounts)}; during the outage ${during.length} (${during.filter((s) => s.status === 503).length} x 503); ` +
        `failed p50 ${round1(quantile(failedMs, 0.5))} ms, p99 ${round1(quantile(failedMs, 0.99))} ms, max ${round1(Math.max(...failedMs))} ms; ` +
        `PostgreSQL stop took ${Math.round(stoppedAt - outageStart)} ms, start ${Math.round(backAt - restartAt)} ms; first 2xx ${Math.round(recoveredAt - backAt)} ms after it was back`,
    );

    assert.ok(before.length > 0 && before.every((s) => s.status === 201), 'before the outage every create succeeds');
    assert.deepEqual(
      sent.filter((s) => s.status === null).map((s) => s.detail),
      [],
      'every request got an answer (no hang past 10 s, no reset)',
    );
    assert.deepEqual(
      sent
        .filter((s) => s.status !== null && s.status >= 500 && s.status !== 503)
        .map((s) => `${s.status} ${s.detail}`),
      [],
      'never a 500',
    );
    assert.deepEqual(
      failed
        .filter((s) => s.status !== 503 || s.code !== 'SERVICE_UNAVAILABLE' || !s.envelopeOk)
        .map((s) => `${s.status} ${s.detail}`),
      [],
      'every failure is 503 SERVICE_UNAVAILABLE in the envelope',
    );
    assert.ok(during.length >= CLIENTS, `requests kept flowing during the outage (${during.length})`);
    assert.ok(
      during.every((s) => s.status === 503),
      'while PostgreSQL is down every request is a 503',
    );
    assert.ok(
      quantile(failedMs, 0.99) < FAIL_FAST_P99_MS,
      `503s are fast: p99 ${round1(quantile(failedMs, 0.99))} ms < ${FAIL_FAST_P99_MS} ms`,
    );
    assert.ok(
      recoveredAt - backAt < RECOVERY_MAX_MS,
      `2xx again ${Math.round(recoveredAt - backAt)} ms after PostgreSQL returned (< ${RECOVERY_MAX_MS} ms)`,
    );
    assert.ok(
      tail.length > 0 && tail.every((s) => s.status === 201),
      `after recovery every create succeeds (${tail.length} in the last 1.5 s: ${JSON.stringify(tail.filter((s) => s.status !== 201).map((s) => s.detail))})`,
    );
    assert.equal(server.child.pid, pid);
    assert.ok(
      server.child.exitCode === null && server.child.signalCode === null,
      'the same server process recovered (no restart)',
    );
    const ready = await call(server.base, 'GET', '/readyz');
    assert.equal(ready.status, 200, 'readyz is ready again');
    // The workers paused for the outage and resumed, and the metrics (open on a loopback instance) say so.
    const metric = async (name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec((await call(server.base, 'GET', '/metrics')).text)?.[1]);
    await waitFor(
      'the workers to see storage back (sika_storage_available 1)',
      async () => (await metric('sika_storage_available')) === 1,
      5_000,
      50,
    );
    assert.ok((await metric('sika_storage_outages_total')) >= 1, 'the outage paused the background jobs');
    assert.ok((await metric('sika_storage_outage_seconds_total')) > 0, 'and its length is counted');

    // Retry every failed request with its Idempotency-Key and body: exactly one session each.
    let committedDespiteFailure = 0;
    for (const s of failed) {
      const retry = await send(s.invoiceRef, s.key, s.amount);
      assert.equal(retry.status, 201, `retry of ${s.key}: ${retry.detail}`);
      if (retry.replayed) committedDespiteFailure++;
      s.sessionId = retry.sessionId;
      const again = await send(s.invoiceRef, s.key, s.amount);
      assert.equal(again.sessionId, retry.sessionId, 'a second retry replays the same session');
      assert.ok(again.replayed, 'a second retry is a replay');
    }
    assert.equal(await server.stop(), 0, `graceful stop; output:\n${server.output.slice(-20).join('\n')}`);

    await storage.with(async (db) => {
      const rows = await db.query<{ id: string; invoice_ref: string; amount_minor: number }>(
        'SELECT id, invoice_ref, amount_minor FROM checkout_sessions WHERE merchant_id = $1',
        [merchant.merchant_id],
      );
      const byRef = new Map<string, typeof rows>();
      for (const row of rows) byRef.set(row.invoice_ref, [...(byRef.get(row.invoice_ref) ?? []), row]);
      for (const s of sent) {
        const stored = byRef.get(s.invoiceRef) ?? [];
        assert.equal(
          stored.length,
          1,
          `exactly one session for Idempotency-Key ${s.key} (${s.invoiceRef}); first answer ${s.status}`,
        );
        assert.equal(
          stored[0]!.id,
          s.sessionId,
          `the session the client was given for ${s.invoiceRef} is the stored one`,
        );
        assert.equal(stored[0]!.amount_minor, s.amount);
      }
      assert.equal(rows.length, sent.length, 'no session without a request');
      t.diagnostic(
        `${rows.length} sessions stored for ${sent.length} keys; ${failed.length} failed requests retried: ${failed.length - committedDespiteFailure} ran afresh, ` +
          `${committedDespiteFailure} replayed (committed although the client got a 503)`,
      );
    });
  });
});
