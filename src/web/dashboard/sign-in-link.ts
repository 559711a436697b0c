// GET /dashboard/login/link/:token: a one-time sign-in link (src/accounts/sign-in-links.ts), printed by the
// server's first run for its demo merchant or by `sika user sign-in-link`. The dashboard's session check
// lets it through (src/web/console.ts): it is how a browser without a session gets one. Used or expired, it
// says so and how to get another.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { redeemSignInLink, SIGN_IN_LINK_LIFETIME_S, SIGN_IN_LINK_PATH } from '../../accounts/sign-in-links.ts';
import type { AppDeps } from '../../http/deps.ts';
import { setSessionCookie } from '../auth.ts';
import { sendPage } from '../console.ts';
import { CONSOLE_ID_LENGTH_MAX } from '../console-schemas.ts';
import { html } from '../html.ts';
import { page } from '../layout.ts';

/** The tokens are 32 random bytes in base64url. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const schema = {
  params: Type.Object({ token: Type.String({ maxLength: CONSOLE_ID_LENGTH_MAX }) }, { additionalProperties: false }),
  querystring: Type.Object({}, { additionalProperties: true }),
};

export async function signInLinkPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const secure = deps.config.baseUrl.startsWith('https:');
  app.get<{ Params: { token: string } }>(`${SIGN_IN_LINK_PATH}/:token`, { schema: { hide: true, ...schema } }, async (request, reply) => {
    const { token } = request.params;
    const result = TOKEN_PATTERN.test(token) ? await redeemSignInLink(deps.db, token) : ({ ok: false, reason: 'unknown' } as const);
    if (result.ok) {
      setSessionCookie(reply, 'merchant', result.session, secure);
      return reply.redirect(result.secondFactor ? '/dashboard/login/code' : '/dashboard', 303);
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
  });
}
