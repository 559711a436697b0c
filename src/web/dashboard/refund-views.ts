// The dashboard's refund page parts: a session's payment, its refunds and the Refund form (on the session
// page), and the Refunds page with the approver's decision on refunds awaiting approval.
import { randomBytes } from 'node:crypto';
import type { sessionRefundState } from '../../refunds/session-refunds.ts';
import type { SessionRow } from '../../checkout/model.ts';
import { REFUND_REASON_LENGTH_MAX, REFUND_STATUSES, type RefundRow } from '../../refunds/model.ts';
import { REFUND_SEARCH_LENGTH_MAX, type RefundsQuery } from '../../refunds/refund-list.ts';
import type { WebSession } from '../auth.ts';
import { html, raw, type Html } from '../html.ts';
import { csrfField, money, statusBadge, when_ } from '../layout.ts';
import { filterSelect, listHref } from '../ops/console-list.ts';
import { cardLabel } from '../../lib/card-label.ts';
import { canRequest } from './payouts/views.ts';

/** Roles that may refund a payment: those that may create payouts (money leaves the balance either way). */
export const canRefund = canRequest;

/** Whether this user decides refunds awaiting approval (four eyes: an approver, not the one who asked). */
export const mayDecideRefund = (session: WebSession, refund: Pick<RefundRow, 'status' | 'requested_by_user_id'>) =>
  refund.status === 'awaiting_approval' &&
  session.role === 'approver' &&
  refund.requested_by_user_id !== session.userId;

/** "123.45" for 12345 pesewas: the amount field's text (integer arithmetic, no float). */
export const cedisText = (minor: number) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;

const METHOD_LABELS: Record<string, string> = {
  test: 'Test (at once)',
  provider: 'the provider that took the payment',
  operator: "Sika's operators (a transfer)",
};
const methodLabel = (route: string, provider: string | null) =>
  route === 'provider' && provider ? `${provider}` : (METHOD_LABELS[route] ?? route);

type RefundState = Awaited<ReturnType<typeof sessionRefundState>>;

/** What refunds of this payment gave back (succeeded): a duplicate payment's automatic refund is its own, not this one's. */
const refundedOf = (
  payment: { id: string },
  refunds: readonly Pick<RefundRow, 'attempt_id' | 'status' | 'amount_minor'>[],
) =>
  refunds
    .filter((r) => r.attempt_id === payment.id && r.status === 'succeeded')
    .reduce((sum, r) => sum + r.amount_minor, 0);

/** The automatic refund of a payment on a payment link that had taken every payment it may (issue 35). */
const isLinkUsedUpRefund = (refund: Pick<RefundRow, 'metadata'>): boolean =>
  (refund.metadata as Record<string, unknown> | null)?.because === 'payment_link_used_up';

/**
 * The automatic refunds of payments that arrived after another had paid the session (issue 31): refunds of an
 * attempt other than the session's first paid one; and of a payment its used-up payment link did not keep
 * (issue 35: the session's only payment, refunded in full).
 */
export const duplicateRefundsOf = <R extends Pick<RefundRow, 'attempt_id' | 'metadata'>>(
  payment: { id: string } | null,
  refunds: readonly R[],
): R[] => (payment ? refunds.filter((r) => r.attempt_id !== payment.id || isLinkUsedUpRefund(r)) : []);

/** The notice a duplicate payment's refund gets on the session page: what arrived, and where its refund stands. */
export function duplicatePaymentNotice(
  refund: Pick<RefundRow, 'id' | 'amount_minor' | 'status' | 'failure_reason' | 'metadata'>,
): Html {
  const arrived = isLinkUsedUpRefund(refund)
    ? `A payment of ${money(refund.amount_minor)} arrived after this checkout's payment link had taken every payment it accepts, so it was not kept.`
    : `A second payment of ${money(refund.amount_minor)} arrived after this checkout was paid.`;
  const outcome =
    refund.status === 'succeeded'
      ? `It was refunded automatically (${refund.id}).`
      : refund.status === 'failed' || refund.status === 'cancelled'
        ? `Its automatic refund (${refund.id}) did not go through${refund.failure_reason ? ` (${refund.failure_reason})` : ''}. Contact Sika support to return it to the payer.`
        : `It is being refunded automatically (${refund.id}).`;
  const label = isLinkUsedUpRefund(refund) ? 'Payment link used up' : 'Second payment';
  return html`<p class="card" role="note" aria-label="${label}">${arrived} ${outcome}</p>`;
}

