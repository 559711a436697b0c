// Bank statements (docs/bank-statements.md): importing a statement's credits and matching each to the Live
// bank transfer its payment reference names, and the operators' work on the credits that did not match.
// Each credit is recorded and matched in its own transaction, so one that fails leaves the others done;
// its unique fingerprint makes importing the same statement again add nothing.
import { createHash } from 'node:crypto';
import { audit, type Actor } from '../audit/log.ts';
import { applyOutcome, type Applied, type OutcomeContext } from '../checkout/payments.ts';
import type { Db, Queryable } from '../db/index.ts';
import { SikaError, errors } from '../lib/errors.ts';
import { formatGhs } from '../lib/ghana.ts';
import { slipReferencesIn, slipsByReferences } from '../checkout/cash-slips.ts';
import { collectionAccountLabel, type CollectionAccount } from '../rails/bank-transfer/accounts.ts';
import {
  findPaymentReference,
  findPaymentReferences,
  isPaymentReference,
  nearPaymentReferences,
} from '../rails/bank-transfer/reference.ts';
import { parseAmountCell } from './cells.ts';
import { parseColumnMapping, parseStatementCsv, type ColumnMapping, type StatementField } from './csv.ts';
import {
  FILE_NAME_LENGTH_MAX,
  IMPORT_REASON_LENGTH_MAX,
  RESOLUTION_NOTE_LENGTH_MAX,
  STATEMENT_LIST_ROWS_MAX,
  STATEMENT_PROBLEMS_KEPT_MAX,
  fingerprintCredits,
  outcomeForCredit,
  statementLineMachine,
  type ImportCounts,
  type StatementCredit,
  type StatementLineRow,
  type StatementProblem,
} from './model.ts';
import * as store from './store.ts';

export interface ImportInput {
  /** The code of the bank the statement is from (banks.code, e.g. GCB). */
  bankCode: string;
  fileName: string;
  /** The file's bytes (UTF-8, UTF-16 with a byte order mark, or Windows-1252) or its text. */
  csv: string | Buffer;
  /** Which column is which, when the names are not recognised: a mapping or its text (`date=Txn Date,credit=Amount In`). */
  columns?: ColumnMapping | string;
  importedBy: Actor;
  checkoutUrlHost: string;
  /** The configured collection accounts (src/rails/bank-transfer/accounts.ts): a statement is imported for one of them only. */
  collectionAccounts: readonly CollectionAccount[];
  /** Import a file imported before (same sha256) anyway: the operator's reason, kept with the import and audited. */
  forceReason?: string | null;
}

export interface ImportResult extends ImportCounts {
  import_id: string;
  bank_code: string;
  file_name: string;
  debits: number;
  problems: StatementProblem[];
  /** Which column each field was read from. */
  columns: Partial<Record<StatementField, string>>;
}

type LineOutcome = 'matched' | 'amount_mismatch' | 'unmatched' | 'duplicates';

const actorName = (actor: Actor) => `${actor.type}:${actor.email ?? actor.id}`;

/** A credit applied to its payment, or why it could not be. */
type Applying = { applied: Applied; status: 'matched' | 'amount_mismatch' } | { refused: string };

/**
 * Applies a credit to the payment it names, as applyOutcome's transition table allows: the exact amount
 * pays it (late ones too: an expired attempt, or one the payer left for another method, may still become paid;
 * when the session was paid otherwise meanwhile, it is refunded automatically), another amount holds it for
 * review. A payment that cannot take it (paid already, failed) refuses it, and the credit stays for an operator. applyOutcome refuses before it writes, so the transaction goes on.
 */
