// Our references with Paystack, chosen before a call and stored with the intent, so a lost answer is asked
// about by the same reference and a retry never makes a second charge or transfer. Both derive from our own
// ids (att_<26 Crockford characters>, po_<26>, src/lib/ids.ts), so the same attempt or payout always maps
// to the same reference.

/** Charge references: "Only -, ., = and alphanumeric characters allowed." [OAS ChargeCreate.reference, TransactionInitialize.reference] */
const CHARGE_REFERENCE = /^[A-Za-z0-9.=-]+$/;
/** Transfer references: "a lowercase alphanumeric string with only -,_ symbols allowed" [OAS TransferBase.reference]. */
const TRANSFER_REFERENCE = /^[a-z0-9_-]+$/;
/** The spec's `minimum: 16` on the transfer reference, read as a length [OAS TransferBase.reference]. */
export const TRANSFER_REFERENCE_LENGTH_MIN = 16;
const OUR_ID = /^[a-z]+_[0-9a-z]+$/;

function fromId(id: string, what: string): string {
  // Our ids are lower-case letters and digits around one underscore; anything else would not map one to one.
  if (!OUR_ID.test(id)) throw new Error(`${what} id ${JSON.stringify(id)} is not one of Sika's ids`);
  return `sika-${id.replace('_', '-')}`;
}

/** sika-att-<26>: allowed by both the charge and the transfer rules, so one shape serves every reference. */
export function chargeReference(attemptId: string): string {
  const reference = fromId(attemptId, 'attempt');
  if (!CHARGE_REFERENCE.test(reference))
    throw new Error(`charge reference ${reference} has characters Paystack does not allow`);
  return reference;
}

/** sika-po-<26> (34 characters): lower case, - only, at least 16 long. */
export function transferReference(payoutId: string): string {
  const reference = fromId(payoutId, 'payout');
  if (!TRANSFER_REFERENCE.test(reference) || reference.length < TRANSFER_REFERENCE_LENGTH_MIN) {
    throw new Error(
      `transfer reference ${reference} does not meet Paystack's rule (lower case, -_, ${TRANSFER_REFERENCE_LENGTH_MIN}+ characters)`,
    );
  }
  return reference;
}
