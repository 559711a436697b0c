// The dashboard's Refunds page (issue 36, item 3) over real HTTP, on embedded storage and on PostgreSQL
// (DATABASE_URL): one search box (a refund id, a session id, an amount, the start of the session's invoice
// reference), status and date filters as the address (a GET form), keyset pages that keep the search, the
// Export CSV link of exactly what is shown; another merchant's refunds are never found (its cursor a 404).
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

const PASSWORD = 'refunds-list-password-1';

const decode = (text: string) =>
  text
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

/** The Refunds table's rows: each row's refund id and its cells as text. */
function tableRows(body: string): { id: string; cells: string[] }[] {
  const table = /<table aria-label="Refunds" class="stack">([\s\S]*?)<\/table>/.exec(body)?.[1] ?? '';
  const tbody = /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1] ?? '';
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)]
    .map((row) => ({
      id: /data-label="Refund">(re_\w+)</.exec(row[1]!)?.[1] ?? '',
      cells: [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => decode(cell[1]!)),
    }))
    .filter((row) => row.id);
}

/** A CSV's rows as objects by the header's names (no quoted commas in these files' columns used here). */
function csvRows(text: string): Record<string, string>[] {
  const [header, ...lines] = text
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/);
  const names = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i]!, value])));
}

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

describe(`dashboard: Refunds list (${storageKind})`, () => {
  const t = useTestApp();

  async function owner(): Promise<{ m: CreatedMerchant; browser: ConsoleClient }> {
    const email = `owner-${randomUUID()}@example.com`;
    const m = await createMerchant(t.db, {
      name: `Refunds ${randomUUID().slice(0, 6)}`,
      email,
      password: PASSWORD,
      webhookUrl: null,
    });
    return { m, browser: await new ConsoleClient(t).signedIn(email, PASSWORD) };
  }

  /** A paid Test session refunded by `refundMinor` (settled at once): the refund's and the session's ids. */
  async function refunded(m: CreatedMerchant, amountMinor: number, refundMinor: number, invoiceRef?: string) {
    const session = await createSession(t, m, {
      amount_minor: amountMinor,
      ...(invoiceRef ? { invoice_ref: invoiceRef } : {}),
    });
    const attempt = await startAttempt(t, session.id, momoBody(amountMinor));
    await simulate(t, m, attempt.attempt_reference, 'paid');
    const refund = await requestRefund(
      t.db,
      { merchantId: m.merchant_id, environment: 'test', apiKeyId: null, userId: null },
      { session_id: session.id, amount_minor: refundMinor, reason: 'customer asked' },
      LiveProviders.none(),
    );
    return { id: refund.id, sessionId: session.id, invoiceRef: session.invoice_ref as string, status: refund.status };
  }

  it('shows date, refund, session, amount on one line right-aligned, status and method; the filters are the address', async () => {
    const { m, browser } = await owner();
    const a = await refunded(m, 5_000, 1_000);
    const b = await refunded(m, 3_000, 3_000);
    const page = await browser.get('/dashboard/refunds');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<a href="\/dashboard\/refunds" aria-current="page">Refunds<\/a>/);
    assert.deepEqual(ids(tableRows(page.body)), [b.id, a.id]);
    const [created, refundId, sessionId, amount, status] = tableRows(page.body)[1]!.cells;
    assert.match(created!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
    assert.equal(refundId, a.id);
    assert.equal(sessionId, a.sessionId);
    assert.equal(amount, 'GHS 10.00');
    assert.equal(status, a.status);
    assert.match(page.body, /<td class="num" data-label="Amount">GHS 10\.00<\/td>/);
    assert.match(page.body, /<td class="date" data-label="Created">/);
    assert.match(page.body, /<form method="get" action="\/dashboard\/refunds" class="card row" role="search"/);
    assert.match(page.body, /href="\/dashboard\/refunds\?format=csv"/);

    const today = accraDay(new Date());
    const url = `/dashboard/refunds?q=10.00&status=${a.status}&from=${today}&to=${today}`;
    const filtered = await browser.get(url);
    assert.deepEqual(ids(tableRows(filtered.body)), [a.id]);
    assert.match(filtered.body, /<input id="f-q" name="q" type="search" value="10.00"/);
    assert.match(filtered.body, new RegExp(`<option value="${a.status}" selected>`));
    assert.match(
      filtered.body,
      new RegExp(
        `href="/dashboard/refunds\\?q=10\\.00&amp;status=${a.status}&amp;from=${today}&amp;to=${today}&amp;format=csv"`,
      ),
    );
    // A day before any refund: none.
    const before = await browser.get('/dashboard/refunds?from=2020-01-01&to=2020-01-31');
    assert.deepEqual(ids(tableRows(before.body)), []);
    assert.match(before.body, /No refunds match\./);
    const otherStatus = await browser.get('/dashboard/refunds?status=awaiting_approval');
    assert.deepEqual(ids(tableRows(otherStatus.body)), []);
  });

  it('the search finds a refund by its id, its session id, its amount or its invoice reference', async () => {
    const { m, browser } = await owner();
    const prefix = `RF-${randomUUID().slice(0, 6)}`;
    const a = await refunded(m, 7_000, 2_345, `${prefix}-A`);
    const b = await refunded(m, 7_000, 1_200, 'OTHER-INVOICE');
    const search = async (q: string) =>
      ids(tableRows((await browser.get(`/dashboard/refunds?q=${encodeURIComponent(q)}`)).body));
    assert.deepEqual(await search(a.id), [a.id]);
    assert.deepEqual(await search(b.sessionId), [b.id]);
    assert.deepEqual(await search('23.45'), [a.id]);
    assert.deepEqual(await search('12'), [b.id]);
    assert.deepEqual(await search(prefix), [a.id]);
    assert.deepEqual(await search(`  ${prefix.toUpperCase()}-A  `), [a.id]);
    assert.deepEqual(await search('nothing-like-this'), []);
    // Wildcards are taken literally.
    assert.deepEqual(await search('%'), []);
  });

  it('pages keep the search, and the export is exactly what the filters show, every page, newest first', async () => {
    const { m, browser } = await owner();
    const made: string[] = [];
    // One paid session refunded 27 times in small amounts: 27 refunds of this merchant.
    const session = await createSession(t, m, { amount_minor: 100_000 });
    const attempt = await startAttempt(t, session.id, momoBody(100_000));
    await simulate(t, m, attempt.attempt_reference, 'paid');
    for (let i = 0; i < 27; i++) {
      const refund = await requestRefund(
        t.db,
        { merchantId: m.merchant_id, environment: 'test', apiKeyId: null, userId: null },
        { session_id: session.id, amount_minor: 100 + i },
        LiveProviders.none(),
      );
      made.push(refund.id);
    }
    const other = await refunded(m, 2_000, 500);
    const first = await browser.get(`/dashboard/refunds?q=${session.id}`);
    const firstRows = tableRows(first.body);
    assert.equal(firstRows.length, 25);
    const next = /href="(\/dashboard\/refunds\?q=[^"]*after=re_\w+)"/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(next, 'a Next page link keeps the search');
    const secondPage = await browser.get(next);
    const second = tableRows(secondPage.body);
    assert.equal(second.length, 2);
    assert.match(secondPage.body, /href="\/dashboard\/refunds\?q=cs_\w+">Newest<\/a>/);
    const shown = ids([...firstRows, ...second]);
    assert.deepEqual([...shown].sort(), [...made].sort());
    assert.ok(!shown.includes(other.id));

    const csv = await browser.get(`/dashboard/refunds?q=${session.id}&format=csv`);
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.match(
      String(csv.headers['content-disposition']),
      /attachment; filename="refunds-test-\d{4}-\d{2}-\d{2}\.csv"/,
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
    const all = csvRows((await browser.get('/dashboard/refunds?format=csv')).body);
    assert.equal(all.length, 28);
  });

  it("another merchant's refunds are never found; its cursor is a 404; bad input is a 400, never a 500", async () => {
    const { m, browser } = await owner();
    const other = await t.merchant();
    const theirs = await refunded(other, 4_200, 4_200);
    const mine = await refunded(m, 4_200, 4_200);
    const search = async (q: string) =>
      ids(tableRows((await browser.get(`/dashboard/refunds?q=${encodeURIComponent(q)}`)).body));
    assert.deepEqual(await search('42.00'), [mine.id]);
    assert.deepEqual(await search(theirs.id), []);
    assert.deepEqual(await search(theirs.sessionId), []);
    assert.deepEqual(
      csvRows((await browser.get('/dashboard/refunds?q=42&format=csv')).body).map((row) => row.id),
      [mine.id],
    );
    assert.equal((await browser.get(`/dashboard/refunds?after=${theirs.id}`)).statusCode, 404);
    assert.equal((await browser.get('/dashboard/refunds?after=re_nothing')).statusCode, 404);
    assert.equal((await browser.get(`/dashboard/refunds?after=${mine.id}`)).statusCode, 200);
    assert.equal((await browser.get('/dashboard/refunds?status=lost')).statusCode, 400);
    assert.equal((await browser.get('/dashboard/refunds?from=2026-13-01')).statusCode, 400);
    assert.equal((await browser.get('/dashboard/refunds?format=xml')).statusCode, 400);
    assert.equal((await browser.get(`/dashboard/refunds?q=${'x'.repeat(500)}`)).statusCode, 400);
    // A day the pattern lets through but the calendar does not: ignored.
    assert.equal((await browser.get('/dashboard/refunds?from=2026-02-31')).statusCode, 200);
  });
});
