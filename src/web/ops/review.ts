// The operator console's review queue: payment attempts held in manual_review or amount_mismatch, each with
// what it decides on (expected, received, the difference, the statement line or cash deposit behind it, its
// environment), and the decision page: a choice, a required reason and the confirmation that the line was
// checked, filed for a second operator under Approvals (a reject applies at once: no money moves).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { csvColumn, type CsvColumn } from '../../lib/csv-columns.ts';
import { HELD_CHOICE_LABELS, REVIEW_FILTERS, heldMoney, type HeldChoice } from '../../ops/approvals-model.ts';
import * as ops from '../../ops/service.ts';
import type { HeldAttemptDetail } from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, postOnObject, sessionOf, pageSender, type PageOutcome } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, money, statusBadge, when_ } from '../layout.ts';
import { actorOf, refusalOf } from './common.ts';
import * as consoleList from './console-list.ts';
import { fieldColumns } from '../../lib/csv-field-columns.ts';

const differenceOf = (a: HeldAttemptDetail): number | null =>
  a.status === 'manual_review' ? 0 : a.received_minor === null ? null : a.received_minor - a.amount_charged_minor;
const differenceText = (a: HeldAttemptDetail): string => {
  const d = differenceOf(a);
  if (d === null) return 'not recorded';
  if (d === 0) return 'none';
  return d < 0 ? `short by ${money(-d)}` : `over by ${money(d)}`;
};
const receivedText = (a: HeldAttemptDetail): string =>
  a.status === 'manual_review'
    ? `${money(a.amount_charged_minor)} (provider reports paid)`
    : a.received_minor === null
      ? 'not recorded'
      : money(a.received_minor);

/** The statement line or deposit behind an attempt, in words. */
function evidence(a: HeldAttemptDetail): Html {
  if (a.line_id) {
    return html`Statement line ${a.line_number} of ${a.line_bank_code}, ${a.line_value_date}: ${money(a.received_minor ?? 0)}<br><span class="muted wrap">${a.line_narration}${a.line_bank_reference ? ` · ${a.line_bank_reference}` : ''}</span>`;
  }
  if (a.slip_reference)
    return html`Cash slip <span class="mono">${a.slip_reference}</span>${a.slip_branch ? html` at ${a.slip_branch}` : ''}${a.slip_recorded_at ? html`, ${when_(a.slip_recorded_at)}` : ''}`;
  return html`<span class="muted">Provider ${a.provider}, reference <span class="mono">${a.provider_reference || '—'}</span>: ${a.raw_status}</span>`;
}

const REVIEW_CSV: CsvColumn<HeldAttemptDetail>[] = [
  ...fieldColumns<HeldAttemptDetail>().textAs({ attempt: 'id', session: 'session_id', merchant: 'merchant_name' }),
  ...fieldColumns<HeldAttemptDetail>().text('environment', 'rail', 'status'),
  csvColumn.integer('expected_minor', (a) => a.amount_charged_minor),
  csvColumn.integer('received_minor', (a) =>
    a.status === 'manual_review' ? a.amount_charged_minor : a.received_minor,
  ),
  csvColumn.integer('difference_minor', (a) => differenceOf(a)),
  csvColumn.text('statement_line', (a) =>
    a.line_id ? `${a.line_bank_code} ${a.line_value_date} line ${a.line_number}` : '',
  ),
  csvColumn.text('cash_slip', (a) => a.slip_reference),
  csvColumn.text('waiting_approval', (a) => a.pending_approval_id),
  csvColumn.text('held_since', (a) => a.updated_at.toISOString()),
];

/** How a decision page is shown again: a refused form keeps what was typed in it. */
type DecisionOutcome = PageOutcome & { typed?: { choice?: string; reason?: string } };

const envBadge = (environment: string) => statusBadge(environment === 'live' ? 'live' : 'test');

const show = pageSender('operator', 'review');

