// The operator console's Live payouts: search, filters, paging and CSV (console-list.ts); reconciliation of a
// paid payout (matched or exception; never offered on a returned one), and the return of a paid payout: the
// bank's return reference, a reason and a confirmation, filed for a second operator under Approvals; a hold on a
// payout not yet sent to its provider and its release, each with a reason (payouts/holds.ts: a flag, not a status).
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { csvColumn, type CsvColumn } from '../../lib/csv-columns.ts';
import { PAYOUT_LIST_FILTERS } from '../../ops/approvals-model.ts';
import { canHold, HOLD_REASON_LENGTH_MAX, type PayoutStatus, type ProcessingStep } from '../../payouts/model.ts';
import * as ops from '../../ops/service.ts';
import type { LivePayoutRow } from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, postOnObject, sessionOf, pageSender } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { csrfField, money, statusBadge, when_ } from '../layout.ts';
import { actorOf, refusalOf } from './common.ts';
import * as consoleList from './console-list.ts';
import { fieldColumns } from '../../lib/csv-field-columns.ts';

const LIVE_PAYOUT_CSV: CsvColumn<LivePayoutRow>[] = [
  ...fieldColumns<LivePayoutRow>().textAs({
    reference: 'reference',
    merchant: 'merchant_name',
    environment: 'environment',
  }),
  csvColumn.integer('amount_minor', (p) => p.amount_minor),
  csvColumn.integer('fee_minor', (p) => p.fee_minor),
  ...fieldColumns<LivePayoutRow>().text('status', 'bank_reference', 'return_reference'),
  csvColumn.text('reconciliation', (p) => p.reconciliation_status),
  csvColumn.text('held_by', (p) => (isHeld(p) ? (p.held_by ?? '') : '')),
  csvColumn.text('hold_reason', (p) => (isHeld(p) ? (p.hold_reason ?? '') : '')),
  csvColumn.text('updated_at', (p) => p.updated_at.toISOString()),
];
const show = pageSender('operator', 'payouts');

export async function payoutPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const payoutsPage = consoleList.listPage(show, {
    filterNames: Object.keys(PAYOUT_LIST_FILTERS),
    source: {
      fetch: (list) => (cursor, limit) =>
        ops.livePayouts(db, {
          q: list.q,
          qPattern: consoleList.likePattern(list.q),
          status: consoleList.closedSetValue(PAYOUT_LIST_FILTERS.status, list.filters.status),
          reconciliation: consoleList.closedSetValue(PAYOUT_LIST_FILTERS.reconciliation, list.filters.reconciliation),
          hold: consoleList.closedSetValue(PAYOUT_LIST_FILTERS.hold, list.filters.hold) as 'held' | 'not_held' | null,
          cursor,
          limit,
        }),
      key: (row) => ({ at: row.updated_at, id: row.id }),
    },
    csv: { filename: 'sika-live-payouts.csv', columns: LIVE_PAYOUT_CSV },
    draw: (session, rows, state) => ({ title: 'Live payouts', body: payoutsView(session, rows, state) }),
  });

  app.get('/ops/payouts', { schema: { hide: true, ...opsSchemas.payouts } }, async (request, reply) =>
    payoutsPage(reply, sessionOf(request), request.query as consoleList.QueryString),
  );
  postOnObject(app, '/ops/payouts/:id/reconcile', opsSchemas.reconcile, async (request, reply, session) => {
    const result = formValue(request, 'result');
    if (result !== 'matched' && result !== 'exception') {
      const flash = { message: 'Choose matched or exception.', error: true };
      return payoutsPage(reply, session, {}, { flash, status: 400 });
    }
    const payout = await ops.reconcile(db, actorOf(session), request.params.id, result);
    const message = `Payout ${payout.reference} is ${payout.reconciliation_status}.`;
    return payoutsPage(reply, session, {}, { flash: { message } });
  });
  postOnObject(app, '/ops/payouts/:id/return', opsSchemas.payoutReturn, async (request, reply, session) => {
    try {
      await ops.requestPayoutReturn(db, actorOf(session), request.params.id, {
        returnReference: formValue(request, 'return_reference'),
        reason: formValue(request, 'reason'),
        confirmed: formValue(request, 'confirm') === 'yes',
      });
    } catch (error) {
      return payoutsPage(reply, session, {}, refusalOf(error, ['INVALID_ARGUMENT', 'APPROVAL_PENDING']));
    }
    const message =
      'The return is filed for a second operator: the money goes back to the balance once another operator approves it under Approvals.';
    return payoutsPage(reply, session, {}, { flash: { message } });
  });
  // Hold and release apply at once (no second operator): a hold only stops a payout before its transfer leaves.
  for (const [action, schema] of [
    ['hold', opsSchemas.payoutHold],
    ['release', opsSchemas.payoutRelease],
  ] as const) {
    postOnObject(app, `/ops/payouts/:id/${action}`, schema, async (request, reply, session) => {
      let payout: Awaited<ReturnType<typeof ops.holdPayout>>;
      try {
        payout = await (action === 'hold' ? ops.holdPayout : ops.releasePayout)(
          db,
          actorOf(session),
          request.params.id,
          formValue(request, 'reason'),
        );
      } catch (error) {
        const refusal = refusalOf(error, ['INVALID_ARGUMENT', 'PAYOUT_NOT_HOLDABLE', 'PAYOUT_NOT_HELD']);
        return payoutsPage(reply, session, {}, refusal);
      }
      const message =
        action === 'hold'
          ? `Payout ${payout.reference} is held: it is not sent until an operator releases it (the merchant can still cancel it).`
          : `Payout ${payout.reference} is released: it goes on at the worker's next pass.`;
      return payoutsPage(reply, session, { q: payout.reference }, { flash: { message } });
    });
  }
}

