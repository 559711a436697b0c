// Statement safeguards (issue 30, docs/bank-statements.md): a file already imported (same sha256) is refused
// for any account unless forced with a reason (kept, audited); only the configured collection account is
// offered; an import whose lines are all unmatched can be voided (audited; its lines leave the queue and can
// be imported again), one with a matched line cannot; clear refusals for a file over the upload limit (the
// limit in MB and the CLI), an Excel file, an empty or header-only file (nothing recorded); near-match
// suggestions for a mistyped reference; a cash slip's reference recognised and linked. Over HTTP through the
// console, on the storage the run picks, with the ledger's invariants checked after money moved or a void.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { Actor } from '../../src/audit/log.ts';
import { checkInvariants } from '../../src/ledger/service.ts';
import type { CollectionAccount } from '../../src/rails/bank-transfer/accounts.ts';
import {
  isPaymentReference,
  nearPaymentReferences,
  PAYMENT_REFERENCE_ALPHABET,
} from '../../src/rails/bank-transfer/reference.ts';
import { importStatement } from '../../src/statements/service.ts';
import {
  cedis,
  statementsConsole,
  gcbStatement,
  linesOfImport,
  liveTransfer,
  sessionStatus,
  uniqueWords,
} from '../support/bank-statements.ts';
import { type ConsoleClient, flashOf as flashHtml } from '../support/console-client.ts';
import { storageKind, type TestContext } from '../support/helpers.ts';
import { call } from '../support/http.ts';

const PASSWORD = 'statements-safeguards-password';
const unescapeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const flashOf = (body: string) => unescapeHtml(flashHtml(body));

function uploadBody(
  fields: [string, string][],
  file: { filename: string; content: Buffer },
): { payload: Buffer; contentType: string } {
  const boundary = `----sika-safeguards-${randomUUID()}`;
  const parts: Buffer[] = [];
  for (const [name, value] of fields)
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.filename}"\r\nContent-Type: text/csv\r\n\r\n`,
    ),
    file.content,
    Buffer.from('\r\n'),
  );
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A reference one character away from this one (so its check character fails). */
function mistyped(reference: string, at = 5): string {
  const char = reference[at]!;
  const other =
    PAYMENT_REFERENCE_ALPHABET[(PAYMENT_REFERENCE_ALPHABET.indexOf(char) + 7) % PAYMENT_REFERENCE_ALPHABET.length]!;
  return reference.slice(0, at) + other + reference.slice(at + 1);
}

