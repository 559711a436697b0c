// Live bank transfers matched from imported bank statements (issue 16, docs/bank-statements.md): the payment
// reference (format, check character, the lenient finder), the adapter, reading statement CSVs (header
// aliases, thousands separators, column mappings, bad rows with their line numbers), and on storage:
// fingerprints (the same file twice changes nothing; identical lines count separately), matching (exact,
// mismatch, unmatched, late after expiry, a second transfer), the operators' two actions, and the CLI.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createMerchant } from '../../src/accounts/service.ts';
import type { Actor } from '../../src/audit/log.ts';
import { loadConfig } from '../../src/config/index.ts';
import { openDb } from '../../src/db/index.ts';
import { buildApp } from '../../src/app.ts';
import { SikaError } from '../../src/lib/errors.ts';
import { createOperator, requestHeldDecision } from '../../src/ops/service.ts';
import {
  createBankTransfer,
  findPaymentReference,
  findPaymentReferences,
  isPaymentReference,
  newPaymentReference,
  PAYMENT_REFERENCE_ALPHABET,
  PAYMENT_REFERENCE_PATTERN,
} from '../../src/rails/bank-transfer/index.ts';
import { collectionAccounts } from '../../src/rails/bank-transfer/accounts.ts';
import { RailUnavailableError, type AttemptForRail } from '../../src/rails/types.ts';
import { parseAmountCell, parseStatementDate } from '../../src/statements/cells.ts';
import { parseColumnMapping, parseStatementCsv } from '../../src/statements/csv.ts';
import { fingerprintCredits, type StatementCredit } from '../../src/statements/model.ts';
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
  sessionStatus,
  uniqueWords,
  type Row,
} from '../support/bank-statements.ts';
import { backdate, creditOf, runExpiry } from '../support/checkout.ts';
import { CLI_USER_AT_HOST } from '../support/cli-io.ts';
import { startTestApp, storageKind, type TestContext } from '../support/helpers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI_TIMEOUT_MS = 120_000;
const OPERATOR: Actor = { type: 'operator', id: randomUUID(), email: 'statements-operator@example.com' };

const rejects = (code: string, pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof SikaError, `a SikaError, not ${String(error)}`);
  assert.equal(error.code, code, error.message);
  if (pattern) assert.match(error.message, pattern);
  return true;
};

// ---- the payment reference ----

