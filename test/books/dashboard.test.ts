// The dashboard's Exports page (issue 17) over HTTP: signed in, a range of Accra days shows the daily
// settlement summary and links to each CSV; following a link downloads the file of the environment shown
// (the same rows as the API's); a bad range is a 400 page, never a 500; signed out, nothing is served.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMerchant } from '../../src/accounts/service.ts';
import { creditPayment } from '../../src/ledger/service.ts';
import { around, csvRows, dayShift, today } from '../support/books.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'books-dashboard-password-1';

describe(`dashboard exports (${storageKind})`, () => {
  let t: TestContext;
  let merchantId: string;
  let browser: ConsoleClient;
  before(async () => {
    t = await startTestApp();
    const email = `books-${randomUUID().slice(0, 8)}@example.com`;
    merchantId = (
      await createMerchant(t.db, { name: 'Books Dashboard Ltd', email, password: PASSWORD, webhookUrl: null })
    ).merchant_id;
    browser = await new ConsoleClient(t, '/dashboard').signedIn(email, PASSWORD);
  });
  after(async () => t?.close());

  const credit = (environment: 'test' | 'live', chargedMinor: number) =>
    t.db.transaction((tx) =>
      creditPayment(tx, {
        merchantId,
        environment,
        paymentId: `att_${randomUUID()}`,
        chargedMinor,
        payerFeeMinor: 0,
        merchantFeeMinor: 0,
      }),
    );

  it('shows the summary for a range and downloads each CSV of the environment shown', async () => {
    await credit('test', 12_300);
    await credit('live', 99_900);
    const { from, to } = around();
    const pageRes = await browser.get(`/dashboard/exports?from=${from}&to=${to}`);
    assert.equal(pageRes.statusCode, 200, pageRes.body.slice(0, 300));
    assert.match(pageRes.body, /aria-label="Daily settlement summary"/);
    // Only the day money moved is a row (the CSV below keeps all three days), then the range's total.
    const summaryRows = [...pageRes.body.matchAll(/<tr><td class="date">(\d{4}-\d{2}-\d{2})<\/td>/g)].map((m) => m[1]);
    assert.deepEqual(summaryRows, [today()]);
    assert.match(pageRes.body, /GHS 123\.00/);
    const total = /<tr class="total">(.*?)<\/tr>/s.exec(pageRes.body)?.[1] ?? '';
    assert.deepEqual(
      [...total.matchAll(/<td class="num">([^<]+)<\/td>/g)].map((m) => m[1]),
      ['GHS 123.00', 'GHS 0.00', 'GHS 0.00', 'GHS 0.00', 'GHS 0.00', 'GHS 123.00', 'GHS 123.00'],
      'payments, refunds, payouts, other, fees, net and the closing balance',
    );
    assert.match(pageRes.body, /1 of 3 days had activity/);
    assert.match(pageRes.body, /aria-current="page">Exports</);
    const links = [...pageRes.body.matchAll(/href="(\/dashboard\/exports\/[a-z-]+\.csv\?[^"]+)"/g)].map((match) =>
      match[1]!.replace(/&amp;/g, '&'),
    );
    assert.equal(links.length, 5, 'balance transactions, sessions, payouts, refunds, summary');

    const files: Record<string, Record<string, string>[]> = {};
    for (const link of links) {
      const res = await browser.get(link);
      assert.equal(res.statusCode, 200, `${link}: ${res.body.slice(0, 200)}`);
      assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
      assert.match(
        String(res.headers['content-disposition']),
        new RegExp(`^attachment; filename="sika-[a-z-]+-test-${from}-to-${to}\\.csv"$`),
      );
      files[/exports\/([a-z-]+)\.csv/.exec(link)![1]!] = csvRows(res.body);
    }
    assert.deepEqual(
      files['balance-transactions']!.map((row) => [row.type, row.net_minor, row.net_ghs]),
      [['payment', '12300', '123.00']],
    );
    assert.deepEqual(
      files.summary!.map((row) => row.closing_balance_minor),
      ['0', '12300', '12300'],
    );
    assert.equal(files.sessions!.length, 0);
    assert.equal(files.payouts!.length, 0);
    assert.equal(files.refunds!.length, 0);

    // The Live switch: the same page and files are Live's.
    const switched = await browser.post('/dashboard/environment', {
      environment: 'live',
      return_to: '/dashboard/exports',
    });
    assert.equal(switched.statusCode, 303);
    const live = await browser.get(`/dashboard/exports/balance-transactions.csv?from=${from}&to=${to}`);
    assert.deepEqual(
      csvRows(live.body).map((row) => row.net_minor),
      ['99900'],
    );
    await browser.post('/dashboard/environment', { environment: 'test', return_to: '/dashboard/exports' });
  });

  it('opens on the month so far; a bad range is a 400 page with the reason, and a bad file a 404, never a 500', async () => {
    const opened = await browser.get('/dashboard/exports');
    assert.equal(opened.statusCode, 200);
    assert.match(opened.body, new RegExp(`name="to" type="date" required value="${today()}"`));
    assert.match(opened.body, new RegExp(`name="from" type="date" required value="${today().slice(0, 8)}01"`));
    // The range picker's presets: this month (the one shown), last month, the last 7 days.
    const presets = [
      ...opened.body.matchAll(
        /<a href="\/dashboard\/exports\?from=([\d-]+)&amp;to=([\d-]+)"( aria-current="true")?>([^<]+)<\/a>/g,
      ),
    ].map((m) => [m[4], m[1], m[2], Boolean(m[3])]);
    const monthStart = `${today().slice(0, 8)}01`;
    const lastMonthEnd = dayShift(monthStart, -1);
    assert.deepEqual(presets, [
      ['This month', monthStart, today(), true],
      ['Last month', `${lastMonthEnd.slice(0, 8)}01`, lastMonthEnd, false],
      ['Last 7 days', dayShift(today(), -6), today(), false],
    ]);
    const quiet = await browser.get(`/dashboard/exports?from=2026-01-01&to=2026-01-31`);
    assert.equal(quiet.statusCode, 200);
    assert.match(quiet.body, /No money moved on these days\./);
    assert.match(quiet.body, /0 of 31 days had activity/);
    for (const query of [
      'from=2026-03-02&to=2026-03-01',
      'from=2026-02-30&to=2026-03-01',
      'from=2024-01-01&to=2026-01-01',
      'from=&to=2026-01-01',
    ]) {
      const res = await browser.get(`/dashboard/exports?${query}`);
      assert.equal(res.statusCode, 400, query);
      assert.match(res.body, /role="alert">An export covers Africa\/Accra days/);
      const file = await browser.get(`/dashboard/exports/balance-transactions.csv?${query}`);
      assert.equal(file.statusCode, 400, `file ${query}`);
      assert.match(String(file.headers['content-type']), /text\/html/);
    }
    assert.equal((await browser.get(`/dashboard/exports/ledger.csv?from=2026-01-01&to=2026-01-02`)).statusCode, 404);
    assert.equal(
      (await browser.get(`/dashboard/exports/sessions.csv?from=2026-01-01&from=2026-01-02&to=2026-01-02`)).statusCode,
      400,
      'a repeated parameter',
    );
  });

  it('serves nothing signed out', async () => {
    const anonymous = new ConsoleClient(t, '/dashboard');
    const res = await anonymous.get(`/dashboard/exports/balance-transactions.csv?from=2026-01-01&to=2026-01-02`);
    assert.notEqual(res.statusCode, 200);
    assert.doesNotMatch(String(res.headers['content-type'] ?? ''), /text\/csv/);
  });
});