async function applyCredit(
  tx: Queryable,
  line: StatementLineRow,
  attempt: store.BankTransferAttemptRow,
  checkoutUrlHost: string,
): Promise<Applying> {
  const outcome = outcomeForCredit(line.amount_minor, attempt.amount_charged_minor);
  const ctx: OutcomeContext = { checkoutUrlHost, source: 'statement' };
  let applied: Applied;
  try {
    applied = await applyOutcome(tx, attempt.id, outcome, ctx);
  } catch (error) {
    if (error instanceof SikaError && error.code === 'ATTEMPT_FINAL') {
      return {
        refused: `Payment ${attempt.provider_reference} is ${attempt.status}${outcome === 'amount_mismatch' ? ` and this credit (${formatGhs(line.amount_minor)}) is not its amount (${formatGhs(attempt.amount_charged_minor)})` : ''}: it cannot take this credit.`,
      };
    }
    throw error;
  }
  if (!applied.changed) {
    return {
      refused:
        applied.attempt.status === 'paid'
          ? `Payment ${attempt.provider_reference} is paid already: this looks like a second transfer for it.`
          : `Payment ${attempt.provider_reference} is already held for review with another credit.`,
    };
  }
  const status = outcome === 'paid' ? 'matched' : 'amount_mismatch';
  const reason =
    outcome === 'paid'
      ? attempt.status === 'expired'
        ? 'Paid after the payment had expired: applied, as money taken is never dropped.'
        : ''
      : `Received ${formatGhs(line.amount_minor)} for a payment of ${formatGhs(attempt.amount_charged_minor)}: approve or reject it under Review.`;
  await store.updateLineMatch(tx, line.id, statementLineMachine.transition(line.status, status), {
    paymentReference: attempt.provider_reference,
    attemptId: attempt.id,
    reason,
  });
  if (outcome === 'paid') {
    // A payment held for an earlier credit of the wrong amount, paid in full by this one: the earlier
    // credit was never applied, so it goes back to the queue to be returned or applied elsewhere.
    for (const held of await store.lockHeldLinesOfAttempt(tx, attempt.id)) {
      await store.updateLineMatch(tx, held.id, statementLineMachine.transition(held.status, 'unmatched'), {
        paymentReference: held.payment_reference,
        attemptId: null,
        reason: `Payment ${attempt.provider_reference} was paid in full by a later credit (line ${line.line_number}, ${line.value_date}); this one was not applied.`,
      });
    }
  }
  return { applied, status };
}

/** Why a credit quoting a cash slip's reference is not applied: a slip is paid in cash at a teller, never by transfer. */
const cashSlipReason = (slip: {
  reference: string;
  environment: string;
  status: string;
  amount_minor: number;
  merchant_name: string;
}) =>
  `This is a cash slip reference, ${slip.reference} (a ${slip.environment === 'live' ? 'Live' : 'Test'} slip of ${slip.merchant_name} for ${formatGhs(slip.amount_minor)}, ${slip.status}): ` +
  'a cash slip is paid in cash at a bank branch, not by transfer to the collection account.';

/** Matches a stored, unmatched credit by the payment references in its narration and reference. */
async function matchNewLine(
  tx: Queryable,
  line: StatementLineRow,
  credit: StatementCredit,
  checkoutUrlHost: string,
): Promise<LineOutcome> {
  const references = findPaymentReferences(`${credit.narration} ${credit.bankReference}`);
  const unmatched = async (
    reason: string,
    paymentReference: string | null = references[0] ?? null,
  ): Promise<LineOutcome> => {
    await store.noteUnmatched(tx, line.id, { paymentReference, reason });
    return 'unmatched';
  };
  const attempts = references.length === 0 ? [] : await store.findBankTransferAttempts(tx, references);
  if (attempts.length === 0) {
    // A cash slip's reference (SK-XXXX-XXXX) quoted on a transfer: said as such, not as a bad bank transfer reference.
    const [slip] = await slipsByReferences(tx, slipReferencesIn(`${credit.narration} ${credit.bankReference}`));
    if (slip) return unmatched(cashSlipReason(slip), null);
  }
  if (references.length === 0) return unmatched('No payment reference (SK and 8 characters) in the narration.');
  if (attempts.length === 0) return unmatched(`${references.join(', ')} is not the reference of a Live bank transfer.`);
  if (attempts.length > 1)
    return unmatched(
      `The narration names several payments (${attempts.map((a) => a.provider_reference).join(', ')}); assign it to the right one.`,
      null,
    );
  const result = await applyCredit(tx, line, attempts[0]!, checkoutUrlHost);
  if ('refused' in result) return unmatched(result.refused, attempts[0]!.provider_reference);
  return result.status;
}

