// The books' pure rules (issue 17): GHS decimals by digits, formula neutralising, Accra days and their
// bounds, balance transaction ids, and the summary chain's own assertion.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  balanceTransactionId,
  chainPeriods,
  dayOf,
  dayStart,
  entryIdOf,
  EXPORT_RANGE_DAYS_MAX,
  parseDayRange,
  typeOfKind,
} from '../../src/books/model.ts';
import { ghsDecimal, neutraliseFormula } from '../../src/lib/csv-columns.ts';

describe('books model', () => {
  it('writes pesewas as GHS with two decimals, signs and large values exact', () => {
    const cases: [number, string][] = [
      [0, '0.00'],
      [5, '0.05'],
      [-5, '-0.05'],
      [100, '1.00'],
      [12_345, '123.45'],
      [-1_000_001, '-10000.01'],
      [Number.MAX_SAFE_INTEGER, '90071992547409.91'],
    ];
    for (const [minor, text] of cases) assert.equal(ghsDecimal(minor), text, String(minor));
    assert.throws(() => ghsDecimal(1.5));
  });

  it('neutralises text a spreadsheet would run, and only that', () => {
    for (const text of ['=1+1', '+233', '-2', '@SUM(A1)', '\t=x', '\r=x'])
      assert.equal(neutraliseFormula(text), `'${text}`);
    for (const text of ['Ama', '', '1=1', "'=x"]) assert.equal(neutraliseFormula(text), text);
  });

  it('Accra days are UTC days (GMT all year); a range has its days and bounds; bad ranges are INVALID_ARGUMENT', () => {
    assert.equal(dayStart('2026-03-29').toISOString(), '2026-03-29T00:00:00.000Z');
    assert.equal(dayOf(new Date('2026-12-31T23:59:59.999Z')), '2026-12-31');
    const range = parseDayRange('2028-02-28', '2028-03-01');
    assert.deepEqual(range.days, ['2028-02-28', '2028-02-29', '2028-03-01']);
    assert.deepEqual(
      range.bounds.map((d) => d.toISOString()),
      ['2028-02-28T00:00:00.000Z', '2028-02-29T00:00:00.000Z', '2028-03-01T00:00:00.000Z', '2028-03-02T00:00:00.000Z'],
    );
    assert.equal(parseDayRange('2026-01-01', '2026-12-31').days.length, 365);
    assert.equal(parseDayRange('2028-01-01', '2028-12-31').days.length, EXPORT_RANGE_DAYS_MAX);
    for (const [from, to] of [
      [undefined, '2026-01-01'],
      ['2026-01-01', undefined],
      ['2027-02-29', '2027-03-01'],
      ['2026-1-01', '2026-01-02'],
      ['2026-01-02', '2026-01-01'],
      ['2026-01-01', '2027-01-02'],
    ]) {
      assert.throws(
        () => parseDayRange(from, to),
        (error: { code?: string }) => error.code === 'INVALID_ARGUMENT',
        `${from}..${to}`,
      );
    }
  });

  it('a balance transaction id carries its entry id and back; anything else is no id', () => {
    const entryId = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
    const id = balanceTransactionId(entryId);
    assert.equal(id, 'txn_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b');
    assert.equal(entryIdOf(id), entryId);
    for (const bad of ['txn_', 'txn_0190A1B2C3D47E5F8A9B0C1D2E3F4A5B', `${id}0`, 'cs_0190a1b2c3d47e5f8a9b0c1d2e3f4a5b'])
      assert.equal(entryIdOf(bad), null, bad);
  });

  it('chains periods from the opening balance and itemises each by type', () => {
    const periods = chainPeriods(1_000, 3, [
      { period: 1, kind: 'payment_credit', count: 2, net_minor: 9_500, fee_minor: 500 },
      { period: 1, kind: 'payout_hold', count: 1, net_minor: -2_100, fee_minor: 100 },
      { period: 3, kind: 'payout_void', count: 1, net_minor: 2_100, fee_minor: -100 },
      { period: 3, kind: 'refund_hold', count: 1, net_minor: -300, fee_minor: 0 },
    ]);
    assert.deepEqual(
      periods.map((p) => [p.opening_balance_minor, p.closing_balance_minor]),
      [
        [1_000, 8_400],
        [8_400, 8_400],
        [8_400, 10_200],
      ],
    );
    assert.deepEqual(
      [periods[0]!.payments_minor, periods[0]!.payouts_minor, periods[0]!.fees_minor, periods[0]!.transactions],
      [10_000, -2_000, 600, 3],
    );
    assert.deepEqual(
      [periods[2]!.payout_releases_minor, periods[2]!.refunds_minor, periods[2]!.fees_minor],
      [2_000, -300, -100],
    );
    // payout_post moves held money only: a row of it is a bug, refused loudly.
    assert.throws(
      () => chainPeriods(0, 1, [{ period: 1, kind: 'payout_post', count: 1, net_minor: 1, fee_minor: 0 }]),
      /books assertion failed/,
    );
  });

  it('issue 34: a reserve held or released is a row of its own type and summary column; a clearing is never a row', () => {
    assert.equal(typeOfKind('reserve_hold'), 'reserve');
    assert.equal(typeOfKind('reserve_release'), 'reserve_release');
    // payment_cleared moves money from pending to available, both in the balance: no movement.
    assert.throws(() => typeOfKind('payment_cleared'), /books assertion failed/);
    const [day] = chainPeriods(0, 1, [
      { period: 1, kind: 'payment_credit', count: 1, net_minor: 10_000, fee_minor: 0 },
      { period: 1, kind: 'reserve_hold', count: 1, net_minor: -1_000, fee_minor: 0 },
      { period: 1, kind: 'reserve_release', count: 1, net_minor: 400, fee_minor: 0 },
    ]);
    assert.deepEqual(
      [day!.reserves_minor, day!.reserve_releases_minor, day!.net_minor, day!.closing_balance_minor],
      [-1_000, 400, 9_400, 9_400],
    );
  });
});
