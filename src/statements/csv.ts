// Reading a bank statement exported as CSV (docs/bank-statements.md): the header row is found by its
// column names (with the names Ghanaian banks' exports use, or the operator's own column mapping), each
// credit becomes a StatementCredit with its amount in integer pesewas, debits are left out, and a row that
// cannot be read is reported with its line number instead of stopping the import. The CSV syntax itself
// (quotes, commas and line breaks inside quoted fields, a byte order mark) is csv-parse's; reading one cell
// (an amount, a date, a Dr/Cr side) is cells.ts's.
import { parse, type CsvError } from 'csv-parse/sync';
import { SikaError } from '../lib/errors.ts';
import { parseAmountCell, parseStatementDate, sideOf } from './cells.ts';
import {
  COLUMN_MAPPING_LENGTH_MAX,
  NARRATION_LENGTH_MAX,
  STATEMENT_BYTES_MAX,
  STATEMENT_ROWS_MAX,
  type StatementCredit,
  type StatementProblem,
} from './model.ts';

export const STATEMENT_FIELDS = [
  'date',
  'description',
  'credit',
  'debit',
  'amount',
  'type',
  'balance',
  'reference',
] as const;
export type StatementField = (typeof STATEMENT_FIELDS)[number];

/** Each field's column: its header name (as the file has it) or its position, from 1. */
export type ColumnMapping = Partial<Record<StatementField, string>>;

/** Other names a column mapping may use for a field. */
const FIELD_SYNONYMS: Record<string, StatementField> = {
  narration: 'description',
  details: 'description',
  value_date: 'date',
};

/** The header row is looked for among the first rows (bank exports put a title, the account and the period above it). */
export const HEADER_SEARCH_ROWS_MAX = 20;

/**
 * The header names recognised for each field, after normaliseHeader (lower case, punctuation and currency
 * words dropped: "Credit (GHS)" and "CREDIT" are both "credit"), most preferred first: a statement with both
 * a value date and a transaction date is dated by its value date. Gathered from Ghanaian banks' statement
 * exports (GCB, Ecobank, Stanbic, Absa, Fidelity, CalBank, Zenith and others use these words).
 */
export const HEADER_ALIASES: Record<StatementField, readonly string[]> = {
  date: [
    'value date',
    'val date',
    'valuedate',
    'transaction date',
    'trans date',
    'tran date',
    'txn date',
    'posting date',
    'post date',
    'posted date',
    'booking date',
    'book date',
    'effective date',
    'date',
  ],
  description: [
    'narration',
    'narrative',
    'description',
    'transaction description',
    'transaction narration',
    'transaction details',
    'details',
    'particulars',
    'remarks',
    'memo',
    'payment details',
    'desc',
  ],
  credit: [
    'credit',
    'credits',
    'credit amount',
    'credit amt',
    'cr',
    'cr amount',
    'cr amt',
    'amount cr',
    'deposit',
    'deposits',
    'lodgement',
    'lodgements',
    'lodgment',
    'money in',
    'paid in',
    'amount credited',
    'receipts',
  ],
  debit: [
    'debit',
    'debits',
    'debit amount',
    'debit amt',
    'dr',
    'dr amount',
    'dr amt',
    'amount dr',
    'withdrawal',
    'withdrawals',
    'money out',
    'paid out',
    'amount debited',
    'payments',
  ],
  amount: ['amount', 'transaction amount', 'txn amount', 'tran amount', 'amt'],
  type: [
    'dr cr',
    'cr dr',
    'debit credit',
    'credit debit',
    'd c',
    'c d',
    'dc',
    'cd',
    'type',
    'transaction type',
    'txn type',
    'tran type',
    'entry type',
    'indicator',
    'dr cr indicator',
  ],
  balance: [
    'balance',
    'running balance',
    'closing balance',
    'book balance',
    'ledger balance',
    'available balance',
    'balance amount',
    'bal',
  ],
  reference: [
    'reference',
    'ref',
    'ref no',
    'reference no',
    'reference number',
    'transaction reference',
    'trans ref',
    'txn ref',
    'customer reference',
    'payment reference',
    'cheque no',
    'cheque number',
    'chq no',
    'instrument no',
    'instrument number',
    'document no',
    'doc no',
    'transaction id',
    'trans id',
  ],
};

