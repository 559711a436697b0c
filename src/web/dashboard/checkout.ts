// Dashboard: payments, the merchant's checkout sessions (search, filters, keyset pages, CSV export; issue 36), session detail (attempts with what the provider knows each by,
// its payment and refunds with the Refund form, a notice of a second payment refunded automatically, invoice
// lines, events), revenue lines.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { requestRefund, sessionRefundState } from '../../refunds/session-refunds.ts';
import { SESSION_CSV_COLUMNS } from '../../checkout/exports.ts';
import { ownsPaymentLink } from '../../checkout/payment-links.ts';
import { sessionIdByReceiptNumber } from '../../checkout/receipts.ts';
import { sessionDetail } from '../../checkout/service.ts';
import {
  ownsSession,
  paymentLinkChoices,
  paymentsExportRows,
  paymentsFilter,
  paymentsPage,
  type PaymentsQuery,
} from '../../checkout/payments-list.ts';
import { cleanFragment, searchedKinds } from '../../checkout/session-search.ts';
import { sendCsv } from '../../http/csv.ts';
import { accraDay } from '../../lib/accra-calendar.ts';
import type { AppDeps } from '../../http/deps.ts';
import { errorHeaders, statusOf } from '../../http/errors.ts';
import { allRevenueLines } from '../../invoicing/service.ts';
import { SikaError } from '../../lib/errors.ts';
import { parseCedis } from '../../lib/ghana.ts';
import type { RefundRow } from '../../refunds/model.ts';
import type { WebSession } from '../auth.ts';
import { formValue, pageSender, postOnObject, refusedForm, sessionOf, type PageOutcome } from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import { html, type Html } from '../html.ts';
import { money, statusBadge, when_ } from '../layout.ts';
import { paymentReferencesCell } from '../payment-references.ts';
import { PAYMENTS_PATH, paymentsBody } from './payments-views.ts';
import { canRefund, duplicatePaymentNotice, duplicateRefundsOf, sessionRefundsPart } from './refund-views.ts';

/** The Payments page's query string (console-schemas.ts `sessions`). */
type PaymentsPageQuery = PaymentsQuery & { after?: string; format?: string; invoice_ref?: string };

/** What happens next to a refund just asked for. */
const refundOutcome = (refund: Pick<RefundRow, 'status' | 'route'>) =>
  refund.status === 'awaiting_approval'
    ? 'it awaits approval by another approver.'
    : refund.status === 'pending'
      ? refund.route === 'operator'
        ? "Sika's operators will transfer it to the payer."
        : 'it is on its way to the payer.'
      : `it ${refund.status}.`;

/** How the session's page is shown; `refundId`: a refund just asked for, named in the flash with what happens next. */
type SessionPageOutcome = PageOutcome & { refundId?: string };

/** A payment on which Sika received another amount than it charged (an operator's decision, issue 30): received, and short or over by how much. */
function receivedNote(a: { amount_charged_minor: number; amount_received_minor: number | null }): Html {
  if (a.amount_received_minor === null) return html``;
  const received = Number(a.amount_received_minor);
  const d = received - a.amount_charged_minor;
  return html`<br><span class="muted">received ${money(received)}: ${d < 0 ? `short by ${money(-d)}` : `over by ${money(d)}`}</span>`;
}

