// GET /api/v1/balance/transactions and /api/v1/balance/summary (issue 17, the merchant's books): each movement
// of the available balance with its amount, fee, net, source and the balance after it; keyset pages that never
// skip or repeat a row while others are posted; filters; only the key's own merchant and environment; and the
// CSV exports (Accept: text/csv) of balance transactions, sessions, payouts and the summary.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CreatedMerchant } from '../../src/accounts/service.ts';
import { EXPORT_RANGE_DAYS_MAX } from '../../src/books/model.ts';
import { creditPayment } from '../../src/ledger/service.ts';
import { LivePayoutSimulator } from '../../src/rails/payouts.ts';
import { createSession, startAttempt, simulate, totalOf } from '../support/checkout.ts';
import { around, csvRows, dayShift, today } from '../support/books.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';
import {
  api,
  balanceOf,
  bankRecipient,
  createPayout,
  liveMerchant,
  merchantWithHooks,
  momoRecipient,
  verifyRecipientsNow,
} from '../support/payouts-fixtures.ts';

type Txn = {
  id: string;
  type: string;
  amount_minor: number;
  fee_minor: number;
  net_minor: number;
  balance_after_minor: number;
  source: { type: string; id: string; session_id?: string | null };
  created_at: string;
};

describe(`balance transactions and exports (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    // Live payouts need a provider that pays wallets: the simulator (none is called while a payout awaits approval).
    t = await startTestApp({}, { payoutRail: new LivePayoutSimulator() });
  });
  after(async () => t?.close());

  const list = (key: string, query: Record<string, string> = {}) =>
    call(t, 'GET', '/api/v1/balance/transactions', { key, query });
  const csv = (key: string, url: string, query: Record<string, string>) =>
    call(t, 'GET', url, { key, query, headers: { accept: 'text/csv' } });
  const credit = (m: CreatedMerchant, chargedMinor: number, environment: 'test' | 'live' = 'test') =>
    t.db.transaction((tx) =>
      creditPayment(tx, {
        merchantId: m.merchant_id,
        environment,
        paymentId: `att_${randomUUID()}`,
        chargedMinor,
        payerFeeMinor: 0,
        merchantFeeMinor: 0,
      }),
    );

  async function pageThrough(
    key: string,
    limit: number,
    query: Record<string, string> = {},
    between?: () => Promise<unknown>,
  ) {
    const rows: Txn[] = [];
    let startingAfter: string | undefined;
    for (let page = 0; page < 200; page++) {
      const res = await list(key, {
        ...query,
        limit: String(limit),
        ...(startingAfter ? { starting_after: startingAfter } : {}),
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { object: string; data: Txn[]; has_more: boolean };
      assert.equal(body.object, 'list');
      assert.ok(body.data.length <= limit);
      rows.push(...body.data);
      if (!body.has_more) return rows;
      startingAfter = body.data.at(-1)!.id;
      await between?.();
    }
    throw new Error('paging did not end');
  }

  it('a card payment, a Test payout paid at once and a Live payout held then cancelled show amount, fee, net, source and the balance after', async () => {
    const m = await merchantWithHooks(t);
    const session = await createSession(t, m, { amount_minor: 40_000 });
    const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', 40_000) });
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const recipient = await bankRecipient(t, m.test_api_key);
    await verifyRecipientsNow(t, recipient.id);
    const testPayout = await createPayout(t, m.test_api_key, recipient.id, 10_000);
    assert.equal(testPayout.status, 'paid');

    const rows = await pageThrough(m.test_api_key, 10);
    assert.deepEqual(
      rows.map((r) => r.type),
      ['payout', 'payment'],
    );
    const [payout, payment] = rows as [Txn, Txn];
    assert.deepEqual(
      {
        amount: payment.amount_minor,
        fee: payment.fee_minor,
        net: payment.net_minor,
        after: payment.balance_after_minor,
        source: payment.source,
      },
      {
        amount: 40_000,
        fee: 1_000,
        net: 39_000,
        after: 39_000,
        source: { type: 'payment', id: attempt.attempt_reference, session_id: session.id },
      },
      'card: 2.5% borne by the merchant',
    );
    assert.match(payment.id, /^txn_[0-9a-f]{32}$/);
    assert.deepEqual(
      {
        amount: payout.amount_minor,
        fee: payout.fee_minor,
        net: payout.net_minor,
        after: payout.balance_after_minor,
        source: payout.source,
      },
      {
        amount: -10_000,
        fee: testPayout.fee_minor,
        net: -10_000 - testPayout.fee_minor,
        after: 39_000 - 10_000 - testPayout.fee_minor,
        source: { type: 'payout', id: testPayout.id },
      },
    );
    assert.equal(rows[0]!.balance_after_minor, (await balanceOf(t, m.merchant_id, 'test')).available_minor);

    const live = await liveMerchant(t, { payoutApproval: true, fundMinor: 100_000 });
    const wallet = await momoRecipient(t, live.live_api_key, '0551234567');
    const held = await createPayout(t, live.live_api_key, wallet.id, 10_000);
    assert.equal(held.status, 'requested');
    const cancelled = await api(t, live.live_api_key, 'POST', `/api/v1/payouts/${held.id}/cancel`, {});
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    const liveRows = await pageThrough(live.live_api_key, 10);
    assert.deepEqual(
      liveRows.map((r) => [r.type, r.amount_minor, r.fee_minor, r.net_minor, r.balance_after_minor]),
      [
        ['payout_release', 10_000, -100, 10_100, 100_000],
        ['payout', -10_000, 100, -10_100, 89_900],
        ['payment', 100_000, 0, 100_000, 100_000],
      ],
    );
  });

  it('pages newest first without skipping or repeating a row while new movements are posted between pages', async () => {
    const m = await t.merchant();
    for (let i = 0; i < 23; i++) await credit(m, 1_000 + i);
    const existing = (await pageThrough(m.test_api_key, 100)).map((r) => r.id);
    assert.equal(existing.length, 23);
    const posted: string[] = [];
    const seen = await pageThrough(m.test_api_key, 5, {}, async () => {
      await Promise.all([credit(m, 7), credit(m, 9)]);
      posted.push('two');
    });
    assert.equal(new Set(seen.map((r) => r.id)).size, seen.length, 'no row twice');
    assert.deepEqual(
      seen.map((r) => r.id).filter((id) => existing.includes(id)),
      existing,
      'every row that existed, in the same order',
    );
    assert.equal(
      seen.length,
      existing.length,
      'rows posted while paging are newer than the first page: not in this walk',
    );
    assert.ok(posted.length >= 4);
    const again = await pageThrough(m.test_api_key, 7);
    assert.equal(again.length, 23 + 2 * posted.length);
    for (let i = 1; i < again.length; i++)
      assert.equal(
        again[i - 1]!.balance_after_minor - again[i - 1]!.net_minor,
        again[i]!.balance_after_minor,
        'each balance follows the one before',
      );
  });

  it('filters by type and created range', async () => {
    const m = await liveMerchant(t, { payoutApproval: true, fundMinor: 50_000 });
    const wallet = await momoRecipient(t, m.live_api_key, '0551234568');
    await createPayout(t, m.live_api_key, wallet.id, 5_000);
    const types = async (query: Record<string, string>) =>
      (await pageThrough(m.live_api_key, 10, query)).map((r) => r.type);
    assert.deepEqual(await types({ type: 'payout' }), ['payout']);
    assert.deepEqual(await types({ type: 'payment' }), ['payment']);
    assert.deepEqual(await types({ type: 'refund' }), []);
    const future = new Date(Date.now() + 60_000).toISOString();
    assert.deepEqual(await types({ created_gte: future }), []);
    assert.deepEqual(await types({ created_lt: future }), ['payout', 'payment']);
    const all = await pageThrough(m.live_api_key, 10);
    assert.deepEqual(await types({ created_gte: all[0]!.created_at }), ['payout']);
    assert.deepEqual(await types({ created_lt: all[0]!.created_at }), ['payment']);
  });

  it("never shows another merchant's or the other environment's movements, and refuses their ids as a cursor", async () => {
    const m = await t.merchant();
    const other = await t.merchant();
    await credit(m, 1_000);
    await credit(m, 2_000, 'live');
    await credit(other, 3_000);
    const mine = await pageThrough(m.test_api_key, 10);
    assert.deepEqual(
      mine.map((r) => r.amount_minor),
      [1_000],
    );
    const live = await pageThrough(m.live_api_key, 10);
    assert.deepEqual(
      live.map((r) => r.amount_minor),
      [2_000],
    );
    const theirs = await pageThrough(other.test_api_key, 10);
    for (const cursor of [theirs[0]!.id, live[0]!.id, 'txn_0123', 'txn_' + 'f'.repeat(32), 'cs_unknown']) {
      const res = await list(m.test_api_key, { starting_after: cursor });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().error.code, 'INVALID_ARGUMENT');
    }
    const exported = csvRows((await csv(m.test_api_key, '/api/v1/balance/transactions', around())).body);
    assert.deepEqual(
      exported.map((r) => r.id),
      [mine[0]!.id],
    );
  });

  it('refuses bad queries with 400: limit out of range, an unknown type, a malformed time, a reversed range', async () => {
    const m = await t.merchant();
    const bad: Record<string, string>[] = [
      { limit: '0' },
      { limit: '101' },
      { type: 'fee' },
      { created_gte: 'yesterday' },
      { created_gte: '2026-11-02T00:00:00Z', created_lt: '2026-11-01T00:00:00Z' },
    ];
    for (const query of bad) {
      const res = await list(m.test_api_key, query);
      assert.equal(res.statusCode, 400, `${JSON.stringify(query)}: ${res.body}`);
      assert.equal(res.json().error.code, 'INVALID_ARGUMENT');
    }
    assert.equal((await call(t, 'GET', '/api/v1/balance/transactions')).statusCode, 401);
  });

  it('exports balance transactions as CSV for Accra days: headers, integer and GHS columns that add up, oldest first', async () => {
    const m = await t.merchant();
    await credit(m, 12_345);
    await credit(m, 5);
    const res = await csv(m.test_api_key, '/api/v1/balance/transactions', around());
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    const { from, to } = around();
    assert.equal(
      res.headers['content-disposition'],
      `attachment; filename="sika-balance-transactions-test-${from}-to-${to}.csv"`,
    );
    const rows = csvRows(res.body);
    assert.deepEqual(
      rows.map((r) => [
        r.type,
        r.amount_minor,
        r.net_minor,
        r.net_ghs,
        r.balance_after_minor,
        r.balance_after_ghs,
        r.currency,
      ]),
      [
        ['payment', '12345', '12345', '123.45', '12345', '123.45', 'GHS'],
        ['payment', '5', '5', '0.05', '12350', '123.50', 'GHS'],
      ],
    );
    assert.equal(
      rows.reduce((sum, r) => sum + Number(r.net_minor), 0),
      (await balanceOf(t, m.merchant_id, 'test')).available_minor,
    );
    // Only the type asked; a day range that holds nothing is a header line alone.
    assert.equal(
      csvRows((await csv(m.test_api_key, '/api/v1/balance/transactions', { ...around(), type: 'refund' })).body).length,
      0,
    );
    const empty = await csv(m.test_api_key, '/api/v1/balance/transactions', { from: '2020-01-01', to: '2020-01-31' });
    assert.equal(empty.statusCode, 200);
    assert.match(empty.body, /^\uFEFFid,created_at,type,/);
    assert.equal(csvRows(empty.body).length, 0);
    // JSON stays the default.
    assert.equal(JSON.parse((await list(m.test_api_key, around())).body).object, 'list');
  });

  it('refuses a CSV export without a valid range with 400 (never a 500): missing, not a day, reversed, too long', async () => {
    const m = await t.merchant();
    const last = dayShift('2026-01-01', EXPORT_RANGE_DAYS_MAX - 1);
    assert.equal(
      (await csv(m.test_api_key, '/api/v1/balance/transactions', { from: '2026-01-01', to: last })).statusCode,
      200,
      `${EXPORT_RANGE_DAYS_MAX} days are allowed`,
    );
    const bad: Record<string, string>[] = [
      {},
      { from: '2026-01-01' },
      { to: '2026-01-01' },
      { from: '2026-02-30', to: '2026-03-01' },
      { from: '01/02/2026', to: '2026-03-01' },
      { from: '2026-03-02', to: '2026-03-01' },
      { from: '2026-01-01', to: dayShift(last, 1) },
    ];
    for (const url of [
      '/api/v1/balance/transactions',
      '/api/v1/sessions',
      '/api/v1/payouts',
      '/api/v1/balance/summary',
    ]) {
      for (const query of bad) {
        const res = await csv(m.test_api_key, url, query);
        assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(query)}: ${res.body}`);
        assert.equal(res.json().error.code, 'INVALID_ARGUMENT');
      }
    }
  });

  it('exports sessions and payouts as CSV with their payments and fees; text a spreadsheet would run as a formula is neutralised', async () => {
    const m = await merchantWithHooks(t);
    const paid = await createSession(t, m, {
      amount_minor: 20_000,
      customer: { name: '=HYPERLINK("http://evil.example","x")' },
      description: '@SUM(1+1)',
    });
    const attempt = await startAttempt(t, paid.id, { rail: 'card', amount_minor: totalOf('card', 20_000) });
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const open = await createSession(t, m, { amount_minor: 1_001, description: '-2+3' });
    const sessions = await csv(m.test_api_key, '/api/v1/sessions', around());
    assert.equal(sessions.statusCode, 200, sessions.body);
    assert.match(
      String(sessions.headers['content-disposition']),
      /filename="sika-sessions-test-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv"/,
    );
    const rows = csvRows(sessions.body);
    assert.deepEqual(
      rows.map((r) => r.id),
      [paid.id, open.id],
      'oldest first',
    );
    assert.equal(rows[0]!.customer_name, `'=HYPERLINK("http://evil.example","x")`);
    assert.equal(rows[0]!.description, "'@SUM(1+1)");
    assert.equal(rows[1]!.description, "'-2+3");
    assert.deepEqual(
      [
        rows[0]!.attempt_reference,
        rows[0]!.amount_charged_minor,
        rows[0]!.fee_minor,
        rows[0]!.net_minor,
        rows[0]!.net_ghs,
      ],
      [attempt.attempt_reference, '20000', '500', '19500', '195.00'],
    );
    assert.deepEqual([rows[1]!.status, rows[1]!.amount_ghs, rows[1]!.attempt_reference], ['open', '10.01', '']);

    const recipient = await bankRecipient(t, m.test_api_key, '1234567891');
    await verifyRecipientsNow(t, recipient.id);
    const payout = await createPayout(t, m.test_api_key, recipient.id, 2_550);
    const payouts = await csv(m.test_api_key, '/api/v1/payouts', around());
    assert.equal(payouts.statusCode, 200, payouts.body);
    const payoutRows = csvRows(payouts.body);
    assert.deepEqual(
      payoutRows.map((r) => [r.id, r.status, r.amount_minor, r.fee_minor, r.amount_ghs, r.recipient_name]),
      [[payout.id, 'paid', '2550', String(payout.fee_minor), '25.50', 'Kofi Mensah']],
    );
    // The JSON lists are unchanged.
    assert.equal((await call(t, 'GET', '/api/v1/payouts', { key: m.test_api_key })).json().total, 1);
    assert.equal((await call(t, 'GET', '/api/v1/sessions', { key: m.test_api_key })).json().data.length, 2);
  });

  it("summarises each Accra day: opening is the previous closing, closing - opening is the day's net, itemised; also as CSV", async () => {
    const m = await liveMerchant(t, { payoutApproval: true, fundMinor: 80_000 });
    const wallet = await momoRecipient(t, m.live_api_key, '0551234569');
    const held = await createPayout(t, m.live_api_key, wallet.id, 20_000);
    await api(t, m.live_api_key, 'POST', `/api/v1/payouts/${held.id}/cancel`, {});
    await createPayout(t, m.live_api_key, wallet.id, 30_000);
    const range = around();
    const res = await call(t, 'GET', '/api/v1/balance/summary', { key: m.live_api_key, query: range });
    assert.equal(res.statusCode, 200, res.body);
    const summary = res.json();
    assert.deepEqual(
      [summary.object, summary.from, summary.to, summary.days.length],
      ['balance_summary', range.from, range.to, 3],
    );
    const [yesterday, day, tomorrow] = summary.days;
    assert.equal(yesterday.opening_balance_minor, 0);
    assert.equal(yesterday.closing_balance_minor, 0);
    assert.equal(day.day, today());
    assert.deepEqual(
      [
        day.opening_balance_minor,
        day.payments_minor,
        day.payouts_minor,
        day.payout_releases_minor,
        day.fees_minor,
        day.net_minor,
        day.transactions,
        day.closing_balance_minor,
      ],
      [0, 80_000, -50_000, 20_000, 300 + 200 - 200, 80_000 - 30_300, 4, 80_000 - 30_300],
    );
    assert.equal(day.closing_balance_minor, (await balanceOf(t, m.merchant_id, 'live')).available_minor);
    assert.equal(tomorrow.opening_balance_minor, day.closing_balance_minor);
    const file = await csv(m.live_api_key, '/api/v1/balance/summary', range);
    assert.equal(file.statusCode, 200);
    assert.equal(
      file.headers['content-disposition'],
      `attachment; filename="sika-balance-summary-live-${range.from}-to-${range.to}.csv"`,
    );
    const rows = csvRows(file.body);
    assert.deepEqual(
      rows.map((r) => [r.day, r.closing_balance_minor, r.closing_balance_ghs]),
      summary.days.map((d: { day: string; closing_balance_minor: number }) => [
        d.day,
        String(d.closing_balance_minor),
        (d.closing_balance_minor / 100).toFixed(2),
      ]),
    );
    assert.equal(
      (await call(t, 'GET', '/api/v1/balance/summary', { key: m.live_api_key, query: { from: range.from } }))
        .statusCode,
      400,
    );
  });

  /** Each list path and its export operation's file (GET /api/v1/exports/{file}). */
  const EXPORTS: [string, string][] = [
    ['/api/v1/balance/transactions', 'balance-transactions'],
    ['/api/v1/balance/summary', 'balance-summary'],
    ['/api/v1/sessions', 'sessions'],
    ['/api/v1/payouts', 'payouts'],
    ['/api/v1/refunds', 'refunds'],
  ];

  it('documents the lists as JSON and each CSV file as an export operation of its own', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const [path, file] of EXPORTS) {
      assert.deepEqual(Object.keys(doc.paths[path].get.responses['200'].content), ['application/json'], path);
      const exported = doc.paths[`/api/v1/exports/${file}`].get;
      assert.deepEqual(Object.keys(exported.responses['200'].content), ['text/csv'], file);
      assert.deepEqual(
        exported.parameters
          .filter((p: { in: string; required?: boolean }) => p.in === 'query' && p.required)
          .map((p: { name: string }) => p.name)
          .sort(),
        ['from', 'to'],
        file,
      );
    }
  });

  it('the export operations answer the same file as Accept: text/csv on the list paths, and refuse a missing or bad range with 400', async () => {
    const m = await merchantWithHooks(t);
    await credit(m, 12_345);
    const session = await createSession(t, m, { amount_minor: 40_000 });
    const attempt = await startAttempt(t, session.id, { rail: 'card', amount_minor: totalOf('card', 40_000) });
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const recipient = await momoRecipient(t, m.test_api_key);
    await createPayout(t, m.test_api_key, recipient.id, 1_000);
    const refund = await call(t, 'POST', '/api/v1/refunds', {
      key: m.test_api_key,
      body: { session_id: session.id, amount_minor: 500 },
    });
    assert.equal(refund.statusCode, 201, refund.body);
    for (const [path, file] of EXPORTS) {
      const byAccept = await csv(m.test_api_key, path, around());
      // No Accept header at all: the export path answers CSV whatever the client asks for.
      const exported = await call(t, 'GET', `/api/v1/exports/${file}`, { key: m.test_api_key, query: around() });
      assert.equal(exported.statusCode, 200, `${file}: ${exported.body}`);
      assert.equal(exported.headers['content-type'], 'text/csv; charset=utf-8');
      assert.equal(exported.headers['content-disposition'], byAccept.headers['content-disposition'], file);
      assert.equal(exported.body, byAccept.body, file);
      assert.ok(csvRows(exported.body).length >= 1, `${file} has rows`);
      const bad: Record<string, string>[] = [
        {},
        { from: around().from },
        { ...around(), from: '2026-13-45' },
        { from: '2020-01-01', to: '2021-06-01' },
      ];
      for (const query of bad) {
        const refused = await call(t, 'GET', `/api/v1/exports/${file}`, { key: m.test_api_key, query });
        assert.equal(refused.statusCode, 400, `${file} ${JSON.stringify(query)}: ${refused.body}`);
        assert.equal(refused.json().error.code, 'INVALID_ARGUMENT');
      }
      assert.equal((await call(t, 'GET', `/api/v1/exports/${file}`, { query: around() })).statusCode, 401);
    }
    const onlyRefunds = await call(t, 'GET', '/api/v1/exports/balance-transactions', {
      key: m.test_api_key,
      query: { ...around(), type: 'refund' },
    });
    assert.deepEqual(
      csvRows(onlyRefunds.body).map((r) => r.type),
      ['refund'],
    );
  });
});
