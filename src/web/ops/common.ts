// What every operator console page module shares: the acting operator, the page frame and its flash message.
import type { FastifyReply } from 'fastify';
import type { Actor } from '../../audit/log.ts';
import { SikaError, type ErrorCode } from '../../lib/errors.ts';
import type { WebSession } from '../auth.ts';
import { pageSender } from '../console.ts';
import { html, type Html } from '../html.ts';

export type Flash = { message: string; error?: boolean } | null;

export const actorOf = (session: WebSession): Actor => ({
  type: 'operator',
  id: session.operatorId!,
  email: session.email,
});

/** Sends one console page: its nav entry, title, body and an optional flash, with the status given. */
export const showOpsPage = (
  reply: FastifyReply,
  session: WebSession,
  active: string,
  title: string,
  body: Html,
  flash: Flash = null,
  status = 200,
) => pageSender('operator', active)(reply, session, title, body, flash, status);

/** Which environment an object belongs to, on every console row and card: Live money or Test money. */
export const environmentBadge = (environment: string): Html =>
  html`<span class="badge ${environment === 'live' ? 'ok' : 'warn'}" title="${environment === 'live' ? 'Live: real money' : 'Test: no real money'}">${environment === 'live' ? 'Live' : 'Test'}</span>`;

/**
 * A refusal a form page shows again with its message: one of the codes named (INVALID_ARGUMENT a 400, the
 * others a 409); any other error is thrown on.
 */
export function refusalOf(error: unknown, codes: readonly ErrorCode[]): { flash: Flash; status: number } {
  if (error instanceof SikaError && codes.includes(error.code))
    return { flash: { message: error.message, error: true }, status: error.code === 'INVALID_ARGUMENT' ? 400 : 409 };
  throw error;
}
