// A CSV export's rows: a keyset-paged read run page after page (constant memory), each page starting after
// the last row of the one before, until a page comes back short.
import type { ListPosition } from '../lib/list-paging.ts';

/**
 * Every row `readPage` returns, read in pages of `pageRows`: the first page after no position, each next one
 * after `positionOf` the last row read.
 */
export function keysetPages<Row>(
  pageRows: number,
  readPage: (after: ListPosition | undefined) => Promise<Row[]>,
  positionOf: (row: Row) => ListPosition,
): AsyncIterable<Row> {
  return {
    async *[Symbol.asyncIterator]() {
      let after: ListPosition | undefined;
      for (;;) {
        const rows = await readPage(after);
        yield* rows;
        if (rows.length < pageRows) return;
        after = positionOf(rows.at(-1)!);
      }
    },
  };
}
