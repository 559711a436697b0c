import { Type } from '@sinclair/typebox';
import type { FastifyRequest, RouteOptions } from 'fastify';
import type { ApiKeyAuthenticator } from '../accounts/api-keys.ts';
import { liveRefusal, type LiveAccessGate } from '../accounts/live-access.ts';
import { sessionOwnerOf } from '../checkout/payer-view.ts';
import type { Queryable } from '../db/index.ts';
import type { ApiPrincipal } from '../lib/environment.ts';
import { errors } from '../lib/errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: ApiPrincipal | null;
  }
  interface FastifyContextConfig {
    /**
     * The route answers a Live key of a merchant not approved or suspended (issue 33): only what the merchant
     * needs to see its own standing (GET /api/v1/account). Every other API-key route is Live-gated.
     */
    liveOpen?: boolean;
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

/**
 * onRequest hook after requireApiKey: a Live key of a merchant not approved, or suspended, is 403
 * ACCOUNT_NOT_ACTIVATED or ACCOUNT_SUSPENDED on every route but those declaring `config: { liveOpen: true }`.
 * Test keys always pass. The gate caches each merchant's standing briefly and hears changes from every process.
 */
export const requireLiveAccess = (gate: LiveAccessGate) =>
  async function liveAccess(request: FastifyRequest): Promise<void> {
    const principal = request.principal;
    if (principal?.environment !== 'live') return;
    if (request.routeOptions.config.liveOpen === true) return;
    await gate.assertLiveAllowed(principal.merchantId);
  };

/**
 * The payer's steps that start a new payment of a session (an attempt, a resend, a cash slip): a Live session of
 * a merchant not approved or suspended is 403 with the code. What is already under way (polling, a code, a
 * cancel) goes on. An unknown session passes: the step itself answers its 404.
 */
export async function assertSessionLiveAllowed(gate: LiveAccessGate, db: Queryable, sessionId: string): Promise<void> {
  const owner = await sessionOwnerOf(db, sessionId);
  if (owner?.environment === 'live') await gate.assertLiveAllowed(owner.merchantId);
}

/** Whether a Live session's merchant may take a payment now (the payer page's "cannot take payments"). */
export async function sessionTakesPayments(gate: LiveAccessGate, db: Queryable, sessionId: string): Promise<boolean> {
  const owner = await sessionOwnerOf(db, sessionId);
  if (owner?.environment !== 'live') return true;
  const standing = await gate.standing(owner.merchantId);
  return standing !== null && liveRefusal(standing) === null;
}

const LIVE_GATE_403 =
  'A Live key of an account not activated yet (ACCOUNT_NOT_ACTIVATED) or suspended (ACCOUNT_SUSPENDED); Test keys are never refused for these.';

/** onRoute hook beside requireLiveAccess: every Live-gated operation documents its 403 with the two codes. */
export function documentLiveGate(route: Pick<RouteOptions, 'schema' | 'config'>): void {
  if ((route.config as { liveOpen?: boolean } | undefined)?.liveOpen === true) return;
  const response = (route.schema as { response?: Record<string, unknown> } | undefined)?.response;
  if (!response) return;
  const existing = response[403] as { description?: string } | undefined;
  const description = existing?.description ? `${existing.description} Or: ${LIVE_GATE_403}` : LIVE_GATE_403;
  response[403] = Type.Ref('ErrorEnvelope', { description });
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