const fileNameOf = (name: string) =>
  name.split(/[\\/]/).pop()!.trim().slice(0, FILE_NAME_LENGTH_MAX) || 'statement.csv';
const problemText = (error: unknown) => (error instanceof SikaError ? error.message : 'a storage error');

/** The magic bytes of files operators upload by mistake, and what to do instead. */
const NOT_CSV: ReadonlyArray<{ magic: Buffer; message: string }> = [
  {
    magic: Buffer.from([0x50, 0x4b, 0x03, 0x04]),
    message:
      'This is an Excel workbook (.xlsx), not a CSV file: open it in Excel and save it as CSV (File, Save As, "CSV UTF-8"), then import the CSV.',
  },
  {
    magic: Buffer.from([0xd0, 0xcf, 0x11, 0xe0]),
    message:
      'This is an Excel workbook (.xls), not a CSV file: open it in Excel and save it as CSV (File, Save As, "CSV UTF-8"), then import the CSV.',
  },
  {
    magic: Buffer.from('%PDF'),
    message:
      "This is a PDF, not a CSV file: download the statement from the bank's internet banking as CSV (or as Excel, then save it as CSV).",
  },
];

/** A file that is not a statement CSV at all (Excel, PDF, empty) is refused before anything is recorded. */
function refuseNotCsv(csv: string | Buffer): void {
  const bytes = typeof csv === 'string' ? Buffer.from(csv) : csv;
  for (const { magic, message } of NOT_CSV)
    if (bytes.subarray(0, magic.length).equals(magic))
      throw errors.invalidArgument(message, [{ field: 'file', message: 'is not a CSV file' }]);
  const text = typeof csv === 'string' ? csv : bytes.toString('latin1');
  if (text.replace(/^(\uFEFF|\xEF\xBB\xBF|\xFF\xFE|\xFE\xFF)/, '').replace(/[\s\u0000,;]/g, '') === '') {
    throw errors.invalidArgument(
      'The file is empty: there is nothing to import. Export the statement from the bank again.',
      [{ field: 'file', message: 'is empty' }],
    );
  }
}

/** The collection account a statement is imported for, by its bank's code, or a refusal naming the accounts there are. */
function accountFor(accounts: readonly CollectionAccount[], bankCode: string): CollectionAccount {
  if (accounts.length === 0) {
    throw errors.invalidArgument(
      'No collection account is configured (the BANK_TRANSFER_* settings), so there is no statement to import.',
      [{ field: 'bank_code', message: 'no collection account is configured' }],
    );
  }
  const account = accounts.find((a) => a.bankCode === bankCode);
  if (!account) {
    throw errors.invalidArgument(
      `"${bankCode.slice(0, 20)}" is not the code of a bank with a Sika collection account; statements are imported for ${accounts.map(collectionAccountLabel).join('; ')} only.`,
      [{ field: 'bank_code', message: 'is not the bank of a collection account' }],
    );
  }
  return account;
}

/** An operator's reason (forcing a file again, voiding an import): required, one line, bounded. */
function reasonText(text: string, field: string, what: string): string {
  const reason = text.trim().replace(/\s+/g, ' ');
  if (!reason) throw errors.invalidArgument(`Give a reason ${what}.`, [{ field, message: 'is required' }]);
  if (reason.length > IMPORT_REASON_LENGTH_MAX)
    throw errors.invalidArgument(`The reason may be at most ${IMPORT_REASON_LENGTH_MAX} characters.`, [
      { field, message: 'is too long' },
    ]);
  return reason;
}

const whenText = (at: Date) => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * Imports a statement of a collection account: reads its credits, stores each new one (by fingerprint) and
 * matches it. A file imported before (the same bytes, by sha256, for any account) is refused unless forced
 * with a reason; an empty, header-only or non-CSV file is refused; nothing is recorded for a refused file.
 * The import is recorded with its counts and audited.
 */
