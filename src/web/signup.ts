// Self-service sign-up pages (issue 33; the use cases are accounts/signups.ts): GET /signup the form, POST
// /signup the one "check your e-mail" answer for every valid form (whether or not the address has an account),
// GET /signup/verify/:token a page with a button, POST the same path the verification that makes the merchant
// and signs its owner in to the dashboard, in Test. The link only shows a button: mail scanners and link
// previews open links with GET, and must not use the token up. There is no session yet, so CSRF is a
// double-submit token: a strict SameSite cookie on /signup and the same value in each form.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PASSWORD_LENGTH_MIN } from '../accounts/service.ts';
import {
  requestSignup,
  SIGNUP_LINK_LIFETIME_S,
  SIGNUP_VERIFY_PATH,
  signupLinkOpen,
  signupProblems,
  verifySignup,
  type SignupForm,
  type SignupProblems,
} from '../accounts/signups.ts';
import type { AppDeps } from '../http/deps.ts';
import { setSessionCookie } from './auth.ts';
import { sendPage, sendThrottled } from './console.ts';
import { CONSOLE_ID_LENGTH_MAX, CSRF_TOKEN_LENGTH_MAX } from './console-schemas.ts';
import { consoleErrorPage, registerErrorPages } from './error-pages.ts';
import { html, type Html } from './html.ts';
import { page } from './layout.ts';

export const SIGNUP_PATH = '/signup';
const SIGNUP_CSRF_COOKIE = 'sika_signup_csrf';
/** How long a sign-up form stays good to post (its CSRF cookie). */
const SIGNUP_FORM_LIFETIME_S = 3_600;
/** A field's longest accepted input: beyond the rules' own limits, so a too-long value gets its field's message. */
const SIGNUP_FIELD_LENGTH_MAX = 4_000;

const field = () => Type.Optional(Type.String({ maxLength: SIGNUP_FIELD_LENGTH_MAX }));
const schemas = {
  form: { querystring: Type.Object({}, { additionalProperties: true }) },
  submit: {
    body: Type.Object(
      {
        _csrf: Type.Optional(Type.String({ maxLength: CSRF_TOKEN_LENGTH_MAX })),
        business_name: field(),
        name: field(),
        email: field(),
        password: field(),
      },
      { additionalProperties: true },
    ),
  },
  verifyPage: {
    params: Type.Object({ token: Type.String({ maxLength: CONSOLE_ID_LENGTH_MAX }) }, { additionalProperties: false }),
    querystring: Type.Object({}, { additionalProperties: true }),
  },
  verify: {
    params: Type.Object({ token: Type.String({ maxLength: CONSOLE_ID_LENGTH_MAX }) }, { additionalProperties: false }),
    body: Type.Object(
      { _csrf: Type.Optional(Type.String({ maxLength: CSRF_TOKEN_LENGTH_MAX })) },
      { additionalProperties: true },
    ),
  },
};

const card = (body: Html) => html`<div class="card" style="max-width:30rem;margin:2rem auto">${body}</div>`;

/** One labelled input, its problem (if any) shown below it and tied to it for screen readers. */
function input(
  id: keyof SignupForm,
  label: string,
  attributes: { type: string; autocomplete: string; value?: string; hint?: string },
  problem: string | undefined,
): Html {
  const described = [attributes.hint ? `${id}-hint` : '', problem ? `${id}-problem` : ''].filter(Boolean).join(' ');
  return html`<label for="${id}">${label}</label>
${attributes.hint ? html`<p class="muted" id="${id}-hint" style="margin:0 0 .2rem">${attributes.hint}</p>` : ''}<input id="${id}" name="${id}" type="${attributes.type}" autocomplete="${attributes.autocomplete}" required value="${attributes.value ?? ''}"${described ? html` aria-describedby="${described}"` : ''}${problem ? html` aria-invalid="true"` : ''}>
${problem ? html`<p class="flash error" id="${id}-problem" style="margin:.3rem 0 0;padding:.3rem .6rem">${problem}</p>` : ''}`;
}

