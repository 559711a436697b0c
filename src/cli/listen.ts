// sika listen --forward-to URL: streams the Test key's events from the server (GET /api/v1/events/stream,
// Server-Sent Events) and delivers each to a local URL, signed as a webhook would be (Standard Webhooks,
// src/events/signing.ts), one at a time and in the order the server sends them. On a lost connection it
// reconnects with backoff and Last-Event-ID (the last event handled), and drops an event it has already
// delivered if the server sends it again.
//
// The stream is read with Node's fetch and the small parser below rather than the `eventsource` package:
// the key goes in an Authorization header, reconnecting (its backoff and Last-Event-ID) is ours to decide,
// and the next event is read only once the previous delivery has answered, which keeps the order and lets
// TCP hold the server back while a slow receiver works.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { signatureHeader } from '../events/signing.ts';
import {
  API_OPTIONS,
  API_OPTIONS_HELP,
  ApiError,
  apiErrorOf,
  apiTarget,
  httpUrl,
  networkProblem,
  type ApiTarget,
} from './api-client.ts';
import { UsageError } from './common.ts';
import {
  describeSecrets,
  EndpointSecrets,
  fetchEndpointSecretsPatiently,
  fixedSecrets,
  type SigningSecrets,
} from './listen-secrets.ts';
import { WEBHOOK_EVENT_TYPES, isWebhookEventType } from './event-types.ts';

export const STREAM_PATH = '/api/v1/events/stream';
/** A delivery to the local URL gives up after this long (the server's own webhook timeout). */
export const LISTEN_DELIVERY_TIMEOUT_MS = 10_000;
/** Waits between reconnections: doubling from the first to the last. */
export const RECONNECT_DELAY_MIN_MS = 500;
export const RECONNECT_DELAY_MAX_MS = 10_000;
/** A stream that sends nothing this long is taken as lost: three of the server's heartbeats (every 15 s) missed. */
export const STREAM_IDLE_TIMEOUT_MS = 45_000;
/** How many delivered event ids are remembered to drop one the server sends again. */
export const DELIVERED_IDS_MAX = 10_000;
/** A receiver's answer shown with --print-json, at most. */
const ANSWER_EXCERPT_LENGTH_MAX = 500;
/** Bytes of a single SSE line or event that the parser accepts (a webhook body is far smaller). */
const SSE_EVENT_LENGTH_MAX = 4 * 1024 * 1024;

/** Answers the server gives that reconnecting cannot change: the command stops with the server's reason. */
const FATAL_STATUSES = [400, 401, 403, 404, 405];

export const LISTEN_HELP = `usage: sika listen --forward-to URL [--events TYPE,...] [--secret whsec_…] [--api-key KEY] [--base-url URL] [--print-json]

Streams your Test key's events from the Sika server and delivers each to URL as Sika's webhooks are sent:
the same JSON body, signed with Standard Webhooks headers (webhook-id, webhook-timestamp,
webhook-signature), one at a time in the order they happened. Prints a line per delivery with your
receiver's answer. When the connection drops it reconnects (every 0.5 s to 10 s) and resumes after the
last event it delivered, so none is missed and none is sent twice. Ctrl-C stops it.

options:
  --forward-to URL   where to deliver, e.g. http://localhost:3000/hooks
  --events TYPE,...  only these event types (default: all), from:
                     ${WEBHOOK_EVENT_TYPES.join(', ')}
  --secret whsec_…   the secret to sign with. Default: $SIKA_WEBHOOK_SECRET, else the signing secret of the
                     Test webhook endpoint paired with your key (the one the first run printed, or
                     \`sika merchant create\` showed), asked of the server and printed at start, so a receiver
                     verifying with it accepts these events as it accepts Sika's; a rotated secret is
                     followed (both sign during the overlap). A key without a Test webhook endpoint: a
                     new secret, printed at start.
${API_OPTIONS_HELP}
  --print-json       also print each event's body and the receiver's answer`;

