// The dashboard's Payouts list (issue 36, item 3) over real HTTP, on embedded storage and on PostgreSQL
// (DATABASE_URL): one search box (payout id, reference or client_reference, recipient name, account number or
// wallet phone in full or by the last four digits, amount) and the filters (status, method, type, Accra days) are
// the address; keyset pages of 25 with Next page and Newest; Export CSV is exactly what the page shows, every page;
// another merchant's or the other environment's payouts are never found.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { accraDay } from '../../src/lib/accra-calendar.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { storageKind } from '../support/helpers.ts';
import { useTestApp } from '../support/hooks.ts';
import {
  bankRecipient,
  createPayout,
  fund,
  momoRecipient,
  verifyRecipientsNow,
  WEBHOOK_URL,
} from '../support/payouts-fixtures.ts';

const PASSWORD = 'payouts-page-password-1';

const decode = (text: string) =>
  text
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

/** The Payouts table's rows: each row's payout id (from its link) and its cells as text. */
function tableRows(body: string): { id: string; cells: string[] }[] {
  const table = /<table class="stack" aria-label="Payouts">([\s\S]*?)<\/table>/.exec(body)?.[1] ?? '';
  const tbody = /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1] ?? '';
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)]
    .map((row) => ({
      id: /href="\/dashboard\/payouts\/(po_\w+)"/.exec(row[1]!)?.[1] ?? '',
      cells: [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => decode(cell[1]!)),
    }))
    .filter((row) => row.id);
}

/** A CSV's rows as objects by the header's names (no quoted commas in these files). */
function csvRows(text: string): Record<string, string>[] {
  const [header, ...lines] = text
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/);
  const names = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i]!, value])));
}

