// Dashboard: settings (owner: fee bearer per rail, payout approval) and users (owner invites users with a role).
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { hashPassword } from '../../accounts/service.ts';
import { audit } from '../../audit/log.ts';
import { DEFAULT_FEES, RAILS, type Rail } from '../../checkout/fees.ts';
import { feeSchedule } from '../../checkout/payer-service.ts';
import { DbError } from '../../db/index.ts';
import type { AppDeps } from '../../http/deps.ts';
import { newUuid } from '../../lib/ids.ts';
import type { WebSession } from '../auth.ts';
import { formValue, sendPage, sessionOf } from '../console.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, page, statusBadge, when_ } from '../layout.ts';

type Flash = { message: string; error?: boolean } | null;
const ROLES = ['admin', 'developer', 'approver', 'viewer'] as const;
const RAIL_LABELS: Record<Rail, string> = { momo: 'Mobile Money', card: 'Card', bank_transfer: 'Bank transfer', cash: 'Cash at a branch' };

export async function settingsPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = (reply: FastifyReply, session: WebSession, title: string, body: Html, flash: Flash = null, status = 200) =>
    sendPage(reply, page({ title, session, kind: 'merchant', active: 'settings', flash, body }), status);

  async function settingsPage(reply: FastifyReply, session: WebSession, flash: Flash = null, status = 200, shown: Html | null = null) {
    const [schedule, merchant, users] = await Promise.all([
      feeSchedule(db, session.merchantId!, session.environment),
      db.query<{ payout_approval_required: boolean }>('SELECT payout_approval_required FROM merchants WHERE id = $1', [session.merchantId]),
      db.query<{ id: string; email: string; role: string; active: boolean; created_at: Date }>('SELECT id, email, role, active, created_at FROM users WHERE merchant_id = $1 ORDER BY created_at', [session.merchantId]),
    ]);
    const owner = session.role === 'owner';
    return show(reply, session, 'Settings', html`<h1>Settings</h1>${shown ?? ''}
<form method="post" action="/dashboard/settings/fees" class="card">${csrfField(session)}<h2 style="margin-top:0">Who pays the checkout fee (${session.environment})</h2>
<p class="muted">Payer: the fee is added to what the payer pays. Merchant: the fee is taken from the payment.</p>
<div class="table-wrap"><table><thead><tr><th>Method</th><th>Fee</th><th>Paid by</th></tr></thead><tbody>
${RAILS.map((rail) => {
  const fee = schedule[rail];
  const describe = `${fee.percentBps ? `${fee.percentBps / 100}%` : ''}${fee.flatMinor ? `${fee.percentBps ? ' + ' : ''}GHS ${(fee.flatMinor / 100).toFixed(2)}` : ''}${fee.capMinor !== null ? ` (max GHS ${(fee.capMinor / 100).toFixed(2)})` : ''}`;
  return html`<tr><td>${RAIL_LABELS[rail]}</td><td>${describe}</td><td><label class="muted" for="bearer-${rail}" style="font-weight:400;margin:0">Bearer for ${RAIL_LABELS[rail]}</label>
  <select id="bearer-${rail}" name="bearer_${rail}"${raw(owner ? '' : ' disabled')}><option value="payer"${raw(fee.bearer === 'payer' ? ' selected' : '')}>Payer</option><option value="merchant"${raw(fee.bearer === 'merchant' ? ' selected' : '')}>Merchant</option></select></td></tr>`;
})}</tbody></table></div>${owner ? html`<p><button type="submit">Save fee settings</button></p>` : html`<p class="muted">Only the owner can change settings.</p>`}</form>
<form method="post" action="/dashboard/settings/approval" class="card">${csrfField(session)}<h2 style="margin-top:0">Payout approval</h2>
<p>Live payouts ${merchant[0]?.payout_approval_required ? 'need approval by an approver who is not the requester' : 'start processing at once'}.</p>
${owner ? html`<input type="hidden" name="required" value="${merchant[0]?.payout_approval_required ? 'off' : 'on'}"><button type="submit">${merchant[0]?.payout_approval_required ? 'Stop requiring approval' : 'Require approval (four eyes)'}</button>` : ''}</form>
<section class="card" aria-label="Users"><h2 style="margin-top:0">Users</h2><div class="table-wrap"><table><thead><tr><th>Email</th><th>Role</th><th>Status</th><th>Since</th></tr></thead><tbody>
${users.map((u) => html`<tr><td>${u.email}</td><td>${u.role}</td><td>${statusBadge(u.active ? 'active' : 'inactive')}</td><td>${when_(u.created_at)}</td></tr>`)}</tbody></table></div>
${owner ? html`<form method="post" action="/dashboard/users" class="row" style="margin-top:.8rem">${csrfField(session)}<div><label for="invite-email">Email</label><input id="invite-email" name="email" type="email" required></div>
<div><label for="invite-role">Role</label><select id="invite-role" name="role">${ROLES.map((r) => html`<option value="${r}">${r}</option>`)}</select></div><div><button type="submit">Invite user</button></div></form>` : ''}</section>`, flash, status);
  }

  app.get('/dashboard/settings', { schema: { hide: true } }, async (request, reply) => settingsPage(reply, sessionOf(request)));

  app.post('/dashboard/settings/fees', { schema: { hide: true } }, async (request, reply) => {
    const session = sessionOf(request);
    if (session.role !== 'owner') return settingsPage(reply, session, { message: 'Only the owner can change settings.', error: true }, 403);
    const before = await feeSchedule(db, session.merchantId!, session.environment);
    await db.transaction(async (tx) => {
      for (const rail of RAILS) {
        const bearer = formValue(request, `bearer_${rail}`);
        if (bearer !== 'payer' && bearer !== 'merchant') continue;
        const fee = before[rail] ?? DEFAULT_FEES[rail];
        await tx.query(
          `INSERT INTO fee_schedules (merchant_id, environment, rail, bearer, percent_bps, flat_minor, cap_minor) VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (merchant_id, environment, rail) DO UPDATE SET bearer = EXCLUDED.bearer, updated_at = now()`,
          [session.merchantId, session.environment, rail, bearer, fee.percentBps, fee.flatMinor, fee.capMinor],
        );
      }
      const after = await feeSchedule(tx, session.merchantId!, session.environment);
      await audit(tx, { actor: { type: 'user', id: session.userId!, email: session.email }, merchantId: session.merchantId, action: 'fees.update', objectType: 'fee_schedule', objectId: `${session.merchantId}:${session.environment}`, before, after });
    });
    return settingsPage(reply, session, { message: 'Fee settings saved. New quotes use them at once.' });
  });

  app.post('/dashboard/settings/approval', { schema: { hide: true } }, async (request, reply) => {
    const session = sessionOf(request);
    if (session.role !== 'owner') return settingsPage(reply, session, { message: 'Only the owner can change settings.', error: true }, 403);
    const required = formValue(request, 'required') === 'on';
    await db.transaction(async (tx) => {
      await tx.query('UPDATE merchants SET payout_approval_required = $2 WHERE id = $1', [session.merchantId, required]);
      await audit(tx, { actor: { type: 'user', id: session.userId!, email: session.email }, merchantId: session.merchantId, action: 'payout_approval.update', objectType: 'merchant', objectId: session.merchantId!, before: { payout_approval_required: !required }, after: { payout_approval_required: required } });
    });
    return settingsPage(reply, session, { message: required ? 'Live payouts now need approval.' : 'Live payouts no longer need approval.' });
  });

  app.post('/dashboard/users', { schema: { hide: true } }, async (request, reply) => {
    const session = sessionOf(request);
    if (session.role !== 'owner') return settingsPage(reply, session, { message: 'Only the owner can invite users.', error: true }, 403);
    const email = formValue(request, 'email').trim();
    const role = formValue(request, 'role');
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || !(ROLES as readonly string[]).includes(role)) {
      return settingsPage(reply, session, { message: 'Enter an email and choose a role.', error: true }, 400);
    }
    const password = randomBytes(12).toString('base64url');
    const id = newUuid();
    try {
      await db.transaction(async (tx) => {
        await tx.query('INSERT INTO users (id, merchant_id, email, password_hash, role, invited_by_user_id) VALUES ($1, $2, $3, $4, $5, $6)', [id, session.merchantId, email, await hashPassword(password), role, session.userId]);
        await audit(tx, { actor: { type: 'user', id: session.userId!, email: session.email }, merchantId: session.merchantId, action: 'user.invite', objectType: 'user', objectId: id, before: null, after: { email, role } });
      });
    } catch (error) {
      if (error instanceof DbError && error.isUniqueViolation) return settingsPage(reply, session, { message: `A user with email ${email} already exists.`, error: true }, 409);
      throw error;
    }
    const shown = html`<div class="card" role="alert"><h2>Invitation</h2><p>Send ${email} this temporary password over a channel you trust; it is shown once.</p><p class="secret" id="temporary-password">${password}</p></div>`;
    return settingsPage(reply, session, { message: `${email} invited as ${role}.` }, 200, shown);
  });
}
