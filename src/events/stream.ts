// The event stream for `sika listen` (issue 19): GET /api/v1/events/stream, Server-Sent Events of the
// calling Test key's merchant and environment, as they commit.
//
// WIRE FORMAT (what src/cli/listen.ts reads; change both together)
//   Request:  GET /api/v1/events/stream[?types=a,b][&after=<cursor>]
//             Authorization: Bearer ak_test_...         (Test keys only)
//             Last-Event-ID: <cursor>                    (optional; wins over ?after=)
//   Refusals, before any stream byte, are the JSON error envelope {error: {code, message, ...}}:
//             401 UNAUTHORIZED; 403 FORBIDDEN (a Live key); 400 INVALID_ARGUMENT (a malformed cursor or
//             types); 429 RATE_LIMITED (the key's request rate, or more than EVENT_STREAMS_PER_KEY_MAX
//             streams of the key open in this process) with Retry-After.
//   Response: 200, Content-Type: text/event-stream; charset=utf-8, Cache-Control: no-store,
//             Connection: close, X-Accel-Buffering: no. Then messages, each ended by an empty line:
//     retry: 1000                      once, first: the reconnection delay the server suggests (ms)
//     id: <cursor>                     with the retry line: the point the stream starts from (no event)
//
//     id: <cursor>                     one per event, in commit order (see below)
//     event: <event type>              e.g. checkout.session.completed
//     data: <webhook body>             the exact JSON body its webhooks carry, on one line
//
//     : heartbeat                      a comment every EVENT_STREAM_HEARTBEAT_MS (15 s)
//     id: <cursor>                     an id-only message (no event, no data): the cursor moved past
//                                      events the types filter left out; keep it as the last id
//   <cursor> is opaque text (today `<digits>.<event id>` or `<digits>.`); never parse it.
//   Resuming: send the last id received (an event's or an id-only message's) as Last-Event-ID (or
//   ?after=) with the same types: the stream continues right after it, nothing skipped, nothing
//   repeated. Without a cursor the stream starts now: only events committed after the request.
//   The server ends the stream on shutdown or storage trouble (the response simply ends): reconnect
//   with the last id after the retry delay.
//
// ORDER, GAPS AND DUPLICATES. events.created_at is taken before the writing transaction commits, and
// concurrent transactions commit out of order, so a cursor on (created_at, id), or on any sequence, can
// pass an event that commits later with a smaller value: that event would never be streamed. Instead each
// event records its writing transaction's id (events.xact_id, migration 026), and a poll reads only the
// events of transactions older than the oldest one still running (pg_snapshot_xmin of the statement's
// snapshot): all of those have ended, so no event can ever appear below that line later. In (xact_id, id)
// order, a cursor therefore never has an event inserted behind it: no gaps, and resuming after the cursor
// repeats nothing. The price: an event waits until every transaction that started before its own has
// ended (normally milliseconds; a long-running transaction anywhere on the server holds the stream back
// until it ends). A lookback window with dedupe was the alternative; it needs a bound on how late a
// commit can be, which PostgreSQL does not give, and remembered ids per client to drop repeats.
// Streams poll (EVENT_STREAM_POLL_MS) with one statement each, on no connection of their own.
import { PassThrough, type Readable } from 'node:stream';
import type { ApiPrincipal } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { errors, SikaError } from '../lib/errors.ts';
import * as store from './stream-store.ts';

export const EVENT_STREAM_POLL_MS = 250;
export const EVENT_STREAM_HEARTBEAT_MS = 15_000;
/** Streams one API key may have open at once, in one process. */
export const EVENT_STREAMS_PER_KEY_MAX = 5;
/** Events read per poll; a full batch is followed by the next poll at once. */
export const EVENT_STREAM_BATCH_ROWS_MAX = 100;
/** At shutdown, a client that does not read its stream has this long before its connection is cut. */
export const EVENT_STREAM_CLOSE_GRACE_MS = 1_000;
/** The reconnection delay the stream suggests to its client (the SSE retry field). */
export const EVENT_STREAM_RETRY_MS = 1_000;
export const EVENT_STREAM_TYPES_MAX = 20;
export const EVENT_TYPE_LENGTH_MAX = 100;
export const EVENT_STREAM_CURSOR_LENGTH_MAX = 120;

/** A position in the stream: after the event (xact, id); id '' is before every event of that transaction. */
export interface StreamCursor {
  xact: bigint;
  id: string;
}

const CURSOR_PATTERN = /^(\d{1,19})\.([A-Za-z0-9_]{0,100})$/;
const XACT_MAX = 2n ** 63n - 1n;
const TYPE_PATTERN = /^[a-z0-9_.]+$/;

