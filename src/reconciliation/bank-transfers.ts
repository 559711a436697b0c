// Bank transfers' day (docs/bank-statements.md): the credit lines of the collection account's statements
// with this value date against Sika's Live bank transfer attempts paid that day. A matched line is listed
// with its attempt; an unmatched or mismatched line is a difference, and so is an attempt paid that day
// that no matched line paid (an operator's approval, for one).
import type { Queryable } from '../db/index.ts';
import { collectionAccountLabel, type CollectionAccount } from '../rails/bank-transfer/accounts.ts';
import {
  amountText,
  oneRowPerRecord,
  totalsOf,
  type AccraDay,
  type Difference,
  type Matched,
  type Reconciliation,
  type SikaRecord,
  type StatementLine,
} from './model.ts';
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

/**
 * The day's statement lines of the collection accounts (lines of voided imports are never read; lines kept
 * under another bank's code are counted apart and left out) against the Live bank transfers paid that day.
 */
export async function reconcileBankTransfers(
  db: Queryable,
  day: AccraDay,
  accounts: readonly CollectionAccount[],
): Promise<Reconciliation> {
  const [{ records, truncated: attemptsTruncated }, allRows] = await Promise.all([
    paidRecordsOfDay(db, PROVIDER, day, { payouts: false }),
    statementLinesOfDay(db, day.day),
  ]);
  const codes = new Set(accounts.map((account) => account.bankCode));
  const lineRows = allRows.filter((row) => codes.has(row.bank_code.toUpperCase()));
  const lines = lineRows.slice(0, RECONCILIATION_ROWS_MAX).map(lineOf);
  const truncated = attemptsTruncated || lineRows.length > RECONCILIATION_ROWS_MAX;

  // The attempts the day's matched lines paid (they may have been recorded paid on another day).
  const ofDay = new Map(records.map((record) => [record.id, record]));
  const lineReferences = lines.flatMap((line) =>
    line.status === 'matched' && line.attemptId && !ofDay.has(line.attemptId) && line.paymentReference
      ? [line.paymentReference]
      : [],
  );
  const attemptsOfLines = new Map<string, SikaRecord>(records.map((record) => [record.id, record]));
  for (const record of await recordsByReferences(db, PROVIDER, { collections: lineReferences, payouts: [] }))
    attemptsOfLines.set(record.id, record);

  const matched: Matched[] = [];
  const differences: Difference[] = [];
  for (const line of lines) {
    const record = line.attemptId ? (attemptsOfLines.get(line.attemptId) ?? null) : null;
    const reference = line.paymentReference ?? line.narration;
    if (line.status === 'matched' && record) matched.push({ sika: record, provider: null, lineId: line.id });
    else if (line.status === 'unmatched')
      differences.push({
        kind: 'missing_in_sika',
        reference,
        sika: null,
        provider: null,
        lineId: line.id,
        note: `A credit of line ${line.lineNumber} paid no payment: ${line.note}`,
      });
    else if (line.status === 'amount_mismatch')
      differences.push({
        kind: 'amount_differs',
        reference,
        sika: record,
        provider: null,
        lineId: line.id,
        note: `The credit is ${amountText(line.amountMinor, 'GHS')}; the payment asked for ${record ? amountText(record.amountMinor, record.currency) : 'another amount'}`,
      });
  }

  const paidByLine = new Set(
    (
      await matchedLinesOfAttempts(
        db,
        records.map((record) => record.id),
      )
    ).map((row) => row.attempt_id),
  );
  // A payment a mismatched line of the day names, paid in Sika without a matched line (approved under
  // Review): one difference, on the line's row, not a second row for the payment.
  const mismatchRows = new Map(
    differences.flatMap((d) =>
      d.kind === 'amount_differs' && d.lineId
        ? [[lines.find((line) => line.id === d.lineId)?.attemptId ?? '', d] as const]
        : [],
    ),
  );
  for (const record of records) {
    if (paidByLine.has(record.id)) continue;
    const onLine = mismatchRows.get(record.id);
    if (onLine) {
      onLine.sika ??= record;
      onLine.note = `${onLine.note}; Sika recorded the payment ${record.status} with no matched statement line`;
      continue;
    }
    differences.push({
      kind: 'missing_at_provider',
      reference: record.reference,
      sika: record,
      provider: null,
      note: 'Paid in Sika, but no matched statement line paid it',
    });
  }

  const credits = lines.map((line) => ({ kind: 'collection' as const, amountMinor: line.amountMinor }));
  const perAccount = accounts.map((account) => {
    const own = lines.filter((line) => line.bankCode.toUpperCase() === account.bankCode);
    return {
      bankCode: account.bankCode,
      label: collectionAccountLabel(account),
      totals: { count: own.length, amountMinor: own.reduce((sum, line) => sum + line.amountMinor, 0) },
    };
  });
  return {
    provider: 'bank_transfer',
    day,
    sika: records,
    sikaTotals: totalsOf(records),
    truncated,
    side: {
      state: 'statement',
      totals: totalsOf(credits),
      accounts: perAccount,
      lines,
      otherAccountLines: allRows.length - lineRows.length,
    },
    matched,
    differences: oneRowPerRecord(differences),
  };
}
