// A Paystack stand-in for end-to-end tests: a node:http server on 127.0.0.1 (a free port) that speaks the
// wire protocol of Paystack's API for a Ghana (GHS) integration, as written down in
// docs/providers/paystack.md. Sources, abbreviated as there: [OAS] PaystackOSS/openapi dist/paystack.yaml,
// [SNIP] PaystackOSS/doc-code-snippets dist/ (the JSON samples shown on paystack.com/docs), [DOCS] the
// prose pages of https://docs-v2.paystack.com/docs/. Where Paystack documents nothing, the choice made here
// is marked "not documented" so a test never mistakes it for a fact.
//
// Start it:
//   const paystack = await startPaystackStandIn({ secretKey: 'sk_test_x', webhookUrl });
//   paystack.baseUrl            -> http://127.0.0.1:PORT  (give it to the adapter as its base URL)
//   await paystack.close()
//
// What it serves (every API call needs `Authorization: Bearer <secretKey>`, else 401 "Invalid key"):
//   POST /charge, POST /charge/submit_otp, GET /charge/{reference}        mobile money (mtn, vod, atl)
//   POST /transaction/initialize, GET /transaction/verify/{reference}     hosted page (card), verify
//   GET  /checkout/{access_code}  and POST /checkout/{access_code}/pay|decline|cancel   the hosted page itself
//   GET  /bank?currency=GHS&type=ghipss|mobile_money, GET /bank/resolve   banks, telcos, name enquiry
//   POST /transferrecipient, POST /transfer, GET /transfer/verify/{reference}
//   POST /refund, GET /refund/{id}
//   GET  /refund   the refunds list: transaction (id or reference), currency, from, to, perPage, page
//   GET  /transaction, GET /transfer   the lists (perPage, page, from, to; meta total, page, pageCount)
//
// Default behaviour, with no rule given:
//   - a charge to mtn or atl answers pay_offline (the payer approves on the handset) and waits for
//     settleCharge(); a charge to vod answers send_otp (the Vodafone/Telecel voucher flow) and the voucher
//     `otp` (default 123456) then makes it succeed;
//   - a transfer answers pending and waits for settleTransfer();
//   - a refund answers pending and waits for settleRefund();
//   - /bank/resolve knows the accounts given in `accounts` or by setAccount(), and answers 422 for others.
//
// Rules change what the next matching call does (next()) or every matching call (always()):
//   paystack.next({ endpoint: 'charge.create', phone: '0551234987' }, { kind: 'charge', status: 'success' });
//   paystack.always({ accountNumber: '0123456789' }, { kind: 'http_error', status: 503 });
//   Match: endpoint (one or several), phone (any Ghana format), accountNumber, reference, where(call).
//   Behaviours:
//     { kind: 'charge', status: 'success'|'failed'|'send_otp'|'pay_offline'|'pending', displayText?,
//       gatewayResponse?, otp?, afterOtp?, webhook?, reportAmountMinor?, reportCurrency? }
//         accept, decline, ask for a code, or leave it for settleCharge(); at POST /charge/submit_otp the
//         status the good code leads to. reportAmountMinor/reportCurrency: what verify reports instead.
//     { kind: 'transfer', status: 'pending'|'success'|'failed'|'otp'|'received'|'reversed', reason?, webhook? }
//     { kind: 'resolve', accountName: string | null }  another name, or (null) "could not resolve"
//     { kind: 'http_error', status, body? }   answers that status without acting (5xx, 429, a 400 ...)
//     { kind: 'hold', ms?, act? }   answers only after `ms` (default: never, until close()); with act
//                                   (default true) the call takes effect at once, as a slow Paystack would
//     { kind: 'lose_answer' }       takes effect, then destroys the socket without a byte of answer
//     { kind: 'reset' }             destroys the socket without acting
//   webhook modes: 'once' (default), 'twice', 'bad_signature', 'unsigned', 'none'.
//   Connection refused: await refuseConnections() ... await acceptConnections() (same port).
//
// The hosted page (card): Pay succeeds; Decline fails, with the gateway_response chosen in its list (the
// documented texts of PAYSTACK_FAILURE_TEXTS); Cancel leaves the transaction unpaid (verify keeps saying
// "abandoned") and sends the payer to metadata.cancel_action [https://paystack.com/docs/payments/metadata/ "Cancel action"]. A cancelled
// page can still be paid later (Pay again, or settleCharge(reference, 'success')): a late success.
// abandonCharge(reference): the payer left without paying; a card reads abandoned (as it did), a Mobile Money
// charge reads abandoned too (not documented when Paystack gives up on a wallet; here only when a test says).
//
// Settling later: settleCharge(reference, 'success'|'failed', { gatewayResponse?, gatewayResponseCode? }) (the
// failure's words pick the reason the adapter reads), settleTransfer(reference,
// 'success'|'failed'|'reversed'), settleRefund(id, 'processed'|'failed'); each sends the webhook Paystack
// sends (charge.success; transfer.success|failed|reversed; refund.processed|failed) to webhookUrl, signed
// with `x-paystack-signature` = hex HMAC-SHA512 of the raw body keyed with the secret key [SNIP
// doc/payments/webhooks/verifying-transaction.js]. There is no charge.failed event [SNIP events.js].
// reportAmount(reference, amountMinor, currency?) changes what verify reports for a charge.
// Refunds: a lost answer to POST /refund is next({ endpoint: 'refund.create' }, { kind: 'lose_answer' }) (the
// refund is created, the socket destroyed); backdateRefund(id, at) moves a refund's creation time to `at`.
// For the lists (the daily reconciliation): listAs(reference, { status?, amountMinor? }) changes what
// GET /transaction or GET /transfer report for a record (as if Paystack corrected it later); backdate(reference,
// at) moves a charge's or transfer's times to `at`; recordOutsideCharge({ reference, amountMinor, ... }) stores
// a paid transaction Sika never started (one taken on Paystack's dashboard). A 5xx of a list is a rule:
// next({ endpoint: 'transaction.list' }, { kind: 'http_error', status: 502 }).
//
// What it received: requests (endpoint, method, path, headers, body), charges, transfers, recipients,
// refunds, webhooks (each delivery: event, body, signature, answer), count(endpoint), counts(),
// transfersSent (transfers created, not requests). webhooksIdle() waits for deliveries under way.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type StandInEndpoint =
  | 'charge.create'
  | 'charge.submit_otp'
  | 'charge.check'
  | 'transaction.initialize'
  | 'transaction.verify'
  | 'bank.list'
  | 'bank.resolve'
  | 'transferrecipient.create'
  | 'transfer.initiate'
  | 'transfer.verify'
  | 'refund.create'
  | 'refund.fetch'
  | 'refund.list'
  | 'checkout.page'
  | 'checkout.action'
  | 'transaction.list'
  | 'transfer.list'
  | 'unknown';

export type ChargeStatus = 'success' | 'failed' | 'send_otp' | 'pay_offline' | 'pending';

/**
 * Failure texts Paystack documents, for tests to pick a reason: "Insufficient funds" [SNIP
 * api/charges/check/response.json 200_failed; https://support.paystack.com/hc/en-us/articles/360013597919],
 * "Incorrect PIN" (same support article), "Declined" (the stand-in's plain decline; banks' refusals in
 * https://support.paystack.com/en/articles/2123650), and a session timeout [https://docs-v2.paystack.com/api/errors/transaction "not
 * completed in the time allowed by your session timeout"]; the last wording is the stand-in's own.
 */
export const PAYSTACK_FAILURE_TEXTS = {
  insufficient_funds: 'Insufficient funds',
  wrong_pin: 'Incorrect PIN',
  declined: 'Declined',
  timed_out: 'Transaction timed out',
} as const;
export type TransferStatus = 'pending' | 'success' | 'failed' | 'otp' | 'received' | 'reversed';
export type WebhookMode = 'once' | 'twice' | 'bad_signature' | 'unsigned' | 'none';

export type Behaviour =
  | {
      kind: 'charge';
      status: ChargeStatus;
      displayText?: string;
      gatewayResponse?: string;
      /** gateway_response_code on the transaction object (https://paystack.com/docs/payments/gateway-responses/). */
      gatewayResponseCode?: string;
      /** The voucher/OTP this charge accepts (send_otp). */
      otp?: string;
      /** The status a good code leads to (default success). */
      afterOtp?: Exclude<ChargeStatus, 'send_otp'>;
      webhook?: WebhookMode;
      reportAmountMinor?: number;
      reportCurrency?: string;
    }
  | { kind: 'transfer'; status: TransferStatus; reason?: string; webhook?: WebhookMode }
  | { kind: 'resolve'; accountName: string | null }
  | { kind: 'http_error'; status: number; body?: unknown }
  | { kind: 'hold'; ms?: number; act?: boolean }
  | { kind: 'lose_answer' }
  | { kind: 'reset' };

export interface StandInCall {
  endpoint: StandInEndpoint;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** The parsed body (JSON or form), {} when empty. */
  body: Record<string, unknown>;
  rawBody: string;
  /** The reference, access code or id in the path, when the route has one. */
  param: string | null;
}

export interface Match {
  endpoint?: StandInEndpoint | readonly StandInEndpoint[];
  /** The payer's phone of a charge (0551234987, +233551234987 and 233551234987 are the same). */
  phone?: string;
  /** account_number of a name enquiry or recipient, or the recipient's account of a transfer. */
  accountNumber?: string;
  /** The reference in the body or the path. */
  reference?: string;
  where?: (call: StandInCall) => boolean;
}