export async function importStatement(db: Db, input: ImportInput): Promise<ImportResult> {
  const bankCode = input.bankCode.trim().toUpperCase();
  const account = accountFor(input.collectionAccounts, bankCode);
  const bank = (await store.findBankByCode(db, account.bankCode)) ?? {
    code: account.bankCode,
    name: account.bankName,
    active: true,
  };
  refuseNotCsv(input.csv);
  const forceReason = input.forceReason
    ? reasonText(input.forceReason, 'force_reason', 'for importing this file again')
    : null;
  const columns = typeof input.columns === 'string' ? parseColumnMapping(input.columns) : (input.columns ?? {});
  const parsed = parseStatementCsv(input.csv, { columns });
  if (parsed.lines === 0) {
    throw errors.invalidArgument(
      'The file has a header row but no transactions under it: nothing was imported. Check the period of the statement exported.',
      [{ field: 'file', message: 'has no rows' }],
    );
  }
  const fileName = fileNameOf(input.fileName);
  const fileSha256 = createHash('sha256').update(input.csv).digest('hex');
  const { importId, forced } = await db.transaction(async (tx) => {
    await store.lockFileHash(tx, fileSha256);
    const [earlier] = await store.standingImportsOfFile(tx, fileSha256);
    if (earlier && !forceReason) {
      throw new SikaError(
        'STATEMENT_ALREADY_IMPORTED',
        `This file was imported already: ${earlier.file_name} for ${earlier.bank_code} on ${whenText(earlier.created_at)} by ${earlier.imported_by}. ` +
          'It is not imported again; if it must be (the first import was of another file with the same content), import it anyway with a reason.',
      );
    }
    const forced = earlier ? { reason: forceReason!, earlier_import: earlier.id } : null;
    return {
      importId: await store.insertImport(tx, {
        bankCode: bank.code,
        fileName,
        fileSha256,
        importedBy: actorName(input.importedBy),
        forcedReason: forced?.reason ?? null,
      }),
      forced,
    };
  });

  const fingerprints = fingerprintCredits(bank.code, parsed.credits);
  const stored = await store.storedFingerprints(db, fingerprints);
  const counts: ImportCounts = {
    lines: parsed.lines,
    credits: parsed.credits.length,
    matched: 0,
    amount_mismatch: 0,
    unmatched: 0,
    duplicates: 0,
    errors: 0,
  };
  const problems = [...parsed.problems];
  for (const [index, credit] of parsed.credits.entries()) {
    const fingerprint = fingerprints[index]!;
    if (stored.has(fingerprint)) {
      counts.duplicates++;
      continue;
    }
    try {
      const outcome = await db.transaction(async (tx): Promise<LineOutcome> => {
        const line = await store.insertLine(tx, {
          importId,
          bankCode: bank.code,
          fingerprint,
          lineNumber: credit.line,
          valueDate: credit.valueDate,
          amountMinor: credit.amountMinor,
          narration: credit.narration,
          bankReference: credit.bankReference,
          balanceMinor: credit.balanceMinor,
        });
        // Stored meanwhile by a concurrent import of the same statement.
        if (!line) return 'duplicates';
        return matchNewLine(tx, line, credit, input.checkoutUrlHost);
      });
      counts[outcome]++;
    } catch (error) {
      // Nothing of this credit was stored: importing the file again retries it.
      problems.push({
        line: credit.line,
        message: `not recorded (${problemText(error)}); import the file again to retry it`,
      });
    }
  }
  problems.sort((a, b) => a.line - b.line);
  counts.errors = problems.length;
  await db.transaction(async (tx) => {
    await store.finishImport(tx, importId, counts, problems.slice(0, STATEMENT_PROBLEMS_KEPT_MAX));
    await audit(tx, {
      actor: input.importedBy,
      merchantId: null,
      action: 'statement.import',
      objectType: 'statement_import',
      objectId: importId,
      before: null,
      after: {
        bank_code: bank.code,
        account_number: account.accountNumber,
        file_name: fileName,
        file_sha256: fileSha256,
        ...(forced ? { forced_reason: forced.reason, earlier_import: forced.earlier_import } : {}),
        ...counts,
      },
    });
  });
  return {
    import_id: importId,
    bank_code: bank.code,
    file_name: fileName,
    ...counts,
    debits: parsed.debits,
    problems,
    columns: parsed.columns,
  };
}

