// The signed-in account's pages that the merchant dashboard and the operator console share: the gate that
// sends an account with a temporary password, or without the second factor it must use, to its account
// page first; the password form; and the TOTP enrolment (secret, otpauth URI, QR code, confirmed with a
// code and the password, ten recovery codes shown once). dashboard/account.ts and ops/account.ts add the
// rest of each console's account page.
import type { FastifyInstance, FastifyReply, preHandlerAsyncHookHandler } from 'fastify';
import {
  changePassword,
  checkPassword,
  confirmTotpEnrolment,
  pendingTotpSecret,
  secondFactorState,
  type SecondFactorState,
} from '../accounts/console-accounts.ts';
import { PASSWORD_LENGTH_MIN } from '../accounts/service.ts';
import { groupedSecret, otpauthUri, RECOVERY_CODES_COUNT } from '../accounts/totp.ts';
import type { AppDeps } from '../http/deps.ts';
import { accountSchemas } from './account-schemas.ts';
import type { ConsoleKind, WebSession } from './auth.ts';
import { qrSvg } from './checkout/qr.ts';
import {
  formValue,
  sendThrottledPage,
  sessionOf,
  signedInAccount,
  pageSender,
  refusalPage,
  refusedForm,
  type PageOutcome,
} from './console.ts';
import { html, raw, type Html } from './html.ts';
import { csrfField, when_ } from './layout.ts';

/** The account pages of a console. */
export const accountPaths = (kind: ConsoleKind) => {
  const base = kind === 'merchant' ? '/dashboard' : '/ops';
  return {
    base,
    account: `${base}/account`,
    password: `${base}/account/password`,
    secondFactor: `${base}/account/2fa`,
    logout: `${base}/logout`,
  };
};

/** Why this account must use a second factor, in the words of its console. */
const requiredBecause = (kind: ConsoleKind) =>
  kind === 'merchant'
    ? 'Your account owner requires two-factor authentication for your role.'
    : 'Operators must use two-factor authentication: every operator role moves money.';

/**
 * Runs after the session check on every route of the console: a temporary password opens only the
 * account page (to change it); a second factor required and not yet set up opens only the account pages
 * (to set it up). Signing out always works.
 */
export function accountGate(kind: ConsoleKind): preHandlerAsyncHookHandler {
  const paths = accountPaths(kind);
  return async function accountGate(request, reply) {
    const session = request.webSession;
    if (session?.stage !== 'active') return;
    const path = request.url.split('?')[0]!;
    if (path === paths.logout) return;
    let allowed: (p: string) => boolean;
    let destination: string;
    let reason: string;
    if (session.mustChangePassword) {
      allowed = (p) => p === paths.account || p === paths.password;
      destination = paths.account;
      reason = 'Choose a new password first: you signed in with a temporary one.';
    } else if (session.secondFactorRequired && !session.secondFactorEnrolled) {
      allowed = (p) => p === paths.account || p.startsWith(`${paths.account}/`);
      destination = paths.secondFactor;
      reason = `Set up two-factor authentication first. ${requiredBecause(kind)}`;
    } else return;
    if (allowed(path)) return;
    if (request.method === 'GET') return reply.redirect(destination, 303);
    return refusalPage(reply, kind, session, {
      title: 'Refused',
      message: reason,
      body: html`<p><a href="${destination}">Continue</a></p>`,
      status: 403,
    });
  };
}

/** The password form of the account page (a temporary password's change, or a change). */
export const passwordForm = (
  session: WebSession,
) => html`<form method="post" action="${accountPaths(session.kind).password}" class="card" aria-label="Change password">${csrfField(session)}
<h2 style="margin-top:0">${session.mustChangePassword ? 'Choose your password' : 'Change password'}</h2>
${session.mustChangePassword ? html`<p>You signed in with a temporary password. Choose your own before you go on.</p>` : html`<p class="muted">Your other sessions are signed out; this one stays.</p>`}
<label for="current-password">${session.mustChangePassword ? 'Temporary password' : 'Current password'}</label><input id="current-password" name="current_password" type="password" autocomplete="current-password" required>
<label for="new-password">New password (at least ${PASSWORD_LENGTH_MIN} characters)</label><input id="new-password" name="new_password" type="password" autocomplete="new-password" minlength="${PASSWORD_LENGTH_MIN}" required>
<label for="new-password-confirm">New password again</label><input id="new-password-confirm" name="new_password_confirm" type="password" autocomplete="new-password" required>
<p><button type="submit">${session.mustChangePassword ? 'Save password' : 'Change password'}</button></p></form>`;

