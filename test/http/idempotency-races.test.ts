// Racing requests with one Idempotency-Key make one object (issue 29, item 2): parallel requests over a
// listening server, so on PostgreSQL they run on separate connections at the same time (embedded storage
// runs them one after another, and must give the same answers).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { multipartFile } from '../support/http.ts';
import { bankRecipient, createPayout, fund, merchantWithHooks } from '../support/payouts-fixtures.ts';

const PARALLEL = 8;

interface Answer {
  status: number;
  body: string;
  replayed: boolean;
}

describe(`Idempotency-Key under concurrency (${storageKind})`, () => {
  let t: TestContext;
  let base: string;
  before(async () => {
    t = await startTestApp();
    base = await t.listen();
  });
  after(() => t.close());

  async function post(path: string, apiKey: string, body: unknown, idempotencyKey?: string): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: res.status, body: await res.text(), replayed: res.headers.get('idempotent-replayed') === 'true' };
  }

  const count = async (sql: string, params: unknown[]) => (await t.db.query<{ n: number }>(sql, params))[0]!.n;

  /** The answers are one first answer and its replays: the same status and body, all but one marked replayed. */
  function oneAnswer(answers: Answer[], status: number): void {
    for (const answer of answers) {
      assert.equal(answer.status, status, answer.body);
      assert.equal(answer.body, answers[0]!.body, 'every answer is the first one');
    }
    assert.equal(answers.filter((a) => !a.replayed).length, 1, 'one request ran, the others were replayed');
  }

  async function payoutMerchant() {
    const m = await merchantWithHooks(t);
    await fund(t, m.merchant_id, 'test', 1_000_000);
    return { m, recipient: await bankRecipient(t, m.test_api_key) };
  }

  it(`${PARALLEL} parallel payouts with one key and body make one payout and one hold, answered alike`, async () => {
    const { m, recipient } = await payoutMerchant();
    const key = `race-${randomUUID()}`;
    const body = {
      recipient_id: recipient.id,
      amount_minor: 1000,
      client_reference: `race-${randomUUID()}`,
      test_outcome: 'requested',
    };
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, () => post('/api/v1/payouts', m.test_api_key, body, key)),
    );
    oneAnswer(answers, 201);
    assert.equal(await count('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [m.merchant_id]), 1);
    const balance = await fetch(`${base}/api/v1/payouts/balance`, {
      headers: { authorization: `Bearer ${m.test_api_key}` },
    });
    const held = (await balance.json()) as { held_minor: number };
    assert.equal(held.held_minor, 1000 + JSON.parse(answers[0]!.body).fee_minor, 'one hold');
  });

  it(`${PARALLEL} parallel payouts with one key and different bodies make one payout; the others are 422 or replays of it`, async () => {
    const { m, recipient } = await payoutMerchant();
    const key = `race-${randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        post(
          '/api/v1/payouts',
          m.test_api_key,
          { recipient_id: recipient.id, amount_minor: 1000 + (i % 2), client_reference: `race-${randomUUID()}` },
          key,
        ),
      ),
    );
    const made = answers.filter((a) => a.status === 201);
    assert.ok(made.length >= 1, JSON.stringify(answers));
    for (const answer of made) assert.equal(answer.body, made[0]!.body, 'a 201 is the one payout or its replay');
    for (const answer of answers.filter((a) => a.status !== 201)) {
      assert.equal(answer.status, 422, answer.body);
      assert.equal(JSON.parse(answer.body).error.code, 'IDEMPOTENCY_KEY_REUSED');
    }
    assert.equal(await count('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [m.merchant_id]), 1);
  });

  it('a keyed payout racing unkeyed ones with its client_reference: one payout, every answer is it (201 once, then 200 retries)', async () => {
    const { m, recipient } = await payoutMerchant();
    const body = { recipient_id: recipient.id, amount_minor: 1000, client_reference: `race-${randomUUID()}` };
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        post('/api/v1/payouts', m.test_api_key, body, i % 2 === 0 ? `race-${randomUUID()}` : undefined),
      ),
    );
    assert.equal(answers.filter((a) => a.status === 201).length, 1, JSON.stringify(answers.map((a) => a.status)));
    const ids = new Set(
      answers.map((a) => {
        assert.ok(a.status === 200 || a.status === 201, a.body);
        return JSON.parse(a.body).id as string;
      }),
    );
    assert.equal(ids.size, 1);
    assert.equal(await count('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [m.merchant_id]), 1);
  });

  it(`${PARALLEL} parallel recipients with one key make one recipient`, async () => {
    const m = await merchantWithHooks(t);
    const caps = await fetch(`${base}/api/v1/payouts/capabilities`, {
      headers: { authorization: `Bearer ${m.test_api_key}` },
    });
    const bankId = ((await caps.json()) as { banks: { id: string }[] }).banks[0]!.id;
    const key = `race-${randomUUID()}`;
    const body = { bank_id: bankId, account_number: '1234567890', account_name: 'Kofi Mensah' };
    oneAnswer(
      await Promise.all(
        Array.from({ length: PARALLEL }, () => post('/api/v1/payouts/recipients', m.test_api_key, body, key)),
      ),
      201,
    );
    assert.equal(await count('SELECT count(*)::int AS n FROM recipients WHERE merchant_id = $1', [m.merchant_id]), 1);
  });

  it(`${PARALLEL} parallel evidence uploads with one key make one evidence file`, async () => {
    const { m, recipient } = await payoutMerchant();
    const payout = await createPayout(t, m.test_api_key, recipient.id, 100);
    const key = `race-${randomUUID()}`;
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('race')]);
    const upload = async (): Promise<Answer> => {
      const { payload, contentType } = multipartFile('file', 'proof.png', 'image/png', png);
      const res = await fetch(`${base}/api/v1/payouts/${payout.id}/evidence`, {
        method: 'POST',
        headers: { authorization: `Bearer ${m.test_api_key}`, 'content-type': contentType, 'idempotency-key': key },
        body: payload,
      });
      return {
        status: res.status,
        body: await res.text(),
        replayed: res.headers.get('idempotent-replayed') === 'true',
      };
    };
    oneAnswer(await Promise.all(Array.from({ length: PARALLEL }, upload)), 201);
    assert.equal(await count('SELECT count(*)::int AS n FROM payout_evidence WHERE payout_id = $1', [payout.id]), 1);
  });

  it(`${PARALLEL} parallel cancels with one key cancel once: one payout.cancelled event`, async () => {
    const { m, recipient } = await payoutMerchant();
    const payout = await createPayout(t, m.test_api_key, recipient.id, 100, { test_outcome: 'requested' });
    const key = `race-${randomUUID()}`;
    oneAnswer(
      await Promise.all(
        Array.from({ length: PARALLEL }, () =>
          post(`/api/v1/payouts/${payout.id}/cancel`, m.test_api_key, { reason: 'race' }, key),
        ),
      ),
      200,
    );
    assert.equal(
      await count("SELECT count(*)::int AS n FROM events WHERE object_id = $1 AND type = 'payout.cancelled'", [
        payout.id,
      ]),
      1,
    );
  });
});