export interface ListenOptions {
  target: ApiTarget;
  forwardTo: string;
  /** What each delivery is signed with (src/cli/listen-secrets.ts). */
  secrets: SigningSecrets;
  /** Event types to stream; empty: all. */
  types: readonly string[];
  printJson?: boolean;
  /** Stops listening (SIGINT in the command). */
  signal: AbortSignal;
  /** Where lines go: deliveries to out, connection news to err. */
  out?: (line: string) => void;
  err?: (line: string) => void;
  /** How long a delivery may take (default LISTEN_DELIVERY_TIMEOUT_MS). */
  deliveryTimeoutMs?: number;
  /** Called once per event delivered (or tried), after its line is printed. */
  onDelivery?: (delivery: Delivery) => void;
}

export interface Delivery {
  eventId: string;
  type: string;
  /** The receiver's HTTP status, or null when it could not be reached. */
  status: number | null;
  error: string | null;
  latencyMs: number;
}

export async function listenCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      ...API_OPTIONS,
      'forward-to': { type: 'string' },
      events: { type: 'string' },
      secret: { type: 'string' },
      'print-json': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || positionals[0] === 'help') {
    console.log(LISTEN_HELP);
    return;
  }
  if (positionals.length > 0) throw new UsageError(`listen takes no arguments (got ${positionals.join(' ')})`);
  if (!values['forward-to'])
    throw new UsageError('listen needs --forward-to URL, e.g. --forward-to http://localhost:3000/hooks');
  const forwardTo = httpUrl('--forward-to', values['forward-to']);
  const types = parseTypes(values.events);
  const target = apiTarget('listen', values);
  const given = values.secret ?? process.env.SIKA_WEBHOOK_SECRET;
  const fixed = given ? checkedSecret(given) : null;

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const secrets = fixed ? fixedSecrets(fixed) : await keySecrets(target, stop.signal);
    if (!secrets) return console.log('Stopped.');
    await listen({ target, forwardTo, secrets, types, printJson: values['print-json'], signal: stop.signal });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** The key's Test endpoint secrets (printed), or for a key without one a new secret (printed); null when stopped while waiting. */
async function keySecrets(target: ApiTarget, signal: AbortSignal): Promise<SigningSecrets | null> {
  const err = (line: string) => console.error(line);
  const fetched = await fetchEndpointSecretsPatiently(target, signal, err);
  if (fetched === null) return null;
  if (fetched.length === 0) {
    const secret = newSecret();
    console.log(`Your webhook signing secret: ${secret}`);
    console.log(
      '  (new for this run: your key has no Test webhook endpoint, whose secret would be used; give this one to your receiver)',
    );
    return fixedSecrets(secret);
  }
  for (const line of describeSecrets(fetched)) console.log(line);
  return new EndpointSecrets(target, fetched, err);
}

/** --events a,b: known types only, no repeats. */
export function parseTypes(value: string | undefined): string[] {
  if (value === undefined) return [];
  const types = [
    ...new Set(
      value
        .split(',')
        .map((type) => type.trim())
        .filter(Boolean),
    ),
  ];
  if (types.length === 0) throw new UsageError('--events takes a comma-separated list of event types');
  const unknown = types.filter((type) => !isWebhookEventType(type));
  if (unknown.length > 0)
    throw new UsageError(
      `--events: unknown event type${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the types are: ${WEBHOOK_EVENT_TYPES.join(', ')}`,
    );
  return types;
}

function checkedSecret(secret: string): string {
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.alloc(0);
  if (key.length === 0)
    throw new UsageError(
      '--secret (or SIKA_WEBHOOK_SECRET) must be whsec_ followed by base64, as Sika shows endpoint secrets',
    );
  return secret;
}

/** A new signing secret, shaped as Sika's endpoint secrets are (whsec_ and 24 random bytes in base64). */
export const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/**
 * One server-sent message: its id (the stream position to resume after, opaque) and its data (the webhook
 * body). A message with an id and no data moves the position only (the server's start point, or past
 * events the types filter left out): it is kept as the last id all the same.
 */
export interface StreamEvent {
  id: string | null;
  event: string | null;
  data: string | null;
}

