// An authorised call to one MTN MoMo product: the headers every operation takes, and one retry with a fresh
// token after a 401. A 401 means the gateway refused the request before the wallet platform saw it, so
// sending it once more (with the same X-Reference-Id for a create) cannot charge twice.
import { providerCall, type ProviderAnswer } from '../provider-http.ts';
import type { MtnCredentials, MtnProduct, MtnTokenCache } from './token.ts';

export interface MtnProductClient {
  readonly product: MtnProduct;
  /** GET or POST a path under /{product}/ with the token, X-Target-Environment and the subscription key. */
  call(request: {
    method: 'GET' | 'POST';
    path: string;
    headers?: Record<string, string>;
    body?: unknown;
  }): Promise<ProviderAnswer>;
}

/** What each product's adapter (collection, disbursement, refunds) is built from. */
export interface MtnAdapterSettings {
  client: MtnProductClient;
  /** X-Target-Environment: mtnghana in production, sandbox in the sandbox. */
  targetEnvironment: string;
  /** Where MTN calls back; null: no callback, status queries only. */
  callbackUrl: string | null;
}

export function productClient(settings: {
  baseUrl: string;
  targetEnvironment: string;
  timeoutMs: number;
  product: MtnProduct;
  credentials: MtnCredentials;
  tokens: MtnTokenCache;
}): MtnProductClient {
  const { baseUrl, targetEnvironment, timeoutMs, product, credentials, tokens } = settings;
  const send = (token: string, request: Parameters<MtnProductClient['call']>[0]) =>
    providerCall({
      method: request.method,
      url: `${baseUrl}/${product}/${request.path}`,
      // Authorization: Bearer, X-Target-Environment and Ocp-Apim-Subscription-Key on every operation
      // (https://momoapi.mtn.com/docs/services/collection/operations/requesttopay-POST;
      // https://momodeveloper.mtn.com/docs/services/collection/operations/requesttopay-referenceId-GET).
      headers: {
        authorization: `Bearer ${token}`,
        'x-target-environment': targetEnvironment,
        'ocp-apim-subscription-key': credentials.subscriptionKey,
        ...request.headers,
      },
      body: request.body,
      timeoutMs,
    });
  return {
    product,
    async call(request) {
      const token = await tokens.get();
      const answer = await send(token, request);
      if (answer.status !== 401) return answer;
      // Expired early or revoked (a new API key invalidates earlier tokens): once more with a new token.
      tokens.invalidate(token);
      return send(await tokens.get(), request);
    },
  };
}
