// A payer's receipt (issue 35): its number, given when the session succeeds; what the receipt shows; and
// sending it by e-mail or SMS on the payer's request, once per address, through the mail and SMS outboxes.
import { DbError, withSavepoint, type Db, type Queryable } from '../db/index.ts';
import { cardLabel } from '../lib/card-label.ts';
import { EMAIL_PATTERN } from '../lib/email-address.ts';
import { errors } from '../lib/errors.ts';
import { checkPayerPhone, formatGhs, NETWORK_LABELS } from '../lib/ghana.ts';
import { absoluteUrl, plainMailBodies } from '../mail/compose.ts';
import { enqueueMail } from '../mail/outbox.ts';
import { findRail } from '../rails/registry.ts';
import { smsConfigured, type SmsSettings } from '../sms/model.ts';
import { enqueueSms } from '../sms/outbox.ts';
import type { AttemptRow, SessionRow } from './model.ts';
import { findLink } from './payment-link-store.ts';
import {
  isValidReceiptNumber,
  newReceiptNumber,
  normaliseReceiptNumber,
  spacedReceiptNumber,
} from './receipt-number.ts';
import { findSessionPayment } from './session-list-store.ts';
import * as store from './store.ts';

/** New numbers tried when one is taken: with 32^8 numbers a second try is already a rarity. */
export const RECEIPT_NUMBER_TRIES_MAX = 5;
/** Addresses a payer may send one session's receipt to, per channel. */
export const RECEIPT_RECIPIENTS_MAX = 3;
export const RECEIPT_EMAIL_LENGTH_MAX = 254;
/** One SMS part. */
export const RECEIPT_SMS_LENGTH_MAX = 160;

/**
 * Gives the session a receipt number unless it has one, inside the caller's transaction. A number another
 * session holds (the unique index) is retried with a new one behind a savepoint, so the payment never fails
 * for it. Answers the session as it is now.
 */
export async function giveReceiptNumber(
  tx: Queryable,
  session: SessionRow,
  next: () => string = newReceiptNumber,
): Promise<SessionRow> {
  if (session.receipt_number) return session;
  for (let tries = 1; ; tries++) {
    try {
      return (await withSavepoint(tx, () => store.setReceiptNumber(tx, session.id, next()))) ?? session;
    } catch (error) {
      if (tries < RECEIPT_NUMBER_TRIES_MAX && error instanceof DbError && error.isUniqueViolation) continue;
      throw error;
    }
  }
}

/** Everything a receipt shows (the page, the PDF, the e-mail). */
export interface Receipt {
  sessionId: string;
  receiptNumber: string;
  merchantName: string;
  test: boolean;
  amountMinor: number;
  /** What the payer paid in fees (0 when the merchant bore them). */
  feeMinor: number;
  totalMinor: number;
  /** "MTN MoMo", "Card". */
  method: string;
  /** "024 *** 4567", "Visa ending 4081", or null when not known. */
  paidFrom: string | null;
  paidAt: Date;
  invoiceRef: string;
  description: string | null;
  customerName: string | null;
  /** The link's name when a payment link made the session. */
  linkName: string | null;
  customFields: { label: string; value: string }[];
}

/** A Ghana number as a payer recognises it with the middle hidden: 233241234567 -> "024 *** 4567". */
export const maskedWallet = (e164: string): string => `0${e164.slice(3, 5)} *** ${e164.slice(-4)}`;

function paidFromOf(a: AttemptRow): string | null {
  const card = cardLabel(a.card_brand, a.card_last4);
  if (card) return card;
  const phone = a.phone?.replace(/^\+/, '');
  return phone && /^233\d{9}$/.test(phone) ? maskedWallet(phone) : null;
}

/** The network's name for Mobile Money ("MTN MoMo"), else the rail's ("Card"). */
const methodOf = (a: AttemptRow): string =>
  a.network ? NETWORK_LABELS[a.network] : (findRail(a.rail)?.labels.payer ?? a.rail);