export async function reviewPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const { checkoutUrlHost } = deps.config;
  const reviewPage = consoleList.listPage(show, {
    filterNames: Object.keys(REVIEW_FILTERS),
    source: {
      fetch: ({ q, filters }) => {
        const environment = consoleList.closedSetValue(REVIEW_FILTERS.environment, filters.environment);
        const status = consoleList.closedSetValue(REVIEW_FILTERS.status, filters.status);
        return (cursor, limit) =>
          ops.heldAttempts(db, { q, qPattern: consoleList.likePattern(q), environment, status, cursor, limit });
      },
      key: (row) => ({ at: row.updated_at, id: row.id }),
    },
    csv: { filename: 'sika-review.csv', columns: REVIEW_CSV },
    draw: (_session, rows, state) => ({ title: 'Review', body: reviewView(rows, state) }),
  });

  /** One held attempt's decision page; after a refused form, with what was `typed` in it. */
  async function decisionPage(reply: FastifyReply, session: WebSession, id: string, outcome: DecisionOutcome = {}) {
    const view = await ops.heldAttemptView(db, id);
    if (!view) {
      const message = `Attempt ${id} is not held for review (decided already, or no such attempt).`;
      return reviewPage(reply, session, {}, outcome.flash ? outcome : { flash: { message, error: true }, status: 404 });
    }
    const body = decisionView(session, view.attempt, view.choices, outcome.typed ?? {});
    return show(reply, session, 'Decide a held payment', body, outcome.flash, outcome.status);
  }

  app.get('/ops/review', { schema: { hide: true, ...opsSchemas.review } }, async (request, reply) =>
    reviewPage(reply, sessionOf(request), request.query as consoleList.QueryString),
  );
  app.get<{ Params: { id: string } }>(
    '/ops/review/:id',
    { schema: { hide: true, ...opsSchemas.reviewAttempt } },
    async (request, reply) => decisionPage(reply, sessionOf(request), request.params.id),
  );
  postOnObject(app, '/ops/review/:id', opsSchemas.reviewDecision, async (request, reply, session) => {
    const choice = formValue(request, 'choice') as HeldChoice;
    const reason = formValue(request, 'reason');
    const typed = { choice, reason };
    const decision = { ...typed, confirmed: formValue(request, 'confirm') === 'yes' };
    try {
      const result = await ops.requestHeldDecision(db, actorOf(session), checkoutUrlHost, request.params.id, decision);
      const message = result.filed
        ? `Filed for a second operator: "${HELD_CHOICE_LABELS[choice]}" on attempt ${request.params.id}. Another operator approves or rejects it under Approvals.`
        : result.message;
      return reviewPage(reply, session, {}, { flash: { message } });
    } catch (error) {
      const refusal = refusalOf(error, ['INVALID_ARGUMENT', 'APPROVAL_PENDING']);
      return decisionPage(reply, session, request.params.id, { ...refusal, typed });
    }
  });
}

export function reviewView(held: readonly HeldAttemptDetail[], list: consoleList.ListPageState): Html {
  const select = consoleList.closedSetFilter(REVIEW_FILTERS, list);
  return html`<h1>Payments held for review</h1>
${consoleList.listToolbar('/ops/review', list, { searchLabel: 'Search attempts', placeholder: 'Attempt, session, payment reference or merchant', filters: html`${select('environment', 'Environment')}${select('status', 'Status')}` })}
<div class="table-wrap"><table><thead><tr><th>Attempt</th><th>Merchant</th><th>Environment</th><th>Expected</th><th>Received</th><th>Difference</th><th>Behind it</th><th>Status</th><th><span class="muted">Decision</span></th></tr></thead><tbody>
${held.map(
  (
    a,
  ) => html`<tr><td class="mono">${a.id}<br><span class="muted">${a.session_id} · ${a.rail}</span></td><td>${a.merchant_name}</td><td>${envBadge(a.environment)}</td><td>${money(a.amount_charged_minor)}</td><td>${receivedText(a)}</td><td>${differenceText(a)}</td><td>${evidence(a)}</td><td>${statusBadge(a.status)}</td>
<td>${a.pending_approval_id ? html`<a href="/ops/approvals#req-${a.pending_approval_id}">Waiting for a second operator</a>` : html`<a class="button secondary" href="/ops/review/${a.id}" aria-label="Decide ${a.id}">Decide</a>`}</td></tr>`,
)}
${held.length === 0 ? html`<tr><td colspan="9" class="muted">Nothing is waiting${list.q || Object.keys(list.filters).length > 0 ? ' that matches this search' : ''}.</td></tr>` : ''}
</tbody></table></div>
${consoleList.pagerNav('/ops/review', list)}`;
}

