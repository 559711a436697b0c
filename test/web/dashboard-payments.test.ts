// The dashboard's Payments page (issue 36, item 2) over real HTTP, on embedded storage and on PostgreSQL
// (DATABASE_URL): the nav names it Payments; one search box and the filters are the address (a GET form, so a
// link shares the search); the rows show created, customer, method, amount, status and receipt; the Export CSV
// link exports exactly what the page shows; another merchant's link or cursor is not found.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { createMerchant, type CreatedMerchant } from '../../src/accounts/service.ts';
import { createPaymentLink } from '../../src/checkout/payment-links.ts';
import { createSession, momoBody, simulate, startAttempt, TELECEL_PHONE } from '../support/checkout.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { storageKind } from '../support/helpers.ts';
import { useTestApp } from '../support/hooks.ts';

const PASSWORD = 'payments-page-password-1';

const decode = (text: string) =>
  text
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

/** The Payments table's rows: each row's session id (from its link) and its cells as text. */
function tableRows(body: string): { id: string; cells: string[] }[] {
  const table = /<table class="stack" aria-label="Payments">([\s\S]*?)<\/table>/.exec(body)?.[1] ?? '';
  const tbody = /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1] ?? '';
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)]
    .map((row) => ({
      id: /href="\/dashboard\/sessions\/(cs_\w+)"/.exec(row[1]!)?.[1] ?? '',
      cells: [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => decode(cell[1]!)),
    }))
    .filter((row) => row.id);
}

/** A CSV's rows as objects by the header's names (no quoted commas in these files' id columns). */
function csvRows(text: string): Record<string, string>[] {
  const [header, ...lines] = text
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/);
  const names = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i]!, value])));
}

