// Browser sign-in for the dashboard and the operator console, the web side: the opaque session cookie
// (HttpOnly, SameSite=Lax, Secure on https), the trusted-device cookie, and the CSRF check. The sessions
// themselves (argon2id passwords through the shared backoff, hashed tokens, the second-factor step,
// trusted devices) are accounts/console-sessions.ts.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  findSession,
  SESSION_LIFETIME_S,
  type ConsoleKind,
  type ConsoleSession,
} from '../accounts/console-sessions.ts';
import { TRUSTED_DEVICE_LIFETIME_S } from '../accounts/trusted-devices.ts';

export {
  completeSecondFactor,
  SECOND_FACTOR_WINDOW_S,
  SESSION_LIFETIME_S,
  signIn,
  signOut,
  switchEnvironment,
  trustDevice,
  type SignInResult,
} from '../accounts/console-sessions.ts';
export type { ConsoleKind };
export type WebSession = ConsoleSession;

export const cookieName = (kind: ConsoleKind) => (kind === 'merchant' ? 'sika_dashboard' : 'sika_ops');
/** The browser's trusted-device token for this console (an opaque random value: it names no account). */
export const deviceCookieName = (kind: ConsoleKind) =>
  kind === 'merchant' ? 'sika_dashboard_device' : 'sika_ops_device';
const cookiePath = (kind: ConsoleKind) => (kind === 'merchant' ? '/dashboard' : '/ops');

export function setSessionCookie(reply: FastifyReply, kind: ConsoleKind, token: string, secure: boolean): void {
  reply.setCookie(cookieName(kind), token, {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: cookiePath(kind),
    maxAge: SESSION_LIFETIME_S,
  });
}

export function setDeviceCookie(reply: FastifyReply, kind: ConsoleKind, token: string, secure: boolean): void {
  reply.setCookie(deviceCookieName(kind), token, {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: cookiePath(kind),
    maxAge: TRUSTED_DEVICE_LIFETIME_S,
  });
}

/** The device cookie a request presents (trusted-devices.ts looks up only well-formed tokens). */
export const presentedDevice = (request: FastifyRequest, kind: ConsoleKind): string | null =>
  request.cookies[deviceCookieName(kind)] ?? null;

export function clearSessionCookie(reply: FastifyReply, kind: ConsoleKind): void {
  reply.clearCookie(cookieName(kind), { path: cookiePath(kind) });
}

/** `db`: whatever the accounts' session lookup reads with (the pages never name storage's types). */
export async function loadSession(
  db: Parameters<typeof findSession>[0],
  request: FastifyRequest,
  kind: ConsoleKind,
): Promise<WebSession | null> {
  const token = request.cookies[cookieName(kind)];
  if (!token || token.length > 200) return null;
  return findSession(db, kind, token);
}

/** Synchronizer-token CSRF check for every state-changing form post. */
export function csrfValid(session: WebSession, submitted: unknown): boolean {
  if (typeof submitted !== 'string' || submitted.length !== session.csrfToken.length) return false;
  return timingSafeEqual(Buffer.from(submitted), Buffer.from(session.csrfToken));
}
