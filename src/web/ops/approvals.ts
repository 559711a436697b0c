// The operator console's Approvals: money decisions filed by one operator, waiting for a second (issue 30),
// each with what it decides (a held payment's amounts and choice, a payout return, payout settings before
// and after), its reason and requester, and Approve or Reject; below, the requests decided lately.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { SikaError } from '../../lib/errors.ts';
import { describe, type ApprovalRow } from '../../ops/approvals.ts';
import {
  HELD_CHOICE_LABELS,
  type HeldAttemptPayload,
  type PayoutReturnPayload,
  type PayoutSettingsPayload,
  type SettingsValues,
} from '../../ops/approvals-model.ts';
import * as ops from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, postOnObject, sessionOf, pageSender } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { csrfField, money, statusBadge, when_ } from '../layout.ts';
import { actorOf, formPage } from './common.ts';

const show = pageSender('operator', 'approvals');

export async function approvalPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const { checkoutUrlHost } = deps.config;
  const approvalsPage = formPage(show, 'Approvals', async (session) =>
    approvalsView(session, await ops.approvalsOverview(db)),
  );
  app.get('/ops/approvals', { schema: { hide: true, ...opsSchemas.approvals } }, async (request, reply) =>
    approvalsPage(reply, sessionOf(request)),
  );
  postOnObject(app, '/ops/approvals/:id', opsSchemas.approvalDecision, async (request, reply, session) => {
    const decision = formValue(request, 'decision') === 'approve' ? 'approve' : 'reject';
    const note = formValue(request, 'note');
    try {
      const result = await ops.decideApproval(db, actorOf(session), checkoutUrlHost, request.params.id, decision, note);
      const stale = result.status === 'stale';
      return approvalsPage(reply, session, {
        flash: { message: result.message, error: stale },
        status: stale ? 409 : 200,
      });
    } catch (error) {
      if (error instanceof SikaError && (error.code === 'FORBIDDEN' || error.code === 'APPROVAL_NOT_PENDING')) {
        const status = error.code === 'FORBIDDEN' ? 403 : 409;
        return approvalsPage(reply, session, { flash: { message: error.message, error: true }, status });
      }
      throw error;
    }
  });
}

const settingsText = (s: SettingsValues) =>
  `access ${s.payout_access ? 'on' : 'off'}, ${s.paused ? 'paused' : 'running'}, ${money(s.payout_limit_minor)} per payout, ${money(s.daily_limit_minor)} a day`;

/** What a request decides, in detail. */
function decides(r: ApprovalRow): Html {
  switch (r.kind) {
    case 'held_attempt': {
      const p = r.payload as unknown as HeldAttemptPayload;
      const d = p.received_minor - p.charged_minor;
      return html`<strong>${HELD_CHOICE_LABELS[p.choice]}</strong><br>Payment <span class="mono">${r.object_id}</span>: expected ${money(p.charged_minor)}, received ${money(p.received_minor)}, ${d === 0 ? 'no difference' : d < 0 ? `short by ${money(-d)}` : `over by ${money(d)}`}<br><a href="/ops/review?q=${encodeURIComponent(r.object_id)}">See it in Review</a>`;
    }
    case 'payout_return': {
      const p = r.payload as unknown as PayoutReturnPayload;
      return html`<strong>Payout return</strong><br>Payout <span class="mono">${p.payout_reference}</span>: ${money(p.amount_minor)} and its fee ${money(p.fee_minor)} back to the balance<br>Bank return reference <span class="mono">${p.return_reference}</span>`;
    }
    case 'payout_settings': {
      const p = r.payload as unknown as PayoutSettingsPayload;
      return html`<strong>Payout settings</strong><br>Before: ${settingsText(p.before)}<br>After: ${settingsText(p.after)}`;
    }
  }
}

export function approvalsView(
  session: WebSession,
  data: { pending: readonly ApprovalRow[]; decided: readonly ApprovalRow[] },
): Html {
  const mine = (r: ApprovalRow) => r.requested_by === session.operatorId;
  return html`<h1>Approvals</h1>
<p class="muted">A decision that moves money is filed by one operator and runs when a second approves it. You cannot approve your own requests.</p>
<h2>Waiting for a second operator</h2>
<div class="table-wrap"><table><thead><tr><th>Requested</th><th>Merchant</th><th>Environment</th><th>What it decides</th><th>Reason</th><th><span class="muted">Decision</span></th></tr></thead><tbody>
${data.pending.map(
  (
    r,
  ) => html`<tr id="req-${r.id}"><td>${when_(r.created_at)}<br><span class="muted">${r.requested_by_email}</span></td><td>${r.merchant_name}</td><td>${statusBadge(r.environment)}</td><td>${decides(r)}</td><td class="wrap">${r.reason}</td>
<td>${
    mine(r)
      ? html`<span class="muted">Your request: another operator decides it.</span>`
      : html`<form method="post" action="/ops/approvals/${r.id}">${csrfField(session)}<label for="note-${r.id}">Note (for a rejection)</label><input id="note-${r.id}" name="note" maxlength="500">
<p><button name="decision" value="approve" aria-label="Approve: ${describe(r)}">Approve</button> <button name="decision" value="reject" class="danger" aria-label="Reject: ${describe(r)}">Reject</button></p></form>`
  }</td></tr>`,
)}
${data.pending.length === 0 ? html`<tr><td colspan="6" class="muted">Nothing is waiting.</td></tr>` : ''}
</tbody></table></div>
<h2>Decided lately</h2>
<div class="table-wrap"><table><thead><tr><th>Decided</th><th>Merchant</th><th>Environment</th><th>What it decided</th><th>Requested by</th><th>Outcome</th></tr></thead><tbody>
${data.decided.map(
  (r) =>
    html`<tr><td>${when_(r.decided_at)}</td><td>${r.merchant_name}</td><td>${statusBadge(r.environment)}</td><td>${decides(r)}<br><span class="muted wrap">Reason: ${r.reason}</span></td><td>${r.requested_by_email}</td><td>${statusBadge(r.status)}<br><span class="muted">by ${r.decided_by_email ?? ''}</span>${r.decision_note ? html`<br><span class="muted wrap">${r.decision_note}</span>` : ''}</td></tr>`,
)}
${data.decided.length === 0 ? html`<tr><td colspan="6" class="muted">No decisions yet.</td></tr>` : ''}
</tbody></table></div>`;
}
