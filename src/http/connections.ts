// What a connection may cost the server (issue 14, finding 8): the request head and the whole request
// must arrive in bounded time (408 with the error envelope otherwise), idle keep-alive connections close,
// and an error answered before the request body was read is sent only once the body has been drained
// (bounded), so a client that writes its whole body before reading still reads the 413 or 401 instead of
// a reset connection.
import type { Socket } from 'node:net';
import type { ServerOptions } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config/index.ts';

/** How often Node checks the headers and request deadlines (its default, 30 s, would let them overrun by that much). */
const DEADLINE_CHECK_INTERVAL_MS = 1_000;
/** At most this much of a refused body is read and dropped before the answer goes out... */
export const REFUSED_BODY_DRAIN_BYTES_MAX = 16 * 1_048_576;
/** ...for at most this long; past either bound the answer is sent and the connection closed. */
export const REFUSED_BODY_DRAIN_MS_MAX = 10_000;

export function serverOptions(config: Config): {
  requestTimeout: number;
  keepAliveTimeout: number;
  http: ServerOptions;
  clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => void;
} {
  return {
    requestTimeout: config.httpRequestTimeoutMs,
    keepAliveTimeout: config.httpKeepAliveTimeoutMs,
    http: { headersTimeout: config.httpHeadersTimeoutMs, connectionsCheckingInterval: DEADLINE_CHECK_INTERVAL_MS },
    clientErrorHandler: answerClientError,
  };
}

const CLIENT_ERRORS: Record<string, [number, string, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'REQUEST_TIMEOUT', 'The request did not arrive in time.'],
  HPE_HEADER_OVERFLOW: [
    431,
    'Request Header Fields Too Large',
    'HEADERS_TOO_LARGE',
    'The request headers are too large.',
  ],
};

/** Errors Node finds before a request reaches Fastify (deadlines, malformed HTTP): answered with the envelope, then closed. */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, code, message] = CLIENT_ERRORS[error.code ?? ''] ?? [
    400,
    'Bad Request',
    'INVALID_ARGUMENT',
    'The request is not valid HTTP.',
  ];
  const body = JSON.stringify({ error: { code, message } });
  // Only when nothing has been written yet: a response already under way cannot be followed by another.
  if (socket.writable && socket.bytesWritten === 0) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroySoon();
}

/**
 * Reads and drops the rest of a request body the answer does not need (bounded), so the answer is sent
 * after the client has finished writing. Without this, a close right after an early 413 resets the
 * connection while the client is still writing, and the client never sees the answer.
 */
export function drainRefusedBody(request: FastifyRequest): Promise<void> {
  const raw = request.raw;
  if (raw.complete || raw.destroyed || raw.readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    let received = 0;
    const finish = () => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', finish);
      raw.off('close', finish);
      raw.off('error', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > REFUSED_BODY_DRAIN_BYTES_MAX) finish();
    };
    const timer = setTimeout(finish, REFUSED_BODY_DRAIN_MS_MAX);
    raw.on('data', onData);
    raw.once('end', finish);
    raw.once('close', finish);
    raw.once('error', finish);
    raw.resume();
  });
}

/**
 * Every answer given before the body was read is an error thrown by a hook or a parser (auth, rate limits,
 * 413, 415; Fastify reads the body of a request with no route before answering 404): an onError hook runs
 * for those alone, so a success pays nothing for this.
 */
export function registerConnectionLimits(app: FastifyInstance): void {
  app.addHook('onError', async (request) => drainRefusedBody(request));
}
