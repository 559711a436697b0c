import type { FastifyRequest } from 'fastify';
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

export function principalOf(request: FastifyRequest): ApiPrincipal {
  if (!request.principal) throw errors.unauthorized();
  return request.principal;
}
