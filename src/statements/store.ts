// The SQL of bank statement imports: imports, their credit lines (unique by fingerprint), the Live bank
// transfer attempts a line's payment reference names, and the operators' lists.
import type { Queryable } from '../db/index.ts';
import type { Transition } from '../lib/state-machine.ts';
import {
  statementLineMachine,
  type ImportCounts,
  type StatementImportRow,
  type StatementLineRow,
  type StatementLineStatus,
  type StatementProblem,
} from './model.ts';

/** The provider name of Live bank transfer attempts (src/rails/bank-transfer/adapter.ts). */
const BANK_STATEMENT_PROVIDER = 'bank_statement';

const IMPORT_COLUMNS = `id, bank_code, file_name, file_sha256, imported_by, lines, credits, matched, amount_mismatch, unmatched, duplicates,
  errors, problems, forced_reason, voided_at, voided_by, void_reason, finished_at, created_at`;
const LINE_FIELDS = [
  'id',
  'import_id',
  'bank_code',
  'line_number',
  'value_date',
  'amount_minor',
  'narration',
  'bank_reference',
  'balance_minor',
  'status',
  'payment_reference',
  'attempt_id',
  'reason',
  'resolution_note',
  'resolved_by',
  'resolved_at',
  'created_at',
  'updated_at',
];
/** A line's columns, of the table aliased `alias` when given (value_date as YYYY-MM-DD text, not a local-time Date). */
const lineColumns = (alias = '') =>
  LINE_FIELDS.map((field) =>
    field === 'value_date' ? `${alias}value_date::text AS value_date` : `${alias}${field}`,
  ).join(', ');
const LINE_COLUMNS = lineColumns();

/** Fingerprints are looked up this many at a time (one statement parameter each). */
const FINGERPRINT_LOOKUP_BATCH = 1_000;

export interface BankCodeRow {
  code: string;
  name: string;
  active: boolean;
}

export async function findBankByCode(db: Queryable, code: string): Promise<BankCodeRow | null> {
  const rows = await db.query<BankCodeRow>('SELECT code, name, active FROM banks WHERE code = $1', [code]);
  return rows[0] ?? null;
}

/** Every bank with its code, active ones first (a statement may come from an account at any of them). */
export const listBanks = (db: Queryable) =>
  db.query<BankCodeRow>('SELECT code, name, active FROM banks ORDER BY active DESC, name');

/**
 * Serialises imports of one file (by its sha256) until the transaction ends, so two uploads of the same
 * file at once cannot both pass the "already imported" check.
 */
export const lockFileHash = (tx: Queryable, fileSha256: string) =>
  tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`statement_file:${fileSha256}`]);

/** The imports of a file with this content hash that stand (not voided), the latest first. */
export const standingImportsOfFile = (db: Queryable, fileSha256: string) =>
  db.query<StatementImportRow>(
    `SELECT ${IMPORT_COLUMNS} FROM statement_imports WHERE file_sha256 = $1 AND voided_at IS NULL ORDER BY created_at DESC`,
    [fileSha256],
  );

export async function insertImport(
  tx: Queryable,
  i: { bankCode: string; fileName: string; fileSha256: string; importedBy: string; forcedReason: string | null },
): Promise<string> {
  const rows = await tx.query<{ id: string }>(
    'INSERT INTO statement_imports (bank_code, file_name, file_sha256, imported_by, forced_reason) VALUES ($1, $2, $3, $4, $5) RETURNING id',
    [i.bankCode, i.fileName, i.fileSha256, i.importedBy, i.forcedReason],
  );
  return rows[0]!.id;
}

export async function lockImport(tx: Queryable, id: string): Promise<StatementImportRow | null> {
  const rows = await tx.query<StatementImportRow>(
    `SELECT ${IMPORT_COLUMNS} FROM statement_imports WHERE id::text = $1 FOR UPDATE`,
    [id],
  );
  return rows[0] ?? null;
}

/** The lines of an import, locked, in file order. */
export const lockImportLines = (tx: Queryable, importId: string) =>
  tx.query<StatementLineRow>(
    `SELECT ${LINE_COLUMNS} FROM statement_lines WHERE import_id = $1 ORDER BY line_number FOR UPDATE`,
    [importId],
  );