describe('the payment reference', () => {
  it('is SK and 8 characters from an alphabet without 0, O, 1, I or L, with a check character; 2,000 drawn are all different', () => {
    assert.equal(PAYMENT_REFERENCE_ALPHABET.length, 31);
    for (const confusable of '01OIL') assert.ok(!PAYMENT_REFERENCE_ALPHABET.includes(confusable), confusable);
    const drawn = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const reference = newPaymentReference();
      assert.match(reference, /^SK[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{8}$/);
      assert.match(reference, PAYMENT_REFERENCE_PATTERN);
      assert.ok(isPaymentReference(reference), reference);
      drawn.add(reference);
    }
    assert.equal(drawn.size, 2_000);
  });

  it('fails its check after any one character is mistyped or any two characters are swapped', () => {
    for (let n = 0; n < 20; n++) {
      const reference = newPaymentReference();
      const body = reference.slice(2);
      for (let i = 0; i < body.length; i++) {
        for (const other of PAYMENT_REFERENCE_ALPHABET) {
          if (other === body[i]) continue;
          const typo = `SK${body.slice(0, i)}${other}${body.slice(i + 1)}`;
          assert.equal(isPaymentReference(typo), false, `${reference} -> ${typo}`);
          assert.deepEqual(findPaymentReferences(`TRF ${typo}`), [], `${typo} is not found in a narration`);
        }
        for (let j = i + 1; j < body.length; j++) {
          if (body[i] === body[j]) continue;
          const chars = [...body];
          [chars[i], chars[j]] = [chars[j]!, chars[i]!];
          assert.equal(
            isPaymentReference(`SK${chars.join('')}`),
            false,
            `${reference}: positions ${i} and ${j} swapped`,
          );
        }
      }
    }
  });

  it('is found in a narration typed in lower case, with spaces or dashes, run into other words, or without its SK', () => {
    const reference = newPaymentReference();
    const body = reference.slice(2);
    for (const narration of [
      `TRF FROM KOFI MENSAH ${reference} SCHOOL FEES`,
      `mobile transfer ${reference.toLowerCase()}`,
      `sk ${body.slice(0, 4).toLowerCase()}-${body.slice(4).toLowerCase()} fees`,
      `S.K. ${body.split('').join(' ')}`,
      `FEES${reference}KOFI`,
      `IB TRF/${reference}/ACCRA`,
      `school fees ${body}`,
      // Words around a split reference are chosen so that no other word, or pair of adjacent words, is 8
      // characters long: such a pair passes the check character 1 time in 31 and would be a second candidate
      // (as it would be on a real statement; the importer keeps only stored references).
      `school fee ${body.slice(0, 4)} ${body.slice(4)} terms 2`,
    ]) {
      assert.deepEqual(findPaymentReferences(narration), [reference], narration);
      assert.equal(findPaymentReference(narration), reference, narration);
    }
    const second = newPaymentReference();
    assert.deepEqual(findPaymentReferences(`${reference} AND ${second}`), [reference, second]);
    assert.deepEqual(findPaymentReferences(`${reference} ${reference.toLowerCase()}`), [reference], 'each once');
    for (const narration of [
      '',
      'SALARY MARCH 2026',
      'TRF FROM KOFI',
      'SK',
      'SK12345678',
      'ASKED FOR REFUND 0244123456',
    ])
      assert.deepEqual(findPaymentReferences(narration), [], narration);
  });
});

// ---- the adapter ----

describe('the bank transfer adapter', () => {
  const settings = {
    bankCode: 'GCB',
    bankName: 'GCB Bank',
    branch: 'Accra Central',
    accountNumber: '1011130012345',
    accountName: 'Sika Collections Ltd',
  };
  const rail = createBankTransfer(settings);
  const attempt = (providerReference: string | null): AttemptForRail => ({
    reference: 'att_x',
    sessionId: 'cs_x',
    environment: 'live',
    rail: 'bank_transfer',
    amountMinor: 123_450,
    currency: 'GHS',
    network: null,
    phone: null,
    providerReference,
    payerEmail: null,
    returnUrl: 'http://sika.test/pay/cs_x',
  });

  it('is the bank_statement provider of bank transfers and draws a payment reference for each attempt', () => {
    assert.equal(rail.provider, 'bank_statement');
    assert.deepEqual(rail.serves, { rails: ['bank_transfer'] });
    const first = rail.reference!({ reference: 'att_1', rail: 'bank_transfer' });
    const second = rail.reference!({ reference: 'att_1', rail: 'bank_transfer' });
    assert.ok(isPaymentReference(first) && isPaymentReference(second));
    assert.notEqual(first, second);
  });

  it('initiate() answers pending with the collection account and the reference, status() stays pending, and there is no code or prompt', async () => {
    const reference = newPaymentReference();
    const initiated = await rail.initiate(attempt(reference));
    assert.equal(initiated.outcome, undefined);
    assert.equal(initiated.verificationRequired, false);
    assert.equal(initiated.rawStatus, 'AWAITING_TRANSFER');
    assert.equal(initiated.providerReference, undefined, 'ours was stored beforehand');
    const { note, ...rest } = initiated.instructions as Record<string, string>;
    assert.deepEqual(rest, {
      bank_name: 'GCB Bank',
      bank_code: 'GCB',
      branch: 'Accra Central',
      account_number: '1011130012345',
      account_name: 'Sika Collections Ltd',
      reference,
    });
    assert.match(note!, new RegExp(`GHS 1,234\\.50.*${reference}`));
    assert.deepEqual(await rail.status(attempt(reference)), { rawStatus: 'AWAITING_TRANSFER', outcome: 'pending' });
    await assert.rejects(rail.authorize(attempt(reference), '123456'), RailUnavailableError);
    await assert.rejects(rail.resend(attempt(reference)), RailUnavailableError);
    await assert.rejects(rail.initiate(attempt(null)), /no stored payment reference/);
  });
});

