// The operator console's Refunds page (/ops/refunds): the queue of Live refunds that wait for an operator's
// transfer to the payer, recorded as done (payer account and transfer reference: succeeded) or failed with a
// reason (the hold released). settleOperatorRefund audits each outcome.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Actor } from '../../audit/log.ts';
import type { AppDeps } from '../../http/deps.ts';
import { operatorRefundQueue } from '../../ops/refunds.ts';
import { settleOperatorRefund } from '../../refunds/lifecycle.ts';
import type { WebSession } from '../auth.ts';
import { formValue, sendPage, sessionOf } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import { money, page } from '../layout.ts';
import { refundQueueView } from './refunds-views.ts';

type Flash = { message: string; error?: boolean } | null;

const actorOf = (session: WebSession): Actor => ({ type: 'operator', id: session.operatorId!, email: session.email });

export async function refundQueuePages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  async function queuePage(reply: FastifyReply, session: WebSession, flash: Flash = null, status = 200) {
    const body = refundQueueView(session, await operatorRefundQueue(db));
    return sendPage(reply, page({ title: 'Refunds', session, kind: 'operator', active: 'refunds', flash, body }), status);
  }

  app.get('/ops/refunds', { schema: { hide: true, ...opsSchemas.refunds } }, async (request, reply) => queuePage(reply, sessionOf(request)));

  app.post<{ Params: { id: string } }>('/ops/refunds/:id/complete', { schema: { hide: true, ...opsSchemas.refundComplete } }, async (request, reply) => {
    const session = sessionOf(request);
    const payerAccount = formValue(request, 'payer_account').trim();
    const transferReference = formValue(request, 'transfer_reference').trim();
    if (!payerAccount || !transferReference) return queuePage(reply, session, { message: "Enter the payer's account and the transfer's reference.", error: true }, 400);
    try {
      const refund = await settleOperatorRefund(db, actorOf(session), { refundId: request.params.id, outcome: 'succeeded', payerAccount, transferReference });
      return queuePage(reply, session, { message: `Refund ${refund.id} of ${money(refund.amount_minor)} is succeeded: paid to ${payerAccount} (${transferReference}).` });
    } catch (error) {
      const { flash, status } = formRefusal(error);
      return queuePage(reply, session, flash, status);
    }
  });

  app.post<{ Params: { id: string } }>('/ops/refunds/:id/fail', { schema: { hide: true, ...opsSchemas.refundFail } }, async (request, reply) => {
    const session = sessionOf(request);
    const reason = formValue(request, 'reason').trim();
    if (!reason) return queuePage(reply, session, { message: 'Say why the refund cannot be paid (the merchant sees it).', error: true }, 400);
    try {
      const refund = await settleOperatorRefund(db, actorOf(session), { refundId: request.params.id, outcome: 'failed', reason });
      return queuePage(reply, session, { message: `Refund ${refund.id} is failed; ${money(refund.amount_minor)} is back on the merchant's available balance.` });
    } catch (error) {
      const { flash, status } = formRefusal(error);
      return queuePage(reply, session, flash, status);
    }
  });
}
