// Standard Webhooks signing (https://www.standardwebhooks.com): HMAC-SHA256 over `id.timestamp.body`
// with the endpoint secret (`whsec_` + base64 key), sent as `v1,<base64>`; several space-separated
// signatures during a secret rotation.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_VERSION = 'v1';
export const DEFAULT_TOLERANCE_S = 300;

function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('webhook secret is empty or not base64');
  return key;
}

export function sign(secret: string, id: string, timestampS: number, body: string): string {
  const digest = createHmac('sha256', secretKey(secret)).update(`${id}.${timestampS}.${body}`).digest('base64');
  return `${SIGNATURE_VERSION},${digest}`;
}

export function signatureHeader(secrets: readonly string[], id: string, timestampS: number, body: string): string {
  return secrets.map((secret) => sign(secret, id, timestampS, body)).join(' ');
}

export type WebhookErrorCode =
  | 'MISSING_HEADERS'
  | 'INVALID_TIMESTAMP'
  | 'TIMESTAMP_OUT_OF_TOLERANCE'
  | 'INVALID_SIGNATURE'
  | 'INVALID_PAYLOAD';

export class WebhookVerificationError extends Error {
  constructor(
    readonly code: WebhookErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

type HeaderBag = Record<string, string | string[] | undefined> | Headers;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * For merchants: checks a Sika webhook and returns the parsed event, or throws WebhookVerificationError.
 * Pass the raw body exactly as received (string or Buffer), the request headers and your endpoint secret.
 */
export function verifyWebhook<Event = { id: string; type: string; data: unknown }>(
  rawBody: string | Buffer,
  headers: HeaderBag,
  secret: string,
  options: { toleranceSeconds?: number; nowMs?: number } = {},
): Event {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError(
      'MISSING_HEADERS',
      'webhook-id, webhook-timestamp and webhook-signature are required',
    );
  if (!/^\d{1,12}$/.test(timestamp))
    throw new WebhookVerificationError('INVALID_TIMESTAMP', 'webhook-timestamp is not a Unix time in seconds');
  const toleranceS = options.toleranceSeconds ?? DEFAULT_TOLERANCE_S;
  const nowS = Math.floor((options.nowMs ?? Date.now()) / 1000);
  if (Math.abs(nowS - Number(timestamp)) > toleranceS) {
    throw new WebhookVerificationError(
      'TIMESTAMP_OUT_OF_TOLERANCE',
      `webhook-timestamp is more than ${toleranceS} s from now`,
    );
  }
  const body = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
  const expected = Buffer.from(sign(secret, id, Number(timestamp), body).slice(SIGNATURE_VERSION.length + 1), 'base64');
  const matched = signatures.split(' ').some((candidate) => {
    const [version, value] = candidate.split(',', 2);
    if (version !== SIGNATURE_VERSION || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matched)
    throw new WebhookVerificationError(
      'INVALID_SIGNATURE',
      'no signature matches: the body, timestamp or secret differs',
    );
  try {
    return JSON.parse(body) as Event;
  } catch {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'the body is not JSON');
  }
}