/** A line moves (through its table) with no other change: an unmatched line voided with its import. */
export async function moveLine(tx: Queryable, id: string, move: Transition<StatementLineStatus>): Promise<void> {
  await tx.query('UPDATE statement_lines SET status = $2, updated_at = now() WHERE id = $1', [
    id,
    statementLineMachine.check(move).to,
  ]);
}

export async function markImportVoided(
  tx: Queryable,
  id: string,
  v: { voidedBy: string; reason: string },
): Promise<StatementImportRow> {
  const rows = await tx.query<StatementImportRow>(
    `UPDATE statement_imports SET voided_at = now(), voided_by = $2, void_reason = $3 WHERE id = $1 RETURNING ${IMPORT_COLUMNS}`,
    [id, v.voidedBy, v.reason],
  );
  return rows[0]!;
}

export async function finishImport(
  tx: Queryable,
  id: string,
  counts: ImportCounts,
  problems: readonly StatementProblem[],
): Promise<StatementImportRow> {
  const rows = await tx.query<StatementImportRow>(
    `UPDATE statement_imports SET lines = $2, credits = $3, matched = $4, amount_mismatch = $5, unmatched = $6, duplicates = $7, errors = $8,
            problems = $9::jsonb, finished_at = now()
      WHERE id = $1 RETURNING ${IMPORT_COLUMNS}`,
    [
      id,
      counts.lines,
      counts.credits,
      counts.matched,
      counts.amount_mismatch,
      counts.unmatched,
      counts.duplicates,
      counts.errors,
      JSON.stringify(problems),
    ],
  );
  return rows[0]!;
}

/** The fingerprints among these that are stored already (lines of an earlier import that stand, not voided). */
export async function storedFingerprints(db: Queryable, fingerprints: readonly string[]): Promise<Set<string>> {
  const stored = new Set<string>();
  for (let at = 0; at < fingerprints.length; at += FINGERPRINT_LOOKUP_BATCH) {
    const batch = fingerprints.slice(at, at + FINGERPRINT_LOOKUP_BATCH);
    const rows = await db.query<{ fingerprint: string }>(
      `SELECT fingerprint FROM statement_lines WHERE fingerprint = ANY($1::text[]) AND status <> 'voided'`,
      [batch],
    );
    for (const row of rows) stored.add(row.fingerprint);
  }
  return stored;
}

const LINE_INITIAL = statementLineMachine.initialStatus('unmatched');

/**
 * Stores a credit line, unmatched, unless a line with its fingerprint is stored already (then null): the
 * unique fingerprint also makes a concurrent import of the same line wait here and then add nothing.
 */
export async function insertLine(
  tx: Queryable,
  l: {
    importId: string;
    bankCode: string;
    fingerprint: string;
    lineNumber: number;
    valueDate: string;
    amountMinor: number;
    narration: string;
    bankReference: string;
    balanceMinor: number | null;
  },
): Promise<StatementLineRow | null> {
  const rows = await tx.query<StatementLineRow>(
    `INSERT INTO statement_lines (import_id, bank_code, fingerprint, line_number, value_date, amount_minor, narration, bank_reference, balance_minor, status)
     VALUES ($1, $2, $3, $4, $5::date, $6, $7, $8, $9, '${LINE_INITIAL}')
     ON CONFLICT (fingerprint) WHERE status <> 'voided' DO NOTHING
     RETURNING ${LINE_COLUMNS}`,
    [
      l.importId,
      l.bankCode,
      l.fingerprint,
      l.lineNumber,
      l.valueDate,
      l.amountMinor,
      l.narration,
      l.bankReference,
      l.balanceMinor,
    ],
  );
  return rows[0] ?? null;
}

export async function lockLine(tx: Queryable, id: string): Promise<StatementLineRow | null> {
  const rows = await tx.query<StatementLineRow>(
    `SELECT ${LINE_COLUMNS} FROM statement_lines WHERE id::text = $1 FOR UPDATE`,
    [id],
  );
  return rows[0] ?? null;
}

