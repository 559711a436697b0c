// Dashboard: payouts (list, detail, approve/reject, receipt, evidence), recipients, and a new-payout form with a live fee quote.
// Routes parse, authorize and call the payout services; views.ts holds the page bodies.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { listApiKeys, listEndpoints } from '../../../accounts/integrations.ts';
import type { ApiPrincipal } from '../../../lib/environment.ts';
import type { AppDeps } from '../../../http/deps.ts';
import { parseCedis } from '../../../lib/ghana.ts';
import { createPayout } from '../../../payouts/create.ts';
import { addEvidence, receiptPdf } from '../../../payouts/evidence.ts';
import { cancelPayout, decidePayout } from '../../../payouts/lifecycle.ts';
import { PAYOUT_ID_LENGTH_MAX, payoutFeeMinor } from '../../../payouts/model.ts';
import * as queries from '../../../payouts/queries.ts';
import { cleanPayoutFragment, payoutSearchedKinds } from '../../../payouts/payout-search.ts';
import {
  ownsPayout,
  PAYOUT_LIST_CSV_COLUMNS,
  payoutsExportRows,
  payoutsFilter,
  payoutsPage,
  type PayoutsQuery,
} from '../../../payouts/payouts-list.ts';
import { accraDay } from '../../../lib/accra-calendar.ts';
import { getBalance } from '../../../payouts/quotes.ts';
import { createRecipient, deleteRecipient } from '../../../payouts/recipients.ts';
import type { WebSession } from '../../auth.ts';
import {
  approverDecision,
  formValue,
  pageSender,
  postForm,
  postOnObject,
  refusedForm,
  sessionOf,
  type PageOutcome,
} from '../../console.ts';
import { dashboardSchemas } from '../../console-schemas.ts';
import { html } from '../../html.ts';
import { money } from '../../layout.ts';
import { canRequest, detailView, listView, newPayoutView, PAYOUTS_PATH, recipientsView } from './views.ts';
import { formRefusal } from '../../error-pages.ts';
import { sendError } from '../../../http/error-handler.ts';
import { errors } from '../../../lib/errors.ts';
import { BALANCE_TRANSACTION_COLUMNS, exportSettlementTransactions } from '../../../books/exports.ts';
import { listBalanceTransactions, settlementTotals, type BooksOwner } from '../../../books/service.ts';
import { sendCsv } from '../../../http/csv.ts';

/** A settlement's balance transactions shown on its page (all of them are in its CSV file). */
const SETTLEMENT_PAGE_ROWS = 100;
/** The Payouts page's query string (console-schemas.ts `payouts`; page: an address before issue 36, ignored). */
type PayoutsPageQuery = PayoutsQuery & { after?: string; format?: string; page?: string };
/** The dashboard acts through one of the merchant's keys in the current environment (events go to its endpoint). */
async function principalFor(deps: AppDeps, session: WebSession, apiKeyId: string): Promise<ApiPrincipal | null> {
  const keys = await listApiKeys(deps.db, session.merchantId!, session.environment);
  const key = keys.find((k) => k.id === apiKeyId && !k.revoked_at);
  return key
    ? { merchantId: session.merchantId!, environment: session.environment, apiKeyId: key.id, apiKeyPrefix: key.prefix }
    : null;
}

/** How the recipients page is shown after a form; `replacing`: the recipient whose replacement the form prefills. */
type RecipientsPageOutcome = PageOutcome & { replacing?: string | null };

const dashboardPrincipal = (session: WebSession): ApiPrincipal => ({
  merchantId: session.merchantId!,
  environment: session.environment,
  apiKeyId: '',
  apiKeyPrefix: 'dashboard',
});

