// The operator console at /ops: sign-in and the teller rule here, each page in its own module (a Fastify plugin
// with its routes and its HTML): merchants and payout controls (merchants.ts), clearing and reserve (clearing.ts), the teller desk (teller.ts), held
// attempts (review.ts), Live payout reconciliation, returns and holds (payouts.ts), the refunds waiting for an operator's
// transfer (refunds.ts), bank statements (statements.ts), the daily reconciliation per provider (reconciliation.ts),
// banks and branches (banks.ts), the Go-Live review (activation-review.ts), the audit log (audit.ts), the mail outbox (mail.ts), the operators and their reset (operators.ts) and the
// operator's account (account.ts). Every operator uses a second factor: without one, only the account pages open.
// Every action is audited. Routes parse and call a service; common.ts holds what the modules share.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../http/deps.ts';
import type { WebSession } from '../auth.ts';
import { accountGate } from '../console-account.ts';
import { registerConsoleAuth } from '../console.ts';
import { consoleErrorPage, registerErrorPages } from '../error-pages.ts';
import { operatorAccountPages } from './account.ts';
import { activationReviewPages } from './activation-review.ts';
import { approvalPages } from './approvals.ts';
import { auditPages } from './audit.ts';
import { bankPages } from './banks.ts';
import { clearingPages } from './clearing.ts';
import { mailPages } from './mail.ts';
import { merchantPages } from './merchants.ts';
import { operatorPages } from './operators.ts';
import { payoutPages } from './payouts.ts';
import { reconciliationPages } from './reconciliation.ts';
import { refundQueuePages } from './refunds.ts';
import { reviewPages } from './review.ts';
import { statementPages } from './statements.ts';
import { tellerPages } from './teller.ts';

const isTeller = (session: WebSession) => session.role === 'teller';

export async function opsRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  registerErrorPages(app, 'ops', consoleErrorPage('operator'));
  await registerConsoleAuth(app, deps, 'operator');
  // A temporary password (a reset) or no second factor yet: only the account pages until it is done.
  app.addHook('preHandler', accountGate('operator'));

  // Tellers see only the teller desk (and their own account page).
  app.addHook('preHandler', async (request, reply) => {
    const session = request.webSession;
    const path = request.url.split('?')[0]!;
    if (
      session &&
      session.stage === 'active' &&
      isTeller(session) &&
      !path.startsWith('/ops/teller') &&
      !path.startsWith('/ops/account') &&
      path !== '/ops/logout'
    )
      return reply.redirect('/ops/teller', 303);
  });

  await app.register(merchantPages, deps);
  await app.register(clearingPages, deps);
  await app.register(tellerPages, deps);
  await app.register(reviewPages, deps);
  await app.register(approvalPages, deps);
  await app.register(payoutPages, deps);
  await app.register(bankPages, deps);
  await app.register(auditPages, deps);
  await app.register(statementPages, deps);
  await app.register(reconciliationPages, deps);
  await app.register(refundQueuePages, deps);
  await app.register(operatorAccountPages, deps);
  await app.register(operatorPages, deps);
  await app.register(activationReviewPages, deps);
  await app.register(mailPages, deps);
}