export interface StandInCharge {
  id: number;
  reference: string;
  channel: 'mobile_money' | 'card';
  amount: number;
  currency: string;
  email: string;
  /** As sent (mobile money only). */
  phone: string | null;
  /** mtn, vod or atl, lower-cased (mobile money only). */
  provider: string | null;
  /** initialized: a hosted-page transaction the payer has not finished; abandoned: a test said the payer left (Mobile Money). */
  status: ChargeStatus | 'initialized' | 'reversed' | 'abandoned';
  displayText: string | null;
  gatewayResponse: string;
  /** gateway_response_code, when a test set one (https://paystack.com/docs/payments/gateway-responses/). */
  gatewayResponseCode: string | null;
  /** When the payer pressed Cancel on the hosted page (the transaction stays payable). */
  cancelledAt: string | null;
  otp: string;
  afterOtp: Exclude<ChargeStatus, 'send_otp'>;
  otpTries: number;
  accessCode: string | null;
  callbackUrl: string | null;
  channels: string[] | null;
  metadata: unknown;
  webhook: WebhookMode;
  reportAmountMinor: number | null;
  reportCurrency: string | null;
  refundedMinor: number;
  createdAt: string;
  paidAt: string | null;
}

export interface StandInRecipient {
  id: number;
  recipientCode: string;
  type: 'ghipss' | 'mobile_money';
  name: string;
  accountNumber: string;
  bankCode: string;
  bankName: string;
  currency: string;
  createdAt: string;
}

export interface StandInTransfer {
  id: number;
  transferCode: string;
  reference: string;
  amount: number;
  currency: string;
  reason: string | null;
  recipientCode: string;
  status: TransferStatus | 'failed' | 'abandoned';
  gatewayResponse: string | null;
  webhook: WebhookMode;
  sessionId: string | null;
  createdAt: string;
  updatedAt: string;
  transferredAt: string | null;
}

export interface StandInRefund {
  id: number;
  transactionReference: string;
  amount: number;
  currency: string;
  status: 'pending' | 'processing' | 'processed' | 'failed';
  merchantNote: string | null;
  customerNote: string | null;
  createdAt: string;
}

export interface WebhookDelivery {
  event: string;
  body: string;
  /** The x-paystack-signature sent; null when sent unsigned. */
  signature: string | null;
  /** The receiver's HTTP status; null when there was no webhookUrl or the receiver could not be reached. */
  answer: number | null;
  error: string | null;
}