/**
 * The receipt of a session that succeeded, or null (no such session, or not paid). A session that succeeded
 * before receipt numbers existed (migration 040) gets its number now.
 */
export async function findReceipt(db: Db, sessionId: string): Promise<Receipt | null> {
  const found = await store.findPublicSession(db, sessionId);
  if (found?.status !== 'success') return null;
  let session: SessionRow = found;
  if (!session.receipt_number)
    session = await db.transaction(async (tx) => {
      const locked = await store.lockSession(tx, sessionId);
      return locked ? giveReceiptNumber(tx, locked) : found;
    });
  // The session's payment as the API names it (its first paid attempt), never a later duplicate refunded.
  const payment = await findSessionPayment(db, session.id);
  const paid = payment ? await store.findAttempt(db, payment.id) : null;
  const link = session.payment_link_id
    ? await findLink(db, session.merchant_id, session.environment, session.payment_link_id)
    : null;
  const labels = new Map((link?.custom_fields ?? []).map((field) => [field.key, field.label]));
  return {
    sessionId: session.id,
    receiptNumber: session.receipt_number!,
    merchantName: found.merchant_name,
    test: session.environment === 'test',
    amountMinor: session.amount_minor,
    feeMinor: paid && paid.bearer === 'payer' ? paid.fee_minor : 0,
    totalMinor: paid ? paid.amount_charged_minor : session.amount_minor,
    method: paid ? methodOf(paid) : 'Payment',
    paidFrom: paid ? paidFromOf(paid) : null,
    paidAt: paid?.finalized_at ?? session.finalized_at ?? session.updated_at,
    invoiceRef: session.invoice_ref,
    description: session.description,
    customerName: session.customer_name,
    linkName: link?.name ?? null,
    customFields: Object.entries(session.custom_fields ?? {}).map(([key, value]) => ({
      label: labels.get(key) ?? key,
      value: String(value),
    })),
  };
}

/** The receipt page's address, as a payer opens it from a mail or an SMS. */
export const receiptUrl = (checkoutUrlHost: string, sessionId: string) =>
  absoluteUrl(checkoutUrlHost, `/pay/${encodeURIComponent(sessionId)}/receipt`);

const accraDate = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Africa/Accra',
  day: 'numeric',
  month: 'short',
  year: 'numeric',
});

/**
 * "Sika receipt K7M2QX9D4: GHS 25.50 to Kofi Stores on 29 Nov 2026. <url>", in one SMS part: a long merchant
 * name is shortened to fit.
 */
export function receiptSmsBody(receipt: Receipt, url: string): string {
  const head = `Sika receipt ${receipt.receiptNumber}: ${formatGhs(receipt.totalMinor)} to `;
  const tail = ` on ${accraDate.format(receipt.paidAt)}. ${url}`;
  const room = RECEIPT_SMS_LENGTH_MAX - head.length - tail.length;
  const name =
    receipt.merchantName.length <= room
      ? receipt.merchantName
      : `${receipt.merchantName.slice(0, Math.max(1, room - 1))}…`;
  return `${head}${name}${tail}`;
}

function receiptMail(receipt: Receipt, url: string) {
  const lines = [
    `You paid ${formatGhs(receipt.totalMinor)} to ${receipt.merchantName}${receipt.linkName ? ` for ${receipt.linkName}` : ''}.`,
    `Receipt number: ${spacedReceiptNumber(receipt.receiptNumber)}`,
    `Invoice: ${receipt.invoiceRef}`,
    `Paid with: ${receipt.method}${receipt.paidFrom ? `, ${receipt.paidFrom}` : ''}`,
    `Amount: ${formatGhs(receipt.amountMinor)} · Fee: ${formatGhs(receipt.feeMinor)} · Total: ${formatGhs(receipt.totalMinor)}`,
    ...receipt.customFields.map((field) => `${field.label}: ${field.value}`),
  ];
  return {
    subject: `${receipt.test ? '[Test] ' : ''}Your receipt ${receipt.receiptNumber} from ${receipt.merchantName}`,
    ...plainMailBodies({ paragraphs: lines, link: { url, label: 'View or download your receipt' } }),
  };
}

