// The client: `sika.api` is the typed openapi-fetch client of every path; the resources (`sika.sessions`,
// `sika.payouts`, ...) are thin calls over it that return the body or throw SikaError.
import * as openapiFetch from 'openapi-fetch';
import type { Client } from 'openapi-fetch';
import { SikaError } from './errors.js';
import type { components, operations, paths } from './generated/schema.js';
import { paginate, type CursorPage } from './paging.js';
import { retryingFetch } from './retry.js';
import { VERSION } from './version.js';
import { webhooks } from './webhooks.js';

export type { components, operations, paths };

export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_TIMEOUT_MS = 60_000;

export interface SikaOptions {
  /** `ak_test_...` or `ak_live_...`. */
  apiKey: string;
  /** Where your Sika server answers, e.g. `https://pay.example.com` (the API is under /api/v1). */
  baseUrl: string;
  /** Retries after the first try on 429, 503 and lost answers (default 2). */
  maxRetries?: number;
  /** Per try, in milliseconds (default 60 000; 0 for none). */
  timeoutMs?: number;
  /** A fetch to use instead of the global one. */
  fetch?: typeof globalThis.fetch;
}

/** Per call: the Idempotency-Key to send (one is made up for every POST otherwise), an AbortSignal. */
export interface RequestOptions {
  idempotencyKey?: string;
  signal?: AbortSignal;
}

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON body of a path's POST. */
export type RequestBody<P extends keyof paths> = paths[P] extends { post: { requestBody?: infer R } }
  ? Json<NonNullable<R>>
  : never;
/** The query of a path's GET. */
export type Query<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? NonNullable<Q>
  : never;
/** The JSON a path's method answers with on success (200, else 201, else 202), e.g. `ResponseBody<'/api/v1/payouts', 'post'>`. */
export type ResponseBody<P extends keyof paths, M extends 'get' | 'post' | 'delete'> = paths[P] extends {
  [K in M]: { responses: infer R };
}
  ? R extends { 200: infer A }
    ? Json<A>
    : R extends { 201: infer A }
      ? Json<A>
      : R extends { 202: infer A }
        ? Json<A>
        : never
  : never;
/** The JSON a path's GET answers with 200. */
export type GetResponse<P extends keyof paths> = paths[P] extends { get: { responses: { 200: infer R } } }
  ? Json<R>
  : never;

// openapi-fetch's CommonJS build exports its function as exports.default; the CJS bundle, made from an ES
// module, sees module.exports as the default import (Node's rule), so the function is one level down there.
const createClient: typeof openapiFetch.default =
  typeof openapiFetch.default === 'function'
    ? openapiFetch.default
    : (openapiFetch.default as unknown as { default: typeof openapiFetch.default }).default;

type Answer<D> = { data?: D; error?: unknown; response: Response };

async function unwrap<D>(call: Promise<Answer<D>>): Promise<D> {
  const { data, error, response } = await call;
  if (!response.ok) throw SikaError.fromResponse(response, error);
  return data as D;
}

