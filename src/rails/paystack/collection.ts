// Collection through Paystack: Mobile Money with the Charge API (POST /charge, the payer approves on the
// handset or types a voucher) and cards on Paystack's hosted page (POST /transaction/initialize). The
// attempt's reference is stored before the call; a lost answer is followed by status(), never a second
// charge. Sources as in docs/providers/paystack.md: [OAS] PaystackOSS/openapi dist/paystack.yaml, [SNIP]
// PaystackOSS/doc-code-snippets dist/, [OLD-ERR] https://developers.paystack.co/docs/errors, [VERIFY]
// https://paystack.com/docs/payments/verify-payments/ (the statuses' meanings; read from a copy of Paystack's docs
// at pilot-direct-debit.d111ulzzlm5kvf.amplifyapp.com/docs/payments/verify-payments), [META]
// https://paystack.com/docs/payments/metadata/ (cancel_action).
import type { FailureReason } from '../../lib/payment-failures.ts';
import { field, text } from '../provider-http.ts';
import {
  positiveAmountMinor,
  ProviderRefusedError,
  RailUnavailableError,
  VerificationRefusedError,
  type AttemptForRail,
  type CollectionRail,
  type Initiated,
  type ProviderOutcome,
  type StatusCheck,
} from '../types.ts';
import { CHARGE_PROVIDER, isMomoNetwork, localPhone } from './banks.ts';
import {
  amountOf,
  isAuthProblem,
  isDuplicateReference,
  isNotFound,
  isServerTrouble,
  refusal,
  type PaystackClient,
} from './client.ts';
import { cardOf, failureReasonOf, transactionIdOf } from './outcome-details.ts';
import { chargeReference } from './references.ts';

/**
 * Paystack requires an email on every charge [OAS ChargeCreate.required, TransactionInitialize.required];
 * Sika does not ask payers for one. The stand-in address is one per checkout session, not one for all:
 * Paystack files charges under a customer per email, and a single shared address would merge every payer
 * into one customer whose risk flags (blacklisting) would then hit them all. example.com is reserved
 * (RFC 2606), so a receipt Paystack sends there reaches nobody.
 */
const PAYER_EMAIL_PLACEHOLDER_DOMAIN = 'example.com';

const payerEmail = (attempt: AttemptForRail) =>
  attempt.payerEmail ?? `payer-${attempt.sessionId.toLowerCase()}@${PAYER_EMAIL_PLACEHOLDER_DOMAIN}`;
const referenceOf = (attempt: AttemptForRail) => attempt.providerReference ?? chargeReference(attempt.reference);

// Amounts are integers in the subunit, pesewas for GHS [OAS ChargeCreate.amount].
const checkedAmount = (attempt: AttemptForRail): number => positiveAmountMinor(attempt.amountMinor, 'amount');

/**
 * A success counts as paid only when Paystack took our amount in our currency: HTTP 200 and status
 * "success" alone do not say what was paid [OLD-ERR "Do check the data object"; docs/providers/paystack.md §4].
 * Without an amount to compare nothing is concluded (undefined).
 */
function paidOutcome(
  attempt: AttemptForRail,
  data: unknown,
): { outcome: 'paid' | 'amount_mismatch'; amountMinor: number } | undefined {
  const amountMinor = amountOf(field(data, 'amount'));
  const currency = text(field(data, 'currency'));
  if (amountMinor === null || currency === null) return undefined;
  return {
    outcome: amountMinor === attempt.amountMinor && currency === attempt.currency ? 'paid' : 'amount_mismatch',
    amountMinor,
  };
}

interface ChargeReading {
  rawStatus: string;
  outcome?: ProviderOutcome;
  amountMinor?: number;
  verificationRequired: boolean;
  instructions: Record<string, unknown>;
  failureReason?: FailureReason;
}

/** `{ failureReason }` when the failed transaction's words say why, else nothing. */
const reasonOf = (data: unknown): { failureReason?: FailureReason } => {
  const failureReason = failureReasonOf(data);
  return failureReason ? { failureReason } : {};
};

/**
 * The progressive data.status of POST /charge, POST /charge/submit_otp and GET /charge/{reference}:
 * send_otp (the Vodafone/Telecel voucher: the payer types a code) [SNIP mobile-vodafone.js], pay_offline
 * (approve on the handset) [SNIP mobile-airtel-mtn.js], pending [SNIP mobile-response-late.js], success
 * [SNIP mobile-response-jit.js], failed [SNIP api/charges/submit-otp/response.json]. Anything else
 * (send_pin, open_url, ... seen for other channels) is still in flight.
 */