export type ReceiptChannel = store.ReceiptChannel;

/** The payer may ask for an SMS receipt only where SMS really go out (a provider is configured). */
export const smsReceiptsOffered = (config: { sms: Pick<SmsSettings, 'provider'> }): boolean => smsConfigured(config);

/** The address of a request as stored (lower-case e-mail, 233… phone), or a refusal naming the field. */
function recipientOf(channel: ReceiptChannel, input: string): string {
  const text = input.trim();
  if (channel === 'email') {
    if (!EMAIL_PATTERN.test(text) || text.length > RECEIPT_EMAIL_LENGTH_MAX)
      throw errors.invalidArgument('Enter an e-mail address such as ama@example.com.', [
        { field: 'email', message: 'must be an e-mail address' },
      ]);
    return text.toLowerCase();
  }
  const checked = checkPayerPhone(text);
  if (!checked.ok)
    throw errors.invalidArgument('Enter a Ghana mobile number such as 024 123 4567.', [
      { field: 'phone', message: 'must be a Ghana mobile number' },
    ]);
  return checked.phone.replace(/^\+/, '');
}

/**
 * Sends the receipt of a paid session to `input` on `channel`, once per address: a second request for the
 * same address sends nothing more. At most RECEIPT_RECIPIENTS_MAX addresses per channel. The message is queued
 * in the outbox in the transaction that records the delivery, under the session's lock, so two requests at
 * once send one. Answers whether a message was queued now.
 */
export async function sendReceipt(
  db: Db,
  checkoutUrlHost: string,
  sessionId: string,
  channel: ReceiptChannel,
  input: string,
): Promise<{ queued: boolean }> {
  const receipt = await findReceipt(db, sessionId);
  if (!receipt) throw errors.notFound('Receipt');
  const recipient = recipientOf(channel, input);
  const url = receiptUrl(checkoutUrlHost, sessionId);
  return db.transaction(async (tx) => {
    const session = await store.lockSession(tx, sessionId);
    if (!session) throw errors.notFound('Receipt');
    const sent = await store.listReceiptRecipients(tx, sessionId, channel);
    if (sent.includes(recipient)) return { queued: false };
    if (sent.length >= RECEIPT_RECIPIENTS_MAX)
      throw errors.invalidArgument(
        `This receipt was already sent to ${RECEIPT_RECIPIENTS_MAX} ${channel === 'email' ? 'e-mail addresses' : 'phone numbers'}, the most it may be.`,
        [{ field: channel === 'email' ? 'email' : 'phone', message: 'no more recipients may be added' }],
      );
    const outboxId =
      channel === 'email'
        ? await enqueueMail(tx, {
            kind: 'receipt',
            to: recipient,
            merchantId: session.merchant_id,
            ...receiptMail(receipt, url),
          })
        : await enqueueSms(tx, {
            kind: 'receipt',
            to: recipient,
            body: receiptSmsBody(receipt, url),
            merchantId: session.merchant_id,
          });
    return { queued: await store.insertReceiptDelivery(tx, { sessionId, channel, recipient, outboxId }) };
  });
}

/** The session a merchant's search text names by its receipt number (read out loosely), or null. */
export async function sessionIdByReceiptNumber(
  db: Queryable,
  merchantId: string,
  environment: string,
  text: string,
): Promise<string | null> {
  const number = normaliseReceiptNumber(text);
  if (!isValidReceiptNumber(number)) return null;
  return (await store.findSessionIdByReceiptNumber(db, merchantId, environment, number))?.id ?? null;
}