export const formatCursor = (cursor: StreamCursor) => `${cursor.xact}.${cursor.id}`;

/** A cursor sent back by a client (Last-Event-ID or ?after=); 400 when it is not one the stream gave. */
export function parseCursor(text: string, field: string): StreamCursor {
  const match = CURSOR_PATTERN.exec(text.trim());
  const xact = match ? BigInt(match[1]!) : -1n;
  if (!match || xact > XACT_MAX) {
    throw errors.invalidArgument(
      `${field} is not a cursor of this stream; send the last id the stream gave, or none to start from now.`,
      [{ field, message: 'not a stream cursor' }],
    );
  }
  return { xact, id: match[2]! };
}

/** `types=a,b` as a list; 400 for an empty, malformed or over-long list. */
export function parseTypes(text: string | undefined): string[] | null {
  if (text === undefined) return null;
  const types = [...new Set(text.split(',').map((t) => t.trim()))];
  if (
    types.length > EVENT_STREAM_TYPES_MAX ||
    types.some((t) => t.length === 0 || t.length > EVENT_TYPE_LENGTH_MAX || !TYPE_PATTERN.test(t))
  ) {
    throw errors.invalidArgument(
      `types is a comma-separated list of at most ${EVENT_STREAM_TYPES_MAX} event types, e.g. checkout.session.completed,refund.succeeded.`,
      [{ field: 'types', message: 'not a list of event types' }],
    );
  }
  return types;
}

export interface StreamRequest {
  types: string[] | null;
  /** Where to resume; null starts from now. */
  after: StreamCursor | null;
}

export interface StreamOptions {
  pollMs: number;
  heartbeatMs: number;
  perKeyMax: number;
  batchRowsMax: number;
}

const defaultOptions: StreamOptions = {
  pollMs: EVENT_STREAM_POLL_MS,
  heartbeatMs: EVENT_STREAM_HEARTBEAT_MS,
  perKeyMax: EVENT_STREAMS_PER_KEY_MAX,
  batchRowsMax: EVENT_STREAM_BATCH_ROWS_MAX,
};

interface StartSnapshot {
  text: string;
  xmax: bigint;
}

type Principal = Pick<ApiPrincipal, 'merchantId' | 'environment' | 'apiKeyId'>;

/** The stream is for Test keys only: 403 for a Live key. */
export function assertStreamAllowed(principal: Pick<ApiPrincipal, 'environment'>): void {
  if (principal.environment !== 'test') {
    throw errors.forbidden(
      'The event stream is for Test keys only (sika listen forwards Test events to a local server); Live events reach you by webhook, and GET /api/v1/events lists them.',
    );
  }
}

/** The open streams of one app: opened by the route, all ended (and their last polls awaited) by closeAll. */
export class EventStreams {
  private readonly open = new Set<OpenStream>();
  private readonly perKey = new Map<string, number>();
  private closing = false;
  private readonly options: StreamOptions;

  constructor(
    private readonly db: Queryable,
    options: Partial<StreamOptions> = {},
  ) {
    this.options = { ...defaultOptions, ...options };
  }

  get size(): number {
    return this.open.size;
  }

  /** A new stream's body (SSE text); refusals (Live key, too many streams, shutting down) throw before anything is sent. */
  async start(principal: Principal, request: StreamRequest): Promise<Readable> {
    assertStreamAllowed(principal);
    if (this.closing) throw errors.unavailable('The server is shutting down; reconnect shortly.');
    const count = this.perKey.get(principal.apiKeyId) ?? 0;
    if (count >= this.options.perKeyMax) {
      throw new SikaError(
        'RATE_LIMITED',
        `At most ${this.options.perKeyMax} event streams may be open at once per API key; close one first.`,
        { retryAfterSeconds: 5 },
      );
    }
    this.perKey.set(principal.apiKeyId, count + 1);
    try {
      let cursor = request.after;
      let startSnapshot: StartSnapshot | null = null;
      if (!cursor) {
        // From now: after every event of a transaction that had ended, and not the ones this snapshot
        // already sees among the later transactions (committed before the request).
        const start = await store.streamStart(this.db);
        cursor = { xact: BigInt(start.xmin), id: '' };
        startSnapshot = { text: start.snapshot, xmax: BigInt(start.xmax) };
      }
      // closeAll may have run while this one waited for its snapshot: it would never end this stream.
      if (this.closing) throw errors.unavailable('The server is shutting down; reconnect shortly.');
      const stream = new OpenStream(this.db, this.options, principal, request.types, cursor, startSnapshot, () =>
        this.forget(stream, principal.apiKeyId),
      );
      this.open.add(stream);
      stream.begin();
      return stream.body;
    } catch (error) {
      this.release(principal.apiKeyId);
      throw error;
    }
  }