/** Words dropped from header names: currency markers ("Credit (GHS)", "Amount GH₵"). */
const HEADER_NOISE_WORDS = new Set(['ghs', 'ghc', 'gh', 'cedi', 'cedis']);

export function normaliseHeader(name: string): string {
  return name
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '' && !HEADER_NOISE_WORDS.has(word))
    .join(' ');
}

const unknownField = (field: string) =>
  new SikaError(
    'INVALID_ARGUMENT',
    `The column mapping names "${field}", which is not a field; use ${STATEMENT_FIELDS.join(', ')} (see docs/bank-statements.md).`,
  );

/**
 * A column mapping from its text form, `date=Txn Date,credit=Amount In` (a header name as the file has
 * it, any case, or a column's position from 1: `date=1,credit=4`). Empty text is no mapping.
 */
export function parseColumnMapping(text: string): ColumnMapping {
  const mapping: ColumnMapping = {};
  if (text.length > COLUMN_MAPPING_LENGTH_MAX)
    throw new SikaError(
      'INVALID_ARGUMENT',
      `The column mapping is longer than ${COLUMN_MAPPING_LENGTH_MAX} characters.`,
    );
  for (const part of text.split(',')) {
    if (part.trim() === '') continue;
    const equals = part.indexOf('=');
    if (equals < 0)
      throw new SikaError(
        'INVALID_ARGUMENT',
        `The column mapping's "${part.trim()}" is not field=column (e.g. date=Txn Date,credit=Amount In).`,
      );
    const name = part.slice(0, equals).trim().toLowerCase();
    const column = part.slice(equals + 1).trim();
    const field = (STATEMENT_FIELDS as readonly string[]).includes(name)
      ? (name as StatementField)
      : FIELD_SYNONYMS[name];
    if (!field) throw unknownField(name);
    if (column === '') throw new SikaError('INVALID_ARGUMENT', `The column mapping gives no column for ${field}.`);
    if (mapping[field] !== undefined)
      throw new SikaError('INVALID_ARGUMENT', `The column mapping names ${field} twice.`);
    if (/^\d+$/.test(column) && (Number(column) < 1 || Number(column) > 1_000))
      throw new SikaError('INVALID_ARGUMENT', `Column ${column} for ${field}: columns are numbered from 1.`);
    mapping[field] = column;
  }
  return mapping;
}

// ---- the file ----

interface CsvRecord {
  /** The line it starts on, from 1. */
  line: number;
  cells: string[];
}

/** The text of an uploaded file: UTF-8, or UTF-16 with its byte order mark, else Windows-1252 (older exports). */
function decode(input: string | Buffer): string {
  if (typeof input === 'string') return input;
  if (input.length > STATEMENT_BYTES_MAX)
    throw new SikaError(
      'PAYLOAD_TOO_LARGE',
      `A statement file may be at most ${STATEMENT_BYTES_MAX / (1024 * 1024)} MB; split it by date.`,
    );
  if (input[0] === 0xff && input[1] === 0xfe) return new TextDecoder('utf-16le').decode(input);
  if (input[0] === 0xfe && input[1] === 0xff) return new TextDecoder('utf-16be').decode(input);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(input);
  } catch {
    return new TextDecoder('windows-1252').decode(input);
  }
}

const newlinesIn = (text: string) => text.split('\n').length - 1;
const leadingNewlines = (text: string) => /^\n*/.exec(text)![0].length;

