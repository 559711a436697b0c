// Compressed responses for the payer page and its script (the page must load in under 50 KB on a
// phone). Brotli when the client takes it, else gzip, else identity; `vary: accept-encoding` always.
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

export type Encoding = 'br' | 'gzip' | 'identity';

/** Bodies smaller than this go out as they are: compressing them saves less than the header costs. */
const COMPRESS_MIN_BYTES = 512;
/** Brotli quality for pages made per request (fast), and for assets compressed once at startup (small). */
const BROTLI_QUALITY_DYNAMIC = 5;
const BROTLI_QUALITY_STATIC = 11;

/** The best encoding the request accepts (q=0 refuses), preferring br, then gzip. */
export function negotiateEncoding(header: string | string[] | undefined): Encoding {
  const accepted = new Map<string, number>();
  for (const part of String(header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name, q === undefined ? 1 : Number(q));
  }
  const weight = (name: string) => accepted.get(name) ?? accepted.get('*') ?? 0;
  if (weight('br') > 0) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return 'identity';
}

export function compress(body: Buffer, encoding: Encoding, quality: 'dynamic' | 'static'): Buffer {
  if (encoding === 'br') {
    return brotliCompressSync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: quality === 'static' ? BROTLI_QUALITY_STATIC : BROTLI_QUALITY_DYNAMIC,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      },
    });
  }
  if (encoding === 'gzip') return gzipSync(body, { level: quality === 'static' ? 9 : 6 });
  return body;
}

/** Sends a text body compressed for this request. */
export function sendCompressed(request: FastifyRequest, reply: FastifyReply, body: string): FastifyReply {
  const bytes = Buffer.from(body, 'utf8');
  reply.header('vary', 'accept-encoding');
  const encoding =
    bytes.length < COMPRESS_MIN_BYTES ? 'identity' : negotiateEncoding(request.headers['accept-encoding']);
  if (encoding !== 'identity') reply.header('content-encoding', encoding);
  return reply.send(compress(bytes, encoding, 'dynamic'));
}

/** A static asset compressed once, each encoding kept, served by the request's choice. */
export class PrecompressedAsset {
  private readonly bodies: Record<Encoding, Buffer>;
  constructor(source: string) {
    const bytes = Buffer.from(source, 'utf8');
    this.bodies = { identity: bytes, gzip: compress(bytes, 'gzip', 'static'), br: compress(bytes, 'br', 'static') };
  }

  send(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const encoding = negotiateEncoding(request.headers['accept-encoding']);
    reply.header('vary', 'accept-encoding');
    if (encoding !== 'identity') reply.header('content-encoding', encoding);
    return reply.send(this.bodies[encoding]);
  }

  size(encoding: Encoding): number {
    return this.bodies[encoding].length;
  }
}

/** A payer-facing page's sender under its content security policy: never cached, never framed, compressed. */
export const payerPageSender =
  (csp: string) =>
  (request: FastifyRequest, reply: FastifyReply, body: string, status = 200): FastifyReply => {
    reply
      .code(status)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', csp)
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin');
    return sendCompressed(request, reply, body);
  };
