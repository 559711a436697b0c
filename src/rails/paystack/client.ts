// Paystack's HTTP API as the adapter uses it: every call goes through providerCall (which tells a refused
// connection from a lost answer), with the secret key as a bearer token, and every answer is read as
// Paystack's envelope { status, message, data } or its error body { status:false, message, type, code }.
// Sources, as in docs/providers/paystack.md: [OAS] PaystackOSS/openapi dist/paystack.yaml, [SNIP]
// PaystackOSS/doc-code-snippets dist/, [OLD-ERR] https://developers.paystack.co/docs/errors.
import { field, providerCall, text } from '../provider-http.ts';
import { ProviderRefusedError } from '../types.ts';

export interface PaystackSettings {
  secretKey: string;
  /** https://api.paystack.co in production [OAS servers]; a stand-in's address in tests. */
  baseUrl: string;
  timeoutMs: number;
}

export interface PaystackAnswer {
  httpStatus: number;
  /** The envelope's `status`: true when Paystack did what was asked (a 200 may still carry a failed payment). */
  ok: boolean;
  message: string;
  /** The error body's `type` and `code` (validation_error / duplicate_reference ...) [OAS components.schemas.Error]. */
  type: string | null;
  code: string | null;
  data: unknown;
  /** The list endpoints' paging: { total, page, pageCount, ... } [OAS TransactionListResponse.meta]. */
  meta: unknown;
}

export class PaystackClient {
  private readonly baseUrl: string;

  constructor(private readonly settings: PaystackSettings) {
    this.baseUrl = settings.baseUrl.replace(/\/+$/, '');
  }

  /** Throws ProviderRefusedError (never reached Paystack) or ProviderNoAnswerError (maybe reached it); any HTTP answer is returned. */
  async call(method: 'GET' | 'POST', path: string, body?: Record<string, unknown>): Promise<PaystackAnswer> {
    const answer = await providerCall({
      method,
      url: `${this.baseUrl}${path}`,
      // Authorization: Bearer <secret key> [OAS components.securitySchemes.bearerAuth].
      headers: { authorization: `Bearer ${this.settings.secretKey}` },
      body,
      timeoutMs: this.settings.timeoutMs,
    });
    return {
      httpStatus: answer.status,
      ok: field(answer.json, 'status') === true,
      message: text(field(answer.json, 'message')) ?? (answer.text.slice(0, 200) || `HTTP ${answer.status}`),
      type: text(field(answer.json, 'type')),
      code: text(field(answer.json, 'code')),
      data: field(answer.json, 'data'),
      meta: field(answer.json, 'meta'),
    };
  }
}

/** 5xx is Paystack's own trouble and 429 its rate limit [OLD-ERR]: the request was not served, a retry may be. */
export const isServerTrouble = (answer: PaystackAnswer): boolean =>
  answer.httpStatus >= 500 || answer.httpStatus === 429;

/** 401: our secret key is wrong or revoked [OLD-ERR]: nothing about the payment, so never a decline. */
export const isAuthProblem = (answer: PaystackAnswer): boolean =>
  answer.httpStatus === 401 || answer.httpStatus === 403;

/** The duplicate_reference error of a reused reference [OAS TransactionInitializeBadRequestModel]. */
export const isDuplicateReference = (answer: PaystackAnswer): boolean =>
  answer.httpStatus === 400 && (answer.code === 'duplicate_reference' || /duplicate/i.test(answer.message));

/**
 * Paystack has no record of the reference. The spec answers 404 [OAS /transaction/verify/{reference},
 * /transfer/verify/{reference}]; integrators also report a 400 "Transaction reference not found", read
 * the same way.
 */
export const isNotFound = (answer: PaystackAnswer): boolean =>
  answer.httpStatus === 404 || (answer.httpStatus === 400 && /not found/i.test(answer.message));

/**
 * The error for an answer that is not a success: 5xx/429/401 are Paystack's or our side (another provider
 * may serve the payment); any other 4xx (or a 200 whose envelope says status:false) is Paystack refusing
 * this payment (a validation error about the payer's number, amount or account), so no failover.
 */
export function refusal(what: string, answer: PaystackAnswer): ProviderRefusedError {
  const declined = !isServerTrouble(answer) && !isAuthProblem(answer);
  const detail = [answer.code, answer.message].filter(Boolean).join(': ');
  return new ProviderRefusedError(
    `Paystack refused ${what} (HTTP ${answer.httpStatus}${detail ? `, ${detail}` : ''})`,
    answer.httpStatus,
    declined,
  );
}

/** An integer amount in pesewas from a Paystack field (refund events send it as a string [SNIP doc/payments/refunds/events.js]). */
export function amountOf(value: unknown): number | null {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) ? number : null;
}
