// What the cursor-paged lists share (GET /api/v1/sessions, /refunds, /events): the cursor named by
// starting_after (an id of the caller's own, else 400) turned into its keyset position, and the created range.
import type { ApiPrincipal } from './environment.ts';
import { errors } from './errors.ts';

/** A keyset position: the rows after it in (created_at, id) order. */
export interface ListPosition {
  createdAt: Date;
  id: string;
}

/**
 * The position of the row starting_after names; `find` looks it up among the caller's own rows only, so
 * another merchant's id (or an unknown one) is a 400, never a way to learn it exists.
 */
export async function cursorPosition(
  startingAfter: string | undefined,
  what: string,
  find: (id: string) => Promise<{ created_at: Date; id: string } | null>,
): Promise<ListPosition | undefined> {
  if (startingAfter === undefined) return undefined;
  const row = await find(startingAfter);
  if (!row) {
    throw errors.invalidArgument(
      `starting_after must be the id of ${what} of this key (the last id of the previous page).`,
      [{ field: 'starting_after', message: `is not ${what} of this merchant and environment` }],
    );
  }
  return { createdAt: row.created_at, id: row.id };
}

/** created_gte / created_lt as dates; 400 when the range is empty. */
export function createdRange(query: { created_gte?: string; created_lt?: string }): {
  createdFrom?: Date;
  createdBefore?: Date;
} {
  const createdFrom = query.created_gte ? new Date(query.created_gte) : undefined;
  const createdBefore = query.created_lt ? new Date(query.created_lt) : undefined;
  if (createdFrom && createdBefore && createdFrom >= createdBefore) {
    throw errors.invalidArgument('created_gte must be before created_lt.', [
      { field: 'created_lt', message: 'must be after created_gte' },
    ]);
  }
  return { createdFrom, createdBefore };
}

/** What every cursor-paged API list takes: the page size, the cursor, and the created range. */
export interface CursorListQuery {
  limit?: number;
  starting_after?: string;
  created_gte?: string;
  created_lt?: string;
}

/**
 * A list's window: the page size (`limitDefault` when none given), and the search every list starts from (the
 * caller's merchant and environment, the cursor's position found by `find` as in cursorPosition, the created
 * range); checked in that order, the cursor before the range.
 */
export async function listWindow(
  principal: Pick<ApiPrincipal, 'merchantId' | 'environment'>,
  query: CursorListQuery,
  list: { limitDefault: number; what: string; find: (id: string) => Promise<{ created_at: Date; id: string } | null> },
) {
  const limit = query.limit ?? list.limitDefault;
  const after = await cursorPosition(query.starting_after, list.what, list.find);
  const range = createdRange(query);
  return { limit, search: { merchantId: principal.merchantId, environment: principal.environment, ...range, after } };
}

/** A list's answer from `rows` read one past `limit`: the first `limit` as its items, `has_more` when there were more. */
export const listPage = <Row, Item>(rows: readonly Row[], limit: number, toItem: (row: Row) => Item) => ({
  object: 'list' as const,
  data: rows.slice(0, limit).map((row) => toItem(row)),
  has_more: rows.length > limit,
});

/** A console list's page as its store reads it: after the row (timestamp, id) the page before ended on (null: the first page), at most `limit` rows. */
export interface ConsolePageQuery {
  cursor: { at: Date; id: string } | null;
  limit: number;
}

/** The cursor's keyset parameters, (timestamp, id), both null on the first page. */
export const cursorParams = (cursor: ConsolePageQuery['cursor']): [at: Date | null, id: string | null] => [
  cursor?.at ?? null,
  cursor?.id ?? null,
];
