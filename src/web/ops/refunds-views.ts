// The operator console's Refunds page body: the queue of Live refunds of cash and bank transfer payments,
// each with the payer's contact and method details and the form to record the transfer to the payer or to
// fail it with a reason; the Live provider refunds stuck pending with their age; the finished refunds (who
// and when), searched, filtered and paged. Every row shows its environment.
import { NETWORK_LABELS } from '../../lib/ghana.ts';
import type { MomoNetwork } from '../../lib/ghana.ts';
import {
  OPERATOR_FAIL_REASON_LENGTH_MAX,
  PAYER_ACCOUNT_LENGTH_MAX,
  REFUND_STUCK_AFTER_MS,
  TRANSFER_REFERENCE_LENGTH_MAX,
  type FinishedRefundRow,
  type QueuedRefund,
  type StuckRefund,
} from '../../ops/refunds.ts';
import type { WebSession } from '../auth.ts';
import { html, type Html } from '../html.ts';
import { csrfField, money, statusBadge, when_ } from '../layout.ts';
import { environmentBadge } from './common.ts';
import { filterSelect, listPageState, listToolbar, pagerNav, type ListQuery } from './console-list.ts';

const RAIL_LABELS: Record<string, string> = {
  cash: 'Cash (branch deposit)',
  bank_transfer: 'Bank transfer',
  momo: 'Mobile Money',
  card: 'Card',
};
const HOUR_MS = 60 * 60 * 1000;

/** "3 days 4 hours" / "26 hours": how long a refund has waited. */
export function ageText(ms: number): string {
  const hours = Math.floor(ms / HOUR_MS);
  if (hours < 48) return `${hours} hour${hours === 1 ? '' : 's'}`;
  const days = Math.floor(hours / 24);
  const rest = hours % 24;
  return `${days} days${rest ? ` ${rest} hour${rest === 1 ? '' : 's'}` : ''}`;
}

/** Who finished a refund: the operator who recorded it, else the provider or Test. */
export const whoFinished = (r: Pick<FinishedRefundRow, 'completed_by' | 'route' | 'provider'>): string =>
  r.completed_by ??
  (r.route === 'provider'
    ? `provider (${r.provider ?? 'unknown'})`
    : r.route === 'test'
      ? 'Test simulator'
      : 'operator');

const item = (label: string, value: Html | string): Html => html`<div><div class="muted">${label}</div>${value}</div>`;

/** What the operator pays the refund back to: the payer's contact and the payment method's details (never a card number beyond its last 4). */
function payerDetails({ payment }: QueuedRefund): Html {
  const contact = [payment.customer_name, payment.customer_email].filter((v): v is string => !!v).join(' · ');
  const method = (() => {
    switch (payment.rail) {
      case 'momo':
        return html`${item('Wallet', html`<span class="mono">${payment.phone ?? 'not recorded'}</span>`)}${item('Network', payment.network ? (NETWORK_LABELS[payment.network as MomoNetwork] ?? payment.network) : 'not recorded')}`;
      case 'bank_transfer':
        return payment.statement_narration
          ? html`${item('Sender (statement line)', html`<span class="wrap">${payment.statement_narration}</span>`)}${item('Sender account / bank reference', html`<span class="mono wrap">${payment.statement_reference || 'none on the statement'}</span>`)}${item('Credited', `${payment.statement_bank_code ?? ''} · ${payment.statement_value_date ?? ''}`)}`
          : item('Sender', 'No matched statement line names the sender: look up the credit on the statement.');
      case 'card':
        return item('Card', 'The card number is not stored (not even its last 4): refund it through the provider.');
      default:
        return item('Paid at', 'a bank branch in cash: the payer is reached through the contact above');
    }
  })();
  return html`<h3>Payer</h3><div class="grid">${item('Contact', contact || 'none given')}${payment.account_name ? item('Account name given', payment.account_name) : ''}${method}</div>`;
}

function queuedRefund(session: WebSession, q: QueuedRefund): Html {
  const { refund, payment } = q;
  const id = refund.id;
  return html`<section class="card" aria-label="Refund ${id}"><h2 style="margin-top:0">${money(refund.amount_minor)} to the payer of <span class="mono">${payment.payment_reference}</span> ${environmentBadge(payment.environment)}</h2>
<div class="grid">
${item('Merchant', html`<a href="/ops/merchants/${refund.merchant_id}">${payment.merchant_name}</a>`)}
${item('Session', html`<span class="mono">${refund.session_id}</span>`)}
${item('Attempt', html`<span class="mono">${refund.attempt_id}</span>`)}
${item('Rail', RAIL_LABELS[payment.rail] ?? payment.rail)}
${item('Amount · payment', `${money(refund.amount_minor)} of ${money(payment.amount_charged_minor)}`)}
${item('Created', when_(refund.created_at))}
${refund.reason ? item("Merchant's reason", refund.reason) : ''}
${item('Refund', html`<span class="mono">${id}</span>`)}</div>
${payerDetails(q)}
<div class="grid" style="margin-top:.6rem">
<form method="post" action="/ops/refunds/${id}/complete" aria-label="Record the transfer of ${id}">${csrfField(session)}
<label for="account-${id}">Payer's account (bank and number, or wallet)</label><input id="account-${id}" name="payer_account" maxlength="${PAYER_ACCOUNT_LENGTH_MAX}" required autocomplete="off">
<label for="transfer-${id}">Transfer reference</label><input id="transfer-${id}" name="transfer_reference" maxlength="${TRANSFER_REFERENCE_LENGTH_MAX}" required autocomplete="off">
<p><button type="submit">Record transfer</button></p></form>
<form method="post" action="/ops/refunds/${id}/fail" aria-label="Fail ${id}">${csrfField(session)}
<label for="fail-${id}">Why it cannot be paid</label><input id="fail-${id}" name="reason" maxlength="${OPERATOR_FAIL_REASON_LENGTH_MAX}" required autocomplete="off">
<p><button type="submit" class="danger">Fail refund</button></p></form></div></section>`;
}

