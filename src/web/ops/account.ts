// Operator console: the signed-in operator changes their password (the other sessions are signed out).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { changePassword } from '../../accounts/console-accounts.ts';
import { PASSWORD_LENGTH_MIN } from '../../accounts/service.ts';
import type { AppDeps } from '../../http/deps.ts';
import { accountSchemas } from '../account-schemas.ts';
import type { WebSession } from '../auth.ts';
import { formValue, sendPage, sendThrottled, sessionOf, signedInAccount, tooManyAttempts } from '../console.ts';
import { html } from '../html.ts';
import { csrfField, page } from '../layout.ts';

type Flash = { message: string; error?: boolean } | null;

export async function operatorAccountPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const render = (session: WebSession, flash: Flash) =>
    page({
      title: 'Account',
      session,
      kind: 'operator',
      flash,
      body: html`<h1>Account</h1><p>${session.email} · ${session.role}</p>
<form method="post" action="/ops/account/password" class="card" aria-label="Change password">${csrfField(session)}<h2 style="margin-top:0">Change password</h2>
<p class="muted">Your other sessions are signed out; this one stays.</p>
<label for="current-password">Current password</label><input id="current-password" name="current_password" type="password" autocomplete="current-password" required>
<label for="new-password">New password (at least ${PASSWORD_LENGTH_MIN} characters)</label><input id="new-password" name="new_password" type="password" autocomplete="new-password" minlength="${PASSWORD_LENGTH_MIN}" required>
<label for="new-password-confirm">New password again</label><input id="new-password-confirm" name="new_password_confirm" type="password" autocomplete="new-password" required>
<p><button type="submit">Change password</button></p></form>`,
    });
  const show = (reply: FastifyReply, session: WebSession, flash: Flash = null, status = 200) => sendPage(reply, render(session, flash), status);

  app.get('/ops/account', { schema: { hide: true, ...accountSchemas.account } }, async (request, reply) => show(reply, sessionOf(request)));

  app.post('/ops/account/password', { schema: { hide: true, ...accountSchemas.changePassword } }, async (request, reply) => {
    const session = sessionOf(request);
    const result = await changePassword(deps.db, signedInAccount(request), {
      current: formValue(request, 'current_password'),
      next: formValue(request, 'new_password'),
      confirm: formValue(request, 'new_password_confirm'),
    });
    if (result.ok) return show(reply, session, { message: 'Password changed. Your other sessions are signed out.' });
    if (result.reason === 'throttled') return sendThrottled(reply, result.retryAfterS, render(session, { message: tooManyAttempts(result.retryAfterS), error: true }));
    return show(reply, session, { message: result.reason === 'wrong' ? 'Your current password is not right.' : result.message, error: true }, 400);
  });
}