export interface RecordedRequest {
  endpoint: StandInEndpoint;
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface PaystackStandInOptions {
  secretKey: string;
  webhookUrl?: string;
  /** Accounts the name enquiry knows. */
  accounts?: Array<{ bankCode: string; accountNumber: string; accountName: string }>;
  /** The integration's balance for transfers, in pesewas (default GHS 1,000,000). */
  balanceMinor?: number;
  /** The voucher/OTP charges accept unless a rule says otherwise. */
  otp?: string;
}

export interface PaystackStandIn {
  readonly baseUrl: string;
  close(): Promise<void>;
  next(match: Match, behaviour: Behaviour): void;
  /** Returns a function that removes the rule. */
  always(match: Match, behaviour: Behaviour): () => void;
  clearRules(): void;
  settleCharge(
    reference: string,
    status: 'success' | 'failed',
    options?: { webhook?: WebhookMode; gatewayResponse?: string; gatewayResponseCode?: string },
  ): void;
  /** The payer left without paying: verify reads abandoned; the charge can still be settled later (a late success). */
  abandonCharge(reference: string): void;
  settleTransfer(
    reference: string,
    status: 'success' | 'failed' | 'reversed',
    options?: { webhook?: WebhookMode; reason?: string },
  ): void;
  settleRefund(id: number, status: 'processed' | 'failed', options?: { webhook?: WebhookMode }): void;
  /** Moves a refund's creation time to `at` (for the list's from/to filters). */
  backdateRefund(id: number, at: Date): void;
  reportAmount(reference: string, amountMinor: number, currency?: string): void;
  /** What the list endpoints report for a charge or transfer from now on. */
  listAs(reference: string, report: { status?: string; amountMinor?: number }): void;
  /** Moves a charge's (created, paid) or a transfer's (created, updated, transferred) times to `at`. */
  backdate(reference: string, at: Date): void;
  /** A paid transaction Sika never started (taken on Paystack's dashboard, say), at `at` (default now). */
  recordOutsideCharge(charge: { reference: string; amountMinor: number; currency?: string; at?: Date }): StandInCharge;
  setAccount(bankCode: string, accountNumber: string, accountName: string): void;
  setWebhookUrl(url: string | undefined): void;
  refuseConnections(): Promise<void>;
  acceptConnections(): Promise<void>;
  readonly requests: readonly RecordedRequest[];
  readonly charges: readonly StandInCharge[];
  readonly transfers: readonly StandInTransfer[];
  readonly recipients: readonly StandInRecipient[];
  readonly refunds: readonly StandInRefund[];
  readonly webhooks: readonly WebhookDelivery[];
  readonly transfersSent: number;
  charge(reference: string): StandInCharge | undefined;
  transfer(reference: string): StandInTransfer | undefined;
  count(endpoint: StandInEndpoint): number;
  counts(): Partial<Record<StandInEndpoint, number>>;
  webhooksIdle(): Promise<void>;
}

/**
 * Ghana banks as GET /bank?currency=GHS lists them: Paystack-style entries ([SNIP]
 * doc/transfers/recipients/list-bank.js) for the 15 banks of shared/GHANA.md and two more. The codes and
 * ids are this stand-in's own: Paystack's GHS bank codes are not in any public source we could read.
 */
export const STAND_IN_GHANA_BANKS: ReadonlyArray<{ name: string; code: string }> = [
  { name: 'GCB Bank Limited', code: '040100' },
  { name: 'Ecobank Ghana Limited', code: '130100' },
  { name: 'Stanbic Bank Ghana Limited', code: '190100' },
  { name: 'Absa Bank Ghana Limited', code: '030100' },
  { name: 'Standard Chartered Bank Ghana Limited', code: '020100' },
  { name: 'Fidelity Bank Ghana Limited', code: '240100' },
  { name: 'CalBank PLC', code: '140100' },
  { name: 'Zenith Bank Ghana Limited', code: '120100' },
  { name: 'United Bank for Africa Ghana Limited', code: '060100' },
  { name: 'Access Bank Ghana PLC', code: '280100' },
  { name: 'Republic Bank Ghana PLC', code: '110100' },
  { name: 'Agricultural Development Bank PLC', code: '080100' },
  { name: 'Prudential Bank Limited', code: '180100' },
  { name: 'Consolidated Bank Ghana Limited', code: '340100' },
  { name: 'Guaranty Trust Bank Ghana Limited', code: '230100' },
  { name: 'ARB Apex Bank', code: '070100' },
  { name: 'First Atlantic Bank', code: '170100' },
];

/** The telcos as GET /bank?currency=GHS&type=mobile_money lists them [SNIP doc/transfers/recipients/list-telcos.js]. */
const GHANA_TELCOS: ReadonlyArray<{ name: string; code: string; slug: string; id: number }> = [
  { name: 'AirtelTigo', code: 'ATL', slug: 'atl-mobile-money', id: 29 },
  { name: 'MTN', code: 'MTN', slug: 'mtn-mobile-money', id: 28 },
  { name: 'Vodafone', code: 'VOD', slug: 'vod-mobile-money', id: 66 },
];

/** Charge providers [SNIP doc/payments/payment-methods/mobile.js; list-telcos.js] and the wallet names verify reports. */
const MOMO_PROVIDERS: Record<string, { bank: string; brand: string }> = {
  mtn: { bank: 'MTN Mobile Money', brand: 'Mtn mobile money' },
  vod: { bank: 'Vodafone Cash', brand: 'Vodafone cash' },
  atl: { bank: 'AirtelTigo Money', brand: 'Airteltigo money' },
};

/** Charge references: "Only -, ., = and alphanumeric characters allowed." [OAS ChargeCreate.reference]. */
const CHARGE_REFERENCE = /^[A-Za-z0-9.=-]+$/;
/** Transfer references: lowercase alphanumerics with - and _ [OAS TransferBase.reference]; `minimum: 16` read as a length. */
const TRANSFER_REFERENCE = /^[a-z0-9_-]+$/;
const TRANSFER_REFERENCE_LENGTH_MIN = 16;
const OTP_DEFAULT = '123456';
/** The hosted page's plain Decline (the stand-in's wording). */
const DECLINED_BY_PAYER = 'Declined by the payer';
const BALANCE_MINOR_DEFAULT = 100_000_000;
/** The list endpoint's page size when perPage is not given (not documented; 50 is what SDKs assume). */
const BANKS_PER_PAGE_DEFAULT = 50;
/** Illustrative fees, not Paystack's price list: 1.95% of a charge, a flat GHS 1 per transfer. */
const CHARGE_FEE_BPS = 195;
const TRANSFER_FEE_MINOR = 100;
const INTEGRATION_ID = 463433;
/** How long refuseConnections() waits for clients to notice their kept-alive connections were closed. */
const CLIENT_NOTICE_MS = 25;

const DISPLAY_TEXT = {
  // [SNIP doc/payments/payment-methods/mobile-airtel-mtn.js]
  pay_offline: 'Please complete authorization process on your mobile phone',
  // [SNIP doc/payments/payment-methods/mobile-vodafone.js]
  send_otp: 'Please dial *110# to generate a voucher code. Then input the voucher',
} as const;

type Answer = { status: number; body: unknown } | { status: number; html: string } | { status: 303; location: string };
type Rule = { match: Match; behaviour: Behaviour; once: boolean };

const nowIso = () => new Date().toISOString();
const token = (length: number) => {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (const byte of randomBytes(length)) out += alphabet[byte % alphabet.length];
  return out;
};
/** The last 9 digits: the national number of a Ghana mobile in any of its spellings. */
const phoneKey = (phone: string) => phone.replace(/\D/g, '').slice(-9);
const str = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null;
const ok = (message: string, data: unknown, status = 200): Answer => ({
  status,
  body: { status: true, message, data },
});
const fail = (
  status: number,
  message: string,
  extra: { type?: string; code?: string; nextStep?: string } = {},
): Answer => ({
  status,
  body: {
    status: false,
    message,
    ...(extra.nextStep ? { meta: { nextStep: extra.nextStep } } : {}),
    ...(extra.type ? { type: extra.type } : {}),
    ...(extra.code ? { code: extra.code } : {}),
  },
});
// The error body of [OAS components.schemas.Error] / [SNIP api/introduction/sample-error.js].
const invalid = (message: string, code = 'invalid_params') =>
  fail(400, message, { type: 'validation_error', code, nextStep: 'Check the request parameters and try again' });
const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function parseBody(raw: string, contentType: string | undefined): Record<string, unknown> | null {
  if (!raw.trim()) return {};
  if (contentType?.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw));
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function route(method: string, path: string): { endpoint: StandInEndpoint; param: string | null } {
  const parts = path
    .split('/')
    .filter(Boolean)
    .map((part) => decodeURIComponent(part));
  const [a, b, c] = parts;
  if (method === 'POST' && parts.length === 1 && a === 'charge') return { endpoint: 'charge.create', param: null };
  if (method === 'POST' && parts.length === 2 && a === 'charge' && b === 'submit_otp')
    return { endpoint: 'charge.submit_otp', param: null };
  if (method === 'GET' && parts.length === 2 && a === 'charge') return { endpoint: 'charge.check', param: b! };
  if (method === 'POST' && parts.length === 2 && a === 'transaction' && b === 'initialize')
    return { endpoint: 'transaction.initialize', param: null };
  if (method === 'GET' && parts.length === 3 && a === 'transaction' && b === 'verify')
    return { endpoint: 'transaction.verify', param: c! };
  if (method === 'GET' && parts.length === 1 && a === 'bank') return { endpoint: 'bank.list', param: null };
  if (method === 'GET' && parts.length === 2 && a === 'bank' && b === 'resolve')
    return { endpoint: 'bank.resolve', param: null };
  if (method === 'POST' && parts.length === 1 && a === 'transferrecipient')
    return { endpoint: 'transferrecipient.create', param: null };
  if (method === 'POST' && parts.length === 1 && a === 'transfer')
    return { endpoint: 'transfer.initiate', param: null };
  if (method === 'GET' && parts.length === 3 && a === 'transfer' && b === 'verify')
    return { endpoint: 'transfer.verify', param: c! };
  if (method === 'POST' && parts.length === 1 && a === 'refund') return { endpoint: 'refund.create', param: null };
  if (method === 'GET' && parts.length === 2 && a === 'refund') return { endpoint: 'refund.fetch', param: b! };
  if (method === 'GET' && parts.length === 1 && a === 'refund') return { endpoint: 'refund.list', param: null };
  if (method === 'GET' && parts.length === 2 && a === 'checkout') return { endpoint: 'checkout.page', param: b! };
  if (method === 'GET' && parts.length === 1 && a === 'transaction')
    return { endpoint: 'transaction.list', param: null };
  if (method === 'GET' && parts.length === 1 && a === 'transfer') return { endpoint: 'transfer.list', param: null };
  if (method === 'POST' && parts.length === 3 && a === 'checkout' && (c === 'pay' || c === 'decline' || c === 'cancel'))
    return { endpoint: 'checkout.action', param: b! };
  return { endpoint: 'unknown', param: null };
}

/** Endpoints a behaviour can apply to: a rule never fires where its behaviour means nothing. */
function endpointsOf(behaviour: Behaviour): readonly StandInEndpoint[] | null {
  switch (behaviour.kind) {
    case 'charge':
      return ['charge.create', 'charge.submit_otp'];
    case 'transfer':
      return ['transfer.initiate'];
    case 'resolve':
      return ['bank.resolve'];
    default:
      return null;
  }
}

export async function startPaystackStandIn(options: PaystackStandInOptions): Promise<PaystackStandIn> {
  const secretKey = options.secretKey;
  const domain = secretKey.startsWith('sk_live_') ? 'live' : 'test';
  let webhookUrl = options.webhookUrl;
  let balanceMinor = options.balanceMinor ?? BALANCE_MINOR_DEFAULT;
  const defaultOtp = options.otp ?? OTP_DEFAULT;

  const rules: Rule[] = [];
  const requests: RecordedRequest[] = [];
  const counts = new Map<StandInEndpoint, number>();
  const charges = new Map<string, StandInCharge>();
  const recipients: StandInRecipient[] = [];
  const transfers = new Map<string, StandInTransfer>();
  const refunds = new Map<number, StandInRefund>();
  const webhooks: WebhookDelivery[] = [];
  const pendingDeliveries = new Set<Promise<void>>();
  const accounts = new Map<string, string>();
  /** What the lists report instead, by reference (listAs). */
  const listed = new Map<string, { status?: string; amountMinor?: number }>();
  const accountKey = (bankCode: string, accountNumber: string) => `${bankCode.toUpperCase()}|${accountNumber}`;
  for (const account of options.accounts ?? [])
    accounts.set(accountKey(account.bankCode, account.accountNumber), account.accountName);
  let nextId = 1_000;
  const newId = () => ++nextId;

  // A client that gives up mid-request (its timeout) aborts the body read: the socket is simply dropped.
  const server = createServer((req, res) => void handle(req, res).catch(() => req.socket.destroy()));
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  let listening = true;

  // ---- webhooks ----

  function sign(body: string, key = secretKey): string {
    return createHmac('sha512', key).update(body).digest('hex');
  }

  function sendWebhook(event: string, data: unknown, mode: WebhookMode): void {
    if (mode === 'none') return;
    const body = JSON.stringify({ event, data });
    const copies = mode === 'twice' ? 2 : 1;
    const signature =
      mode === 'unsigned' ? null : mode === 'bad_signature' ? sign(body, `${secretKey}-wrong`) : sign(body);
    const delivery = (async () => {
      for (let copy = 0; copy < copies; copy++) {
        const record: WebhookDelivery = { event, body, signature, answer: null, error: null };
        webhooks.push(record);
        if (!webhookUrl) {
          record.error = 'no webhookUrl';
          continue;
        }
        try {
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (signature !== null) headers['x-paystack-signature'] = signature;
          const answer = await fetch(webhookUrl, { method: 'POST', headers, body, signal: AbortSignal.timeout(5_000) });
          await answer.arrayBuffer();
          record.answer = answer.status;
        } catch (error) {
          record.error = (error as Error).message;
        }
      }
    })();
    pendingDeliveries.add(delivery);
    void delivery.finally(() => pendingDeliveries.delete(delivery));
  }

  // ---- shapes of what Paystack answers ----

  const reportedAmount = (charge: StandInCharge) => charge.reportAmountMinor ?? charge.amount;
  const fees = (amount: number) => Math.round((amount * CHARGE_FEE_BPS) / 10_000);

  // The status GET /transaction/verify reports. Paystack's list filter names success, failed, abandoned,
  // reversed [OAS GET /transaction status]; a hosted-page transaction the payer has not finished reads
  // abandoned and one waiting for the payer's code ongoing (as Paystack's prose docs describe them; not in
  // the OAS or the samples).
  function verifyStatus(charge: StandInCharge): string {
    switch (charge.status) {
      case 'initialized':
        return 'abandoned';
      case 'send_otp':
        return 'ongoing';
      case 'pay_offline':
      case 'pending':
        return 'pending';
      default:
        return charge.status;
    }
  }

  function authorizationOf(charge: StandInCharge) {
    if (charge.channel === 'mobile_money') {
      const digits = (charge.phone ?? '').replace(/\D/g, '');
      const wallet = MOMO_PROVIDERS[charge.provider ?? 'mtn']!;
      // [SNIP doc/payments/payment-methods/mobile-event.js]
      return {
        authorization_code: `AUTH_${token(10)}`,
        bin: `${digits.slice(0, 3)}XXX`,
        last4: `X${digits.slice(-3)}`,
        exp_month: '12',
        exp_year: '9999',
        channel: 'mobile_money',
        card_type: '',
        bank: wallet.bank,
        country_code: 'GH',
        brand: wallet.brand,
        reusable: false,
        signature: null,
        account_name: null,
      };
    }
    return {
      authorization_code: `AUTH_${token(10)}`,
      bin: '408408',
      last4: '4081',
      exp_month: '12',
      exp_year: '2030',
      channel: 'card',
      card_type: 'visa ',
      bank: 'TEST BANK',
      country_code: 'GH',
      brand: 'visa',
      reusable: true,
      signature: `SIG_${token(20)}`,
      account_name: null,
    };
  }

  // The transaction object of verify and charge.success [OAS VerifyResponse; SNIP api/transactions/verify/response.json].
  function transactionData(charge: StandInCharge, status = verifyStatus(charge)) {
    const amount = reportedAmount(charge);
    return {
      id: charge.id,
      domain,
      status,
      reference: charge.reference,
      receipt_number: null,
      amount,
      message: null,
      gateway_response: charge.gatewayResponse,
      ...(charge.gatewayResponseCode ? { gateway_response_code: charge.gatewayResponseCode } : {}),
      paid_at: charge.paidAt,
      created_at: charge.createdAt,
      channel: charge.channel,
      currency: charge.reportCurrency ?? charge.currency,
      ip_address: '127.0.0.1',
      metadata: charge.metadata ?? '',
      log: null,
      fees: charge.paidAt ? fees(amount) : null,
      fees_split: null,
      authorization: authorizationOf(charge),
      customer: {
        id: charge.id + 500_000,
        first_name: null,
        last_name: null,
        email: charge.email,
        customer_code: `CUS_${token(15)}`,
        phone: null,
        metadata: null,
        risk_action: 'default',
        international_format_phone: null,
      },
      plan: null,
      split: {},
      order_id: null,
      paidAt: charge.paidAt,
      createdAt: charge.createdAt,
      requested_amount: charge.amount,
      pos_transaction_data: null,
      source: null,
      fees_breakdown: null,
      connect: null,
      transaction_date: charge.createdAt,
      plan_object: {},
      subaccount: {},
    };
  }

  // What POST /charge, POST /charge/submit_otp and GET /charge/{reference} answer for a charge's state
  // [SNIP mobile-airtel-mtn.js, mobile-vodafone.js, mobile-response-late.js, mobile-response-jit.js;
  // api/charges/submit-otp/response.json for failed].
  function chargeState(charge: StandInCharge): Record<string, unknown> {
    switch (charge.status) {
      case 'send_otp':
      case 'pay_offline':
        return { reference: charge.reference, status: charge.status, display_text: charge.displayText };
      case 'pending':
        return { reference: charge.reference, status: 'pending' };
      case 'failed':
        return {
          reference: charge.reference,
          status: 'failed',
          message: charge.gatewayResponse,
          gateway_response: charge.gatewayResponse,
        };
      case 'initialized':
      case 'abandoned':
        return { reference: charge.reference, status: 'abandoned' };
      default:
        return transactionData(charge, charge.status);
    }
  }

  function recipientData(recipient: StandInRecipient) {
    // [SNIP api/transfer-recipient/create/response.json; doc/transfers/single/transfer-recipient-momo.js]
    return {
      active: true,
      createdAt: recipient.createdAt,
      currency: recipient.currency,
      description: null,
      domain,
      email: null,
      id: recipient.id,
      integration: INTEGRATION_ID,
      metadata: null,
      name: recipient.name,
      recipient_code: recipient.recipientCode,
      type: recipient.type,
      updatedAt: recipient.createdAt,
      is_deleted: false,
      isDeleted: false,
      details: {
        authorization_code: null,
        account_number: recipient.accountNumber,
        // The momo sample answers account_name null: creating a recipient resolves no name.
        account_name:
          recipient.type === 'ghipss'
            ? (accounts.get(accountKey(recipient.bankCode, recipient.accountNumber)) ?? null)
            : null,
        bank_code: recipient.bankCode,
        bank_name: recipient.bankName,
      },
    };
  }

  const recipientOf = (transfer: StandInTransfer) =>
    recipients.find((r) => r.recipientCode === transfer.recipientCode)!;

  // The transfer object of initiate [SNIP api/transfers/initiate/response.json].
  function transferCreated(transfer: StandInTransfer) {
    return {
      transfersessionid: [],
      transfertrials: [],
      domain,
      amount: transfer.amount,
      currency: transfer.currency,
      reference: transfer.reference,
      source: 'balance',
      source_details: null,
      reason: transfer.reason,
      status: transfer.status,
      failures: null,
      transfer_code: transfer.transferCode,
      titan_code: null,
      transferred_at: transfer.transferredAt,
      id: transfer.id,
      integration: INTEGRATION_ID,
      request: transfer.id + 200_000,
      recipient: recipientOf(transfer).id,
      createdAt: transfer.createdAt,
      updatedAt: transfer.updatedAt,
    };
  }

  // The transfer object of verify [SNIP api/transfers/verify/response.json].
  function transferVerified(transfer: StandInTransfer) {
    return {
      amount: transfer.amount,
      createdAt: transfer.createdAt,
      currency: transfer.currency,
      domain,
      failures: null,
      id: transfer.id,
      integration: INTEGRATION_ID,
      reason: transfer.reason,
      reference: transfer.reference,
      source: 'balance',
      source_details: null,
      status: transfer.status,
      titan_code: null,
      transfer_code: transfer.transferCode,
      request: transfer.id + 200_000,
      transferred_at: transfer.transferredAt,
      updatedAt: transfer.updatedAt,
      recipient: recipientData(recipientOf(transfer)),
      session: { provider: transfer.sessionId ? 'ghipss' : null, id: transfer.sessionId },
      fee_charged: TRANSFER_FEE_MINOR,
      fees_breakdown: null,
      gateway_response: transfer.gatewayResponse,
    };
  }

  // The data of transfer.* events [SNIP doc/payments/webhooks/events.js transfer_*].
  function transferEventData(transfer: StandInTransfer) {
    const recipient = recipientData(recipientOf(transfer));
    return {
      amount: transfer.amount,
      currency: transfer.currency,
      domain,
      failures: null,
      id: transfer.id,
      integration: { id: INTEGRATION_ID, is_live: domain === 'live', business_name: 'Sika stand-in' },
      reason: transfer.reason,
      reference: transfer.reference,
      source: 'balance',
      source_details: null,
      status: transfer.status,
      titan_code: null,
      transfer_code: transfer.transferCode,
      transferred_at: transfer.transferredAt,
      recipient: { ...recipient, created_at: recipient.createdAt, updated_at: recipient.updatedAt },
      session: { provider: transfer.sessionId ? 'ghipss' : null, id: transfer.sessionId },
      fee_charged: TRANSFER_FEE_MINOR,
      gateway_response: transfer.gatewayResponse,
      created_at: transfer.createdAt,
      updated_at: transfer.updatedAt,
    };
  }

  function refundData(refund: StandInRefund) {
    const charge = charges.get(refund.transactionReference)!;
    // [SNIP api/refunds/create/response.json, api/refunds/fetch/response.json]
    return {
      transaction: {
        id: charge.id,
        domain,
        reference: charge.reference,
        amount: charge.amount,
        paid_at: charge.paidAt,
        channel: charge.channel,
        currency: charge.currency,
      },
      integration: INTEGRATION_ID,
      deducted_amount: refund.status === 'processed' ? refund.amount : 0,
      channel: null,
      merchant_note: refund.merchantNote,
      customer_note: refund.customerNote,
      status: refund.status,
      refunded_by: 'stand-in@sika.test',
      expected_at: refund.createdAt,
      currency: refund.currency,
      domain,
      amount: refund.amount,
      fully_deducted: refund.status === 'processed',
      id: refund.id,
      createdAt: refund.createdAt,
      updatedAt: refund.createdAt,
    };
  }

  // ---- state changes ----

  function applyChargeStatus(
    charge: StandInCharge,
    status: ChargeStatus,
    gatewayResponse?: string,
    webhook?: WebhookMode,
    gatewayResponseCode?: string,
  ): void {
    charge.status = status;
    if (gatewayResponseCode !== undefined) charge.gatewayResponseCode = gatewayResponseCode;
    if (status === 'send_otp') charge.displayText ??= DISPLAY_TEXT.send_otp;
    if (status === 'pay_offline') charge.displayText ??= DISPLAY_TEXT.pay_offline;
    if (status === 'success') {
      charge.paidAt = nowIso();
      charge.gatewayResponse = gatewayResponse ?? 'Approved';
      // charge.success carries the transaction object [SNIP mobile-event.js]; there is no charge.failed.
      sendWebhook('charge.success', transactionData(charge, 'success'), webhook ?? charge.webhook);
    } else if (status === 'failed') {
      charge.gatewayResponse = gatewayResponse ?? 'Declined';
    } else {
      charge.gatewayResponse = gatewayResponse ?? charge.gatewayResponse;
    }
  }

  function applyTransferStatus(
    transfer: StandInTransfer,
    status: TransferStatus,
    reason?: string,
    webhook?: WebhookMode,
  ): void {
    transfer.status = status;
    transfer.updatedAt = nowIso();
    if (status === 'success') {
      transfer.transferredAt = transfer.updatedAt;
      transfer.sessionId ??= `${Date.now()}${transfer.id}`;
      transfer.gatewayResponse = reason ?? 'Approved';
    }
    if (status === 'failed' || status === 'reversed') {
      balanceMinor += transfer.amount + TRANSFER_FEE_MINOR; // Paystack returns the amount to the balance
      transfer.gatewayResponse =
        reason ??
        (status === 'failed'
          ? 'Recipient account could not be credited'
          : 'Transfer reversed by the receiving institution');
    }
    const event =
      status === 'success'
        ? 'transfer.success'
        : status === 'failed'
          ? 'transfer.failed'
          : status === 'reversed'
            ? 'transfer.reversed'
            : null;
    if (event) sendWebhook(event, transferEventData(transfer), webhook ?? transfer.webhook);
  }

  // ---- endpoints ----

  function createCharge(call: StandInCall, directive: Extract<Behaviour, { kind: 'charge' }> | null): Answer {
    const body = call.body;
    const email = str(body.email);
    // [SNIP api/introduction/sample-error.js]: missing email -> missing_params.
    if (!email) return invalid('Email Address is required', 'missing_params');
    const amount = body.amount;
    if (typeof amount !== 'number' && typeof amount !== 'string')
      return invalid('Amount is required', 'missing_params');
    if (!/^\d+$/.test(String(amount)) || Number(amount) <= 0) return invalid('Invalid Amount Sent');
    const currency = str(body.currency) ?? 'GHS'; // a GHS integration's default currency
    if (currency !== 'GHS') return invalid('Currency not supported by merchant', 'unsupported_currency');
    const momo = body.mobile_money;
    if (!momo || typeof momo !== 'object')
      return invalid('This stand-in only charges mobile money: mobile_money is required', 'missing_params');
    const phone = str((momo as Record<string, unknown>).phone);
    const provider = str((momo as Record<string, unknown>).provider)?.toLowerCase() ?? null;
    if (!phone || !/^\+?\d{9,12}$/.test(phone)) return invalid('Invalid phone number', 'invalid_params');
    // Providers are the telco codes of GET /bank?type=mobile_money, matched without case ([SNIP] uses mtn and MTN).
    if (!provider || !(provider in MOMO_PROVIDERS)) return invalid('Invalid mobile money provider', 'invalid_params');
    const reference = str(body.reference) ?? token(15);
    if (!CHARGE_REFERENCE.test(reference))
      return invalid('Invalid transaction reference: only -, ., = and alphanumeric characters allowed');
    // [OAS TransactionInitializeBadRequestModel]
    if (charges.has(reference)) return invalid('Duplicate Transaction Reference', 'duplicate_reference');
    const status: ChargeStatus = directive?.status ?? (provider === 'vod' ? 'send_otp' : 'pay_offline');
    const charge: StandInCharge = {
      id: newId(),
      reference,
      channel: 'mobile_money',
      amount: Number(amount),
      currency,
      email,
      phone,
      provider,
      status: 'pending',
      displayText: directive?.displayText ?? null,
      gatewayResponse: 'Awaiting payer approval',
      gatewayResponseCode: null,
      cancelledAt: null,
      otp: directive?.otp ?? defaultOtp,
      afterOtp: directive?.afterOtp ?? 'success',
      otpTries: 0,
      accessCode: null,
      callbackUrl: null,
      channels: null,
      metadata: body.metadata ?? null,
      webhook: directive?.webhook ?? 'once',
      reportAmountMinor: directive?.reportAmountMinor ?? null,
      reportCurrency: directive?.reportCurrency ?? null,
      refundedMinor: 0,
      createdAt: nowIso(),
      paidAt: null,
    };
    charges.set(reference, charge);
    applyChargeStatus(charge, status, directive?.gatewayResponse, undefined, directive?.gatewayResponseCode);
    return ok('Charge attempted', chargeState(charge));
  }

  function submitOtp(call: StandInCall, directive: Extract<Behaviour, { kind: 'charge' }> | null): Answer {
    const otp = str(call.body.otp);
    const reference = str(call.body.reference);
    if (!otp || !reference) return invalid('otp and reference are required', 'missing_params');
    const charge = charges.get(reference);
    // [SNIP api/charges/submit-otp/response.json] 400: "Transaction reference is invalid".
    if (charge?.status !== 'send_otp') return fail(400, 'Transaction reference is invalid');
    charge.otpTries += 1;
    // Not documented: how Paystack answers a wrong voucher. Here a 400 that leaves the charge waiting for a code.
    if (otp !== charge.otp)
      return invalid('Invalid voucher code. Please generate a new voucher and try again', 'invalid_otp');
    applyChargeStatus(
      charge,
      directive?.status === 'send_otp' ? charge.afterOtp : (directive?.status ?? charge.afterOtp),
      directive?.gatewayResponse,
      undefined,
      directive?.gatewayResponseCode,
    );
    return ok('Charge attempted', chargeState(charge));
  }

  function initializeTransaction(call: StandInCall): Answer {
    const body = call.body;
    const email = str(body.email);
    if (!email) return invalid('Email Address is required', 'missing_params');
    const amount = body.amount;
    if (!/^\d+$/.test(String(amount ?? '')) || Number(amount) <= 0) return invalid('Invalid Amount Sent');
    const currency = str(body.currency) ?? 'GHS';
    if (currency !== 'GHS') return invalid('Currency not supported by merchant', 'unsupported_currency');
    const reference = str(body.reference) ?? token(15);
    if (!CHARGE_REFERENCE.test(reference))
      return invalid('Invalid transaction reference: only -, ., = and alphanumeric characters allowed');
    if (charges.has(reference)) return invalid('Duplicate Transaction Reference', 'duplicate_reference');
    const channels = Array.isArray(body.channels) ? body.channels.map(String) : null;
    const accessCode = token(15);
    charges.set(reference, {
      id: newId(),
      reference,
      channel: 'card',
      amount: Number(amount),
      currency,
      email,
      phone: null,
      provider: null,
      status: 'initialized',
      displayText: null,
      gatewayResponse: 'The transaction was not completed',
      gatewayResponseCode: null,
      cancelledAt: null,
      otp: defaultOtp,
      afterOtp: 'success',
      otpTries: 0,
      accessCode,
      callbackUrl: str(body.callback_url),
      channels,
      metadata: body.metadata ?? null,
      webhook: 'once',
      reportAmountMinor: null,
      reportCurrency: null,
      refundedMinor: 0,
      createdAt: nowIso(),
      paidAt: null,
    });
    // [SNIP api/transactions/initialize/response.json]: the access code is the last part of authorization_url.
    return ok('Authorization URL created', {
      authorization_url: `${baseUrl}/checkout/${accessCode}`,
      access_code: accessCode,
      reference,
    });
  }

  function checkoutPage(call: StandInCall): Answer {
    const charge = [...charges.values()].find((c) => c.accessCode === call.param);
    if (!charge)
      return { status: 404, html: '<!doctype html><title>Not found</title><p>This payment page does not exist.</p>' };
    const cedis = `GHS ${(charge.amount / 100).toFixed(2)}`;
    const done = charge.status !== 'initialized';
    // The decline's words, so a test (or a person) picks the failure reason the adapter reads.
    const declineOptions = [DECLINED_BY_PAYER, ...Object.values(PAYSTACK_FAILURE_TEXTS)]
      .map((said) => `<option>${escapeHtml(said)}</option>`)
      .join('');
    const action = (verb: string) => `${baseUrl}/checkout/${encodeURIComponent(charge.accessCode!)}/${verb}`;
    return {
      status: 200,
      html: `<!doctype html><html><head><meta charset="utf-8"><title>Paystack stand-in checkout</title></head><body>
<h1>Pay ${escapeHtml(cedis)}</h1><p>${escapeHtml(charge.email)} &middot; ${escapeHtml(charge.reference)}</p>
${done ? `<p id="status">This payment is ${escapeHtml(charge.status)}.</p>` : ''}
<form method="post" action="${escapeHtml(action('pay'))}"><button type="submit" id="pay"${done ? ' disabled' : ''}>Pay</button></form>
<form method="post" action="${escapeHtml(action('decline'))}"><select name="gateway_response" id="gateway-response">${declineOptions}</select>
<button type="submit" id="decline"${done ? ' disabled' : ''}>Decline</button></form>
<form method="post" action="${escapeHtml(action('cancel'))}"><button type="submit" id="cancel"${done ? ' disabled' : ''}>Cancel payment</button></form>
</body></html>`,
    };
  }

  function checkoutAction(call: StandInCall): Answer {
    const charge = [...charges.values()].find((c) => c.accessCode === call.param);
    if (!charge)
      return { status: 404, html: '<!doctype html><title>Not found</title><p>This payment page does not exist.</p>' };
    if (call.path.endsWith('/cancel')) {
      // "You can redirect your users to a chosen URL when they cancel a payment ... setting a cancel_action in your
      // metadata" [https://paystack.com/docs/payments/metadata/]. The transaction is left as it was: unpaid, verify says abandoned.
      if (charge.status === 'initialized') charge.cancelledAt = nowIso();
      const cancelAction = str((charge.metadata as Record<string, unknown> | null)?.cancel_action);
      if (!cancelAction)
        return { status: 200, html: `<!doctype html><title>Cancelled</title><p id="status">cancelled</p>` };
      return { status: 303, location: cancelAction };
    }
    if (charge.status === 'initialized') {
      if (call.path.endsWith('/pay')) applyChargeStatus(charge, 'success', 'Successful');
      else applyChargeStatus(charge, 'failed', str(call.body.gateway_response) || DECLINED_BY_PAYER);
    }
    if (!charge.callbackUrl)
      return { status: 200, html: `<!doctype html><title>Done</title><p id="status">${escapeHtml(charge.status)}</p>` };
    // The hosted page sends the payer to callback_url with trxref and reference (as Paystack's checkout does).
    const target = new URL(charge.callbackUrl);
    target.searchParams.set('trxref', charge.reference);
    target.searchParams.set('reference', charge.reference);
    return { status: 303, location: target.toString() };
  }

  function listBanks(call: StandInCall): Answer {
    const currency = call.query.get('currency') ?? call.query.get('country');
    const type = call.query.get('type');
    const ghana = !currency || currency === 'GHS' || currency.toLowerCase() === 'ghana';
    // [OAS] spells the filter "ghipps" on /bank and "ghipss" on recipients: both are accepted here.
    const banks =
      !ghana || type === 'mobile_money'
        ? []
        : STAND_IN_GHANA_BANKS.map((bank, index) => ({
            name: bank.name,
            slug: bank.name
              .toLowerCase()
              .replace(/[^a-z0-9]+/g, '-')
              .replace(/-$/, ''),
            code: bank.code,
            longcode: bank.code,
            gateway: null,
            pay_with_bank: false,
            active: true,
            is_deleted: false,
            country: 'Ghana',
            currency: 'GHS',
            type: 'ghipss',
            id: 300 + index,
            createdAt: '2020-01-24T10:01:06.000Z',
            updatedAt: '2020-01-24T10:01:06.000Z',
          }));
    const telcos =
      !ghana || (type && type !== 'mobile_money')
        ? []
        : GHANA_TELCOS.map((telco) => ({
            name: telco.name,
            slug: telco.slug,
            code: telco.code,
            longcode: '',
            gateway: null,
            pay_with_bank: false,
            active: true,
            is_deleted: null,
            country: 'Ghana',
            currency: 'GHS',
            type: 'mobile_money',
            id: telco.id,
            createdAt: '2018-03-29T12:54:59.000Z',
            updatedAt: '2020-01-24T10:01:06.000Z',
          }));
    if (type && !['ghipss', 'ghipps', 'mobile_money'].includes(type)) return ok('Banks retrieved', [], 200);
    const all = [...banks, ...telcos];
    const perPage = Math.max(1, Number(call.query.get('perPage')) || BANKS_PER_PAGE_DEFAULT);
    const page = Math.max(1, Number(call.query.get('page')) || 1);
    const data = all.slice((page - 1) * perPage, page * perPage);
    return {
      status: 200,
      body: {
        status: true,
        message: 'Banks retrieved',
        data,
        meta: {
          next: page * perPage < all.length ? String(page + 1) : null,
          previous: page > 1 ? String(page - 1) : null,
          perPage,
        },
      },
    };
  }

  function bankName(type: 'ghipss' | 'mobile_money', code: string): string | null {
    if (type === 'mobile_money') return GHANA_TELCOS.find((t) => t.code === code.toUpperCase())?.name ?? null;
    return STAND_IN_GHANA_BANKS.find((b) => b.code === code)?.name ?? null;
  }

  function resolveAccount(call: StandInCall, directive: Extract<Behaviour, { kind: 'resolve' }> | null): Answer {
    const accountNumber = call.query.get('account_number');
    const bankCode = call.query.get('bank_code');
    if (!accountNumber || !bankCode) return invalid('account_number and bank_code are required', 'missing_params');
    if (!bankName('ghipss', bankCode) && !bankName('mobile_money', bankCode))
      return invalid('Unknown bank code', 'invalid_bank_code');
    const name = directive ? directive.accountName : (accounts.get(accountKey(bankCode, accountNumber)) ?? null);
    // Not documented: the answer for an account the bank does not know. 422 with this message is what
    // integrators report; [OAS] lists 404 as well, and the adapter reads both the same way.
    if (name === null) return fail(422, 'Could not resolve account name. Check parameters or try again.');
    // [SNIP api/verification/resolve-account/response.json; DOCS identity-verification/verify-account-number]
    return ok('Account number resolved', { account_number: accountNumber, account_name: name, bank_id: 9 });
  }

  function createRecipient(call: StandInCall): Answer {
    const body = call.body;
    const type = str(body.type);
    const name = str(body.name);
    const accountNumber = str(body.account_number);
    const bankCode = str(body.bank_code);
    if (!type || !name || !accountNumber || !bankCode)
      return invalid('type, name, account_number and bank_code are required', 'missing_params');
    // A Ghana integration pays ghipss bank accounts and mobile_money wallets ([DOCS transfers/single-transfers]).
    if (type !== 'ghipss' && type !== 'mobile_money')
      return invalid('Recipient type is not supported for this integration', 'invalid_params');
    const currency = str(body.currency) ?? 'GHS';
    if (currency !== 'GHS') return invalid('Currency not supported by merchant', 'unsupported_currency');
    const bank = bankName(type, bankCode);
    if (!bank) return invalid('Account details are invalid: unknown bank code', 'invalid_bank_code');
    const code = type === 'mobile_money' ? bankCode.toUpperCase() : bankCode;
    // "A duplicate account number will lead to the retrieval of the existing record" [OAS /transferrecipient].
    const existing = recipients.find(
      (r) => r.type === type && r.bankCode === code && r.accountNumber === accountNumber,
    );
    if (existing) return ok('Transfer recipient created successfully', recipientData(existing), 201);
    const recipient: StandInRecipient = {
      id: newId(),
      recipientCode: `RCP_${token(15)}`,
      type,
      name,
      accountNumber,
      bankCode: code,
      bankName: bank,
      currency,
      createdAt: nowIso(),
    };
    recipients.push(recipient);
    return ok('Transfer recipient created successfully', recipientData(recipient), 201);
  }

  function initiateTransfer(call: StandInCall, directive: Extract<Behaviour, { kind: 'transfer' }> | null): Answer {
    const body = call.body;
    // source is required, "balance" [OAS TransferInitiate].
    if (str(body.source) !== 'balance') return invalid('Invalid source: only balance is supported', 'invalid_params');
    const amount = body.amount;
    if (!/^\d+$/.test(String(amount ?? '')) || Number(amount) <= 0) return invalid('Invalid amount', 'invalid_params');
    const recipientCode = str(body.recipient);
    const recipient = recipients.find((r) => r.recipientCode === recipientCode);
    // [SNIP api/transfers/initiate/response.json] 400.
    if (!recipient)
      return fail(400, 'Recipient specified is invalid', {
        type: 'validation_error',
        code: 'invalid_transfer_recipient',
        nextStep: 'Provide a valid recipient. Ensure you are passing the recipient code in the recipient param',
      });
    const reference = str(body.reference);
    if (!reference) return invalid('Transfer reference is required', 'missing_params');
    if (!TRANSFER_REFERENCE.test(reference) || reference.length < TRANSFER_REFERENCE_LENGTH_MIN) {
      return invalid(
        'Invalid transfer reference: a lowercase alphanumeric string with only -,_ symbols, at least 16 characters',
      );
    }
    // currency defaults to NGN [OAS TransferInitiate.currency]: a GHS integration must be told GHS.
    const currency = str(body.currency) ?? 'NGN';
    if (currency !== 'GHS')
      return invalid(`Currency ${currency} is not supported for transfers on this integration`, 'unsupported_currency');
    const existing = transfers.get(reference);
    if (existing) {
      // "To ensure idempotency, you need to provide a unique identifier" [OAS TransferBase.reference]; a
      // reference lets you "retry a non-conclusive transfer rather than initiate a new request" [DOCS
      // transfers/single-transfers]. What Paystack answers to the same reference is not documented: here the
      // existing transfer, and a 400 when the retry asks for something else (a different amount or recipient).
      if (existing.amount !== Number(amount) || existing.recipientCode !== recipientCode)
        return invalid('Duplicate transfer reference', 'duplicate_reference');
      return ok('Transfer has been queued', transferCreated(existing));
    }
    if (balanceMinor < Number(amount) + TRANSFER_FEE_MINOR)
      return fail(400, 'Your balance is not enough to fulfil this request', {
        type: 'api_error',
        code: 'insufficient_balance',
      });
    balanceMinor -= Number(amount) + TRANSFER_FEE_MINOR;
    const at = nowIso();
    const transfer: StandInTransfer = {
      id: newId(),
      transferCode: `TRF_${token(15)}`,
      reference,
      amount: Number(amount),
      currency,
      reason: str(body.reason),
      recipientCode: recipient.recipientCode,
      status: 'pending',
      gatewayResponse: null,
      webhook: directive?.webhook ?? 'once',
      sessionId: null,
      createdAt: at,
      updatedAt: at,
      transferredAt: null,
    };
    transfers.set(reference, transfer);
    const status = directive?.status ?? 'pending';
    if (status !== 'pending') applyTransferStatus(transfer, status, directive?.reason);
    // [SNIP doc/transfers/manage/initiate-transfer-otp.js] for the OTP message.
    return ok(
      status === 'otp' ? 'Transfer requires OTP to continue' : 'Transfer has been queued',
      transferCreated(transfer),
    );
  }

  /**
   * GET /refund: perPage (default 50), page, from, to [OAS GET /refund "List Refunds"], and the transaction (its
   * id or reference) and currency filters integrators pass (not in the spec); rows shaped as
   * RefundListResponseArray (transaction is the charge's id, transaction_reference its reference) with meta
   * {total, skipped, perPage, page, pageCount} [OAS RefundListResponse]. Newest first: not documented.
   */
  function listRefunds(call: StandInCall): Answer {
    const query = call.query;
    const positive = (name: string, fallback: number) => {
      const raw = query.get(name);
      return raw === null ? fallback : /^\d+$/.test(raw) && Number(raw) >= 1 ? Number(raw) : NaN;
    };
    const perPage = positive('perPage', BANKS_PER_PAGE_DEFAULT);
    const page = positive('page', 1);
    if (Number.isNaN(perPage) || Number.isNaN(page)) return invalid('Invalid page or perPage');
    const bound = (name: string) => (query.get(name) === null ? null : Date.parse(query.get(name)!));
    const from = bound('from');
    const to = bound('to');
    if (Number.isNaN(from) || Number.isNaN(to)) return invalid('Invalid from or to date');
    const transaction = query.get('transaction');
    const currency = query.get('currency');
    const rows = [...refunds.values()]
      .filter((refund) => {
        const charge = charges.get(refund.transactionReference)!;
        const at = Date.parse(refund.createdAt);
        if (transaction !== null && transaction !== charge.reference && transaction !== String(charge.id)) return false;
        if (currency !== null && currency !== refund.currency) return false;
        return (from === null || at >= from) && (to === null || at <= to);
      })
      .sort((x, y) => Date.parse(y.createdAt) - Date.parse(x.createdAt) || y.id - x.id);
    const data = rows.slice((page - 1) * perPage, page * perPage).map((refund) => {
      const { transaction: charge, ...rest } = refundData(refund);
      return {
        ...rest,
        transaction: charge.id,
        transaction_reference: charge.reference,
        reason: refund.status === 'failed' ? 'Refund failed' : '',
      };
    });
    const meta = {
      total: rows.length,
      skipped: (page - 1) * perPage,
      perPage,
      page,
      pageCount: Math.ceil(rows.length / perPage),
    };
    return { status: 200, body: { status: true, message: 'Refunds retrieved', data, meta } };
  }

  function createRefund(call: StandInCall): Answer {
    const body = call.body;
    const transaction = str(body.transaction);
    if (!transaction) return invalid('Transaction reference or id is required', 'missing_params');
    const charge = charges.get(transaction) ?? [...charges.values()].find((c) => String(c.id) === transaction);
    if (!charge) return fail(404, 'Transaction not found');
    if (charge.status !== 'success')
      return invalid('Cannot refund a transaction that is not successful', 'invalid_params');
    const refundable = charge.amount - charge.refundedMinor;
    // The sample sends the amount as a string [SNIP doc/payments/refunds/create-refund.js]: both are taken.
    const amount = body.amount === undefined ? refundable : Number(body.amount);
    if (!Number.isInteger(amount) || amount <= 0) return invalid('Invalid amount', 'invalid_params');
    if (amount > refundable)
      return invalid('Refund amount cannot be greater than the amount left to refund', 'invalid_params');
    charge.refundedMinor += amount;
    const refund: StandInRefund = {
      id: newId(),
      transactionReference: charge.reference,
      amount,
      currency: charge.currency,
      status: 'pending',
      merchantNote: str(body.merchant_note),
      customerNote: str(body.customer_note),
      createdAt: nowIso(),
    };
    refunds.set(refund.id, refund);
    return ok('Refund has been queued for processing', refundData(refund));
  }

  /**
   * One page of a list [OAS /transaction get, /transfer get]: page and perPage ([PAG]
   * https://paystack.com/docs/api/pagination/, default 50; the spec's per_page is read too), from and to
   * (date-times) on the creation time, newest first (not documented), and meta { total, skipped, perPage, page,
   * pageCount } [OAS TransactionListResponse.meta, TransferListResponse.meta] (total_volume for transactions).
   */
  function listPage<T>(
    call: StandInCall,
    all: T[],
    createdAt: (item: T) => string,
    shape: (item: T) => Record<string, unknown>,
    volume: boolean,
  ): Answer {
    const number = (name: string, fallback: number) => {
      const raw = call.query.get(name);
      return raw === null ? fallback : /^\d+$/.test(raw) && Number(raw) >= 1 ? Number(raw) : NaN;
    };
    const perPage = number('perPage', number('per_page', BANKS_PER_PAGE_DEFAULT));
    const page = number('page', 1);
    if (Number.isNaN(perPage) || Number.isNaN(page)) return invalid('Invalid page or perPage');
    const bound = (name: string) => {
      const raw = call.query.get(name);
      return raw === null ? null : Number.isNaN(Date.parse(raw)) ? NaN : Date.parse(raw);
    };
    const from = bound('from');
    const to = bound('to');
    if (Number.isNaN(from) || Number.isNaN(to)) return invalid('Invalid from or to date');
    const inWindow = all
      .filter(
        (item) =>
          (from === null || Date.parse(createdAt(item)) >= from) && (to === null || Date.parse(createdAt(item)) <= to),
      )
      .sort((x, y) => Date.parse(createdAt(y)) - Date.parse(createdAt(x)));
    const rows = inWindow.slice((page - 1) * perPage, page * perPage).map(shape);
    const meta: Record<string, unknown> = {
      total: inWindow.length,
      skipped: (page - 1) * perPage,
      perPage,
      page,
      pageCount: Math.ceil(inWindow.length / perPage),
    };
    if (volume)
      meta.total_volume = rows.reduce((sum, row) => sum + (row.status === 'success' ? Number(row.amount) : 0), 0);
    return {
      status: 200,
      body: { status: true, message: volume ? 'Transactions retrieved' : 'Transfers retrieved', data: rows, meta },
    };
  }

  function answerFor(call: StandInCall, behaviour: Behaviour | null): Answer {
    const charge = behaviour?.kind === 'charge' ? behaviour : null;
    switch (call.endpoint) {
      case 'charge.create':
        return createCharge(call, charge);
      case 'charge.submit_otp':
        return submitOtp(call, charge);
      case 'charge.check': {
        const found = charges.get(call.param!);
        // [OAS /charge/{reference}]: 404 for a reference it does not know; [SNIP api/charges/check/response.json].
        return found
          ? ok(found.status === 'pending' ? 'Reference check successful' : 'Charge attempted', chargeState(found))
          : fail(404, 'Charge not found');
      }
      case 'transaction.initialize':
        return initializeTransaction(call);
      case 'transaction.verify': {
        const found = charges.get(call.param!);
        return found
          ? ok('Verification successful', transactionData(found))
          : fail(404, 'Transaction reference not found');
      }
      case 'bank.list':
        return listBanks(call);
      case 'bank.resolve':
        return resolveAccount(call, behaviour?.kind === 'resolve' ? behaviour : null);
      case 'transferrecipient.create':
        return createRecipient(call);
      case 'transfer.initiate':
        return initiateTransfer(call, behaviour?.kind === 'transfer' ? behaviour : null);
      case 'transfer.verify': {
        const found = transfers.get(call.param!);
        // [SNIP api/transfers/verify/response.json] 404 "Transfer not found".
        return found ? ok('Transfer retrieved', transferVerified(found)) : fail(404, 'Transfer not found');
      }
      case 'refund.create':
        return createRefund(call);
      case 'refund.fetch': {
        const found = refunds.get(Number(call.param));
        return found ? ok('Refund retrieved', refundData(found)) : fail(404, 'Refund not found');
      }
      case 'refund.list':
        return listRefunds(call);
      case 'checkout.page':
        return checkoutPage(call);
      case 'checkout.action':
        return checkoutAction(call);
      case 'transaction.list':
        return listPage(
          call,
          [...charges.values()],
          (charge) => charge.createdAt,
          (charge) => {
            const shown = listed.get(charge.reference);
            return {
              ...transactionData(charge, shown?.status ?? verifyStatus(charge)),
              ...(shown?.amountMinor !== undefined ? { amount: shown.amountMinor } : {}),
            };
          },
          true,
        );
      case 'transfer.list':
        return listPage(
          call,
          [...transfers.values()],
          (transfer) => transfer.createdAt,
          (transfer) => {
            const shown = listed.get(transfer.reference);
            return {
              ...transferVerified(transfer),
              ...(shown?.status ? { status: shown.status } : {}),
              ...(shown?.amountMinor !== undefined ? { amount: shown.amountMinor } : {}),
            };
          },
          false,
        );
      default:
        return fail(404, 'Route not found');
    }
  }

  // ---- rules ----

  function matches(rule: Rule, call: StandInCall): boolean {
    const { match, behaviour } = rule;
    const allowed = endpointsOf(behaviour);
    if (allowed && !allowed.includes(call.endpoint)) return false;
    if (!allowed && (call.endpoint === 'checkout.page' || call.endpoint === 'checkout.action') && !match.endpoint)
      return false;
    if (match.endpoint) {
      const wanted: readonly StandInEndpoint[] = typeof match.endpoint === 'string' ? [match.endpoint] : match.endpoint;
      if (!wanted.includes(call.endpoint)) return false;
    }
    const reference = str(call.body.reference) ?? (call.endpoint.startsWith('checkout.') ? null : call.param);
    if (match.reference !== undefined && reference !== match.reference) return false;
    if (match.phone !== undefined) {
      const momo = call.body.mobile_money as Record<string, unknown> | undefined;
      const phone = str(momo?.phone) ?? (reference ? (charges.get(reference)?.phone ?? null) : null);
      if (!phone || phoneKey(phone) !== phoneKey(match.phone)) return false;
    }
    if (match.accountNumber !== undefined) {
      let account = str(call.body.account_number) ?? call.query.get('account_number');
      if (!account && call.endpoint === 'transfer.initiate')
        account = recipients.find((r) => r.recipientCode === str(call.body.recipient))?.accountNumber ?? null;
      if (!account && call.endpoint === 'transfer.verify' && reference) {
        const transfer = transfers.get(reference);
        account = transfer ? recipientOf(transfer).accountNumber : null;
      }
      if (account !== match.accountNumber) return false;
    }
    return !match.where || match.where(call);
  }

  function takeRule(call: StandInCall): Behaviour | null {
    const index = rules.findIndex((rule) => matches(rule, call));
    if (index < 0) return null;
    const rule = rules[index]!;
    if (rule.once) rules.splice(index, 1);
    return rule.behaviour;
  }

  // ---- the server ----

  function write(res: ServerResponse, answer: Answer): void {
    if (res.destroyed || res.writableEnded) return;
    if ('location' in answer) {
      res.writeHead(303, { location: answer.location, 'content-length': '0' });
      res.end();
    } else if ('html' in answer) {
      const html = Buffer.from(answer.html);
      res.writeHead(answer.status, { 'content-type': 'text/html; charset=utf-8', 'content-length': html.length });
      res.end(html);
    } else {
      const json = Buffer.from(JSON.stringify(answer.body));
      res.writeHead(answer.status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': json.length,
      });
      res.end(json);
    }
  }

