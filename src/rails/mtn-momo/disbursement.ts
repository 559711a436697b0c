// MTN MoMo disbursement: payouts to MTN wallets. The recipient check asks whether the wallet exists and is
// active and which name it is registered to (the caller compares names); the transfer is sent under our
// stored X-Reference-Id and followed by status queries, like a request to pay.
import { randomUUID } from 'node:crypto';
import type { ProviderAnswer } from '../provider-http.ts';
import type { PayoutForRail, PayoutRail, RecipientCheck, TransferOutcome } from '../payouts.ts';
import { ProviderRefusedError } from '../types.ts';
import { createAnswer, resultAnswer, WAITING_STATUSES } from './answers.ts';
import type { MtnAdapterSettings } from './client.ts';
import { MTN_MOMO_PROVIDER, postCreate } from './collection.ts';
import { cleanCode, errorCode, msisdnOf, noteText, referenceIdFor } from './wire.ts';

/**
 * Codes that say the account holder does not exist. The 2018 docs answer 404 for an unknown holder ("Validate
 * Account Holder Error Codes: 404 Account holder is not found", sparkplug/mtn-momo-api-documentation
 * docs/common-error-codes); the current catalogue also lists NOT_FOUND and PAYEE_NOT_FOUND
 * (https://momodeveloper.mtn.com/content/html_widgets/o46rh.html), which may come with a 500.
 */
const HOLDER_NOT_FOUND_CODES: ReadonlySet<string> = new Set([
  'NOT_FOUND',
  'RESOURCE_NOT_FOUND',
  'PAYEE_NOT_FOUND',
  'ACCOUNTHOLDER_NOT_FOUND',
  'PAYER_NOT_FOUND',
]);
/** Codes saying we may not use an operation (basicuserinfo is not enabled everywhere: docs/providers/mtn-momo.md §8.8). */
const NOT_ALLOWED_CODES: ReadonlySet<string> = new Set(['NOT_ALLOWED', 'AUTHORIZATION_FAILED', 'FORBIDDEN']);

const holderNotFound = (answer: ProviderAnswer): boolean =>
  answer.status === 404 || HOLDER_NOT_FOUND_CODES.has(cleanCode(errorCode(answer.json)) ?? '');
const refused = (answer: ProviderAnswer, what: string): ProviderRefusedError => {
  const code = cleanCode(errorCode(answer.json));
  return new ProviderRefusedError(`MTN MoMo ${what}: HTTP ${answer.status}${code ? ` ${code}` : ''}`, answer.status);
};

/** The name a basicuserinfo answer gives: `name`, else given_name and family_name (the current schema lists only those two). */
function holderName(json: unknown): string | null {
  if (!json || typeof json !== 'object') return null;
  const body = json as Record<string, unknown>;
  const part = (value: unknown) => (typeof value === 'string' ? value.trim() : '');
  const name = part(body.name) || [part(body.given_name), part(body.family_name)].filter(Boolean).join(' ');
  return name || null;
}

