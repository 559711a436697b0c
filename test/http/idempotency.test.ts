// Idempotency-Key on POST /api/v1/sessions and POST /api/v1/invoice-lines: SPEC 4.1 rule 1, DESIGN §3 "Idempotency".
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { assertErrorEnvelope, call, sessionCount, syncCodes, type Json } from '../support/http.ts';

const newKey = () => `idem-${randomUUID()}`;

const keyCount = async (t: TestContext, merchantId: string): Promise<number> =>
  (
    await t.db.query<{ n: number }>('select count(*)::int as n from idempotency_keys where merchant_id=$1', [
      merchantId,
    ])
  )[0]!.n;

describe(`idempotency (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const createSession = (
    m: CreatedMerchant,
    body: Record<string, Json>,
    idempotencyKey?: string,
    apiKey = m.test_api_key,
  ) => call(t, 'POST', '/api/v1/sessions', { key: apiKey, body, idempotencyKey });

  const SESSION: Record<string, Json> = {
    amount_minor: 25000,
    invoice_ref: 'INV-IDEM',
    description: 'Idempotent',
    customer: { name: 'Esi', email: 'esi@example.com' },
    metadata: { order: 'O-1', items: [1, 2] },
  };

  describe('sessions', () => {
    it('the same key and body replay the original 201 and body with idempotent-replayed: true, and only one session exists', async () => {
      const m = await t.merchant();
      const key = newKey();
      const first = await createSession(m, SESSION, key);
      assert.equal(first.statusCode, 201, first.body);
      assert.equal(first.headers['idempotent-replayed'], undefined, 'the first response is not a replay');
      const second = await createSession(m, SESSION, key);
      assert.equal(second.statusCode, 201);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.body, first.body, 'the replayed body is byte-identical');
      const third = await createSession(m, SESSION, key);
      assert.equal(third.body, first.body);
      assert.equal(await sessionCount(t, m.merchant_id), 1);
      // The session of the replay is the one stored.
      const read = await call(t, 'GET', `/api/v1/sessions/${first.json().id}`, { key: m.test_api_key });
      assert.equal(read.statusCode, 200);
    });

    it('the same body with object keys in another order is the same request and replays', async () => {
      const m = await t.merchant();
      const key = newKey();
      const first = await createSession(m, { amount_minor: 100, invoice_ref: 'INV-O', metadata: { a: 1, b: 2 } }, key);
      const reordered = await createSession(
        m,
        { metadata: { b: 2, a: 1 }, invoice_ref: 'INV-O', amount_minor: 100 },
        key,
      );
      assert.equal(reordered.statusCode, 201);
      assert.equal(reordered.headers['idempotent-replayed'], 'true');
      assert.equal(reordered.json().id, first.json().id);
      assert.equal(await sessionCount(t, m.merchant_id), 1);
    });

    it('without a key, two identical requests create two sessions', async () => {
      const m = await t.merchant();
      const a = await createSession(m, SESSION);
      const b = await createSession(m, SESSION);
      assert.equal(a.statusCode, 201);
      assert.equal(b.statusCode, 201);
      assert.notEqual(a.json().id, b.json().id);
      assert.equal(b.headers['idempotent-replayed'], undefined);
      assert.equal(await sessionCount(t, m.merchant_id), 2);
    });

    it('the same key with a changed body is refused with 422 IDEMPOTENCY_KEY_REUSED and creates nothing more', async () => {
      const m = await t.merchant();
      const key = newKey();
      const first = await createSession(m, SESSION, key);
      assert.equal(first.statusCode, 201);
      for (const changed of [
        { ...SESSION, amount_minor: 25001 },
        { ...SESSION, metadata: { order: 'O-2', items: [1, 2] } },
        { ...SESSION, description: undefined as unknown as Json },
      ]) {
        const res = await createSession(m, JSON.parse(JSON.stringify(changed)), key);
        assertErrorEnvelope(res, 422, 'IDEMPOTENCY_KEY_REUSED');
        assert.equal(res.headers['idempotent-replayed'], undefined);
      }
      assert.equal(await sessionCount(t, m.merchant_id), 1);
      // The original is still replayed afterwards.
      const again = await createSession(m, SESSION, key);
      assert.equal(again.body, first.body);
    });

    it('the same key on another path (invoice lines) with a different body is 422 IDEMPOTENCY_KEY_REUSED', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [{ code: 'FEE', name: 'Fee' }]);
      const key = newKey();
      assert.equal((await createSession(m, SESSION, key)).statusCode, 201);
      const res = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        idempotencyKey: key,
        body: { invoice_ref: 'INV-IDEM', lines: [{ code: 'FEE', name: 'Fee', amount_minor: 100 }] },
      });
      assertErrorEnvelope(res, 422, 'IDEMPOTENCY_KEY_REUSED');
      assert.deepEqual(
        (
          await call(t, 'GET', '/api/v1/invoice-lines', { key: m.test_api_key, query: { invoice_ref: 'INV-IDEM' } })
        ).json().lines,
        [],
      );
    });

    it('a key of 255 printable characters is accepted and one of 256 characters is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      const ok = await createSession(m, SESSION, 'k'.repeat(255));
      assert.equal(ok.statusCode, 201, ok.body);
      const tooLong = await createSession(m, SESSION, 'k'.repeat(256));
      const error = assertErrorEnvelope(tooLong, 400, 'INVALID_ARGUMENT');
      assert.ok(
        error.fields?.some((f) => f.field === 'Idempotency-Key'),
        tooLong.body,
      );
      assert.equal(await sessionCount(t, m.merchant_id), 1);
    });

    it('a key with non-printable or non-ASCII characters, or an empty key, is refused with 400 INVALID_ARGUMENT', async () => {
      const m = await t.merchant();
      for (const key of ['abc\tdef', 'caf\u00e9', '\u0001key', '']) {
        const res = await createSession(m, SESSION, key);
        assertErrorEnvelope(res, 400, 'INVALID_ARGUMENT');
      }
      assert.equal(await sessionCount(t, m.merchant_id), 0);
      assert.equal(await keyCount(t, m.merchant_id), 0);
    });

    it('twenty concurrent POSTs with one key over a real server create exactly one session; each answer is that 201 or 409 IDEMPOTENCY_KEY_IN_FLIGHT', async () => {
      const m = await t.merchant();
      const base = await t.listen();
      const key = newKey();
      const responses = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${base}/api/v1/sessions`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${m.test_api_key}`,
              'content-type': 'application/json',
              'idempotency-key': key,
            },
            body: JSON.stringify(SESSION),
          }).then(async (res) => ({
            status: res.status,
            body: await res.text(),
            replayed: res.headers.get('idempotent-replayed'),
          })),
        ),
      );
      const created = responses.filter((r) => r.status === 201);
      const inFlight = responses.filter((r) => r.status === 409);
      assert.equal(
        created.length + inFlight.length,
        20,
        `unexpected statuses: ${responses.map((r) => r.status).join(',')}`,
      );
      assert.ok(created.length >= 1);
      assert.equal(created.filter((r) => r.replayed !== 'true').length, 1, 'exactly one response is the original');
      for (const r of created) assert.equal(r.body, created[0]!.body, 'every 201 carries the same session');
      for (const r of inFlight) {
        const body = JSON.parse(r.body);
        assert.equal(body.error.code, 'IDEMPOTENCY_KEY_IN_FLIGHT');
        assert.equal(typeof body.error.retry_after_seconds, 'number');
      }
      assert.equal(await sessionCount(t, m.merchant_id), 1);
      // After the dust settles, a retry replays the one session.
      const retry = await createSession(m, SESSION, key);
      assert.equal(retry.statusCode, 201);
      assert.equal(retry.body, created[0]!.body);
    });

    it('a key held by another transaction: the one-statement create gives up its pipelined wait, waits on the pool instead, and blocks no other request meanwhile', {
      skip:
        storageKind === 'postgres' ? false : 'embedded storage is one connection: nothing runs beside a transaction',
    }, async () => {
      const m = await t.merchant();
      const key = newKey();
      // Another request's transaction holds the key's claim (as a payout or an ingest with the same key would).
      const holder = await t.db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, state) VALUES ($1, 'test', $2, 'other', 'in_flight')`,
          [m.merchant_id, key],
        );
        const waiting = createSession(m, SESSION, key);
        // Other creates, on the same pipelined connections, are not held up behind the waiting one.
        const startedAt = Date.now();
        const others = await Promise.all(Array.from({ length: 8 }, () => createSession(m, SESSION, newKey())));
        const othersMs = Date.now() - startedAt;
        for (const other of others) assert.equal(other.statusCode, 201, other.body);
        await new Promise((resolve) => setTimeout(resolve, 300));
        return { waiting, othersMs };
      });
      // The transaction above committed its in_flight claim; the waiting request saw it once it committed.
      assert.ok(holder.othersMs < 1_000, `other creates took ${holder.othersMs} ms beside a request waiting on a lock`);
      const res = await holder.waiting;
      assertErrorEnvelope(res, 422, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(await sessionCount(t, m.merchant_id), 8);
    });

    it('a key held by a transaction that rolls back: the waiting create runs once it is free', {
      skip:
        storageKind === 'postgres' ? false : 'embedded storage is one connection: nothing runs beside a transaction',
    }, async () => {
      const m = await t.merchant();
      const key = newKey();
      let waiting: Promise<Awaited<ReturnType<typeof createSession>>> | null = null;
      await assert.rejects(
        t.db.transaction(async (tx) => {
          await tx.query(
            `INSERT INTO idempotency_keys (merchant_id, environment, key, request_hash, state) VALUES ($1, 'test', $2, 'other', 'in_flight')`,
            [m.merchant_id, key],
          );
          waiting = createSession(m, SESSION, key);
          await new Promise((resolve) => setTimeout(resolve, 300));
          throw new Error('roll back');
        }),
        /roll back/,
      );
      const res = await waiting!;
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(await sessionCount(t, m.merchant_id), 1);
      const retry = await createSession(m, SESSION, key);
      assert.equal(retry.body, res.body, 'and its key replays it');
    });

    it('a request refused by schema validation stores nothing: a retry with the same key and a corrected body succeeds with 201', async () => {
      const m = await t.merchant();
      const key = newKey();
      const refused = await createSession(m, { ...SESSION, amount_minor: 0 }, key);
      assertErrorEnvelope(refused, 400, 'INVALID_ARGUMENT');
      assert.equal(await keyCount(t, m.merchant_id), 0);
      const corrected = await createSession(m, SESSION, key);
      assert.equal(corrected.statusCode, 201, corrected.body);
      assert.equal(corrected.headers['idempotent-replayed'], undefined);
      assert.equal(await sessionCount(t, m.merchant_id), 1);
    });

    it('a request refused by a business rule (currency USD) stores nothing: a retry with the same key and currency GHS succeeds with 201', async () => {
      const m = await t.merchant();
      const key = newKey();
      const refused = await createSession(m, { ...SESSION, currency: 'USD' }, key);
      assertErrorEnvelope(refused, 400, 'INVALID_ARGUMENT');
      assert.equal(await keyCount(t, m.merchant_id), 0);
      // The same refused request again is refused again (not replayed, not 409).
      assertErrorEnvelope(await createSession(m, { ...SESSION, currency: 'USD' }, key), 400, 'INVALID_ARGUMENT');
      const corrected = await createSession(m, { ...SESSION, currency: 'GHS' }, key);
      assert.equal(corrected.statusCode, 201, corrected.body);
      assert.equal(await sessionCount(t, m.merchant_id), 1);
    });

    it("the same key used by another merchant is independent: it creates that merchant's own session", async () => {
      const a = await t.merchant();
      const b = await t.merchant();
      const key = newKey();
      const ra = await createSession(a, SESSION, key);
      const rb = await createSession(b, { ...SESSION, amount_minor: 999 }, key);
      assert.equal(ra.statusCode, 201);
      assert.equal(rb.statusCode, 201, rb.body);
      assert.equal(rb.headers['idempotent-replayed'], undefined);
      assert.notEqual(rb.json().id, ra.json().id);
      assert.equal(rb.json().amount_minor, 999);
      const rbSameBody = await createSession(await t.merchant(), SESSION, key);
      assert.equal(rbSameBody.headers['idempotent-replayed'], undefined);
      assert.notEqual(rbSameBody.json().id, ra.json().id);
      assert.equal(await sessionCount(t, a.merchant_id), 1);
      assert.equal(await sessionCount(t, b.merchant_id), 1);
    });

    it('the same key with the Live key of the same merchant is independent of the Test key', async () => {
      const m = await t.merchant();
      const key = newKey();
      const test = await createSession(m, SESSION, key, m.test_api_key);
      const live = await createSession(m, SESSION, key, m.live_api_key);
      assert.equal(live.statusCode, 201);
      assert.equal(live.headers['idempotent-replayed'], undefined);
      assert.notEqual(live.json().id, test.json().id);
      assert.equal(live.json().livemode, true);
      assert.equal(await sessionCount(t, m.merchant_id), 2);
    });
  });

  describe('invoice lines', () => {
    const LINES: Record<string, Json> = {
      invoice_ref: 'INV-IL',
      lines: [
        { code: 'FEE', name: 'Fee', amount_minor: 1000 },
        { code: 'BOOK', name: 'Book', amount_minor: 250 },
      ],
    };

    it('the same key and body replay the original ingest response with idempotent-replayed: true', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'FEE', name: 'Fee' },
        { code: 'BOOK', name: 'Book' },
      ]);
      const key = newKey();
      const first = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: LINES,
        idempotencyKey: key,
      });
      assert.equal(first.statusCode, 200, first.body);
      const second = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: LINES,
        idempotencyKey: key,
      });
      assert.equal(second.statusCode, 200);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.body, first.body);
    });

    it('a replay returns the stored result even after the lines changed since: the ingest is not run again', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'FEE', name: 'Fee' },
        { code: 'BOOK', name: 'Book' },
      ]);
      const key = newKey();
      const first = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: LINES,
        idempotencyKey: key,
      });
      // A later keyless ingest changes FEE; a replay of the first request must not put the old amount back.
      await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: { invoice_ref: 'INV-IL', lines: [{ code: 'FEE', name: 'Fee', amount_minor: 4000 }] },
      });
      const replay = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: LINES,
        idempotencyKey: key,
      });
      assert.equal(replay.body, first.body);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      const listed = (
        await call(t, 'GET', '/api/v1/invoice-lines', { key: m.test_api_key, query: { invoice_ref: 'INV-IL' } })
      ).json();
      assert.equal(listed.total_minor, 4250);
    });

    it('a 207 partial ingest is replayed as 207 with the same errors', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [{ code: 'FEE', name: 'Fee' }]);
      const key = newKey();
      const first = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: LINES,
        idempotencyKey: key,
      });
      assert.equal(first.statusCode, 207, first.body);
      assert.equal(first.json().errors.length, 1);
      const replay = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: LINES,
        idempotencyKey: key,
      });
      assert.equal(replay.statusCode, 207);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, first.body);
    });

    it('the same key with changed lines is refused with 422 IDEMPOTENCY_KEY_REUSED and the lines stay as first stored', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'FEE', name: 'Fee' },
        { code: 'BOOK', name: 'Book' },
      ]);
      const key = newKey();
      await call(t, 'POST', '/api/v1/invoice-lines', { key: m.test_api_key, body: LINES, idempotencyKey: key });
      const changed = { invoice_ref: 'INV-IL', lines: [{ code: 'FEE', name: 'Fee', amount_minor: 1 }] };
      assertErrorEnvelope(
        await call(t, 'POST', '/api/v1/invoice-lines', { key: m.test_api_key, body: changed, idempotencyKey: key }),
        422,
        'IDEMPOTENCY_KEY_REUSED',
      );
      const listed = (
        await call(t, 'GET', '/api/v1/invoice-lines', { key: m.test_api_key, query: { invoice_ref: 'INV-IL' } })
      ).json();
      assert.equal(listed.total_minor, 1250);
    });

    it('an ingest refused with 400 stores nothing under its key: the corrected retry with the same key is ingested', async () => {
      const m = await t.merchant();
      await syncCodes(t, m.test_api_key, [
        { code: 'FEE', name: 'Fee' },
        { code: 'BOOK', name: 'Book' },
      ]);
      const key = newKey();
      assertErrorEnvelope(
        await call(t, 'POST', '/api/v1/invoice-lines', {
          key: m.test_api_key,
          body: { ...LINES, currency: 'EUR' },
          idempotencyKey: key,
        }),
        400,
        'INVALID_ARGUMENT',
      );
      const ok = await call(t, 'POST', '/api/v1/invoice-lines', {
        key: m.test_api_key,
        body: LINES,
        idempotencyKey: key,
      });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.headers['idempotent-replayed'], undefined);
      assert.equal(ok.json().ingested, 2);
    });
  });
});
