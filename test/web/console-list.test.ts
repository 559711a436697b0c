// The console lists' shared paging (src/web/ops/console-list.ts): cursors survive a round trip and a forged one
// is the first page, search text is literal in ILIKE, pages hold CONSOLE_PAGE_ROWS rows and CSV reads them all.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allRowsOf,
  CONSOLE_PAGE_ROWS,
  decodeCursor,
  encodeCursor,
  likePattern,
  listHref,
  pageOf,
  readListQuery,
  type ConsoleCursor,
} from '../../src/web/ops/console-list.ts';

interface Row {
  at: Date;
  id: string;
}
const rows: Row[] = Array.from({ length: 2 * CONSOLE_PAGE_ROWS + 7 }, (_, i) => ({
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, 200 - Math.floor(i / 2))),
  id: `r${String(1000 - i)}`,
}));
// Newest first, ties broken by id descending: the order the stores use.
const before = (row: Row, cursor: ConsoleCursor) =>
  row.at < cursor.at || (row.at.getTime() === cursor.at.getTime() && row.id < cursor.id);
const fetch = async (cursor: ConsoleCursor | null, limit: number) =>
  rows.filter((row) => !cursor || before(row, cursor)).slice(0, limit);
const key = (row: Row) => ({ at: row.at, id: row.id });

describe('console lists', () => {
  it('a cursor round-trips; a malformed, foreign or oversized one is the first page', () => {
    const at = new Date('2026-11-27T10:00:00.123Z');
    assert.deepEqual(decodeCursor(encodeCursor(at, 'pay_1')), { at, id: 'pay_1' });
    for (const bad of [
      undefined,
      '',
      'not base64!',
      Buffer.from('no-bar').toString('base64url'),
      Buffer.from('yesterday|x').toString('base64url'),
      'a'.repeat(401),
      42,
    ]) {
      assert.equal(decodeCursor(bad), null, String(bad));
    }
  });

  it('reads the search, the named filters only, the cursor and the CSV wish', () => {
    const q = readListQuery(
      {
        q: '  Ama  ',
        status: 'paid',
        other: 'x',
        environment: '',
        after: encodeCursor(new Date(0), 'a'),
        format: 'csv',
      },
      ['status', 'environment'],
    );
    assert.equal(q.q, 'Ama');
    assert.deepEqual(q.filters, { status: 'paid' });
    assert.equal(q.cursor?.id, 'a');
    assert.equal(q.csv, true);
    assert.equal(readListQuery({ q: 'x'.repeat(500) }, []).q.length, 100);
    assert.equal(readListQuery(undefined, []).csv, false);
  });

  it('search text is literal in ILIKE: % _ and \\ are escaped', () => {
    assert.equal(likePattern('50%_off\\'), '%50\\%\\_off\\\\%');
  });

  it('pages hold CONSOLE_PAGE_ROWS rows, follow the cursor without gaps or repeats, and the last has no next', async () => {
    const seen: string[] = [];
    let cursor: ConsoleCursor | null = null;
    for (let pages = 0; ; pages++) {
      assert.ok(pages < 5);
      const page: { rows: Row[]; next: string | null } = await pageOf(fetch, cursor, key);
      seen.push(...page.rows.map((r) => r.id));
      if (!page.next) {
        assert.equal(page.rows.length, 7);
        break;
      }
      assert.equal(page.rows.length, CONSOLE_PAGE_ROWS);
      cursor = decodeCursor(page.next);
    }
    assert.deepEqual(
      seen,
      rows.map((r) => r.id),
    );
  });

  it('allRowsOf yields every row once, in order', async () => {
    const all: string[] = [];
    for await (const row of allRowsOf(fetch, key)) all.push(row.id);
    assert.deepEqual(
      all,
      rows.map((r) => r.id),
    );
  });

  it('listHref keeps the parameters given and drops empty ones', () => {
    assert.equal(listHref('/ops', { q: 'a b', status: '', after: null }), '/ops?q=a+b');
    assert.equal(listHref('/ops', {}), '/ops');
  });
});