/** A line's status moves (through its table) with the payment it was applied to and why. */
export async function updateLineMatch(
  tx: Queryable,
  id: string,
  move: Transition<StatementLineStatus>,
  m: { paymentReference: string | null; attemptId: string | null; reason: string },
): Promise<StatementLineRow> {
  const rows = await tx.query<StatementLineRow>(
    `UPDATE statement_lines SET status = $2, payment_reference = $3, attempt_id = $4, reason = $5, updated_at = now()
      WHERE id = $1 RETURNING ${LINE_COLUMNS}`,
    [id, statementLineMachine.check(move).to, m.paymentReference, m.attemptId, m.reason],
  );
  return rows[0]!;
}

/** Why an unmatched line is still unmatched (and the reference found in it, if any); the status stays. */
export async function noteUnmatched(
  tx: Queryable,
  id: string,
  n: { paymentReference: string | null; reason: string },
): Promise<void> {
  await tx.query(
    `UPDATE statement_lines SET payment_reference = $2, reason = $3, updated_at = now() WHERE id = $1 AND status = '${LINE_INITIAL}'`,
    [id, n.paymentReference, n.reason],
  );
}

export async function resolveLine(
  tx: Queryable,
  id: string,
  move: Transition<StatementLineStatus>,
  r: { note: string; resolvedBy: string },
): Promise<StatementLineRow> {
  const rows = await tx.query<StatementLineRow>(
    `UPDATE statement_lines SET status = $2, resolution_note = $3, resolved_by = $4, resolved_at = now(), updated_at = now()
      WHERE id = $1 RETURNING ${LINE_COLUMNS}`,
    [id, statementLineMachine.check(move).to, r.note, r.resolvedBy],
  );
  return rows[0]!;
}

export interface BankTransferAttemptRow {
  id: string;
  session_id: string;
  merchant_id: string;
  provider_reference: string;
  status: string;
  amount_charged_minor: number;
}

/** The Live bank transfer attempts with these payment references (at most one each: the references are unique). */
export const findBankTransferAttempts = (db: Queryable, references: readonly string[]) =>
  db.query<BankTransferAttemptRow>(
    `SELECT id, session_id, merchant_id, provider_reference, status, amount_charged_minor FROM payment_attempts
      WHERE provider = '${BANK_STATEMENT_PROVIDER}' AND provider_reference = ANY($1::text[]) AND environment = 'live' AND rail = 'bank_transfer'
      ORDER BY created_at`,
    [references],
  );

/** The latest imports, newest first. */
export const listImports = (db: Queryable, limit: number) =>
  db.query<StatementImportRow>(`SELECT ${IMPORT_COLUMNS} FROM statement_imports ORDER BY created_at DESC LIMIT $1`, [
    limit,
  ]);

export async function findImport(db: Queryable, id: string): Promise<StatementImportRow | null> {
  const rows = await db.query<StatementImportRow>(
    `SELECT ${IMPORT_COLUMNS} FROM statement_imports WHERE id::text = $1`,
    [id],
  );
  return rows[0] ?? null;
}

export type QueueLineRow = StatementLineRow & { attempt_status: string | null };
/** What an operator looks for in the queue: words of the narration or references, an amount, a payment reference. */
export interface QueueSearch {
  /** Matched anywhere in the narration, the bank's reference or the payment reference, any case. */
  text: string | null;
  amountMinor: number | null;
  paymentReference: string | null;
}

const NO_SEARCH: QueueSearch = { text: null, amountMinor: null, paymentReference: null };

