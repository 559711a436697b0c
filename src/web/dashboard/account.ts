// Dashboard: the signed-in user's account (change password, TOTP second factor with recovery codes, shared
// with the operator console in ../console-account.ts), turning the second factor off where the owner's
// rule allows, and the gate that sends a user with a temporary password, or without the second factor the
// owner's rule requires (settings.ts), to this page first.
import type { FastifyInstance } from 'fastify';
import { checkSecondFactor, disableSecondFactor } from '../../accounts/console-accounts.ts';
import type { AppDeps } from '../../http/deps.ts';
import { accountSchemas } from '../account-schemas.ts';
import type { WebSession } from '../auth.ts';
import { accountGate as sharedAccountGate, accountPaths, consoleAccountPages } from '../console-account.ts';
import { formValue, refusedForm, sessionOf, signedInAccount } from '../console.ts';
import { html } from '../html.ts';
import { csrfField } from '../layout.ts';
import { formRefusal } from '../error-pages.ts';

const { account: ACCOUNT_PATH, secondFactor: SECOND_FACTOR_PATH } = accountPaths('merchant');
const userActor = (session: WebSession) => ({ type: 'user' as const, id: session.userId!, email: session.email });

/** The dashboard's gate: a temporary password, or a second factor the owner requires and not yet set up, opens only the account pages. */
export const accountGate = sharedAccountGate('merchant');

export async function accountPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const turnOffForm = (session: WebSession) =>
    html`<form method="post" action="${SECOND_FACTOR_PATH}/disable" class="row">${csrfField(session)}<div><label for="disable-code">Code from your app</label><input id="disable-code" name="code" autocomplete="one-time-code" inputmode="numeric" required></div><div><button class="danger">Turn off</button></div></form>`;
  const { accountPage, throttledPage } = await consoleAccountPages(app, deps, 'merchant', turnOffForm);

  app.post(
    `${SECOND_FACTOR_PATH}/disable`,
    { schema: { hide: true, ...accountSchemas.disableSecondFactor } },
    async (request, reply) => {
      const session = sessionOf(request);
      if (!session.secondFactorEnrolled) return reply.redirect(ACCOUNT_PATH, 303);
      if (session.secondFactorRequired)
        return accountPage(
          reply,
          session,
          refusedForm('Your account owner requires two-factor authentication for your role; it stays on.', 409),
        );
      const checked = await checkSecondFactor(db, signedInAccount(request), formValue(request, 'code'), {
        allowRecoveryCode: true,
      });
      if (!checked.ok) {
        if (checked.reason === 'throttled') {
          const back = html`<p><a href="${ACCOUNT_PATH}">Back</a></p>`;
          return throttledPage(reply, session, checked.retryAfterS, 'Account', back);
        }
        return accountPage(reply, session, refusedForm('That code is not right, or was used already.', 400));
      }
      try {
        await disableSecondFactor(db, userActor(session), session.userId!, {
          refuseWhenRequired: true,
          signOutSessions: false,
        });
      } catch (error) {
        return accountPage(reply, session, formRefusal(error));
      }
      return accountPage(
        reply,
        { ...session, secondFactorEnrolled: false },
        { flash: { message: 'Two-factor authentication is off.' } },
      );
    },
  );
}