/** The second factor's card on the account page; `turnOff`: the form that turns it off, where the account may. */
export const secondFactorCard = (
  session: WebSession,
  state: SecondFactorState,
  turnOff: Html | null,
) => html`<section class="card" aria-label="Two-factor authentication"><h2>Two-factor authentication</h2>
${
  state.enrolled
    ? html`<p>On since ${when_(state.enabledAt)}. ${session.kind === 'merchant' ? 'Sign-in and payout approvals ask' : 'Sign-in asks'} for a code from your authenticator app. Recovery codes left: <strong>${state.recoveryCodesLeft}</strong> of ${RECOVERY_CODES_COUNT}.</p>
${state.required ? html`<p class="muted">${requiredBecause(session.kind)} It cannot be turned off here.</p>` : (turnOff ?? '')}`
    : html`<p>${state.required ? requiredBecause(session.kind) : 'Off.'} A code from an authenticator app on your phone protects your sign-in${session.kind === 'merchant' ? ' and payout approvals' : ''}.</p><p><a class="button" href="${accountPaths(session.kind).secondFactor}">Set up two-factor authentication</a></p>`
}
</section>`;

/**
 * The account pages of a console: {base}/account (the password form, or only it while the password is
 * temporary, and the second factor's card), {base}/account/password, and {base}/account/2fa (enrolment,
 * then the recovery codes shown once). `turnOff`: the form that turns the second factor off, where the
 * console offers one (the dashboard's own route). Returns the account page and the backoff's page (throttledPage),
 * for that route's answers.
 */
