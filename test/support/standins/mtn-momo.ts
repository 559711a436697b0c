// A stand-in for MTN's MoMo Open API (collection and disbursement) on 127.0.0.1, speaking the documented wire
// protocol (docs/providers/mtn-momo.md, with the sources of each rule next to it here), so the adapter and the
// app are tested over real HTTP. Tests steer it: which calls stay pending, fail, time out, lose their answer,
// answer 5xx, or whose callback comes twice or never; and they read back every request it received.
// Refunds (POST /disbursement/v1_0/refund, GET .../refund/{referenceId}) are transactions of kind 'refund',
// steered like the others: next('refund', { answer: 'lose' | 'timeout' | { status, body } }), settle(id, ...).
// Failure reasons: a plan's `reason` or settle(id, 'FAILED', reason) picks the code the status answer carries
// (MTN_REASONS lists the documented ones). A success carries a financialTransactionId.
// Late approvals: the Open API has no operation to withdraw a request to pay, so a request Sika stopped waiting
// for (the payer changed course) stays PENDING here until the payer acts: approveLate(attempt id or reference)
// approves it then. With approvalWindowMs, a request nobody settled by then fails COULD_NOT_PERFORM_TRANSACTION,
// MTN's 5-minute window (https://momodeveloper.mtn.com/content/html_widgets/TEcUW.html).
import { randomBytes, randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type MtnProduct = 'collection' | 'disbursement';
export type Endpoint =
  | 'token'
  | 'requesttopay'
  | 'requesttopay_status'
  | 'transfer'
  | 'transfer_status'
  | 'refund'
  | 'refund_status'
  | 'basicuserinfo'
  | 'active';
export type TransactionStatus = 'PENDING' | 'SUCCESSFUL' | 'FAILED';
export type TransactionKind = 'requesttopay' | 'transfer' | 'refund';
/** A failure reason: a plain string as MTN's community posts show, or the swagger's ErrorReason object. */
export type Reason = string | { code: string; message?: string };

/**
 * Documented request-to-pay failure reasons, for tests to pick from: MTN's table
 * (https://momodevelopercommunity.mtn.com/product-updates/reason-for-some-failed-api-responses-updated-192),
 * the catalogue (https://momodeveloper.mtn.com/content/html_widgets/o46rh.html) and the descriptions
 * (https://momodeveloper.mtn.com/content/html_widgets/TEcUW.html).
 */
export const MTN_REASONS = [
  'NOT_ENOUGH_FUNDS',
  'PAYER_LIMIT_REACHED',
  'APPROVAL_REJECTED',
  'EXPIRED',
  'COULD_NOT_PERFORM_TRANSACTION',
  'PAYER_NOT_FOUND',
  'SENDER_ACCOUNT_NOT_ACTIVE',
  'NOT_ALLOWED',
  'INTERNAL_PROCESSING_ERROR',
  'TRANSACTION_CANCELED',
] as const;

export interface StandInCredentials {
  subscriptionKey: string;
  userId: string;
  apiKey: string;
}

export interface CallPlan {
  /**
   * How the exchange ends. 'accept' (default): the documented answer. 'timeout': a create is recorded (MTN got
   * it) but no answer ever comes. 'lose': a create is recorded, then the connection is cut before any answer.
   * {status, body}: that HTTP answer instead, nothing recorded (a 500 or 503 refusal, a 400, ...).
   */
  answer?: 'accept' | 'timeout' | 'lose' | { status: number; body?: unknown };
  /** A create's outcome: PENDING (until settle()), or SUCCESSFUL / FAILED at once. Default: the stand-in's defaultOutcome. */
  outcome?: TransactionStatus;
  /** The reason of a FAILED outcome (default COULD_NOT_PERFORM_TRANSACTION). */
  reason?: Reason;
  /** Stay PENDING this long, then take `outcome` (like the sandbox's "ongoing" number). */
  settleAfterMs?: number;
  /** Report another amount or currency than was asked for in status answers and callbacks. */
  reportAmount?: string;
  reportCurrency?: string;
  /** The callback when it settles: once (documented), twice (a duplicate), or never (lost). */
  callback?: 'once' | 'twice' | 'never';
  /** PUT (the 2018 docs) or POST (Deposit-V1, the current callback page). Default: the stand-in's callbackMethod. */
  callbackMethod?: 'PUT' | 'POST';
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** The query string, with its "?" (or ""). */
  query: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The body parsed as JSON, else its text, else null. */
  body: unknown;
  rawBody: string;
  endpoint: Endpoint | null;
  product: MtnProduct | null;
  /** The wallet the call is about (payer, payee, account holder, or the transaction's party), when it has one. */
  msisdn: string | null;
  at: Date;
}

export interface CallMatch {
  endpoint?: Endpoint | readonly Endpoint[];
  product?: MtnProduct;
  msisdn?: string;
  test?: (request: RecordedRequest) => boolean;
}

export interface StandInTransaction {
  referenceId: string;
  kind: TransactionKind;
  product: MtnProduct;
  amount: string;
  currency: string;
  externalId: string;
  /** payer of a request to pay, payee of a transfer or refund (a refund's is the payer of the request it refunds). */
  party: { partyIdType: string; partyId: string };
  /** A refund's referenceIdToRefund (the X-Reference-Id of the request to pay it gives back), else null. */
  referenceIdToRefund: string | null;
  payerMessage: string;
  payeeNote: string;
  status: TransactionStatus;
  reason: Reason | null;
  financialTransactionId: string | null;
  callbackUrl: string | null;
  plan: CallPlan;
  createdAt: Date;
}

export interface CallbackDelivery {
  referenceId: string;
  url: string;
  method: 'PUT' | 'POST';
  body: Record<string, unknown>;
  /** The receiver's HTTP status, or null when it could not be reached. */
  status: number | null;
  error: string | null;
}

export interface AccountHolder {
  /** basicuserinfo's name; given_name and family_name are split from it. */
  name: string;
  /** /active's result. Default true. */
  active?: boolean;
}

export interface MtnMomoStandInOptions {
  /** X-Target-Environment it serves: "mtnghana" (default) or "sandbox". */
  targetEnvironment?: string;
  /** The currency it takes; default EUR in the sandbox ("The currency used in Sandbox is EUR"), GHS otherwise. */
  currency?: string;
  collection?: StandInCredentials;
  disbursement?: StandInCredentials;
  /** expires_in of the tokens it issues, in seconds (default 3600). */
  tokenTtlS?: number;
  /** The registered callback host (host[:port]); when set, an X-Callback-Url on another host is 500 INVALID_CALLBACK_URL_HOST. */
  callbackHost?: string | null;
  /** The callback's method (default PUT, the 2018 docs' "The PUT method is used by the Open API when sending callbacks"). */
  callbackMethod?: 'PUT' | 'POST';
  /** A create's outcome when no plan says otherwise (default PENDING: the payer has not approved yet). */
  defaultOutcome?: TransactionStatus;
  /** Known wallets for basicuserinfo and /active, by MSISDN (digits, no "+"). */
  accountHolders?: Record<string, AccountHolder>;
  /** How an unknown account holder is answered: 404 (2018 docs, default) or 500 {code: NOT_FOUND}. */
  unknownHolderStatus?: 404 | 500;
  /**
   * A request to pay still PENDING this long after it was created fails with COULD_NOT_PERFORM_TRANSACTION, as MTN's
   * "delay to approve a transaction within the given time frame (5 minutes)" does (TEcUW). Default: never.
   */
  approvalWindowMs?: number;
}

export const STANDIN_COLLECTION: StandInCredentials = {
  subscriptionKey: 'collection-subscription-key',
  userId: '8f0f3f0e-55b6-4a38-9f43-2a8a5b7c6d01',
  apiKey: 'collection-api-key',
};
export const STANDIN_DISBURSEMENT: StandInCredentials = {
  subscriptionKey: 'disbursement-subscription-key',
  userId: '1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
  apiKey: 'disbursement-api-key',
};

/** Sika's settings for a stand-in: its base URL and both products' credentials (MTN_MOMO_TARGET_ENVIRONMENT is the test's). */
export const mtnMomoSettings = (baseUrl: string, products: 'collection' | 'both' = 'both'): Record<string, string> => ({
  MTN_MOMO_BASE_URL: baseUrl,
  MTN_MOMO_COLLECTION_SUBSCRIPTION_KEY: STANDIN_COLLECTION.subscriptionKey,
  MTN_MOMO_COLLECTION_USER_ID: STANDIN_COLLECTION.userId,
  MTN_MOMO_COLLECTION_API_KEY: STANDIN_COLLECTION.apiKey,
  ...(products === 'both'
    ? {
        MTN_MOMO_DISBURSEMENT_SUBSCRIPTION_KEY: STANDIN_DISBURSEMENT.subscriptionKey,
        MTN_MOMO_DISBURSEMENT_USER_ID: STANDIN_DISBURSEMENT.userId,
        MTN_MOMO_DISBURSEMENT_API_KEY: STANDIN_DISBURSEMENT.apiKey,
      }
    : {}),
});

/** "Format - UUID… generated using UUID version 4" (https://momoapi.mtn.com/docs/services/collection/operations/requesttopay-POST). */
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
/** payerMessage / payeeNote: more than 160 characters is a 400 (https://momodevelopercommunity.mtn.com/errors-46/momo-api-common-errors-82). */
const NOTE_LENGTH_MAX = 160;
/** A request body larger than this is refused (MTN's are a few hundred bytes). */
const BODY_BYTES_MAX = 65_536;
const TOKEN_TTL_S_DEFAULT = 3_600;
/** How long refuseConnections waits for clients to notice their connections were cut. */
const CONNECTION_CLOSE_SETTLE_MS = 25;
/** How long waitForCallbacks waits by default. */
const CALLBACK_WAIT_MS_DEFAULT = 2_000;

const CURRENCY_OF: Record<string, string> = { sandbox: 'EUR', mtnghana: 'GHS' };

interface IssuedToken {
  product: MtnProduct;
  expiresAtMs: number;
}

interface Plan {
  match: CallMatch;
  plan: CallPlan;
  remaining: number;
}

class Answered extends Error {}

export interface MtnMomoStandIn {
  baseUrl: string;
  targetEnvironment: string;
  currency: string;
  credentials: Record<MtnProduct, StandInCredentials>;
  /** Every transaction it accepted, by X-Reference-Id. */
  transactions: Map<string, StandInTransaction>;
  /** Every request it received, in order. */
  requests: RecordedRequest[];
  /** Requests received per endpoint. */
  counts: Record<Endpoint, number>;
  /** Tokens issued per product. */
  tokensIssued: Record<MtnProduct, number>;
  /** Callbacks it sent (or tried to). */
  callbacks: CallbackDelivery[];
  /** The next `times` calls matching `match` follow `plan` (plans are tried in the order given). */
  when(match: CallMatch, plan: CallPlan, times?: number): void;
  /** The next call to `endpoint` follows `plan`. */
  next(endpoint: Endpoint, plan: CallPlan): void;
  /** Every call matching `match` follows `plan` until clearPlans(). */
  always(match: CallMatch, plan: CallPlan): void;
  clearPlans(): void;
  /** Settle a PENDING transaction (and send its callback, as its plan says). */
  settle(referenceId: string, status: 'SUCCESSFUL' | 'FAILED', reason?: Reason): StandInTransaction;
  /** The request to pay whose externalId (Sika's attempt id) or X-Reference-Id this is. */
  transactionOf(attemptOrReference: string): StandInTransaction | undefined;
  /**
   * The payer approves a request Sika may have stopped waiting for (it changed course): MTN has no operation to
   * withdraw a request to pay, so the wallet still takes the money. A SUCCESSFUL with its callback.
   */
  approveLate(attemptOrReference: string): StandInTransaction;
  /** Make every token issued so far (for one product or both) expired: the next call with one is a 401. */
  expireTokens(product?: MtnProduct): void;
  setAccountHolder(msisdn: string, holder: AccountHolder | null): void;
  /** Stop accepting connections (and cut the open ones): calls fail with ECONNREFUSED. */
  refuseConnections(): Promise<void>;
  acceptConnections(): Promise<void>;
  /** Resolves once `count` callbacks have been sent (delivered or not). */
  waitForCallbacks(count: number, timeoutMs?: number): Promise<CallbackDelivery[]>;
  /** The body a status query answers for a transaction. */
  statusBody(referenceId: string): Record<string, unknown>;
  close(): Promise<void>;
}

const digitsOf = (msisdn: string) => msisdn.replace(/^\+/, '');
const json = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json;charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
};