describe(`statement safeguards (${storageKind})`, () => {
  let t: TestContext;
  let ops: ConsoleClient;
  let operator: Actor;
  let accounts: CollectionAccount[];

  before(async () => {
    ({ t, ops, operator, accounts } = await statementsConsole('safeguards', PASSWORD));
  });
  after(() => t.close());

  async function upload(
    content: string | Buffer,
    fields: Record<string, string> = {},
    filename = `${randomUUID()}.csv`,
  ): Promise<LightMyRequestResponse> {
    if (!ops.csrf) await ops.get('/ops/statements');
    const body = uploadBody([['_csrf', ops.csrf!], ...Object.entries({ bank_code: 'GCB', ...fields })], {
      filename,
      content: Buffer.isBuffer(content) ? content : Buffer.from(content),
    });
    return t.app.inject({
      method: 'POST',
      url: '/ops/statements/import',
      headers: { cookie: `sika_ops=${ops.session}`, 'content-type': body.contentType },
      payload: body.payload,
    });
  }
  const importsNamed = (fileName: string) =>
    t.db.query<{ id: string; forced_reason: string | null; voided_at: Date | null }>(
      'SELECT id, forced_reason, voided_at FROM statement_imports WHERE file_name = $1 ORDER BY created_at',
      [fileName],
    );
  const importIdIn = (body: string) => /href="\/ops\/statements\/imports\/([0-9a-f-]{36})"/.exec(body)?.[1];

  it('offers the one configured collection account, not a list of banks', async () => {
    const page = await ops.get('/ops/statements');
    assert.equal(page.statusCode, 200);
    assert.match(
      unescapeHtml(page.body),
      /Collection account:<\/strong> GCB Bank \(GCB\) 1011130012345, Sika Collections Ltd/,
    );
    assert.match(page.body, /<input type="hidden" name="bank_code" value="GCB">/);
    assert.doesNotMatch(page.body, /<select id="statement-bank"/);
    const wrongBank = await upload(gcbStatement([{ narration: uniqueWords(), credit: '10.00' }]), { bank_code: 'ECO' });
    assert.equal(wrongBank.statusCode, 400);
    assert.match(
      flashOf(wrongBank.body),
      /"ECO" is not the code of a bank with a Sika collection account; statements are imported for GCB Bank \(GCB\) 1011130012345/,
    );
  });

  it('a file imported before is refused for any account unless forced with a reason (kept and audited)', async () => {
    // Two accounts, as the service takes them: the same bytes for the second account are still the same file.
    const two: CollectionAccount[] = [
      ...accounts,
      {
        bankCode: 'ECO',
        bankName: 'Ecobank Ghana',
        branch: 'Ridge',
        accountNumber: '144100200300',
        accountName: 'Sika Collections Ltd',
      },
    ];
    const csv = gcbStatement([
      { narration: uniqueWords(), credit: '120.00' },
      { narration: uniqueWords(), credit: '75.50' },
    ]);
    const fileName = `wrong-bank-${randomUUID()}.csv`;
    const first = await importStatement(t.db, {
      bankCode: 'ECO',
      fileName,
      csv,
      importedBy: operator,
      checkoutUrlHost: t.config.checkoutUrlHost,
      collectionAccounts: two,
    });
    assert.equal(first.unmatched, 2);
    await assert.rejects(
      importStatement(t.db, {
        bankCode: 'GCB',
        fileName: 'renamed.csv',
        csv,
        importedBy: operator,
        checkoutUrlHost: t.config.checkoutUrlHost,
        collectionAccounts: two,
      }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'STATEMENT_ALREADY_IMPORTED');
        assert.match(
          error.message,
          new RegExp(
            `This file was imported already: ${fileName} for ECO on \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC by operator:${operator.email}`,
          ),
        );
        return true;
      },
    );
    assert.equal((await importsNamed('renamed.csv')).length, 0, 'nothing recorded for the refused file');
    // Through the console: refused (409), the reason field offered open; forced with a reason, imported.
    const again = await upload(csv, {}, fileName);
    assert.equal(again.statusCode, 409);
    assert.match(flashOf(again.body), /This file was imported already/);
    assert.match(again.body, /<details open><summary>Import a file that was imported before<\/summary>/);
    assert.equal((await importsNamed(fileName)).length, 1);
    const forced = await upload(csv, { force_reason: 'The bank re-issued March with the same content' }, fileName);
    assert.equal(forced.statusCode, 200, flashOf(forced.body));
    assert.match(
      flashOf(forced.body),
      /2 credits: 0 matched, 0 amount mismatch, 2 unmatched/,
      'another account: new lines',
    );
    const rows = await importsNamed(fileName);
    assert.equal(rows.length, 2);
    assert.equal(rows[1]!.forced_reason, 'The bank re-issued March with the same content');
    const [audited] = await t.db.query<{ after: { forced_reason: string; earlier_import: string } }>(
      `SELECT after FROM audit_log WHERE action = 'statement.import' AND object_id = $1`,
      [rows[1]!.id],
    );
    assert.equal(audited!.after.forced_reason, 'The bank re-issued March with the same content');
    assert.equal(audited!.after.earlier_import, rows[0]!.id);
  });

  it('an import whose lines are all unmatched is voided (audited): its lines leave the queue, and the file can be imported again; the ledger is untouched', async () => {
    const m = await t.merchant();
    const words = uniqueWords();
    const csv = gcbStatement([
      { narration: `${words} ONE`, credit: '310.00' },
      { narration: `${words} TWO`, credit: '52.00' },
    ]);
    const fileName = `void-${randomUUID()}.csv`;
    const imported = await upload(csv, {}, fileName);
    assert.equal(imported.statusCode, 200, flashOf(imported.body));
    const importId = importIdIn(imported.body)!;
    assert.match(
      unescapeHtml((await ops.get(`/ops/statements?q=${encodeURIComponent(words)}`)).body),
      /Unmatched credits \(2 matching/,
    );
    const page = await ops.get(`/ops/statements/imports/${importId}`);
    assert.match(page.body, /<form method="post" action="\/ops\/statements\/imports\/[0-9a-f-]+\/void"/);

    const noReason = await ops.post(`/ops/statements/imports/${importId}/void`, { reason: '   ' });
    assert.equal(noReason.statusCode, 400);
    assert.match(flashOf(noReason.body), /Give a reason for voiding this import\./);
    const voided = await ops.post(`/ops/statements/imports/${importId}/void`, {
      reason: 'Imported under the wrong bank',
    });
    assert.equal(voided.statusCode, 200, flashOf(voided.body));
    assert.equal(
      flashOf(voided.body),
      'Import ' + fileName + ' voided: 2 unmatched lines (GHS 362.00) left the queue and the totals.',
    );
    assert.deepEqual(
      (await linesOfImport(t, importId)).map((l) => l.status),
      ['voided', 'voided'],
    );
    assert.match(
      unescapeHtml((await ops.get(`/ops/statements?q=${encodeURIComponent(words)}`)).body),
      /Unmatched credits \(0 matching/,
    );
    const [audit] = await t.db.query<{ actor_id: string; after: { reason: string; lines_voided: number } }>(
      `SELECT actor_id, after FROM audit_log WHERE action = 'statement_import.void' AND object_id = $1`,
      [importId],
    );
    assert.equal(audit!.actor_id, operator.id);
    assert.deepEqual(audit!.after, { voided: true, reason: 'Imported under the wrong bank', lines_voided: 2 });
    const twice = await ops.post(`/ops/statements/imports/${importId}/void`, { reason: 'again' });
    assert.equal(twice.statusCode, 409);
    assert.match(flashOf(twice.body), /This import was voided already/);

    // The voided import no longer holds the file or its lines: imported again, its credits are recorded anew.
    const reimported = await upload(csv, {}, fileName);
    assert.equal(reimported.statusCode, 200, flashOf(reimported.body));
    assert.match(flashOf(reimported.body), /2 unmatched, 0 already imported/);
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
    assert.deepEqual(await checkInvariants(t.db), []);
  });

  it('an import with a matched line cannot be voided: refused, nothing changed, the payment stays paid', async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 40_000);
    const csv = gcbStatement([
      { narration: `${uniqueWords()} ${transfer.reference}`, credit: cedis(transfer.chargedMinor) },
      { narration: uniqueWords(), credit: '9.00' },
    ]);
    const imported = await upload(csv);
    assert.match(flashOf(imported.body), /1 matched, 0 amount mismatch, 1 unmatched/);
    const importId = importIdIn(imported.body)!;
    assert.doesNotMatch((await ops.get(`/ops/statements/imports/${importId}`)).body, /\/void"/, 'no void form');
    const refused = await ops.post(`/ops/statements/imports/${importId}/void`, { reason: 'Wrong bank' });
    assert.equal(refused.statusCode, 409);
    assert.match(
      flashOf(refused.body),
      /This import cannot be voided: 1 of its 2 lines is no longer unmatched \(line \d+ is matched\)/,
    );
    assert.deepEqual((await linesOfImport(t, importId)).map((l) => l.status).sort(), ['matched', 'unmatched']);
    assert.equal(
      (await t.db.query('SELECT 1 FROM statement_imports WHERE id = $1 AND voided_at IS NULL', [importId])).length,
      1,
    );
    assert.equal(await sessionStatus(t, transfer.sessionId), 'success');
    assert.deepEqual(await checkInvariants(t.db, m.merchant_id), []);
  });

  it('refuses a file over the upload limit naming the limit in MB and the CLI; an Excel file, an empty file and a header-only file with a clear sentence; nothing recorded', async () => {
    const big = Buffer.alloc(5 * 1024 * 1024 + 10, 'a');
    const tooLarge = await upload(big);
    assert.equal(tooLarge.statusCode, 413);
    assert.match(
      unescapeHtml(tooLarge.body),
      /The statement file is larger than 5 MB, the most the console takes\. Import it with the command line instead: sika statements import FILE --bank CODE \(up to 20 MB\)/,
    );

    const cases: [string, Buffer, RegExp][] = [
      [
        'march.xlsx',
        Buffer.concat([
          Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00]),
          Buffer.from('[Content_Types].xml xl/worksheets/sheet1.xml'),
        ]),
        /This is an Excel workbook \(\.xlsx\), not a CSV file: open it in Excel and save it as CSV/,
      ],
      ['empty.csv', Buffer.alloc(0), /The file is empty: there is nothing to import/],
      ['blank.csv', Buffer.from('\uFEFF\r\n \r\n'), /The file is empty: there is nothing to import/],
      [
        'header-only.csv',
        Buffer.from('Trans. Date,Value Date,Narration,Debit (GHS),Credit (GHS),Balance (GHS)\r\n'),
        /The file has a header row but no transactions under it: nothing was imported/,
      ],
    ];
    for (const [name, content, message] of cases) {
      const fileName = `${randomUUID()}-${name}`;
      const res = await upload(content, {}, fileName);
      assert.equal(res.statusCode, 400, name);
      assert.match(flashOf(res.body), message, name);
      assert.equal((await importsNamed(fileName)).length, 0, `${name}: no import recorded`);
    }
  });

  it('a mistyped reference gets near-match suggestions (Live, one edit away, check character right) with amount and merchant', async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 61_000);
    const typo = mistyped(transfer.reference);
    assert.equal(isPaymentReference(typo), false);
    assert.ok(nearPaymentReferences(`TRF ${typo} KOFI`).includes(transfer.reference));
    assert.deepEqual(nearPaymentReferences(`TRF ${transfer.reference}`), [], 'a right reference has no near matches');
    const swapped =
      transfer.reference.slice(0, 3) + transfer.reference[4] + transfer.reference[3] + transfer.reference.slice(5);
    if (swapped !== transfer.reference)
      assert.ok(nearPaymentReferences(swapped).includes(transfer.reference), 'two neighbours swapped');
    const dropped = transfer.reference.slice(0, 6) + transfer.reference.slice(7);
    assert.ok(nearPaymentReferences(`${dropped} `).includes(transfer.reference), 'one character left out');

    const words = uniqueWords();
    const imported = await upload(
      gcbStatement([{ narration: `${words} ${typo}`, credit: cedis(transfer.chargedMinor) }]),
    );
    assert.match(flashOf(imported.body), /0 matched, 0 amount mismatch, 1 unmatched/);
    const page = unescapeHtml((await ops.get(`/ops/statements?q=${encodeURIComponent(words)}`)).body);
    const merchant = (
      await t.db.query<{ name: string }>('SELECT name FROM merchants WHERE id = $1', [m.merchant_id])
    )[0]!.name;
    assert.match(
      page,
      new RegExp(
        `Did the payer mean:</p><ul class="list"><li><span><span class="mono">${transfer.reference}</span> <span class="badge ok"[^>]*>Live</span> · GHS [\\d,]+\\.\\d\\d · ${merchant.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} · pending</span></li>`,
      ),
    );
    assert.match(
      page,
      new RegExp(`name="reference" required placeholder="SK…" autocomplete="off" value="${transfer.reference}"`),
      'the suggestion is prefilled',
    );
    assert.equal(await sessionStatus(t, transfer.sessionId), 'pending', 'a suggestion applies nothing by itself');
  });

  it("a cash slip's reference on a transfer is recognised and linked to the slip, not called a bad bank transfer reference", async () => {
    const m = await t.merchant();
    const session = await call(t, 'POST', '/api/v1/sessions', {
      key: m.live_api_key,
      body: { amount_minor: 20_000, invoice_ref: `INV-${randomUUID().slice(0, 8)}` },
    });
    const quote = await call(t, 'GET', `/api/v1/checkout/sessions/${session.json().id}/quote`);
    const slip = (
      await call(t, 'POST', '/api/v1/checkout/cash-slips', {
        body: { session_id: session.json().id, amount_minor: quote.json().surcharges.cash.total_minor },
      })
    ).json() as { reference: string };
    const words = uniqueWords();
    const imported = await upload(
      gcbStatement([{ narration: `${words} ${slip.reference.replace(/-/g, '')}`, credit: '200.00' }]),
    );
    const importId = importIdIn(imported.body)!;
    const [line] = await linesOfImport(t, importId);
    assert.equal(line!.status, 'unmatched');
    assert.match(
      line!.reason,
      new RegExp(
        `^This is a cash slip reference, ${slip.reference} \\(a Live slip of .+ for GHS [\\d,]+\\.\\d\\d, active\\): a cash slip is paid in cash at a bank branch`,
      ),
    );
    assert.doesNotMatch(line!.reason, /not the reference of a Live bank transfer/);
    const page = unescapeHtml((await ops.get(`/ops/statements?q=${encodeURIComponent(words)}`)).body);
    assert.match(
      page,
      new RegExp(
        `This is a cash slip reference, <a href="/ops/teller\\?reference=${slip.reference}">${slip.reference}</a>`,
      ),
    );
  });
  it('the unmatched list pages 50 at a time keeping its search, filters on a found reference, and exports every matching line as CSV', async () => {
    const words = uniqueWords();
    const rows = Array.from({ length: 55 }, (_, i) => ({
      narration: `${words} PAYER ${String(i).padStart(2, '0')}`,
      credit: `${i + 1}.00`,
    }));
    const imported = await upload(gcbStatement(rows));
    assert.match(flashOf(imported.body), /55 unmatched/);
    const first = unescapeHtml((await ops.get(`/ops/statements?q=${encodeURIComponent(words)}`)).body);
    assert.match(first, new RegExp(`Unmatched credits \\(55 matching "${words}"\\)`));
    const ids = (body: string) =>
      [...body.matchAll(/action="\/ops\/statements\/lines\/([0-9a-f-]{36})\/assign"/g)].map((found) => found[1]!);
    assert.equal(ids(first).length, 50);
    const next = /<a class="button secondary" href="(\/ops\/statements\?[^"]*after=[^"]+)">Next page<\/a>/.exec(
      first,
    )?.[1];
    assert.ok(next, 'a Next page link');
    assert.ok(next.includes(`q=${encodeURIComponent(words).replace(/%20/g, '+')}`), 'keeping the search');
    const second = unescapeHtml((await ops.get(next)).body);
    assert.equal(ids(second).length, 5);
    assert.equal(new Set([...ids(first), ...ids(second)]).size, 55, 'no line twice');
    assert.match(second, />First page<\/a>/);
    assert.doesNotMatch(second, />Next page<\/a>/);
    const withReference = await ops.get(`/ops/statements?q=${encodeURIComponent(words)}&reference=found`);
    assert.match(unescapeHtml(withReference.body), /Unmatched credits \(0 matching/);
    const csv = await ops.get(`/ops/statements?q=${encodeURIComponent(words)}&reference=none&format=csv`);
    assert.equal(csv.statusCode, 200);
    const lines = csv.body.trim().split(/\r?\n/);
    assert.match(
      lines[0]!,
      /^recorded_at,line_id,value_date,bank,line,amount_ghs,narration,bank_reference,payment_reference,why,suggestions$/,
    );
    assert.equal(lines.length, 56);
    const bad = await ops.get('/ops/statements?reference=maybe');
    assert.equal(bad.statusCode, 400);
  });
});
