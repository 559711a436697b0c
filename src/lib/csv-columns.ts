// CSV columns (issue 17 exports): what each column of a file holds and how a row becomes its cells. Typed:
// numbers are ours (integers, GHS decimals drawn from integer pesewas) and never escaped; text cells that a
// spreadsheet would read as a formula get a leading apostrophe (OWASP "CSV injection"). No I/O here; the HTTP
// reply that streams them is src/http/csv.ts.

export type CsvCell = string | number;

export interface CsvColumn<Row> {
  header: string;
  cell(row: Row): CsvCell;
}

/** A cell a spreadsheet would run as a formula (= + - @, or a tab or carriage return before one) gets a leading apostrophe. */
export function neutraliseFormula(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/** Pesewas as cedis with two decimals ("-12.05"), by digits alone: no floating point touches money. */
export function ghsDecimal(minor: number): string {
  if (!Number.isSafeInteger(minor)) throw new Error(`csv assertion failed: ${minor} pesewas is not a safe integer`);
  const digits = String(Math.abs(minor)).padStart(3, '0');
  return `${minor < 0 ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** Column builders: each says what its cells are. */
export const csvColumn = {
  /** Free text (names, references, statuses): neutralised. */
  text: <Row>(header: string, value: (row: Row) => string | null | undefined): CsvColumn<Row> => ({
    header,
    cell: (row) => neutraliseFormula(value(row) ?? ''),
  }),
  /** An integer (pesewas, counts). */
  integer: <Row>(header: string, value: (row: Row) => number | null | undefined): CsvColumn<Row> => ({
    header,
    cell: (row) => {
      const n = value(row);
      if (n === null || n === undefined) return '';
      if (!Number.isSafeInteger(n)) throw new Error(`csv assertion failed: ${header} ${n} is not an integer`);
      return n;
    },
  }),
  /** Pesewas shown as GHS with two decimals. */
  ghs: <Row>(header: string, minor: (row: Row) => number | null | undefined): CsvColumn<Row> => ({
    header,
    cell: (row) => {
      const n = minor(row);
      return n === null || n === undefined ? '' : ghsDecimal(n);
    },
  }),
  /** An instant, ISO 8601 in UTC (Africa/Accra is UTC all year). */
  timestamp: <Row>(header: string, value: (row: Row) => Date | string | null | undefined): CsvColumn<Row> => ({
    header,
    cell: (row) => {
      const at = value(row);
      return at === null || at === undefined ? '' : new Date(at).toISOString();
    },
  }),
};

/** A row as its cells, in the columns' order. */
export const cellsOf = <Row>(columns: readonly CsvColumn<Row>[], row: Row): CsvCell[] =>
  columns.map((column) => column.cell(row));
