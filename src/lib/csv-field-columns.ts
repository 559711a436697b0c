// CSV columns that are a row's own fields, headed by the field's name (or a header of their own): listed by name, in the file's order,
// beside the columns src/lib/csv-columns.ts builds from a value (a derived cell, a header of its own).
import { csvColumn, type CsvColumn } from './csv-columns.ts';

/** The fields of Row whose values are Value. */
type FieldOf<Row, Value> = { [Field in keyof Row]: Row[Field] extends Value ? Field : never }[keyof Row] & string;

/** Column builders for Row's fields, one column a field named, each headed by its field's name. */
export const fieldColumns = <Row>() => ({
  /** Free text fields (names, references, statuses): neutralised. */
  text: (...fields: FieldOf<Row, string | null | undefined>[]): CsvColumn<Row>[] =>
    fields.map((field) => csvColumn.text<Row>(field, (row) => row[field] as string | null | undefined)),
  /** Free text fields under headers of their own (`{ header: field }`, in the file's order): neutralised. */
  textAs: (headed: Record<string, FieldOf<Row, string | null | undefined>>): CsvColumn<Row>[] =>
    Object.entries(headed).map(([header, field]) =>
      csvColumn.text<Row>(header, (row) => row[field] as string | null | undefined),
    ),
  /** Integer fields (pesewas, counts). */
  integer: (...fields: FieldOf<Row, number | null | undefined>[]): CsvColumn<Row>[] =>
    fields.map((field) => csvColumn.integer<Row>(field, (row) => row[field] as number | null | undefined)),
  /** Instants, ISO 8601 in UTC. */
  timestamp: (...fields: FieldOf<Row, Date | string | null | undefined>[]): CsvColumn<Row>[] =>
    fields.map((field) => csvColumn.timestamp<Row>(field, (row) => row[field] as Date | string | null | undefined)),
});
