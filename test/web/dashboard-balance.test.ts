// The dashboard's Balance page (issue 36, item 3) over real HTTP, on embedded storage and on PostgreSQL
// (DATABASE_URL): the balances now, the merchant's balance transactions of the dashboard's environment newest
// first (date, type, source linked to its page, amount, fee and net on one line), filters by type and Accra days,
// a search by transaction id or source id (session, attempt, refund), keyset pages keeping the search, the Export
// CSV of exactly what is shown; another merchant's or environment's movements are never found.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { accraDay } from '../../src/lib/accra-calendar.ts';
import { LiveProviders } from '../../src/rails/live.ts';
import { requestRefund } from '../../src/refunds/session-refunds.ts';
import { createSession, momoBody, simulate, startAttempt } from '../support/checkout.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { storageKind } from '../support/helpers.ts';
import { useTestApp } from '../support/hooks.ts';

const PASSWORD = 'balance-page-password-1';

const decode = (text: string) =>
  text
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

/** The table's rows: each row's transaction id and its cells as text. */
function tableRows(body: string): { id: string; cells: string[]; html: string }[] {
  const table = /<table class="stack" aria-label="Balance transactions">([\s\S]*?)<\/table>/.exec(body)?.[1] ?? '';
  const tbody = /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1] ?? '';
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)]
    .map((row) => ({
      id: /(txn_[0-9a-f]{32})/.exec(row[1]!)?.[1] ?? '',
      cells: [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => decode(cell[1]!)),
      html: row[1]!,
    }))
    .filter((row) => row.id);
}

/** A CSV's rows as objects by the header's names (no quoted commas in the columns used here). */
function csvRows(text: string): Record<string, string>[] {
  const [header, ...lines] = text
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/);
  const names = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i]!, value])));
}

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

