// MTN MoMo Open API, direct to MTN Ghana (docs/providers/mtn-momo.md): collection (request to pay) and
// disbursement (transfer, and refunds of requests to pay), each with its own subscription key, API user and
// token, either one optional.
import type { PayoutRail } from '../payouts.ts';
import type { RefundRail } from '../refunds.ts';
import type { CollectionRail } from '../types.ts';
import { parseCallback, type MtnCallbackTarget } from './callback.ts';
import { productClient } from './client.ts';
import { mtnCollection } from './collection.ts';
import { mtnDisbursement } from './disbursement.ts';
import { mtnRefunds } from './refunds.ts';
import { MtnTokenCache, type MtnCredentials, type MtnProduct } from './token.ts';

export { CALLBACK_REFERENCE_PARAM, MTN_MOMO_PROVIDER } from './collection.ts';
export type { MtnCallbackTarget } from './callback.ts';
export type { MtnCredentials } from './token.ts';

export interface MtnMomoSettings {
  /** https://proxy.momoapi.mtn.com in production, https://sandbox.momodeveloper.mtn.com in the sandbox (no trailing slash). */
  baseUrl: string;
  /** X-Target-Environment: mtnghana in production, sandbox in the sandbox. */
  targetEnvironment: string;
  /** A call without an answer after this is a lost answer (asked about, never re-sent). */
  timeoutMs: number;
  /** Where MTN calls back ({BASE_URL}/api/v1/providers/mtn-momo/callback); null: no callback, status queries only. */
  callbackUrl: string | null;
  collection: MtnCredentials | null;
  disbursement: MtnCredentials | null;
}

export interface MtnMomo {
  collection: CollectionRail | null;
  payouts: PayoutRail | null;
  /** Refunds of paid requests to pay: a Disbursement operation, so only with the disbursement credentials. */
  refunds: RefundRail | null;
  /** Which transaction an (unsigned) callback names: a hint to ask MTN, never a result. */
  parseCallback(body: unknown, query: Record<string, string | undefined>): MtnCallbackTarget;
  /** Tokens obtained so far per product (observability and tests). */
  tokensIssued(): Record<MtnProduct, number>;
}

export function createMtnMomo(settings: MtnMomoSettings, options: { now?: () => number } = {}): MtnMomo {
  const tokens: Partial<Record<MtnProduct, MtnTokenCache>> = {};
  const clientFor = (product: MtnProduct, credentials: MtnCredentials) => {
    const cache = new MtnTokenCache(
      { baseUrl: settings.baseUrl, product, credentials, timeoutMs: settings.timeoutMs },
      options.now,
    );
    tokens[product] = cache;
    return productClient({
      baseUrl: settings.baseUrl,
      targetEnvironment: settings.targetEnvironment,
      timeoutMs: settings.timeoutMs,
      product,
      credentials,
      tokens: cache,
    });
  };
  const common = { targetEnvironment: settings.targetEnvironment, callbackUrl: settings.callbackUrl };
  // One disbursement client (and token) for payouts and refunds alike.
  const disbursement = settings.disbursement ? clientFor('disbursement', settings.disbursement) : null;
  return {
    collection: settings.collection
      ? mtnCollection({ client: clientFor('collection', settings.collection), ...common })
      : null,
    payouts: disbursement ? mtnDisbursement({ client: disbursement, ...common }) : null,
    refunds: disbursement ? mtnRefunds({ client: disbursement, ...common }) : null,
    parseCallback,
    tokensIssued: () => ({
      collection: tokens.collection?.issued ?? 0,
      disbursement: tokens.disbursement?.issued ?? 0,
    }),
  };
}
