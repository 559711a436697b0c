// The plumbing shared by the merchant dashboard and the operator console: sign-in and sign-out pages,
// the session check on every page, and the CSRF check on every form post (the login form included).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { AppDeps } from '../http/deps.ts';
import { checkSecondFactor, type SignedInAccount } from '../accounts/console-accounts.ts';
import { accountSchemas } from './account-schemas.ts';
import {
  clearSessionCookie,
  completeSecondFactor,
  csrfValid,
  loadSession,
  presentedDevice,
  setDeviceCookie,
  setSessionCookie,
  signIn,
  signOut,
  trustDevice,
  type ConsoleKind,
  type WebSession,
} from './auth.ts';
import { authSchemas, refuseBadInputAfterSessionCheck } from './console-schemas.ts';
import { html, type Html } from './html.ts';
import { page } from './layout.ts';

declare module 'fastify' {
  interface FastifyRequest {
    webSession: WebSession | null;
  }
}

const LOGIN_CSRF_COOKIE = 'sika_login_csrf';

/** The message above a console page: what a form did, or (error) why it was refused. */
export type Flash = { message: string; error?: boolean } | null;

/**
 * How a console page is shown again after a form: the flash above it and the status (a refused form: 400, 409…).
 * A page function takes it last (`xPage(reply, session, …its own arguments, outcome = {})`); a page that says more
 * after a form extends it (`PageOutcome & { shown?: Html }`).
 */
export type PageOutcome = { flash?: Flash; status?: number };

/** A refused form's outcome: `message` as the error flash above the page, sent with `status`. */
export const refusedForm = (message: string, status: number): Required<PageOutcome> => ({
  flash: { message, error: true },
  status,
});

export function sendPage(reply: FastifyReply, body: string, status = 200): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .header(
      'content-security-policy',
      "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'",
    )
    .send(body);
}

/**
 * A console page sender: the page of `kind` (its nav entry `active`, if any) with its title, body and an
 * optional flash, sent with the status given.
 */
export const pageSender =
  (kind: ConsoleKind, active?: string) =>
  (
    reply: FastifyReply,
    session: WebSession,
    title: string,
    body: Html,
    flash: Flash = null,
    status = 200,
  ): FastifyReply =>
    sendPage(reply, page({ title, session, kind, active, flash, body }), status);

/** Sends a console page: its title and body under an optional flash, with the status given (pageSender). */
export type PageSend = ReturnType<typeof pageSender>;

/** A page refusing the request: its reason as the error flash, the way on below it, with the status given. */
export const refusalPage = (
  reply: FastifyReply,
  kind: ConsoleKind,
  session: WebSession | null,
  refusal: { title: string; message: string; body: Html; status: number },
): FastifyReply =>
  sendPage(
    reply,
    page({ title: refusal.title, session, kind, flash: { message: refusal.message, error: true }, body: refusal.body }),
    refusal.status,
  );

export function formValue(request: FastifyRequest, name: string): string {
  const body = request.body as Record<string, unknown> | undefined;
  const value = body?.[name];
  return typeof value === 'string' ? value : '';
}

