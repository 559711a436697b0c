// The operator console's teller desk: find a cash slip by its reference and record the cash received at a branch.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import { parseCedis } from '../../lib/ghana.ts';
import { formRefusal } from '../error-pages.ts';
import * as ops from '../../ops/service.ts';
import type { TellerSlip } from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, sessionOf, pageSender, type PageOutcome } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { csrfField, money, statusBadge, when_ } from '../layout.ts';
import { actorOf, environmentBadge } from './common.ts';

const show = pageSender('operator', 'teller');

export async function tellerPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  // ---- teller desk ----
  async function tellerPage(reply: FastifyReply, session: WebSession, reference: string, outcome: PageOutcome = {}) {
    const body = tellerView(session, reference, await ops.tellerSlip(db, reference));
    return show(reply, session, 'Teller', body, outcome.flash, outcome.status);
  }

  app.get<{ Querystring: { reference?: string } }>(
    '/ops/teller',
    { schema: { hide: true, ...opsSchemas.teller } },
    async (request, reply) => tellerPage(reply, sessionOf(request), (request.query.reference ?? '').slice(0, 40)),
  );

  app.post('/ops/teller/record', { schema: { hide: true, ...opsSchemas.tellerRecord } }, async (request, reply) => {
    const session = sessionOf(request);
    const reference = formValue(request, 'reference').slice(0, 40);
    const amountMinor = parseCedis(formValue(request, 'amount'));
    if (!amountMinor)
      return tellerPage(reply, session, reference, {
        flash: {
          message:
            'Enter the cash received in GHS, e.g. 502.00 or 1,220.00 (commas only between groups of three digits).',
          error: true,
        },
        status: 400,
      });
    try {
      const applied = await ops.tellerRecordDeposit(db, actorOf(session), deps.config.checkoutUrlHost, {
        reference,
        branchId: formValue(request, 'branch_id'),
        amountMinor,
      });
      const message = `Deposit recorded: ${money(amountMinor)}. The payment is ${applied.attempt.status} and the checkout is ${applied.session.status}.`;
      return tellerPage(reply, session, reference, { flash: { message } });
    } catch (error) {
      return tellerPage(reply, session, reference, formRefusal(error));
    }
  });
}

export const tellerView = (
  session: WebSession,
  reference: string,
  { view, refusal, branches }: TellerSlip,
): Html => html`<h1>Teller desk</h1>
<form method="get" action="/ops/teller" class="card row"><div><label for="slip-reference">Slip reference</label><input id="slip-reference" name="reference" value="${reference}" placeholder="SK-XXXX-XXXX" autocomplete="off" required></div><div><button type="submit">Find slip</button></div></form>
${reference && !view ? html`<div class="card" role="alert"><strong>No slip with reference ${reference}.</strong> Check the reference on the payer's slip.</div>` : ''}
${
  view
    ? html`<section class="card" aria-label="Slip ${view.reference}"><h2 style="margin-top:0">Slip ${view.reference} ${environmentBadge(view.environment)} ${statusBadge(view.status)}</h2>
  ${refusal ? html`<p role="alert"><strong>${refusal}</strong></p>` : html`<p><strong>Amount to collect: ${money(view.amount_minor)}</strong></p>`}
  <p>Merchant: ${view.merchant_name} · Invoice ${view.invoice_ref}${view.customer_name ? ` · Payer ${view.customer_name}` : ''}<br>${refusal ? '' : html`Expires ${when_(new Date(view.expires_at))}`}</p>
  ${
    view.can_record
      ? html`<form method="post" action="/ops/teller/record">${csrfField(session)}<input type="hidden" name="reference" value="${view.reference}">
    <label for="branch">Branch</label><select id="branch" name="branch_id" required>${branches.map((b) => html`<option value="${b.id}">${b.label}</option>`)}</select>
    <label for="amount">Cash received (GHS)</label><input id="amount" name="amount" inputmode="decimal" required placeholder="${money(view.amount_minor).replace('GHS ', '')}">
    <p><button type="submit">Record deposit</button></p></form>`
      : refusal
        ? ''
        : html`<p role="alert"><strong>Do not take cash for this slip:</strong> it is ${view.status}.</p>`
  }
</section>`
    : ''
}`;
