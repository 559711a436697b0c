// The values MTN MoMo's Open API puts on the wire and how ours map to them: amounts as strings of cedis,
// wallets as international MSISDNs without "+", reference ids as UUID v4, and the reason of a failure,
// which the docs show both as a plain string and as an object.
import { createHash } from 'node:crypto';

/** X-Reference-Id "Format - UUID… generated using UUID version 4" (https://momoapi.mtn.com/docs/services/collection/operations/requesttopay-POST). */
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * Our reference with MTN for an object: the one stored before the call, else one derived from our own id
 * (a hash shaped as a v4 UUID) so that a caller that did not store one still sends the same X-Reference-Id
 * every time, and a re-sent request meets MTN's 409 instead of charging twice.
 */
export function referenceIdFor(stored: string | null, ownId: string): string {
  if (stored) return stored;
  const hex = createHash('sha256').update(`mtn-momo:${ownId}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * "12.50" from 1250 pesewas, always with two decimals: request-to-pay and transfer take `amount` as a string
 * (https://momodeveloper.mtn.com/docs/services/collection/operations/requesttopay-referenceId-GET, schema
 * "amount: string"). Whether MTN Ghana accepts decimals is still to be confirmed with MTN
 * (docs/providers/mtn-momo.md §8.5); built from integers, never through a float.
 */
export function cedisString(amountMinor: number): string {
  if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0)
    throw new RangeError(`amount must be a positive whole number of pesewas (got ${amountMinor})`);
  return `${Math.floor(amountMinor / 100)}.${String(amountMinor % 100).padStart(2, '0')}`;
}

/** Longest amount string we read back (a wallet amount is a few digits; anything longer is not one). */
const AMOUNT_LENGTH_MAX = 20;

/**
 * Pesewas from the amount MTN reports, without floats: "12.50", "12.5", "12" or a JSON number (the portal's
 * own example shows `"amount": 100`, same page as above). Null when it is not an amount in pesewas.
 */
export function pesewasOf(value: unknown): number | null {
  const raw = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : null;
  if (!raw || raw.length > AMOUNT_LENGTH_MAX) return null;
  const match = /^(\d+)(?:\.(\d+))?$/.exec(raw);
  if (!match) return null;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > 2) return null; // a part of a pesewa: not an amount we could have asked for
  const minor = Number(match[1]) * 100 + Number(fraction.padEnd(2, '0'));
  return Number.isSafeInteger(minor) ? minor : null;
}

/**
 * 233XXXXXXXXX from our +233XXXXXXXXX: MSISDN "validated according to ITU-T E.164", and PAYER_NOT_FOUND's
 * advice "MSISDN format must include country code" (https://momodeveloper.mtn.com/content/html_widgets/TEcUW.html).
 */
export function msisdnOf(phone: string): string {
  if (!/^\+233\d{9}$/.test(phone)) throw new RangeError('phone must be a +233 mobile number');
  return phone.slice(1);
}

/**
 * The code of a failure reason, whichever shape it comes in: a plain string (`"reason":"NOT_ENOUGH_FUNDS"`,
 * https://momodevelopercommunity.mtn.com/product-updates/reason-for-some-failed-api-responses-updated-192) or the
 * swagger's ErrorReason object `{code, message}` (https://ericssondeveloperapi.portal.azure-api.net/docs/services/collection/operations/GetPaymentStatus).
 */
export function reasonCode(reason: unknown): string | null {
  if (typeof reason === 'string') return reason.trim() || null;
  if (reason && typeof reason === 'object') {
    const code = (reason as { code?: unknown }).code;
    if (typeof code === 'string' && code.trim()) return code.trim();
    const message = (reason as { message?: unknown }).message;
    if (typeof message === 'string' && message.trim()) return message.trim();
  }
  return null;
}

/**
 * The code in an error answer: the API's `{code, message}`, the token endpoint's `{error}`
 * (https://momoapi.mtn.com/docs/services/remittance/operations/CreateAccessToken) or the gateway's
 * `{statusCode, message}`. Callers branch on the HTTP status first; the code only refines it.
 */
export function errorCode(json: unknown): string | null {
  if (!json || typeof json !== 'object') return null;
  const body = json as { code?: unknown; error?: unknown; message?: unknown };
  for (const candidate of [body.code, body.error])
    if (typeof candidate === 'string' && candidate.trim()) return candidate.trim();
  return null;
}

/** Longest code we copy into our own records (MTN's are short upper-case words). */
const CODE_LENGTH_MAX = 64;

/** A code safe to store and show: upper-case letters, digits and underscores, cut to CODE_LENGTH_MAX. */
export function cleanCode(code: string | null): string | null {
  if (!code) return null;
  const clean = code
    .toUpperCase()
    .replace(/[^A-Z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, CODE_LENGTH_MAX);
  return clean || null;
}

/**
 * payerMessage and payeeNote: at most 160 characters and no special characters such as an apostrophe, or the
 * request is refused with 400 (https://momodevelopercommunity.mtn.com/errors-46/momo-api-common-errors-82).
 */
export const NOTE_LENGTH_MAX = 160;
export function noteText(text: string): string {
  return text
    .replace(/[^A-Za-z0-9 .,:_-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, NOTE_LENGTH_MAX);
}

/** Longest provider transaction id Sika stores (payment_attempts.provider_transaction_id, migration 033). */
export const TRANSACTION_ID_LENGTH_MAX = 100;

/**
 * MTN's financialTransactionId as we store and show it: digits in every example (`"financialTransactionId":
 * 23503452`, requesttopay-referenceId-GET), a string in the schema. Anything that is not a short id of letters,
 * digits, dots and dashes is dropped rather than cut, since a cut id names another transaction.
 */
export function transactionIdOf(value: string | null): string | null {
  return value && value.length <= TRANSACTION_ID_LENGTH_MAX && /^[A-Za-z0-9._-]+$/.test(value) ? value : null;
}