/**
 * The SSE parser (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
 * feed it text as it arrives; it returns each complete event. Comments (":") are keep-alives; `retry` is
 * ignored (reconnect waits are ours). The id field is kept between events, as the spec says.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event: string | null = null;
  private id: string | null = null;
  private pendingId: string | null = null;
  private sawId = false;

  feed(text: string): StreamEvent[] {
    this.buffer += text;
    const out: StreamEvent[] = [];
    for (;;) {
      const end = this.buffer.search(/\r\n|\r|\n/);
      if (end < 0) break;
      // A lone \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (this.buffer[end] === '\r' && end === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (this.buffer.startsWith('\r\n', end) ? 2 : 1));
      const event = this.line(line);
      if (event) out.push(event);
    }
    if (this.buffer.length > SSE_EVENT_LENGTH_MAX)
      throw new Error(`the stream sent a line longer than ${SSE_EVENT_LENGTH_MAX} bytes`);
    return out;
  }

  private line(line: string): StreamEvent | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) {
      this.pendingId = value;
      this.sawId = true;
    }
    return null;
  }

  private dispatch(): StreamEvent | null {
    const movedId = this.sawId;
    if (this.sawId) this.id = this.pendingId === '' ? null : this.pendingId;
    this.sawId = false;
    const event =
      this.data.length > 0
        ? { id: this.id, event: this.event, data: this.data.join('\n') }
        : movedId
          ? { id: this.id, event: null, data: null }
          : null;
    this.data = [];
    this.event = null;
    return event;
  }
}

/** Remembers the last DELIVERED_IDS_MAX event ids, oldest forgotten first. */
export class RecentIds {
  private readonly ids = new Set<string>();
  constructor(private readonly max = DELIVERED_IDS_MAX) {}
  has(id: string): boolean {
    return this.ids.has(id);
  }
  add(id: string): void {
    this.ids.add(id);
    if (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value as string);
  }
}

/** Streams and delivers until the signal stops it; throws when the server refuses the stream for good. */
export async function listen(options: ListenOptions): Promise<void> {
  const out = options.out ?? ((line: string) => console.log(line));
  const err = options.err ?? ((line: string) => console.error(line));
  const delivered = new RecentIds();
  let lastEventId: string | null = null;
  let delayMs = RECONNECT_DELAY_MIN_MS;
  let connectedOnce = false;
  const url = `${options.target.baseUrl}${STREAM_PATH}${options.types.length > 0 ? `?types=${encodeURIComponent(options.types.join(','))}` : ''}`;

  while (!options.signal.aborted) {
    const connection = new AbortController();
    const abortConnection = () => connection.abort();
    options.signal.addEventListener('abort', abortConnection, { once: true });
    let idle: NodeJS.Timeout | undefined;
    const stillAlive = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () => connection.abort(new Error(`nothing received for ${STREAM_IDLE_TIMEOUT_MS / 1000} s`)),
        STREAM_IDLE_TIMEOUT_MS,
      );
    };
    let problem: string;
    let waitMs = 0;
    try {
      stillAlive();
      const res = await fetch(url, {
        headers: {
          authorization: `Bearer ${options.target.apiKey}`,
          accept: 'text/event-stream',
          ...(lastEventId !== null ? { 'last-event-id': lastEventId } : {}),
        },
        signal: connection.signal,
      });
      if (!res.ok) {
        const failure = apiErrorOf('GET', STREAM_PATH, res.status, await res.text());
        if (FATAL_STATUSES.includes(res.status)) throw failure;
        problem = failure.message;
        const retryAfterS = Number(res.headers.get('retry-after'));
        if (Number.isFinite(retryAfterS) && retryAfterS > 0)
          waitMs = Math.min(retryAfterS * 1000, RECONNECT_DELAY_MAX_MS);
      } else if (!res.body) {
        problem = 'the server answered without a body';
      } else {
        delayMs = RECONNECT_DELAY_MIN_MS;
        if (!connectedOnce) {
          const types = options.types.length > 0 ? options.types.join(', ') : 'all event types';
          out(
            `Ready! Forwarding Test events (${types}) from ${options.target.baseUrl} to ${options.forwardTo} (Ctrl-C to quit)`,
          );
        } else {
          err(`Reconnected${lastEventId !== null ? `, resuming after ${lastEventId}` : ''}`);
        }
        connectedOnce = true;
        const parser = new SseParser();
        const decoder = new TextDecoder();
        const reader = res.body.getReader();
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          stillAlive();
          for (const event of parser.feed(decoder.decode(chunk.value, { stream: true }))) {
            clearTimeout(idle); // a slow receiver is not a silent server
            const handled = await handle(event, options, delivered, out);
            if (handled !== null) lastEventId = handled;
            if (options.signal.aborted) break;
            stillAlive();
          }
          if (options.signal.aborted) break;
        }
        problem = 'the server closed the stream';
      }
    } catch (error) {
      if (options.signal.aborted) break;
      if (error instanceof ApiError) throw error;
      problem =
        connection.signal.aborted && connection.signal.reason instanceof Error
          ? connection.signal.reason.message
          : networkProblem(error);
    } finally {
      clearTimeout(idle);
      options.signal.removeEventListener('abort', abortConnection);
      connection.abort();
    }
    if (options.signal.aborted) break;
    waitMs = Math.max(waitMs, delayMs);
    err(`${connectedOnce ? 'Connection lost' : 'Cannot connect'} (${problem}); trying again in ${waitMs / 1000} s`);
    await sleep(waitMs, undefined, { signal: options.signal }).catch(() => {});
    delayMs = Math.min(delayMs * 2, RECONNECT_DELAY_MAX_MS);
  }
  out('Stopped.');
}

