// What every operator console page module shares: the acting operator, the environment badge and form refusals.
import type { Actor } from '../../audit/log.ts';
import { SikaError, type ErrorCode } from '../../lib/errors.ts';
import type { WebSession } from '../auth.ts';
import type { Flash } from '../console.ts';
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
