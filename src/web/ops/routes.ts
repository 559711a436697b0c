// The operator console at /ops: merchants and payout controls, the teller desk, held attempts,
// Live payout reconciliation, the refunds waiting for an operator's transfer (refunds.ts), bank statements
// (statements.ts), the daily reconciliation per provider (reconciliation.ts), banks and branches, and the audit log.
// Every action is audited.
// Routes parse and call the ops service; views.ts holds the page bodies.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Actor } from '../../audit/log.ts';
import type { AppDeps } from '../../http/deps.ts';
import { parseCedis } from '../../lib/ghana.ts';
import * as ops from '../../ops/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, registerConsoleAuth, sendPage, sessionOf } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { html, type Html } from '../html.ts';
import { money, page } from '../layout.ts';
import { operatorAccountPages } from './account.ts';
import { reconciliationPages } from './reconciliation.ts';
import { refundQueuePages } from './refunds.ts';
import { statementPages } from './statements.ts';
import { auditView, banksView, merchantsView, merchantView, payoutsView, reviewView, tellerView } from './views.ts';
import { consoleErrorPage, formRefusal, registerErrorPages } from '../error-pages.ts';

const actorOf = (session: WebSession): Actor => ({ type: 'operator', id: session.operatorId!, email: session.email });
const isTeller = (session: WebSession) => session.role === 'teller';
type Flash = { message: string; error?: boolean } | null;

