// Cash at a bank branch on the payer page: the panel, and the deposit slip itself (on the cash screen and
// the printable slip page). Its pending screen is the cash screen (screens.ts), which needs the slip.
import { formatGhs } from '../../../lib/ghana.ts';
import { html, raw, when, type Html } from '../../html.ts';
import type { BankBranches, RailPayerView, SlipView } from '../page-model.ts';
import { formatAccra, kv } from '../page-parts.ts';
import { qrSvg } from '../qr.ts';

export const cashSlipView = {
  panel: (m, _rail, quote) => html`
<p>You will get a deposit slip. Take it with ${formatGhs(quote.total_minor)} in cash to a bank branch before ${formatAccra(m.session.expires_at)}; the teller records your payment.</p>`,
} satisfies RailPayerView;

export function slipArticle(slip: SlipView, banks: BankBranches[], test: boolean): Html {
  return html`<article class="slip" aria-labelledby="slip-title">
<h2 id="slip-title">Cash deposit slip</h2>
${when(test, () => html`<p class="stamp">Test mode: not valid at a bank</p>`)}
<div class="slip-top">${raw(qrSvg(slip.reference, `QR code of the slip reference ${slip.reference}`))}
${kv([
  ['Reference', slip.reference, 'ref big'],
  ['Amount to pay', formatGhs(slip.amount_minor), 'num'],
  ['Pay to', slip.merchant_name],
  ['Invoice', slip.invoice_ref, 'ref'],
  ...(slip.customer_name ? ([['Payer', slip.customer_name]] as [string, string][]) : []),
  ['Valid until', formatAccra(slip.expires_at)],
])}</div>
<p>Give this slip and exactly <strong class="num">${formatGhs(slip.amount_minor)}</strong> in cash to the teller. The teller types in the reference (or scans the code) and records your payment. After the date above the slip is no longer valid.</p>
<h3>Where to pay</h3>
<ul class="banks">${banks.map((b) => html`<li><strong>${b.name}</strong>: ${b.branches.map((br) => br.name).join(', ')}</li>`)}</ul>
</article>`;
}