export function mtnDisbursement(settings: MtnAdapterSettings): PayoutRail {
  const { client } = settings;
  const referenceOf = (payout: PayoutForRail) => referenceIdFor(payout.providerReference, payout.payoutId);
  const walletOf = (payout: PayoutForRail): string => {
    const { recipient } = payout;
    if (recipient.accountType !== 'momo' || recipient.network !== 'mtn' || !recipient.phone) {
      throw new ProviderRefusedError('MTN MoMo pays MTN Mobile Money wallets only');
    }
    return msisdnOf(recipient.phone);
  };

  return {
    provider: MTN_MOMO_PROVIDER,
    serves: { bank: false, networks: ['mtn'] },

    // X-Reference-Id: a UUID v4, chosen and stored before transfer() (docs/disbursements/transfer.Readme.md, MTN-Group/MoMoAPIs_Javascript_sdk).
    reference: () => randomUUID(),

    async checkRecipient(payout): Promise<RecipientCheck> {
      const msisdn = walletOf(payout);
      // GET /disbursement/v1_0/accountholder/msisdn/{msisdn}/active -> {"result": true|false}: "check if an account
      // holder is registered and active in the system" (docs/disbursements/validateAccountHolderStatus.Readme.md,
      // MTN-Group/MoMoAPIs_Javascript_sdk); 404 when the holder is not found (2018 common error codes).
      const active = await client.call({ method: 'GET', path: `v1_0/accountholder/msisdn/${msisdn}/active` });
      if (holderNotFound(active)) return { ok: false, reason: 'account_not_found' };
      if (active.status !== 200) throw refused(active, 'account holder check');
      if ((active.json as { result?: unknown } | null)?.result !== true)
        return { ok: false, reason: 'account_inactive' };

      // GET …/basicuserinfo: "returns personal information of the account holder. The operation does not need any
      // consent" (https://momodeveloper.mtn.com/docs/services/remittance/operations/basicuserInfo-GET;
      // docs/disbursements/getBasicUserinfo.Readme.md, sandbox answer {"name": "Sand Box", ...}).
      const info = await client.call({ method: 'GET', path: `v1_0/accountholder/msisdn/${msisdn}/basicuserinfo` });
      if (holderNotFound(info)) return { ok: false, reason: 'account_not_found' };
      if (
        (info.status === 403 || info.status === 500) &&
        NOT_ALLOWED_CODES.has(cleanCode(errorCode(info.json)) ?? '')
      ) {
        // The wallet is active but MTN will not tell us its name: the caller decides what an unnamed wallet is worth.
        return { ok: true, resolvedName: null };
      }
      if (info.status !== 200) throw refused(info, 'account holder name');
      return { ok: true, resolvedName: holderName(info.json) };
    },

    async transfer(payout): Promise<TransferOutcome> {
      const msisdn = walletOf(payout);
      const referenceId = referenceOf(payout);
      // POST /disbursement/v1_0/transfer {amount, currency, externalId, payee {partyIdType, partyId}, payerMessage,
      // payeeNote}: 202, 409 on a duplicated reference id (docs/disbursements/transfer.Readme.md; common errors).
      const answer = await postCreate(settings, 'v1_0/transfer', referenceId, payout, {
        externalId: payout.payoutId,
        payee: { partyIdType: 'MSISDN', partyId: msisdn },
        payerMessage: noteText(`Payout ${payout.payoutId}`),
        payeeNote: noteText(payout.reference),
      });
      const created = createAnswer(answer, 'transfer');
      // Refused at once for the payee's reason (PAYEE_NOT_FOUND, NOT_ENOUGH_FUNDS, ...): nothing was sent.
      if (!created.accepted) return { outcome: 'failed', reason: created.code.toLowerCase() };
      // MTN's own id (financialTransactionId) only comes with the result; until then our reference stands in.
      return { outcome: 'pending', bankReference: referenceId };
    },

    async status(payout): Promise<TransferOutcome> {
      const referenceId = referenceOf(payout);
      // GET /disbursement/v1_0/transfer/{referenceId}: 200 with status and reason, failures too; 404 unknown
      // (https://momoapi.mtn.co.rw/docs/services/remittance/operations/transfer-referenceId-GET; getTransferStatus.Readme.md).
      const result = resultAnswer(
        await client.call({ method: 'GET', path: `v1_0/transfer/${referenceId}` }),
        'transfer',
      );
      if (!result) return { outcome: 'unknown' };
      const bankReference = result.financialTransactionId ?? referenceId;
      if (WAITING_STATUSES.has(result.status)) return { outcome: 'pending', bankReference };
      if (result.status === 'SUCCESSFUL') return { outcome: 'paid', bankReference };
      if (result.status === 'FAILED')
        return { outcome: 'failed', reason: (result.reason ?? 'transfer_failed').toLowerCase() };
      // Not PENDING, SUCCESSFUL or FAILED: neither paid nor failed can be recorded; the worker logs it and asks again.
      throw new Error(
        `MTN MoMo reported an unknown transfer status "${result.status.slice(0, 40)}" for ${referenceId}`,
      );
    },
  };
}
