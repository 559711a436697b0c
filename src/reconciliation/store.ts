// The daily reconciliation's SQL: Sika's Live attempts and payouts of a provider and a time range, the
// same by provider reference, and the bank statement lines of a value date. Reads only.
import type { Queryable } from '../db/index.ts';

/** Records read per side and day at most; a busier day is reported as cut short on the page. */
export const RECONCILIATION_ROWS_MAX = 5_000;
/** References looked up in one statement. */
const LOOKUP_BATCH_MAX = 500;

export interface AttemptRecordRow {
  id: string;
  merchant_id: string;
  merchant_name: string;
  provider_reference: string;
  status: string;
  raw_status: string;
  status_checks: number;
  amount_charged_minor: number;
  currency: string;
  finalized_at: Date | null;
  updated_at: Date;
}

export interface PayoutRecordRow {
  id: string;
  merchant_id: string;
  merchant_name: string;
  provider_reference: string;
  status: string;
  status_checks: number;
  amount_minor: number;
  currency: string;
  paid_at: Date | null;
  updated_at: Date;
}

const ATTEMPT_COLUMNS = `a.id, a.merchant_id, m.name AS merchant_name, a.provider_reference, a.status, a.raw_status, a.status_checks,
  a.amount_charged_minor, a.currency, a.finalized_at, a.updated_at`;
const PAYOUT_COLUMNS = `p.id, p.merchant_id, m.name AS merchant_name, p.provider_reference, p.status, p.status_checks, p.amount_minor, p.currency, p.paid_at, p.updated_at`;
/** Each side's records with their merchant's name: the SELECT, and the alias its table is read under. */
const ATTEMPTS = {
  select: `SELECT ${ATTEMPT_COLUMNS} FROM payment_attempts a JOIN merchants m ON m.id = a.merchant_id`,
  alias: 'a',
} as const;
const PAYOUTS = {
  select: `SELECT ${PAYOUT_COLUMNS} FROM payouts p JOIN merchants m ON m.id = p.merchant_id`,
  alias: 'p',
} as const;

/** Live attempts of a provider paid in [start, end), by when Sika recorded them final. */
export const paidAttemptsBetween = (db: Queryable, provider: string, start: Date, end: Date) =>
  db.query<AttemptRecordRow>(
    `${ATTEMPTS.select}
      WHERE a.environment = 'live' AND a.provider = $1 AND a.status = 'paid' AND a.finalized_at >= $2 AND a.finalized_at < $3
      ORDER BY a.finalized_at, a.id LIMIT $4`,
    [provider, start, end, RECONCILIATION_ROWS_MAX + 1],
  );

/** Live payouts of a provider paid in [start, end) (returned ones too: they were paid that day). */
export const paidPayoutsBetween = (db: Queryable, provider: string, start: Date, end: Date) =>
  db.query<PayoutRecordRow>(
    `${PAYOUTS.select}
      WHERE p.environment = 'live' AND p.provider = $1 AND p.status IN ('paid', 'returned') AND p.paid_at >= $2 AND p.paid_at < $3
      ORDER BY p.paid_at, p.id LIMIT $4`,
    [provider, start, end, RECONCILIATION_ROWS_MAX + 1],
  );

async function inBatches<Row>(references: readonly string[], run: (batch: string[]) => Promise<Row[]>): Promise<Row[]> {
  const out: Row[] = [];
  for (let i = 0; i < references.length; i += LOOKUP_BATCH_MAX)
    out.push(...(await run(references.slice(i, i + LOOKUP_BATCH_MAX))));
  return out;
}

/** Live records of one side of a provider by our references with it, whatever their status or day. */
const liveByReferences = <Row>(
  db: Queryable,
  side: typeof ATTEMPTS | typeof PAYOUTS,
  provider: string,
  references: readonly string[],
) =>
  inBatches(references, (batch) =>
    db.query<Row>(
      `${side.select}
        WHERE ${side.alias}.environment = 'live' AND ${side.alias}.provider = $1 AND ${side.alias}.provider_reference = ANY($2::text[])`,
      [provider, batch],
    ),
  );

/** Live attempts of a provider by our references with it, whatever their status or day. */
export const attemptsByReferences = (db: Queryable, provider: string, references: readonly string[]) =>
  liveByReferences<AttemptRecordRow>(db, ATTEMPTS, provider, references);

/** Live payouts of a provider by our references with it, whatever their status or day. */
export const payoutsByReferences = (db: Queryable, provider: string, references: readonly string[]) =>
  liveByReferences<PayoutRecordRow>(db, PAYOUTS, provider, references);

export interface DayLineRow {
  id: string;
  bank_code: string;
  line_number: number;
  value_date: string;
  amount_minor: number;
  narration: string;
  status: string;
  payment_reference: string | null;
  attempt_id: string | null;
  reason: string;
  resolution_note: string | null;
  attempt_status: string | null;
  attempt_amount_minor: number | null;
}

/** The credit lines of statements with this value date, those of voided imports left out (every account's: the caller keeps the collection accounts'). */
export const statementLinesOfDay = (db: Queryable, day: string) =>
  db.query<DayLineRow>(
    `SELECT l.id::text AS id, l.bank_code, l.line_number, to_char(l.value_date, 'YYYY-MM-DD') AS value_date, l.amount_minor, l.narration, l.status,
            l.payment_reference, l.attempt_id, l.reason, l.resolution_note, a.status AS attempt_status, a.amount_charged_minor AS attempt_amount_minor
       FROM statement_lines l LEFT JOIN payment_attempts a ON a.id = l.attempt_id
      WHERE l.value_date = $1::date AND l.status <> 'voided' ORDER BY l.created_at, l.line_number LIMIT $2`,
    [day, RECONCILIATION_ROWS_MAX + 1],
  );

/** Of these attempts, the ones a matched statement line paid, with that line's id and value date. */
export const matchedLinesOfAttempts = (db: Queryable, attemptIds: readonly string[]) =>
  inBatches(attemptIds, (batch) =>
    db.query<{ attempt_id: string; line_id: string; value_date: string }>(
      `SELECT attempt_id, id::text AS line_id, to_char(value_date, 'YYYY-MM-DD') AS value_date FROM statement_lines
        WHERE status = 'matched' AND attempt_id = ANY($1::text[])`,
      [batch],
    ),
  );
