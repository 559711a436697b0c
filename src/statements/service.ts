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
import { findPaymentReference, findPaymentReferences, isPaymentReference } from '../rails/bank-transfer/reference.ts';
import { parseAmountCell } from './cells.ts';
import { parseColumnMapping, parseStatementCsv, type ColumnMapping, type StatementField } from './csv.ts';
import {
  FILE_NAME_LENGTH_MAX,
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
 * pays it (late ones too: an expired attempt may still become paid), another amount holds it for review.
 * A payment that cannot take it (paid already, failed, cancelled, or expired with the wrong amount) refuses
 * it, and the credit stays for an operator. applyOutcome refuses before it writes, so the transaction goes on.
 */
async function applyCredit(tx: Queryable, line: StatementLineRow, attempt: store.BankTransferAttemptRow, checkoutUrlHost: string): Promise<Applying> {
  const outcome = outcomeForCredit(line.amount_minor, attempt.amount_charged_minor);
  const ctx: OutcomeContext = { checkoutUrlHost, source: 'statement' };
  let applied: Applied;
  try {
    applied = await applyOutcome(tx, attempt.id, outcome, ctx);
  } catch (error) {
    if (error instanceof SikaError && error.code === 'ATTEMPT_FINAL') {
      return { refused: `Payment ${attempt.provider_reference} is ${attempt.status}${outcome === 'amount_mismatch' ? ` and this credit (${formatGhs(line.amount_minor)}) is not its amount (${formatGhs(attempt.amount_charged_minor)})` : ''}: it cannot take this credit.` };
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
  await store.updateLineMatch(tx, line.id, statementLineMachine.transition(line.status, status), { paymentReference: attempt.provider_reference, attemptId: attempt.id, reason });
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

/** Matches a stored, unmatched credit by the payment references in its narration and reference. */
async function matchNewLine(tx: Queryable, line: StatementLineRow, credit: StatementCredit, checkoutUrlHost: string): Promise<LineOutcome> {
  const references = findPaymentReferences(`${credit.narration} ${credit.bankReference}`);
  const unmatched = async (reason: string, paymentReference: string | null = references[0] ?? null): Promise<LineOutcome> => {
    await store.noteUnmatched(tx, line.id, { paymentReference, reason });
    return 'unmatched';
  };
  if (references.length === 0) return unmatched('No payment reference (SK and 8 characters) in the narration.');
  const attempts = await store.findBankTransferAttempts(tx, references);
  if (attempts.length === 0) return unmatched(`${references.join(', ')} is not the reference of a Live bank transfer.`);
  if (attempts.length > 1) return unmatched(`The narration names several payments (${attempts.map((a) => a.provider_reference).join(', ')}); assign it to the right one.`, null);
  const result = await applyCredit(tx, line, attempts[0]!, checkoutUrlHost);
  if ('refused' in result) return unmatched(result.refused, attempts[0]!.provider_reference);
  return result.status;
}

const fileNameOf = (name: string) => name.split(/[\\/]/).pop()!.trim().slice(0, FILE_NAME_LENGTH_MAX) || 'statement.csv';
const problemText = (error: unknown) => (error instanceof SikaError ? error.message : 'a storage error');

/**
 * Imports a statement: reads its credits, stores each new one (by fingerprint) and matches it. The import
 * is recorded with its counts and audited; a statement imported again counts its credits as duplicates.
 */
export async function importStatement(db: Db, input: ImportInput): Promise<ImportResult> {
  const bankCode = input.bankCode.trim().toUpperCase();
  const bank = bankCode ? await store.findBankByCode(db, bankCode) : null;
  if (!bank) {
    throw errors.invalidArgument(`"${bankCode.slice(0, 20)}" is not the code of a bank Sika knows (see Banks in the console, e.g. GCB).`, [{ field: 'bank_code', message: 'is not a known bank code' }]);
  }
  const columns = typeof input.columns === 'string' ? parseColumnMapping(input.columns) : (input.columns ?? {});
  const parsed = parseStatementCsv(input.csv, { columns });
  const fileName = fileNameOf(input.fileName);
  const fileSha256 = createHash('sha256').update(input.csv).digest('hex');
  const importId = await db.transaction((tx) => store.insertImport(tx, { bankCode: bank.code, fileName, fileSha256, importedBy: actorName(input.importedBy) }));

  const fingerprints = fingerprintCredits(bank.code, parsed.credits);
  const stored = await store.storedFingerprints(db, fingerprints);
  const counts: ImportCounts = { lines: parsed.lines, credits: parsed.credits.length, matched: 0, amount_mismatch: 0, unmatched: 0, duplicates: 0, errors: 0 };
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
      problems.push({ line: credit.line, message: `not recorded (${problemText(error)}); import the file again to retry it` });
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
      after: { bank_code: bank.code, file_name: fileName, file_sha256: fileSha256, ...counts },
    });
  });
  return { import_id: importId, bank_code: bank.code, file_name: fileName, ...counts, debits: parsed.debits, problems, columns: parsed.columns };
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
  if (line.status !== 'amount_mismatch' || !line.attempt_id || (await store.attemptStatusOf(tx, line.attempt_id)) !== 'failed') throw notQueued();
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
    throw errors.invalidArgument(`"${text.trim().slice(0, 40)}" is not a payment reference (SK and 8 characters, e.g. SK4F7K9QXM).`, [{ field: 'reference', message: 'is not a payment reference' }]);
  }
  return reference;
}