// ---- the operators' queue ----

/**
 * A queued line locked for an operator's action, back to unmatched if it was a mismatched credit whose
 * payment was rejected under Review. A line not in the queue (matched, resolved, or held under Review) is
 * not found: the form was stale.
 */
async function takeQueuedLine(tx: Queryable, lineId: string): Promise<StatementLineRow> {
  const line = await store.lockLine(tx, lineId);
  const notQueued = () => errors.notFound('Unmatched credit');
  if (!line) throw notQueued();
  if (line.status === 'unmatched') return line;
  if (
    line.status !== 'amount_mismatch' ||
    !line.attempt_id ||
    (await store.attemptStatusOf(tx, line.attempt_id)) !== 'failed'
  )
    throw notQueued();
  return store.updateLineMatch(tx, line.id, statementLineMachine.transition(line.status, 'unmatched'), {
    paymentReference: line.payment_reference,
    attemptId: null,
    reason: `Payment ${line.payment_reference} was rejected under Review; this credit was not applied.`,
  });
}

/** The reference an operator typed: found as in a narration (any case, spaces), else a clear refusal. */
function typedReference(text: string): string {
  const reference = findPaymentReference(text);
  if (!reference || !isPaymentReference(reference)) {
    throw errors.invalidArgument(
      `"${text.trim().slice(0, 40)}" is not a payment reference (SK and 8 characters, e.g. SK4F7K9QXM).`,
      [{ field: 'reference', message: 'is not a payment reference' }],
    );
  }
  return reference;
}

/**
 * An operator applies a queued credit to the payment with this reference: paid when the amount is the
 * payment's, held for review when not. A payment that cannot take it is refused (ATTEMPT_FINAL) and the
 * credit stays queued. Audited.
 */
export async function assignCredit(
  db: Db,
  actor: Actor,
  checkoutUrlHost: string,
  lineId: string,
  referenceText: string,
) {
  const reference = typedReference(referenceText);
  return db.transaction(async (tx) => {
    const line = await takeQueuedLine(tx, lineId);
    const [attempt] = await store.findBankTransferAttempts(tx, [reference]);
    if (!attempt) throw errors.notFound(`Live bank transfer ${reference}`);
    const result = await applyCredit(tx, line, attempt, checkoutUrlHost);
    if ('refused' in result) throw new SikaError('ATTEMPT_FINAL', result.refused);
    await audit(tx, {
      actor,
      merchantId: attempt.merchant_id,
      action: 'statement_line.assign',
      objectType: 'statement_line',
      objectId: line.id,
      before: { status: line.status, amount_minor: line.amount_minor, narration: line.narration },
      after: {
        status: result.status,
        payment_reference: reference,
        attempt: attempt.id,
        attempt_status: result.applied.attempt.status,
        session_status: result.applied.session.status,
      },
    });
    return { status: result.status, reference, attempt: result.applied.attempt, session: result.applied.session };
  });
}

/** An operator settles a queued credit outside Sika (returned to the sender, not a payment, ...) with a note. Audited. */
export async function resolveCredit(db: Db, actor: Actor, lineId: string, noteText: string) {
  const note = noteText.trim().replace(/\s+/g, ' ');
  if (!note)
    throw errors.invalidArgument('Say what was done with the credit (e.g. returned to the sender).', [
      { field: 'note', message: 'is required' },
    ]);
  if (note.length > RESOLUTION_NOTE_LENGTH_MAX)
    throw errors.invalidArgument(`The note may be at most ${RESOLUTION_NOTE_LENGTH_MAX} characters.`, [
      { field: 'note', message: 'is too long' },
    ]);
  return db.transaction(async (tx) => {
    const line = await takeQueuedLine(tx, lineId);
    const resolved = await store.resolveLine(tx, line.id, statementLineMachine.transition(line.status, 'resolved'), {
      note,
      resolvedBy: actorName(actor),
    });
    await audit(tx, {
      actor,
      merchantId: null,
      action: 'statement_line.resolve',
      objectType: 'statement_line',
      objectId: line.id,
      before: { status: line.status, amount_minor: line.amount_minor, narration: line.narration, reason: line.reason },
      after: { status: resolved.status, note },
    });
    return resolved;
  });
}

