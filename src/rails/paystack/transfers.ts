// Payouts through Paystack Transfers: a name enquiry (GET /bank/resolve), a transfer recipient
// (POST /transferrecipient), the transfer under our stored reference (POST /transfer), its state
// (GET /transfer/verify/{reference}). Sources as in docs/providers/paystack.md: [OAS] PaystackOSS/openapi
// dist/paystack.yaml, [SNIP] PaystackOSS/doc-code-snippets dist/, [DOCS] https://docs-v2.paystack.com/docs/.
//
// The integration must have transfer OTP turned off (dashboard, or POST /transfer/disable_otp [OAS]):
// otherwise every transfer waits in status "otp" for a code nobody sends, and is abandoned after 30 minutes
// [DOCS transfers/how-transfers-work].
import type { PayoutForRail, PayoutRail, RecipientCheck, TransferOutcome } from '../payouts.ts';
import { field, text } from '../provider-http.ts';
import { isMomoNetwork, localPhone, MOMO_BANK_CODE, type PaystackBanks } from './banks.ts';
import {
  isAuthProblem,
  isDuplicateReference,
  isNotFound,
  isServerTrouble,
  refusal,
  type PaystackAnswer,
  type PaystackClient,
} from './client.ts';
import { transferReference } from './references.ts';

/** Paystack pays Ghana recipients in GHS only (ghipss and mobile_money recipients are GHS [DOCS transfers/single-transfers]). */
const TRANSFER_CURRENCY = 'GHS';

type Destination = { type: 'ghipss' | 'mobile_money'; bankCode: string; accountNumber: string };

/** "Your balance is not enough to fulfil this request" (as integrators report it; no sample documents it). */
const isLowBalance = (answer: PaystackAnswer) =>
  answer.code === 'insufficient_balance' || /balance is not enough|insufficient balance/i.test(answer.message);

const referenceOf = (payout: PayoutForRail) => payout.providerReference ?? transferReference(payout.payoutId);

/**
 * The transfer statuses [OAS GET /transfer status; DOCS transfers/how-transfers-work]: pending, otp and
 * received are not conclusive; success, failed, abandoned, blocked, rejected and reversed are. reversed:
 * "the customer's bank is unable to receive money ... The transfer amount is returned".
 */
function readTransfer(data: unknown): TransferOutcome {
  const status = text(field(data, 'status')) ?? 'unknown';
  // transfer_code (TRF_...) names the transfer to Paystack's support; it is the bank reference we keep.
  // Paystack names no separate reference for a reversal, so a return carries the same code.
  const transferCode = text(field(data, 'transfer_code')) ?? text(field(data, 'reference')) ?? 'unknown';
  switch (status) {
    case 'success':
      return { outcome: 'paid', bankReference: transferCode };
    case 'reversed':
      return { outcome: 'returned', bankReference: transferCode, returnReference: transferCode };
    case 'failed':
    case 'abandoned':
    case 'blocked':
    case 'rejected': {
      // data.reason is our own narration, not the cause: the cause is in gateway_response [SNIP api/transfers/verify/response.json].
      const cause = text(field(data, 'gateway_response'));
      return { outcome: 'failed', reason: `paystack transfer ${status}${cause ? `: ${cause}` : ''}` };
    }
    default:
      return { outcome: 'pending', bankReference: transferCode };
  }
}

