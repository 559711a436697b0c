// One OAuth2 access token per MTN MoMo product (collection, disbursement), reused until shortly before it
// expires. "The same token can be used for transactions until it is expired… The new token can be requested
// before the previous has expired" (MTN's 2018 API description, docs/providers/mtn-momo.md §2). Callers that
// meet a 401 drop the token (invalidate) and try once more with a fresh one.
import { providerCall } from '../provider-http.ts';
import { ProviderNoAnswerError, ProviderRefusedError } from '../types.ts';
import { errorCode } from './wire.ts';

export type MtnProduct = 'collection' | 'disbursement';

export interface MtnCredentials {
  subscriptionKey: string;
  userId: string;
  apiKey: string;
}

/** A token is replaced this long before MTN says it expires (or after 9/10 of its life when that is shorter). */
export const TOKEN_REFRESH_MARGIN_S = 60;
/** A token answer without a usable expires_in is trusted for this long only. */
const TOKEN_LIFETIME_S_FALLBACK = 300;

interface CachedToken {
  accessToken: string;
  /** When we stop using it (clock of `now`), already shortened by the margin. */
  useUntilMs: number;
}

export class MtnTokenCache {
  private cached: CachedToken | null = null;
  private inFlight: Promise<CachedToken> | null = null;
  /** Tokens this cache obtained (for tests and metrics). */
  issued = 0;

  constructor(
    private readonly settings: { baseUrl: string; product: MtnProduct; credentials: MtnCredentials; timeoutMs: number },
    private readonly now: () => number = Date.now,
  ) {}

  /** A token to use now: the cached one while it is fresh, else one new token shared by concurrent callers. */
  async get(): Promise<string> {
    if (this.cached && this.now() < this.cached.useUntilMs) return this.cached.accessToken;
    if (!this.inFlight) {
      this.inFlight = this.fetchToken().finally(() => {
        this.inFlight = null;
      });
    }
    return (await this.inFlight).accessToken;
  }

  /** MTN answered 401 to this token (expired early, or our API key was regenerated): never use it again. */
  invalidate(accessToken: string): void {
    if (this.cached?.accessToken === accessToken) this.cached = null;
  }

  private async fetchToken(): Promise<CachedToken> {
    const { baseUrl, product, credentials, timeoutMs } = this.settings;
    const askedAtMs = this.now();
    let answer: Awaited<ReturnType<typeof providerCall>>;
    try {
      // POST /{product}/token/ with Basic base64(apiUser:apiKey) and the product's subscription key, and no
      // body: "Inputting a Body in an API that is not supported e.g. /Token API" is a 400
      // (https://momoapi.mtn.com/docs/services/remittance/operations/CreateAccessToken;
      // https://momodevelopercommunity.mtn.com/errors-46/momo-api-common-errors-82).
      answer = await providerCall({
        method: 'POST',
        url: `${baseUrl}/${product}/token/`,
        headers: {
          authorization: `Basic ${Buffer.from(`${credentials.userId}:${credentials.apiKey}`).toString('base64')}`,
          'ocp-apim-subscription-key': credentials.subscriptionKey,
        },
        timeoutMs,
      });
    } catch (error) {
      // A token request that got no answer sent no payment: whatever the caller was about to send never left.
      if (error instanceof ProviderNoAnswerError)
        throw new ProviderRefusedError(`MTN MoMo ${product} token: ${error.message}`);
      throw error;
    }
    if (answer.status !== 200) {
      // 401 {error}: our API user or key (or the product's subscription key) is wrong; 5xx: try later. Either
      // way nothing was sent, so another provider may serve (same CreateAccessToken pages).
      const code = errorCode(answer.json);
      throw new ProviderRefusedError(
        `MTN MoMo ${product} token refused: HTTP ${answer.status}${code ? ` ${code}` : ''}`,
        answer.status,
      );
    }
    const json = answer.json as { access_token?: unknown; expires_in?: unknown } | null;
    const accessToken = typeof json?.access_token === 'string' ? json.access_token : '';
    if (!accessToken)
      throw new ProviderRefusedError(`MTN MoMo ${product} token answer carried no access_token`, answer.status);
    // expires_in: "integer seconds" (CreateAccessToken); strings are tolerated, nonsense falls back.
    const expiresInS = Number(json?.expires_in);
    const lifetimeS = Number.isFinite(expiresInS) && expiresInS > 0 ? expiresInS : TOKEN_LIFETIME_S_FALLBACK;
    const marginS = Math.min(TOKEN_REFRESH_MARGIN_S, lifetimeS / 10);
    this.issued += 1;
    this.cached = { accessToken, useUntilMs: askedAtMs + (lifetimeS - marginS) * 1000 };
    return this.cached;
  }
}
