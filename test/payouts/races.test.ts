// Payouts under real concurrency: many HTTP requests in flight at once over a listening server
// (SPEC 4.3 rules 3-4, 3.3 cancel). Each rule that racing requests could break is enforced by the statement that writes the payout.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { balance, checkInvariants } from '../../src/ledger/service.ts';
import { openDb } from '../../src/db/index.ts';
import { processDuePayouts } from '../../src/payouts/processing.ts';
import { setPayoutAccess } from '../../src/payouts/settings.ts';
import { storageKind } from '../support/helpers.ts';

const METRICS_TOKEN = 'metrics-token-for-payout-races';
import {
  bankRecipient,
  createPayout,
  drive,
  extraKey,
  fund,
  liveMerchant,
  makeDue,
  merchantWithHooks,
  newClientReference,
  payoutStatus,
} from '../support/payouts-fixtures.ts';
import { usePayoutApp } from '../support/payout-app.ts';

const RETRIES_503_MAX = 5;

interface Reply {
  status: number;
  /** How many times the request was sent (more than 1 after a 503). */
  attempts: number;
  body: { id?: string; status?: string; error?: { code: string } };
}

describe(`payout races (${storageKind})`, () => {
  const { t, rail } = usePayoutApp({ METRICS_TOKEN });
  let baseUrl: string;
  before(async () => {
    baseUrl = await t.listen();
  });

  /**
   * One request as a well-behaved client sends it: a 503 (e.g. no storage connection free within its
   * timeout on a loaded machine) is retried after Retry-After with the same body, as the API asks.
   * A retry is safe for payouts (idempotent by client_reference) and cancels (a repeat returns the cancelled record).
   */
  async function send(
    key: string,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    options: { retry503?: boolean } = {},
  ): Promise<Reply> {
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const reply = { status: res.status, attempts: attempt, body: (await res.json()) as Reply['body'] };
      if (reply.status !== 503 || attempt >= RETRIES_503_MAX || options.retry503 === false) return reply;
      await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? '1') * 1000));
    }
  }

  const count = (replies: Reply[], status: number, code?: string) =>
    replies.filter((reply) => reply.status === status && (code === undefined || reply.body.error?.code === code))
      .length;

  /** Reads the balance over and over until stopped (on its own connection pool on PostgreSQL); fails if it is ever negative or inconsistent. */
  function watchBalance(merchantId: string, environment: 'test' | 'live') {
    let running = true;
    let reads = 0;
    const done = (async () => {
      const db = t.config.databaseUrl
        ? await openDb({ databaseUrl: t.config.databaseUrl, dataDir: null }, { migrate: false })
        : t.db;
      try {
        do {
          const b = await balance(db, merchantId, environment);
          assert.ok(b.available_minor >= 0, `available went negative: ${JSON.stringify(b)}`);
          assert.ok(b.held_minor >= 0, `held went negative: ${JSON.stringify(b)}`);
          assert.equal(b.eligible_minor, b.available_minor + b.held_minor);
          reads += 1;
          await new Promise((resolve) => setTimeout(resolve, 2));
        } while (running);
      } finally {
        if (db !== t.db) await db.close();
      }
    })();
    return async () => {
      running = false;
      await done;
      return reads;
    };
  }

  it('50 concurrent payouts draining one balance: exactly floor(balance / (amount + fee)) succeed, the rest are 409 INSUFFICIENT_FUNDS, never below zero', async () => {
    const m = await merchantWithHooks(t);
    const startMinor = 12_345;
    await fund(t, m.merchant_id, 'test', startMinor);
    const recipient = await bankRecipient(t, m.test_api_key);
    const amountMinor = 900; // + GHS 1.00 bank fee = 1,000 per payout
    const expected = Math.floor(startMinor / (amountMinor + 100));
    assert.equal(expected, 12);

    const stopWatching = watchBalance(m.merchant_id, 'test');
    const replies = await Promise.all(
      Array.from({ length: 50 }, () =>
        send(m.test_api_key, 'POST', '/api/v1/payouts', {
          recipient_id: recipient.id,
          amount_minor: amountMinor,
          client_reference: newClientReference(),
        }),
      ),
    );
    assert.ok((await stopWatching()) > 0);

    // A 200 can only be a retried request whose first attempt was created but answered 503 (the retry finds it by client_reference).
    const summary = JSON.stringify(replies.map((r) => [r.status, r.attempts, r.body.error?.code]));
    assert.ok(
      replies.every((r) => r.status !== 200 || r.attempts > 1),
      summary,
    );
    assert.equal(count(replies, 201) + count(replies, 200), expected, summary);
    assert.equal(count(replies, 409, 'INSUFFICIENT_FUNDS'), 50 - expected, summary);
    assert.equal(
      new Set(replies.filter((r) => r.status === 201 || r.status === 200).map((r) => r.body.id)).size,
      expected,
    );
    const rows = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [
      m.merchant_id,
    ]);
    assert.equal(rows[0]!.n, expected);
    const after = await balance(t.db, m.merchant_id, 'test');
    assert.deepEqual(after, {
      environment: 'test',
      currency: 'GHS',
      available_minor: startMinor - expected * 1_000,
      held_minor: 0,
      eligible_minor: startMinor - expected * 1_000,
      pending_minor: 0,
      reserved_minor: 0,
    });
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('a payout whose accounts another transaction holds waits for it on the pool, and holds up no other request meanwhile', {
    skip: storageKind === 'postgres' ? false : 'embedded storage is one connection: nothing runs beside a transaction',
  }, async () => {
    const m = await merchantWithHooks(t);
    const other = await t.merchant();
    await fund(t, m.merchant_id, 'test', 100_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    const before = await balance(t.db, m.merchant_id, 'test');
    const { payout, othersMs } = await t.db.transaction(async (tx) => {
      // As a payment crediting the merchant would: its ledger accounts locked until this transaction ends.
      await tx.query(
        'SELECT id FROM ledger_accounts WHERE merchant_id = $1 AND environment = $2 ORDER BY id FOR NO KEY UPDATE',
        [m.merchant_id, 'test'],
      );
      const payout = send(
        m.test_api_key,
        'POST',
        '/api/v1/payouts',
        { recipient_id: recipient.id, amount_minor: 1_000, client_reference: newClientReference() },
        { retry503: false },
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Session creates share the pipelined write connections with payouts: none waits behind the blocked payout.
      const startedAt = Date.now();
      const others = await Promise.all(
        Array.from({ length: 8 }, () =>
          send(
            other.test_api_key,
            'POST',
            '/api/v1/sessions',
            { amount_minor: 5_000, invoice_ref: 'INV-BESIDE' },
            { retry503: false },
          ),
        ),
      );
      const othersMs = Date.now() - startedAt;
      for (const reply of others) assert.equal(reply.status, 201, JSON.stringify(reply.body));
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { payout, othersMs };
    });
    assert.ok(othersMs < 1_000, `session creates took ${othersMs} ms beside a payout waiting on a lock`);
    const reply = await payout;
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    assert.equal(reply.attempts, 1);
    const after = await balance(t.db, m.merchant_id, 'test');
    assert.equal(
      after.available_minor,
      before.available_minor - 1_000 - 100,
      'the amount and the GHS 1.00 bank fee moved once',
    );
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it("30 concurrent payouts against the day's limit: exactly the ones that fit succeed, the rest are 409 PAYOUT_DAILY_LIMIT, and the day's total is their sum", async () => {
    const m = await merchantWithHooks(t);
    await fund(t, m.merchant_id, 'test', 1_000_000);
    await setPayoutAccess(t.db, m.merchant_id, 'test', { daily_limit_minor: 10_000 });
    const recipient = await bankRecipient(t, m.test_api_key);
    // The first of the day creates the day's total row: racing that too is the point.
    const replies = await Promise.all(
      Array.from({ length: 30 }, () =>
        send(m.test_api_key, 'POST', '/api/v1/payouts', {
          recipient_id: recipient.id,
          amount_minor: 1_000,
          client_reference: newClientReference(),
        }),
      ),
    );
    const summary = JSON.stringify(replies.map((r) => [r.status, r.attempts, r.body.error?.code]));
    assert.equal(count(replies, 201) + count(replies, 200), 10, summary);
    assert.equal(count(replies, 409, 'PAYOUT_DAILY_LIMIT'), 20, summary);
    const [row] = await t.db.query<{ paid: number; total: number }>(
      `SELECT (SELECT coalesce(sum(amount_minor), 0)::bigint FROM payouts WHERE merchant_id = $1) AS paid,
              (SELECT coalesce(sum(committed_minor), 0)::bigint FROM payout_day_totals WHERE merchant_id = $1) AS total`,
      [m.merchant_id],
    );
    assert.deepEqual(row, { paid: 10_000, total: 10_000 });
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('50 concurrent Live payouts hold at most the balance and release nothing twice', async () => {
    const m = await liveMerchant(t, { fundMinor: 10_050 });
    const recipient = await bankRecipient(t, m.live_api_key, '2020202020');
    const replies = await Promise.all(
      Array.from({ length: 50 }, () =>
        send(m.live_api_key, 'POST', '/api/v1/payouts', {
          recipient_id: recipient.id,
          amount_minor: 1_900,
          client_reference: newClientReference(),
        }),
      ),
    );
    const summary = JSON.stringify(replies.map((r) => [r.status, r.attempts, r.body.error?.code]));
    assert.ok(
      replies.every((r) => r.status !== 200 || r.attempts > 1),
      summary,
    );
    assert.equal(count(replies, 201) + count(replies, 200), 5, summary);
    assert.equal(count(replies, 409, 'INSUFFICIENT_FUNDS'), 45, summary);
    assert.deepEqual(await balance(t.db, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 50,
      held_minor: 10_000,
      eligible_minor: 10_050,
      pending_minor: 0,
      reserved_minor: 0,
    });
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  /** From /metrics (sika_payout_batch_size): payout statements that wrote their payouts together, and how many payouts those held. */
  async function payoutsWrittenTogether(): Promise<{ statements: number; payouts: number }> {
    const text = await (
      await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    const value = (name: string) =>
      Number(new RegExp(`^${name}\\{outcome="together"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return { statements: value('sika_payout_batch_size_count'), payouts: value('sika_payout_batch_size_sum') };
  }

  it("one merchant's concurrent payouts are written together, and each is answered as it would be alone: a deleted recipient's is 409, a repeated client_reference is one payout", async () => {
    const m = await merchantWithHooks(t);
    await fund(t, m.merchant_id, 'test', 1_000_000);
    const [recipient, doomed] = [
      await bankRecipient(t, m.test_api_key),
      await bankRecipient(t, m.test_api_key, '5550000002'),
    ];
    const payout = (recipientId = recipient.id) =>
      send(m.test_api_key, 'POST', '/api/v1/payouts', {
        recipient_id: recipientId,
        amount_minor: 1_000,
        client_reference: newClientReference(),
      });

    const before = await payoutsWrittenTogether();
    const first = await Promise.all(Array.from({ length: 24 }, () => payout()));
    const after = await payoutsWrittenTogether();
    assert.equal(
      first.filter((r) => r.status === 201 || (r.status === 200 && r.attempts > 1)).length,
      24,
      JSON.stringify(first.map((r) => [r.status, r.body.error?.code])),
    );
    const together = { statements: after.statements - before.statements, payouts: after.payouts - before.payouts };
    assert.equal(together.payouts, 24, JSON.stringify(together));
    // Embedded storage runs each statement to its end before any other code: there is never a second
    // payout waiting, so nothing to batch. A server database is where batches form.
    if (storageKind === 'postgres')
      assert.ok(together.statements < 24, `no payouts were written together: ${JSON.stringify(together)}`);

    await createPayout(t, m.test_api_key, doomed.id, 1_000); // its decision is remembered...
    assert.equal(
      (
        await fetch(`${baseUrl}/api/v1/payouts/recipients/${doomed.id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${m.test_api_key}` },
        })
      ).status,
      204,
    );
    const repeated = { recipient_id: recipient.id, amount_minor: 2_000, client_reference: newClientReference() };
    const second = await Promise.all([
      ...Array.from({ length: 10 }, () => payout()),
      ...Array.from({ length: 4 }, () => send(m.test_api_key, 'POST', '/api/v1/payouts', repeated)),
      payout(doomed.id), // ...and is found changed by the write
    ]);
    const summary = JSON.stringify(second.map((r) => [r.status, r.attempts, r.body.error?.code]));
    assert.equal(
      second.slice(0, 10).filter((r) => r.status === 201 || (r.status === 200 && r.attempts > 1)).length,
      10,
      summary,
    );
    const repeats = second.slice(10, 14);
    assert.ok(
      repeats.every((r) => r.status === 201 || r.status === 200),
      summary,
    );
    assert.equal(new Set(repeats.map((r) => r.body.id)).size, 1, 'one payout for the repeated client_reference');
    assert.equal(second[14]!.status, 409, summary);
    assert.equal(second[14]!.body.error?.code, 'RECIPIENT_UNAVAILABLE');

    const written = await t.db.query<{ n: number; paid: number }>(
      'SELECT count(*)::int AS n, sum(amount_minor)::bigint AS paid FROM payouts WHERE merchant_id = $1',
      [m.merchant_id],
    );
    assert.deepEqual(written, [{ n: 24 + 1 + 10 + 1, paid: 24_000 + 1_000 + 10_000 + 2_000 }]);
    assert.equal(
      (await balance(t.db, m.merchant_id, 'test')).available_minor,
      1_000_000 - 36 * 100 - 37_000,
      'each payout charged once, with its fee',
    );
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('20 identical concurrent retries create exactly one payout; every answer is 201 or 200 with the same id', async () => {
    const m = await merchantWithHooks(t);
    await fund(t, m.merchant_id, 'test', 100_000);
    const recipient = await bankRecipient(t, m.test_api_key);
    const body = {
      recipient_id: recipient.id,
      amount_minor: 1_234,
      client_reference: newClientReference(),
      notes: 'same every time',
    };
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => send(m.test_api_key, 'POST', '/api/v1/payouts', body)),
    );
    assert.deepEqual(
      replies.filter((r) => r.status !== 200 && r.status !== 201),
      [],
      'no errors',
    );
    assert.ok(count(replies, 201) <= 1);
    assert.equal(count(replies, 201) + count(replies, 200), 20);
    if (count(replies, 201) === 0)
      assert.ok(
        replies.some((r) => r.attempts > 1),
        'the creating request was only lost to a 503',
      );
    assert.equal(new Set(replies.map((r) => r.body.id)).size, 1);
    const rows = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [
      m.merchant_id,
    ]);
    assert.equal(rows[0]!.n, 1);
    assert.equal((await balance(t.db, m.merchant_id, 'test')).available_minor, 100_000 - 1_334, 'charged once');
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('two keys racing one client_reference: one payout, and the other key gets 409 REFERENCE_CONFLICT', async () => {
    const m = await merchantWithHooks(t);
    await fund(t, m.merchant_id, 'test', 100_000);
    const second = await extraKey(t, m.merchant_id, 'test');
    const recipient = await bankRecipient(t, m.test_api_key);
    for (let round = 0; round < 5; round++) {
      const body = { recipient_id: recipient.id, amount_minor: 1_000, client_reference: newClientReference() };
      const replies = await Promise.all([
        send(m.test_api_key, 'POST', '/api/v1/payouts', body),
        send(second.key, 'POST', '/api/v1/payouts', body),
      ]);
      assert.equal(
        count(replies, 201) +
          count(
            replies.filter((r) => r.attempts > 1),
            200,
          ),
        1,
        JSON.stringify(replies),
      );
      assert.equal(count(replies, 409, 'REFERENCE_CONFLICT'), 1, JSON.stringify(replies));
      const rows = await t.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1 AND client_reference = $2',
        [m.merchant_id, body.client_reference],
      );
      assert.equal(rows[0]!.n, 1);
    }
    assert.equal((await balance(t.db, m.merchant_id, 'test')).available_minor, 100_000 - 5 * 1_100);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('two concurrent replacements of one recipient: one new version (201), the other 409, and the old version is inactive', async () => {
    const m = await merchantWithHooks(t);
    const old = await bankRecipient(t, m.test_api_key, '40404040');
    const bankId = old.bank_id as string;
    const replies = await Promise.all(
      ['50505050', '60606060', '70707070'].map((account_number) =>
        // Sent without an Idempotency-Key (each request its own recipient): no blind retries here.
        send(
          m.test_api_key,
          'POST',
          '/api/v1/payouts/recipients',
          { bank_id: bankId, account_number, account_name: 'Kofi Mensah', previous_version_id: old.id },
          { retry503: false },
        ),
      ),
    );
    assert.equal(count(replies, 201), 1, JSON.stringify(replies));
    assert.equal(count(replies, 409, 'RECIPIENT_UNAVAILABLE'), 2, JSON.stringify(replies));
    const rows = await t.db.query<{ id: string; active: boolean; previous_version_id: string | null }>(
      'SELECT id, active, previous_version_id FROM recipients WHERE merchant_id = $1 ORDER BY created_at',
      [m.merchant_id],
    );
    assert.equal(rows.length, 2);
    assert.deepEqual(
      rows.map((row) => [row.id === old.id, row.active, row.previous_version_id]),
      [
        [true, false, null],
        [false, true, old.id],
      ],
    );
  });

  it('a cancel racing the recipient check ends in one final state each time, and holds are released exactly once', async () => {
    const m = await liveMerchant(t, { fundMinor: 1_000_000 });
    const recipient = await bankRecipient(t, m.live_api_key, '3030303030');
    const outcomes: string[] = [];
    let paidMinor = 0;
    for (let round = 0; round < 10; round++) {
      const payout = await createPayout(t, m.live_api_key, recipient.id, 10_000 + round);
      assert.deepEqual(await payoutStatus(t, payout.id), { status: 'processing', processing_step: 'recipient_check' });
      await makeDue(t, payout.id);
      const [cancelReply] = await Promise.all([
        send(m.live_api_key, 'POST', `/api/v1/payouts/${payout.id}/cancel`, { reason: `race ${round}` }),
        processDuePayouts(t.db, rail, { only: [payout.id] }),
      ]);
      const final = await drive(t, rail, payout.id);
      outcomes.push(`${cancelReply.status}:${final}`);
      if (cancelReply.status === 200) {
        assert.equal(cancelReply.body.status, 'cancelled');
        assert.equal(final, 'cancelled');
      } else {
        assert.equal(cancelReply.status, 409, JSON.stringify(cancelReply.body));
        assert.equal(cancelReply.body.error?.code, 'PAYOUT_NOT_CANCELLABLE');
        assert.equal(final, 'paid');
        paidMinor += payout.total_debit_minor;
      }
      const resolutions = await t.db.query<{ kind: string }>(
        `SELECT kind FROM journal_entries WHERE reference_type = 'payout' AND reference_id = $1 AND kind IN ('payout_post', 'payout_void')`,
        [payout.id],
      );
      assert.deepEqual(
        resolutions.map((row) => row.kind),
        [final === 'paid' ? 'payout_post' : 'payout_void'],
        'the hold is resolved exactly once',
      );
      const events = await t.db.query<{ type: string }>(
        `SELECT type FROM events WHERE object_id = $1 AND type IN ('payout.paid', 'payout.cancelled', 'payout.failed')`,
        [payout.id],
      );
      assert.deepEqual(
        events.map((row) => row.type),
        [`payout.${final}`],
        'one final event',
      );
    }
    assert.deepEqual(await balance(t.db, m.merchant_id, 'live'), {
      environment: 'live',
      currency: 'GHS',
      available_minor: 1_000_000 - paidMinor,
      held_minor: 0,
      eligible_minor: 1_000_000 - paidMinor,
      pending_minor: 0,
      reserved_minor: 0,
    });
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), [], outcomes.join(' '));
  });
});
