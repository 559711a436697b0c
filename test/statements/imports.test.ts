// Bank statement imports on storage (issue 16, docs/bank-statements.md): fingerprints (the same file twice changes
// nothing; identical lines count separately), matching (exact, mismatch, unmatched, late after expiry, a second
// transfer), the operators' two actions (apply, resolve), the queue's search, and refused files and bad rows.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../src/audit/log.ts';
import { createOperator, requestHeldDecision } from '../../src/ops/service.ts';
import { isPaymentReference, newPaymentReference } from '../../src/rails/bank-transfer/index.ts';
import { collectionAccounts } from '../../src/rails/bank-transfer/accounts.ts';
import {
  assignCredit,
  importStatement,
  resolveCredit,
  statementsOverview,
  type ImportResult,
} from '../../src/statements/service.ts';
import {
  BANK_ENV,
  attemptOf,
  cedis,
  gcbStatement,
  lineById,
  linesOfImport,
  liveBalance,
  liveTransfer,
  rejects,
  sessionStatus,
  uniqueWords,
  type Row,
} from '../support/bank-statements.ts';
import { backdate, creditOf, runExpiry } from '../support/checkout.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const OPERATOR: Actor = { type: 'operator', id: randomUUID(), email: 'statements-operator@example.com' };

describe(`bank statement imports (${storageKind})`, () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp(BANK_ENV);
  });
  after(() => t.close());

  const importCsv = (
    csv: string,
    options: { bankCode?: string; columns?: string; forceReason?: string } = {},
  ): Promise<ImportResult> =>
    importStatement(t.db, {
      bankCode: options.bankCode ?? 'gcb',
      fileName: 'C:\\Users\\ops\\march.csv',
      csv,
      columns: options.columns,
      importedBy: OPERATOR,
      checkoutUrlHost: t.config.checkoutUrlHost,
      collectionAccounts: collectionAccounts(t.config.providers.bankTransfer),
      forceReason: options.forceReason,
    });
  const counts = (r: ImportResult) => ({
    lines: r.lines,
    credits: r.credits,
    matched: r.matched,
    amount_mismatch: r.amount_mismatch,
    unmatched: r.unmatched,
    duplicates: r.duplicates,
    errors: r.errors,
  });
  /** The line as the queue shows it (searched by its narration: a shared database's queue holds other runs' lines), or undefined. */
  const queued = async (lineId: string) => {
    const [line] = await t.db.query<{ narration: string }>('SELECT narration FROM statement_lines WHERE id = $1', [
      lineId,
    ]);
    const overview = await statementsOverview(t.db, { search: line!.narration });
    assert.equal(overview.queue.length, overview.queueTotal);
    return overview.queue.find((queuedLine) => queuedLine.id === lineId);
  };

  it('a Live bank transfer shows the collection account and a unique payment reference, stored with the attempt', async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m);
    assert.ok(isPaymentReference(transfer.reference), transfer.reference);
    assert.deepEqual(
      { ...transfer.instructions, note: undefined },
      {
        mode: 'bank_transfer',
        rail: 'bank_transfer',
        amount_minor: 50_000,
        currency: 'GHS',
        bank_name: 'GCB Bank',
        bank_code: 'GCB',
        branch: 'Accra Central',
        account_number: '1011130012345',
        account_name: 'Sika Collections Ltd',
        reference: transfer.reference,
        note: undefined,
      },
    );
    const [row] = await t.db.query<{ provider: string; provider_reference: string; status: string }>(
      'SELECT provider, provider_reference, status FROM payment_attempts WHERE id = $1',
      [transfer.attemptId],
    );
    assert.deepEqual(row, { provider: 'bank_statement', provider_reference: transfer.reference, status: 'pending' });
    // The partial unique index: a reference names one bank transfer for good; other providers and the empty reference are not concerned.
    const copy = (provider: string, reference: string) =>
      t.db.query(
        `INSERT INTO payment_attempts (id, session_id, merchant_id, environment, rail, provider, provider_reference, status, raw_status, base_minor, fee_minor, bearer, amount_charged_minor, currency)
         SELECT $1, session_id, merchant_id, environment, rail, $2, $3, 'failed', 'X', base_minor, fee_minor, bearer, amount_charged_minor, currency FROM payment_attempts WHERE id = $4`,
        [`att_${randomUUID()}`, provider, reference, transfer.attemptId],
      );
    await assert.rejects(
      copy('bank_statement', transfer.reference),
      (error: Error & { isUniqueViolation?: boolean }) => error.isUniqueViolation === true,
    );
    await copy('sika_test', transfer.reference);
    await copy('bank_statement', '');
    await copy('bank_statement', '');
  });

  it('a credit of the exact amount with the reference in its narration pays the attempt: the checkout succeeds and the merchant is credited; the import is audited', async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 50_000);
    const before = await liveBalance(t, m);
    const narration = `IB TRF FRM KOFI MENSAH ${transfer.reference.toLowerCase().replace(/(.{6})/, '$1 ')} FEES`;
    const result = await importCsv(
      gcbStatement([
        { narration, credit: cedis(transfer.chargedMinor) },
        { narration: `ATM WITHDRAWAL ${uniqueWords()}`, debit: '200.00' },
      ]),
    );
    assert.deepEqual(counts(result), {
      lines: 2,
      credits: 1,
      matched: 1,
      amount_mismatch: 0,
      unmatched: 0,
      duplicates: 0,
      errors: 0,
    });
    assert.equal(result.file_name, 'march.csv');
    assert.equal(result.bank_code, 'GCB');
    assert.equal(result.debits, 1);
    assert.deepEqual(await attemptOf(t, transfer.attemptId), {
      status: 'paid',
      raw_status: 'SUCCESSFUL:statement',
      amount_charged_minor: 50_000,
    });
    assert.equal(await sessionStatus(t, transfer.sessionId), 'success');
    assert.equal((await liveBalance(t, m)) - before, creditOf('bank_transfer', 50_000));
    const [line] = await linesOfImport(t, result.import_id);
    assert.deepEqual(
      { ...line, id: undefined },
      {
        id: undefined,
        line_number: 6,
        status: 'matched',
        amount_minor: 50_000,
        payment_reference: transfer.reference,
        attempt_id: transfer.attemptId,
        reason: '',
        resolution_note: null,
      },
    );
    const events = await t.db.query<{ type: string }>(
      "SELECT type FROM events WHERE object_id = $1 AND type = 'checkout.session.completed'",
      [transfer.sessionId],
    );
    assert.equal(events.length, 1);
    const [audited] = await t.db.query<{ actor_id: string; after: Record<string, unknown> }>(
      "SELECT actor_id, after FROM audit_log WHERE action = 'statement.import' AND object_id = $1",
      [result.import_id],
    );
    assert.equal(audited!.actor_id, OPERATOR.id);
    assert.equal(audited!.after.matched, 1);
  });

  it('the same statement again is refused (same sha256); forced with a reason, or with other bytes, every credit is a duplicate: no line, payment, event or ledger entry is added', async () => {
    const m = await t.merchant();
    const paid = await liveTransfer(t, m, 30_000);
    const short = await liveTransfer(t, m, 40_000);
    const csv = gcbStatement([
      { narration: `TRF ${paid.reference}`, credit: cedis(30_000) },
      { narration: `TRF ${short.reference}`, credit: cedis(10_000) },
      { narration: `UNKNOWN PAYER ${uniqueWords()}`, credit: '75.00' },
    ]);
    const first = await importCsv(csv);
    assert.deepEqual(counts(first), {
      lines: 3,
      credits: 3,
      matched: 1,
      amount_mismatch: 1,
      unmatched: 1,
      duplicates: 0,
      errors: 0,
    });
    const snapshot = async () =>
      JSON.stringify({
        lines: await t.db.query(
          'SELECT id, status, attempt_id, reason, updated_at FROM statement_lines WHERE import_id = $1 ORDER BY id',
          [first.import_id],
        ),
        attempts: await t.db.query(
          'SELECT id, status, version, updated_at FROM payment_attempts WHERE merchant_id = $1 ORDER BY id',
          [m.merchant_id],
        ),
        events: (
          await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE merchant_id = $1', [
            m.merchant_id,
          ])
        )[0]!.n,
        journal: (
          await t.db.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM journal_entries WHERE reference_type = 'payment' AND reference_id = ANY($1::text[])",
            [[paid.attemptId, short.attemptId]],
          )
        )[0]!.n,
      });
    const before = await snapshot();
    await assert.rejects(
      importCsv(csv),
      rejects('STATEMENT_ALREADY_IMPORTED', /^This file was imported already: march\.csv for GCB on /),
    );
    assert.equal(await snapshot(), before);
    const again = await importCsv(csv, { forceReason: 'Checking the duplicate rule' });
    assert.deepEqual(counts(again), {
      lines: 3,
      credits: 3,
      matched: 0,
      amount_mismatch: 0,
      unmatched: 0,
      duplicates: 3,
      errors: 0,
    });
    assert.equal(await snapshot(), before);
    assert.deepEqual(await linesOfImport(t, again.import_id), [], 'the second import recorded no line');
    // Bytes that differ only in line endings and the title are the same statement.
    const third = await importCsv(csv.replace(/\r\n/g, '\n').replace('GCB BANK PLC', 'GCB BANK'));
    assert.equal(third.duplicates, 3);
    assert.equal(await snapshot(), before);
  });

  it('identical lines in one file are separate credits; a later statement with one more of them adds only that one', async () => {
    const words = `MOBILE TRANSFER ${uniqueWords()}`;
    const row: Row = { narration: words, credit: '20.00', balance: '' };
    const two = await importCsv(gcbStatement([row, row]));
    assert.deepEqual(counts(two), {
      lines: 2,
      credits: 2,
      matched: 0,
      amount_mismatch: 0,
      unmatched: 2,
      duplicates: 0,
      errors: 0,
    });
    const three = await importCsv(gcbStatement([row, row, row]));
    assert.deepEqual(counts(three), {
      lines: 3,
      credits: 3,
      matched: 0,
      amount_mismatch: 0,
      unmatched: 1,
      duplicates: 2,
      errors: 0,
    });
    const stored = await t.db.query('SELECT id FROM statement_lines WHERE narration = $1', [words]);
    assert.equal(stored.length, 3);
  });

  it('a credit of another amount holds the attempt as amount_mismatch (the checkout stays pending); a later exact credit pays it and sends the first back to the queue', async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 50_000);
    const short = await importCsv(
      gcbStatement([{ narration: `PART PAYMENT ${transfer.reference}`, credit: '400.00' }]),
    );
    assert.deepEqual(counts(short), {
      lines: 1,
      credits: 1,
      matched: 0,
      amount_mismatch: 1,
      unmatched: 0,
      duplicates: 0,
      errors: 0,
    });
    assert.deepEqual(await attemptOf(t, transfer.attemptId), {
      status: 'amount_mismatch',
      raw_status: 'AMOUNT_MISMATCH:statement',
      amount_charged_minor: 50_000,
    });
    assert.equal(await sessionStatus(t, transfer.sessionId), 'pending');
    const [held] = await linesOfImport(t, short.import_id);
    assert.equal(held!.status, 'amount_mismatch');
    assert.equal(held!.attempt_id, transfer.attemptId);
    assert.match(held!.reason, /Received GHS 400\.00 for a payment of GHS 500\.00/);
    assert.equal(await queued(held!.id), undefined, 'held under Review, not in the queue');

    const full = await importCsv(gcbStatement([{ narration: `BALANCE ${transfer.reference}`, credit: '500.00' }]));
    assert.equal(full.matched, 1);
    assert.equal((await attemptOf(t, transfer.attemptId)).status, 'paid');
    assert.equal(await sessionStatus(t, transfer.sessionId), 'success');
    const released = await lineById(t, held!.id);
    assert.equal(released.status, 'unmatched');
    assert.equal(released.attempt_id, null);
    assert.match(released.reason, /paid in full by a later credit/);
    assert.ok(await queued(held!.id), 'the GHS 400.00 is back in the queue: money taken is never dropped');
  });

  it('a credit with no reference, or a reference that is no Live bank transfer, waits in the unmatched queue with the reason', async () => {
    const stranger = newPaymentReference();
    const result = await importCsv(
      gcbStatement([
        { narration: `SALARY ${uniqueWords()}`, credit: '1,000.00' },
        { narration: `TRF ${stranger}`, credit: '10.00' },
      ]),
    );
    assert.deepEqual(counts(result), {
      lines: 2,
      credits: 2,
      matched: 0,
      amount_mismatch: 0,
      unmatched: 2,
      duplicates: 0,
      errors: 0,
    });
    const [none, unknown] = await linesOfImport(t, result.import_id);
    assert.equal(none!.reason, 'No payment reference (SK and 8 characters) in the narration.');
    assert.equal(unknown!.reason, `${stranger} is not the reference of a Live bank transfer.`);
    assert.equal(unknown!.payment_reference, stranger);
    for (const line of [none!, unknown!]) assert.equal((await queued(line.id))?.status, 'unmatched');
  });

  it('a credit of the exact amount after the checkout expired is still applied: the expired attempt is paid and the session succeeds; a late credit of another amount is held for an operator', async () => {
    const m = await t.merchant();
    const late = await liveTransfer(t, m, 25_000);
    const lateWrong = await liveTransfer(t, m, 26_000);
    for (const transfer of [late, lateWrong]) await backdate(t, transfer.sessionId);
    await runExpiry(t);
    for (const transfer of [late, lateWrong]) {
      assert.equal((await attemptOf(t, transfer.attemptId)).status, 'expired');
      assert.equal(await sessionStatus(t, transfer.sessionId), 'expired');
    }
    const result = await importCsv(
      gcbStatement([
        { narration: `LATE ${late.reference}`, credit: '250.00' },
        { narration: `LATE ${lateWrong.reference}`, credit: '100.00' },
      ]),
    );
    assert.deepEqual(counts(result), {
      lines: 2,
      credits: 2,
      matched: 1,
      amount_mismatch: 1,
      unmatched: 0,
      duplicates: 0,
      errors: 0,
    });
    assert.equal((await attemptOf(t, late.attemptId)).status, 'paid');
    assert.equal(await sessionStatus(t, late.sessionId), 'success');
    const [paidLine, heldLine] = await linesOfImport(t, result.import_id);
    assert.match(paidLine!.reason, /after the payment had expired/);
    // Money taken is never dropped (issue 31: expired -> amount_mismatch): an operator decides on the held attempt.
    assert.equal((await attemptOf(t, lateWrong.attemptId)).status, 'amount_mismatch');
    assert.equal(heldLine!.status, 'amount_mismatch');
    assert.equal(await sessionStatus(t, lateWrong.sessionId), 'expired', 'a decided session stays as it is');
  });

  it('a second transfer for a paid payment is queued, not dropped and not credited twice', async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 15_000);
    await importCsv(gcbStatement([{ narration: `FIRST ${transfer.reference}`, credit: '150.00' }]));
    const balance = await liveBalance(t, m);
    const second = await importCsv(gcbStatement([{ narration: `AGAIN ${transfer.reference}`, credit: '150.00' }]));
    assert.deepEqual(counts(second), {
      lines: 1,
      credits: 1,
      matched: 0,
      amount_mismatch: 0,
      unmatched: 1,
      duplicates: 0,
      errors: 0,
    });
    const [line] = await linesOfImport(t, second.import_id);
    assert.match(line!.reason, /is paid already: this looks like a second transfer/);
    assert.equal(await liveBalance(t, m), balance);
  });

  it('an operator applies a queued credit to a payment by its reference (typed loosely): paid at the exact amount, held at another; audited', async () => {
    const m = await t.merchant();
    const exact = await liveTransfer(t, m, 12_000);
    const other = await liveTransfer(t, m, 13_000);
    const result = await importCsv(
      gcbStatement([
        { narration: `FROM AMA ${uniqueWords()}`, credit: '120.00' },
        { narration: `FROM YAW ${uniqueWords()}`, credit: '100.00' },
      ]),
    );
    const [first, second] = await linesOfImport(t, result.import_id);
    const done = await assignCredit(
      t.db,
      OPERATOR,
      t.config.checkoutUrlHost,
      first!.id,
      ` ${exact.reference.toLowerCase().slice(0, 6)} ${exact.reference.toLowerCase().slice(6)} `,
    );
    assert.equal(done.status, 'matched');
    assert.equal(done.attempt.status, 'paid');
    assert.equal(done.session.status, 'success');
    assert.deepEqual(await lineById(t, first!.id), {
      status: 'matched',
      attempt_id: exact.attemptId,
      payment_reference: exact.reference,
      reason: '',
      resolution_note: null,
      resolved_by: null,
    });
    const held = await assignCredit(t.db, OPERATOR, t.config.checkoutUrlHost, second!.id, other.reference);
    assert.equal(held.status, 'amount_mismatch');
    assert.equal((await attemptOf(t, other.attemptId)).status, 'amount_mismatch');
    const audited = await t.db.query<{
      object_id: string;
      merchant_id: string;
      after: { status: string; attempt: string };
    }>(
      "SELECT object_id, merchant_id, after FROM audit_log WHERE action = 'statement_line.assign' AND object_id = ANY($1::text[]) ORDER BY id",
      [[first!.id, second!.id]],
    );
    assert.deepEqual(
      audited.map((a) => [a.object_id, a.merchant_id, a.after.status, a.after.attempt]),
      [
        [first!.id, m.merchant_id, 'matched', exact.attemptId],
        [second!.id, m.merchant_id, 'amount_mismatch', other.attemptId],
      ],
    );
    // Neither is queued any more: acting on them again is a stale form.
    await assert.rejects(
      assignCredit(t.db, OPERATOR, t.config.checkoutUrlHost, first!.id, exact.reference),
      rejects('NOT_FOUND', /Unmatched credit not found/),
    );
    await assert.rejects(resolveCredit(t.db, OPERATOR, second!.id, 'returned'), rejects('NOT_FOUND'));
  });

  it('an operator cannot apply a credit to a payment that cannot take it, nor to something that is not a payment reference; the credit stays queued', async () => {
    const m = await t.merchant();
    const paid = await liveTransfer(t, m, 9_000);
    await importCsv(gcbStatement([{ narration: `PAY ${paid.reference}`, credit: '90.00' }]));
    const result = await importCsv(gcbStatement([{ narration: `FROM ESI ${uniqueWords()}`, credit: '90.00' }]));
    const [line] = await linesOfImport(t, result.import_id);
    await assert.rejects(
      assignCredit(t.db, OPERATOR, t.config.checkoutUrlHost, line!.id, paid.reference),
      rejects('ATTEMPT_FINAL', /is paid already/),
    );
    await assert.rejects(
      assignCredit(t.db, OPERATOR, t.config.checkoutUrlHost, line!.id, 'INV-2026-001'),
      rejects('INVALID_ARGUMENT', /not a payment reference/),
    );
    await assert.rejects(
      assignCredit(t.db, OPERATOR, t.config.checkoutUrlHost, line!.id, newPaymentReference()),
      rejects('NOT_FOUND', /Live bank transfer SK/),
    );
    await assert.rejects(
      assignCredit(t.db, OPERATOR, t.config.checkoutUrlHost, randomUUID(), paid.reference),
      rejects('NOT_FOUND'),
    );
    assert.equal((await lineById(t, line!.id)).status, 'unmatched');
    assert.equal(
      (await t.db.query("SELECT 1 FROM audit_log WHERE object_id = $1 AND action LIKE 'statement_line.%'", [line!.id]))
        .length,
      0,
      'a refusal is not audited',
    );
  });

  it('an operator resolves a queued credit with a note (returned to the sender); a note is required; audited', async () => {
    const result = await importCsv(gcbStatement([{ narration: `WRONG ACCOUNT ${uniqueWords()}`, credit: '5,000.00' }]));
    const [line] = await linesOfImport(t, result.import_id);
    await assert.rejects(
      resolveCredit(t.db, OPERATOR, line!.id, '   '),
      rejects('INVALID_ARGUMENT', /Say what was done/),
    );
    await assert.rejects(
      resolveCredit(t.db, OPERATOR, line!.id, 'x'.repeat(501)),
      rejects('INVALID_ARGUMENT', /at most 500/),
    );
    const resolved = await resolveCredit(t.db, OPERATOR, line!.id, ' Returned to the sender,\n ref FT123 ');
    assert.equal(resolved.status, 'resolved');
    const stored = await lineById(t, line!.id);
    assert.deepEqual(
      [stored.status, stored.resolution_note, stored.resolved_by],
      ['resolved', 'Returned to the sender, ref FT123', `operator:${OPERATOR.email}`],
    );
    assert.equal(await queued(line!.id), undefined);
    const [audited] = await t.db.query<{
      actor_email: string;
      before: { status: string };
      after: { status: string; note: string };
    }>("SELECT actor_email, before, after FROM audit_log WHERE action = 'statement_line.resolve' AND object_id = $1", [
      line!.id,
    ]);
    assert.deepEqual(
      [audited!.actor_email, audited!.before.status, audited!.after.status, audited!.after.note],
      [OPERATOR.email, 'unmatched', 'resolved', 'Returned to the sender, ref FT123'],
    );
  });

  it('a mismatched credit whose payment is rejected under Review is back in the queue, and can be resolved or applied elsewhere', async () => {
    const m = await t.merchant();
    const rejected = await liveTransfer(t, m, 70_000);
    const elsewhere = await liveTransfer(t, m, 60_000);
    const result = await importCsv(gcbStatement([{ narration: `FEES ${rejected.reference}`, credit: '600.00' }]));
    const [line] = await linesOfImport(t, result.import_id);
    assert.equal(line!.status, 'amount_mismatch');
    // A reject moves no money: it applies at once (no second operator), by a real operator with a reason.
    const reviewer = await createOperator(t.db, {
      email: `reviewer-${randomUUID()}@example.com`,
      password: 'statements-reviewer-password',
    });
    const reviewerActor: Actor = { type: 'operator', id: reviewer.operator_id, email: reviewer.email };
    await requestHeldDecision(t.db, reviewerActor, t.config.checkoutUrlHost, rejected.attemptId, {
      choice: 'reject',
      reason: 'Not this payer',
      confirmed: true,
    });
    const inQueue = await queued(line!.id);
    assert.ok(inQueue, 'the credit was never applied: it is queued again');
    assert.equal(inQueue.attempt_status, 'failed');
    const done = await assignCredit(t.db, OPERATOR, t.config.checkoutUrlHost, line!.id, elsewhere.reference);
    assert.equal(done.status, 'matched');
    assert.equal((await attemptOf(t, elsewhere.attemptId)).status, 'paid');
    assert.equal((await lineById(t, line!.id)).attempt_id, elsewhere.attemptId);
  });

  it('the queue is searched by words of the narration, an amount or a payment reference typed loosely', async () => {
    const words = uniqueWords();
    const reference = newPaymentReference();
    const result = await importCsv(
      gcbStatement([
        { narration: `FROM KWAME ${words}`, credit: '1,234.56' },
        { narration: `TRF ${reference} ${uniqueWords()}`, credit: '7.00' },
      ]),
    );
    const [byWords, byReference] = await linesOfImport(t, result.import_id);
    const ids = async (search: string) => (await statementsOverview(t.db, { search })).queue.map((line) => line.id);
    assert.deepEqual(await ids(words.toLowerCase()), [byWords!.id]);
    assert.ok((await ids('1,234.56')).includes(byWords!.id));
    assert.deepEqual(await ids(`${reference.slice(0, 5).toLowerCase()} ${reference.slice(5).toLowerCase()}`), [
      byReference!.id,
    ]);
    assert.deepEqual(await ids(`${words}%`), [], 'a % is a character, not a wildcard');
    const all = await statementsOverview(t.db);
    assert.ok(all.queueTotal >= 2 && all.queue.length <= all.queueTotal);
  });

  it('refuses an unknown bank code and a file without a recognisable header before recording anything; reports the column mapping used', async () => {
    const imports = async () =>
      (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM statement_imports'))[0]!.n;
    const before = await imports();
    await assert.rejects(
      importCsv(gcbStatement([{ narration: 'X', credit: '1.00' }]), { bankCode: 'NOPE' }),
      rejects('INVALID_ARGUMENT', /"NOPE" is not the code of a bank/),
    );
    await assert.rejects(importCsv('just,some,words\n1,2,3\n'), rejects('INVALID_ARGUMENT', /No header row/));
    await assert.rejects(
      importCsv('Date,Narration,Credit\n', { columns: 'colour=1' }),
      rejects('INVALID_ARGUMENT', /not a field/),
    );
    assert.equal(await imports(), before);
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 10_000);
    const mapped = await importCsv(`Txn Dt|x,Info,In\n12/03/2026,${transfer.reference} ${uniqueWords()},100.00\n`, {
      columns: 'date=Txn Dt|x,description=Info,credit=In',
    });
    assert.deepEqual(mapped.columns, { date: 'Txn Dt|x', description: 'Info', credit: 'In' });
    assert.equal(mapped.matched, 1);
  });

  it('bad rows are counted as errors with their line numbers and kept with the import; the good rows are imported', async () => {
    const m = await t.merchant();
    const transfer = await liveTransfer(t, m, 11_000);
    const result = await importCsv(
      gcbStatement([
        { narration: `GOOD ${transfer.reference}`, credit: '110.00' },
        { narration: 'BAD', credit: 'one hundred' },
        { narration: 'LATE', credit: '1.00', date: '32/03/2026' },
      ]),
    );
    assert.deepEqual(counts(result), {
      lines: 3,
      credits: 1,
      matched: 1,
      amount_mismatch: 0,
      unmatched: 0,
      duplicates: 0,
      errors: 2,
    });
    assert.deepEqual(result.problems, [
      { line: 7, message: 'credit "one hundred" is not an amount' },
      { line: 8, message: 'date "32/03/2026" is not a date (DD/MM/YYYY, YYYY-MM-DD or DD-MMM-YYYY)' },
    ]);
    const [stored] = await t.db.query<{ errors: number; problems: unknown }>(
      'SELECT errors, problems FROM statement_imports WHERE id = $1',
      [result.import_id],
    );
    assert.deepEqual(stored, { errors: 2, problems: result.problems });
  });
});