export async function startMtnMomoStandIn(options: MtnMomoStandInOptions = {}): Promise<MtnMomoStandIn> {
  const targetEnvironment = options.targetEnvironment ?? 'mtnghana';
  const currency = options.currency ?? CURRENCY_OF[targetEnvironment] ?? 'GHS';
  const credentials: Record<MtnProduct, StandInCredentials> = {
    collection: options.collection ?? STANDIN_COLLECTION,
    disbursement: options.disbursement ?? STANDIN_DISBURSEMENT,
  };
  const tokenTtlS = options.tokenTtlS ?? TOKEN_TTL_S_DEFAULT;
  const defaultOutcome = options.defaultOutcome ?? 'PENDING';
  const unknownHolderStatus = options.unknownHolderStatus ?? 404;

  const tokens = new Map<string, IssuedToken>();
  const holders = new Map<string, AccountHolder>(
    Object.entries(options.accountHolders ?? {}).map(([msisdn, holder]) => [digitsOf(msisdn), holder]),
  );
  const plans: Plan[] = [];
  const transactions = new Map<string, StandInTransaction>();
  const requests: RecordedRequest[] = [];
  const counts: Record<Endpoint, number> = {
    token: 0,
    requesttopay: 0,
    requesttopay_status: 0,
    transfer: 0,
    transfer_status: 0,
    refund: 0,
    refund_status: 0,
    basicuserinfo: 0,
    active: 0,
  };
  const tokensIssued: Record<MtnProduct, number> = { collection: 0, disbursement: 0 };
  const callbacks: CallbackDelivery[] = [];
  const callbackWaiters = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  const held = new Set<ServerResponse>();
  let closed = false;

  // ---- transactions and callbacks ----

  function statusBody(tx: StandInTransaction): Record<string, unknown> {
    // RequestToPayResult / TransferResult: amount, currency, financialTransactionId, externalId, payer|payee,
    // payerMessage, payeeNote, status, reason (https://momodeveloper.mtn.com/docs/services/collection/operations/requesttopay-referenceId-GET;
    // getTransferStatus.Readme.md in MTN-Group/MoMoAPIs_Javascript_sdk). financialTransactionId comes with success.
    const body: Record<string, unknown> = {
      amount: tx.plan.reportAmount ?? tx.amount,
      currency: tx.plan.reportCurrency ?? tx.currency,
    };
    if (tx.financialTransactionId) body.financialTransactionId = tx.financialTransactionId;
    body.externalId = tx.externalId;
    body[tx.kind === 'requesttopay' ? 'payer' : 'payee'] = { ...tx.party };
    body.payerMessage = tx.payerMessage;
    body.payeeNote = tx.payeeNote;
    body.status = tx.status;
    if (tx.status === 'FAILED') body.reason = tx.reason;
    return body;
  }

  function notifyCallbackWaiters() {
    for (const waiter of [...callbackWaiters]) waiter();
  }

  async function deliver(tx: StandInTransaction, body: Record<string, unknown>, method: 'PUT' | 'POST') {
    const delivery: CallbackDelivery = {
      referenceId: tx.referenceId,
      url: tx.callbackUrl!,
      method,
      body,
      status: null,
      error: null,
    };
    try {
      // Unsigned: no signature or auth header is documented (https://momodeveloper.mtn.com/api-documentation/callback).
      const response = await fetch(tx.callbackUrl!, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(CALLBACK_WAIT_MS_DEFAULT),
      });
      delivery.status = response.status;
      await response.arrayBuffer().catch(() => undefined);
    } catch (error) {
      delivery.error = (error as Error).message;
    }
    callbacks.push(delivery);
    notifyCallbackWaiters();
  }

  function sendCallbacks(tx: StandInTransaction) {
    // "Once processed, a callback with the final result of the transaction is sent… The Wallet Platform will only
    // send the callback once. There is no retry" (https://momodeveloper.mtn.com/api-documentation/callback).
    if (!tx.callbackUrl || tx.plan.callback === 'never' || closed) return;
    const method = tx.plan.callbackMethod ?? options.callbackMethod ?? 'PUT';
    const body = statusBody(tx);
    const times = tx.plan.callback === 'twice' ? 2 : 1;
    void (async () => {
      for (let sent = 0; sent < times && !closed; sent++) await deliver(tx, body, method);
    })();
  }

  function finish(tx: StandInTransaction, status: 'SUCCESSFUL' | 'FAILED', reason: Reason | null) {
    tx.status = status;
    tx.reason = status === 'FAILED' ? (reason ?? 'COULD_NOT_PERFORM_TRANSACTION') : null;
    if (status === 'SUCCESSFUL') tx.financialTransactionId = String(randomInt(100_000_000, 999_999_999));
    sendCallbacks(tx);
  }

  function later(ms: number, fn: () => void) {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  }

  // ---- plans ----

  function takePlan(request: RecordedRequest): CallPlan {
    for (const entry of plans) {
      if (entry.remaining <= 0) continue;
      const { match } = entry;
      if (match.endpoint) {
        const endpoints: readonly Endpoint[] = typeof match.endpoint === 'string' ? [match.endpoint] : match.endpoint;
        if (!request.endpoint || !endpoints.includes(request.endpoint)) continue;
      }
      if (match.product && match.product !== request.product) continue;
      if (match.msisdn && digitsOf(match.msisdn) !== request.msisdn) continue;
      if (match.test && !match.test(request)) continue;
      entry.remaining -= 1;
      return entry.plan;
    }
    return {};
  }

  /** Answers per the plan's answer when it is not 'accept' (for calls that create nothing). */
  function applyNonCreatePlan(plan: CallPlan, req: IncomingMessage, res: ServerResponse): void {
    const answer = plan.answer ?? 'accept';
    if (answer === 'accept') return;
    if (answer === 'timeout') {
      held.add(res);
      throw new Answered();
    }
    if (answer === 'lose') {
      req.socket.destroy();
      throw new Answered();
    }
    json(
      res,
      answer.status,
      answer.body ?? {
        code: answer.status === 503 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_PROCESSING_ERROR',
        message: 'Stand-in planned failure.',
      },
    );
    throw new Answered();
  }

  // ---- checks shared by the operations ----

  function fail(res: ServerResponse, status: number, body: unknown): never {
    json(res, status, body);
    throw new Answered();
  }

  function authenticate(request: RecordedRequest, product: MtnProduct, res: ServerResponse) {
    // Ocp-Apim-Subscription-Key of the product: "Collection, Disbursement and Remittance have different
    // subscription keys", else 401 (common errors). The body is the API gateway's own shape.
    if (request.headers['ocp-apim-subscription-key'] !== credentials[product].subscriptionKey) {
      fail(res, 401, {
        statusCode: 401,
        message:
          'Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription.',
      });
    }
    // Authorization: Bearer <access_token> from this product's /token/; unknown or expired tokens are a 401
    // (the body of that 401 is not documented; this one mirrors the API's {code, message} errors).
    const match = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
    const token = match ? tokens.get(match[1]!) : undefined;
    if (!token || token.product !== product || Date.now() >= token.expiresAtMs) {
      fail(res, 401, { code: 'UNAUTHORIZED', message: 'Access token is missing, invalid or expired.' });
    }
    // X-Target-Environment: missing is a 400 (bad headers); another environment is
    // 500 NOT_ALLOWED_TARGET_ENVIRONMENT (https://momodevelopercommunity.mtn.com/errors-46/momo-api-common-errors-82).
    const environment = request.headers['x-target-environment'];
    if (!environment) fail(res, 400, { code: 'BAD_REQUEST', message: 'X-Target-Environment is required.' });
    if (environment !== targetEnvironment)
      fail(res, 500, { code: 'NOT_ALLOWED_TARGET_ENVIRONMENT', message: 'Access to target environment is forbidden.' });
  }

  // ---- operations ----

  function token(request: RecordedRequest, product: MtnProduct, req: IncomingMessage, res: ServerResponse) {
    applyNonCreatePlan(takePlan(request), req, res);
    const expected = credentials[product];
    if (request.headers['ocp-apim-subscription-key'] !== expected.subscriptionKey) {
      fail(res, 401, {
        statusCode: 401,
        message:
          'Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription.',
      });
    }
    // "Inputting a Body in an API that is not supported e.g. /Token API" is a 400 (common errors).
    if (request.rawBody.length > 0)
      fail(res, 400, { code: 'BAD_REQUEST', message: 'The token operation takes no body.' });
    // Authorization: Basic base64(apiUserId:apiKey); 401 {error} otherwise
    // (https://momoapi.mtn.com/docs/services/remittance/operations/CreateAccessToken).
    const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? '');
    const decoded = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8') : '';
    if (decoded !== `${expected.userId}:${expected.apiKey}`) fail(res, 401, { error: 'login_failed' });
    const accessToken = randomBytes(24).toString('base64url');
    tokens.set(accessToken, { product, expiresAtMs: Date.now() + tokenTtlS * 1000 });
    tokensIssued[product] += 1;
    // 200 {access_token, token_type, expires_in (seconds)} (same page).
    json(res, 200, { access_token: accessToken, token_type: 'access_token', expires_in: tokenTtlS });
  }

  /**
   * The request to pay a refund gives back, by its referenceIdToRefund. Not documented: what MTN answers for an
   * unknown or unpaid one, or for more than is left; here a 404 RESOURCE_NOT_FOUND and a 400 BAD_REQUEST.
   */
  function refunded(body: Record<string, unknown>, amount: string, res: ServerResponse): StandInTransaction {
    const id = typeof body.referenceIdToRefund === 'string' ? body.referenceIdToRefund.toLowerCase() : '';
    const paid = transactions.get(id);
    if (paid?.kind !== 'requesttopay')
      fail(res, 404, { code: 'RESOURCE_NOT_FOUND', message: 'referenceIdToRefund was not found.' });
    if (paid!.status !== 'SUCCESSFUL')
      fail(res, 400, { code: 'BAD_REQUEST', message: 'Only a successful request to pay can be refunded.' });
    const pesewas = (value: string) => Math.round(Number(value) * 100);
    const refundedBefore = [...transactions.values()]
      .filter((tx) => tx.kind === 'refund' && tx.referenceIdToRefund === paid!.referenceId && tx.status !== 'FAILED')
      .reduce((sum, tx) => sum + pesewas(tx.amount), 0);
    if (refundedBefore + pesewas(amount) > pesewas(paid!.amount))
      fail(res, 400, { code: 'BAD_REQUEST', message: 'The refund is more than is left of the payment.' });
    return paid!;
  }

  function create(request: RecordedRequest, kind: TransactionKind, req: IncomingMessage, res: ServerResponse) {
    const product: MtnProduct = kind === 'requesttopay' ? 'collection' : 'disbursement';
    authenticate(request, product, res);
    const referenceId = request.headers['x-reference-id'] ?? '';
    // "the X-ref ID does not meet UUID Version 4" is a 400 (common errors).
    if (!UUID_V4.test(referenceId))
      fail(res, 400, { code: 'BAD_REQUEST', message: 'X-Reference-Id must be a UUID version 4.' });
    const body = request.body as Record<string, unknown> | null;
    const partyKey = kind === 'requesttopay' ? 'payer' : 'payee';
    let party = body && typeof body === 'object' ? (body[partyKey] as Record<string, unknown> | undefined) : undefined;
    const bad = (message: string) => fail(res, 400, { code: 'BAD_REQUEST', message });
    if (!body || typeof body !== 'object' || Array.isArray(body)) bad('The body must be a JSON object.');
    // amount: a string (schema "amount: string", requesttopay-referenceId-GET), a positive number of the currency.
    if (typeof body!.amount !== 'string' || !/^\d+(\.\d{1,2})?$/.test(body!.amount) || Number(body!.amount) <= 0)
      bad('amount must be a positive amount in a string.');
    if (typeof body!.currency !== 'string') bad('currency is required.');
    if (typeof body!.externalId !== 'string') bad('externalId must be a string.');
    // A refund names no party: {amount, currency, externalId, payerMessage, payeeNote, referenceIdToRefund}
    // (refundV1.Readme.md, MTN-Group/MoMoAPIs_Javascript_sdk); its payee is the payer of that request to pay.
    let referenceIdToRefund: string | null = null;
    if (kind === 'refund') {
      if (typeof body!.referenceIdToRefund !== 'string' || !UUID_V4.test(body!.referenceIdToRefund))
        bad('referenceIdToRefund must be a UUID version 4.');
      referenceIdToRefund = (body!.referenceIdToRefund as string).toLowerCase();
    } else if (
      !party ||
      typeof party !== 'object' ||
      !['MSISDN', 'EMAIL', 'PARTY_CODE'].includes(String(party.partyIdType)) ||
      typeof party.partyId !== 'string'
    ) {
      // payer/payee {partyIdType: MSISDN | EMAIL | PARTY_CODE, partyId}; an MSISDN in E.164 digits.
      bad(`${partyKey} must be {partyIdType, partyId}.`);
    }
    if (party && party.partyIdType === 'MSISDN' && !/^\d{8,15}$/.test(String(party.partyId)))
      bad(`${partyKey}.partyId must be an MSISDN with its country code.`);
    for (const field of ['payerMessage', 'payeeNote'] as const) {
      const value = body![field];
      if (value === undefined) continue;
      // Over 160 characters, or special characters such as an apostrophe: 400 (common errors).
      if (typeof value !== 'string' || value.length > NOTE_LENGTH_MAX || /['"<>]/.test(value))
        bad(`${field} must be text of at most ${NOTE_LENGTH_MAX} characters without special characters.`);
    }
    // "Invalid currency – needs to match the target environment currency" (common errors).
    if (body!.currency !== currency) bad(`currency must be ${currency} in ${targetEnvironment}.`);
    const callbackUrl = request.headers['x-callback-url'] ?? null;
    if (callbackUrl && options.callbackHost) {
      // "Callback URL with different host name to configured for API User": 500 INVALID_CALLBACK_URL_HOST (common errors).
      let host = '';
      try {
        host = new URL(callbackUrl).host;
      } catch {
        /* not a URL: a different host */
      }
      if (host !== options.callbackHost)
        fail(res, 500, {
          code: 'INVALID_CALLBACK_URL_HOST',
          message: 'Callback URL with different host name than configured for API User.',
        });
    }
    // A reference id already used: 409 RESOURCE_ALREADY_EXIST, and nothing new is created (common errors).
    if (transactions.has(referenceId.toLowerCase()))
      fail(res, 409, {
        code: 'RESOURCE_ALREADY_EXIST',
        message: 'Duplicated reference id. Creation of resource failed.',
      });
    if (kind === 'refund') {
      party = refunded(body!, body!.amount as string, res).party;
      request.msisdn = digitsOf(String(party.partyId));
    }

    const plan = takePlan(request);
    const answer = plan.answer ?? 'accept';
    if (typeof answer === 'object')
      fail(
        res,
        answer.status,
        answer.body ?? {
          code: answer.status === 503 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_PROCESSING_ERROR',
          message: 'Stand-in planned failure.',
        },
      );

    const tx: StandInTransaction = {
      referenceId: referenceId.toLowerCase(),
      kind,
      product,
      amount: body!.amount as string,
      currency: body!.currency as string,
      externalId: body!.externalId as string,
      party: { partyIdType: String(party!.partyIdType), partyId: String(party!.partyId) },
      referenceIdToRefund,
      payerMessage: typeof body!.payerMessage === 'string' ? body!.payerMessage : '',
      payeeNote: typeof body!.payeeNote === 'string' ? body!.payeeNote : '',
      // "The created resource will get status PENDING. Once the request has been processed the status will be
      // updated to SUCCESSFUL or FAILED" (2018 API description, "API Methods/POST").
      status: 'PENDING',
      reason: null,
      financialTransactionId: null,
      callbackUrl,
      plan,
      createdAt: new Date(),
    };
    transactions.set(tx.referenceId, tx);
    const outcome = plan.outcome ?? defaultOutcome;
    const settleNow = () => {
      if (outcome !== 'PENDING' && tx.status === 'PENDING') finish(tx, outcome, plan.reason ?? null);
    };
    if (kind === 'requesttopay' && options.approvalWindowMs !== undefined) {
      later(options.approvalWindowMs, () => {
        if (tx.status === 'PENDING') finish(tx, 'FAILED', 'COULD_NOT_PERFORM_TRANSACTION');
      });
    }

    if (answer === 'timeout') held.add(res);
    else if (answer === 'lose') req.socket.destroy();
    else {
      // 202 Accepted with an empty body (https://momodeveloper.mtn.com/api-documentation/callback; content-length 0 in the SDK's examples).
      res.writeHead(202, { 'content-length': 0 });
      res.end();
    }
    // The outcome (and its callback) comes after the answer, as the wallet platform queues the work.
    if (outcome !== 'PENDING') later(plan.settleAfterMs ?? 0, settleNow);
  }

  function status(
    request: RecordedRequest,
    kind: TransactionKind,
    referenceId: string,
    req: IncomingMessage,
    res: ServerResponse,
  ) {
    const product: MtnProduct = kind === 'requesttopay' ? 'collection' : 'disbursement';
    authenticate(request, product, res);
    const tx = transactions.get(referenceId.toLowerCase());
    request.msisdn = tx ? digitsOf(tx.party.partyId) : null;
    applyNonCreatePlan(takePlan(request), req, res);
    // 404 for a reference it never accepted (common errors: "RESOURCE NOT FOUND 404 … Reference ID not found").
    if (!tx || tx.kind !== kind)
      fail(res, 404, { code: 'RESOURCE_NOT_FOUND', message: 'Requested resource was not found.' });
    // 200 for every known one, failures included (requesttopay-referenceId-GET).
    json(res, 200, statusBody(tx!));
  }

  function accountHolder(
    request: RecordedRequest,
    product: MtnProduct,
    what: 'basicuserinfo' | 'active',
    msisdn: string,
    req: IncomingMessage,
    res: ServerResponse,
  ) {
    authenticate(request, product, res);
    applyNonCreatePlan(takePlan(request), req, res);
    const holder = holders.get(msisdn);
    if (!holder) {
      // "Validate Account Holder Error Codes: 404 Account holder is not found" (2018 docs, common-error-codes);
      // the current catalogue has a NOT_FOUND code (https://momodeveloper.mtn.com/content/html_widgets/o46rh.html).
      if (unknownHolderStatus === 500) fail(res, 500, { code: 'NOT_FOUND', message: 'Account holder not found.' });
      fail(res, 404, { code: 'RESOURCE_NOT_FOUND', message: 'Account holder not found.' });
    }
    if (what === 'active') {
      // {"result": true} (validateAccountHolderStatus.Readme.md, MTN-Group/MoMoAPIs_Javascript_sdk).
      json(res, 200, { result: holder!.active !== false });
      return;
    }
    // {sub, name, given_name, family_name, birthdate, locale, gender, updated_at} (getBasicUserinfo.Readme.md).
    const [given, ...family] = holder!.name.split(' ');
    json(res, 200, {
      sub: '0',
      name: holder!.name,
      given_name: given ?? '',
      family_name: family.join(' '),
      birthdate: '1990-01-01',
      locale: 'en_GH',
      gender: 'UNKNOWN',
      updated_at: Math.floor(Date.now() / 1000),
    });
  }

  // ---- HTTP ----

  const routes: { method: string; pattern: RegExp; endpoint: Endpoint }[] = [
    { method: 'POST', pattern: /^\/(collection|disbursement)\/token\/$/, endpoint: 'token' },
    { method: 'POST', pattern: /^\/(collection)\/v1_0\/requesttopay$/, endpoint: 'requesttopay' },
    { method: 'GET', pattern: /^\/(collection)\/v1_0\/requesttopay\/([^/]+)$/, endpoint: 'requesttopay_status' },
    { method: 'POST', pattern: /^\/(disbursement)\/v1_0\/transfer$/, endpoint: 'transfer' },
    { method: 'GET', pattern: /^\/(disbursement)\/v1_0\/transfer\/([^/]+)$/, endpoint: 'transfer_status' },
    // Refunds are a Disbursement operation: "Refund utilizes the Disbursement Subscription Key"
    // (https://developers.qodex.ai/momo-open-apis/momo-open-apis-sandbox/get-paid/refund-status).
    { method: 'POST', pattern: /^\/(disbursement)\/v1_0\/refund$/, endpoint: 'refund' },
    { method: 'GET', pattern: /^\/(disbursement)\/v1_0\/refund\/([^/]+)$/, endpoint: 'refund_status' },
    {
      method: 'GET',
      pattern: /^\/(collection|disbursement)\/v1_0\/accountholder\/msisdn\/([^/]+)\/basicuserinfo$/,
      endpoint: 'basicuserinfo',
    },
    // /accountholder/{accountHolderIdType}/{accountHolderId}/active with the type "msisdn" in lower case (SDK docs).
    {
      method: 'GET',
      pattern: /^\/(collection|disbursement)\/v1_0\/accountholder\/msisdn\/([^/]+)\/active$/,
      endpoint: 'active',
    },
  ];

  async function readBody(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > BODY_BYTES_MAX) throw new Error('body too large');
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const rawBody = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers[name.toLowerCase()] = value;
    let body: unknown = null;
    if (rawBody) {
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = rawBody;
      }
    }
    const route = routes.find((candidate) => candidate.method === req.method && candidate.pattern.test(url.pathname));
    const match = route ? route.pattern.exec(url.pathname)! : null;
    const product = (match?.[1] as MtnProduct | undefined) ?? null;
    const request: RecordedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: url.search,
      headers,
      body,
      rawBody,
      endpoint: route?.endpoint ?? null,
      product,
      msisdn: null,
      at: new Date(),
    };
    if (route?.endpoint === 'requesttopay' || route?.endpoint === 'transfer') {
      const party =
        body && typeof body === 'object'
          ? (body as Record<string, { partyId?: unknown }>)[route.endpoint === 'requesttopay' ? 'payer' : 'payee']
          : undefined;
      request.msisdn = typeof party?.partyId === 'string' ? digitsOf(party.partyId) : null;
    }
    if (route?.endpoint === 'basicuserinfo' || route?.endpoint === 'active')
      request.msisdn = digitsOf(decodeURIComponent(match![2]!));
    requests.push(request);
    if (route) counts[route.endpoint] += 1;

    try {
      // An unknown operation or path (e.g. a wrong number of slashes) is a 404 from the gateway.
      if (!route || !product) fail(res, 404, { statusCode: 404, message: 'Resource not found' });
      switch (route!.endpoint) {
        case 'token':
          return token(request, product!, req, res);
        case 'requesttopay':
          return create(request, 'requesttopay', req, res);
        case 'transfer':
          return create(request, 'transfer', req, res);
        case 'requesttopay_status':
          return status(request, 'requesttopay', decodeURIComponent(match![2]!), req, res);
        case 'transfer_status':
          return status(request, 'transfer', decodeURIComponent(match![2]!), req, res);
        case 'refund':
          return create(request, 'refund', req, res);
        case 'refund_status':
          return status(request, 'refund', decodeURIComponent(match![2]!), req, res);
        case 'basicuserinfo':
        case 'active':
          return accountHolder(request, product!, route!.endpoint, request.msisdn!, req, res);
      }
    } catch (error) {
      if (!(error instanceof Answered)) throw error;
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent && !res.destroyed)
        json(res, 500, { code: 'INTERNAL_PROCESSING_ERROR', message: error.message });
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const transactionOf = (attemptOrReference: string): StandInTransaction | undefined =>
    transactions.get(attemptOrReference.toLowerCase()) ??
    [...transactions.values()].find((tx) => tx.kind === 'requesttopay' && tx.externalId === attemptOrReference);

  const cutConnections = () => {
    for (const res of held) res.destroy();
    held.clear();
    for (const socket of sockets) socket.destroy();
  };

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    targetEnvironment,
    currency,
    credentials,
    transactions,
    requests,
    counts,
    tokensIssued,
    callbacks,
    when(match, plan, times = 1) {
      plans.push({ match, plan, remaining: times });
    },
    next(endpoint, plan) {
      plans.push({ match: { endpoint }, plan, remaining: 1 });
    },
    always(match, plan) {
      plans.push({ match, plan, remaining: Number.POSITIVE_INFINITY });
    },
    clearPlans() {
      plans.length = 0;
    },
    settle(referenceId, status, reason) {
      const tx = transactions.get(referenceId.toLowerCase());
      if (!tx) throw new Error(`no transaction ${referenceId}`);
      if (tx.status !== 'PENDING') throw new Error(`transaction ${referenceId} is already ${tx.status}`);
      finish(tx, status, reason ?? tx.plan.reason ?? null);
      return tx;
    },
    transactionOf,
    approveLate(attemptOrReference) {
      const tx = transactionOf(attemptOrReference);
      if (tx?.kind !== 'requesttopay') throw new Error(`no request to pay ${attemptOrReference}`);
      if (tx.status !== 'PENDING') throw new Error(`request to pay ${attemptOrReference} is already ${tx.status}`);
      finish(tx, 'SUCCESSFUL', null);
      return tx;
    },
    expireTokens(product) {
      for (const issued of tokens.values()) if (!product || issued.product === product) issued.expiresAtMs = 0;
    },
    setAccountHolder(msisdn, holder) {
      if (holder) holders.set(digitsOf(msisdn), holder);
      else holders.delete(digitsOf(msisdn));
    },
    async refuseConnections() {
      if (!server.listening) return;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      cutConnections();
      await stopped;
      // Let clients in this process see their kept-alive connections close, so their next call dials anew
      // (and is refused) instead of writing into a dead connection.
      await new Promise((resolve) => setTimeout(resolve, CONNECTION_CLOSE_SETTLE_MS));
      // A loaded event loop can reach this timer before it has read the closes: two more turns through the I/O
      // poll (setImmediate runs right after it) make sure the client has seen them.
      for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    },
    async acceptConnections() {
      if (server.listening) return;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    },
    waitForCallbacks(count, timeoutMs = CALLBACK_WAIT_MS_DEFAULT) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (callbacks.length < count) return;
          callbackWaiters.delete(check);
          clearTimeout(timer);
          resolve([...callbacks]);
        };
        const timer = setTimeout(() => {
          callbackWaiters.delete(check);
          reject(new Error(`${callbacks.length} of ${count} callbacks sent after ${timeoutMs} ms`));
        }, timeoutMs);
        callbackWaiters.add(check);
        check();
      });
    },
    statusBody(referenceId) {
      const tx = transactions.get(referenceId.toLowerCase());
      if (!tx) throw new Error(`no transaction ${referenceId}`);
      return statusBody(tx);
    },
    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const stopped = server.listening
        ? new Promise<void>((resolve) => server.close(() => resolve()))
        : Promise.resolve();
      cutConnections();
      await stopped;
    },
  };
}