/** Held by an operator and still open (a cancelled payout keeps its hold's record but nothing is left to hold). */
const isHeld = (p: LivePayoutRow) => p.held_at !== null && (p.status === 'requested' || p.status === 'processing');

export function payoutsView(
  session: WebSession,
  rows: readonly LivePayoutRow[],
  list: consoleList.ListPageState,
): Html {
  const select = consoleList.closedSetFilter(PAYOUT_LIST_FILTERS, list);
  const holdForms = (p: LivePayoutRow): Html => {
    if (isHeld(p)) {
      return html`<p class="muted" style="margin:0">Held by ${p.held_by} on ${when_(p.held_at)}: ${p.hold_reason}</p>
<details style="margin-top:.3rem"><summary>Release</summary><form method="post" action="/ops/payouts/${p.id}/release">${csrfField(session)}
<label for="rel-${p.id}">Reason to release</label><textarea id="rel-${p.id}" name="reason" rows="2" maxlength="${HOLD_REASON_LENGTH_MAX}" required></textarea>
<button class="secondary" aria-label="Release payout ${p.reference}">Release</button></form></details>`;
    }
    if (p.environment !== 'live' || !canHold(p.status as PayoutStatus, p.processing_step as ProcessingStep | null))
      return html``;
    return html`<details style="margin-top:.3rem"><summary>Hold</summary><form method="post" action="/ops/payouts/${p.id}/hold">${csrfField(session)}
<label for="hold-${p.id}">Reason to hold</label><textarea id="hold-${p.id}" name="reason" rows="2" maxlength="${HOLD_REASON_LENGTH_MAX}" required></textarea>
<button class="danger" aria-label="Hold payout ${p.reference}">Hold</button></form></details>`;
  };
  const actions = (p: LivePayoutRow): Html => {
    if (p.pending_approval_id)
      return html`<a href="/ops/approvals#req-${p.pending_approval_id}">Return waiting for a second operator</a>`;
    return html`${p.reconciliation_status === 'unreconciled' && p.status === 'paid' ? html`<form method="post" action="/ops/payouts/${p.id}/reconcile" class="inline">${csrfField(session)}<button name="result" value="matched" aria-label="Matched: ${p.reference}">Matched</button> <button name="result" value="exception" class="danger" aria-label="Exception: ${p.reference}">Exception</button></form>` : ''}
${
  p.status === 'paid'
    ? html`<details style="margin-top:.3rem"><summary>Record return</summary><form method="post" action="/ops/payouts/${p.id}/return">${csrfField(session)}
<label for="ret-${p.id}">Bank's return reference</label><input id="ret-${p.id}" name="return_reference" required maxlength="40" aria-describedby="ret-help-${p.id}"><span id="ret-help-${p.id}" class="muted">4 to 40 letters, digits, - / .</span>
<label for="why-${p.id}">Reason</label><textarea id="why-${p.id}" name="reason" rows="2" maxlength="500" required></textarea>
<p><label><input type="checkbox" name="confirm" value="yes" style="width:auto" required> The bank statement shows ${money(p.amount_minor)} coming back</label></p>
<button class="secondary">File the return for a second operator</button></form></details>`
    : ''
}${holdForms(p)}`;
  };
  return html`<h1>Live payouts</h1>
${consoleList.listToolbar('/ops/payouts', list, { searchLabel: 'Search payouts', placeholder: 'Reference, bank reference or merchant', filters: html`${select('status', 'Status')}${select('reconciliation', 'Reconciliation')}${select('hold', 'Hold')}` })}
<div class="table-wrap"><table><thead><tr><th>Reference</th><th>Merchant</th><th>Environment</th><th>Amount</th><th>Status</th><th>Bank reference</th><th>Reconciliation</th><th><span class="muted">Actions</span></th></tr></thead><tbody>
${rows.map((p) => html`<tr><td class="mono">${p.reference}</td><td>${p.merchant_name}</td><td>${statusBadge(p.environment)}</td><td>${money(p.amount_minor)}<br><span class="muted">fee ${money(p.fee_minor)}</span></td><td>${statusBadge(p.status)}${isHeld(p) ? html` <span class="badge bad">Held</span>` : ''}${p.return_reference ? html`<br><span class="muted mono">${p.return_reference}</span>` : ''}</td><td class="mono">${p.bank_reference}</td><td>${statusBadge(p.reconciliation_status)}</td><td>${actions(p)}</td></tr>`)}
${rows.length === 0 ? html`<tr><td colspan="8" class="muted">No Live payouts${list.q || Object.keys(list.filters).length > 0 ? ' match this search' : ''}.</td></tr>` : ''}
</tbody></table></div>
${consoleList.pagerNav('/ops/payouts', list)}`;
}