/**
 * An operator voids an import (a file imported for the wrong account, or forced twice): only while every
 * line it recorded is unmatched, so no money moved on any of them. Its lines become voided (they leave the
 * unmatched queue and the reconciliation's totals, and free their fingerprints so the file can be imported
 * for the right account); the import is marked voided with who and why. Audited, in one transaction.
 */
export async function voidImport(db: Db, actor: Actor, importId: string, reasonTyped: string) {
  const reason = reasonText(reasonTyped, 'reason', 'for voiding this import');
  return db.transaction(async (tx) => {
    const found = await store.lockImport(tx, importId);
    if (!found) throw errors.notFound('Statement import');
    if (found.voided_at)
      throw new SikaError(
        'IMPORT_NOT_VOIDABLE',
        `This import was voided already, on ${whenText(found.voided_at)} by ${found.voided_by}.`,
      );
    const lines = await store.lockImportLines(tx, found.id);
    const settled = lines.filter((line) => line.status !== 'unmatched');
    if (settled.length > 0) {
      const first = settled[0]!;
      throw new SikaError(
        'IMPORT_NOT_VOIDABLE',
        `This import cannot be voided: ${settled.length} of its ${lines.length} lines ${settled.length === 1 ? 'is' : 'are'} no longer unmatched (line ${first.line_number} is ${first.status.replace(/_/g, ' ')}). Only an import whose lines are all unmatched is voided.`,
      );
    }
    for (const line of lines) await store.moveLine(tx, line.id, statementLineMachine.transition(line.status, 'voided'));
    const voided = await store.markImportVoided(tx, found.id, { voidedBy: actorName(actor), reason });
    const totalMinor = lines.reduce((sum, line) => sum + line.amount_minor, 0);
    await audit(tx, {
      actor,
      merchantId: null,
      action: 'statement_import.void',
      objectType: 'statement_import',
      objectId: found.id,
      before: {
        bank_code: found.bank_code,
        file_name: found.file_name,
        file_sha256: found.file_sha256,
        unmatched_lines: lines.length,
        amount_minor: totalMinor,
      },
      after: { voided: true, reason, lines_voided: lines.length },
    });
    return { import: voided, linesVoided: lines.length, amountMinor: totalMinor };
  });
}

// ---- what the console shows ----

export type { QueueLineRow, BankCodeRow } from './store.ts';
export type { CollectionAccount } from '../rails/bank-transfer/accounts.ts';
export type { StatementImportRow } from './model.ts';
export type StatementsOverview = Awaited<ReturnType<typeof statementsOverview>>;

/** What an operator typed in the queue's search box: words, an amount ("500.00") or a payment reference, any of which may match. */
export function queueSearch(text: string): store.QueueSearch | undefined {
  const words = text.trim().replace(/\s+/g, ' ');
  if (!words) return undefined;
  const amount = parseAmountCell(words);
  return {
    text: words,
    amountMinor: amount.kind === 'amount' && amount.minor > 0 ? amount.minor : null,
    paymentReference: findPaymentReference(words),
  };
}

/** A Live bank transfer an operator may have meant: one edit away from the reference typed, its check character right. */
export interface NearMatch {
  reference: string;
  amount_minor: number;
  merchant_name: string;
  status: string;
}

/** What the queue says beside a line: a cash slip it quotes, and the payments a mistyped reference was likely meant for. */
export interface QueueHints {
  slip: Awaited<ReturnType<typeof slipsByReferences>>[number] | null;
  nearMatches: NearMatch[];
}
export type QueueLineWithHints = store.QueueLineRow & { hints: QueueHints };

