// MTN MoMo collection: a request to pay pushes a prompt to the payer's MTN wallet, who approves it with the
// wallet PIN; we learn the outcome by asking (GET) or from an unsigned callback that only tells us to ask.
// Our X-Reference-Id is chosen (reference()) and stored by the caller before initiate(), so a request whose
// answer was lost is asked about, and a re-send of the same id meets 409 instead of a second charge.
import { randomUUID } from 'node:crypto';
import type { ProviderAnswer } from '../provider-http.ts';
import { APPROVAL_WINDOW_S_BY_NETWORK } from '../momo-approval-help.ts';
import {
  ProviderRefusedError,
  RailUnavailableError,
  type AttemptForRail,
  type CollectionRail,
  type Initiated,
  type StatusCheck,
} from '../types.ts';
import { createAnswer, resultAnswer, WAITING_STATUSES } from './answers.ts';
import type { MtnAdapterSettings } from './client.ts';
import { mtnFailureReason } from './failure-reasons.ts';
import { cedisString, msisdnOf, noteText, pesewasOf, referenceIdFor, transactionIdOf } from './wire.ts';

export const MTN_MOMO_PROVIDER = 'mtn_momo';

/** The payer has 5 minutes to approve before the request fails with COULD_NOT_PERFORM_TRANSACTION (https://momodeveloper.mtn.com/content/html_widgets/TEcUW.html). */
export const APPROVAL_WINDOW_S = APPROVAL_WINDOW_S_BY_NETWORK.mtn;

/** The query parameter of our callback URL that names the request's X-Reference-Id (the callback body may not carry it). */
export const CALLBACK_REFERENCE_PARAM = 'reference_id';

/**
 * The headers of a create (request to pay, transfer): our X-Reference-Id, and X-Callback-Url when we take
 * callbacks: "URL to the server where the callback should be sent" (requesttopay-POST), its host the one
 * registered for the API user (500 INVALID_CALLBACK_URL_HOST otherwise, common errors). The reference rides
 * in its query, since the callback body may not name it.
 */
export function createHeaders(referenceId: string, callbackUrl: string | null): Record<string, string> {
  const headers: Record<string, string> = { 'x-reference-id': referenceId };
  if (callbackUrl) {
    const url = new URL(callbackUrl);
    url.searchParams.set(CALLBACK_REFERENCE_PARAM, referenceId);
    headers['x-callback-url'] = url.toString();
  }
  return headers;
}

/**
 * The currency MTN expects in a target environment: "The currency used in Sandbox is EUR"
 * (https://ericssondeveloperapi.portal.azure-api.net/api-documentation/sandbox-use-case/); elsewhere it must be
 * the country's own ("Invalid currency – needs to match the target environment currency", common errors), GHS
 * for mtnghana, which is what our attempts carry.
 */
export const wireCurrency = (targetEnvironment: string, currency: string): string =>
  targetEnvironment === 'sandbox' ? 'EUR' : currency;

/**
 * POSTs a create (request to pay, transfer, refund) under our X-Reference-Id, with the callback when we take
 * callbacks. Each body opens with the money, the amount as a string of cedis in the currency the target
 * environment expects, followed by the operation's own fields.
 */
export function postCreate(
  settings: MtnAdapterSettings,
  path: string,
  referenceId: string,
  money: { amountMinor: number; currency: string },
  fields: Record<string, unknown>,
): Promise<ProviderAnswer> {
  const headers = createHeaders(referenceId, settings.callbackUrl);
  return settings.client.call({
    method: 'POST',
    path,
    headers,
    body: {
      amount: cedisString(money.amountMinor),
      currency: wireCurrency(settings.targetEnvironment, money.currency),
      ...fields,
    },
  });
}

