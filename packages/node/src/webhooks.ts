// Verifying Sika's webhooks (Standard Webhooks: HMAC-SHA256 over `id.timestamp.body` with the endpoint's
// `whsec_` secret, five minutes of tolerance) with the standardwebhooks package.
import { Webhook, WebhookVerificationError as StandardWebhookVerificationError } from 'standardwebhooks';
import type { paths, webhooks as documentedWebhooks } from './generated/schema.js';

type EventList = paths['/api/v1/events']['get']['responses'][200]['content']['application/json'];
/** An event as the API lists it: `{ id, type, created_at, environment, livemode, data }`. */
export type SikaEvent = EventList extends { data: (infer E)[] } ? E : { id: string; type: string; data: unknown };

type WebhookBodies = {
  [K in keyof documentedWebhooks]: documentedWebhooks[K] extends {
    post: { requestBody: { content: { 'application/json': infer B } } };
  }
    ? B
    : never;
}[keyof documentedWebhooks];
/**
 * What a webhook carries: one type per event type of the OpenAPI document's `webhooks`, told apart by
 * `type` (`if (event.type === 'checkout.session.completed') event.data.session...`).
 */
export type WebhookEvent = [WebhookBodies] extends [never] ? SikaEvent : WebhookBodies;

/** The request headers as Node (IncomingMessage.headers, Express, Fastify) or fetch (Headers) give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** A webhook that does not verify: missing headers, a timestamp out of tolerance, or no matching signature. */
export class WebhookVerificationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebhookVerificationError';
  }
}

const WEBHOOK_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function pick(headers: WebhookHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof (headers as Headers).get === 'function') {
    for (const name of WEBHOOK_HEADERS) {
      const value = (headers as Headers).get(name);
      if (value !== null) out[name] = value;
    }
    return out;
  }
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    const name = key.toLowerCase();
    if (!(WEBHOOK_HEADERS as readonly string[]).includes(name) || value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(' ') : value;
  }
  return out;
}

export const webhooks = {
  /**
   * Checks a webhook from Sika and returns its event; throws WebhookVerificationError when it does not verify.
   * Pass the raw body exactly as received (a string, Buffer or Uint8Array, never re-serialised JSON), the request's
   * headers and the endpoint's secret (`whsec_...`).
   */
  verify<Event = WebhookEvent>(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string): Event {
    const body =
      typeof rawBody === 'string'
        ? rawBody
        : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength).toString('utf8');
    let event: unknown;
    try {
      event = new Webhook(secret).verify(body, pick(headers));
    } catch (error) {
      if (error instanceof StandardWebhookVerificationError)
        throw new WebhookVerificationError(error.message, { cause: error });
      if (error instanceof SyntaxError) throw new WebhookVerificationError('the body is not JSON', { cause: error });
      throw error;
    }
    if (typeof event !== 'object' || event === null) throw new WebhookVerificationError('the body is not an event');
    return event as Event;
  },
};