function signupPage(
  csrf: string,
  values: Partial<SignupForm> = {},
  problems: SignupProblems = {},
  flash: string | null = null,
): string {
  return page({
    title: 'Create an account',
    session: null,
    kind: 'merchant',
    flash: flash ? { message: flash, error: true } : null,
    body: card(html`<h1>Create your Sika account</h1>
<p>Take payments by mobile money, bank and cash. You can use Test mode as soon as you confirm your e-mail; Live payments open once your business is verified.</p>
<form method="post" action="${SIGNUP_PATH}" novalidate aria-label="Create an account">
<input type="hidden" name="_csrf" value="${csrf}">
${input('business_name', 'Business name', { type: 'text', autocomplete: 'organization', value: values.business_name }, problems.business_name)}
${input('name', 'Your name', { type: 'text', autocomplete: 'name', value: values.name }, problems.name)}
${input('email', 'E-mail', { type: 'email', autocomplete: 'email', value: values.email }, problems.email)}
${input('password', 'Password', { type: 'password', autocomplete: 'new-password', hint: `At least ${PASSWORD_LENGTH_MIN} characters.` }, problems.password)}
<p><button type="submit">Create account</button></p>
</form>
<p>Already have an account? <a href="/dashboard/login">Sign in</a></p>`),
  });
}

/** The one answer to every valid form: nothing in it depends on the address given. */
const checkEmailPage = () =>
  page({
    title: 'Check your e-mail',
    session: null,
    kind: 'merchant',
    body: card(html`<h1>Check your e-mail</h1>
<p>We sent a message to the address you entered. Open the link in it to confirm your e-mail and open your account. The link works once, for ${SIGNUP_LINK_LIFETIME_S / 3_600} hours.</p>
<p class="muted">Nothing arrived after a few minutes? Look in your spam folder, or <a href="${SIGNUP_PATH}">sign up again</a>. If you already have an account, <a href="/dashboard/login">sign in</a>.</p>`),
  });

/** Unknown, used and expired links all answer this, with the same status. */
const linkDeadPage = () =>
  page({
    title: 'Link expired',
    session: null,
    kind: 'merchant',
    flash: { message: 'This link has expired or was already used.', error: true },
    body: card(html`<h1>This link has expired or was already used</h1>
<p>A confirmation link works once, for ${SIGNUP_LINK_LIFETIME_S / 3_600} hours, and a newer sign-up with the same e-mail replaces it.</p>
<p><a class="button" href="${SIGNUP_PATH}">Sign up again</a></p>
<p>Confirmed your e-mail already? <a href="/dashboard/login">Sign in</a></p>`),
  });

const confirmPage = (token: string, csrf: string, flash: string | null = null) =>
  page({
    title: 'Confirm your e-mail',
    session: null,
    kind: 'merchant',
    flash: flash ? { message: flash, error: true } : null,
    body: card(html`<h1>Confirm your e-mail</h1>
<p>One step left: confirm your e-mail address to open your Sika account. You will be signed in to your dashboard, in Test mode.</p>
<form method="post" action="${SIGNUP_VERIFY_PATH}/${token}">
<input type="hidden" name="_csrf" value="${csrf}">
<p><button type="submit">Confirm my e-mail</button></p>
</form>`),
  });

const emailTakenPage = () =>
  page({
    title: 'Account exists',
    session: null,
    kind: 'merchant',
    flash: { message: 'An account with this e-mail address was opened in the meantime.', error: true },
    body: card(html`<h1>This e-mail already has an account</h1>
<p>Another sign-up or an invitation opened an account with this e-mail address after you signed up, so this link cannot open a second one.</p>
<p><a class="button" href="/dashboard/login">Sign in</a></p>`),
  });