  /**
   * Ends every open stream (shutdown) and waits for their polls in flight; new streams are refused. A
   * response that a client does not read cannot finish (and the server would wait for it): cut after
   * EVENT_STREAM_CLOSE_GRACE_MS.
   */
  async closeAll(): Promise<void> {
    this.closing = true;
    const open = [...this.open];
    await Promise.all(open.map((s) => s.end()));
    await Promise.all(open.map((s) => s.finished(EVENT_STREAM_CLOSE_GRACE_MS)));
  }

  private forget(stream: OpenStream, apiKeyId: string): void {
    if (this.open.delete(stream)) this.release(apiKeyId);
  }

  private release(apiKeyId: string): void {
    const left = (this.perKey.get(apiKeyId) ?? 1) - 1;
    if (left <= 0) this.perKey.delete(apiKeyId);
    else this.perKey.set(apiKeyId, left);
  }
}

class OpenStream {
  readonly body = new PassThrough();
  private timer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private ended = false;
  /** Wakes a poll waiting for the client to read (drain) when the stream ends. */
  private wake: (() => void) | null = null;
  /** The last cursor the client was sent (an event's id or an id-only message). */
  private sent: string;

  constructor(
    private readonly db: Queryable,
    private readonly options: StreamOptions,
    private readonly principal: Principal,
    private readonly types: string[] | null,
    private cursor: StreamCursor,
    /** The snapshot of a stream started "now": events it sees were committed before the request. */
    private startSnapshot: StartSnapshot | null,
    private readonly onEnd: () => void,
  ) {
    this.sent = formatCursor(cursor);
    // The client went away (or the response was destroyed): stop polling.
    this.body.on('close', () => void this.end());
  }

  begin(): void {
    this.body.write(`retry: ${EVENT_STREAM_RETRY_MS}\nid: ${this.sent}\n\n`);
    this.heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs);
    this.schedule(0);
  }

  end(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      if (this.timer) clearTimeout(this.timer);
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.timer = this.heartbeat = null;
      this.wake?.();
      if (!this.body.writableEnded) this.body.end();
      this.onEnd();
    }
    return this.polling ?? Promise.resolve();
  }

  /** Resolves once the body is read to its end (or destroyed), destroying it after graceMs. */
  finished(graceMs: number): Promise<void> {
    if (this.body.destroyed || this.body.readableEnded) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.body.destroy(), graceMs);
      this.body.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private beat(): void {
    if (this.ended) return;
    const at = formatCursor(this.cursor);
    this.body.write(at === this.sent ? ': heartbeat\n\n' : `: heartbeat\n\nid: ${at}\n\n`);
    this.sent = at;
  }

  private schedule(delayMs: number): void {
    if (this.ended) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.polling = this.poll().finally(() => {
        this.polling = null;
      });
    }, delayMs);
  }

  private async poll(): Promise<void> {
    let full = false;
    try {
      const batch = await store.streamBatch(this.db, {
        merchantId: this.principal.merchantId,
        environment: this.principal.environment,
        types: this.types,
        after: { xact: this.cursor.xact.toString(), id: this.cursor.id },
        excludeVisibleIn: this.startSnapshot?.text ?? null,
        limit: this.options.batchRowsMax,
      });
      if (this.ended) return;
      let writable = true;
      for (const row of batch.rows) {
        this.cursor = { xact: BigInt(row.xact_id), id: row.id };
        this.sent = formatCursor(this.cursor);
        writable = this.body.write(`id: ${this.sent}\nevent: ${row.type}\ndata: ${row.payload}\n\n`);
      }
      full = batch.rows.length >= this.options.batchRowsMax;
      if (!full) {
        // Every event below the horizon has been read (or filtered out): later events can only come from
        // transactions at or above it, so the cursor moves up to it.
        const horizon = BigInt(batch.horizon);
        if (horizon > this.cursor.xact) this.cursor = { xact: horizon, id: '' };
      }
      // Past the start snapshot's xmax it sees no transaction as committed: no need to send it any more.
      if (this.startSnapshot && this.cursor.xact >= this.startSnapshot.xmax) this.startSnapshot = null;
      if (!writable && !this.ended) {
        await new Promise<void>((resolve) => {
          const done = () => {
            this.wake = null;
            this.body.off('drain', done);
            this.body.off('close', done);
            resolve();
          };
          this.wake = done;
          this.body.once('drain', done);
          this.body.once('close', done);
        });
      }
    } catch {
      // Storage trouble: end the stream; the client resumes from its last id.
      void this.end();
      return;
    }
    this.schedule(full ? 0 : this.options.pollMs);
  }
}
