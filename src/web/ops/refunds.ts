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
import { formValue, postOnObject, sessionOf, pageSender, type PageOutcome } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import { money } from '../layout.ts';
import { actorOf } from './common.ts';
import * as consoleList from './console-list.ts';
import { refundQueueView, whoFinished } from './refunds-views.ts';
import { fieldColumns } from '../../lib/csv-field-columns.ts';

const FINISHED_CSV: consoleList.ListCsv<FinishedRefundRow> = {
  filename: 'sika-finished-refunds.csv',
  columns: [
    csvColumn.timestamp('finished_at', (r) => r.finished_at),
    ...fieldColumns<FinishedRefundRow>().textAs({
      refund: 'id',
      environment: 'environment',
      status: 'status',
      merchant: 'merchant_name',
      session: 'session_id',
    }),
    csvColumn.ghs('amount_ghs', (r) => r.amount_minor),
    csvColumn.text('finished_by', whoFinished),
    ...fieldColumns<FinishedRefundRow>().text('payer_account', 'transfer_reference', 'failure_reason'),
  ],
};

const show = pageSender('operator', 'refunds');

/** How the refunds page is shown: after a form, or with the GET's list query (`list`). */
type QueuePageOutcome = PageOutcome & { list?: consoleList.ListQuery };

export async function refundQueuePages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;

  const filterNames = Object.keys(FINISHED_REFUND_FILTERS);
  const finishedRefunds: consoleList.ListSource<FinishedRefundRow> = {
    fetch: (list) => (cursor, limit) => finishedRefundsPage(db, { q: list.q, filters: list.filters, cursor, limit }),
    key: (row) => ({ at: row.finished_at, id: row.id }),
  };

  /** The queue, the stuck refunds and a page of the finished ones (`list`: the GET's query, else the first page). */
  async function queuePage(reply: FastifyReply, session: WebSession, outcome: QueuePageOutcome = {}) {
    const list = outcome.list ?? consoleList.readListQuery({}, filterNames);
    const [queue, stuck, finished] = await Promise.all([
      operatorRefundQueue(db),
      stuckRefunds(db),
      consoleList.listRows(list, finishedRefunds),
    ]);
    const body = refundQueueView(session, queue, stuck, { list, ...finished });
    return show(reply, session, 'Refunds', body, outcome.flash, outcome.status);
  }

  app.get('/ops/refunds', { schema: { hide: true, ...opsSchemas.refunds } }, async (request, reply) => {
    const list = consoleList.readListQuery(request.query as consoleList.QueryString, filterNames);
    if (list.csv) return consoleList.sendListCsv(reply, list, finishedRefunds, FINISHED_CSV);
    return queuePage(reply, sessionOf(request), { list });
  });

  /** The queue again under the refusal of a form that left something out (a 400). */
  const incomplete = (reply: FastifyReply, session: WebSession, message: string) =>
    queuePage(reply, session, { flash: { message, error: true }, status: 400 });

  /** Records the operator's outcome of a refund's transfer, then the queue again with what it did (or the refusal). */
  async function settle(reply: FastifyReply, session: WebSession, input: Parameters<typeof settleOperatorRefund>[2]) {
    try {
      const refund = await settleOperatorRefund(db, actorOf(session), input);
      const message =
        input.outcome === 'succeeded'
          ? `Refund ${refund.id} of ${money(refund.amount_minor)} is succeeded: paid to ${input.payerAccount} (${input.transferReference}).`
          : `Refund ${refund.id} is failed; ${money(refund.amount_minor)} is back on the merchant's available balance.`;
      return queuePage(reply, session, { flash: { message } });
    } catch (error) {
      return queuePage(reply, session, formRefusal(error));
    }
  }

  postOnObject(app, '/ops/refunds/:id/complete', opsSchemas.refundComplete, async (request, reply, session) => {
    const payerAccount = formValue(request, 'payer_account').trim();
    const transferReference = formValue(request, 'transfer_reference').trim();
    if (!payerAccount || !transferReference)
      return incomplete(reply, session, "Enter the payer's account and the transfer's reference.");
    return settle(reply, session, {
      refundId: request.params.id,
      outcome: 'succeeded',
      payerAccount,
      transferReference,
    });
  });

  postOnObject(app, '/ops/refunds/:id/fail', opsSchemas.refundFail, async (request, reply, session) => {
    const reason = formValue(request, 'reason').trim();
    if (!reason) return incomplete(reply, session, 'Say why the refund cannot be paid (the merchant sees it).');
    return settle(reply, session, { refundId: request.params.id, outcome: 'failed', reason });
  });
}