const bodyValue = (request: FastifyRequest, name: string): string => {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

export async function signupPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const secure = deps.config.baseUrl.startsWith('https:');
  registerErrorPages(app, 'signup', consoleErrorPage('merchant'));
  // A form beyond the schema's bounds is answered by the handlers (the form again, a 400), not a 500.
  app.addHook('onRoute', (route) => {
    route.attachValidation = true;
  });

  const newCsrf = (reply: FastifyReply): string => {
    const csrf = randomBytes(18).toString('base64url');
    reply.setCookie(SIGNUP_CSRF_COOKIE, csrf, {
      httpOnly: true,
      sameSite: 'strict',
      secure,
      path: SIGNUP_PATH,
      maxAge: SIGNUP_FORM_LIFETIME_S,
    });
    return csrf;
  };
  const csrfOk = (request: FastifyRequest): boolean => {
    const cookie = request.cookies[SIGNUP_CSRF_COOKIE] ?? '';
    const submitted = bodyValue(request, '_csrf');
    return (
      cookie.length > 0 &&
      cookie.length === submitted.length &&
      timingSafeEqual(Buffer.from(cookie), Buffer.from(submitted))
    );
  };

  app.get(SIGNUP_PATH, { schema: { hide: true, ...schemas.form } }, async (_request, reply) =>
    sendPage(reply, signupPage(newCsrf(reply))),
  );

  app.post(SIGNUP_PATH, { schema: { hide: true, ...schemas.submit } }, async (request, reply) => {
    const form: SignupForm = {
      business_name: bodyValue(request, 'business_name'),
      name: bodyValue(request, 'name'),
      email: bodyValue(request, 'email'),
      password: bodyValue(request, 'password'),
    };
    const shown = { business_name: form.business_name, name: form.name, email: form.email };
    if (request.validationError) {
      return sendPage(
        reply,
        signupPage(newCsrf(reply), {}, {}, 'The form could not be read: a field is far too long. Fill it in again.'),
        400,
      );
    }
    if (!csrfOk(request)) {
      return sendPage(
        reply,
        signupPage(newCsrf(reply), shown, {}, 'The form expired (CSRF check failed). Please send it again.'),
        403,
      );
    }
    const problems = signupProblems(form);
    if (Object.keys(problems).length > 0) {
      return sendPage(reply, signupPage(newCsrf(reply), shown, problems, 'Check the fields marked below.'), 400);
    }
    const answer = await requestSignup(deps.db, form, request.ip, deps.config.baseUrl);
    if (!answer.ok) {
      const minutes = Math.ceil(answer.retryAfterS / 60);
      return sendThrottled(
        reply,
        answer.retryAfterS,
        signupPage(
          newCsrf(reply),
          shown,
          {},
          `Too many sign-ups from your network. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
        ),
      );
    }
    return sendPage(reply, checkEmailPage());
  });

  app.get<{ Params: { token: string } }>(
    `${SIGNUP_VERIFY_PATH}/:token`,
    { schema: { hide: true, ...schemas.verifyPage } },
    async (request, reply) => {
      if (request.validationError || !(await signupLinkOpen(deps.db, request.params.token)))
        return sendPage(reply, linkDeadPage(), 410);
      return sendPage(reply, confirmPage(request.params.token, newCsrf(reply)));
    },
  );

  app.post<{ Params: { token: string } }>(
    `${SIGNUP_VERIFY_PATH}/:token`,
    { schema: { hide: true, ...schemas.verify } },
    async (request, reply) => {
      if (request.validationError) return sendPage(reply, linkDeadPage(), 410);
      const { token } = request.params;
      if (!csrfOk(request)) {
        if (!(await signupLinkOpen(deps.db, token))) return sendPage(reply, linkDeadPage(), 410);
        return sendPage(
          reply,
          confirmPage(token, newCsrf(reply), 'The page expired (CSRF check failed). Press the button again.'),
          403,
        );
      }
      const answer = await verifySignup(deps.db, token);
      if (answer.ok) {
        setSessionCookie(reply, 'merchant', answer.session, secure);
        reply.clearCookie(SIGNUP_CSRF_COOKIE, { path: SIGNUP_PATH });
        return reply.redirect('/dashboard', 303);
      }
      if (answer.reason === 'email_taken') return sendPage(reply, emailTakenPage(), 409);
      return sendPage(reply, linkDeadPage(), 410);
    },
  );
}
