/** A page of a cursor-paged list: the API's `{ data, has_more }` (page on with `starting_after` = the last id). */
export interface CursorPage<T> {
  data: T[];
  has_more: boolean;
}

/**
 * Every item of a cursor-paged list, fetching pages as the loop asks for them:
 * `for await (const session of paginate(sika.sessions.list, { status: 'success' })) ...`.
 */
export async function* paginate<Q extends object, T extends { id: string }>(
  list: (query?: Q) => Promise<CursorPage<T>>,
  query?: Q,
): AsyncGenerator<T, void, undefined> {
  let startingAfter: string | undefined = (query as { starting_after?: string } | undefined)?.starting_after;
  for (;;) {
    const page = await list({
      ...query,
      ...(startingAfter === undefined ? {} : { starting_after: startingAfter }),
    } as Q);
    for (const item of page.data) yield item;
    const last = page.data.at(-1);
    if (!page.has_more || last === undefined) return;
    startingAfter = last.id;
  }
}
