// The WHERE of a keyset-paged list (the merchant API's sessions, refunds and events; the books' balance
// transactions): the caller's scope, the filters given, each with its numbered parameter, the keyset position
// (src/lib/list-paging.ts reads it from starting_after) and the LIMIT, the last parameter. One builder, so every
// list numbers its parameters and compares its keyset the same way.
import type { ListPosition } from '../lib/list-paging.ts';

/** Newest first (the API's lists) or oldest first (CSV exports); the keyset is read in that order. */
export type ListOrder = 'newest' | 'oldest';

/** The keyset's columns: the creation time, then the id that breaks its ties. */
export type KeysetColumns = readonly [createdAt: string, id: string];

/** The conditions of a list's WHERE, AND-ed, with their parameters numbered in the order they are added. */
export class ListWhere {
  readonly params: unknown[] = [];
  readonly #clauses: string[] = [];

  /** `scope`: the columns every row equals (its merchant and environment), `column = $n` each, in this order. */
  constructor(scope: Readonly<Record<string, unknown>>) {
    for (const [column, value] of Object.entries(scope)) this.add((n) => `${column} = $${n}`, value);
  }

  /** A condition on one parameter; `clause` is given that parameter's number. */
  add(clause: (n: number) => string, value: unknown): this {
    this.params.push(value);
    this.#clauses.push(clause(this.params.length));
    return this;
  }

  /** The created range, each bound when given: `column >= from`, then `column < before`. */
  created(column: string, range: { createdFrom?: Date; createdBefore?: Date }): this {
    if (range.createdFrom) this.add((n) => `${column} >= $${n}`, range.createdFrom);
    if (range.createdBefore) this.add((n) => `${column} < $${n}`, range.createdBefore);
    return this;
  }

  /** The rows after `position` in `order` (none given: the first page): `(created, id) < ($n, $n+1)` newest first, `>` oldest first. */
  after(columns: KeysetColumns, position: ListPosition | undefined, order: ListOrder = 'newest'): this {
    if (!position) return this;
    this.params.push(position.createdAt, position.id);
    const n = this.params.length;
    this.#clauses.push(`(${columns.join(', ')}) ${order === 'oldest' ? '>' : '<'} ($${n - 1}, $${n})`);
    return this;
  }

  /** Adds the LIMIT's parameter, the last one, and returns its placeholder. */
  limit(rows: number): string {
    this.params.push(rows);
    return `$${this.params.length}`;
  }

  /** The conditions, AND-ed. */
  get sql(): string {
    return this.#clauses.join(' AND ');
  }
}

/** The ORDER BY of a keyset's columns in `order`. */
export const keysetOrder = (columns: KeysetColumns, order: ListOrder = 'newest'): string =>
  columns.map((column) => (order === 'oldest' ? column : `${column} DESC`)).join(', ');