/** Each queued line with its hints: slips looked up by the references in it, near matches in one query for the page. */
export async function withHints(db: Queryable, lines: readonly store.QueueLineRow[]): Promise<QueueLineWithHints[]> {
  const near = lines.map((line) => nearPaymentReferences(`${line.narration} ${line.bank_reference}`));
  const transfers = new Map(
    (await store.bankTransfersForSuggestions(db, [...new Set(near.flat())])).map((row) => [row.reference, row]),
  );
  const result: QueueLineWithHints[] = [];
  for (const [index, line] of lines.entries()) {
    const [slip] = await slipsByReferences(db, slipReferencesIn(`${line.narration} ${line.bank_reference}`));
    const nearMatches = near[index]!.flatMap((reference) =>
      transfers.has(reference) ? [transfers.get(reference)!] : [],
    );
    result.push({ ...line, hints: { slip: slip ?? null, nearMatches } });
  }
  return result;
}

export { QUEUE_REFERENCE_FILTER } from './model.ts';

export interface QueueListQuery {
  search?: string;
  filters?: store.QueueFilters;
  cursor?: { at: Date; id: string } | null;
  limit?: number;
}

/** A page of the queue (the longest waiting first) with its hints; every row when paged through for CSV. */
export async function queuePage(db: Queryable, query: QueueListQuery & { limit: number }) {
  const lines = await store.listQueue(db, {
    search: queueSearch(query.search ?? ''),
    filters: query.filters,
    cursor: query.cursor ?? null,
    limit: query.limit,
  });
  return withHints(db, lines);
}

/** The collection accounts to import for, the latest imports, and how many queued lines match the search and filters. */
export async function statementsSummary(
  db: Queryable,
  options: Pick<QueueListQuery, 'search' | 'filters'> & { collectionAccounts?: readonly CollectionAccount[] } = {},
) {
  const search = queueSearch(options.search ?? '');
  const [imports, queueTotal] = await Promise.all([
    store.listImports(db, STATEMENT_LIST_ROWS_MAX),
    store.countQueue(db, search, options.filters),
  ]);
  return { accounts: options.collectionAccounts ?? [], imports, queueTotal, search: search?.text ?? '' };
}

/** The summary and a page of the queue (the first STATEMENT_LIST_ROWS_MAX rows unless a limit is given), searched and filtered. */
export async function statementsOverview(
  db: Queryable,
  options: QueueListQuery & { collectionAccounts?: readonly CollectionAccount[] } = {},
) {
  const [summary, queue] = await Promise.all([
    statementsSummary(db, options),
    queuePage(db, { ...options, limit: options.limit ?? STATEMENT_LIST_ROWS_MAX }),
  ]);
  return { ...summary, queue };
}
export type StatementsSummary = Awaited<ReturnType<typeof statementsSummary>>;

/** One import and its lines, in file order. */
export async function statementImport(db: Queryable, importId: string) {
  const found = await store.findImport(db, importId);
  return found ? { import: found, lines: await store.listImportLines(db, found.id) } : null;
}

/**
 * An operator's approved decision on a payment held for a statement credit of another amount (src/ops/approvals.ts),
 * in its transaction: the credit is matched when the payment was credited, resolved when it goes back to the
 * payer through a refund, and left to go back to the queue when the payment was rejected (takeQueuedLine).
 */
export async function settleHeldLines(
  tx: Queryable,
  attemptId: string,
  outcome: 'credited' | 'refunded' | 'rejected',
  by: Actor,
  note: string,
): Promise<void> {
  if (outcome === 'rejected') return;
  for (const line of await store.lockHeldLinesOfAttempt(tx, attemptId)) {
    if (outcome === 'credited') {
      await store.updateLineMatch(tx, line.id, statementLineMachine.transition(line.status, 'matched'), {
        paymentReference: line.payment_reference,
        attemptId,
        reason: note,
      });
    } else {
      await store.resolveLine(tx, line.id, statementLineMachine.transition(line.status, 'resolved'), {
        note,
        resolvedBy: actorName(by),
      });
    }
  }
}
