// Test mode: a Test attempt's outcome decided by hand (SPEC 4.1 simulate), from the API with a Test key or
// from the hosted page's outcome buttons, through one path that applies it as a provider report would.
import type { ApiPrincipal } from '../lib/environment.ts';
import type { Queryable } from '../db/index.ts';
import { errors } from '../lib/errors.ts';
import type { ProviderOutcome } from '../rails/index.ts';
import { attemptOfSession, toAttemptStatus } from './attempts.ts';
import type { AttemptRow } from './model.ts';
import { sessionNotFound } from './payer-view.ts';
import { applyOutcome } from './payments.ts';
import * as store from './store.ts';

/** What a simulation asks for: the outcome, and the host of the checkout links the answer and events carry. */
interface Simulated {
  outcome: ProviderOutcome;
  checkoutUrlHost: string;
}

/** Applies a simulated outcome to a Test attempt: one path for the simulate endpoint and the payer page's Test buttons. */
async function applySimulatedOutcome(tx: Queryable, attempt: AttemptRow, { outcome, checkoutUrlHost }: Simulated) {
  if (attempt.environment !== 'test')
    throw errors.forbidden('Simulation is for Test payments only; Live payments are decided by their providers.');
  const applied = await applyOutcome(tx, attempt.id, outcome, { checkoutUrlHost, source: 'simulated' }, attempt);
  return toAttemptStatus(tx, applied.attempt, false, applied.session);
}

/** Test mode: decide an attempt's outcome (SPEC 4.1 simulate). Live keys are refused. */
export async function simulate(
  tx: Queryable,
  principal: ApiPrincipal,
  attemptId: string,
  outcome: ProviderOutcome,
  checkoutUrlHost: string,
) {
  if (principal.environment !== 'test')
    throw errors.forbidden('Simulation is for Test keys only; Live payments are decided by their providers.');
  const attempt = await store.findAttempt(tx, attemptId);
  if (!attempt || attempt.merchant_id !== principal.merchantId || attempt.environment !== principal.environment)
    throw errors.notFound('Payment attempt');
  return applySimulatedOutcome(tx, attempt, { outcome, checkoutUrlHost });
}

/**
 * Test mode, from the hosted page's outcome buttons (no API key: the session id is the capability, as on
 * every payer endpoint). Only attempts of this session, and only Test sessions: a Live session is 403.
 */
export async function simulateForSession(
  tx: Queryable,
  sessionId: string,
  attemptId: string,
  outcome: ProviderOutcome,
  checkoutUrlHost: string,
) {
  const session = await store.findPublicSession(tx, sessionId);
  if (!session) throw sessionNotFound();
  if (session.environment !== 'test')
    throw errors.forbidden('Test outcomes are for Test checkouts only; Live payments are decided by their providers.');
  return applySimulatedOutcome(tx, await attemptOfSession(tx, sessionId, attemptId), { outcome, checkoutUrlHost });
}
