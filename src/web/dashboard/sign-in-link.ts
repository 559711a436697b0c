// GET /dashboard/login/link/:token: a one-time sign-in link (src/accounts/sign-in-links.ts), printed by the
// server's first run for its demo merchant or by `sika user sign-in-link`. The dashboard's session check
// lets it through (src/web/console.ts): it is how a browser without a session gets one. Used or expired, it
// says so and how to get another. A user who came in without a password (the demo merchant, a merchant made
// without --password) is offered their first one at /dashboard/password/new, or goes on to the dashboard.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { PASSWORD_LENGTH_MIN } from '../../accounts/service.ts';
import {
  needsFirstPassword,
  redeemSignInLink,
  setFirstPassword,
  SIGN_IN_LINK_LIFETIME_S,
  SIGN_IN_LINK_PATH,
} from '../../accounts/sign-in-links.ts';
import type { AppDeps } from '../../http/deps.ts';
import { setSessionCookie, type WebSession } from '../auth.ts';
import { formValue, sendPage, sessionOf } from '../console.ts';
import { CONSOLE_ID_LENGTH_MAX, CSRF_TOKEN_LENGTH_MAX, PASSWORD_FIELD_LENGTH_MAX } from '../console-schemas.ts';
import { html } from '../html.ts';
import { csrfField, page } from '../layout.ts';

/** The tokens are 32 random bytes in base64url. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Where a user without a password is offered their first one. */
export const FIRST_PASSWORD_PATH = '/dashboard/password/new';

const schema = {
  params: Type.Object({ token: Type.String({ maxLength: CONSOLE_ID_LENGTH_MAX }) }, { additionalProperties: false }),
  querystring: Type.Object({}, { additionalProperties: true }),
};
const firstPasswordSchemas = {
  page: { querystring: Type.Object({}, { additionalProperties: true }) },
  set: {
    body: Type.Object(
      {
        _csrf: Type.Optional(Type.String({ maxLength: CSRF_TOKEN_LENGTH_MAX })),
        new_password: Type.Optional(Type.String({ maxLength: PASSWORD_FIELD_LENGTH_MAX })),
        new_password_confirm: Type.Optional(Type.String({ maxLength: PASSWORD_FIELD_LENGTH_MAX })),
      },
      { additionalProperties: true },
    ),
  },
};

function firstPasswordPage(session: WebSession, error: string | null): string {
  return page({
    title: 'Choose a password',
    session,
    kind: 'merchant',
    flash: error ? { message: error, error: true } : null,
    body: html`<div class="card" style="max-width:30rem;margin:2rem auto"><h1>You are signed in</h1>
<p>You came in with a one-time link. Choose a password to sign in with next time (as ${session.email}), or do it later.</p>
<form method="post" action="${FIRST_PASSWORD_PATH}" aria-label="Choose a password">${csrfField(session)}
<label for="new-password">Password (at least ${PASSWORD_LENGTH_MIN} characters)</label><input id="new-password" name="new_password" type="password" autocomplete="new-password" minlength="${PASSWORD_LENGTH_MIN}" required>
<label for="new-password-confirm">Password again</label><input id="new-password-confirm" name="new_password_confirm" type="password" autocomplete="new-password" required>
<p><button type="submit">Save password</button></p></form>
<p><a href="/dashboard">Later: go to the dashboard</a></p></div>`,
  });
}

export async function signInLinkPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const secure = deps.config.baseUrl.startsWith('https:');
  app.get<{ Params: { token: string } }>(
    `${SIGN_IN_LINK_PATH}/:token`,
    { schema: { hide: true, ...schema } },
    async (request, reply) => {
      const { token } = request.params;
      const result = TOKEN_PATTERN.test(token)
        ? await redeemSignInLink(deps.db, token)
        : ({ ok: false, reason: 'unknown' } as const);
      if (result.ok) {
        setSessionCookie(reply, 'merchant', result.session, secure);
        return reply.redirect(
          result.secondFactor ? '/dashboard/login/code' : result.hasPassword ? '/dashboard' : FIRST_PASSWORD_PATH,
          303,
        );
      }
      const why = {
        used: 'This sign-in link was used already: each link signs in once.',
        expired: `This sign-in link has expired: a link works for ${SIGN_IN_LINK_LIFETIME_S / 60} minutes.`,
        unknown: 'This sign-in link is not valid: check that it was copied whole.',
      }[result.reason];
      return sendPage(
        reply,
        page({
          title: 'Sign-in link',
          session: null,
          kind: 'merchant',
          flash: { message: why, error: true },
          body: html`<div class="card" style="max-width:34rem;margin:2rem auto"><h1>Sign in another way</h1>
<p>Get a new link: <code>npx sika user sign-in-link --email YOUR_EMAIL</code></p>
<p>Or set a password and sign in with it: <code>npx sika user set-password --email YOUR_EMAIL</code></p>
<p><a href="/dashboard/login">Sign in with a password</a></p></div>`,
        }),
        result.reason === 'unknown' ? 404 : 410,
      );
    },
  );

  app.get(FIRST_PASSWORD_PATH, { schema: { hide: true, ...firstPasswordSchemas.page } }, async (request, reply) => {
    const session = sessionOf(request);
    if (!(await needsFirstPassword(deps.db, session.userId!))) return reply.redirect('/dashboard/account', 303);
    return sendPage(reply, firstPasswordPage(session, null));
  });

  app.post(FIRST_PASSWORD_PATH, { schema: { hide: true, ...firstPasswordSchemas.set } }, async (request, reply) => {
    const session = sessionOf(request);
    const result = await setFirstPassword(
      deps.db,
      { userId: session.userId!, email: session.email },
      { next: formValue(request, 'new_password'), confirm: formValue(request, 'new_password_confirm') },
    );
    if (!result.ok) return sendPage(reply, firstPasswordPage(session, result.message), 400);
    return reply.redirect('/dashboard', 303);
  });
}
