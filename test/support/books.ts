// Shared by the books tests (test/books*.test.ts): Accra days around now and CSV files read back.
import { parse } from 'csv-parse/sync';
import { dayOf } from '../../src/books/model.ts';

const DAY_MS = 86_400_000;
export const today = () => dayOf(new Date());
export const dayShift = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
/** Yesterday to tomorrow in Accra: every row a test makes now, whenever the test runs. */
export const around = () => ({ from: dayShift(today(), -1), to: dayShift(today(), 1) });

/** A CSV file's rows by header (the BOM dropped). */
export function csvRows(body: string): Record<string, string>[] {
  return parse(body, { bom: true, columns: true, skip_empty_lines: true }) as Record<string, string>[];
}
