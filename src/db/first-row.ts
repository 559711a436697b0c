// A lookup's answer: the one row a statement returns (by a key, RETURNING one row, a lock on one row), or
// null when it returns none.

/** The first row of `rows`, or null when there is none. */
export async function firstRow<Row>(rows: Promise<Row[]>): Promise<Row | null> {
  return (await rows)[0] ?? null;
}

/** One column of the first row of `rows`, or null when there is no row (or the column is null). */
export async function firstValue<Row, Column extends keyof Row>(
  rows: Promise<Row[]>,
  column: Column,
): Promise<NonNullable<Row[Column]> | null> {
  return (await rows)[0]?.[column] ?? null;
}