export async function checkoutPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = pageSender('merchant', 'payments');

  // The Payments page (issue 36): the search and filters are the address; format=csv exports exactly what they show.
  app.get<{ Querystring: PaymentsPageQuery }>(
    PAYMENTS_PATH,
    { schema: { hide: true, ...dashboardSchemas.sessions } },
    async (request, reply) => {
      const session = sessionOf(request);
      const owner = { merchantId: session.merchantId!, environment: session.environment };
      const given = request.query;
      // invoice_ref: the search box of the page before issue 36, read as the search.
      const query: PaymentsQuery = { ...given, q: cleanFragment(given.q || given.invoice_ref) || undefined };
      const notFound = (what: string) =>
        show(
          reply,
          session,
          'Not found',
          html`<h1>${what} not found</h1><p><a href="${PAYMENTS_PATH}">All payments</a></p>`,
          null,
          404,
        );
      // Another merchant's (or environment's) link or session in the address is not found, as anywhere in the dashboard.
      if (query.link && !(await ownsPaymentLink(db, owner.merchantId, owner.environment, query.link)))
        return notFound('Payment link');
      const after = given.after || null;
      if (after && !(await ownsSession(db, owner.merchantId, owner.environment, after))) return notFound('Session');
      const filter = paymentsFilter(owner, query);
      const csv = given.format === 'csv';
      if (csv)
        return sendCsv(reply, {
          filename: `payments-${session.environment}-${accraDay(new Date())}.csv`,
          columns: SESSION_CSV_COLUMNS,
          rows: paymentsExportRows(db, filter),
        });
      // A receipt number or session id a payer reads out (issue 35): straight to its session.
      if (!after && filter.terms && (filter.terms.receiptNumber || filter.terms.sessionId)) {
        const id = filter.terms.receiptNumber
          ? await sessionIdByReceiptNumber(db, owner.merchantId, owner.environment, filter.terms.receiptNumber)
          : (await ownsSession(db, owner.merchantId, owner.environment, filter.terms.sessionId!))
            ? filter.terms.sessionId
            : null;
        if (id) return reply.redirect(`${PAYMENTS_PATH}/${encodeURIComponent(id)}`, 303);
      }
      const [{ rows, next }, links] = await Promise.all([
        paymentsPage(db, filter, after),
        paymentLinkChoices(db, owner.merchantId, owner.environment),
      ]);
      return show(
        reply,
        session,
        'Payments',
        paymentsBody({
          query,
          links,
          rows,
          next,
          later: after !== null,
          searchedAs: filter.terms ? searchedKinds(filter.terms) : [],
        }),
      );
    },
  );

  // The page's name since issue 36; links and tests keep /dashboard/sessions.
  app.get('/dashboard/payments', { schema: { hide: true, ...dashboardSchemas.payments } }, async (request, reply) => {
    const search = request.url.indexOf('?');
    return reply.redirect(`${PAYMENTS_PATH}${search < 0 ? '' : request.url.slice(search)}`, 301);
  });

  async function sessionPage(reply: FastifyReply, session: WebSession, id: string, outcome: SessionPageOutcome = {}) {
    const { refundId } = outcome;
    const detail = await sessionDetail(db, session.merchantId!, session.environment, id);
    if (!detail)
      return show(
        reply,
        session,
        'Not found',
        html`<h1>Session not found</h1><p>It may belong to the other environment: use the Test/Live switch.</p>`,
        outcome.flash,
        404,
      );
    const { session: s, attempts, lines, events: eventRows } = detail;
    const refunds = await sessionRefundState(db, s.id, attempts);
    const duplicates = duplicateRefundsOf(refunds.payment, refunds.refunds);
    const asked = refundId ? refunds.refunds.find((r) => r.id === refundId) : undefined;
    // A refund named in the address is one of this session's; another (another merchant's too) is not found.
    if (refundId && !asked)
      return show(
        reply,
        session,
        'Not found',
        html`<h1>Refund not found</h1><p><a href="/dashboard/sessions/${s.id}">Back to the session</a></p>`,
        outcome.flash,
        404,
      );
    let { flash } = outcome;
    if (asked && !flash)
      flash = {
        message: `Refund of ${money(asked.amount_minor)} requested: ${refundOutcome(asked)}`,
        error: asked.status === 'failed',
      };
    return show(
      reply,
      session,
      s.id,
      html`<h1>Session <span class="mono">${s.id}</span> ${statusBadge(s.status)}</h1>
${duplicates.map(duplicatePaymentNotice)}
<div class="card grid"><div class="stat"><div class="label">Amount</div><div class="value">${money(s.amount_minor)}</div></div>
<div><div class="muted">Invoice</div>${s.invoice_ref}</div>${s.receipt_number ? html`<div><div class="muted">Receipt number</div><span class="mono">${s.receipt_number}</span></div>` : ''}<div><div class="muted">Customer</div>${s.customer_name ?? '–'} ${s.customer_email ?? ''}</div>
<div><div class="muted">Created · expires</div>${when_(s.created_at)}<br>${when_(s.expires_at)}</div><div><div class="muted">Finalized</div>${s.finalized_at ? when_(s.finalized_at) : 'not yet'}</div></div>
<h2>Payment attempts</h2><div class="table-wrap"><table class="stack" aria-label="Payment attempts"><thead><tr><th>Attempt</th><th>Rail</th><th class="money">Charged</th><th class="money">Fee</th><th>Status</th><th>Provider status</th><th>References</th><th>Created</th></tr></thead><tbody>
${attempts.map((a) => html`<tr><td class="mono id" data-label="Attempt">${a.id}</td><td data-label="Rail">${a.rail}${a.network ? ` (${a.network})` : ''}</td><td class="money" data-label="Charged"><span>${money(a.amount_charged_minor)}${receivedNote(a)}</span></td><td class="money" data-label="Fee"><span>${money(a.fee_received_minor ?? a.fee_minor)} <span class="muted">${a.bearer}</span></span></td><td data-label="Status">${statusBadge(a.status)}</td><td class="mono" data-label="Provider status">${a.raw_status}</td><td style="min-width:12rem" data-label="References"><span class="wrap">${paymentReferencesCell(a)}</span></td><td class="date" data-label="Created">${when_(a.created_at)}</td></tr>`)}
${attempts.length === 0 ? html`<tr><td colspan="8" class="muted">No attempts yet.</td></tr>` : ''}</tbody></table></div>
${sessionRefundsPart(session, s, refunds)}
<h2>Invoice lines</h2><div class="table-wrap"><table class="stack" aria-label="Invoice lines"><thead><tr><th>Code</th><th>Name</th><th class="money">Amount</th><th>Remitted</th></tr></thead><tbody>
${lines.map((l) => html`<tr><td class="mono" data-label="Code">${l.code}</td><td data-label="Name">${l.name}</td><td class="money" data-label="Amount">${money(l.amount_minor)}</td><td data-label="Remitted">${l.remitted ? 'yes' : 'no'}</td></tr>`)}
${lines.length === 0 ? html`<tr><td colspan="4" class="muted">No invoice lines for ${s.invoice_ref}.</td></tr>` : ''}</tbody></table></div>
<h2>Events</h2><div class="table-wrap"><table class="stack" aria-label="Events"><thead><tr><th>Event</th><th>Type</th><th>Created</th></tr></thead><tbody>
${eventRows.map((e) => html`<tr><td class="mono id" data-label="Event">${e.id}</td><td class="wrap" data-label="Type">${e.type}</td><td class="date" data-label="Created">${when_(e.created_at)}</td></tr>`)}
${eventRows.length === 0 ? html`<tr><td colspan="3" class="muted">No events yet.</td></tr>` : ''}</tbody></table></div>`,
      flash,
      outcome.status,
    );
  }

  app.get<{ Params: { id: string }; Querystring: { refund?: string } }>(
    '/dashboard/sessions/:id',
    { schema: { hide: true, ...dashboardSchemas.session } },
    async (request, reply) =>
      sessionPage(reply, sessionOf(request), request.params.id, { refundId: request.query.refund }),
  );

  // A refund of the session's payment, in the dashboard's environment, asked for by the signed-in user.
  postOnObject(
    app,
    '/dashboard/sessions/:id/refunds',
    dashboardSchemas.refundSession,
    async (request, reply, session) => {
      const refuse = (message: string, status: number) =>
        sessionPage(reply, session, request.params.id, refusedForm(message, status));
      if (!canRefund(session))
        return refuse('Your role cannot refund payments; ask an owner, admin or developer.', 403);
      const amountMinor = parseCedis(formValue(request, 'amount'));
      if (!amountMinor) return refuse('Enter the amount to refund in GHS, e.g. 25.00 (at most 2 decimals).', 400);
      try {
        const refund = await requestRefund(
          db,
          { merchantId: session.merchantId!, environment: session.environment, apiKeyId: null, userId: session.userId },
          {
            session_id: request.params.id,
            amount_minor: amountMinor,
            reason: formValue(request, 'reason').trim() || undefined,
            request_key: formValue(request, 'request_key') || undefined,
          },
          deps.providers,
        );
        // Back to the session's page (a reload must not ask for the refund again), which names the new refund.
        return reply.redirect(
          `/dashboard/sessions/${encodeURIComponent(request.params.id)}?refund=${encodeURIComponent(refund.id)}`,
          303,
        );
      } catch (error) {
        // No provider can take the refund right now: the page says so (with Retry-After), not the 5xx error page.
        if (error instanceof SikaError && error.code === 'PROVIDER_RAIL_UNAVAILABLE') {
          reply.headers(errorHeaders(error));
          return refuse(error.message, statusOf(error));
        }
        return sessionPage(reply, session, request.params.id, formRefusal(error));
      }
    },
  );

  app.get(
    '/dashboard/revenue-lines',
    { schema: { hide: true, ...dashboardSchemas.revenueLines } },
    async (request, reply) => {
      const session = sessionOf(request);
      const lines = await allRevenueLines(db, session.merchantId!, session.environment);
      return show(
        reply,
        session,
        'Revenue lines',
        html`<h1>Revenue lines</h1><p class="muted">Your service codes, synced with POST /api/v1/revenue-lines.</p>
<div class="table-wrap"><table><thead><tr><th>Code</th><th>Name</th><th>Status</th><th>Last synced</th></tr></thead><tbody>
${lines.map((l) => html`<tr><td class="mono">${l.code}</td><td>${l.name}</td><td>${statusBadge(l.active ? 'active' : 'inactive')}</td><td class="date">${when_(l.last_synced_at)}</td></tr>`)}
${lines.length === 0 ? html`<tr><td colspan="4" class="muted">No revenue lines yet.</td></tr>` : ''}</tbody></table></div>`,
      );
    },
  );
}
