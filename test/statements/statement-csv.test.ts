// Reading bank statement CSVs, pure (issue 16, docs/bank-statements.md): header aliases, thousands separators,
// column mappings, bad rows with their line numbers, encodings, and the fingerprints of identical credits.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAmountCell, parseStatementDate } from '../../src/statements/cells.ts';
import { parseColumnMapping, parseStatementCsv } from '../../src/statements/csv.ts';
import { fingerprintCredits, type StatementCredit } from '../../src/statements/model.ts';
import { rejects } from '../support/bank-statements.ts';

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
