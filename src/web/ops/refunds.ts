// The operator console's Refunds page (/ops/refunds): the queue of Live refunds that wait for an operator's
// transfer to the payer, recorded as done (payer account and transfer reference: succeeded) or failed with a
// reason (the hold released), each with the payer's contact and method details; the Live provider refunds
// stuck pending; and the history of finished refunds (search, filters, pages and CSV through console-list.ts).
// settleOperatorRefund audits each outcome.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { csvColumn } from '../../lib/csv-columns.ts';
import {
  FINISHED_REFUND_FILTERS,
  finishedRefundsPage,
  operatorRefundQueue,
  stuckRefunds,
  type FinishedRefundRow,
} from '../../ops/refunds.ts';
import { settleOperatorRefund } from '../../refunds/lifecycle.ts';
import type { WebSession } from '../auth.ts';
import { formValue, postOnObject, sessionOf, pageSender } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import { money } from '../layout.ts';
import { actorOf, type Flash } from './common.ts';
import { allRowsOf, pageOf, readListQuery, sendConsoleCsv, type ConsoleCursor } from './console-list.ts';
import { refundQueueView, whoFinished } from './refunds-views.ts';

const keyOf = (row: FinishedRefundRow) => ({ at: row.finished_at, id: row.id });

const FINISHED_CSV = [
  csvColumn.timestamp<FinishedRefundRow>('finished_at', (r) => r.finished_at),
  csvColumn.text<FinishedRefundRow>('refund', (r) => r.id),
  csvColumn.text<FinishedRefundRow>('environment', (r) => r.environment),
  csvColumn.text<FinishedRefundRow>('status', (r) => r.status),
  csvColumn.text<FinishedRefundRow>('merchant', (r) => r.merchant_name),
  csvColumn.text<FinishedRefundRow>('session', (r) => r.session_id),
  csvColumn.ghs<FinishedRefundRow>('amount_ghs', (r) => r.amount_minor),
  csvColumn.text<FinishedRefundRow>('finished_by', (r) => whoFinished(r)),
  csvColumn.text<FinishedRefundRow>('payer_account', (r) => r.payer_account),
  csvColumn.text<FinishedRefundRow>('transfer_reference', (r) => r.transfer_reference),
  csvColumn.text<FinishedRefundRow>('failure_reason', (r) => r.failure_reason),
];

const show = pageSender('operator', 'refunds');

export async function refundQueuePages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  const filterNames = Object.keys(FINISHED_REFUND_FILTERS);
  const fetchFinished = (list: ReturnType<typeof readListQuery>) => (cursor: ConsoleCursor | null, limit: number) =>
    finishedRefundsPage(db, { q: list.q, filters: list.filters, cursor, limit });

  async function queuePage(
    reply: FastifyReply,
    session: WebSession,
    flash: Flash = null,
    status = 200,
    query: Record<string, unknown> = {},
  ) {
    const list = readListQuery(query, filterNames);
    const [queue, stuck, finished] = await Promise.all([
      operatorRefundQueue(db),
      stuckRefunds(db),
      pageOf(fetchFinished(list), list.cursor, keyOf),
    ]);
    const body = refundQueueView(session, queue, stuck, { list, ...finished });
    return show(reply, session, 'Refunds', body, flash, status);
  }

  app.get('/ops/refunds', { schema: { hide: true, ...opsSchemas.refunds } }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const list = readListQuery(query, filterNames);
    if (list.csv)
      return sendConsoleCsv(reply, 'sika-finished-refunds.csv', FINISHED_CSV, allRowsOf(fetchFinished(list), keyOf));
    return queuePage(reply, sessionOf(request), null, 200, query);
  });

  /** Records the operator's outcome of a refund's transfer, then the queue again with what it did (or the refusal). */
  async function settle(
    reply: FastifyReply,
    session: WebSession,
    input: Parameters<typeof settleOperatorRefund>[2],
    done: (refund: Awaited<ReturnType<typeof settleOperatorRefund>>) => string,
  ) {
    try {
      const refund = await settleOperatorRefund(db, actorOf(session), input);
      return queuePage(reply, session, { message: done(refund) });
    } catch (error) {
      const { flash, status } = formRefusal(error);
      return queuePage(reply, session, flash, status);
    }
  }

  postOnObject(app, '/ops/refunds/:id/complete', opsSchemas.refundComplete, async (request, reply, session) => {
    const payerAccount = formValue(request, 'payer_account').trim();
    const transferReference = formValue(request, 'transfer_reference').trim();
    if (!payerAccount || !transferReference)
      return queuePage(
        reply,
        session,
        { message: "Enter the payer's account and the transfer's reference.", error: true },
        400,
      );
    return settle(
      reply,
      session,
      { refundId: request.params.id, outcome: 'succeeded', payerAccount, transferReference },
      (refund) =>
        `Refund ${refund.id} of ${money(refund.amount_minor)} is succeeded: paid to ${payerAccount} (${transferReference}).`,
    );
  });

  postOnObject(app, '/ops/refunds/:id/fail', opsSchemas.refundFail, async (request, reply, session) => {
    const reason = formValue(request, 'reason').trim();
    if (!reason)
      return queuePage(
        reply,
        session,
        { message: 'Say why the refund cannot be paid (the merchant sees it).', error: true },
        400,
      );
    return settle(
      reply,
      session,
      { refundId: request.params.id, outcome: 'failed', reason },
      (refund) =>
        `Refund ${refund.id} is failed; ${money(refund.amount_minor)} is back on the merchant's available balance.`,
    );
  });
}