export function mtnCollection(settings: MtnAdapterSettings): CollectionRail {
  const { client, targetEnvironment } = settings;
  const referenceOf = (attempt: AttemptForRail) => referenceIdFor(attempt.providerReference, attempt.reference);

  return {
    provider: MTN_MOMO_PROVIDER,
    serves: { rails: ['momo'], networks: ['mtn'] },
    // The Open API cannot prompt again (see resend()): the page never offers it.
    resendSupported: false,

    // "X-Reference-Id: Format - UUID… generated using UUID version 4" (requesttopay-POST).
    reference: () => randomUUID(),

    async initiate(attempt): Promise<Initiated> {
      if (attempt.rail !== 'momo' || attempt.network !== 'mtn' || !attempt.phone) {
        throw new RailUnavailableError('MTN MoMo collects from MTN Mobile Money wallets only');
      }
      // Body {amount (string), currency, externalId, payer {partyIdType MSISDN, partyId}, payerMessage, payeeNote}
      // (https://momoapi.mtn.com/docs/services/collection/operations/requesttopay-POST). externalId "is used for
      // reconciliation… will be included in transaction history report": our attempt id.
      const answer = await postCreate(settings, 'v1_0/requesttopay', referenceOf(attempt), attempt, {
        externalId: attempt.reference,
        payer: { partyIdType: 'MSISDN', partyId: msisdnOf(attempt.phone) },
        payerMessage: noteText(`Payment ${attempt.reference}`),
        payeeNote: noteText(attempt.reference),
      });
      const created = createAnswer(answer, 'request to pay');
      if (!created.accepted) {
        // A wallet reason refused at once (PAYER_NOT_FOUND, NOT_ENOUGH_FUNDS, ...): the same reasons as a FAILED
        // result, so the payer is told the same words.
        throw new ProviderRefusedError(
          `MTN MoMo declined the request to pay: ${created.code}`,
          created.httpStatus,
          true,
          mtnFailureReason(created.code) ?? null,
        );
      }
      // "The request will be in status PENDING until the transaction is authorized or declined by the payer or it
      // is timed out by the system" (requesttopay-POST): the payer approves on the phone, no code to type here.
      return {
        rawStatus: created.rawStatus,
        verificationRequired: false,
        instructions: { approval: 'phone_prompt', approve_within_s: APPROVAL_WINDOW_S, resend_supported: false },
      };
    },

    async status(attempt): Promise<StatusCheck> {
      const result = resultAnswer(
        await client.call({ method: 'GET', path: `v1_0/requesttopay/${referenceOf(attempt)}` }),
        'request to pay',
      );
      if (!result) return { rawStatus: 'NOT_FOUND', outcome: 'unknown' };
      if (WAITING_STATUSES.has(result.status)) return { rawStatus: result.status, outcome: 'pending' };
      if (result.status === 'FAILED') {
        // Every FAILED is a failure; the reason (NOT_ENOUGH_FUNDS, COULD_NOT_PERFORM_TRANSACTION, ...) is kept,
        // and told to the payer where MTN documents what it means (failure-reasons.ts).
        const failureReason = mtnFailureReason(result.reason);
        return {
          rawStatus: result.reason ? `FAILED:${result.reason}` : 'FAILED',
          outcome: 'failed',
          ...(failureReason ? { failureReason } : {}),
        };
      }
      if (result.status === 'SUCCESSFUL') {
        // "financialTransactionId: Financial transactionId from mobile money manager" (requesttopay-referenceId-GET):
        // the id the payer's SMS and MTN's support know; present on a success.
        const transactionId = transactionIdOf(result.financialTransactionId);
        const ids = transactionId ? { providerTransactionId: transactionId } : {};
        const amountMinor = pesewasOf(result.amount);
        const expectedCurrency = wireCurrency(targetEnvironment, attempt.currency);
        if (amountMinor === null)
          return { rawStatus: 'SUCCESSFUL:AMOUNT_UNREADABLE', outcome: 'manual_review', ...ids };
        if (amountMinor !== attempt.amountMinor || (result.currency !== null && result.currency !== expectedCurrency)) {
          return {
            rawStatus: `SUCCESSFUL:${result.amount}${result.currency ? ` ${result.currency}` : ''}`,
            outcome: 'amount_mismatch',
            amountMinor,
            ...ids,
          };
        }
        return { rawStatus: 'SUCCESSFUL', outcome: 'paid', amountMinor, ...ids };
      }
      // A status the docs do not list (PENDING | SUCCESSFUL | FAILED): a person looks at it.
      return { rawStatus: result.status || 'UNREADABLE', outcome: 'manual_review' };
    },

    async authorize() {
      // MTN asks the payer for the wallet PIN on the phone itself: there is never a code to submit here.
      throw new RailUnavailableError('MTN MoMo needs no code: the payer approves the prompt on the phone');
    },

    async resend() {
      // The Open API has no way to push the same prompt again, and a second request to pay would be a second
      // charge the payer could approve: the payer waits for the prompt to time out and starts a new payment.
      throw new RailUnavailableError(
        'MTN MoMo cannot re-send a payment prompt; wait for this one to end, then start a new payment',
      );
    },
  };
}