// ---- reading statements ----

describe('reading a statement CSV', () => {
  it('finds the header under a GCB-style title by its names, reads "1,234.50" as pesewas and leaves debits and balance rows out', () => {
    const csv = [
      'GCB BANK PLC',
      'Account:,1011130012345',
      '',
      'Trans. Date,Value Date,Narration,Debit (GHS),Credit (GHS),Balance (GHS)',
      '01/03/2026,01/03/2026,OPENING BALANCE,,,"10,000.00"',
      '02/03/2026,03/03/2026,"TRF SK22222222, KOFI",,"1,234.50","11,234.50"',
      '03/03/2026,03/03/2026,SMS CHARGES,1.50,,"11,233.00"',
      '04/03/2026,04/03/2026,INWARD TRANSFER,,"12,345,678.05","12,356,911.05"',
    ].join('\n');
    const parsed = parseStatementCsv(csv);
    assert.deepEqual(parsed.columns, {
      date: 'Value Date',
      description: 'Narration',
      credit: 'Credit (GHS)',
      debit: 'Debit (GHS)',
      balance: 'Balance (GHS)',
    });
    assert.equal(parsed.lines, 4);
    assert.equal(parsed.debits, 1);
    assert.equal(parsed.withoutAmount, 1);
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual(parsed.credits, [
      {
        line: 6,
        valueDate: '2026-03-03',
        amountMinor: 123_450,
        narration: 'TRF SK22222222, KOFI',
        bankReference: '',
        balanceMinor: 1_123_450,
      },
      {
        line: 8,
        valueDate: '2026-03-04',
        amountMinor: 1_234_567_805,
        narration: 'INWARD TRANSFER',
        bankReference: '',
        balanceMinor: 1_235_691_105,
      },
    ]);
  });

  it("knows the other banks' names: Posting Date / Narrative / Money In / Money Out, Transaction Date / Description / Deposits / Withdrawals / Reference, and a signed Amount with Dr/Cr", () => {
    const stanbic = parseStatementCsv(
      'Posting Date,Value Date,Narrative,Money Out,Money In,Running Balance\n12-Mar-2026,12-Mar-2026,TRANSFER SK33333333,,500.00,"1,500.00"\n',
    );
    assert.deepEqual(stanbic.columns, {
      date: 'Value Date',
      description: 'Narrative',
      credit: 'Money In',
      debit: 'Money Out',
      balance: 'Running Balance',
    });
    assert.deepEqual(
      stanbic.credits.map((c) => [c.valueDate, c.amountMinor, c.balanceMinor]),
      [['2026-03-12', 50_000, 150_000]],
    );

    const ecobank = parseStatementCsv(
      'TRANSACTION DATE;DESCRIPTION;REFERENCE;WITHDRAWALS;DEPOSITS;BALANCE\n2026-03-12;MOBILE TRANSFER;FT2607100123;;"2 500,00";\n2026-03-13;MOBILE TRANSFER;FT2607100124;;250.00;\n',
    );
    assert.deepEqual(ecobank.columns, {
      date: 'TRANSACTION DATE',
      description: 'DESCRIPTION',
      credit: 'DEPOSITS',
      debit: 'WITHDRAWALS',
      balance: 'BALANCE',
      reference: 'REFERENCE',
    });
    assert.deepEqual(
      ecobank.problems,
      [{ line: 2, message: 'credit "2 500,00" is not an amount' }],
      'semicolons separate, and a decimal comma is refused, not guessed',
    );
    assert.deepEqual(
      ecobank.credits.map((c) => [c.line, c.amountMinor, c.bankReference, c.balanceMinor]),
      [[3, 25_000, 'FT2607100124', null]],
    );

    const signed = parseStatementCsv(
      'Date,Details,Amount,Dr/Cr\n12/03/2026,SALARY,"3,000.00",DR\n12/03/2026,FEES SK44444444,750.5,CR\n13/03/2026,ODD,10.00,XX\n',
    );
    assert.deepEqual(signed.columns, { date: 'Date', description: 'Details', amount: 'Amount', type: 'Dr/Cr' });
    assert.equal(signed.debits, 1);
    assert.deepEqual(
      signed.credits.map((c) => c.amountMinor),
      [75_050],
    );
    assert.deepEqual(signed.problems, [{ line: 4, message: 'type "XX" is neither credit (CR) nor debit (DR)' }]);

    const plainSigned = parseStatementCsv(
      'Txn Date,Remarks,Transaction Amount\n12/03/2026,IN,100.00\n12/03/2026,OUT,-40.00\n12/03/2026,OUT,(5.00)\n',
    );
    assert.deepEqual([plainSigned.credits.length, plainSigned.debits], [1, 2]);
  });

  it('reports each bad row with its line number and reads the rest', () => {
    const csv = [
      'Date,Narration,Credit,Debit,Balance', // 1
      '02/03/2026,"GOOD ONE",100.00,,', // 2
      '31/02/2026,BAD DATE,100.00,,', // 3
      '03/03/2026,BAD AMOUNT,12.3.4,,', // 4
      '03/03/2026,TOO PRECISE,1.005,,', // 5
      '03/03/2026,BOTH SIDES,5.00,5.00,', // 6
      '03/03/2026,UNQUOTED COMMA,1,234.50,,10.00', // 7
      ',NO DATE,9.00,,', // 8
      '04/03/2026,"A NARRATION', // 9
      'OVER TWO LINES",7.00,,', // 10
      '05/03/2026,NEGATIVE CREDIT,-7.00,,', // 11
      '05/03/2026,"GOOD TWO",1234,,"1,234.00 CR"', // 12
      '06/03/2026,"NEVER CLOSED,5.00,,', // 13
      '07/03/2026,LOST,5.00,,', // 14
    ].join('\r\n');
    const parsed = parseStatementCsv(csv);
    assert.deepEqual(
      parsed.credits.map((c) => [c.line, c.narration, c.amountMinor]),
      [
        [2, 'GOOD ONE', 10_000],
        [9, 'A NARRATION OVER TWO LINES', 700],
        [12, 'GOOD TWO', 123_400],
      ],
    );
    assert.deepEqual(parsed.problems, [
      { line: 3, message: 'date "31/02/2026" is not a date (DD/MM/YYYY, YYYY-MM-DD or DD-MMM-YYYY)' },
      { line: 4, message: 'credit "12.3.4" is not an amount' },
      { line: 5, message: 'credit "1.005" has more than two decimal places' },
      { line: 6, message: 'has both a credit and a debit' },
      { line: 7, message: 'has 6 fields where the header has 5 (an amount with a thousands comma must be in quotes)' },
      { line: 8, message: 'a credit without a date' },
      { line: 11, message: 'has a negative credit (-7.00); a reversal is not a payment' },
      { line: 13, message: 'a quote opened on this line is never closed, so the rest of the file could not be read' },
    ]);
  });

  it('takes a column mapping by header name or by position, and refuses a file whose header it cannot find', () => {
    const csv = 'Txn Dt,Info,In,Out\n12/03/2026,FEES SK55555555,"1,000.00",\n';
    assert.throws(
      () => parseStatementCsv(csv),
      rejects('INVALID_ARGUMENT', /No header row found in the first 20 rows/),
    );
    const named = parseStatementCsv(csv, {
      columns: parseColumnMapping('date=txn dt, narration=Info,credit=In,debit=Out'),
    });
    assert.deepEqual(
      named.credits.map((c) => [c.valueDate, c.narration, c.amountMinor]),
      [['2026-03-12', 'FEES SK55555555', 100_000]],
    );
    const headerless = parseStatementCsv('STATEMENT\n12/03/2026,x,FEES,"1,000.00"\n13/03/2026,y,MORE,2.00\n', {
      columns: parseColumnMapping('date=1,description=3,credit=4'),
    });
    assert.deepEqual(
      headerless.credits.map((c) => [c.line, c.amountMinor]),
      [
        [2, 100_000],
        [3, 200],
      ],
    );
    assert.deepEqual(headerless.columns, { date: 'column 1', description: 'column 3', credit: 'column 4' });
    assert.throws(
      () => parseStatementCsv(csv, { columns: { date: 'Posting' } }),
      rejects('INVALID_ARGUMENT', /"Posting" \(date\)/),
    );
    assert.throws(
      () => parseColumnMapping('date=1,colour=2'),
      rejects('INVALID_ARGUMENT', /"colour", which is not a field/),
    );
    assert.throws(() => parseColumnMapping('date'), rejects('INVALID_ARGUMENT', /not field=column/));
    assert.throws(() => parseColumnMapping('date=1,date=2'), rejects('INVALID_ARGUMENT', /twice/));
    assert.throws(() => parseColumnMapping('credit=0'), rejects('INVALID_ARGUMENT', /numbered from 1/));
    assert.deepEqual(parseColumnMapping(''), {});
  });

  it('reads amounts without floating point and dates day first', () => {
    for (const [text, minor] of [
      ['1,234.50', 123_450],
      ['1234.5', 123_450],
      ['GHS 1,234.50', 123_450],
      ['GH₵1,234.50', 123_450],
      ['1 234.50', 123_450],
      ['0.10', 10],
      ['.5', 50],
      ['1,234.50 CR', 123_450],
      ['1,234.50 DR', -123_450],
      ['(1,234.50)', -123_450],
      ['1,234.50-', -123_450],
      ['1234.500', 123_450],
      ['9,999,999,999,999.99', 999_999_999_999_999],
      ['0.29', 29], // 0.29 * 100 is 28.999999999999996 in floating point
      ['1.15', 115],
    ] as const) {
      assert.deepEqual(parseAmountCell(text), { kind: 'amount', minor }, text);
    }
    for (const text of ['', '-', ' nil ']) assert.deepEqual(parseAmountCell(text), { kind: 'blank' }, text);
    for (const text of ['1,23', '12.3.4', 'abc', '1.234', '10,000,000,000,000.00', '1e5'])
      assert.equal(parseAmountCell(text).kind, 'bad', text);
    for (const [text, date] of [
      ['12/03/2026', '2026-03-12'],
      ['12-03-26', '2026-03-12'],
      ['12.03.2026', '2026-03-12'],
      ['2026-03-12', '2026-03-12'],
      ['2026-03-12T10:00:00Z', '2026-03-12'],
      ['12/03/2026 14:05', '2026-03-12'],
      ['12-Mar-2026', '2026-03-12'],
      ['12 March 2026', '2026-03-12'],
      ['Mar 12, 2026', '2026-03-12'],
      ['29/02/2028', '2028-02-29'],
    ] as const) {
      assert.equal(parseStatementDate(text), date, text);
    }
    for (const text of ['29/02/2026', '13/13/2026', '2026-02-30', 'yesterday', ''])
      assert.equal(parseStatementDate(text), null, text);
  });

  it('reads Windows-1252 and UTF-16 exports as well as UTF-8 with a byte order mark', () => {
    const text = 'Date,Narration,Credit\r\n12/03/2026,KÓFI SK66666666,5.00\r\n';
    const cp1252 = Buffer.from(text.replace('Ó', '\u0000'), 'latin1');
    cp1252[cp1252.indexOf(0)] = 0xd3; // Ó in Windows-1252: invalid as UTF-8
    assert.equal(parseStatementCsv(cp1252).credits[0]!.narration, 'KÓFI SK66666666');
    assert.equal(
      parseStatementCsv(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])).credits[0]!.narration,
      'KÓFI SK66666666',
    );
    assert.equal(parseStatementCsv(Buffer.from(`\uFEFF${text}`, 'utf8')).credits[0]!.narration, 'KÓFI SK66666666');
  });

  it('fingerprints identical credits of one file apart by their occurrence, and the same credits alike every time', () => {
    const credit: StatementCredit = {
      line: 2,
      valueDate: '2026-03-12',
      amountMinor: 500,
      narration: 'mobile  transfer',
      bankReference: '',
      balanceMinor: null,
    };
    const twice = fingerprintCredits('gcb', [credit, { ...credit, line: 3, narration: 'MOBILE TRANSFER' }]);
    assert.equal(new Set(twice).size, 2, 'two identical lines are two credits');
    assert.deepEqual(
      fingerprintCredits('GCB', [credit, { ...credit, line: 9 }]),
      twice,
      "the line number and the narration's case and spacing do not count",
    );
    assert.notDeepEqual(fingerprintCredits('ECO', [credit]), fingerprintCredits('GCB', [credit]), 'the bank counts');
    assert.notDeepEqual(
      fingerprintCredits('GCB', [{ ...credit, balanceMinor: 1 }]),
      fingerprintCredits('GCB', [credit]),
      'the balance counts',
    );
  });
});