/** A LIKE pattern matching the text anywhere, its own % and _ taken literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

/** The queue's lines: unmatched, or mismatched with a payment rejected under Review (l is the line, a its attempt), searched and filtered. */
const QUEUE_FROM = `statement_lines l LEFT JOIN payment_attempts a ON a.id = l.attempt_id
      WHERE (l.status = '${LINE_INITIAL}' OR (l.status = 'amount_mismatch' AND a.status = 'failed'))
        AND ($1::text IS NULL OR l.narration ILIKE $1 OR l.bank_reference ILIKE $1 OR l.payment_reference ILIKE $1
             OR l.amount_minor = $2::bigint OR l.payment_reference = $3::text OR l.narration ILIKE '%' || $3::text || '%')
        AND ($4::text IS NULL OR ($4 = 'found' AND l.payment_reference IS NOT NULL) OR ($4 = 'none' AND l.payment_reference IS NULL))
        AND ($5::text IS NULL OR l.bank_code = $5)`;

/** The queue's filters: whether a payment reference was found in the line, and the bank code its statement was imported for. */
export interface QueueFilters {
  reference?: string;
  bank?: string;
}
const queueParams = (search: QueueSearch, filters: QueueFilters) => [
  search.text === null ? null : containing(search.text),
  search.amountMinor,
  search.paymentReference,
  filters.reference ?? null,
  filters.bank ? filters.bank.toUpperCase() : null,
];

/**
 * A page of the operators' queue, the longest waiting first (keyset on created_at to the millisecond, as the
 * cursor carries it, and id, after the cursor):
 * unmatched credits, and mismatched ones whose payment was rejected under Review (the credit was never
 * applied; the operator returns it or applies it elsewhere).
 */
export const listQueue = (
  db: Queryable,
  q: { search?: QueueSearch; filters?: QueueFilters; cursor?: { at: Date; id: string } | null; limit: number },
) =>
  db.query<QueueLineRow>(
    `SELECT ${lineColumns('l.')}, a.status AS attempt_status FROM ${QUEUE_FROM}
        AND ($6::timestamptz IS NULL OR (date_trunc('milliseconds', l.created_at), l.id::text) > ($6::timestamptz, $7::text))
      ORDER BY date_trunc('milliseconds', l.created_at), l.id::text LIMIT $8`,
    [...queueParams(q.search ?? NO_SEARCH, q.filters ?? {}), q.cursor?.at ?? null, q.cursor?.id ?? '', q.limit],
  );

export async function countQueue(
  db: Queryable,
  search: QueueSearch = NO_SEARCH,
  filters: QueueFilters = {},
): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${QUEUE_FROM}`,
    queueParams(search, filters),
  );
  return rows[0]?.n ?? 0;
}

/** The status of the attempt a line names, or null. */
export async function attemptStatusOf(db: Queryable, attemptId: string): Promise<string | null> {
  const rows = await db.query<{ status: string }>('SELECT status FROM payment_attempts WHERE id = $1', [attemptId]);
  return rows[0]?.status ?? null;
}

/** The mismatched lines held against an attempt, locked (they go back to the queue when it is paid without them). */
export const lockHeldLinesOfAttempt = (tx: Queryable, attemptId: string) =>
  tx.query<StatementLineRow>(
    `SELECT ${LINE_COLUMNS} FROM statement_lines WHERE attempt_id = $1 AND status = 'amount_mismatch' ORDER BY created_at FOR UPDATE`,
    [attemptId],
  );

/** The lines of one import, in file order. */
export const listImportLines = (db: Queryable, importId: string) =>
  db.query<StatementLineRow>(`SELECT ${LINE_COLUMNS} FROM statement_lines WHERE import_id = $1 ORDER BY line_number`, [
    importId,
  ]);

/** Live bank transfers by these payment references, with their amount and merchant (the queue's near-match suggestions). */
export const bankTransfersForSuggestions = (db: Queryable, references: readonly string[]) =>
  references.length === 0
    ? Promise.resolve([])
    : db.query<{ reference: string; amount_minor: number; merchant_name: string; status: string }>(
        `SELECT a.provider_reference AS reference, a.amount_charged_minor AS amount_minor, m.name AS merchant_name, a.status
           FROM payment_attempts a JOIN merchants m ON m.id = a.merchant_id
          WHERE a.provider = '${BANK_STATEMENT_PROVIDER}' AND a.provider_reference = ANY($1::text[]) AND a.environment = 'live' AND a.rail = 'bank_transfer'
          ORDER BY a.created_at`,
        [references],
      );