const stuckTable = (
  stuck: readonly StuckRefund[],
): Html => html`<h2 id="stuck">Provider refunds stuck pending (${stuck.length})</h2>
<p class="muted">Live refunds sent to a provider and still pending ${ageText(REFUND_STUCK_AFTER_MS)} or more after they were made. Ask the provider about them by their reference.</p>
<div class="table-wrap"><table aria-describedby="stuck"><thead><tr><th>Refund</th><th>Merchant</th><th>Amount</th><th>Provider</th><th>Step</th><th>Waiting</th></tr></thead><tbody>
${stuck.map(
  (
    r,
  ) => html`<tr data-stuck="${r.id}"><td class="mono">${r.id}<br>${environmentBadge(r.environment)} ${statusBadge('pending')}</td><td><a href="/ops/merchants/${r.merchant_id}">${r.merchant_name}</a></td><td class="nowrap">${money(r.amount_minor)}</td>
<td>${r.provider}<br><span class="mono muted">${r.provider_reference}${r.provider_refund_id ? ` · ${r.provider_refund_id}` : ''}</span></td><td>${r.processing_step === 'awaiting_result' ? `sent; ${r.status_checks} status check${r.status_checks === 1 ? '' : 's'}` : 'not sent yet'}</td><td class="nowrap">${ageText(r.age_ms)}<br><span class="muted">since ${when_(r.created_at)}</span></td></tr>`,
)}
${stuck.length === 0 ? html`<tr><td colspan="6" class="muted">No provider refund is stuck.</td></tr>` : ''}
</tbody></table></div>`;

function finishedTable(list: ListQuery, rows: readonly FinishedRefundRow[], next: string | null): Html {
  const state = listPageState(list, next);
  const filters = html`${filterSelect('status', 'Outcome', ['succeeded', 'failed'], list.filters.status)}${filterSelect('environment', 'Environment', ['live', 'test'], list.filters.environment)}`;
  return html`<h2 id="finished">Finished refunds</h2>
${listToolbar('/ops/refunds', state, { searchLabel: 'Search finished refunds', placeholder: 'Refund or session id, merchant, account, reference', filters })}
<div class="table-wrap"><table aria-describedby="finished"><thead><tr><th>Finished</th><th>Refund</th><th>Merchant</th><th>Amount</th><th>Outcome</th><th>By</th><th>Where it went / why not</th></tr></thead><tbody>
${rows.map(
  (
    r,
  ) => html`<tr data-finished="${r.id}"><td class="nowrap">${when_(r.finished_at)}</td><td class="mono">${r.id}<br>${environmentBadge(r.environment)}</td><td><a href="/ops/merchants/${r.merchant_id}">${r.merchant_name}</a></td><td class="nowrap">${money(r.amount_minor)}</td><td>${statusBadge(r.status)}</td><td class="wrap">${whoFinished(r)}</td>
<td class="wrap">${r.status === 'succeeded' ? (r.payer_account ? `${r.payer_account}${r.transfer_reference ? ` (${r.transfer_reference})` : ''}` : 'through the provider') : (r.failure_reason ?? '')}</td></tr>`,
)}
${rows.length === 0 ? html`<tr><td colspan="7" class="muted">No finished refund matches.</td></tr>` : ''}
</tbody></table></div>
${pagerNav('/ops/refunds', state)}`;
}

export const refundQueueView = (
  session: WebSession,
  queue: readonly QueuedRefund[],
  stuck: readonly StuckRefund[],
  finished: { list: ListQuery; rows: FinishedRefundRow[]; next: string | null },
): Html => html`<h1>Refunds</h1>
<h2 id="queue">Waiting for an operator's transfer (${queue.length})</h2>
<p class="muted">Live refunds of cash and bank transfer payments: Sika does not pay these through a provider, so an operator transfers the amount to the payer (their details are below each one) and records where it went. Failing one releases the amount back to the merchant's balance. Oldest first.</p>
${queue.map((q) => queuedRefund(session, q))}
${queue.length === 0 ? html`<p class="card muted">No refunds waiting for a transfer.</p>` : ''}
${stuckTable(stuck)}
${finishedTable(finished.list, finished.rows, finished.next)}`;