function csvProblem(error: CsvError | undefined): string {
  if (error?.code === 'CSV_QUOTE_NOT_CLOSED')
    return 'a quote opened on this line is never closed, so the rest of the file could not be read';
  return `not readable as CSV (${error?.code ?? 'unknown error'})`;
}

/** The file's records with the line each starts on; a record csv-parse cannot read is a problem, not a failure. */
function readRecords(text: string, delimiter: string): { records: CsvRecord[]; problems: StatementProblem[] } {
  const problems: StatementProblem[] = [];
  let lastLine = 0;
  const rows = parse(text, {
    delimiter,
    bom: true,
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    raw: true,
    info: true,
    on_record: (record: string[], context: { lines: number }) => {
      lastLine = context.lines;
      return record;
    },
    on_skip: (error: CsvError | undefined, raw: string | undefined) => {
      problems.push({ line: lastLine + 1 + leadingNewlines(raw ?? ''), message: csvProblem(error) });
    },
  }) as unknown as { record: string[]; raw: string; info: { lines: number } }[];
  const records = rows.map(({ record, raw, info }) => {
    const body = raw.replace(/^\n+/, '').replace(/\n$/, '');
    return { line: info.lines - newlinesIn(body), cells: record };
  });
  return { records, problems };
}

type Columns = Partial<Record<StatementField, number>>;

const isPosition = (column: string) => /^\d+$/.test(column);

/** The fields a statement needs: a date, a credit (or a signed amount) and something to match on. */
function hasRequired(columns: Columns): boolean {
  return (
    columns.date !== undefined &&
    (columns.credit !== undefined || columns.amount !== undefined) &&
    (columns.description !== undefined || columns.reference !== undefined)
  );
}

/**
 * The columns of a header row: the mapping's first (by name or position), then the recognised names for
 * the other fields, each column taken by one field only. Null when a name in the mapping is not in the row.
 */
function columnsOfHeader(cells: readonly string[], mapping: ColumnMapping): Columns | null {
  const names = cells.map(normaliseHeader);
  const taken = new Set<number>();
  const columns: Columns = {};
  for (const field of STATEMENT_FIELDS) {
    const column = mapping[field];
    if (column === undefined) continue;
    const index = isPosition(column) ? Number(column) - 1 : names.indexOf(normaliseHeader(column));
    if (index < 0) return null;
    columns[field] = index;
    taken.add(index);
  }
  for (const field of STATEMENT_FIELDS) {
    if (columns[field] !== undefined) continue;
    for (const alias of HEADER_ALIASES[field]) {
      const index = names.findIndex((name, i) => name === alias && !taken.has(i));
      if (index >= 0) {
        columns[field] = index;
        taken.add(index);
        break;
      }
    }
  }
  // Credit and debit columns win over a signed amount found by name; a mapped amount wins over credit found by name.
  if (mapping.amount !== undefined && mapping.credit === undefined) {
    delete columns.credit;
    delete columns.debit;
  } else if (columns.credit !== undefined && mapping.amount === undefined) {
    delete columns.amount;
    if (mapping.type === undefined) delete columns.type;
  }
  return columns;
}

interface Layout {
  columns: Columns;
  /** The index of the first data record. */
  firstData: number;
  /** The header's width, when there is a header. */
  width: number | null;
  /** Each field's header name (or column number), for the operator. */
  names: Partial<Record<StatementField, string>>;
}

/**
 * Where the data starts and which column is which. With every needed field given by position the file
 * may have no header: rows before the first one with a date in the date column are taken for a title or
 * header and skipped. Otherwise the header is the first of the first rows that has the needed columns.
 */
