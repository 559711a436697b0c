// The operator console's Refunds page body: the queue of Live refunds of cash and bank transfer payments,
// each with the form to record the transfer to the payer or to fail it with a reason.
import { OPERATOR_FAIL_REASON_LENGTH_MAX, PAYER_ACCOUNT_LENGTH_MAX, TRANSFER_REFERENCE_LENGTH_MAX, type QueuedRefund } from '../../ops/refunds.ts';
import type { WebSession } from '../auth.ts';
import { html, type Html } from '../html.ts';
import { csrfField, money, when_ } from '../layout.ts';

const RAIL_LABELS: Record<string, string> = { cash: 'Cash (branch deposit)', bank_transfer: 'Bank transfer' };

function queuedRefund(session: WebSession, { refund, payment }: QueuedRefund): Html {
  const id = refund.id;
  return html`<section class="card" aria-label="Refund ${id}"><h2 style="margin-top:0">${money(refund.amount_minor)} to the payer of <span class="mono">${payment.payment_reference}</span></h2>
<div class="grid">
<div><div class="muted">Merchant</div><a href="/ops/merchants/${refund.merchant_id}">${payment.merchant_name}</a></div>
<div><div class="muted">Session</div><span class="mono">${refund.session_id}</span></div>
<div><div class="muted">Attempt</div><span class="mono">${refund.attempt_id}</span></div>
<div><div class="muted">Rail</div>${RAIL_LABELS[payment.rail] ?? payment.rail}</div>
<div><div class="muted">Amount · payment</div>${money(refund.amount_minor)} of ${money(payment.amount_charged_minor)}</div>
<div><div class="muted">Created</div>${when_(refund.created_at)}</div>
${refund.reason ? html`<div><div class="muted">Merchant's reason</div>${refund.reason}</div>` : ''}
<div><div class="muted">Refund</div><span class="mono">${id}</span></div></div>
<div class="grid" style="margin-top:.6rem">
<form method="post" action="/ops/refunds/${id}/complete" aria-label="Record the transfer of ${id}">${csrfField(session)}
<label for="account-${id}">Payer's account (bank and number, or wallet)</label><input id="account-${id}" name="payer_account" maxlength="${PAYER_ACCOUNT_LENGTH_MAX}" required autocomplete="off">
<label for="transfer-${id}">Transfer reference</label><input id="transfer-${id}" name="transfer_reference" maxlength="${TRANSFER_REFERENCE_LENGTH_MAX}" required autocomplete="off">
<p><button type="submit">Record transfer</button></p></form>
<form method="post" action="/ops/refunds/${id}/fail" aria-label="Fail ${id}">${csrfField(session)}
<label for="fail-${id}">Why it cannot be paid</label><input id="fail-${id}" name="reason" maxlength="${OPERATOR_FAIL_REASON_LENGTH_MAX}" required autocomplete="off">
<p><button type="submit" class="danger">Fail refund</button></p></form></div></section>`;
}

export const refundQueueView = (session: WebSession, queue: readonly QueuedRefund[]): Html => html`<h1>Refunds</h1>
<p class="muted">Live refunds of cash and bank transfer payments: Sika does not know the payer's account, so an operator transfers the amount and records where it went. Failing one releases the amount back to the merchant's balance. Oldest first.</p>
${queue.map((q) => queuedRefund(session, q))}
${queue.length === 0 ? html`<p class="card muted">No refunds waiting for a transfer.</p>` : ''}`;
