// MTN MoMo refunds: the Disbursement product gives (part of) a paid request to pay back to the payer's wallet.
// POST /disbursement/v1_0/refund {amount, currency, externalId, payerMessage, payeeNote, referenceIdToRefund}
// under our X-Reference-Id, answered 202; GET /disbursement/v1_0/refund/{referenceId} tells PENDING, SUCCESSFUL
// or FAILED (docs/providers/mtn-momo.md §4; MTN-Group/MoMoAPIs_Javascript_sdk docs/disbursements/refundV1.Readme.md
// and getRefundStatus.Readme.md; https://developers.qodex.ai/momo-open-apis/momo-open-apis-sandbox/get-paid/refund-11
// [2nd]: "Refund utilizes the Disbursement Subscription Key"). Our X-Reference-Id is chosen (reference()) and
// stored before refund(), so a lost answer is asked about, and a re-send meets 409 instead of a second refund.
import { randomUUID } from 'node:crypto';
import type { ProviderAnswer } from '../provider-http.ts';
import type { RefundForRail, RefundOutcome, RefundRail } from '../refunds.ts';
import { positiveAmountMinor, ProviderRefusedError } from '../types.ts';
import { resultAnswer, WAITING_STATUSES, WALLET_REASONS } from './answers.ts';
import type { MtnAdapterSettings } from './client.ts';
import { MTN_MOMO_PROVIDER, postCreate } from './collection.ts';
import { cleanCode, errorCode, noteText, referenceIdFor, UUID_V4 } from './wire.ts';

/**
 * A POST /refund answer: 202 accepted, 409 RESOURCE_ALREADY_EXIST (our X-Reference-Id was accepted before: a
 * re-send after a lost answer). Refusals (common errors, https://momodevelopercommunity.mtn.com/errors-46/momo-api-common-errors-82):
 * a wallet's or account's reason (NOT_ENOUGH_FUNDS, PAYER_NOT_FOUND ..., which the 2018 docs answer with a 500)
 * and any other 4xx (400 a rule of the request; an unknown referenceIdToRefund) decline this refund; 401 after a
 * fresh token, 403 (the disbursement IP allow-list), 429 and 5xx are MTN's or our trouble and may pass.
 */
function createAnswer(answer: ProviderAnswer): 'accepted' | 'already_accepted' {
  const status = answer.status;
  if (status >= 200 && status < 300) return 'accepted';
  if (status === 409) return 'already_accepted';
  const code = cleanCode(errorCode(answer.json));
  const detail = `MTN MoMo refund: HTTP ${status}${code ? ` ${code}` : ''}`;
  if (code && WALLET_REASONS.has(code)) throw new ProviderRefusedError(detail, status, true);
  if (status === 401 || status === 403 || status === 429 || status >= 500)
    throw new ProviderRefusedError(detail, status);
  throw new ProviderRefusedError(detail, status, true);
}

export function mtnRefunds(settings: MtnAdapterSettings): RefundRail {
  const { client } = settings;
  const referenceOf = (refund: RefundForRail) => referenceIdFor(refund.providerReference || null, refund.refundId);

  const status = async (refund: RefundForRail): Promise<RefundOutcome> => {
    const referenceId = referenceOf(refund);
    // 200 with status and reason (failures too), 404 for a reference MTN never accepted (getRefundStatus.Readme.md;
    // common errors "RESOURCE NOT FOUND").
    const result = resultAnswer(await client.call({ method: 'GET', path: `v1_0/refund/${referenceId}` }), 'refund');
    if (!result) return { outcome: 'unknown' };
    // MTN's own id (financialTransactionId) comes with the result; until then none.
    const providerRefundId = result.financialTransactionId;
    if (WAITING_STATUSES.has(result.status)) return { outcome: 'pending', providerRefundId, rawStatus: result.status };
    if (result.status === 'SUCCESSFUL') return { outcome: 'succeeded', providerRefundId, rawStatus: result.status };
    if (result.status === 'FAILED')
      return {
        outcome: 'failed',
        providerRefundId,
        rawStatus: result.status,
        reason: (result.reason ?? 'refund_failed').toLowerCase(),
      };
    // Neither pending nor final: nothing can be recorded; the caller asks again later.
    throw new Error(`MTN MoMo reported an unknown refund status "${result.status.slice(0, 40)}" for ${referenceId}`);
  };

  return {
    provider: MTN_MOMO_PROVIDER,

    // X-Reference-Id: a UUID v4 per refund, stored by the caller before refund() (refundV1.Readme.md; common errors).
    reference: () => randomUUID(),

    async refund(refund): Promise<RefundOutcome> {
      // referenceIdToRefund is the request to pay's X-Reference-Id (our attempt's provider reference).
      if (!UUID_V4.test(refund.paymentProviderReference))
        throw new ProviderRefusedError('MTN MoMo refunds a request to pay by its UUID reference only', null, true);
      positiveAmountMinor(refund.amountMinor, 'refund amount');
      const answer = await postCreate(settings, 'v1_0/refund', referenceOf(refund), refund, {
        externalId: refund.refundId,
        // payerMessage goes to our history, payeeNote to the payer's (now the payee's) wallet history.
        payerMessage: noteText(`Refund ${refund.refundId}`),
        payeeNote: noteText(refund.reason ? `Refund: ${refund.reason}` : 'Refund'),
        referenceIdToRefund: refund.paymentProviderReference,
      });
      if (createAnswer(answer) === 'accepted')
        return { outcome: 'pending', providerRefundId: null, rawStatus: 'PENDING' };
      // Accepted before under this reference: where it stands now.
      const known = await status(refund);
      return known.outcome === 'unknown'
        ? { outcome: 'pending', providerRefundId: null, rawStatus: 'ALREADY_ACCEPTED' }
        : known;
    },

    status,
  };
}