function findLayout(records: readonly CsvRecord[], mapping: ColumnMapping): Layout | null {
  const byPosition: Columns = {};
  for (const field of STATEMENT_FIELDS)
    if (mapping[field] !== undefined && isPosition(mapping[field]!)) byPosition[field] = Number(mapping[field]) - 1;
  const mappedFields = STATEMENT_FIELDS.filter((field) => mapping[field] !== undefined);
  if (
    mappedFields.length > 0 &&
    mappedFields.every((field) => isPosition(mapping[field]!)) &&
    hasRequired(byPosition)
  ) {
    const firstData = records.findIndex((record) => parseStatementDate(record.cells[byPosition.date!] ?? '') !== null);
    if (firstData < 0) return null;
    const names = Object.fromEntries(mappedFields.map((field) => [field, `column ${mapping[field]}`]));
    return { columns: byPosition, firstData, width: null, names };
  }
  for (let i = 0; i < Math.min(HEADER_SEARCH_ROWS_MAX, records.length); i++) {
    const columns = columnsOfHeader(records[i]!.cells, mapping);
    if (columns && hasRequired(columns)) {
      const header = records[i]!.cells;
      const names = Object.fromEntries(
        Object.entries(columns).map(([field, index]) => [field, header[index]?.trim() || `column ${index + 1}`]),
      );
      return { columns, firstData: i + 1, width: header.length, names };
    }
  }
  return null;
}

function noLayout(mapping: ColumnMapping): SikaError {
  const mapped = STATEMENT_FIELDS.filter((field) => mapping[field] !== undefined && !isPosition(mapping[field]!));
  const missing =
    mapped.length > 0
      ? ` with the column${mapped.length > 1 ? 's' : ''} ${mapped.map((field) => `"${mapping[field]}" (${field})`).join(', ')}`
      : '';
  return new SikaError(
    'INVALID_ARGUMENT',
    `No header row${missing} found in the first ${HEADER_SEARCH_ROWS_MAX} rows: a statement needs a date column, a credit (or amount) column and a narration (or reference) column. ` +
      'Name them with a column mapping, e.g. date=Txn Date,credit=Amount In,description=Details (docs/bank-statements.md lists the names recognised).',
  );
}

export interface ParsedStatement {
  /** Data rows read (after the header; blank rows left out). */
  lines: number;
  credits: StatementCredit[];
  /** Debit rows, left out. */
  debits: number;
  /** Rows with no amount (an opening or closing balance, a title), left out. */
  withoutAmount: number;
  problems: StatementProblem[];
  /** Which column each field was read from (header name or "column N"). */
  columns: Partial<Record<StatementField, string>>;
}