function init(options: RequestOptions = {}): { headers?: Record<string, string>; signal?: AbortSignal } {
  return {
    ...(options.idempotencyKey === undefined ? {} : { headers: { 'idempotency-key': options.idempotencyKey } }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
}

export class Sika {
  /** Webhook verification, also reachable without a client: `Sika.webhooks.verify(rawBody, headers, secret)`. */
  static readonly webhooks: typeof webhooks = webhooks;
  readonly webhooks: typeof webhooks = webhooks;
  /** The typed client of every path: `await sika.api.GET('/api/v1/sessions/{reference}', { params: { path: { reference } } })`. */
  readonly api: Client<paths, 'application/json'>;

  constructor(options: SikaOptions) {
    if (!options || typeof options.apiKey !== 'string' || options.apiKey === '')
      throw new TypeError('new Sika({ apiKey, baseUrl }): apiKey is required');
    if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl))
      throw new TypeError('new Sika({ apiKey, baseUrl }): baseUrl must be an http(s) URL');
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!Number.isInteger(maxRetries) || maxRetries < 0)
      throw new TypeError('maxRetries must be a whole number, 0 or more');
    const fetch = retryingFetch({
      maxRetries,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      fetch: options.fetch ?? globalThis.fetch,
    });
    this.api = createClient<paths, 'application/json'>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: { authorization: `Bearer ${options.apiKey}`, 'user-agent': `sika-node/${VERSION}` },
      fetch,
    });
  }

  /** Every item of a cursor-paged list: `for await (const s of sika.paginate(sika.sessions.list, { status: 'success' }))`. */
  paginate<Q extends object, T extends { id: string }>(
    list: (query?: Q) => Promise<CursorPage<T>>,
    query?: Q,
  ): AsyncGenerator<T, void, undefined> {
    return paginate(list, query);
  }

  readonly sessions = {
    create: (body: RequestBody<'/api/v1/sessions'>, options?: RequestOptions) =>
      unwrap(this.api.POST('/api/v1/sessions', { body, ...init(options) })),
    /** By id (`cs_...`) or reference. */
    retrieve: (reference: string, options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/sessions/{reference}', { params: { path: { reference } }, ...init(options) })),
    list: (query?: Query<'/api/v1/sessions'>, options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/sessions', { params: { query }, ...init(options) })),
    listAll: (query?: Omit<Query<'/api/v1/sessions'>, 'starting_after'>) => paginate(this.sessions.list, query),
  };

  readonly refunds = {
    create: (body: RequestBody<'/api/v1/refunds'>, options?: RequestOptions) =>
      unwrap(this.api.POST('/api/v1/refunds', { body, ...init(options) })),
    retrieve: (id: string, options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/refunds/{id}', { params: { path: { id } }, ...init(options) })),
    list: (query?: Query<'/api/v1/refunds'>, options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/refunds', { params: { query }, ...init(options) })),
    listAll: (query?: Omit<Query<'/api/v1/refunds'>, 'starting_after'>) => paginate(this.refunds.list, query),
  };

  /** Payment links (issue 35): a page any payer opens to pay, each payment an ordinary session. */
  readonly paymentLinks = {
    create: (body: RequestBody<'/api/v1/payment-links'>, options?: RequestOptions) =>
      unwrap(this.api.POST('/api/v1/payment-links', { body, ...init(options) })),
    retrieve: (id: string, options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/payment-links/{id}', { params: { path: { id } }, ...init(options) })),
    list: (query?: Query<'/api/v1/payment-links'>, options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/payment-links', { params: { query }, ...init(options) })),
    listAll: (query?: Omit<Query<'/api/v1/payment-links'>, 'starting_after'>) =>
      paginate(this.paymentLinks.list, query),
    /** Changes name, description, active or expires_at (null clears it). */
    update: (id: string, body: RequestBody<'/api/v1/payment-links/{id}'>, options?: RequestOptions) =>
      unwrap(this.api.POST('/api/v1/payment-links/{id}', { params: { path: { id } }, body, ...init(options) })),
  };

  readonly events = {
    retrieve: (id: string, options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/events/{id}', { params: { path: { id } }, ...init(options) })),
    list: (query?: Query<'/api/v1/events'>, options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/events', { params: { query }, ...init(options) })),
    listAll: (query?: Omit<Query<'/api/v1/events'>, 'starting_after'>) => paginate(this.events.list, query),
    /** Sends the event again to the endpoint it went to (202: queued). */
    replay: (id: string, options?: RequestOptions) =>
      unwrap(this.api.POST('/api/v1/events/{id}/replay', { params: { path: { id } }, ...init(options) })),
    /** Sends again the events of a time range (by default only those whose delivery failed). */
    replayRange: (body: RequestBody<'/api/v1/events/replay'>, options?: RequestOptions) =>
      unwrap(this.api.POST('/api/v1/events/replay', { body, ...init(options) })),
  };

  readonly recipients = {
    create: (body: RequestBody<'/api/v1/payouts/recipients'>, options?: RequestOptions) =>
      unwrap(this.api.POST('/api/v1/payouts/recipients', { body, ...init(options) })),
    retrieve: (recipientId: string, options?: RequestOptions) =>
      unwrap(
        this.api.GET('/api/v1/payouts/recipients/{recipient_id}', {
          params: { path: { recipient_id: recipientId } },
          ...init(options),
        }),
      ),
    list: (options?: RequestOptions) => unwrap(this.api.GET('/api/v1/payouts/recipients', { ...init(options) })),
    /** Deactivates a recipient (payouts already made keep it). */
    delete: (recipientId: string, options?: RequestOptions) =>
      unwrap(
        this.api.DELETE('/api/v1/payouts/recipients/{recipient_id}', {
          params: { path: { recipient_id: recipientId } },
          ...init(options),
        }),
      ),
  };

  readonly payouts = {
    create: (body: RequestBody<'/api/v1/payouts'>, options?: RequestOptions) =>
      unwrap(this.api.POST('/api/v1/payouts', { body, ...init(options) })),
    retrieve: (payoutId: string, options?: RequestOptions) =>
      unwrap(
        this.api.GET('/api/v1/payouts/{payout_id}', { params: { path: { payout_id: payoutId } }, ...init(options) }),
      ),
    /** One page (`page`, `limit`); listAll walks them all. */
    list: (query?: Query<'/api/v1/payouts'>, options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/payouts', { params: { query }, ...init(options) })),
    listAll: (query?: Omit<Query<'/api/v1/payouts'>, 'page'>) => this.payoutPages(query),
    cancel: (
      payoutId: string,
      body: RequestBody<'/api/v1/payouts/{payout_id}/cancel'> = {},
      options?: RequestOptions,
    ) =>
      unwrap(
        this.api.POST('/api/v1/payouts/{payout_id}/cancel', {
          params: { path: { payout_id: payoutId } },
          body,
          ...init(options),
        }),
      ),
    quote: (body: RequestBody<'/api/v1/payouts/quote'>, options?: RequestOptions) =>
      unwrap(this.api.POST('/api/v1/payouts/quote', { body, ...init(options) })),
    capabilities: (options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/payouts/capabilities', { ...init(options) })),
  };

  readonly balance = {
    /** What can be paid out now, and what is held. */
    retrieve: (options?: RequestOptions) => unwrap(this.api.GET('/api/v1/payouts/balance', { ...init(options) })),
    transactions: (query?: Query<'/api/v1/balance/transactions'>, options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/balance/transactions', { params: { query }, ...init(options) })),
    allTransactions: (query?: Omit<Query<'/api/v1/balance/transactions'>, 'starting_after'>) =>
      paginate(this.balance.transactions, query),
    summary: (query: Query<'/api/v1/balance/summary'>, options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/balance/summary', { params: { query }, ...init(options) })),
  };

  /** The automatic settlement schedule of the key's environment (issue 34). */
  readonly settlements = {
    retrieveSchedule: (options?: RequestOptions) =>
      unwrap(this.api.GET('/api/v1/settlements/schedule', { ...init(options) })),
    /** A partial change; saving also resumes a schedule a failed settlement paused. */
    updateSchedule: (body: RequestBody<'/api/v1/settlements/schedule'>, options?: RequestOptions) =>
      unwrap(this.api.POST('/api/v1/settlements/schedule', { body, ...init(options) })),
    /** The balance transactions a settlement paid out (their net_minor sum is its amount_minor), every page. */
    transactions: (payoutId: string) => paginate(this.balance.transactions, { payout_id: payoutId }),
  };

  /** Test mode only (an `ak_test_` key): outcomes a real provider would report. */
  readonly test = {
    /** Runs clearing and the settlement schedule as if it were asOf (never before the last asOf). */
    runSettlements: (asOf: string | Date, options?: RequestOptions) =>
      unwrap(
        this.api.POST('/api/v1/test/settlements/run', {
          body: { as_of: typeof asOf === 'string' ? asOf : asOf.toISOString() },
          ...init(options),
        }),
      ),
    simulatePaymentAttempt: (
      attemptReference: string,
      outcome: RequestBody<'/api/v1/test/payment-attempts/{reference}/simulate'>['outcome'],
      options?: RequestOptions,
    ) =>
      unwrap(
        this.api.POST('/api/v1/test/payment-attempts/{reference}/simulate', {
          params: { path: { reference: attemptReference } },
          body: { outcome },
          ...init(options),
        }),
      ),
    simulateRefund: (
      refundId: string,
      body: RequestBody<'/api/v1/test/refunds/{id}/simulate'>,
      options?: RequestOptions,
    ) =>
      unwrap(
        this.api.POST('/api/v1/test/refunds/{id}/simulate', {
          params: { path: { id: refundId } },
          body,
          ...init(options),
        }),
      ),
  };

  private async *payoutPages(query?: Omit<Query<'/api/v1/payouts'>, 'page'>) {
    for (let page = 1, seen = 0; ; page++) {
      const answer = await this.payouts.list({ ...query, page } as Query<'/api/v1/payouts'>);
      for (const payout of answer.payouts) yield payout;
      seen += answer.payouts.length;
      if (answer.payouts.length === 0 || seen >= answer.total) return;
    }
  }
}
