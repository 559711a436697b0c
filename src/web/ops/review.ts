// The operator console's review queue: payment attempts held in manual_review or amount_mismatch, and the operator's decision.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import * as ops from '../../ops/service.ts';
import type { HeldAttemptRow } from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, sessionOf } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { csrfField, money, statusBadge } from '../layout.ts';
import { actorOf, showOpsPage as show, type Flash } from './common.ts';

export async function reviewPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  // ---- held attempts ----
  async function reviewPage(reply: FastifyReply, session: WebSession, flash: Flash = null, status = 200) {
    return show(reply, session, 'review', 'Review', reviewView(session, await ops.heldAttempts(db)), flash, status);
  }
  app.get('/ops/review', { schema: { hide: true, ...opsSchemas.review } }, async (request, reply) => reviewPage(reply, sessionOf(request)));
  app.post<{ Params: { id: string } }>('/ops/review/:id', { schema: { hide: true, ...opsSchemas.reviewDecision } }, async (request, reply) => {
    const session = sessionOf(request);
    const decision = formValue(request, 'decision');
    if (decision !== 'approve' && decision !== 'reject') return reviewPage(reply, session, { message: 'Choose approve or reject.', error: true }, 400);
    const applied = await ops.resolveHeldAttempt(db, actorOf(session), deps.config.checkoutUrlHost, request.params.id, decision);
    return reviewPage(reply, session, { message: `Attempt ${applied.attempt.id} is ${applied.attempt.status}; checkout ${applied.session.id} is ${applied.session.status}.` });
  });
}

export const reviewView = (session: WebSession, held: readonly HeldAttemptRow[]): Html => html`<h1>Payments held for review</h1>
<div class="table-wrap"><table><thead><tr><th>Attempt</th><th>Merchant</th><th>Rail</th><th>Amount</th><th>Status</th><th><span class="muted">Decision</span></th></tr></thead><tbody>
${held.map((a) => html`<tr><td class="mono">${a.id}<br><span class="muted">${a.session_id} · ${a.environment}</span></td><td>${a.merchant_name}</td><td>${a.rail}</td><td>${money(a.amount_charged_minor)}</td><td>${statusBadge(a.status)}<br><span class="muted">${a.raw_status}</span></td>
<td><form method="post" action="/ops/review/${a.id}" class="inline">${csrfField(session)}<button name="decision" value="approve" aria-label="Approve ${a.id}">Approve</button> <button name="decision" value="reject" class="danger" aria-label="Reject ${a.id}">Reject</button></form></td></tr>`)}
${held.length === 0 ? html`<tr><td colspan="6" class="muted">Nothing is waiting.</td></tr>` : ''}
</tbody></table></div>`;