function loginForm(
  kind: ConsoleKind,
  csrf: string,
  message: { text: string; error: boolean } | null,
  email = '',
): string {
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
      </form>${kind === 'merchant' ? html`<p>New to Sika? <a href="/signup">Create an account</a></p>` : ''}${kind === 'operator' ? html`<p class="muted"><strong>Forgot your password?</strong> Ask another operator to reset it (Operators page), or the administrator (<span class="mono nowrap">sika operator reset --email</span>). A reset also clears your two-factor authentication: you set it up again after signing in.</p>` : ''}</div>`,
  });
}

const sameToken = (a: string, b: string) =>
  a.length === b.length && a.length > 0 && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Registers /login and /logout for the console at `base`, and guards every other route of the scope. */
export async function registerConsoleAuth(app: FastifyInstance, deps: AppDeps, kind: ConsoleKind): Promise<void> {
  const base = kind === 'merchant' ? '/dashboard' : '/ops';
  const secure = deps.config.baseUrl.startsWith('https:');
  app.decorateRequest('webSession', null);

  app.addHook('preHandler', async (request, reply) => {
    const path = request.url.split('?')[0]!;
    // The sign-in form, and a one-time sign-in link (dashboard/sign-in-link.ts): how a browser gets a session.
    if (path === `${base}/login` || (kind === 'merchant' && path.startsWith(`${base}/login/link/`))) return;
    const session = await loadSession(deps.db, request, kind);
    if (!session) {
      if (request.method === 'GET') return reply.redirect(`${base}/login`, 303);
      return refusalPage(reply, kind, null, {
        title: 'Signed out',
        message: 'Your session has ended; sign in again.',
        body: html`<p><a href="${base}/login">Sign in</a></p>`,
        status: 401,
      });
    }
    if (request.method !== 'GET' && !csrfValid(session, formValue(request, '_csrf'))) {
      return refusalPage(reply, kind, session, {
        title: 'Refused',
        message:
          'This form has expired or did not come from this site (CSRF check failed). Reload the page and try again.',
        body: html``,
        status: 403,
      });
    }
    // Password right, code still to come: only the code page and signing out.
    if (session.stage === 'second_factor' && path !== `${base}/login/code` && path !== `${base}/logout`) {
      if (request.method === 'GET') return reply.redirect(`${base}/login/code`, 303);
      return refusalPage(reply, kind, null, {
        title: 'Code needed',
        message: 'Enter the code from your authenticator app first.',
        body: html`<p><a href="${base}/login/code">Enter the code</a></p>`,
        status: 401,
      });
    }
    request.webSession = session;
  });
  refuseBadInputAfterSessionCheck(app);

  /** A new token for the sign-in form, set in its cookie (this path only, an hour). */
  const newLoginCsrf = (reply: FastifyReply): string => {
    const csrf = randomBytes(18).toString('base64url');
    reply.setCookie(LOGIN_CSRF_COOKIE, csrf, {
      httpOnly: true,
      sameSite: 'strict',
      secure,
      path: `${base}/login`,
      maxAge: 3_600,
    });
    return csrf;
  };

  app.get(`${base}/login`, { schema: { hide: true, ...authSchemas.loginPage } }, async (request, reply) => {
    const existing = await loadSession(deps.db, request, kind);
    if (existing) return reply.redirect(base, 303);
    const csrf = newLoginCsrf(reply);
    return sendPage(reply, loginForm(kind, csrf, null));
  });

  app.post(`${base}/login`, { schema: { hide: true, ...authSchemas.login } }, async (request, reply) => {
    const csrf = newLoginCsrf(reply);
    const email = formValue(request, 'email');
    if (!sameToken(request.cookies[LOGIN_CSRF_COOKIE] ?? '', formValue(request, '_csrf'))) {
      return sendPage(
        reply,
        loginForm(
          kind,
          csrf,
          { text: 'The sign-in form expired (CSRF check failed). Please try again.', error: true },
          email,
        ),
        403,
      );
    }
    const result = await signIn(
      deps.db,
      kind,
      email.slice(0, 254),
      formValue(request, 'password').slice(0, 1_000),
      request.ip,
      presentedDevice(request, kind),
    );
    if (!result.ok) {
      // The same answer whether or not the email exists: the backoff keys on the email either way.
      if (result.reason === 'throttled')
        return sendThrottled(
          reply,
          result.retryAfterS,
          loginForm(kind, csrf, { text: tooManyAttempts(result.retryAfterS), error: true }, email),
        );
      return sendPage(reply, loginForm(kind, csrf, { text: 'Wrong email or password.', error: true }, email), 401);
    }
    setSessionCookie(reply, kind, result.token, secure);
    if (result.device) setDeviceCookie(reply, kind, result.device, secure);
    return reply.redirect(result.secondFactor ? `${base}/login/code` : base, 303);
  });

  // The second step of a sign-in with a TOTP second factor (merchant users): a code, or a recovery code.
  app.get(`${base}/login/code`, { schema: { hide: true, ...accountSchemas.codePage } }, async (request, reply) => {
    const session = sessionOf(request);
    if (session.stage !== 'second_factor') return reply.redirect(base, 303);
    return sendPage(reply, codeForm(kind, session, null));
  });

  app.post(`${base}/login/code`, { schema: { hide: true, ...accountSchemas.code } }, async (request, reply) => {
    const session = sessionOf(request);
    if (session.stage !== 'second_factor') return reply.redirect(base, 303);
    const checked = await checkSecondFactor(deps.db, signedInAccount(request), formValue(request, 'code'), {
      allowRecoveryCode: true,
    });
    if (!checked.ok) {
      if (checked.reason === 'throttled')
        return sendThrottled(reply, checked.retryAfterS, codeForm(kind, session, tooManyAttempts(checked.retryAfterS)));
      return sendPage(
        reply,
        codeForm(kind, session, 'That code is not right, or was used already. Enter the current code from your app.'),
        401,
      );
    }
    const token = await completeSecondFactor(deps.db, session);
    if (!token) return reply.redirect(`${base}/login`, 303);
    setSessionCookie(reply, kind, token, secure);
    setDeviceCookie(
      reply,
      kind,
      await trustDevice(deps.db, kind, session.email, presentedDevice(request, kind)),
      secure,
    );
    return reply.redirect(checked.method === 'recovery_code' ? `${base}/account?recovery_code_used=1` : base, 303);
  });

  app.post(`${base}/logout`, { schema: { hide: true, ...authSchemas.logout } }, async (request, reply) => {
    await signOut(deps.db, request.webSession!);
    clearSessionCookie(reply, kind);
    return reply.redirect(`${base}/login`, 303);
  });
}

/** 429 with Retry-After: the sign-in backoff (accounts/sign-in-throttle.ts) refused the attempt before any check. */
export function sendThrottled(reply: FastifyReply, retryAfterS: number, body: string): FastifyReply {
  reply.header('retry-after', String(retryAfterS));
  return sendPage(reply, body, 429);
}

export const tooManyAttempts = (retryAfterS: number) =>
  `Too many attempts. Try again in ${retryAfterS < 120 ? `${retryAfterS} seconds` : `${Math.ceil(retryAfterS / 60)} minutes`}.`;

/** A signed-in account's check refused by the backoff: the page of `kind` saying when to try again, a 429. */
export const sendThrottledPage = (
  reply: FastifyReply,
  retryAfterS: number,
  shown: { title: string; session: WebSession; kind: ConsoleKind; body: Html },
): FastifyReply =>
  sendThrottled(reply, retryAfterS, page({ ...shown, flash: { message: tooManyAttempts(retryAfterS), error: true } }));

/** The signed-in account of a console request, as the account services need it (request.ip and the device cookie are what the backoff counts). */
export function signedInAccount(request: FastifyRequest): SignedInAccount {
  const session = sessionOf(request);
  return {
    kind: session.kind,
    accountId: (session.userId ?? session.operatorId)!,
    email: session.email,
    merchantId: session.merchantId,
    tokenHash: session.tokenHash,
    address: request.ip,
    device: presentedDevice(request, session.kind),
  };
}

function codeForm(kind: ConsoleKind, session: WebSession, error: string | null): string {
  const base = kind === 'merchant' ? '/dashboard' : '/ops';
  return page({
    title: 'Two-factor code',
    session: null,
    kind,
    flash: error ? { message: error, error: true } : null,
    body: html`<div class="card" style="max-width:26rem;margin:2rem auto">
      <h1>Enter your code</h1>
      <p>Signing in as ${session.email}. Open your authenticator app and enter the 6-digit code for Sika, or one of your recovery codes.</p>
      <form method="post" action="${base}/login/code" novalidate>
        <input type="hidden" name="_csrf" value="${session.csrfToken}">
        <label for="code">Code</label><input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required autofocus>
        <p><button type="submit">Verify</button></p>
      </form>
      <form method="post" action="${base}/logout"><input type="hidden" name="_csrf" value="${session.csrfToken}"><button class="secondary">Cancel and sign out</button></form></div>`,
  });
}

export function sessionOf(request: FastifyRequest): WebSession {
  if (!request.webSession) throw new Error('console route without a session');
  return request.webSession;
}

type ObjectRequest = FastifyRequest<{ Params: { id: string } }>;

/** A console form's POST: out of the API document, its input schema checked, handed the signed-in session. */
export function postForm(
  app: FastifyInstance,
  path: string,
  schema: FastifySchema,
  handle: (request: FastifyRequest, reply: FastifyReply, session: WebSession) => Promise<unknown>,
): void {
  app.post(path, { schema: { hide: true, ...schema } }, async (request, reply) =>
    handle(request, reply, sessionOf(request)),
  );
}

/** A console form's POST on one object (`:id` in its path), as postForm. */
export function postOnObject(
  app: FastifyInstance,
  path: string,
  schema: FastifySchema,
  handle: (request: ObjectRequest, reply: FastifyReply, session: WebSession) => Promise<unknown>,
): void {
  postForm(app, path, schema, async (request, reply, session) => handle(request as ObjectRequest, reply, session));
}

/**
 * An approver's decision on money (a payout, a refund) from the form's `decision` field: approve or reject, else a
 * 400. With `codeNeeded` (a user with a second factor), an approval needs a fresh code from the form's `code` field
 * (a stolen session alone cannot send money; recovery codes do not count): a 403, or a 429 with Retry-After set
 * when throttled. The decision, or the refusal to show above the page.
 */
export async function approverDecision(
  db: Parameters<typeof checkSecondFactor>[0],
  request: FastifyRequest,
  reply: FastifyReply,
  codeNeeded: boolean,
): Promise<{ decision: 'approve' | 'reject' } | { refusal: Required<PageOutcome> }> {
  const refused = (message: string, status: number) => ({ refusal: refusedForm(message, status) });
  const decision = formValue(request, 'decision');
  // The schema allows only these two; the check narrows the type.
  if (decision !== 'approve' && decision !== 'reject') return refused('Choose approve or reject.', 400);
  if (decision === 'reject' || !codeNeeded) return { decision };
  const checked = await checkSecondFactor(db, signedInAccount(request), formValue(request, 'code'), {
    allowRecoveryCode: false,
  });
  if (checked.ok) return { decision };
  if (checked.reason !== 'throttled')
    return refused('Enter the current code from your authenticator app to approve (each code works once).', 403);
  reply.header('retry-after', String(checked.retryAfterS));
  return refused(tooManyAttempts(checked.retryAfterS), 429);
}