export async function opsRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = (reply: FastifyReply, session: WebSession, active: string, title: string, body: Html, flash: Flash = null, status = 200) =>
    sendPage(reply, page({ title, session, kind: 'operator', active, flash, body }), status);
  registerErrorPages(app, 'ops', consoleErrorPage('operator'));
  await registerConsoleAuth(app, deps, 'operator');

  // Tellers see only the teller desk (and their own account page).
  app.addHook('preHandler', async (request, reply) => {
    const session = request.webSession;
    const path = request.url.split('?')[0]!;
    if (session && isTeller(session) && !path.startsWith('/ops/teller') && !path.startsWith('/ops/account') && path !== '/ops/logout') return reply.redirect('/ops/teller', 303);
  });

  app.get('/ops', { schema: { hide: true, ...opsSchemas.merchants } }, async (request, reply) =>
    show(reply, sessionOf(request), 'merchants', 'Merchants', merchantsView(await ops.merchantsOverview(db))),
  );

  async function merchantPage(reply: FastifyReply, session: WebSession, merchantId: string, flash: Flash = null, status = 200) {
    const controls = await ops.merchantPayoutControls(db, merchantId);
    if (!controls) return show(reply, session, 'merchants', 'Not found', html`<h1>Merchant not found</h1>`, null, 404);
    return show(reply, session, 'merchants', controls.merchant.name, merchantView(session, controls), flash, status);
  }

  app.get<{ Params: { id: string } }>('/ops/merchants/:id', { schema: { hide: true, ...opsSchemas.merchant } }, async (request, reply) => merchantPage(reply, sessionOf(request), request.params.id));

  app.post<{ Params: { id: string } }>('/ops/merchants/:id/payouts', { schema: { hide: true, ...opsSchemas.payoutSettings } }, async (request, reply) => {
    const session = sessionOf(request);
    // An unknown merchant is the merchant page's 404, before anything is written.
    if (!(await ops.merchantPayoutControls(db, request.params.id))) return merchantPage(reply, session, request.params.id);
    const environment = formValue(request, 'environment');
    const limit = parseCedis(formValue(request, 'limit'));
    const daily = parseCedis(formValue(request, 'daily_limit'));
    if ((environment !== 'test' && environment !== 'live') || !limit || !daily) {
      return merchantPage(reply, session, request.params.id, { message: 'Limits must be amounts in GHS above zero.', error: true }, 400);
    }
    await ops.changePayoutSettings(db, actorOf(session), request.params.id, environment, {
      payout_access: formValue(request, 'access') === 'on',
      paused: formValue(request, 'paused') === 'on',
      payout_limit_minor: limit,
      daily_limit_minor: daily,
    });
    return merchantPage(reply, session, request.params.id, { message: `${environment === 'test' ? 'Test' : 'Live'} payout settings saved.` });
  });

  // ---- teller desk ----
  async function tellerPage(reply: FastifyReply, session: WebSession, reference: string, flash: Flash = null, status = 200) {
    return show(reply, session, 'teller', 'Teller', tellerView(session, reference, await ops.tellerSlip(db, reference)), flash, status);
  }

  app.get<{ Querystring: { reference?: string } }>('/ops/teller', { schema: { hide: true, ...opsSchemas.teller } }, async (request, reply) => tellerPage(reply, sessionOf(request), (request.query.reference ?? '').slice(0, 40)));

  app.post('/ops/teller/record', { schema: { hide: true, ...opsSchemas.tellerRecord } }, async (request, reply) => {
    const session = sessionOf(request);
    const reference = formValue(request, 'reference').slice(0, 40);
    const amountMinor = parseCedis(formValue(request, 'amount'));
    if (!amountMinor) return tellerPage(reply, session, reference, { message: 'Enter the cash received in GHS, e.g. 502.00.', error: true }, 400);
    try {
      const applied = await ops.tellerRecordDeposit(db, actorOf(session), deps.config.checkoutUrlHost, { reference, branchId: formValue(request, 'branch_id'), amountMinor });
      return tellerPage(reply, session, reference, { message: `Deposit recorded: ${money(amountMinor)}. The payment is ${applied.attempt.status} and the checkout is ${applied.session.status}.` });
    } catch (error) {
      const { flash, status } = formRefusal(error);
      return tellerPage(reply, session, reference, flash, status);
    }
  });

  // ---- held attempts ----
  async function reviewPage(reply: FastifyReply, session: WebSession, flash: Flash = null, status = 200) {
    return show(reply, session, 'review', 'Review', reviewView(session, await ops.heldAttempts(db)), flash, status);
  }
  app.get('/ops/review', { schema: { hide: true, ...opsSchemas.review } }, async (request, reply) => reviewPage(reply, sessionOf(request)));
  app.post<{ Params: { id: string } }>('/ops/review/:id', { schema: { hide: true, ...opsSchemas.reviewDecision } }, async (request, reply) => {
    const session = sessionOf(request);
    const decision = formValue(request, 'decision');
    if (decision !== 'approve' && decision !== 'reject') return reviewPage(reply, session, { message: 'Choose approve or reject.', error: true }, 400);
    const applied = await ops.resolveHeldAttempt(db, actorOf(session), deps.config.checkoutUrlHost, request.params.id, decision);
    return reviewPage(reply, session, { message: `Attempt ${applied.attempt.id} is ${applied.attempt.status}; checkout ${applied.session.id} is ${applied.session.status}.` });
  });

  // ---- payouts reconciliation ----
  async function payoutsPage(reply: FastifyReply, session: WebSession, flash: Flash = null, status = 200) {
    return show(reply, session, 'payouts', 'Live payouts', payoutsView(session, await ops.livePayouts(db)), flash, status);
  }
  app.get('/ops/payouts', { schema: { hide: true, ...opsSchemas.payouts } }, async (request, reply) => payoutsPage(reply, sessionOf(request)));
  app.post<{ Params: { id: string } }>('/ops/payouts/:id/reconcile', { schema: { hide: true, ...opsSchemas.reconcile } }, async (request, reply) => {
    const session = sessionOf(request);
    const result = formValue(request, 'result');
    if (result !== 'matched' && result !== 'exception') return payoutsPage(reply, session, { message: 'Choose matched or exception.', error: true }, 400);
    const payout = await ops.reconcile(db, actorOf(session), request.params.id, result);
    return payoutsPage(reply, session, { message: `Payout ${payout.reference} is ${payout.reconciliation_status}.` });
  });
  app.post<{ Params: { id: string } }>('/ops/payouts/:id/return', { schema: { hide: true, ...opsSchemas.payoutReturn } }, async (request, reply) => {
    const session = sessionOf(request);
    const reference = formValue(request, 'return_reference').trim().slice(0, 80);
    if (!reference) return payoutsPage(reply, session, { message: 'Enter the return reference from the bank.', error: true }, 400);
    const payout = await ops.recordReturn(db, actorOf(session), request.params.id, reference);
    return payoutsPage(reply, session, { message: `Payout ${payout.reference} is returned; the amount and fee are back on the merchant's balance.` });
  });

  // ---- banks and branches ----
  async function banksPage(reply: FastifyReply, session: WebSession, flash: Flash = null, status = 200) {
    return show(reply, session, 'banks', 'Banks', banksView(session, await ops.banksAndBranches(db)), flash, status);
  }
  app.get('/ops/banks', { schema: { hide: true, ...opsSchemas.banks } }, async (request, reply) => banksPage(reply, sessionOf(request)));
  app.post('/ops/banks', { schema: { hide: true, ...opsSchemas.addBank } }, async (request, reply) => {
    const session = sessionOf(request);
    await ops.addBank(db, actorOf(session), { name: formValue(request, 'name'), code: formValue(request, 'code') });
    return banksPage(reply, session, { message: 'Bank added.' });
  });
  app.post<{ Params: { id: string } }>('/ops/banks/:id/branches', { schema: { hide: true, ...opsSchemas.addBranch } }, async (request, reply) => {
    const session = sessionOf(request);
    await ops.addBranch(db, actorOf(session), { bankId: request.params.id, name: formValue(request, 'name'), code: formValue(request, 'code') });
    return banksPage(reply, session, { message: 'Branch added.' });
  });
  app.post<{ Params: { table: string; id: string; action: string } }>('/ops/:table/:id/:action', { schema: { hide: true, ...opsSchemas.setActive } }, async (request, reply) => {
    const session = sessionOf(request);
    const { table, id, action } = request.params;
    if ((table !== 'banks' && table !== 'branches') || (action !== 'activate' && action !== 'deactivate')) return banksPage(reply, session, { message: 'Unknown action.', error: true }, 404);
    await ops.setBankActive(db, actorOf(session), table === 'banks' ? 'banks' : 'bank_branches', id, action === 'activate');
    return banksPage(reply, session, { message: `${table === 'banks' ? 'Bank' : 'Branch'} ${action}d.` });
  });

  // ---- audit ----
  app.get('/ops/audit', { schema: { hide: true, ...opsSchemas.audit } }, async (request, reply) =>
    show(reply, sessionOf(request), 'audit', 'Audit log', auditView(await ops.auditLog(db))),
  );

  await app.register(statementPages, deps);
  await app.register(reconciliationPages, deps);
  await app.register(refundQueuePages, deps);
  await app.register(operatorAccountPages, deps);
}
