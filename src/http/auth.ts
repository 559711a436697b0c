import type { FastifyRequest, RouteOptions } from 'fastify';
import type { ApiKeyAuthenticator } from '../accounts/api-keys.ts';
import type { ApiPrincipal } from '../lib/environment.ts';
import { errors } from '../lib/errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: ApiPrincipal | null;
  }
}

/** onRequest hook for every merchant route: a valid Bearer key or 401 UNAUTHORIZED (SPEC 5). */
export const requireApiKey = (authenticator: ApiKeyAuthenticator) =>
  async function apiKeyAuth(request: FastifyRequest): Promise<void> {
    const principal = await authenticator.authenticate(request.headers.authorization);
    if (!principal) throw errors.unauthorized();
    request.principal = principal;
  };

/**
 * onRoute hook beside requireApiKey (src/app.ts's merchant API): every operation it guards states the API-key
 * security in the document, declared once where the key is required instead of on each route.
 */
export function documentApiKeySecurity(route: Pick<RouteOptions, 'schema'>): void {
  if (route.schema) route.schema.security ??= [{ apiKey: [] }];
}

export function principalOf(request: FastifyRequest): ApiPrincipal {
  if (!request.principal) throw errors.unauthorized();
  return request.principal;
}

/**
 * The principal of a Test simulator's route (`objects`: what it moves on, e.g. 'Payouts'): a Live key is 403
 * before any lookup, so it gets the same answer whatever the id.
 */
export function simulatorPrincipalOf(request: FastifyRequest, objects: string): ApiPrincipal {
  const principal = principalOf(request);
  if (principal.environment !== 'test') throw errors.forbidden(`${objects} can be simulated with Test keys only.`);
  return principal;
}
