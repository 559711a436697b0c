// Dashboard: settings (owner: fee bearer per rail, payout approval) and users (owner invites users with a role).
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { setSecondFactorRequired } from '../../accounts/console-accounts.ts';
import {
  INVITABLE_ROLES,
  inviteUser,
  listUsers,
  merchantRules,
  setPayoutApprovalRequired,
} from '../../accounts/service.ts';
import { feeSchedule, setFeeBearers } from '../../checkout/fee-settings.ts';
import type { Bearer } from '../../checkout/fees.ts';
import type { AppDeps } from '../../http/deps.ts';
import { BEARERS, railDescriptors, railIds, type Rail } from '../../rails/registry.ts';
import type { WebSession } from '../auth.ts';
import { accountSchemas } from '../account-schemas.ts';
import { formValue, postForm, sessionOf, pageSender, refusedForm, type PageOutcome } from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, statusBadge, when_ } from '../layout.ts';
import { formRefusal } from '../error-pages.ts';

const ROLES = INVITABLE_ROLES;
const userActor = (session: WebSession) => ({ type: 'user' as const, id: session.userId!, email: session.email });

export async function settingsPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = pageSender('merchant', 'settings');

  /** The settings page; `shown`: what a form shows once above the settings (an invited user's temporary password). */
  async function settingsPage(reply: FastifyReply, session: WebSession, outcome: PageOutcome & { shown?: Html } = {}) {
    const [schedule, merchant, users] = await Promise.all([
      feeSchedule(db, session.merchantId!, session.environment),
      merchantRules(db, session.merchantId!),
      listUsers(db, session.merchantId!),
    ]);
    const owner = session.role === 'owner';
    return show(
      reply,
      session,
      'Settings',
      html`<h1>Settings</h1>${outcome.shown ?? ''}
<form method="post" action="/dashboard/settings/fees" class="card">${csrfField(session)}<h2 style="margin-top:0">Who pays the checkout fee (${session.environment})</h2>
<p class="muted">Payer: the fee is added to what the payer pays. Merchant: the fee is taken from the payment.</p>
<div class="table-wrap"><table><thead><tr><th>Method</th><th>Fee</th><th>Paid by</th></tr></thead><tbody>
${railDescriptors().map(({ id: rail, labels }) => {
  const fee = schedule[rail];
  const describe = `${fee.percentBps ? `${fee.percentBps / 100}%` : ''}${fee.flatMinor ? `${fee.percentBps ? ' + ' : ''}GHS ${(fee.flatMinor / 100).toFixed(2)}` : ''}${fee.capMinor !== null ? ` (max GHS ${(fee.capMinor / 100).toFixed(2)})` : ''}`;
  return html`<tr><td>${labels.dashboard}</td><td>${describe}</td><td><label class="muted" for="bearer-${rail}" style="font-weight:400;margin:0">Bearer for ${labels.dashboard}</label>
  <select id="bearer-${rail}" name="bearer_${rail}"${raw(owner ? '' : ' disabled')}><option value="payer"${raw(fee.bearer === 'payer' ? ' selected' : '')}>Payer</option><option value="merchant"${raw(fee.bearer === 'merchant' ? ' selected' : '')}>Merchant</option></select></td></tr>`;
})}</tbody></table></div>${owner ? html`<p><button type="submit">Save fee settings</button></p>` : html`<p class="muted">Only the owner can change settings.</p>`}</form>
<form method="post" action="/dashboard/settings/approval" class="card">${csrfField(session)}<h2 style="margin-top:0">Payout approval</h2>
<p>Live payouts ${merchant?.payout_approval_required ? 'need approval by an approver who is not the requester' : 'start processing at once'}.</p>
${owner ? html`<input type="hidden" name="required" value="${merchant?.payout_approval_required ? 'off' : 'on'}"><button type="submit">${merchant?.payout_approval_required ? 'Stop requiring approval' : 'Require approval (four eyes)'}</button>` : ''}</form>
<form method="post" action="/dashboard/settings/second-factor" class="card" aria-label="Two-factor rule">${csrfField(session)}<h2 style="margin-top:0">Two-factor authentication</h2>
<p>${merchant?.second_factor_required ? 'Users who approve payouts or manage API keys (owner, admins, developers, approvers) must use a code from an authenticator app; they set it up at their next page.' : 'Each user may turn on a second factor on their Account page; nobody has to.'}</p>
${owner ? html`<input type="hidden" name="required" value="${merchant?.second_factor_required ? 'off' : 'on'}"><button type="submit">${merchant?.second_factor_required ? 'Stop requiring two-factor' : 'Require two-factor for approvers and key managers'}</button>` : ''}</form>
<section class="card" aria-label="Users"><h2 style="margin-top:0">Users</h2><div class="table-wrap"><table class="stack" aria-label="Users"><thead><tr><th>Email</th><th>Role</th><th>Status</th><th>Since</th></tr></thead><tbody>
${users.map((u) => html`<tr><td class="wrap" data-label="Email">${u.email}</td><td data-label="Role">${u.role}</td><td data-label="Status">${statusBadge(u.active ? 'active' : 'inactive')}</td><td class="date" data-label="Since">${when_(u.created_at)}</td></tr>`)}</tbody></table></div>
${
  owner
    ? html`<form method="post" action="/dashboard/users" class="row" style="margin-top:.8rem">${csrfField(session)}<div><label for="invite-email">Email</label><input id="invite-email" name="email" type="email" required></div>
<div><label for="invite-role">Role</label><select id="invite-role" name="role">${ROLES.map((r) => html`<option value="${r}">${r}</option>`)}</select></div><div><button type="submit">Invite user</button></div></form>`
    : ''
}</section>`,
      outcome.flash,
      outcome.status,
    );
  }

  app.get('/dashboard/settings', { schema: { hide: true, ...dashboardSchemas.settings } }, async (request, reply) =>
    settingsPage(reply, sessionOf(request)),
  );

  /** A settings form's POST: the owner's alone; any other role gets the settings page again with a 403. */
  const postAsOwner = (
    path: string,
    schema: FastifySchema,
    handle: (request: FastifyRequest, reply: FastifyReply, session: WebSession) => Promise<unknown>,
    refusal = 'Only the owner can change settings.',
  ) =>
    postForm(app, path, schema, async (request, reply, session) =>
      session.role === 'owner'
        ? handle(request, reply, session)
        : settingsPage(reply, session, refusedForm(refusal, 403)),
    );

  postAsOwner('/dashboard/settings/fees', dashboardSchemas.feeSettings, async (request, reply, session) => {
    const bearers: Partial<Record<Rail, Bearer>> = {};
    for (const rail of railIds()) {
      const bearer = formValue(request, `bearer_${rail}`);
      if ((BEARERS as readonly string[]).includes(bearer)) bearers[rail] = bearer as Bearer;
    }
    // The schema refuses a bearer that is not one; a form that names none would save nothing.
    if (Object.keys(bearers).length === 0) {
      const message = `Choose who pays the fee: bearer_${railIds()[0]} (or another rail's) must be one of ${BEARERS.join(', ')}.`;
      return settingsPage(reply, session, refusedForm(message, 400));
    }
    await setFeeBearers(db, userActor(session), session.merchantId!, session.environment, bearers);
    return settingsPage(reply, session, { flash: { message: 'Fee settings saved. New quotes use them at once.' } });
  });

  postAsOwner('/dashboard/settings/approval', dashboardSchemas.approvalSetting, async (request, reply, session) => {
    const required = formValue(request, 'required') === 'on';
    await setPayoutApprovalRequired(db, userActor(session), session.merchantId!, required);
    const message = required ? 'Live payouts now need approval.' : 'Live payouts no longer need approval.';
    return settingsPage(reply, session, { flash: { message } });
  });

  postAsOwner('/dashboard/settings/second-factor', accountSchemas.secondFactorRule, async (request, reply, session) => {
    const required = formValue(request, 'required') === 'on';
    try {
      await setSecondFactorRequired(db, userActor(session), session.merchantId!, required);
    } catch (error) {
      return settingsPage(reply, session, formRefusal(error));
    }
    const message = required
      ? 'Approvers and key managers now need two-factor authentication.'
      : 'Two-factor authentication is no longer required.';
    return settingsPage(reply, session, { flash: { message } });
  });

  postAsOwner(
    '/dashboard/users',
    dashboardSchemas.inviteUser,
    async (request, reply, session) => {
      let invited: Awaited<ReturnType<typeof inviteUser>>;
      try {
        invited = await inviteUser(db, userActor(session), session.merchantId!, {
          email: formValue(request, 'email'),
          role: formValue(request, 'role'),
        });
      } catch (error) {
        return settingsPage(reply, session, formRefusal(error));
      }
      const { email, role, temporaryPassword: password } = invited;
      const shown = html`<div class="card" role="alert"><h2>Invitation</h2><p>Send ${email} this temporary password over a channel you trust; it is shown once.</p><p class="secret" id="temporary-password">${password}</p></div>`;
      return settingsPage(reply, session, { flash: { message: `${email} invited as ${role}.` }, shown });
    },
    'Only the owner can invite users.',
  );
}