describe(`dashboard: Balance (${storageKind})`, () => {
  const t = useTestApp();

  async function owner(): Promise<{ m: CreatedMerchant; browser: ConsoleClient }> {
    const email = `owner-${randomUUID()}@example.com`;
    const m = await createMerchant(t.db, {
      name: `Balance ${randomUUID().slice(0, 6)}`,
      email,
      password: PASSWORD,
      webhookUrl: null,
    });
    return { m, browser: await new ConsoleClient(t).signedIn(email, PASSWORD) };
  }

  async function paid(m: CreatedMerchant, amountMinor: number) {
    const session = await createSession(t, m, { amount_minor: amountMinor });
    const attempt = await startAttempt(t, session.id, momoBody(amountMinor));
    await simulate(t, m, attempt.attempt_reference, 'paid');
    return { sessionId: session.id, attemptId: attempt.attempt_reference as string };
  }

  const refund = (m: CreatedMerchant, sessionId: string, amountMinor: number) =>
    requestRefund(
      t.db,
      { merchantId: m.merchant_id, environment: 'test', apiKeyId: null, userId: null },
      { session_id: sessionId, amount_minor: amountMinor },
      LiveProviders.none(),
    );

  it('shows the balances and each movement newest first: date, type, source linked, amount, fee and net on one line', async () => {
    const { m, browser } = await owner();
    const payment = await paid(m, 10_000);
    const back = await refund(m, payment.sessionId, 2_500);
    const page = await browser.get('/dashboard/balance');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<a href="\/dashboard\/balance" aria-current="page">Balance<\/a>/);
    assert.match(page.body, /<h1>Balance \(test\)<\/h1>/);
    assert.match(page.body, /<section class="card" aria-label="Balances">[\s\S]*?Available[\s\S]*?Pending/);
    assert.match(
      page.body,
      /<th scope="col">Date<\/th><th scope="col">Type<\/th><th scope="col">Source<\/th><th scope="col" class="num">Amount<\/th><th scope="col" class="num">Fee<\/th><th scope="col" class="num">Net<\/th>/,
    );
    const rows = tableRows(page.body);
    assert.equal(rows.length, 2);
    const [refundRow, paymentRow] = rows;
    assert.match(refundRow!.cells[1]!, /^Refund/);
    assert.match(refundRow!.html, new RegExp(`href="/dashboard/refunds\\?q=${back.id}"`));
    assert.deepEqual(refundRow!.cells.slice(3), ['-GHS 25.00', 'GHS 0.00', '-GHS 25.00']);
    assert.match(paymentRow!.cells[0]!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
    assert.match(paymentRow!.cells[1]!, /^Payment/);
    assert.match(paymentRow!.html, new RegExp(`href="/dashboard/sessions/${payment.sessionId}"`));
    const [amount, fee, net] = paymentRow!.cells.slice(3).map((cell) => Number(cell.replace(/[^\d-]/g, '')));
    assert.equal(amount! - fee!, net);
    assert.ok(amount! > 0);
    assert.match(
      paymentRow!.html,
      /<td class="num" data-label="Amount">GHS [\d,.]+<\/td><td class="num" data-label="Fee">/,
    );
    assert.match(paymentRow!.html, /<td class="date" data-label="Date">/);
    // The API's list agrees: the same ids, newest first.
    const api = await t.app.inject({
      method: 'GET',
      url: '/api/v1/balance/transactions',
      headers: { authorization: `Bearer ${m.test_api_key}` },
    });
    assert.deepEqual(
      api.json().data.map((row: { id: string }) => row.id),
      ids(rows),
    );
  });

  it('filters by type and Accra days; searches by transaction id, session id, attempt id and refund id', async () => {
    const { m, browser } = await owner();
    const a = await paid(m, 4_000);
    const b = await paid(m, 6_000);
    const back = await refund(m, b.sessionId, 1_000);
    const all = tableRows((await browser.get('/dashboard/balance')).body);
    assert.equal(all.length, 3);
    const get = async (query: string) => ids(tableRows((await browser.get(`/dashboard/balance?${query}`)).body));
    const refundOnly = await browser.get('/dashboard/balance?type=refund');
    assert.deepEqual(ids(tableRows(refundOnly.body)), [all[0]!.id]);
    assert.match(refundOnly.body, /<option value="refund" selected>Refund<\/option>/);
    assert.match(refundOnly.body, /href="\/dashboard\/balance\?type=refund&amp;format=csv"/);
    assert.deepEqual(await get('type=payment'), [all[1]!.id, all[2]!.id]);
    assert.deepEqual(await get('type=payout'), []);
    const today = accraDay(new Date());
    assert.deepEqual(await get(`from=${today}&to=${today}`), ids(all));
    assert.deepEqual(await get('from=2020-01-01&to=2020-01-31'), []);
    assert.deepEqual(await get(`q=${all[2]!.id}`), [all[2]!.id]);
    assert.deepEqual(await get(`q=${all[2]!.id.toUpperCase()}`), [all[2]!.id]);
    assert.deepEqual(await get(`q=${a.sessionId}`), [all[2]!.id]);
    assert.deepEqual(await get(`q=${a.attemptId}`), [all[2]!.id]);
    assert.deepEqual(await get(`q=${back.id}`), [all[0]!.id]);
    assert.deepEqual(await get(`q=${b.sessionId}&type=payment`), [all[1]!.id]);
    assert.deepEqual(await get('q=txn_notanid'), []);
    assert.deepEqual(await get('q=%25'), []);
    const none = await browser.get('/dashboard/balance?q=nothing');
    assert.match(none.body, /No balance transactions match\./);
  });

  it('pages keep the search, and the export is exactly what the page shows, every page, newest first', async () => {
    const { m, browser } = await owner();
    const made: string[] = [];
    for (let i = 0; i < 27; i++) made.push((await paid(m, 1_000 + i)).sessionId);
    const first = await browser.get('/dashboard/balance?type=payment');
    const firstRows = tableRows(first.body);
    assert.equal(firstRows.length, 25);
    const next = /href="(\/dashboard\/balance\?type=payment&amp;after=txn_\w+)"/
      .exec(first.body)?.[1]
      ?.replace(/&amp;/g, '&');
    assert.ok(next, 'a Next page link keeps the filter');
    const secondPage = await browser.get(next);
    const second = tableRows(secondPage.body);
    assert.equal(second.length, 2);
    assert.match(secondPage.body, /href="\/dashboard\/balance\?type=payment">Newest<\/a>/);
    const shown = ids([...firstRows, ...second]);
    assert.equal(new Set(shown).size, 27);

    const csv = await browser.get('/dashboard/balance?type=payment&format=csv');
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.match(
      String(csv.headers['content-disposition']),
      /attachment; filename="balance-transactions-test-\d{4}-\d{2}-\d{2}\.csv"/,
    );
    const rows = csvRows(csv.body);
    assert.deepEqual(
      rows.map((row) => row.id),
      shown,
    );
    assert.deepEqual([...new Set(rows.map((row) => row.session_id))].sort(), [...made].sort());
    assert.deepEqual(
      rows.map((row) => row.net_minor),
      [...firstRows, ...second].map((row) => String(Number(row.cells[5]!.replace(/[^\d-]/g, '')))),
    );
  });

  it("another merchant's movements are never found; its cursor is a 404; bad input is a 400, never a 500", async () => {
    const { m, browser } = await owner();
    const other = await t.merchant();
    const theirs = await paid(other, 3_000);
    const mine = await paid(m, 3_000);
    const theirRows = await t.app.inject({
      method: 'GET',
      url: '/api/v1/balance/transactions',
      headers: { authorization: `Bearer ${other.test_api_key}` },
    });
    const theirTxn = theirRows.json().data[0].id as string;
    const get = async (query: string) => ids(tableRows((await browser.get(`/dashboard/balance?${query}`)).body));
    assert.equal((await get('')).length, 1);
    assert.deepEqual(await get(`q=${theirs.sessionId}`), []);
    assert.deepEqual(await get(`q=${theirTxn}`), []);
    assert.deepEqual(csvRows((await browser.get(`/dashboard/balance?q=${theirs.sessionId}&format=csv`)).body), []);
    assert.equal((await get(`q=${mine.sessionId}`)).length, 1);
    assert.equal((await browser.get(`/dashboard/balance?after=${theirTxn}`)).statusCode, 404);
    assert.equal((await browser.get('/dashboard/balance?after=txn_nothing')).statusCode, 404);
    assert.equal((await browser.get('/dashboard/balance?type=bonus')).statusCode, 400);
    assert.equal((await browser.get('/dashboard/balance?to=2026-00-10')).statusCode, 400);
    assert.equal((await browser.get('/dashboard/balance?format=pdf')).statusCode, 400);
    assert.equal((await browser.get('/dashboard/balance?from=2026-02-30')).statusCode, 200);
    // The other environment's movements are not this one's: Live has none.
    const live = await browser.post('/dashboard/environment', { environment: 'live', return_to: '/dashboard/balance' });
    assert.equal(live.statusCode, 303);
    assert.deepEqual(await get(''), []);
  });
});
