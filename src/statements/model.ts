// Bank statement lines: their statuses and the transition table, their fingerprint, and the matching rule
// (docs/bank-statements.md).
import { createHash } from 'node:crypto';
import { defineStateMachine, type Transitions } from '../lib/state-machine.ts';

export const STATEMENT_LINE_STATUSES = ['unmatched', 'matched', 'amount_mismatch', 'resolved', 'voided'] as const;
export type StatementLineStatus = (typeof STATEMENT_LINE_STATUSES)[number];

/**
 * A credit line is stored unmatched and, in the same transaction, matched when its payment reference names
 * a Live bank transfer: matched when the amount is the payment's (the attempt is paid), amount_mismatch
 * when it is not (the attempt waits under Review). An unmatched line waits for an operator, who assigns it
 * to a payment (matched or amount_mismatch as above) or resolves it with a note (returned to the sender,
 * not ours, ...). A mismatched line goes back to unmatched when its payment is settled without it (a later
 * credit of the exact amount paid it, or it was rejected under Review): the money is still ours to return
 * or apply, never dropped. An operator's approved decision on its payment (src/ops/approvals.ts) makes it
 * matched (credited, as received or as charged) or resolved (returned to the payer through a refund).
 * Matched and resolved lines are done. An unmatched line is voided with its whole import (a file imported
 * for the wrong account, or twice), only while every line of the import is unmatched: a voided line moved
 * no money, counts nowhere and is done.
 */
export const STATEMENT_LINE_TRANSITIONS: Transitions<StatementLineStatus> = {
  unmatched: ['matched', 'amount_mismatch', 'resolved', 'voided'],
  amount_mismatch: ['unmatched', 'matched', 'resolved'],
  matched: [],
  resolved: [],
  voided: [],
};

export const statementLineMachine = defineStateMachine({
  name: 'statement line',
  statuses: STATEMENT_LINE_STATUSES,
  initial: ['unmatched'],
  transitions: STATEMENT_LINE_TRANSITIONS,
});

/** Rows of a statement file read at most (a month of a busy collection account is a few thousand). */
export const STATEMENT_ROWS_MAX = 50_000;
/** A statement file's size at most, in bytes (the console's upload limit is lower: UPLOAD_BYTES_MAX). */
export const STATEMENT_BYTES_MAX = 20 * 1024 * 1024;
/** Rows that could not be read, kept with their import for the operator (all are counted). */
export const STATEMENT_PROBLEMS_KEPT_MAX = 100;
/** A narration or bank reference is kept up to this many characters. */
export const NARRATION_LENGTH_MAX = 1_000;
export const FILE_NAME_LENGTH_MAX = 200;
/** A column mapping's text (`date=Txn Date,credit=Amount In,...`), at most. */
export const COLUMN_MAPPING_LENGTH_MAX = 500;
/** An operator's note when resolving a line. */
export const RESOLUTION_NOTE_LENGTH_MAX = 500;
/** A reason an operator gives for forcing a file already imported, or for voiding an import. */
export const IMPORT_REASON_LENGTH_MAX = 500;
/** The unmatched queue's filter on whether a payment reference was found in the line. */
export const QUEUE_REFERENCE_FILTER = ['found', 'none'] as const;
/** The lines and imports one console list shows. */
export const STATEMENT_LIST_ROWS_MAX = 200;

/** One credit read from a statement (debits are not kept). */
export interface StatementCredit {
  /** The line of the file it starts on (1 is the first line, the header or title included). */
  line: number;
  /** YYYY-MM-DD. */
  valueDate: string;
  amountMinor: number;
  narration: string;
  /** The bank's reference column, when the statement has one. */
  bankReference: string;
  balanceMinor: number | null;
}

/** A row that could not be read: its line and what is wrong, in words. */
export interface StatementProblem {
  line: number;
  message: string;
}

/** The narration as compared: upper case, runs of white space as one space, trimmed. */
export const normaliseNarration = (text: string): string => text.toUpperCase().replace(/\s+/g, ' ').trim();

/**
 * Each credit's fingerprint: sha256 of the bank code, value date, amount, normalised narration, balance
 * and its occurrence among identical credits of the file (1 for the first). The same statement imported
 * again gives the same fingerprints, so nothing is added; two identical credits in one file (two payers
 * sending the same amount with the same narration on one day, no balance column) stay two lines.
 */
export function fingerprintCredits(bankCode: string, credits: readonly StatementCredit[]): string[] {
  const seen = new Map<string, number>();
  return credits.map((credit) => {
    const identity = [
      bankCode.toUpperCase(),
      credit.valueDate,
      String(credit.amountMinor),
      normaliseNarration(credit.narration),
      credit.balanceMinor === null ? '' : String(credit.balanceMinor),
    ].join('\n');
    const occurrence = (seen.get(identity) ?? 0) + 1;
    seen.set(identity, occurrence);
    return createHash('sha256').update(`${identity}\n${occurrence}`).digest('hex');
  });
}

/** What a credit does to the payment it names: the exact amount pays it, any other amount holds it for review. */
export const outcomeForCredit = (creditMinor: number, chargedMinor: number): 'paid' | 'amount_mismatch' =>
  creditMinor === chargedMinor ? 'paid' : 'amount_mismatch';

export interface StatementLineRow {
  id: string;
  import_id: string;
  bank_code: string;
  line_number: number;
  value_date: string;
  amount_minor: number;
  narration: string;
  bank_reference: string;
  balance_minor: number | null;
  status: StatementLineStatus;
  payment_reference: string | null;
  attempt_id: string | null;
  reason: string;
  resolution_note: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** What an import did with its rows (kept on the import, shown to the operator, printed by the CLI). */
export interface ImportCounts {
  /** Data rows read. */
  lines: number;
  /** Credit rows among them (debits and rows without an amount are left out). */
  credits: number;
  matched: number;
  amount_mismatch: number;
  unmatched: number;
  /** Credits stored by an earlier import (or twice in this one): nothing done. */
  duplicates: number;
  /** Rows that could not be read or recorded. */
  errors: number;
}

export interface StatementImportRow extends ImportCounts {
  id: string;
  bank_code: string;
  file_name: string;
  file_sha256: string;
  imported_by: string;
  problems: StatementProblem[];
  /** Why an operator imported this file although the same file (by sha256) was imported before. */
  forced_reason: string | null;
  voided_at: Date | null;
  voided_by: string | null;
  void_reason: string | null;
  finished_at: Date | null;
  created_at: Date;
}