export function createPayouts(client: PaystackClient, banks: PaystackBanks): PayoutRail {
  /** Where the money goes, in Paystack's terms; a string is why it cannot go there. */
  async function destinationOf(payout: PayoutForRail): Promise<Destination | string> {
    const { recipient } = payout;
    if (recipient.accountType === 'momo') {
      const phone = recipient.phone ? localPhone(recipient.phone) : null;
      if (!isMomoNetwork(recipient.network) || !phone) return 'invalid_account';
      // mobile_money recipients: bank_code MTN, VOD or ATL, the wallet number as account_number [SNIP transfer-recipient-momo.js].
      return { type: 'mobile_money', bankCode: MOMO_BANK_CODE[recipient.network], accountNumber: phone };
    }
    if (!recipient.bankCode || !recipient.accountNumber) return 'invalid_account';
    const bankCode = await banks.codeFor(recipient.bankCode);
    return bankCode ? { type: 'ghipss', bankCode, accountNumber: recipient.accountNumber } : 'bank_not_supported';
  }

  async function status(payout: PayoutForRail): Promise<TransferOutcome> {
    const answer = await client.call('GET', `/transfer/verify/${encodeURIComponent(referenceOf(payout))}`);
    // 404 "Transfer not found" [SNIP api/transfers/verify/response.json]: it never reached Paystack.
    if (isNotFound(answer)) return { outcome: 'unknown' };
    if (answer.httpStatus !== 200 || !answer.ok) throw refusal('the transfer status query', answer);
    return readTransfer(answer.data);
  }

  return {
    provider: 'paystack',
    serves: { bank: true, networks: ['mtn', 'telecel', 'at'] },
    reference: (payout) => transferReference(payout.payoutId),

    async checkRecipient(payout): Promise<RecipientCheck> {
      const destination = await destinationOf(payout);
      if (typeof destination === 'string') return { ok: false, reason: destination };
      // GET /bank/resolve?account_number=&bank_code= -> data.account_name [SNIP api/verification/resolve-account/response.json];
      // both sent as strings (the spec's integer type would drop a wallet's leading 0).
      const query = new URLSearchParams({ account_number: destination.accountNumber, bank_code: destination.bankCode });
      const answer = await client.call('GET', `/bank/resolve?${query}`);
      if (isServerTrouble(answer) || isAuthProblem(answer)) throw refusal('the name enquiry', answer);
      if (answer.httpStatus === 200 && answer.ok) {
        // The name is reported, never judged here: the caller compares it with the name it holds.
        return { ok: true, resolvedName: text(field(answer.data, 'account_name')) };
      }
      // "Resolve Account Number | Nigeria, Ghana | Used for the confirmation of personal bank accounts"
      // [DOCS identity-verification/verify-account-number]: wallets are not among them, so a wallet Paystack
      // cannot name is not proof it does not exist; the transfer itself will tell.
      if (destination.type === 'mobile_money') return { ok: true, resolvedName: null };
      return { ok: false, reason: 'account_not_found' };
    },

    async transfer(payout): Promise<TransferOutcome> {
      if (payout.currency !== TRANSFER_CURRENCY)
        return {
          outcome: 'failed',
          reason: `currency_not_supported: Paystack pays Ghana recipients in ${TRANSFER_CURRENCY}`,
        };
      if (!Number.isSafeInteger(payout.amountMinor) || payout.amountMinor <= 0)
        return { outcome: 'failed', reason: 'invalid_amount' };
      const destination = await destinationOf(payout);
      if (typeof destination === 'string') return { outcome: 'failed', reason: destination };

      // type, name, account_number, bank_code required [OAS TransferRecipientCreate]; answers 201 [OAS];
      // "A duplicate account number will lead to the retrieval of the existing record" [OAS /transferrecipient],
      // so a retry makes no second recipient.
      const created = await client.call('POST', '/transferrecipient', {
        type: destination.type,
        name: payout.recipient.accountName,
        account_number: destination.accountNumber,
        bank_code: destination.bankCode,
        currency: TRANSFER_CURRENCY,
      });
      if (isServerTrouble(created) || isAuthProblem(created)) throw refusal('the transfer recipient', created);
      const recipientCode = text(field(created.data, 'recipient_code'));
      if (!(created.httpStatus === 200 || created.httpStatus === 201) || !created.ok || !recipientCode) {
        return { outcome: 'failed', reason: `paystack refused the recipient: ${created.message}` };
      }

      // source "balance", amount in pesewas, recipient RCP_..., our reference; currency defaults to NGN, so
      // GHS is always sent [OAS TransferInitiate, TransferBase]. The reference is what makes a retry safe:
      // "retry a non-conclusive transfer rather than initiate a new request" [DOCS transfers/single-transfers].
      const answer = await client.call('POST', '/transfer', {
        source: 'balance',
        amount: payout.amountMinor,
        recipient: recipientCode,
        reference: referenceOf(payout),
        currency: TRANSFER_CURRENCY,
        reason: `Payout ${payout.reference}`,
      });
      // Should Paystack refuse our reference as a duplicate, the first send reached it: ask what became of it.
      if (isDuplicateReference(answer)) return status(payout);
      if (isServerTrouble(answer) || isAuthProblem(answer)) throw refusal('the transfer', answer);
      // Our Paystack balance is too low: Sika's float, not the merchant's payout, is the problem. Thrown, the
      // payout stays with the worker and is sent again (same reference) once the balance is topped up.
      if (isLowBalance(answer)) throw refusal('the transfer for want of balance', answer);
      // Any other 4xx (balance too low, recipient invalid [SNIP api/transfers/initiate/response.json]) means
      // the transfer was not made: the payout fails with Paystack's reason.
      if (answer.httpStatus !== 200 || !answer.ok)
        return { outcome: 'failed', reason: `paystack refused the transfer: ${answer.message}` };
      return readTransfer(answer.data);
    },

    status,
  };
}