/** The credits of a statement file (see the module comment); a file with no recognisable header is an INVALID_ARGUMENT. */
export function parseStatementCsv(input: string | Buffer, options: { columns?: ColumnMapping } = {}): ParsedStatement {
  const mapping = options.columns ?? {};
  if (typeof input === 'string' && Buffer.byteLength(input) > STATEMENT_BYTES_MAX)
    throw new SikaError(
      'PAYLOAD_TOO_LARGE',
      `A statement file may be at most ${STATEMENT_BYTES_MAX / (1024 * 1024)} MB; split it by date.`,
    );
  // One line break (CR LF, LF or CR alike) so line numbers are right; NUL cannot be stored and means nothing here.
  const text = decode(input)
    .replace(/\r\n?/g, '\n')
    .replace(/\u0000/g, '');
  let read: { records: CsvRecord[]; problems: StatementProblem[] } | null = null;
  let layout: Layout | null = null;
  // Comma first; a file whose header only makes sense split on semicolons or tabs is read that way.
  for (const delimiter of [',', ';', '\t']) {
    read = readRecords(text, delimiter);
    layout = findLayout(read.records, mapping);
    if (layout) break;
  }
  if (!layout || !read) throw noLayout(mapping);
  const data = read.records.slice(layout.firstData);
  if (data.length > STATEMENT_ROWS_MAX)
    throw new SikaError(
      'INVALID_ARGUMENT',
      `The statement has ${data.length} rows; import at most ${STATEMENT_ROWS_MAX} at a time (split it by date).`,
    );

  const { columns, width } = layout;
  const result: ParsedStatement = {
    lines: 0,
    credits: [],
    debits: 0,
    withoutAmount: 0,
    problems: [...read.problems],
    columns: layout.names,
  };
  const problem = (line: number, message: string) => result.problems.push({ line, message });
  for (const { line, cells } of data) {
    if (cells.every((cell) => cell.trim() === '')) continue;
    result.lines++;
    const cell = (field: StatementField) => (columns[field] === undefined ? '' : (cells[columns[field]!] ?? '').trim());
    if (width !== null && cells.length > width && cells.slice(width).some((c) => c.trim() !== '')) {
      problem(
        line,
        `has ${cells.length} fields where the header has ${width} (an amount with a thousands comma must be in quotes)`,
      );
      continue;
    }
    let side: 'credit' | 'debit' | null = null;
    let amountMinor = 0;
    if (columns.credit !== undefined) {
      const credit = parseAmountCell(cell('credit'));
      const debit = parseAmountCell(cell('debit'));
      if (credit.kind === 'bad') {
        problem(line, `credit ${credit.message}`);
        continue;
      }
      if (debit.kind === 'bad' && !(credit.kind === 'amount' && credit.minor !== 0)) {
        problem(line, `debit ${debit.message}`);
        continue;
      }
      const creditMinor = credit.kind === 'amount' ? credit.minor : 0;
      const debitMinor = debit.kind === 'amount' ? debit.minor : 0;
      if (creditMinor < 0) {
        problem(line, `has a negative credit (${cell('credit')}); a reversal is not a payment`);
        continue;
      }
      if (creditMinor > 0 && debitMinor !== 0) {
        problem(line, 'has both a credit and a debit');
        continue;
      }
      if (creditMinor > 0) [side, amountMinor] = ['credit', creditMinor];
      else if (debitMinor !== 0) side = 'debit';
    } else {
      const amount = parseAmountCell(cell('amount'));
      if (amount.kind === 'bad') {
        problem(line, `amount ${amount.message}`);
        continue;
      }
      const signed = amount.kind === 'amount' ? amount.minor : 0;
      if (signed !== 0) {
        if (columns.type !== undefined) {
          const named = sideOf(cell('type'));
          if (!named) {
            problem(line, `type "${cell('type').slice(0, 20)}" is neither credit (CR) nor debit (DR)`);
            continue;
          }
          if (named === 'credit' && signed < 0) {
            problem(line, `is a credit with a negative amount (${cell('amount')})`);
            continue;
          }
          side = named;
        } else {
          side = signed > 0 ? 'credit' : 'debit';
        }
        amountMinor = Math.abs(signed);
      }
    }
    if (side === 'debit') {
      result.debits++;
      continue;
    }
    if (side === null) {
      result.withoutAmount++;
      continue;
    }
    const dateText = cell('date');
    const valueDate = parseStatementDate(dateText);
    if (!valueDate) {
      problem(
        line,
        dateText === ''
          ? 'a credit without a date'
          : `date "${dateText.slice(0, 30)}" is not a date (DD/MM/YYYY, YYYY-MM-DD or DD-MMM-YYYY)`,
      );
      continue;
    }
    let balanceMinor: number | null = null;
    if (columns.balance !== undefined) {
      const balance = parseAmountCell(cell('balance'));
      if (balance.kind === 'bad') {
        problem(line, `balance ${balance.message}`);
        continue;
      }
      balanceMinor = balance.kind === 'amount' ? balance.minor : null;
    }
    const narration = cell('description').replace(/\s+/g, ' ').slice(0, NARRATION_LENGTH_MAX);
    const bankReference = cell('reference').replace(/\s+/g, ' ').slice(0, NARRATION_LENGTH_MAX);
    result.credits.push({
      line,
      valueDate,
      amountMinor,
      narration: narration || bankReference,
      bankReference,
      balanceMinor,
    });
  }
  result.problems.sort((a, b) => a.line - b.line);
  return result;
}