function readCharge(attempt: AttemptForRail, data: unknown): ChargeReading {
  const rawStatus = text(field(data, 'status')) ?? 'unknown';
  const displayText = text(field(data, 'display_text'));
  const instructions: Record<string, unknown> = displayText ? { display_text: displayText } : {};
  switch (rawStatus) {
    case 'send_otp':
      return { rawStatus, verificationRequired: true, instructions };
    case 'success': {
      const paid = paidOutcome(attempt, data);
      return { rawStatus, verificationRequired: false, instructions, ...(paid ?? {}) };
    }
    case 'failed':
      // The words of a failed charge: data.message "Insufficient funds" [SNIP api/charges/check/response.json].
      return { rawStatus, outcome: 'failed', verificationRequired: false, instructions, ...reasonOf(data) };
    default:
      return { rawStatus, verificationRequired: false, instructions };
  }
}

/**
 * A reused reference answers 400 duplicate_reference [OAS TransactionInitializeBadRequestModel]: ours is
 * stored before the first call, so this means that call reached Paystack. It is already accepted: the
 * caller learns its state with status().
 */
const alreadyAccepted = (): Initiated => ({
  rawStatus: 'duplicate_reference',
  verificationRequired: false,
  instructions: {},
});

async function initiateMomo(client: PaystackClient, attempt: AttemptForRail, reference: string): Promise<Initiated> {
  const phone = attempt.phone ? localPhone(attempt.phone) : null;
  if (!isMomoNetwork(attempt.network) || !phone)
    throw new ProviderRefusedError('a Mobile Money attempt needs a Ghana phone number and its network', null, true);
  // [SNIP doc/payments/payment-methods/mobile.js]: email, amount, currency GHS (absent from the OAS schema
  // but in every sample), mobile_money { phone, provider }; reference [OAS ChargeCreate.reference].
  const answer = await client.call('POST', '/charge', {
    email: payerEmail(attempt),
    amount: checkedAmount(attempt),
    currency: attempt.currency,
    reference,
    mobile_money: { phone, provider: CHARGE_PROVIDER[attempt.network] },
    metadata: { sika_attempt_id: attempt.reference, sika_session_id: attempt.sessionId },
  });
  if (isDuplicateReference(answer)) return alreadyAccepted();
  // "we will always send a 200 if a charge ... was made. Do check the data object" [OLD-ERR].
  if (answer.httpStatus !== 200 || !answer.ok) throw refusal('the Mobile Money charge', answer);
  const reading = readCharge(attempt, answer.data);
  return {
    rawStatus: reading.rawStatus,
    verificationRequired: reading.verificationRequired,
    instructions: reading.instructions,
    ...(reading.outcome ? { outcome: reading.outcome } : {}),
    ...(reading.failureReason ? { failureReason: reading.failureReason } : {}),
  };
}

async function initiateCard(client: PaystackClient, attempt: AttemptForRail, reference: string): Promise<Initiated> {
  // [OAS TransactionInitialize]: email and amount required; channels limits the hosted page to cards;
  // callback_url overrides the dashboard's and is where the payer comes back to. A payer who cancels on
  // Paystack's page is sent to metadata.cancel_action [META]: the same payer page, which then asks verify and
  // ends the attempt on "abandoned" (status()), so the payer can pick another way to pay.
  const answer = await client.call('POST', '/transaction/initialize', {
    email: payerEmail(attempt),
    amount: checkedAmount(attempt),
    currency: attempt.currency,
    reference,
    channels: ['card'],
    ...(attempt.returnUrl ? { callback_url: attempt.returnUrl } : {}),
    metadata: {
      sika_attempt_id: attempt.reference,
      sika_session_id: attempt.sessionId,
      ...(attempt.returnUrl ? { cancel_action: attempt.returnUrl } : {}),
    },
  });
  if (isDuplicateReference(answer)) return alreadyAccepted();
  if (answer.httpStatus !== 200 || !answer.ok) throw refusal('the card payment page', answer);
  // authorization_url, access_code and reference are all required in the answer [OAS TransactionInitializeResponse].
  const redirectUrl = text(field(answer.data, 'authorization_url'));
  if (!redirectUrl)
    throw new ProviderRefusedError(
      'Paystack created the payment page but named no authorization_url',
      answer.httpStatus,
    );
  return { rawStatus: 'initialized', verificationRequired: false, instructions: { redirect_url: redirectUrl } };
}