/** Delivers one streamed event unless it was delivered before; returns the stream id to resume after, or null. */
async function handle(
  event: StreamEvent,
  options: ListenOptions,
  delivered: RecentIds,
  out: (line: string) => void,
): Promise<string | null> {
  if (event.data === null) return event.id;
  let parsed: { id?: unknown; type?: unknown };
  try {
    parsed = JSON.parse(event.data) as typeof parsed;
  } catch {
    out(`${clock()}  (the stream sent something that is not an event: ${event.data.slice(0, 80)})`);
    return null;
  }
  const eventId = typeof parsed.id === 'string' ? parsed.id : event.id;
  if (!eventId) return null;
  if (delivered.has(eventId)) return event.id;
  const type = typeof parsed.type === 'string' ? parsed.type : (event.event ?? 'event');
  const delivery = await deliver(options, eventId, event.data);
  if (delivery.status === null && options.signal.aborted) return null; // stopped mid-delivery: not handled
  delivered.add(eventId);
  const answer = delivery.status !== null ? `${delivery.status}` : `error: ${delivery.error}`;
  out(`${clock()}  ${type.padEnd(28)}  ${eventId}  -> ${answer} (${delivery.latencyMs} ms)`);
  if (options.printJson) {
    out(event.data);
    if (delivery.body) out(`<- ${delivery.body}`);
  }
  options.onDelivery?.({
    eventId,
    type,
    status: delivery.status,
    error: delivery.error,
    latencyMs: delivery.latencyMs,
  });
  return event.id ?? eventId;
}

/** POSTs the exact body with Standard Webhooks headers; the receiver's status, or why there was none. */
async function deliver(
  options: ListenOptions,
  eventId: string,
  body: string,
): Promise<{ status: number | null; error: string | null; latencyMs: number; body: string }> {
  const secrets = await options.secrets.current();
  const timestampS = Math.floor(Date.now() / 1000);
  const timeoutMs = options.deliveryTimeoutMs ?? LISTEN_DELIVERY_TIMEOUT_MS;
  const started = performance.now();
  try {
    const res = await fetch(options.forwardTo, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'sika-cli-listen',
        'webhook-id': eventId,
        'webhook-timestamp': String(timestampS),
        'webhook-signature': signatureHeader(secrets, eventId, timestampS, body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), options.signal]),
    });
    const answer = await res.text().catch(() => '');
    return {
      status: res.status,
      error: null,
      latencyMs: Math.round(performance.now() - started),
      body: answer.slice(0, ANSWER_EXCERPT_LENGTH_MAX),
    };
  } catch (error) {
    const latencyMs = Math.round(performance.now() - started);
    const problem =
      error instanceof Error && error.name === 'TimeoutError'
        ? `timed out after ${timeoutMs / 1000} s`
        : networkProblem(error);
    return { status: null, error: problem, latencyMs, body: '' };
  }
}

/** Local time, 2026-11-24 21:00:01. */
function clock(now = new Date()): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${two(now.getMonth() + 1)}-${two(now.getDate())} ${two(now.getHours())}:${two(now.getMinutes())}:${two(now.getSeconds())}`;
}
