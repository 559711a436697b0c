// Bank transfers' day (docs/bank-statements.md): the credit lines of the collection account's statements
// with this value date against Sika's Live bank transfer attempts paid that day. A matched line is listed
// with its attempt; an unmatched or mismatched line is a difference, and so is an attempt paid that day
// that no matched line paid (an operator's approval, for one).
import type { Queryable } from '../db/index.ts';
import { amountText, totalsOf, type AccraDay, type Difference, type Matched, type Reconciliation, type SikaRecord, type StatementLine } from './model.ts';
import { paidRecordsOfDay, recordsByReferences } from './records.ts';
import { matchedLinesOfAttempts, RECONCILIATION_ROWS_MAX, statementLinesOfDay, type DayLineRow } from './store.ts';

/** The provider name of Live bank transfer attempts (src/rails/bank-transfer/). */
const PROVIDER = 'bank_statement';

const lineOf = (row: DayLineRow): StatementLine => ({
  id: row.id,
  bankCode: row.bank_code,
  lineNumber: row.line_number,
  valueDate: row.value_date,
  amountMinor: row.amount_minor,
  narration: row.narration,
  status: row.status,
  paymentReference: row.payment_reference,
  attemptId: row.attempt_id,
  note: row.resolution_note ?? row.reason,
});

export async function reconcileBankTransfers(db: Queryable, day: AccraDay): Promise<Reconciliation> {
  const [{ records, truncated: attemptsTruncated }, lineRows] = await Promise.all([paidRecordsOfDay(db, PROVIDER, day, { payouts: false }), statementLinesOfDay(db, day.day)]);
  const lines = lineRows.slice(0, RECONCILIATION_ROWS_MAX).map(lineOf);
  const truncated = attemptsTruncated || lineRows.length > RECONCILIATION_ROWS_MAX;

  // The attempts the day's matched lines paid (they may have been recorded paid on another day).
  const ofDay = new Map(records.map((record) => [record.id, record]));
  const lineReferences = lines.flatMap((line) => (line.status === 'matched' && line.attemptId && !ofDay.has(line.attemptId) && line.paymentReference ? [line.paymentReference] : []));
  const attemptsOfLines = new Map<string, SikaRecord>(records.map((record) => [record.id, record]));
  for (const record of await recordsByReferences(db, PROVIDER, { collections: lineReferences, payouts: [] })) attemptsOfLines.set(record.id, record);

  const matched: Matched[] = [];
  const differences: Difference[] = [];
  for (const line of lines) {
    const record = line.attemptId ? (attemptsOfLines.get(line.attemptId) ?? null) : null;
    const reference = line.paymentReference ?? line.narration;
    if (line.status === 'matched' && record) matched.push({ sika: record, provider: null, lineId: line.id });
    else if (line.status === 'unmatched') differences.push({ kind: 'missing_in_sika', reference, sika: null, provider: null, lineId: line.id, note: `A credit of line ${line.lineNumber} paid no payment: ${line.note}` });
    else if (line.status === 'amount_mismatch') differences.push({ kind: 'amount_differs', reference, sika: record, provider: null, lineId: line.id, note: `The credit is ${amountText(line.amountMinor, 'GHS')}; the payment asked for ${record ? amountText(record.amountMinor, record.currency) : 'another amount'}` });
  }

  const paidByLine = new Set((await matchedLinesOfAttempts(db, records.map((record) => record.id))).map((row) => row.attempt_id));
  for (const record of records) {
    if (!paidByLine.has(record.id)) differences.push({ kind: 'missing_at_provider', reference: record.reference, sika: record, provider: null, note: 'Paid in Sika, but no matched statement line paid it' });
  }

  const credits = lines.map((line) => ({ kind: 'collection' as const, amountMinor: line.amountMinor }));
  return { provider: 'bank_transfer', day, sika: records, sikaTotals: totalsOf(records), truncated, side: { state: 'statement', totals: totalsOf(credits), lines }, matched, differences };
}
