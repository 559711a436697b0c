// What every operator console list shares: a search box and filters in a GET form, keyset paging on
// (timestamp, id) with an opaque `after` cursor, CONSOLE_PAGE_ROWS rows a page, and a CSV export of every row
// the same search and filters match (`format=csv`, streamed page by page through src/http/csv.ts).
//
// A list page: readListQuery(request.query, ['status', …]) → the store reads { q, filters, cursor, limit } with
// `(date_trunc('milliseconds', ts), id) < ($at, $id) ORDER BY date_trunc('milliseconds', ts) DESC, id DESC LIMIT $limit`
// (PostgreSQL keeps microseconds and the cursor a JavaScript Date's milliseconds: comparing the full value would
// skip or repeat rows of one millisecond) → pageOf() for the page, allRowsOf() for CSV;
// listToolbar() above the table and pagerNav() below it.
import type { FastifyReply } from 'fastify';
import { sendCsv } from '../../http/csv.ts';
import type { CsvColumn } from '../../lib/csv-columns.ts';
import type { WebSession } from '../auth.ts';
import type { PageOutcome, PageSend } from '../console.ts';
import { html, raw, type Html } from '../html.ts';

/** Rows on one page of a console list. */
export const CONSOLE_PAGE_ROWS = 50;
/** The longest search text read; the rest is ignored. */
export const CONSOLE_SEARCH_LENGTH_MAX = 100;
/** The longest `after` cursor taken (an encoded timestamp and id are far shorter). */
export const CONSOLE_CURSOR_LENGTH_MAX = 400;

/** A keyset position: the rows after the one with this timestamp and id, in the list's order. */
export interface ConsoleCursor {
  at: Date;
  id: string;
}

export interface ListQuery {
  q: string;
  cursor: ConsoleCursor | null;
  csv: boolean;
  /** The named filters that were given, each non-empty and at most CONSOLE_SEARCH_LENGTH_MAX characters. */
  filters: Record<string, string>;
}

/** The cursor as the `after` parameter carries it: base64url of "<ISO timestamp>|<id>". */
export const encodeCursor = (at: Date, id: string): string =>
  Buffer.from(`${at.toISOString()}|${id}`, 'utf8').toString('base64url');

/** The position an `after` parameter names, or null when it is absent or not one of ours (the first page). */
export function decodeCursor(value: unknown): ConsoleCursor | null {
  if (typeof value !== 'string' || value === '' || value.length > CONSOLE_CURSOR_LENGTH_MAX || !/^[\w-]+$/.test(value))
    return null;
  const text = Buffer.from(value, 'base64url').toString('utf8');
  const bar = text.indexOf('|');
  if (bar < 0) return null;
  const at = new Date(text.slice(0, bar));
  const id = text.slice(bar + 1);
  if (Number.isNaN(at.getTime()) || id === '' || id.length > 200) return null;
  return { at, id };
}

const textParam = (value: unknown): string =>
  typeof value === 'string' ? value.trim().slice(0, CONSOLE_SEARCH_LENGTH_MAX) : '';

/** A list page's query string as Fastify hands it in (absent on a page shown again after a form). */
export type QueryString = Record<string, unknown> | undefined;

/** The search, the filters named, the cursor and whether CSV was asked for, from a list page's query string. */
export function readListQuery(query: QueryString, filterNames: readonly string[]): ListQuery {
  const source = query ?? {};
  const filters: Record<string, string> = {};
  for (const name of filterNames) {
    const value = textParam(source[name]);
    if (value) filters[name] = value;
  }
  return { q: textParam(source.q), cursor: decodeCursor(source.after), csv: source.format === 'csv', filters };
}

/** A search text as an ILIKE pattern matching it anywhere, its wildcards taken literally (escape character \). */
export const likePattern = (q: string): string => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

type Fetch<Row> = (cursor: ConsoleCursor | null, limit: number) => Promise<readonly Row[]>;

/** One page from the cursor on, and the cursor of the next page (null on the last one). */
export async function pageOf<Row>(
  fetch: Fetch<Row>,
  cursor: ConsoleCursor | null,
  key: (row: Row) => ConsoleCursor,
): Promise<{ rows: Row[]; next: string | null }> {
  const rows = [...(await fetch(cursor, CONSOLE_PAGE_ROWS + 1))];
  if (rows.length <= CONSOLE_PAGE_ROWS) return { rows, next: null };
  rows.length = CONSOLE_PAGE_ROWS;
  const last = key(rows[CONSOLE_PAGE_ROWS - 1]!);
  return { rows, next: encodeCursor(last.at, last.id) };
}

/** Every row, a page at a time (for a CSV export: memory stays one page whatever the list holds). */
export async function* allRowsOf<Row>(fetch: Fetch<Row>, key: (row: Row) => ConsoleCursor): AsyncIterable<Row> {
  let cursor: ConsoleCursor | null = null;
  for (;;) {
    const rows = await fetch(cursor, CONSOLE_PAGE_ROWS);
    yield* rows;
    if (rows.length < CONSOLE_PAGE_ROWS) return;
    cursor = key(rows[rows.length - 1]!);
  }
}

/** What a list's view shows around its rows: the search and filters, the next page's cursor, whether this is a later page, and the parameters its links keep. */
export interface ListPageState {
  q: string;
  filters: Record<string, string>;
  next: string | null;
  later: boolean;
  params: Record<string, string>;
}

/** The ListPageState of a list query's page, `next` its next page's cursor. */
export const listPageState = (list: ListQuery, next: string | null): ListPageState => ({
  q: list.q,
  filters: list.filters,
  next,
  later: list.cursor !== null,
  params: { q: list.q, ...list.filters },
});