  function later(ms: number, run: () => void): void {
    if (!Number.isFinite(ms)) return; // held until close()
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', baseUrl);
    const method = req.method ?? 'GET';
    const { endpoint, param } = route(method, url.pathname);
    const parsed = parseBody(rawBody, req.headers['content-type']);
    const call: StandInCall = {
      endpoint,
      method,
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: parsed ?? {},
      rawBody,
      param,
    };
    requests.push({ endpoint, method, path: url.pathname + url.search, headers: req.headers, body: call.body });
    counts.set(endpoint, (counts.get(endpoint) ?? 0) + 1);

    const browserPage = endpoint === 'checkout.page' || endpoint === 'checkout.action';
    // [OAS components.responses.Unauthorized]
    if (!browserPage && req.headers.authorization !== `Bearer ${secretKey}`)
      return write(res, fail(401, 'Invalid key'));
    if (parsed === null) return write(res, invalid('The request body is not valid JSON'));

    const behaviour = takeRule(call);
    switch (behaviour?.kind) {
      case 'http_error':
        return write(res, {
          status: behaviour.status,
          body: behaviour.body ?? {
            status: false,
            message: behaviour.status >= 500 ? 'An error occurred, please try again' : 'Request refused',
          },
        });
      case 'reset':
        req.socket.destroy();
        return;
      case 'lose_answer':
        answerFor(call, null);
        req.socket.destroy();
        return;
      case 'hold': {
        if (behaviour.act === false) return later(behaviour.ms ?? Infinity, () => req.socket.destroy());
        const answer = answerFor(call, null);
        return later(behaviour.ms ?? Infinity, () => write(res, answer));
      }
      default:
        return write(res, answerFor(call, behaviour));
    }
  }