export async function consoleAccountPages(
  app: FastifyInstance,
  deps: AppDeps,
  kind: ConsoleKind,
  turnOff: ((session: WebSession) => Html) | null,
) {
  const { db } = deps;
  const paths = accountPaths(kind);
  const show = pageSender(kind);
  /** A check refused by the sign-in backoff: this console's page titled `title`, saying when to try again (a 429). */
  const throttledPage = (reply: FastifyReply, session: WebSession, retryAfterS: number, title: string, body: Html) =>
    sendThrottledPage(reply, retryAfterS, { title, session, kind, body });

  async function accountPage(reply: FastifyReply, session: WebSession, outcome: PageOutcome = {}) {
    const { flash, status } = outcome;
    if (session.mustChangePassword) {
      const body = html`<h1>Choose your password</h1>${passwordForm(session)}`;
      return show(reply, session, 'Choose your password', body, flash, status);
    }
    const state = await secondFactorState(db, (session.userId ?? session.operatorId)!, kind);
    const card = secondFactorCard(session, state, turnOff ? turnOff(session) : null);
    const body = html`<h1>Account</h1><p>${session.email} · ${session.role}</p>${passwordForm(session)}${card}`;
    return show(reply, session, 'Account', body, flash, status);
  }

  app.get<{ Querystring: { recovery_code_used?: string } }>(
    paths.account,
    { schema: { hide: true, ...accountSchemas.account } },
    async (request, reply) => {
      const session = sessionOf(request);
      if (request.query.recovery_code_used !== undefined && !session.mustChangePassword) {
        const state = await secondFactorState(db, (session.userId ?? session.operatorId)!, kind);
        return accountPage(reply, session, {
          flash: {
            message: `You signed in with a recovery code; ${state.recoveryCodesLeft} left. Each works once.`,
            error: state.recoveryCodesLeft < 3,
          },
        });
      }
      return accountPage(reply, session);
    },
  );

  app.post(paths.password, { schema: { hide: true, ...accountSchemas.changePassword } }, async (request, reply) => {
    const session = sessionOf(request);
    const result = await changePassword(db, signedInAccount(request), {
      current: formValue(request, 'current_password'),
      next: formValue(request, 'new_password'),
      confirm: formValue(request, 'new_password_confirm'),
    });
    if (!result.ok) {
      if (result.reason === 'throttled')
        return throttledPage(reply, session, result.retryAfterS, 'Account', passwordForm(session));
      const message =
        result.reason === 'wrong'
          ? `Your ${session.mustChangePassword ? 'temporary' : 'current'} password is not right.`
          : result.message;
      return accountPage(reply, session, refusedForm(message, 400));
    }
    return accountPage(
      reply,
      { ...session, mustChangePassword: false },
      { flash: { message: 'Password changed. Your other sessions are signed out.' } },
    );
  });

  async function enrolPage(reply: FastifyReply, session: WebSession, outcome: PageOutcome = {}) {
    const secret = await pendingTotpSecret(db, (session.userId ?? session.operatorId)!, kind);
    const uri = otpauthUri(secret, session.email);
    return show(
      reply,
      session,
      'Two-factor authentication',
      html`<h1>Set up two-factor authentication</h1>
${session.secondFactorRequired ? html`<p class="card" role="note">${requiredBecause(kind)} Set it up to go on.</p>` : ''}
<section class="card" aria-label="Secret"><h2>1. Add Sika to your authenticator app</h2>
<p>Scan this QR code with an authenticator app (Google Authenticator, Microsoft Authenticator, 1Password, Aegis, ...), or type the secret in by hand.</p>
<div style="max-width:14rem">${raw(qrSvg(uri, 'QR code of the two-factor secret'))}</div>
<p>Secret: <span class="secret" id="totp-secret">${groupedSecret(secret)}</span></p>
<details><summary>Setup link (otpauth URI)</summary><p class="mono" style="overflow-wrap:anywhere" id="totp-uri">${uri}</p></details></section>
<form method="post" action="${paths.secondFactor}" class="card" aria-label="Confirm">${csrfField(session)}<h2 style="margin-top:0">2. Enter the code the app shows</h2>
<label for="confirm-code">6-digit code</label><input id="confirm-code" name="code" autocomplete="one-time-code" inputmode="numeric" required>
<label for="confirm-password">Your password</label><input id="confirm-password" name="current_password" type="password" autocomplete="current-password" required>
<p><button type="submit">Turn on two-factor authentication</button></p></form>`,
      outcome.flash,
      outcome.status,
    );
  }

  app.get(paths.secondFactor, { schema: { hide: true, ...accountSchemas.secondFactor } }, async (request, reply) => {
    const session = sessionOf(request);
    if (session.secondFactorEnrolled) return reply.redirect(paths.account, 303);
    return enrolPage(reply, session);
  });

  app.post(
    paths.secondFactor,
    { schema: { hide: true, ...accountSchemas.confirmSecondFactor } },
    async (request, reply) => {
      const session = sessionOf(request);
      if (session.secondFactorEnrolled) return reply.redirect(paths.account, 303);
      // The password again: a session left open must not let someone else tie the account to their phone.
      const password = await checkPassword(db, signedInAccount(request), formValue(request, 'current_password'));
      if (!password.ok) {
        if (password.reason === 'throttled') {
          const back = html`<p><a href="${paths.secondFactor}">Back</a></p>`;
          return throttledPage(reply, session, password.retryAfterS, 'Two-factor authentication', back);
        }
        return enrolPage(reply, session, refusedForm('Your password is not right.', 400));
      }
      const result = await confirmTotpEnrolment(db, signedInAccount(request), formValue(request, 'code'));
      if (!result.ok) return enrolPage(reply, session, refusedForm(result.message, 400));
      return show(
        reply,
        { ...session, secondFactorEnrolled: true },
        'Recovery codes',
        html`<h1>Two-factor authentication is on</h1>
<section class="card" aria-label="Recovery codes"><h2>Your recovery codes</h2>
<p>Save these ${result.recoveryCodes.length} codes somewhere safe now: they are shown <strong>once</strong>. Each one signs you in once if you lose your phone.</p>
<ul class="secret" id="recovery-codes" style="list-style:none">${result.recoveryCodes.map((code) => html`<li>${code}</li>`)}</ul></section>
<p><a class="button" href="${paths.base}">I have saved them: continue</a></p>`,
      );
    },
  );

  return { accountPage, throttledPage };
}
