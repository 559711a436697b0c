// What every operator console page module shares: the acting operator, the environment badge, form refusals and
// the pages that forms show again.
import type { FastifyReply } from 'fastify';
import type { Actor } from '../../audit/log.ts';
import { SikaError, type ErrorCode } from '../../lib/errors.ts';
import type { WebSession } from '../auth.ts';
import type { Flash, PageOutcome, PageSend } from '../console.ts';
import { html, type Html } from '../html.ts';

export type { Flash } from '../console.ts';

export const actorOf = (session: WebSession): Actor => ({
  type: 'operator',
  id: session.operatorId!,
  email: session.email,
});

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

/**
 * A page of its own (no argument but the session) that forms show again: `page(reply, session, outcome)` sends
 * `title` over the body `draw` makes afresh each time, under the outcome's flash with its status. A page that says
 * more after a form names it in its Outcome (operators.ts: `PageOutcome & { shown?: Html }`).
 */
export const formPage =
  <Outcome extends PageOutcome = PageOutcome>(
    send: PageSend,
    title: string,
    draw: (session: WebSession, outcome: Partial<Outcome>) => Promise<Html>,
  ) =>
  async (reply: FastifyReply, session: WebSession, outcome: Partial<Outcome> = {}): Promise<FastifyReply> =>
    send(reply, session, title, await draw(session, outcome), outcome.flash, outcome.status);