/**
 * An operator applies a queued credit to the payment with this reference: paid when the amount is the
 * payment's, held for review when not. A payment that cannot take it is refused (ATTEMPT_FINAL) and the
 * credit stays queued. Audited.
 */
export async function assignCredit(db: Db, actor: Actor, checkoutUrlHost: string, lineId: string, referenceText: string) {
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
      after: { status: result.status, payment_reference: reference, attempt: attempt.id, attempt_status: result.applied.attempt.status, session_status: result.applied.session.status },
    });
    return { status: result.status, reference, attempt: result.applied.attempt, session: result.applied.session };
  });
}

/** An operator settles a queued credit outside Sika (returned to the sender, not a payment, ...) with a note. Audited. */
export async function resolveCredit(db: Db, actor: Actor, lineId: string, noteText: string) {
  const note = noteText.trim().replace(/\s+/g, ' ');
  if (!note) throw errors.invalidArgument('Say what was done with the credit (e.g. returned to the sender).', [{ field: 'note', message: 'is required' }]);
  if (note.length > RESOLUTION_NOTE_LENGTH_MAX) throw errors.invalidArgument(`The note may be at most ${RESOLUTION_NOTE_LENGTH_MAX} characters.`, [{ field: 'note', message: 'is too long' }]);
  return db.transaction(async (tx) => {
    const line = await takeQueuedLine(tx, lineId);
    const resolved = await store.resolveLine(tx, line.id, statementLineMachine.transition(line.status, 'resolved'), { note, resolvedBy: actorName(actor) });
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

// ---- what the console shows ----

export type { QueueLineRow, BankCodeRow } from './store.ts';
export type { StatementImportRow } from './model.ts';
export type StatementsOverview = Awaited<ReturnType<typeof statementsOverview>>;

/** What an operator typed in the queue's search box: words, an amount ("500.00") or a payment reference, any of which may match. */
export function queueSearch(text: string): store.QueueSearch | undefined {
  const words = text.trim().replace(/\s+/g, ' ');
  if (!words) return undefined;
  const amount = parseAmountCell(words);
  return { text: words, amountMinor: amount.kind === 'amount' && amount.minor > 0 ? amount.minor : null, paymentReference: findPaymentReference(words) };
}

/** The banks to import for, the latest imports and the queue (the first STATEMENT_LIST_ROWS_MAX of it, and how many in all), searched when asked. */
export async function statementsOverview(db: Queryable, options: { search?: string } = {}) {
  const search = queueSearch(options.search ?? '');
  const [banks, imports, queue, queueTotal] = await Promise.all([
    store.listBanks(db),
    store.listImports(db, STATEMENT_LIST_ROWS_MAX),
    store.listQueue(db, STATEMENT_LIST_ROWS_MAX, search),
    store.countQueue(db, search),
  ]);
  return { banks, imports, queue, queueTotal, search: search?.text ?? '' };
}

/** One import and its lines, in file order. */
export async function statementImport(db: Queryable, importId: string) {
  const found = await store.findImport(db, importId);
  return found ? { import: found, lines: await store.listImportLines(db, found.id) } : null;
}
