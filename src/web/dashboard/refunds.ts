// Dashboard: the merchant's refunds in the current environment (newest first, by status) and the approver's
// decision on refunds awaiting approval (four eyes, as for payouts: an approver who did not ask decides; with a
// second factor, an approval needs a fresh code). Refunds are asked for on a session's page (checkout.ts).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { decideRefund } from '../../refunds/lifecycle.ts';
import { REFUND_STATUSES, type RefundStatus } from '../../refunds/model.ts';
import { getRefund, listRefunds } from '../../refunds/queries.ts';
import type { WebSession } from '../auth.ts';
import { approverDecision, formValue, pageSender, postOnObject, sessionOf, type PageOutcome } from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import { mayDecideRefund, refundsListView } from './refund-views.ts';

/** Refunds on the page (the newest; the status filter finds older ones). */
const REFUND_PAGE_ROWS = 50;

/** Which refunds the page lists: those of one status, or (null) all. */
type RefundFilter = RefundStatus | null;

const statusFilter = (value: string | undefined): RefundFilter =>
  (REFUND_STATUSES as readonly string[]).includes(value ?? '') ? (value as RefundStatus) : null;

export async function refundPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = pageSender('merchant', 'refunds');

  async function listPage(reply: FastifyReply, session: WebSession, filter: RefundFilter, outcome: PageOutcome = {}) {
    const principal = { merchantId: session.merchantId!, environment: session.environment };
    const list = await listRefunds(db, principal, { limit: REFUND_PAGE_ROWS, ...(filter ? { status: filter } : {}) });
    // Who asked is not in the API's shape: read it for the few awaiting a decision.
    const awaiting = list.data.filter((r) => r.status === 'awaiting_approval');
    const decidable = new Set<string>();
    for (const r of awaiting) if (mayDecideRefund(session, await getRefund(db, principal, r.id))) decidable.add(r.id);
    const body = refundsListView(session, list.data, decidable, filter, list.has_more);
    return show(reply, session, 'Refunds', body, outcome.flash, outcome.status);
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
      if ('refusal' in decided) return listPage(reply, session, 'awaiting_approval', decided.refusal);
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
        const message = `Refund ${after.id} ${decision === 'approve' ? 'approved' : 'rejected'}: it is ${after.status.replace(/_/g, ' ')}.`;
        return listPage(reply, session, null, { flash: { message } });
      } catch (error) {
        return listPage(reply, session, 'awaiting_approval', formRefusal(error));
      }
    },
  );
}