describe(`dashboard: Payouts list (${storageKind})`, () => {
  const t = useTestApp();

  async function owner(): Promise<{ m: CreatedMerchant; browser: ConsoleClient }> {
    const email = `owner-${randomUUID()}@example.com`;
    const m = await createMerchant(
      t.db,
      { name: `Payouts ${randomUUID().slice(0, 6)}`, email, password: PASSWORD, webhookUrl: WEBHOOK_URL },
      t.webhookTargets,
    );
    await fund(t, m.merchant_id, 'test', 5_000_000);
    return { m, browser: await new ConsoleClient(t).signedIn(email, PASSWORD) };
  }

  /** A bank recipient (account 00123456789 0…) and an MTN wallet recipient, both verified. */
  async function recipients(m: CreatedMerchant, names = { bank: 'Yaw Asante Ltd', momo: 'Akosua Mensah' }) {
    const bank = await bankRecipient(t, m.test_api_key, '0012345678', { account_name: names.bank });
    const momo = await momoRecipient(t, m.test_api_key, '0241239876', 'mtn', { account_name: names.momo });
    await verifyRecipientsNow(t, bank.id, momo.id);
    return { bank, momo };
  }

  const ids = (body: string) => tableRows(body).map((row) => row.id);

  it("keeps the page's actions and shows recipient, masked account, method, amount and fee on one line", async () => {
    const { m, browser } = await owner();
    const { bank, momo } = await recipients(m);
    const toBank = await createPayout(t, m.test_api_key, bank.id, 50_000, { client_reference: 'INV-2026-0042' });
    const toWallet = await createPayout(t, m.test_api_key, momo.id, 12_345);
    const page = await browser.get('/dashboard/payouts');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<h1>Payouts<\/h1>/);
    assert.match(page.body, /<a class="button" href="\/dashboard\/payouts\/new">New payout<\/a>/);
    assert.match(page.body, /href="\/dashboard\/recipients">Recipients<\/a>/);
    assert.match(page.body, /<form method="get" action="\/dashboard\/payouts" class="card row" role="search"/);
    assert.deepEqual(ids(page.body), [toWallet.id, toBank.id]);
    const [reference, recipient, method, type, amount, fee, status] = tableRows(page.body)[1]!.cells;
    assert.equal(reference, `${toBank.reference} INV-2026-0042`);
    assert.match(recipient!, /^Yaw Asante Ltd .* \*{6}5678$/);
    assert.equal(method, 'Bank transfer');
    assert.equal(type, 'Manual');
    assert.equal(amount, 'GHS 500.00');
    assert.equal(fee, 'GHS 1.00');
    assert.equal(status, 'paid');
    const wallet = tableRows(page.body)[0]!.cells;
    assert.equal(wallet[1], 'Akosua Mensah ******9876');
    assert.equal(wallet[2], 'MTN Mobile Money');
    assert.match(
      page.body,
      /<td class="num" data-label="Amount">GHS 123\.45<\/td>/,
      'money on one line, right-aligned',
    );
    assert.match(page.body, /<table class="stack" aria-label="Payouts">/, 'the rows stack on a phone');
    // The address of the list before issue 36 still opens it.
    assert.deepEqual(ids((await browser.get('/dashboard/payouts?page=2')).body), [toWallet.id, toBank.id]);
  });

  it('one search box finds a payout by id, references, recipient name, account, wallet, last four digits and amount', async () => {
    const { m, browser } = await owner();
    const { bank, momo } = await recipients(m);
    const toBank = await createPayout(t, m.test_api_key, bank.id, 50_000, { client_reference: 'INV-2026-0042' });
    const toWallet = await createPayout(t, m.test_api_key, momo.id, 12_345, { client_reference: 'salary-nov' });
    const search = async (q: string) => ids((await browser.get(`/dashboard/payouts?q=${encodeURIComponent(q)}`)).body);
    const cases: [string, string[]][] = [
      [toBank.id, [toBank.id]],
      [toBank.reference, [toBank.id]],
      ['INV-2026-0042', [toBank.id]],
      ['INV-2026', [toBank.id]],
      ['yaw asante', [toBank.id]],
      ['MENSAH', [toWallet.id]],
      ['0012345678', [toBank.id]],
      ['5678', [toBank.id]],
      ['024 123 9876', [toWallet.id]],
      ['+233241239876', [toWallet.id]],
      ['9876', [toWallet.id]],
      ['500', [toBank.id]],
      ['500.00', [toBank.id]],
      ['GHS 123.45', [toWallet.id]],
      ['nobody-has-this', []],
      ['100%_', []],
    ];
    for (const [q, expected] of cases) assert.deepEqual(await search(q), expected, `q=${q}`);
    const page = await browser.get('/dashboard/payouts?q=5678');
    assert.match(page.body, /Searched as reference, account ending, amount\./);
    assert.match(page.body, /<input id="f-q" name="q" type="search" value="5678"/);
  });

  it('filters by status, method, type and Accra days; the filters are the address, kept by the export link', async () => {
    const { m, browser } = await owner();
    const { bank, momo } = await recipients(m);
    const paidBank = await createPayout(t, m.test_api_key, bank.id, 1_000);
    const waitingBank = await createPayout(t, m.test_api_key, bank.id, 1_000, { test_outcome: 'requested' });
    const paidWallet = await createPayout(t, m.test_api_key, momo.id, 1_000);
    // One payout made yesterday (Accra time is UTC).
    await t.db.query(`UPDATE payouts SET created_at = created_at - interval '1 day' WHERE id = $1`, [paidWallet.id]);
    const today = accraDay(new Date());
    const yesterday = accraDay(new Date(Date.now() - 86_400_000));

    assert.deepEqual(ids((await browser.get('/dashboard/payouts?status=requested')).body), [waitingBank.id]);
    assert.deepEqual(ids((await browser.get('/dashboard/payouts?method=momo')).body), [paidWallet.id]);
    const url = '/dashboard/payouts?q=10&status=paid&method=bank&type=manual';
    const page = await browser.get(url);
    assert.deepEqual(ids(page.body), [paidBank.id]);
    assert.match(page.body, /<option value="paid" selected>paid<\/option>/);
    assert.match(page.body, /<option value="bank" selected>Bank transfer<\/option>/);
    assert.match(
      page.body,
      /href="\/dashboard\/payouts\?q=10&amp;status=paid&amp;method=bank&amp;type=manual&amp;format=csv"/,
    );
    assert.deepEqual(ids((await browser.get(`/dashboard/payouts?from=${today}&to=${today}`)).body), [
      waitingBank.id,
      paidBank.id,
    ]);
    assert.deepEqual(ids((await browser.get(`/dashboard/payouts?to=${yesterday}`)).body), [paidWallet.id]);
    assert.deepEqual(ids((await browser.get('/dashboard/payouts?type=settlement')).body), []);
    assert.match((await browser.get('/dashboard/payouts?type=settlement')).body, /No payouts match\./);
    // A refused value is a 400 page naming the field, never a 500; a day that does not exist is ignored.
    for (const bad of ['status=lost', 'method=cheque', 'from=2026-13-01', 'format=pdf', `q=${'x'.repeat(101)}`])
      assert.equal((await browser.get(`/dashboard/payouts?${bad}`)).statusCode, 400, bad);
    assert.equal((await browser.get('/dashboard/payouts?from=2026-02-31')).statusCode, 200);
  });

  it('pages of 25 by keyset (Next page, Newest) and an export of every row the filters match, newest first', async () => {
    const { m, browser } = await owner();
    const { bank, momo } = await recipients(m);
    const made: string[] = [];
    for (let i = 0; i < 28; i++) made.push((await createPayout(t, m.test_api_key, bank.id, 2_000 + i)).id);
    await createPayout(t, m.test_api_key, momo.id, 2_000);
    const first = await browser.get('/dashboard/payouts?method=bank');
    const firstRows = tableRows(first.body);
    assert.equal(firstRows.length, 25);
    assert.doesNotMatch(first.body, />Newest</);
    const next = /href="(\/dashboard\/payouts\?method=bank&amp;after=po_\w+)">Next page</.exec(first.body)?.[1];
    assert.ok(next, 'a Next page link keeps the filter');
    const secondPage = await browser.get(next.replace(/&amp;/g, '&'));
    const second = tableRows(secondPage.body);
    assert.equal(second.length, 3);
    assert.match(secondPage.body, /href="\/dashboard\/payouts\?method=bank">Newest</);
    assert.doesNotMatch(secondPage.body, />Next page</);
    const shown = [...firstRows, ...second].map((row) => row.id);
    assert.deepEqual(shown, [...made].reverse());

    const csv = await browser.get('/dashboard/payouts?method=bank&format=csv');
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.match(
      String(csv.headers['content-disposition']),
      /attachment; filename="payouts-test-\d{4}-\d{2}-\d{2}\.csv"/,
    );
    const rows = csvRows(csv.body);
    assert.deepEqual(
      rows.map((row) => row.id),
      shown,
    );
    const last = rows.at(-1)!;
    assert.equal(last.recipient, 'Yaw Asante Ltd');
    assert.equal(last.method, 'bank');
    assert.match(last.account!, /\*{6}5678$/);
    assert.deepEqual(
      [last.amount_minor, last.amount_ghs, last.fee_minor, last.fee_ghs],
      ['2000', '20.00', '100', '1.00'],
    );
    assert.equal(last.status, 'paid');
    assert.match(last.client_reference!, /^ref-/);
    assert.ok(!csv.body.includes('0012345678'), 'the export masks the account as the page does');
  });

  it("another merchant's and the Live environment's payouts are never found; a cursor naming one is 404", async () => {
    const { m, browser } = await owner();
    const mine = (await recipients(m, { bank: 'Shared Name', momo: 'Shared Wallet' })).bank;
    const other = await owner();
    const theirs = (await recipients(other.m, { bank: 'Shared Name', momo: 'Shared Wallet' })).bank;
    const minePayout = await createPayout(t, m.test_api_key, mine.id, 7_700);
    const theirPayout = await createPayout(t, other.m.test_api_key, theirs.id, 7_700);
    for (const q of ['shared', '7700', '77.00', '5678', theirPayout.id, theirPayout.client_reference])
      assert.ok(
        !ids((await browser.get(`/dashboard/payouts?q=${encodeURIComponent(q)}`)).body).includes(theirPayout.id),
        q,
      );
    assert.deepEqual(ids((await browser.get('/dashboard/payouts?q=shared')).body), [minePayout.id]);
    const foreign = await browser.get(`/dashboard/payouts?after=${theirPayout.id}`);
    assert.equal(foreign.statusCode, 404);
    const foreignCsv = await browser.get(`/dashboard/payouts?after=${theirPayout.id}&format=csv`);
    assert.equal(foreignCsv.statusCode, 404);
    const csv = csvRows((await browser.get('/dashboard/payouts?format=csv')).body);
    assert.deepEqual(
      csv.map((row) => row.id),
      [minePayout.id],
    );
    // The Live environment's list holds none of the Test payouts.
    await browser.post('/dashboard/environment', { environment: 'live' });
    assert.deepEqual(ids((await browser.get('/dashboard/payouts')).body), []);
    assert.equal((await browser.get(`/dashboard/payouts?after=${minePayout.id}`)).statusCode, 404);
  });
});