export function decisionView(
  session: WebSession,
  a: HeldAttemptDetail,
  choices: readonly HeldChoice[],
  typed: { choice?: string; reason?: string } = {},
): Html {
  const received = a.status === 'manual_review' ? a.amount_charged_minor : a.received_minor;
  const outcome = (choice: HeldChoice): string => {
    if (received === null) return 'The attempt fails; no money moves.';
    const m = heldMoney(a, choice, received);
    if (choice === 'reject')
      return (
        'The attempt fails; no money moves.' +
        (a.line_id ? ' The statement line goes back to the unmatched queue.' : '')
      );
    return `The merchant's balance gains ${money(m.netCreditMinor)}${m.refundMinor > 0 ? `; ${money(m.refundMinor)} goes back to the payer through the refunds queue` : ''}; the payment is ${m.outcome === 'paid' ? 'paid' : 'not paid (the checkout can be paid again)'}.`;
  };
  const checked = (choice: HeldChoice) => raw(typed.choice === choice ? ' checked' : '');
  return html`<h1>Decide a held payment</h1>
<div class="card"><h2>What this decides on</h2>
<div class="grid">
<div class="stat"><div class="label">Expected (charged)</div><div class="value">${money(a.amount_charged_minor)}</div></div>
<div class="stat"><div class="label">Received</div><div class="value">${receivedText(a)}</div></div>
<div class="stat"><div class="label">Difference</div><div class="value">${differenceText(a)}</div></div>
<div class="stat"><div class="label">Environment</div><div class="value">${envBadge(a.environment)}</div></div>
</div>
<table class="diff" style="margin-top:.8rem"><tbody>
<tr><th scope="row">Attempt</th><td class="mono">${a.id} (${a.rail}, ${statusBadge(a.status)})</td></tr>
<tr><th scope="row">Checkout</th><td class="mono">${a.session_id}</td></tr>
<tr><th scope="row">Merchant</th><td>${a.merchant_name}</td></tr>
<tr><th scope="row">Fee on the payment</th><td>${money(a.fee_minor)} (${a.bearer === 'payer' ? 'borne by the payer' : 'borne by the merchant'})</td></tr>
<tr><th scope="row">Behind it</th><td>${evidence(a)}</td></tr>
</tbody></table></div>
<form method="post" action="/ops/review/${a.id}" class="card">${csrfField(session)}
<fieldset class="group"><legend>Decision</legend>
${choices.map((c) => html`<div><label><input type="radio" name="choice" value="${c}" style="width:auto" required${checked(c)}> ${HELD_CHOICE_LABELS[c]}</label><p class="muted" style="margin:.1rem 0 .4rem 1.6rem">${outcome(c)}</p></div>`)}
</fieldset>
<label for="reason">Reason (the second operator and the audit log read it)</label><textarea id="reason" name="reason" rows="3" maxlength="500" required>${typed.reason ?? ''}</textarea>
<p><label><input type="checkbox" name="confirm" value="yes" style="width:auto" required> I have checked the statement line, deposit or provider record behind this payment</label></p>
<p class="muted">A decision that moves money waits for a second operator under Approvals; a reject applies now.</p>
<p><button type="submit">Submit decision</button> <a class="button secondary" href="/ops/review">Back to the queue</a></p>
</form>`;
}
