// What MTN MoMo's answers mean, shared by request-to-pay and transfer: the answer to a create (POST) and the
// result of a status query (GET). The HTTP status decides first; codes in the body only refine it.
import type { ProviderAnswer } from '../provider-http.ts';
import { ProviderRefusedError } from '../types.ts';
import { cleanCode, errorCode, reasonCode } from './wire.ts';

/**
 * Reasons that are the payer's or payee's own (a wallet that does not exist, no funds, a limit, a blocked
 * account): another provider would meet the same wallet, so they are declines, not outages
 * (https://momodevelopercommunity.mtn.com/product-updates/reason-for-some-failed-api-responses-updated-192;
 * https://momodeveloper.mtn.com/content/html_widgets/TEcUW.html; the 2018 "Common Error Codes", which
 * answers PAYER_NOT_FOUND, NOT_ENOUGH_FUNDS, PAYER_LIMIT_REACHED and PAYEE_NOT_FOUND with HTTP 500).
 */
export const WALLET_REASONS: ReadonlySet<string> = new Set([
  'PAYER_NOT_FOUND',
  'PAYEE_NOT_FOUND',
  'NOT_ENOUGH_FUNDS',
  'PAYER_LIMIT_REACHED',
  'PAYEE_NOT_ALLOWED_TO_RECEIVE',
  'SENDER_ACCOUNT_NOT_ACTIVE',
]);

export type CreateAnswer =
  /** 202: queued; 409 RESOURCE_ALREADY_EXIST: our X-Reference-Id was already accepted earlier (a re-send). */
  | { accepted: true; rawStatus: 'PENDING' | 'ALREADY_ACCEPTED' }
  /** Refused at once for a reason of the wallet's: nothing was created. */
  | { accepted: false; httpStatus: number; code: string };

/**
 * A POST /requesttopay or /transfer answer. 202 Accepted with an empty body, 409 for a duplicated reference id,
 * 400 for a request outside the specification, 401 credentials, 403 disbursement IP allow-list, 500 coded
 * reasons, 503 SERVICE_UNAVAILABLE (https://momodevelopercommunity.mtn.com/errors-46/momo-api-common-errors-82;
 * https://momodeveloper.mtn.com/api-documentation/callback "responds with 202 Accepted").
 * Throws ProviderRefusedError for anything that was certainly not accepted and is not the wallet's doing.
 */
export function createAnswer(answer: ProviderAnswer, what: string): CreateAnswer {
  const status = answer.status;
  if (status === 202 || (status >= 200 && status < 300)) return { accepted: true, rawStatus: 'PENDING' };
  if (status === 409) return { accepted: true, rawStatus: 'ALREADY_ACCEPTED' };
  const code = cleanCode(errorCode(answer.json));
  const detail = `MTN MoMo ${what}: HTTP ${status}${code ? ` ${code}` : ''}`;
  if (code && WALLET_REASONS.has(code)) return { accepted: false, httpStatus: status, code };
  // 400: the request broke a rule (number format, note length, characters, currency): sending the same payment
  // elsewhere is not the answer, so it is a decline.
  if (status === 400) throw new ProviderRefusedError(detail, status, true);
  // 401 after a fresh token, 403, 404, 429, 5xx, or anything else: not accepted, and not the payer's fault.
  throw new ProviderRefusedError(detail, status);
}

export interface MtnResult {
  /** PENDING, SUCCESSFUL, FAILED (or whatever else MTN says, upper-cased and cut short). */
  status: string;
  /** The failure reason's code, from a string or an {code, message} object. */
  reason: string | null;
  amount: unknown;
  currency: string | null;
  financialTransactionId: string | null;
  externalId: string | null;
}

/**
 * A GET /requesttopay/{referenceId} or /transfer/{referenceId} answer: 200 with the result (failures too:
 * "a failed request to pay will be returned with this status too",
 * https://momodeveloper.mtn.com/docs/services/collection/operations/requesttopay-referenceId-GET), 404 when the
 * reference is unknown ("Check if the original request… was successful with response code 202", common errors).
 * Returns null for 404; throws ProviderRefusedError for other non-200 answers (ask again later).
 */
export function resultAnswer(answer: ProviderAnswer, what: string): MtnResult | null {
  if (answer.status === 404) return null;
  if (answer.status !== 200 || !answer.json || typeof answer.json !== 'object') {
    const code = cleanCode(errorCode(answer.json));
    throw new ProviderRefusedError(
      `MTN MoMo ${what} status: HTTP ${answer.status}${code ? ` ${code}` : ''}`,
      answer.status,
    );
  }
  const body = answer.json as Record<string, unknown>;
  const text = (value: unknown): string | null =>
    typeof value === 'string' && value ? value : typeof value === 'number' ? String(value) : null;
  return {
    status: cleanCode(text(body.status)) ?? '',
    reason: cleanCode(reasonCode(body.reason)),
    amount: body.amount,
    currency: text(body.currency),
    // The portal's example shows it as a number (`"financialTransactionId": 23503452`); the schema says string.
    financialTransactionId: text(body.financialTransactionId),
    externalId: text(body.externalId),
  };
}

/** Statuses that are not final: PENDING (and CREATED in the payment operations' enum, GetPaymentStatus). */
export const WAITING_STATUSES: ReadonlySet<string> = new Set(['PENDING', 'CREATED']);