// ---- on storage ----

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

// ---- the CLI ----

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/sika.mjs', ...args],
      { cwd: ROOT, env, timeout: CLI_TIMEOUT_MS },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe(`sika statements import (${storageKind})`, () => {
  let dataDir: string | null = null;
  let workDir: string;
  let env: NodeJS.ProcessEnv;

  before(() => {
    dataDir = process.env.DATABASE_URL ? null : mkdtempSync(join(tmpdir(), 'sika-statements-cli-'));
    workDir = mkdtempSync(join(tmpdir(), 'sika-statements-files-'));
    env = {
      ...process.env,
      LOG_LEVEL: 'silent',
      ...BANK_ENV,
      ...(dataDir ? { DATA_DIR: dataDir, DATABASE_URL: '' } : {}),
    };
  });
  after(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  });

  /** The app on the CLI's storage, open only while fn runs (one process at a time holds an embedded data dir). */
  async function withApp<T>(fn: (t: TestContext) => Promise<T>): Promise<T> {
    const db = await openDb({ databaseUrl: process.env.DATABASE_URL || null, dataDir });
    const config = loadConfig({
      ...process.env,
      ...BANK_ENV,
      LOG_LEVEL: 'silent',
      WORKERS: 'off',
      BASE_URL: 'http://sika.test',
      REDIS_URL: '',
    });
    const app = await buildApp({ config, db, logger: false });
    await app.ready();
    const t = { app, db, config } as TestContext;
    t.merchant = () =>
      createMerchant(db, { name: 'CLI Statements Ltd', email: `cli-${randomUUID()}@example.com`, webhookUrl: null });
    try {
      return await fn(t);
    } finally {
      await app.close();
      await db.close();
    }
  }

  it('imports a statement file and prints the counts; the same file again is refused, and with --force-reason all duplicates; --json gives the result', async () => {
    const transfer = await withApp(async (t) => liveTransfer(t, await t.merchant(), 20_000));
    const file = join(workDir, 'gcb-march.csv');
    writeFileSync(
      file,
      gcbStatement([
        { narration: `TRF ${transfer.reference}`, credit: '200.00' },
        { narration: `NO REFERENCE ${uniqueWords()}`, credit: '3.00' },
        { narration: 'CHARGES', debit: '1.00' },
        { narration: 'BROKEN', credit: 'abc' },
      ]),
    );
    const first = await runCli(['statements', 'import', file, '--bank', 'GCB'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^imported gcb-march\.csv \(GCB\): 4 lines, 2 credits, 1 debit left out$/m);
    assert.match(first.stdout, /^ {2}matched +1$/m);
    assert.match(first.stdout, /^ {2}amount mismatch +0$/m);
    assert.match(first.stdout, /^ {2}unmatched +1 +\(in the unmatched queue at \/ops\/statements\)$/m);
    assert.match(first.stdout, /^ {2}duplicates +0$/m);
    assert.match(first.stdout, /^ {2}errors +1$/m);
    assert.match(first.stdout, /^line 9: credit "abc" is not an amount$/m);
    await withApp(async (t) => {
      assert.equal((await attemptOf(t, transfer.attemptId)).status, 'paid');
      assert.equal(await sessionStatus(t, transfer.sessionId), 'success');
      const [audited] = await t.db.query<{ actor_id: string }>(
        "SELECT actor_id FROM audit_log WHERE action = 'statement.import' ORDER BY id DESC LIMIT 1",
      );
      assert.equal(audited!.actor_id, CLI_USER_AT_HOST, 'the CLI user@host');
    });
    const refused = await runCli(['statements', 'import', file, '--bank', 'gcb', '--json'], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /This file was imported already: gcb-march\.csv for GCB on /);
    const again = await runCli(
      ['statements', 'import', file, '--bank', 'gcb', '--json', '--force-reason', 'The bank sent it twice'],
      env,
    );
    assert.equal(again.code, 0, again.stderr);
    const result = JSON.parse(again.stdout) as ImportResult;
    assert.deepEqual(
      [result.credits, result.duplicates, result.matched, result.unmatched, result.errors],
      [2, 2, 0, 0, 1],
    );
  });

  it('takes --columns for headers it does not know', async () => {
    const transfer = await withApp(async (t) => liveTransfer(t, await t.merchant(), 21_000));
    const file = join(workDir, 'odd.csv');
    writeFileSync(file, `When,What,Got\n12/03/2026,${transfer.reference} ${uniqueWords()},210.00\n`);
    const refused = await runCli(['statements', 'import', file, '--bank', 'GCB'], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /No header row found/);
    const mapped = await runCli(
      ['statements', 'import', file, '--bank', 'GCB', '--columns', 'date=When,description=What,credit=Got'],
      env,
    );
    assert.equal(mapped.code, 0, mapped.stderr);
    assert.match(mapped.stdout, /^ {2}matched +1$/m);
  });

  it('--help explains the command; a missing --bank or file is a usage error; an unreadable file or unknown bank is refused', async () => {
    for (const args of [['statements', '--help'], ['statements', 'import', '--help'], ['statements']]) {
      const help = await runCli(args, env);
      assert.equal(help.code, 0, help.stderr);
      assert.match(
        help.stdout,
        /usage: sika statements import FILE --bank CODE \[--columns MAPPING\] \[--force-reason TEXT\] \[--json\]/,
      );
      assert.match(help.stdout, /date=Txn Date,credit=Amount In,description=Details/);
    }
    const general = await runCli(['--help'], env);
    assert.match(general.stdout, /statements import FILE --bank CODE/);
    const noBank = await runCli(['statements', 'import', join(workDir, 'x.csv')], env);
    assert.equal(noBank.code, 2);
    assert.match(noBank.stderr, /needs --bank CODE/);
    const noFile = await runCli(['statements', 'import', '--bank', 'GCB'], env);
    assert.equal(noFile.code, 2);
    const missing = await runCli(['statements', 'import', join(workDir, 'missing.csv'), '--bank', 'GCB'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read .*missing\.csv \(ENOENT\)/);
    const file = join(workDir, 'any.csv');
    writeFileSync(file, 'Date,Narration,Credit\n12/03/2026,X,1.00\n');
    const unknown = await runCli(['statements', 'import', file, '--bank', 'NOPE'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /"NOPE" is not the code of a bank/);
  });
});