export function createCollection(client: PaystackClient): CollectionRail {
  return {
    provider: 'paystack',
    serves: { rails: ['momo', 'card'], networks: ['mtn', 'telecel', 'at'] },
    reference: (attempt) => chargeReference(attempt.reference),
    // No call prompts the handset again (see resend()): the page never offers it.
    resendSupported: false,

    async initiate(attempt) {
      const reference = referenceOf(attempt);
      const initiated =
        attempt.rail === 'card'
          ? await initiateCard(client, attempt, reference)
          : await initiateMomo(client, attempt, reference);
      // Ours was stored beforehand when the caller asked reference(); otherwise it is named here.
      return attempt.providerReference ? initiated : { ...initiated, providerReference: reference };
    },

    async status(attempt): Promise<StatusCheck> {
      const reference = referenceOf(attempt);
      const answer = await client.call('GET', `/transaction/verify/${encodeURIComponent(reference)}`);
      if (isNotFound(answer)) return { rawStatus: 'not_found', outcome: 'unknown' };
      if (answer.httpStatus !== 200 || !answer.ok) throw refusal('the status query', answer);
      const data = answer.data;
      const rawStatus = text(field(data, 'status')) ?? 'unknown';
      const amountMinor = amountOf(field(data, 'amount')) ?? undefined;
      // Paystack's own id of the transaction, on every final answer (support and the payer can quote it).
      const transactionId = transactionIdOf(data);
      const ids = transactionId ? { providerTransactionId: transactionId } : {};
      // data.status: success, failed, abandoned, reversed [OAS GET /transaction status filter]; the
      // in-flight values (pending, ongoing, ...) are not enumerated and are all read as pending.
      switch (rawStatus) {
        case 'success': {
          const card = attempt.rail === 'card' ? cardOf(data) : undefined;
          // Without an amount to compare, an operator decides.
          return {
            rawStatus,
            ...(paidOutcome(attempt, data) ?? { outcome: 'manual_review' }),
            ...ids,
            ...(card ? { card } : {}),
          };
        }
        case 'failed':
          // "failed: The transaction failed. For more information on why, refer to the message/gateway response" [VERIFY].
          return { rawStatus, outcome: 'failed', amountMinor, ...ids, ...reasonOf(data) };
        case 'reversed':
          return { rawStatus, outcome: 'reversed', amountMinor, ...ids };
        case 'abandoned':
          // "abandoned: The customer has not completed the transaction" [VERIFY]. A card attempt ends here so the
          // payer can pay another way: 'cancelled', which the core keeps asking about for the late-success
          // window, since the hosted page still takes the payment if the payer goes back to it. A Mobile Money
          // charge that was abandoned has failed.
          if (attempt.rail === 'card') return { rawStatus, outcome: 'cancelled', ...ids };
          return { rawStatus, outcome: 'failed', amountMinor, ...ids, ...reasonOf(data) };
      }
      if (attempt.rail !== 'momo') return { rawStatus, outcome: 'pending' };
      // A pending Mobile Money charge is checked with GET /charge/{reference} ("When you get pending ... make
      // a check" [OAS /charge/{reference}]). That check is extra: when it fails, verify's answer stands.
      try {
        const check = await client.call('GET', `/charge/${encodeURIComponent(reference)}`);
        if (check.httpStatus !== 200 || !check.ok) return { rawStatus, outcome: 'pending' };
        const reading = readCharge(attempt, check.data);
        return {
          rawStatus: reading.rawStatus,
          outcome: reading.outcome ?? 'pending',
          ...(reading.amountMinor !== undefined ? { amountMinor: reading.amountMinor } : {}),
          ...(reading.failureReason ? { failureReason: reading.failureReason } : {}),
        };
      } catch {
        return { rawStatus, outcome: 'pending' };
      }
    },

    async authorize(attempt, code) {
      // POST /charge/submit_otp { otp, reference } [OAS ChargeSubmitOTP].
      const answer = await client.call('POST', '/charge/submit_otp', { otp: code, reference: referenceOf(attempt) });
      if (isServerTrouble(answer) || isAuthProblem(answer)) throw refusal('the verification code', answer);
      // Any other refusal is about the code (or a charge no longer waiting for one): the payer is told.
      if (answer.httpStatus !== 200 || !answer.ok)
        throw new VerificationRefusedError(`Paystack refused the code: ${answer.message}`);
      const reading = readCharge(attempt, answer.data);
      return {
        rawStatus: reading.rawStatus,
        verificationRequired: reading.verificationRequired,
        ...(reading.outcome ? { outcome: reading.outcome } : {}),
        ...(reading.failureReason ? { failureReason: reading.failureReason } : {}),
      };
    },

    async resend() {
      // The Charge API has submit_otp/pin/phone/birthday/address and a pending check [OAS /charge/*], but no
      // call that prompts the handset again; a new POST /charge would be a second charge. So none is made.
      throw new RailUnavailableError(
        'Paystack cannot send the Mobile Money prompt again; approve the pending prompt on your phone, or start a new payment once this one has ended.',
      );
    },
  };
}