describe(`dashboard: Payments (${storageKind})`, () => {
  const t = useTestApp();

  async function owner(): Promise<{ m: CreatedMerchant; browser: ConsoleClient }> {
    const email = `owner-${randomUUID()}@example.com`;
    const m = await createMerchant(t.db, {
      name: `Payments ${randomUUID().slice(0, 6)}`,
      email,
      password: PASSWORD,
      webhookUrl: null,
    });
    return { m, browser: await new ConsoleClient(t).signedIn(email, PASSWORD) };
  }

  async function paid(
    m: CreatedMerchant,
    customer: string,
    amountMinor: number,
    phone = TELECEL_PHONE,
    network = 'telecel',
  ) {
    const session = await createSession(t, m, { amount_minor: amountMinor, customer: { name: customer } });
    const attempt = await startAttempt(t, session.id, momoBody(amountMinor, phone, network));
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const [row] = await t.db.query<{ receipt_number: string }>(
      'SELECT receipt_number FROM checkout_sessions WHERE id = $1',
      [session.id],
    );
    return { id: session.id, receipt: row!.receipt_number, invoiceRef: session.invoice_ref };
  }

  it('the nav says Payments; the page shows created, customer, method, amount right-aligned, status and receipt', async () => {
    const { m, browser } = await owner();
    const ama = await paid(m, 'Ama Serwaa', 50_000);
    const open = await createSession(t, m, { amount_minor: 2_500, customer: { name: 'Kojo Open' } });
    const page = await browser.get('/dashboard/sessions');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<a href="\/dashboard\/sessions" aria-current="page">Payments<\/a>/);
    assert.ok(!/>Checkout</.test(page.body), 'the nav no longer says Checkout');
    assert.match(page.body, /<h1>Payments<\/h1>/);
    assert.match(
      page.body,
      /<th scope="col">Created<\/th><th scope="col">Customer<\/th><th scope="col">Method<\/th><th scope="col" class="num">Amount<\/th><th scope="col">Status<\/th><th scope="col">Receipt<\/th>/,
    );
    const rows = tableRows(page.body);
    assert.deepEqual(
      rows.map((row) => row.id),
      [open.id, ama.id],
    );
    const [, customer, method, amount, status, receipt] = rows[1]!.cells;
    assert.match(customer!, /^Ama Serwaa/);
    assert.equal(method, 'Telecel Cash');
    assert.equal(amount, 'GHS 500.00');
    assert.equal(status, 'success');
    assert.equal(receipt, ama.receipt);
    assert.match(page.body, /<td class="num" data-label="Amount">GHS 500\.00<\/td>/, 'one line, right-aligned');
    assert.deepEqual(rows[0]!.cells.slice(2), ['–', 'GHS 25.00', 'open', '']);

    const moved = await browser.get('/dashboard/payments?q=ama');
    assert.equal(moved.statusCode, 301);
    assert.equal(moved.headers.location, '/dashboard/sessions?q=ama');
  });

  it('the search and filters are the address: a GET form, kept in the pager and the export link', async () => {
    const { m, browser } = await owner();
    const mtn = await paid(m, 'Kofi Boateng', 1_000, '0241235555', 'mtn');
    const telecel = await paid(m, 'Kofi Boateng', 1_000);
    await createSession(t, m, { amount_minor: 1_000, customer: { name: 'Kofi Boateng' } });
    const url = '/dashboard/sessions?q=kofi&status=success&rail=momo&network=mtn';
    const page = await browser.get(url);
    assert.equal(page.statusCode, 200);
    assert.deepEqual(
      tableRows(page.body).map((row) => row.id),
      [mtn.id],
    );
    assert.match(page.body, /<form method="get" action="\/dashboard\/sessions"/);
    assert.match(page.body, /<input id="f-q" name="q" type="search" value="kofi"/);
    assert.match(page.body, /<option value="mtn" selected>MTN MoMo<\/option>/);
    assert.match(page.body, /<option value="success" selected>success<\/option>/);
    assert.match(
      page.body,
      /href="\/dashboard\/sessions\?q=kofi&amp;status=success&amp;rail=momo&amp;network=mtn&amp;format=csv"/,
    );
    assert.match(page.body, /Searched as invoice reference, customer name, provider reference/);
    const byPhone = await browser.get('/dashboard/sessions?q=0201234567');
    assert.deepEqual(
      tableRows(byPhone.body).map((row) => row.id),
      [telecel.id],
    );
    // A refused value names its field (a 400 page), never a 500.
    const bad = await browser.get('/dashboard/sessions?rail=cheque');
    assert.equal(bad.statusCode, 400);
    const badDay = await browser.get('/dashboard/sessions?from=2026-13-01');
    assert.equal(badDay.statusCode, 400);
  });

  it('a receipt number or a session id goes straight to the session; the old invoice_ref address still searches', async () => {
    const { m, browser } = await owner();
    const s = await paid(m, 'Esi Receipt', 3_000);
    for (const q of [s.receipt.toLowerCase(), s.id]) {
      const res = await browser.get(`/dashboard/sessions?q=${encodeURIComponent(q)}`);
      assert.equal(res.statusCode, 303, q);
      assert.equal(res.headers.location, `/dashboard/sessions/${s.id}`);
    }
    const old = await browser.get(`/dashboard/sessions?invoice_ref=${encodeURIComponent(s.invoiceRef)}`);
    assert.deepEqual(
      tableRows(old.body).map((row) => row.id),
      [s.id],
    );
  });

  it('the export is exactly what the filters show, every page of it, newest first', async () => {
    const { m, browser } = await owner();
    const prefix = `EXP-${randomUUID().slice(0, 6)}`;
    const made: string[] = [];
    for (let i = 0; i < 28; i++)
      made.push((await createSession(t, m, { amount_minor: 700 + i, invoice_ref: `${prefix}-${i}` })).id);
    await createSession(t, m, { amount_minor: 700, invoice_ref: 'OTHER-1' });
    const first = await browser.get(`/dashboard/sessions?q=${prefix}`);
    const firstRows = tableRows(first.body);
    assert.equal(firstRows.length, 25);
    const next = /href="(\/dashboard\/sessions\?q=[^"]*after=cs_\w+)"/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(next, 'a Next page link keeps the search');
    const second = tableRows((await browser.get(next)).body);
    assert.equal(second.length, 3);
    const shown = [...firstRows, ...second].map((row) => row.id);
    assert.deepEqual([...shown].sort(), [...made].sort());

    const csv = await browser.get(`/dashboard/sessions?q=${prefix}&format=csv`);
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.match(
      String(csv.headers['content-disposition']),
      /attachment; filename="payments-test-\d{4}-\d{2}-\d{2}\.csv"/,
    );
    const rows = csvRows(csv.body);
    assert.deepEqual(
      rows.map((row) => row.id),
      shown,
    );
    assert.deepEqual(
      rows.map((row) => row.amount_minor),
      [...firstRows, ...second].map((row) => String(Number(row.cells[3]!.replace(/[^\d]/g, '')))),
    );
  });

  it("another merchant's payment link or cursor is not found; its sessions never show", async () => {
    const { m, browser } = await owner();
    const other = await t.merchant();
    const theirs = await paid(other, 'Shared Name', 4_200);
    const mine = await paid(m, 'Shared Name', 4_200);
    const page = await browser.get('/dashboard/sessions?q=shared');
    assert.deepEqual(
      tableRows(page.body).map((row) => row.id),
      [mine.id],
    );
    const csv = csvRows((await browser.get('/dashboard/sessions?q=42.00&format=csv')).body);
    assert.deepEqual(
      csv.map((row) => row.id),
      [mine.id],
    );
    const link = await createPaymentLink(
      t.db,
      { merchantId: other.merchant_id, environment: 'test', apiKeyId: null, userId: null },
      { name: 'Their link', amount_minor: 1_000 },
      'http://localhost',
    );
    assert.equal((await browser.get(`/dashboard/sessions?link=${link.id}`)).statusCode, 404);
    assert.equal((await browser.get(`/dashboard/sessions?after=${theirs.id}`)).statusCode, 404);
    assert.equal((await browser.get(`/dashboard/sessions?after=${mine.id}`)).statusCode, 200);
  });
});