export async function payoutPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = pageSender('merchant', 'payouts');

  // The Payouts page (issue 36): the search and filters are the address; format=csv exports exactly what they show.
  app.get<{ Querystring: PayoutsPageQuery }>(
    PAYOUTS_PATH,
    { schema: { hide: true, ...dashboardSchemas.payouts } },
    async (request, reply) => {
      const session = sessionOf(request);
      const owner = { merchantId: session.merchantId!, environment: session.environment };
      const given = request.query;
      const query: PayoutsQuery = { ...given, q: cleanPayoutFragment(given.q) || undefined };
      const after = given.after || null;
      // Another merchant's (or environment's) payout as the page's cursor is not found, as anywhere in the dashboard.
      if (after && !(await ownsPayout(db, owner.merchantId, owner.environment, after)))
        return show(
          reply,
          session,
          'Not found',
          html`<h1>Payout not found</h1><p><a href="${PAYOUTS_PATH}">All payouts</a></p>`,
          null,
          404,
        );
      const filter = payoutsFilter(owner, query);
      if (given.format === 'csv')
        return sendCsv(reply, {
          filename: `payouts-${session.environment}-${accraDay(new Date())}.csv`,
          columns: PAYOUT_LIST_CSV_COLUMNS,
          rows: payoutsExportRows(db, filter),
        });
      const { rows, next } = await payoutsPage(db, filter, after);
      return show(
        reply,
        session,
        'Payouts',
        listView(session, {
          query,
          rows,
          next,
          later: after !== null,
          searchedAs: filter.terms ? payoutSearchedKinds(filter.terms) : [],
        }),
      );
    },
  );

  async function detailPage(reply: FastifyReply, session: WebSession, id: string, outcome: PageOutcome = {}) {
    const payout = await queries.findPayout(db, session.merchantId!, session.environment, id);
    if (!payout) return show(reply, session, 'Not found', html`<h1>Payout not found</h1>`, outcome.flash, 404);
    const view = await queries.payoutResponse(db, payout);
    const settlement = payout.type === 'settlement' ? await settlementOf(session, payout.id) : null;
    return show(
      reply,
      session,
      payout.reference,
      detailView(session, payout, view, settlement),
      outcome.flash,
      outcome.status,
    );
  }

  const booksOwner = (session: WebSession): BooksOwner => ({
    merchantId: session.merchantId!,
    environment: session.environment,
  });

  /** What a settlement paid out: its first SETTLEMENT_PAGE_ROWS balance transactions and the totals of all. */
  async function settlementOf(session: WebSession, payoutId: string) {
    const owner = booksOwner(session);
    const [page, totals] = await Promise.all([
      listBalanceTransactions(db, owner, { payout_id: payoutId, limit: SETTLEMENT_PAGE_ROWS }),
      settlementTotals(db, owner, payoutId),
    ]);
    return { transactions: page.data, totals };
  }

  // Every balance transaction a settlement paid out, as a CSV file (a manual payout's: the header line only).
  app.get<{ Params: { id: string } }>(
    '/dashboard/payouts/:id/transactions.csv',
    { schema: { hide: true, ...dashboardSchemas.payoutReceipt } },
    async (request, reply) => {
      const session = sessionOf(request);
      const payout = await queries.findPayout(db, session.merchantId!, session.environment, request.params.id);
      // Another merchant's payout, or the other environment's: the detail page's 404.
      if (!payout) return detailPage(reply, session, request.params.id);
      const file = await exportSettlementTransactions(db, booksOwner(session), payout.id);
      return sendCsv(reply, { ...file, columns: BALANCE_TRANSACTION_COLUMNS });
    },
  );

  app.get<{ Params: { id: string } }>(
    '/dashboard/payouts/:id',
    { schema: { hide: true, ...dashboardSchemas.payout } },
    async (request, reply) => detailPage(reply, sessionOf(request), request.params.id),
  );
  app.get('/dashboard/payouts/new', { schema: { hide: true, ...dashboardSchemas.newPayout } }, async (request, reply) =>
    newPayoutPage(reply, sessionOf(request)),
  );

  /** A form's POST on one of the merchant's payouts in the session's environment; any other id is the detail page's 404. */
  const postOnPayout = (
    path: string,
    schema: FastifySchema,
    handle: (
      request: FastifyRequest<{ Params: { id: string } }>,
      reply: FastifyReply,
      session: WebSession,
      payout: queries.PayoutRow,
    ) => Promise<unknown>,
  ) =>
    postOnObject(app, path, schema, async (request, reply, session) => {
      const payout = await queries.findPayout(db, session.merchantId!, session.environment, request.params.id);
      return payout ? handle(request, reply, session, payout) : detailPage(reply, session, request.params.id);
    });

  postOnPayout(
    '/dashboard/payouts/:id/decision',
    dashboardSchemas.payoutDecision,
    async (request, reply, session, payout) => {
      const decided = await approverDecision(db, request, reply, session.secondFactorEnrolled);
      if ('refusal' in decided) return detailPage(reply, session, payout.id, decided.refusal);
      const { decision } = decided;
      try {
        const after = await decidePayout(db, {
          payoutId: payout.id,
          userId: session.userId!,
          decision,
          reason: formValue(request, 'reason') || undefined,
        });
        return detailPage(reply, session, payout.id, {
          flash: { message: `Payout ${decision === 'approve' ? 'approved' : 'rejected'}: it is ${after.status}.` },
        });
      } catch (error) {
        return detailPage(reply, session, payout.id, formRefusal(error));
      }
    },
  );

  postOnObject(app, '/dashboard/payouts/:id/cancel', dashboardSchemas.payoutCancel, async (request, reply, session) => {
    try {
      await cancelPayout(
        db,
        dashboardPrincipal(session),
        request.params.id,
        `cancelled in the dashboard by ${session.email}`,
      );
      return detailPage(reply, session, request.params.id, {
        flash: { message: 'Payout cancelled; the amount and fee are released.' },
      });
    } catch (error) {
      return detailPage(reply, session, request.params.id, formRefusal(error));
    }
  });

  app.get<{ Params: { id: string } }>(
    '/dashboard/payouts/:id/receipt',
    { schema: { hide: true, ...dashboardSchemas.payoutReceipt } },
    async (request, reply) => {
      const session = sessionOf(request);
      const payout = await queries.findPayout(db, session.merchantId!, session.environment, request.params.id);
      if (!payout) return detailPage(reply, session, request.params.id);
      const pdf = await receiptPdf(db, payout);
      return reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="receipt-${payout.reference}.pdf"`)
        .send(pdf);
    },
  );

  postOnPayout(
    '/dashboard/payouts/:id/evidence',
    dashboardSchemas.payoutEvidence,
    async (request, reply, session, payout) => {
      const file = request.uploads?.[0];
      if (!file) return detailPage(reply, session, payout.id, refusedForm('Choose a file to upload.', 400));
      try {
        await addEvidence(
          db,
          null,
          payout,
          { data: file.data, filename: file.filename || null },
          `user:${session.email}`,
        );
        return detailPage(reply, session, payout.id, { flash: { message: 'Evidence uploaded.' } });
      } catch (error) {
        return detailPage(reply, session, payout.id, formRefusal(error));
      }
    },
  );

  // ---- new payout with a live fee quote ----
  async function newPayoutPage(reply: FastifyReply, session: WebSession, outcome: PageOutcome = {}) {
    const [recipients, keys, endpoints, balance] = await Promise.all([
      queries.listRecipients(db, session.merchantId!, session.environment),
      listApiKeys(db, session.merchantId!, session.environment),
      listEndpoints(db, session.merchantId!, session.environment),
      getBalance(db, dashboardPrincipal(session)),
    ]);
    const body = newPayoutView(session, { recipients, keys, endpoints, balance });
    return show(reply, session, 'New payout', body, outcome.flash, outcome.status);
  }

  app.get<{ Querystring: { recipient_id?: string; amount?: string } }>(
    '/dashboard/payouts/quote',
    { schema: { hide: true, ...dashboardSchemas.payoutQuote } },
    async (request, reply) => {
      const session = sessionOf(request);
      const amountMinor = parseCedis(request.query.amount ?? '');
      const recipient = request.query.recipient_id
        ? await queries.findRecipient(db, session.merchantId!, session.environment, request.query.recipient_id)
        : null;
      // The page's script reads this answer as JSON, errors included: the API's renderer, not the page's.
      // Another merchant's recipient, or the other environment's, is not found (as on every dashboard page).
      if (request.query.recipient_id && !recipient) return sendError(reply, errors.notFound('Recipient'));
      if (!amountMinor || !recipient)
        return sendError(reply, errors.invalidArgument('Choose a recipient and an amount.'));
      const fee = payoutFeeMinor(recipient.account_type, amountMinor);
      return {
        amount_minor: amountMinor,
        fee_minor: fee,
        total_debit_minor: amountMinor + fee,
        text: `Fee ${money(fee)} · total debit ${money(amountMinor + fee)}`,
      };
    },
  );

  postForm(app, '/dashboard/payouts', dashboardSchemas.createPayout, async (request, reply, session) => {
    if (!canRequest(session))
      return newPayoutPage(reply, session, refusedForm('Your role cannot create payouts.', 403));
    const amountMinor = parseCedis(formValue(request, 'amount'));
    const principal = await principalFor(deps, session, formValue(request, 'api_key_id'));
    // A key that is not this merchant's active key in this environment is not found, as every id here.
    if (!principal) return newPayoutPage(reply, session, refusedForm('API key not found.', 404));
    if (!amountMinor) return newPayoutPage(reply, session, refusedForm('Enter an amount in GHS, e.g. 100.00.', 400));
    try {
      const { payout } = await createPayout(
        { db, providers: deps.providers, decisions: deps.payouts.decisions, writer: deps.payouts.writer },
        principal,
        {
          recipient_id: formValue(request, 'recipient_id'),
          amount_minor: amountMinor,
          client_reference: formValue(request, 'client_reference'),
          notes: formValue(request, 'notes') || undefined,
        },
        { requestedByUserId: session.userId! },
      );
      return reply.redirect(`/dashboard/payouts/${payout.id}`, 303);
    } catch (error) {
      return newPayoutPage(reply, session, formRefusal(error));
    }
  });

  // ---- recipients ----
  async function recipientsPage(reply: FastifyReply, session: WebSession, outcome: RecipientsPageOutcome = {}) {
    const [recipients, banks] = await Promise.all([
      queries.listRecipients(db, session.merchantId!, session.environment),
      queries.activeBanks(db),
    ]);
    const body = recipientsView(session, recipients, banks, outcome.replacing ?? null);
    return show(reply, session, 'Recipients', body, outcome.flash, outcome.status);
  }

  app.get<{ Querystring: { replace?: string } }>(
    '/dashboard/recipients',
    { schema: { hide: true, ...dashboardSchemas.recipients } },
    async (request, reply) => {
      const session = sessionOf(request);
      const replacing = request.query.replace?.slice(0, PAYOUT_ID_LENGTH_MAX) || null;
      // The form to replace a recipient names one of this merchant's, in this environment; another is not found.
      if (replacing && !(await queries.findRecipient(db, session.merchantId!, session.environment, replacing))) {
        return show(
          reply,
          session,
          'Not found',
          html`<h1>Recipient not found</h1><p><a href="/dashboard/recipients">Back to recipients</a></p>`,
          null,
          404,
        );
      }
      return recipientsPage(reply, session, { replacing });
    },
  );

  postForm(app, '/dashboard/recipients', dashboardSchemas.createRecipient, async (request, reply, session) => {
    if (!canRequest(session))
      return recipientsPage(reply, session, refusedForm('Your role cannot add recipients.', 403));
    const type = formValue(request, 'account_type') === 'momo' ? 'momo' : 'bank';
    const input =
      type === 'bank'
        ? {
            account_type: 'bank',
            bank_id: formValue(request, 'bank_id'),
            account_number: formValue(request, 'account_number').replace(/\s/g, ''),
            account_name: formValue(request, 'account_name'),
          }
        : {
            account_type: 'momo',
            network: formValue(request, 'network'),
            phone: formValue(request, 'phone'),
            account_name: formValue(request, 'account_name'),
          };
    const previous = formValue(request, 'previous_version_id');
    try {
      const created = await createRecipient(db, dashboardPrincipal(session), {
        ...input,
        ...(previous ? { previous_version_id: previous } : {}),
      });
      return recipientsPage(reply, session, {
        flash: { message: `Recipient ${created.account_name} saved; verification is pending.` },
      });
    } catch (error) {
      return recipientsPage(reply, session, { ...formRefusal(error), replacing: previous || null });
    }
  });

  postOnObject(
    app,
    '/dashboard/recipients/:id/deactivate',
    dashboardSchemas.deactivateRecipient,
    async (request, reply, session) => {
      try {
        await deleteRecipient(db, dashboardPrincipal(session), request.params.id);
        return recipientsPage(reply, session, { flash: { message: 'Recipient deactivated.' } });
      } catch (error) {
        return recipientsPage(reply, session, formRefusal(error));
      }
    },
  );
}
