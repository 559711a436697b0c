// The operator console's Statements page (issue 16, docs/bank-statements.md): uploading a statement over
// HTTP (multipart, through inject and through a real socket), the imports list and an import's page, the
// unmatched queue with its search and its two actions, and the refusals (no file, unknown bank, unreadable
// header, bad reference or note, a stale form, no CSRF token, a teller).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createOperator } from '../../src/ops/service.ts';
import { newPaymentReference } from '../../src/rails/bank-transfer/index.ts';
import {
  BANK_ENV,
  attemptOf,
  gcbStatement,
  lineById,
  liveTransfer,
  sessionStatus,
  uniqueWords,
} from '../support/bank-statements.ts';
import { ConsoleClient, flashOf as flashHtml } from '../support/console-client.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const PASSWORD = 'statements-console-password';

/** The flash message's text (the page escapes it). */
const flashOf = (body: string) =>
  flashHtml(body)
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** A multipart/form-data body with text fields and, when given, one file part named "file". */
function uploadBody(
  fields: [string, string][],
  file: { filename: string; content: string } | null,
): { payload: Buffer; contentType: string } {
  const boundary = `----sika-statement-${randomUUID()}`;
  const parts: Buffer[] = [];
  for (const [name, value] of fields)
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.filename}"\r\nContent-Type: text/csv\r\n\r\n`,
      ),
    );
    parts.push(Buffer.from(file.content, 'utf8'), Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

describe(`the operator console's Statements page (${storageKind})`, () => {
  let t: TestContext;
  let ops: ConsoleClient;
  let operatorEmail: string;
  let tellerEmail: string;

  before(async () => {
    t = await startTestApp(BANK_ENV);
    operatorEmail = `statements-${randomUUID()}@example.com`;
    tellerEmail = `teller-${randomUUID()}@example.com`;
    await createOperator(t.db, { email: operatorEmail, password: PASSWORD, role: 'operator' });
    await createOperator(t.db, { email: tellerEmail, password: PASSWORD, role: 'teller' });
    ops = await new ConsoleClient(t, '/ops').signedIn(operatorEmail, PASSWORD);
  });
  after(() => t.close());

  /** Uploads a statement through the form (the page's CSRF token, the session cookie). */
  async function upload(
    content: string | null,
    fields: Record<string, string> = {},
    options: { csrf?: string | null; filename?: string } = {},
  ): Promise<LightMyRequestResponse> {
    if (!ops.csrf) await ops.get('/ops/statements');
    const csrf = options.csrf === undefined ? ops.csrf! : options.csrf;
    const body = uploadBody(
      [
        ...(csrf === null ? [] : [['_csrf', csrf] as [string, string]]),
        ...Object.entries({ bank_code: 'GCB', ...fields }),
      ],
      content === null ? null : { filename: options.filename ?? 'march.csv', content },
    );
    return t.app.inject({
      method: 'POST',
      url: '/ops/statements/import',
      headers: { cookie: `sika_ops=${ops.session}`, 'content-type': body.contentType },
      payload: body.payload,
    });
  }

  /** The id of the queued line whose narration contains `words`, read from the searched page. */
  async function queuedLineId(words: string): Promise<string> {
    const page = await ops.get(`/ops/statements?q=${encodeURIComponent(words)}`);
    assert.equal(page.statusCode, 200);
    const id = /action="\/ops\/statements\/lines\/([0-9a-f-]{36})\/assign"/.exec(page.body)?.[1];
    assert.ok(id, `no queued credit with "${words}" on the page`);
    return id;
  }

  it('is linked from the navigation and offers the upload form for the one collection account', async () => {
    const home = await ops.get('/ops');
    assert.match(home.body, /<a href="\/ops\/statements">Statements<\/a>/);
    const page = await ops.get('/ops/statements');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<a href="\/ops\/statements" aria-current="page">Statements<\/a>/);
    assert.match(page.body, /<form method="post" action="\/ops\/statements\/import" enctype="multipart\/form-data"/);
    assert.match(
      page.body,
      /<strong>Collection account:<\/strong> GCB Bank \(GCB\) 1011130012345, Sika Collections Ltd<\/p><input type="hidden" name="bank_code" value="GCB">/,
    );
    assert.match(page.body, /<label for="statement-columns">/);
    assert.match(page.body, /Unmatched credits \(\d+\)/);
  });

  it('an uploaded statement is imported: the exact credit pays its payment, the other is queued; the import is listed and its page shows its lines; uploading it again is refused', async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 45_000);
    const words = uniqueWords();
    const csv = gcbStatement([
      { narration: `TRF FRM ABENA ${transfer.reference.toLowerCase()}`, credit: '450.00' },
      { narration: `FROM ${words}`, credit: '99.99' },
    ]);
    const res = await upload(csv);
    assert.equal(res.statusCode, 200, res.body.slice(0, 500));
    assert.equal(
      flashOf(res.body),
      'Imported march.csv (GCB): 2 lines, 2 credits: 1 matched, 0 amount mismatch, 1 unmatched, 0 already imported.',
    );
    assert.equal((await attemptOf(t, transfer.attemptId)).status, 'paid');
    assert.equal(await sessionStatus(t, transfer.sessionId), 'success');
    assert.match(
      res.body,
      /Columns read: date = Value Date · description = Narration · credit = Credit \(GHS\) · debit = Debit \(GHS\) · balance = Balance \(GHS\)/,
    );
    const importId = /href="\/ops\/statements\/imports\/([0-9a-f-]{36})">See its lines/.exec(res.body)?.[1];
    assert.ok(importId);

    const lineId = await queuedLineId(words);
    const searched = await ops.get(`/ops/statements?q=${encodeURIComponent(words)}`);
    assert.match(searched.body, /Unmatched credits \(1 matching &quot;PAYMENT [0-9A-F]{10}&quot;\)/);
    assert.match(searched.body, /GHS 99\.99/);
    assert.match(searched.body, /No payment reference \(SK and 8 characters\) in the narration\./);

    const detail = await ops.get(`/ops/statements/imports/${importId}`);
    assert.equal(detail.statusCode, 200);
    assert.match(detail.body, new RegExp(`${transfer.reference}<br><span class="muted">${transfer.attemptId}</span>`));
    assert.match(detail.body, /<span class="badge ok">matched<\/span>/);
    assert.match(detail.body, /<span class="badge warn">unmatched<\/span>/);
    assert.equal((await ops.get(`/ops/statements/imports/${randomUUID()}`)).statusCode, 404);

    const again = await upload(csv, {}, { filename: 'march-again.csv' });
    assert.equal(again.statusCode, 409);
    assert.match(flashOf(again.body), /^This file was imported already: march\.csv for GCB on /);
    assert.equal(await queuedLineId(words), lineId, 'the same one credit waits');
    const list = await ops.get('/ops/statements');
    assert.match(
      list.body,
      new RegExp(
        `<a href="/ops/statements/imports/${importId}">march\\.csv</a></td><td>operator:${operatorEmail.replace(/[.]/g, '\\.')}</td>\\s*<td>2</td><td>2</td><td>1</td><td>0</td><td>1</td><td>0</td><td>0</td>`,
      ),
    );
  });

  it("the queue's actions: apply a credit to a payment by its reference, resolve one with a note; refusals re-show the page with the reason", async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 33_300);
    const [forPayment, forReturn] = [uniqueWords(), uniqueWords()];
    const imported = await upload(
      gcbStatement([
        { narration: `MOMO TO BANK ${forPayment}`, credit: '333.00' },
        { narration: `WRONG ACCOUNT ${forReturn}`, credit: '10.00' },
      ]),
    );
    assert.equal(imported.statusCode, 200);
    const paymentLine = await queuedLineId(forPayment);
    const returnLine = await queuedLineId(forReturn);

    const notAReference = await ops.post(`/ops/statements/lines/${paymentLine}/assign`, { reference: 'INV-001' });
    assert.equal(notAReference.statusCode, 400);
    assert.match(flashOf(notAReference.body), /"INV-001" is not a payment reference/);
    const nobody = await ops.post(`/ops/statements/lines/${paymentLine}/assign`, { reference: newPaymentReference() });
    assert.equal(nobody.statusCode, 404);
    assert.match(flashOf(nobody.body), /Live bank transfer SK[0-9A-Z]{8} not found/);

    const applied = await ops.post(`/ops/statements/lines/${paymentLine}/assign`, {
      reference: ` ${transfer.reference.toLowerCase()} `,
    });
    assert.equal(applied.statusCode, 200, applied.body.slice(0, 300));
    assert.equal(
      flashOf(applied.body),
      `Applied to ${transfer.reference}: the payment is paid and its checkout success.`,
    );
    assert.equal((await lineById(t, paymentLine)).status, 'matched');
    assert.equal(await sessionStatus(t, transfer.sessionId), 'success');

    const noNote = await ops.post(`/ops/statements/lines/${returnLine}/resolve`, { note: ' ' });
    assert.equal(noNote.statusCode, 400);
    assert.match(flashOf(noNote.body), /Say what was done with the credit/);
    const resolved = await ops.post(`/ops/statements/lines/${returnLine}/resolve`, {
      note: 'Returned to the sender (GCB ref FT26071)',
    });
    assert.equal(resolved.statusCode, 200);
    assert.match(flashOf(resolved.body), /^The credit of GHS 10\.00 on 2026-03-02 is resolved\.$/);
    const line = await lineById(t, returnLine);
    assert.deepEqual(
      [line.status, line.resolution_note, line.resolved_by],
      ['resolved', 'Returned to the sender (GCB ref FT26071)', `operator:${operatorEmail}`],
    );

    const stale = await ops.post(`/ops/statements/lines/${returnLine}/assign`, { reference: transfer.reference });
    assert.equal(stale.statusCode, 404);
    assert.match(flashOf(stale.body), /Unmatched credit not found/);
    const audited = await t.db.query<{ action: string; actor_email: string }>(
      'SELECT action, actor_email FROM audit_log WHERE object_id = ANY($1::text[]) ORDER BY id',
      [[paymentLine, returnLine]],
    );
    assert.deepEqual(
      audited.map((a) => [a.action, a.actor_email]),
      [
        ['statement_line.assign', operatorEmail],
        ['statement_line.resolve', operatorEmail],
      ],
    );
  });

  it('refuses an upload without a file, for an unknown bank, or with no recognisable header, with the reason and nothing imported; a column mapping fixes the last', async () => {
    const imports = async () =>
      (
        await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM statement_imports WHERE imported_by = $1', [
          `operator:${operatorEmail}`,
        ])
      )[0]!.n;
    const before = await imports();
    const noFile = await upload(null);
    assert.equal(noFile.statusCode, 400);
    assert.equal(flashOf(noFile.body), 'Choose the statement file (CSV) to import.');
    const empty = await upload('');
    assert.equal(empty.statusCode, 400);
    const badBank = await upload(gcbStatement([{ narration: 'X', credit: '1.00' }]), { bank_code: 'NOPE' });
    assert.equal(badBank.statusCode, 400);
    assert.match(flashOf(badBank.body), /"NOPE" is not the code of a bank with a Sika collection account/);
    const odd = `When,What,Got\n12/03/2026,${uniqueWords()},5.00\n`;
    const noHeader = await upload(odd);
    assert.equal(noHeader.statusCode, 400);
    assert.match(flashOf(noHeader.body), /No header row found in the first 20 rows/);
    const badMapping = await upload(odd, { columns: 'when=When' });
    assert.equal(badMapping.statusCode, 400);
    assert.match(flashOf(badMapping.body), /"when", which is not a field/);
    assert.equal(await imports(), before, 'nothing was imported');
    const mapped = await upload(odd, { columns: 'date=When,description=What,credit=Got' });
    assert.equal(mapped.statusCode, 200, flashOf(mapped.body));
    assert.match(flashOf(mapped.body), /1 credit: 0 matched, 0 amount mismatch, 1 unmatched/);
    assert.equal(await imports(), before + 1);
  });

  it('refuses an upload without the CSRF token, and keeps tellers out', async () => {
    const csv = gcbStatement([{ narration: uniqueWords(), credit: '1.00' }]);
    const forged = await upload(csv, {}, { csrf: null });
    assert.equal(forged.statusCode, 403);
    const teller = await new ConsoleClient(t, '/ops', '203.0.113.77').signedIn(tellerEmail, PASSWORD);
    const page = await teller.get('/ops/statements');
    assert.equal(page.statusCode, 303);
    assert.equal(page.headers.location, '/ops/teller');
    const tellerHome = await teller.get('/ops/teller');
    assert.doesNotMatch(tellerHome.body, /\/ops\/statements/, 'no Statements link for a teller');
  });

  it('takes the upload from a browser over a real connection (multipart sent by fetch and FormData)', async () => {
    const base = await t.listen();
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 12_345);
    await ops.get('/ops/statements');
    const form = new FormData();
    form.set('_csrf', ops.csrf!);
    form.set('bank_code', 'gcb');
    form.set(
      'file',
      new Blob(
        [gcbStatement([{ narration: `SK ${transfer.reference.slice(2)} ${uniqueWords()}`, credit: '123.45' }])],
        { type: 'text/csv' },
      ),
      'from-browser.csv',
    );
    const res = await fetch(`${base}/ops/statements/import`, {
      method: 'POST',
      body: form,
      headers: { cookie: `sika_ops=${ops.session}` },
      redirect: 'manual',
    });
    const body = await res.text();
    assert.equal(res.status, 200, body.slice(0, 300));
    assert.equal(
      flashOf(body),
      'Imported from-browser.csv (GCB): 1 line, 1 credit: 1 matched, 0 amount mismatch, 0 unmatched, 0 already imported.',
    );
    assert.equal((await attemptOf(t, transfer.attemptId)).status, 'paid');
  });
});