  const standIn: PaystackStandIn = {
    baseUrl,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      listening = false;
      await Promise.allSettled([...pendingDeliveries]);
    },
    next(match, behaviour) {
      rules.push({ match, behaviour, once: true });
    },
    always(match, behaviour) {
      const rule: Rule = { match, behaviour, once: false };
      rules.push(rule);
      return () => {
        const index = rules.indexOf(rule);
        if (index >= 0) rules.splice(index, 1);
      };
    },
    clearRules() {
      rules.length = 0;
    },
    settleCharge(reference, status, options = {}) {
      const charge = charges.get(reference);
      if (!charge) throw new Error(`stand-in: no charge ${reference}`);
      if (charge.status === 'success' || charge.status === 'failed' || charge.status === 'reversed')
        throw new Error(`stand-in: charge ${reference} is already ${charge.status}`);
      applyChargeStatus(charge, status, options.gatewayResponse, options.webhook, options.gatewayResponseCode);
    },
    abandonCharge(reference) {
      const charge = charges.get(reference);
      if (!charge) throw new Error(`stand-in: no charge ${reference}`);
      if (charge.status === 'success' || charge.status === 'failed' || charge.status === 'reversed')
        throw new Error(`stand-in: charge ${reference} is already ${charge.status}`);
      // A hosted-page transaction already reads abandoned until paid [https://paystack.com/docs/payments/verify-payments/ "abandoned: The
      // customer has not completed the transaction"]; a wallet charge is moved there.
      if (charge.status === 'initialized') charge.cancelledAt ??= nowIso();
      else charge.status = 'abandoned';
    },
    settleTransfer(reference, status, options = {}) {
      const transfer = transfers.get(reference);
      if (!transfer) throw new Error(`stand-in: no transfer ${reference}`);
      if (
        status === 'reversed'
          ? transfer.status !== 'success'
          : transfer.status !== 'pending' && transfer.status !== 'received' && transfer.status !== 'otp'
      ) {
        throw new Error(`stand-in: transfer ${reference} is ${transfer.status}; it cannot become ${status}`);
      }
      applyTransferStatus(transfer, status, options.reason, options.webhook);
    },
    settleRefund(id, status, options = {}) {
      const refund = refunds.get(id);
      if (!refund) throw new Error(`stand-in: no refund ${id}`);
      refund.status = status;
      const charge = charges.get(refund.transactionReference)!;
      if (status === 'failed') charge.refundedMinor -= refund.amount;
      // A transaction refunded in full reads reversed ([OAS GET /transaction] status filter).
      if (status === 'processed' && charge.refundedMinor >= charge.amount) charge.status = 'reversed';
      // [SNIP doc/payments/refunds/events.js]
      sendWebhook(
        `refund.${status}`,
        {
          status,
          transaction_reference: refund.transactionReference,
          refund_reference: status === 'processed' ? `${Date.now()}${refund.id}` : null,
          amount: refund.amount,
          currency: refund.currency,
          processor: charge.channel === 'mobile_money' ? 'mobile-money' : 'card',
          customer: { first_name: null, last_name: null, email: charge.email },
          integration: INTEGRATION_ID,
          domain,
        },
        options.webhook ?? 'once',
      );
    },
    listAs(reference, report) {
      if (!charges.has(reference) && !transfers.has(reference))
        throw new Error(`stand-in: no charge or transfer ${reference}`);
      listed.set(reference, { ...listed.get(reference), ...report });
    },
    backdate(reference, at) {
      const iso = at.toISOString();
      const charge = charges.get(reference);
      const transfer = transfers.get(reference);
      if (!charge && !transfer) throw new Error(`stand-in: no charge or transfer ${reference}`);
      if (charge) {
        charge.createdAt = iso;
        if (charge.paidAt) charge.paidAt = iso;
      }
      if (transfer) {
        transfer.createdAt = iso;
        transfer.updatedAt = iso;
        if (transfer.transferredAt) transfer.transferredAt = iso;
      }
    },
    recordOutsideCharge({ reference, amountMinor, currency = 'GHS', at = new Date() }) {
      if (charges.has(reference)) throw new Error(`stand-in: charge ${reference} exists`);
      const iso = at.toISOString();
      const charge: StandInCharge = {
        id: newId(),
        reference,
        channel: 'card',
        amount: amountMinor,
        currency,
        email: 'dashboard-payer@example.com',
        phone: null,
        provider: null,
        status: 'success',
        displayText: null,
        gatewayResponse: 'Approved',
        gatewayResponseCode: null,
        cancelledAt: null,
        otp: defaultOtp,
        afterOtp: 'success',
        otpTries: 0,
        accessCode: null,
        callbackUrl: null,
        channels: ['card'],
        metadata: null,
        webhook: 'none',
        reportAmountMinor: null,
        reportCurrency: null,
        refundedMinor: 0,
        createdAt: iso,
        paidAt: iso,
      };
      charges.set(reference, charge);
      return charge;
    },
    backdateRefund(id, at) {
      const refund = refunds.get(id);
      if (!refund) throw new Error(`stand-in: no refund ${id}`);
      refund.createdAt = at.toISOString();
    },
    reportAmount(reference, amountMinor, currency) {
      const charge = charges.get(reference);
      if (!charge) throw new Error(`stand-in: no charge ${reference}`);
      charge.reportAmountMinor = amountMinor;
      if (currency) charge.reportCurrency = currency;
    },
    setAccount(bankCode, accountNumber, accountName) {
      accounts.set(accountKey(bankCode, accountNumber), accountName);
    },
    setWebhookUrl(url) {
      webhookUrl = url;
    },
    async refuseConnections() {
      if (!listening) return;
      listening = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
      // Clients keep idle connections open (keep-alive). A request sent on one this server just cut would
      // meet a reset (a lost answer) rather than a refusal; the pause lets clients notice the close first,
      // so the next request opens a new connection and is refused.
      await new Promise((resolve) => setTimeout(resolve, CLIENT_NOTICE_MS));
      // A loaded event loop can reach this timer before it has read the closes: two more turns through the I/O
      // poll (setImmediate runs right after it) make sure the client has seen them.
      for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    },
    async acceptConnections() {
      if (listening) return;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      listening = true;
    },
    get requests() {
      return requests;
    },
    get charges() {
      return [...charges.values()];
    },
    get transfers() {
      return [...transfers.values()];
    },
    get recipients() {
      return recipients;
    },
    get refunds() {
      return [...refunds.values()];
    },
    get webhooks() {
      return webhooks;
    },
    get transfersSent() {
      return transfers.size;
    },
    charge: (reference) => charges.get(reference),
    transfer: (reference) => transfers.get(reference),
    count: (endpoint) => counts.get(endpoint) ?? 0,
    counts: () => Object.fromEntries(counts),
    async webhooksIdle() {
      while (pendingDeliveries.size > 0) await Promise.allSettled([...pendingDeliveries]);
    },
  };
  return standIn;
}
