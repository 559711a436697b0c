// Paystack's webhooks: a POST of { event, data } signed with `x-paystack-signature`, the hex HMAC-SHA512 of
// the raw body keyed with the secret key [SNIP doc/payments/webhooks/verifying-transaction.js]. The raw bytes
// are hashed (re-serialised JSON can differ by a byte) and compared in constant time.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { field, text } from '../provider-http.ts';
import { amountOf } from './client.ts';

/** A SHA-512 digest in hex. */
const SIGNATURE_HEX_LENGTH = 128;

export function verifyWebhook(
  secretKey: string,
  rawBody: Buffer | string,
  signatureHeader: string | undefined,
): boolean {
  if (typeof signatureHeader !== 'string') return false;
  const given = signatureHeader.trim();
  // The samples compare lower-case hex (Java/C# lowercase theirs); upper case is accepted as the same bytes.
  if (given.length !== SIGNATURE_HEX_LENGTH || !/^[0-9a-fA-F]+$/.test(given)) return false;
  const expected = createHmac('sha512', secretKey).update(rawBody).digest();
  return timingSafeEqual(Buffer.from(given, 'hex'), expected);
}

export interface PaystackWebhook {
  kind: 'charge' | 'transfer' | 'refund' | 'other';
  event: string;
  /** Our reference: the charge's for charge.* and refund.* (transaction_reference), the transfer's for transfer.*. */
  reference: string | null;
  /**
   * The same for every delivery of one event, to drop repeats: Paystack's events carry no event id and are
   * retried until answered 200, so the key is built from the event, the reference and the object's id.
   */
  eventKey: string;
}

/**
 * Event names in Paystack's samples [SNIP doc/payments/webhooks/events.js, doc/payments/refunds/events.js]:
 * charge.success; transfer.success|failed|reversed; refund.pending|processing|processed|failed|needs-attention;
 * others (charge.dispute.*, subscription.*, invoice.*, ...) are 'other'.
 */
export function parseWebhook(body: unknown): PaystackWebhook {
  const event = text(field(body, 'event')) ?? '';
  const data = field(body, 'data');
  const kind: PaystackWebhook['kind'] =
    event.startsWith('charge.') && !event.startsWith('charge.dispute.')
      ? 'charge'
      : event.startsWith('transfer.')
        ? 'transfer'
        : event.startsWith('refund.')
          ? 'refund'
          : 'other';
  const reference = kind === 'refund' ? text(field(data, 'transaction_reference')) : text(field(data, 'reference'));
  // Refund events have no id until needs-attention and no refund_reference until processed; the amount tells
  // two partial refunds of one charge apart.
  const objectId =
    text(field(data, 'id')) ?? text(field(data, 'refund_reference')) ?? text(field(data, 'transfer_code')) ?? '';
  const amount = kind === 'refund' ? String(amountOf(field(data, 'amount')) ?? '') : '';
  return { kind, event, reference, eventKey: ['paystack', event, reference ?? '', objectId, amount].join(':') };
}