/** The session page's Payment and Refunds sections, with the Refund form for roles that may move money. */
export function sessionRefundsPart(
  session: WebSession,
  s: SessionRow,
  { payment, refunds, refundableMinor }: RefundState,
): Html {
  if (!payment && refunds.length === 0) return html``;
  const form =
    s.status === 'success' && payment && refundableMinor > 0 && canRefund(session)
      ? html`<form method="post" action="/dashboard/sessions/${s.id}/refunds" class="card" aria-label="Refund">${csrfField(session)}
<h2 style="margin-top:0">Refund</h2>
<p class="muted">Up to ${money(refundableMinor)} can still be refunded. The amount leaves your available balance at once; the fee of the payment is not returned.${session.environment === 'live' ? ' If your account requires approval, an approver must approve it first.' : ''}</p>
<label for="refund-amount">Amount (GHS)</label><input id="refund-amount" name="amount" inputmode="decimal" autocomplete="off" required value="${cedisText(refundableMinor)}">
<label for="refund-reason">Reason</label><input id="refund-reason" name="reason" maxlength="${REFUND_REASON_LENGTH_MAX}" autocomplete="off">
<input type="hidden" name="request_key" value="dash-${randomBytes(12).toString('hex')}">
<p><button type="submit">Refund</button></p></form>`
      : html``;
  return html`${
    payment
      ? html`<h2>Payment</h2><div class="card grid" aria-label="Payment">
<div><div class="muted">Attempt</div><span class="mono">${payment.id}</span></div>
<div><div class="muted">Method</div>${payment.rail}${payment.network ? ` (${payment.network})` : ''} · ${payment.provider}</div>
<div><div class="muted">Provider's reference</div>${payment.provider_transaction_id ? html`<span class="mono">${payment.provider_transaction_id}</span>` : html`<span class="muted">not given</span>`}${payment.provider_reference ? html`<br><span class="muted">ours:</span> <span class="mono">${payment.provider_reference}</span>` : ''}</div>
${cardLabel(payment.card_brand, payment.card_last4) ? html`<div><div class="muted">Card</div>${cardLabel(payment.card_brand, payment.card_last4)}</div>` : ''}
<div class="stat"><div class="label">Charged</div><div class="value">${money(payment.amount_charged_minor)}</div></div>
<div><div class="muted">Fee</div>${money(payment.fee_minor)} <span class="muted">${payment.bearer}</span></div>
<div><div class="muted">Paid</div>${when_(payment.finalized_at)}</div>
<div class="stat"><div class="label">Refunded</div><div class="value">${money(refundedOf(payment, refunds))}</div></div></div>`
      : ''
  }
<h2>Refunds</h2><div class="table-wrap"><table aria-label="Refunds" class="stack"><thead><tr><th>Refund</th><th class="num">Amount</th><th>Status</th><th>Method</th><th>Reason</th><th>Created</th></tr></thead><tbody>
${refunds.map(
  (r) =>
    html`<tr><td class="mono id" data-label="Refund">${r.id}</td><td class="num" data-label="Amount">${money(r.amount_minor)}</td><td data-label="Status"><span>${statusBadge(r.status)}${r.failure_reason ? html`<br><span class="muted">${r.failure_reason}</span>` : ''}${r.status === 'awaiting_approval' ? html`<br><a href="/dashboard/refunds?status=awaiting_approval">Approvals</a>` : ''}</span></td><td data-label="Method">${methodLabel(r.route, r.provider)}</td><td class="wrap" data-label="Reason">${r.reason ?? ''}</td><td class="date" data-label="Created">${when_(r.created_at)}</td></tr>`,
)}
${refunds.length === 0 ? html`<tr><td colspan="6" class="muted">No refunds yet.</td></tr>` : ''}</tbody></table></div>
${form}`;
}

/** The Refunds page's address. */
export const REFUNDS_PATH = '/dashboard/refunds';

/** The query's parameters that the address keeps (empty ones left out by listHref). */
export const refundsQueryParams = (query: RefundsQuery): Record<string, string | undefined> => ({
  q: query.q,
  status: query.status,
  from: query.from,
  to: query.to,
});