/** A list's address with its parameters (empty ones left out). */
export function listHref(basePath: string, params: Record<string, string | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) search.set(name, value);
  const text = search.toString();
  return text ? `${basePath}?${text}` : basePath;
}

/** The search and filter form above the list at `path`, with the CSV export of what it shows. */
export const listToolbar = (
  path: string,
  list: ListPageState,
  options: { searchLabel: string; placeholder?: string; filters?: Html },
): Html =>
  html`<form method="get" action="${path}" class="card row" role="search"><div><label for="list-q">${options.searchLabel}</label><input id="list-q" name="q" type="search" value="${list.q}" maxlength="${CONSOLE_SEARCH_LENGTH_MAX}"${options.placeholder ? html` placeholder="${options.placeholder}"` : ''}></div>${options.filters ?? ''}<div><button type="submit">Search</button></div><div><a class="button secondary" href="${listHref(path, { ...list.params, format: 'csv' })}">Export CSV</a></div></form>`;

/** Below the list at `path`: "Next page" while more rows follow, "First page" once past the first. */
export function pagerNav(path: string, list: ListPageState): Html {
  if (!list.next && !list.later) return html``;
  return html`<nav aria-label="Pages" class="row" style="margin-top:.6rem">${list.later ? html`<a class="button secondary" href="${listHref(path, { ...list.params, after: null })}">First page</a>` : ''}${list.next ? html`<a class="button secondary" href="${listHref(path, { ...list.params, after: list.next })}">Next page</a>` : ''}</nav>`;
}

/** One filter above a list: "Any" first, then each option (a value shown as itself, or [value, text]), the chosen one selected. */
export const filterSelect = (
  name: string,
  label: string,
  options: readonly (string | readonly [string, string])[],
  chosen: string | undefined,
  id = `filter-${name}`,
): Html =>
  html`<div><label for="${id}">${label}</label><select id="${id}" name="${name}"><option value="">Any</option>${options.map(
    (option) => {
      const [value, text] = typeof option === 'string' ? [option, option] : option;
      return html`<option value="${value}"${raw(chosen === value ? ' selected' : '')}>${text}</option>`;
    },
  )}</select></div>`;

/** A console list's rows: a page of them for a query from a cursor on, and each row's cursor. */
export interface ListSource<Row> {
  fetch: (list: ListQuery) => Fetch<Row>;
  key: (row: Row) => ConsoleCursor;
}

/** A list's CSV export: the file's name and its columns. */
export interface ListCsv<Row> {
  filename: string;
  columns: readonly CsvColumn<Row>[];
}

/** Every row a list query's search and filters match, sent as its CSV file (the answer to `format=csv`). */
export const sendListCsv = <Row>(reply: FastifyReply, list: ListQuery, source: ListSource<Row>, csv: ListCsv<Row>) =>
  sendConsoleCsv(reply, csv.filename, csv.columns, allRowsOf(source.fetch(list), source.key));

/** The page of a list query's rows from its cursor on, and the next page's cursor. */
export const listRows = <Row>(list: ListQuery, source: ListSource<Row>) =>
  pageOf(source.fetch(list), list.cursor, source.key);

/** A list's answer to its GET: every row the search and filters match as a CSV file when `format=csv` asks, else one page, rendered. */
export async function listAnswer<Row>(
  reply: FastifyReply,
  list: ListQuery,
  source: ListSource<Row>,
  csv: ListCsv<Row>,
  render: (rows: Row[], state: ListPageState) => FastifyReply | Promise<FastifyReply>,
): Promise<FastifyReply> {
  if (list.csv) return sendListCsv(reply, list, source, csv);
  const { rows, next } = await listRows(list, source);
  return render(rows, listPageState(list, next));
}

/**
 * A list page that forms show again: its answer to a GET's query (the CSV file, or one page drawn by `draw`) and,
 * after a form, the list again with the form's outcome (its flash and status).
 */
export const listPage =
  <Row>(
    send: PageSend,
    list: {
      filterNames: readonly string[];
      source: ListSource<Row>;
      csv: ListCsv<Row>;
      draw: (session: WebSession, rows: Row[], state: ListPageState) => { title: string; body: Html };
    },
  ) =>
  (reply: FastifyReply, session: WebSession, query: QueryString, outcome: PageOutcome = {}): Promise<FastifyReply> =>
    listAnswer(reply, readListQuery(query, list.filterNames), list.source, list.csv, (rows, state) => {
      const { title, body } = list.draw(session, rows, state);
      return send(reply, session, title, body, outcome.flash, outcome.status);
    });

/** A closed-set filter's value when it is one of `values`, else null (no filter). */
export const closedSetValue = (values: readonly string[], value: string | undefined): string | null =>
  value && values.includes(value) ? value : null;

/** The select of a closed-set filter (values from `choices[name]`, shown with spaces for underscores), id f-<name>. */
export const closedSetFilter =
  <Name extends string>(choices: Readonly<Record<Name, readonly string[]>>, list: ListPageState) =>
  (name: Name, label: string): Html =>
    filterSelect(
      name,
      label,
      choices[name].map((value) => [value, value.replace(/_/g, ' ')] as const),
      list.filters[name],
      `f-${name}`,
    );

/** Sends every matching row as a CSV attachment. */
export const sendConsoleCsv = <Row>(
  reply: FastifyReply,
  filename: string,
  columns: readonly CsvColumn<Row>[],
  rows: AsyncIterable<Row>,
): FastifyReply => sendCsv(reply, { filename, columns, rows });
