// Dashboard: the merchant's refunds in the current environment (issue 36: a search box, status and date filters as
// the address, keyset pages, the CSV of exactly what is shown) and the approver's decision on refunds awaiting
// approval (four eyes, as for payouts: an approver who did not ask decides; with a second factor, an approval
// needs a fresh code). Refunds are asked for on a session's page (checkout.ts).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { sendCsv } from '../../http/csv.ts';
import { accraDay } from '../../lib/accra-calendar.ts';
import { REFUND_CSV_COLUMNS } from '../../refunds/exports.ts';
import { decideRefund } from '../../refunds/lifecycle.ts';
import {
  cleanRefundFragment,
  ownsRefund,
  refundsExportRows,
  refundsFilter,
  refundsPage,
  type RefundsQuery,
} from '../../refunds/refund-list.ts';
import { getRefund } from '../../refunds/queries.ts';
import type { WebSession } from '../auth.ts';
import { approverDecision, formValue, pageSender, postOnObject, sessionOf, type PageOutcome } from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import { html } from '../html.ts';
import { mayDecideRefund, REFUNDS_PATH, refundsListView } from './refund-views.ts';

/** The Refunds page's query string (console-schemas.ts `refunds`). */
type RefundsPageQuery = RefundsQuery & { after?: string; format?: string };

export async function refundPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = pageSender('merchant', 'refunds');

  async function listPage(
    reply: FastifyReply,
    session: WebSession,
    given: RefundsPageQuery,
    outcome: PageOutcome = {},
  ): Promise<FastifyReply> {
    const owner = { merchantId: session.merchantId!, environment: session.environment };
    const query: RefundsQuery = { ...given, q: cleanRefundFragment(given.q) ?? undefined };
    const after = given.after || null;
    // Another merchant's (or environment's) refund as the page's position is not found, as anywhere in the dashboard.
    if (after && !(await ownsRefund(db, owner.merchantId, owner.environment, after)))
      return show(
        reply,
        session,
        'Not found',
        html`<h1>Refund not found</h1><p><a href="${REFUNDS_PATH}">All refunds</a></p>`,
        null,
        404,
      );
    const filter = refundsFilter(owner, query);
    if (given.format === 'csv')
      return sendCsv(reply, {
        filename: `refunds-${session.environment}-${accraDay(new Date())}.csv`,
        columns: REFUND_CSV_COLUMNS,
        rows: refundsExportRows(db, filter),
      });
    const { rows, next } = await refundsPage(db, filter, after);
    const decidable = new Set(rows.filter((r) => mayDecideRefund(session, r)).map((r) => r.id));
    const body = refundsListView(session, { query, rows, next, later: after !== null }, decidable);
    return show(reply, session, 'Refunds', body, outcome.flash, outcome.status);
  }

  app.get<{ Querystring: RefundsPageQuery }>(
    REFUNDS_PATH,
    { schema: { hide: true, ...dashboardSchemas.refunds } },
    async (request, reply) => listPage(reply, sessionOf(request), request.query ?? {}),
  );

  postOnObject(
    app,
    '/dashboard/refunds/:id/decision',
    dashboardSchemas.refundDecision,
    async (request, reply, session) => {
      const awaiting: RefundsPageQuery = { status: 'awaiting_approval' };
      const codeNeeded = session.secondFactorEnrolled && session.role === 'approver';
      const decided = await approverDecision(db, request, reply, codeNeeded);
      if ('refusal' in decided) return listPage(reply, session, awaiting, decided.refusal);
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
        return listPage(reply, session, {}, { flash: { message } });
      } catch (error) {
        return listPage(reply, session, awaiting, formRefusal(error));
      }
    },
  );
}
