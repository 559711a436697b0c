// CSV replies (issue 17, exports): an export route (src/http/routes/books/export-routes.ts), or a list route
// when the client asks for text/csv (Accept, listReply), answers a file streamed row by row from an async
// iterator of rows through csv-stringify (a maintained RFC 4180 writer: quoting, embedded quotes and
// newlines), so memory stays one page of rows whatever the export holds. The columns (typed cells, formula
// neutralising, GHS decimals) are src/lib/csv-columns.ts.
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { cellsOf, type CsvColumn } from '../lib/csv-columns.ts';
import { errorResponses } from './schemas.ts';

export { csvColumn, ghsDecimal, neutraliseFormula, type CsvColumn } from '../lib/csv-columns.ts';

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

/** The client asked for CSV: text/csv among the Accept header's media types (not refused with q=0). */
export function wantsCsv(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (typeof accept !== 'string') return false;
  return accept.split(',').some((item) => {
    const [type, ...params] = item.split(';').map((part) => part.trim().toLowerCase());
    return type === 'text/csv' && !params.some((param) => /^q=0(?:\.0*)?$/.test(param));
  });
}

/** A CSV file's rows: the header line, then one line per row of the iterator, as the reply reads them. */
export function csvStream<Row>(columns: readonly CsvColumn<Row>[], rows: AsyncIterable<Row>): Readable {
  async function* records() {
    for await (const row of rows) yield cellsOf(columns, row);
  }
  // bom: Excel reads UTF-8 only with it; CRLF as RFC 4180 says.
  const writer = stringify({
    header: true,
    columns: columns.map((column) => column.header),
    bom: true,
    record_delimiter: 'windows',
  });
  const source = Readable.from(records());
  // A failure mid-file (the database gone) destroys the writer and with it the reply: the client sees a cut
  // transfer, never a file that looks complete.
  source.on('error', (error) => writer.destroy(error));
  return source.pipe(writer);
}

/**
 * Sends rows as a CSV attachment. Everything that can be refused (the range, a cursor) must be checked
 * before this is called: once it runs the status is 200 and the rows stream.
 */
export function sendCsv<Row>(
  reply: FastifyReply,
  file: { filename: string; columns: readonly CsvColumn<Row>[]; rows: AsyncIterable<Row> },
): FastifyReply {
  if (!/^[\w.-]{1,120}\.csv$/.test(file.filename)) throw new Error(`csv assertion failed: file name ${file.filename}`);
  return reply
    .code(200)
    .type(CSV_CONTENT_TYPE)
    .header('content-disposition', `attachment; filename="${file.filename}"`)
    .header('cache-control', 'no-store')
    .send(csvStream(file.columns, file.rows));
}

/**
 * A list route's 200 in the API document: JSON only, so a generated client types the answer as the list.
 * The route still answers `Accept: text/csv` with a CSV file; that file is documented as its own text/csv
 * operation (src/http/routes/books/export-routes.ts), which a generator keeps apart from the JSON answer.
 */
export function listResponse(json: TSchema, exportPath: string) {
  return {
    description: `The list. The same rows as a CSV file: GET ${exportPath} (or this path with \`Accept: text/csv\`).`,
    content: { 'application/json': { schema: json } },
  };
}

/**
 * A list route's answer: the JSON list, or, when the client asks for text/csv, the same rows as a CSV file
 * (documented as its own operation, listResponse). Only the answer asked for is computed; `csv` checks what
 * can be refused (the range) before it returns, so a 400 comes before any row.
 */
export async function listReply<Row>(
  request: FastifyRequest,
  reply: FastifyReply,
  list: { json: () => unknown; columns: readonly CsvColumn<Row>[]; csv: () => CsvFile<Row> | Promise<CsvFile<Row>> },
): Promise<unknown> {
  if (!wantsCsv(request)) return list.json();
  const file = await list.csv();
  return sendCsv(reply, { filename: file.filename, columns: list.columns, rows: file.rows });
}

/** A CSV file's name and rows, as an export reads them for one request. */
export interface CsvFile<Row> {
  filename: string;
  rows: AsyncIterable<Row>;
}

type ListRequest<Query extends TSchema> = FastifyRequest<{ Querystring: Static<Query> }>;

/** A list route (listRoute): its schema without the answers, the list, its CSV file and how each is read. */
export interface ListRoute<Query extends TSchema, Row> {
  /**
   * The operation (operationId, tags, summary, description) and its querystring; its API-key security is
   * added where the key is required (documentApiKeySecurity).
   */
  schema: Omit<FastifySchema, 'response'> & { querystring: Query };
  /** The JSON answer: a named schema (with an $id). */
  list: TSchema;
  /** The export operation that documents the same rows as a CSV file (listResponse). */
  exportPath: string;
  columns: readonly CsvColumn<Row>[];
  /** A 404 besides a list's errors: a filter naming an object that is not the key's (e.g. a payout_id). */
  notFound?: true;
  json(request: ListRequest<Query>): unknown;
  csv(request: ListRequest<Query>): CsvFile<Row> | Promise<CsvFile<Row>>;
}

/**
 * GET `path`, a list that answers a CSV file of the same rows to `Accept: text/csv` (listReply), with its
 * answers in the document: the list (listResponse), and the errors of a list (a bad query, no key, too many).
 */
export function listRoute<Query extends TSchema, Row>(
  app: FastifyInstance,
  path: string,
  route: ListRoute<Query, Row>,
): void {
  app.get<{ Querystring: Static<Query> }>(
    path,
    {
      schema: {
        ...route.schema,
        response: {
          200: listResponse(Type.Ref(route.list.$id!), route.exportPath),
          ...(route.notFound ? errorResponses(400, 401, 404, 429) : errorResponses(400, 401, 429)),
        },
      },
    },
    async (request, reply) =>
      listReply(request, reply, {
        json: () => route.json(request),
        columns: route.columns,
        csv: () => route.csv(request),
      }),
  );
}