function refundsFilterForm(query: RefundsQuery): Html {
  const statuses = REFUND_STATUSES.map((s) => [s, s.replace(/_/g, ' ')] as const);
  return html`<form method="get" action="${REFUNDS_PATH}" class="card row" role="search" aria-label="Search refunds">
<div style="flex:2 1 16rem"><label for="f-q">Search</label><input id="f-q" name="q" type="search" value="${query.q ?? ''}" maxlength="${REFUND_SEARCH_LENGTH_MAX}" placeholder="Refund or session id, amount, invoice…" aria-describedby="f-q-hint"><div id="f-q-hint" class="muted" style="font-size:.8rem">A refund or session id, an amount such as 10.00, or the start of an invoice reference.</div></div>
${filterSelect('status', 'Status', statuses, query.status, 'f-status')}
<div><label for="f-from">From</label><input id="f-from" name="from" type="date" value="${query.from ?? ''}"></div>
<div><label for="f-to">To</label><input id="f-to" name="to" type="date" value="${query.to ?? ''}"></div>
<div><button type="submit">Search</button> <a href="${REFUNDS_PATH}">Clear</a></div></form>`;
}

/** The Refunds page: the search and filters, newest first in pages, the export of the same search, and approve/reject on the ones this user may decide. */
export function refundsListView(
  session: WebSession,
  view: { query: RefundsQuery; rows: readonly RefundRow[]; next: string | null; later: boolean },
  decidable: ReadonlySet<string>,
): Html {
  const { rows: refunds, query } = view;
  const params = refundsQueryParams(query);
  const decision = (r: RefundRow) =>
    decidable.has(r.id)
      ? html`<form method="post" action="/dashboard/refunds/${r.id}/decision" class="row" aria-label="Decide ${r.id}">${csrfField(session)}
${session.secondFactorEnrolled ? html`<div><label for="code-${r.id}">Authenticator code</label><input id="code-${r.id}" name="code" inputmode="numeric" autocomplete="one-time-code"></div>` : ''}
<div><label for="reason-${r.id}">Reason (for a rejection)</label><input id="reason-${r.id}" name="reason" maxlength="${REFUND_REASON_LENGTH_MAX}"></div>
<div><button name="decision" value="approve">Approve</button> <button name="decision" value="reject" class="danger">Reject</button></div></form>`
      : r.status === 'awaiting_approval'
        ? html`<span class="muted">${session.role === 'approver' ? 'You asked for it: another approver decides.' : 'An approver decides.'}</span>`
        : '';
  const filtered = Boolean(query.q || query.status || query.from || query.to);
  return html`<h1>Refunds</h1>
${refundsFilterForm(query)}
<p class="muted">Refund a payment from its page (Payments). Live refunds of accounts that require approval wait here for an approver who did not ask for them.</p>
<p class="row"><a class="button secondary" href="${listHref(REFUNDS_PATH, { ...params, format: 'csv' })}" download>Export CSV</a></p>
<div class="table-wrap"><table aria-label="Refunds" class="stack"><thead><tr><th scope="col">Created</th><th scope="col">Refund</th><th scope="col">Session</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Method</th><th scope="col">Reason</th><th scope="col">Decision</th></tr></thead><tbody>
${refunds.map(
  (r) =>
    html`<tr><td class="date" data-label="Created">${when_(r.created_at)}</td><td class="mono id" data-label="Refund">${r.id}</td><td class="mono id" data-label="Session"><a href="/dashboard/sessions/${r.session_id}">${r.session_id}</a></td><td class="num" data-label="Amount">${money(r.amount_minor)}</td><td data-label="Status"><span>${statusBadge(r.status)}${r.failure_reason ? html`<br><span class="muted">${r.failure_reason}</span>` : ''}</span></td><td data-label="Method">${methodLabel(r.route, r.provider)}</td><td class="wrap" data-label="Reason">${r.reason ?? ''}</td><td data-label="Decision">${decision(r)}</td></tr>`,
)}
${refunds.length === 0 ? html`<tr><td colspan="8" class="muted">${filtered ? 'No refunds match.' : 'No refunds yet.'}</td></tr>` : ''}</tbody></table></div>
${
  view.next || view.later
    ? html`<nav aria-label="Pages" class="row" style="margin-top:.6rem">${view.later ? html`<a class="button secondary" href="${listHref(REFUNDS_PATH, params)}">Newest</a>` : ''}${view.next ? html`<a class="button secondary" href="${listHref(REFUNDS_PATH, { ...params, after: view.next })}">Next page</a>` : ''}</nav>`
    : raw('')
}`;
}
