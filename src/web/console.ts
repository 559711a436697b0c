// The plumbing shared by the merchant dashboard and the operator console: sign-in and sign-out pages,
// the session check on every page, and the CSRF check on every form post (the login form included).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../http/deps.ts';
import { clearSessionCookie, csrfValid, loadSession, setSessionCookie, signIn, signOut, type ConsoleKind, type WebSession } from './auth.ts';
import { authSchemas, refuseBadInputAfterSessionCheck } from './console-schemas.ts';
import { html } from './html.ts';
import { page } from './layout.ts';

declare module 'fastify' {
  interface FastifyRequest {
    webSession: WebSession | null;
  }
}

const LOGIN_CSRF_COOKIE = 'sika_login_csrf';
const LOGIN_ATTEMPTS_PER_MINUTE_PER_IP = 20;

export function sendPage(reply: FastifyReply, body: string, status = 200): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .header('content-security-policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'")
    .send(body);
}

export function formValue(request: FastifyRequest, name: string): string {
  const body = request.body as Record<string, unknown> | undefined;
  const value = body?.[name];
  return typeof value === 'string' ? value : '';
}

function loginForm(kind: ConsoleKind, csrf: string, message: { text: string; error: boolean } | null, email = ''): string {
  const base = kind === 'merchant' ? '/dashboard' : '/ops';
  return page({
    title: 'Sign in',
    session: null,
    kind,
    flash: message ? { message: message.text, error: message.error } : null,
    body: html`<div class="card" style="max-width:26rem;margin:2rem auto">
      <h1>Sign in to ${kind === 'merchant' ? 'your dashboard' : 'Sika operations'}</h1>
      <form method="post" action="${base}/login" novalidate>
        <input type="hidden" name="_csrf" value="${csrf}">
        <label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${email}">
        <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
        <p><button type="submit">Sign in</button></p>
      </form></div>`,
  });
}

const sameToken = (a: string, b: string) => a.length === b.length && a.length > 0 && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Registers /login and /logout for the console at `base`, and guards every other route of the scope. */
export async function registerConsoleAuth(app: FastifyInstance, deps: AppDeps, kind: ConsoleKind): Promise<void> {
  const base = kind === 'merchant' ? '/dashboard' : '/ops';
  const secure = deps.config.baseUrl.startsWith('https:');
  const attemptsByIp = new Map<string, { count: number; resetAtMs: number }>();
  app.decorateRequest('webSession', null);

  app.addHook('preHandler', async (request, reply) => {
    const path = request.url.split('?')[0]!;
    if (path === `${base}/login`) return;
    const session = await loadSession(deps.db, request, kind);
    if (!session) {
      if (request.method === 'GET') return reply.redirect(`${base}/login`, 303);
      return sendPage(reply, page({ title: 'Signed out', session: null, kind, flash: { message: 'Your session has ended; sign in again.', error: true }, body: html`<p><a href="${base}/login">Sign in</a></p>` }), 401);
    }
    if (request.method !== 'GET' && !csrfValid(session, formValue(request, '_csrf'))) {
      return sendPage(reply, page({ title: 'Refused', session, kind, flash: { message: 'This form has expired or did not come from this site (CSRF check failed). Reload the page and try again.', error: true }, body: html`` }), 403);
    }
    request.webSession = session;
  });
  refuseBadInputAfterSessionCheck(app);

  app.get(`${base}/login`, { schema: { hide: true, ...authSchemas.loginPage } }, async (request, reply) => {
    const existing = await loadSession(deps.db, request, kind);
    if (existing) return reply.redirect(base, 303);
    const csrf = randomBytes(18).toString('base64url');
    reply.setCookie(LOGIN_CSRF_COOKIE, csrf, { httpOnly: true, sameSite: 'strict', secure, path: `${base}/login`, maxAge: 3_600 });
    return sendPage(reply, loginForm(kind, csrf, null));
  });

  app.post(`${base}/login`, { schema: { hide: true, ...authSchemas.login } }, async (request, reply) => {
    const csrf = randomBytes(18).toString('base64url');
    reply.setCookie(LOGIN_CSRF_COOKIE, csrf, { httpOnly: true, sameSite: 'strict', secure, path: `${base}/login`, maxAge: 3_600 });
    const email = formValue(request, 'email');
    if (!sameToken(request.cookies[LOGIN_CSRF_COOKIE] ?? '', formValue(request, '_csrf'))) {
      return sendPage(reply, loginForm(kind, csrf, { text: 'The sign-in form expired (CSRF check failed). Please try again.', error: true }, email), 403);
    }
    const now = Date.now();
    const bucket = attemptsByIp.get(request.ip);
    if (bucket && bucket.resetAtMs > now && bucket.count >= LOGIN_ATTEMPTS_PER_MINUTE_PER_IP) {
      return sendPage(reply, loginForm(kind, csrf, { text: 'Too many sign-in attempts from your network; wait a minute and try again.', error: true }, email), 429);
    }
    attemptsByIp.set(request.ip, bucket && bucket.resetAtMs > now ? { count: bucket.count + 1, resetAtMs: bucket.resetAtMs } : { count: 1, resetAtMs: now + 60_000 });
    if (attemptsByIp.size > 10_000) attemptsByIp.clear();
    const result = await signIn(deps.db, kind, email.slice(0, 254), formValue(request, 'password').slice(0, 1_000));
    if (!result.ok) {
      const text =
        result.reason === 'locked'
          ? `This account is locked after too many failed attempts. Try again in ${Math.ceil((result.retryAfterS ?? 900) / 60)} minutes.`
          : 'Wrong email or password.';
      return sendPage(reply, loginForm(kind, csrf, { text, error: true }, email), result.reason === 'locked' ? 423 : 401);
    }
    setSessionCookie(reply, kind, result.token, secure);
    return reply.redirect(base, 303);
  });

  app.post(`${base}/logout`, { schema: { hide: true, ...authSchemas.logout } }, async (request, reply) => {
    await signOut(deps.db, request.webSession!);
    clearSessionCookie(reply, kind);
    return reply.redirect(`${base}/login`, 303);
  });
}

export function sessionOf(request: FastifyRequest): WebSession {
  if (!request.webSession) throw new Error('console route without a session');
  return request.webSession;
}
