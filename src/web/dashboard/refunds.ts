// Dashboard: the merchant's refunds in the current environment (newest first, by status) and the approver's
// decision on refunds awaiting approval (four eyes, as for payouts: an approver who did not ask decides; with a
// second factor, an approval needs a fresh code). Refunds are asked for on a session's page (checkout.ts).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { decideRefund } from '../../refunds/lifecycle.ts';
import { REFUND_STATUSES, type RefundStatus } from '../../refunds/model.ts';
import { getRefund, listRefunds } from '../../refunds/queries.ts';
import type { WebSession } from '../auth.ts';
import { approverDecision, formValue, sendPage, postOnObject, sessionOf, type Flash } from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import type { Html } from '../html.ts';
import { page } from '../layout.ts';
import { mayDecideRefund, refundsListView } from './refund-views.ts';

/** Refunds on the page (the newest; the status filter finds older ones). */
const REFUND_PAGE_ROWS = 50;

const statusFilter = (value: string | undefined): RefundStatus | null =>
  (REFUND_STATUSES as readonly string[]).includes(value ?? '') ? (value as RefundStatus) : null;

export async function refundPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = (reply: FastifyReply, session: WebSession, body: Html, flash: Flash, status: number) =>
    sendPage(reply, page({ title: 'Refunds', session, kind: 'merchant', active: 'refunds', flash, body }), status);

  async function listPage(
    reply: FastifyReply,
    session: WebSession,
    status: RefundStatus | null,
    flash: Flash = null,
    code = 200,
  ) {
    const principal = { merchantId: session.merchantId!, environment: session.environment };
    const list = await listRefunds(db, principal, { limit: REFUND_PAGE_ROWS, ...(status ? { status } : {}) });
    // Who asked is not in the API's shape: read it for the few awaiting a decision.
    const awaiting = list.data.filter((r) => r.status === 'awaiting_approval');
    const decidable = new Set<string>();
    for (const r of awaiting) if (mayDecideRefund(session, await getRefund(db, principal, r.id))) decidable.add(r.id);
    return show(reply, session, refundsListView(session, list.data, decidable, status, list.has_more), flash, code);
  }

  app.get<{ Querystring: { status?: string } }>(
    '/dashboard/refunds',
    { schema: { hide: true, ...dashboardSchemas.refunds } },
    async (request, reply) => listPage(reply, sessionOf(request), statusFilter(request.query.status)),
  );

  postOnObject(
    app,
    '/dashboard/refunds/:id/decision',
    dashboardSchemas.refundDecision,
    async (request, reply, session) => {
      const codeNeeded = session.secondFactorEnrolled && session.role === 'approver';
      const decided = await approverDecision(db, request, reply, codeNeeded);
      if ('refusal' in decided)
        return listPage(reply, session, 'awaiting_approval', decided.refusal.flash, decided.refusal.status);
      const { decision } = decided;
      try {
        // Only a refund of the dashboard's environment (another is not found here).
        await getRefund(db, { merchantId: session.merchantId!, environment: session.environment }, request.params.id);
        // decideRefund checks the merchant, the approver role and that the approver is not the requester.
        const after = await decideRefund(db, {
          refundId: request.params.id,
          userId: session.userId!,
          decision,
          reason: formValue(request, 'reason').trim() || undefined,
        });
        return listPage(reply, session, null, {
          message: `Refund ${after.id} ${decision === 'approve' ? 'approved' : 'rejected'}: it is ${after.status.replace(/_/g, ' ')}.`,
        });
      } catch (error) {
        const { flash, status } = formRefusal(error);
        return listPage(reply, session, 'awaiting_approval', flash, status);
      }
    },
  );
}
