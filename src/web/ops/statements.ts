// The operator console's Statements pages (/ops/statements): import a bank statement of the bank transfer
// collection account (multipart upload), see each import, and work the queue of credits that matched no
// payment (apply one to a payment by its reference, or resolve it with a note). Every action is audited
// by the statements service.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Actor } from '../../audit/log.ts';
import type { AppDeps } from '../../http/deps.ts';
import { assignCredit, importStatement, resolveCredit, statementImport, statementsOverview, type ImportResult } from '../../statements/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, sendPage, sessionOf } from '../console.ts';
import { opsSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import { html, type Html } from '../html.ts';
import { money, page } from '../layout.ts';
import { importSummary, importView, statementsView } from './statements-views.ts';

type Flash = { message: string; error?: boolean } | null;

const actorOf = (session: WebSession): Actor => ({ type: 'operator', id: session.operatorId!, email: session.email });

export async function statementPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  // The collection account's bank is the form's first choice.
  const defaultBankCode = deps.config.providers.bankTransfer?.bankCode.toUpperCase() ?? '';
  const show = (reply: FastifyReply, session: WebSession, title: string, body: Html, flash: Flash = null, status = 200) =>
    sendPage(reply, page({ title, session, kind: 'operator', active: 'statements', flash, body }), status);

  async function statementsPage(reply: FastifyReply, session: WebSession, flash: Flash = null, status = 200, options: { bankCode?: string; result?: ImportResult; search?: string } = {}) {
    const overview = await statementsOverview(db, { search: options.search });
    const body = statementsView(session, overview, { bankCode: options.bankCode || defaultBankCode, result: options.result ?? null });
    return show(reply, session, 'Statements', body, flash, status);
  }

  app.get<{ Querystring: { q?: string } }>('/ops/statements', { schema: { hide: true, ...opsSchemas.statements } }, async (request, reply) =>
    statementsPage(reply, sessionOf(request), null, 200, { search: request.query.q ?? '' }),
  );

  app.get<{ Params: { id: string } }>('/ops/statements/imports/:id', { schema: { hide: true, ...opsSchemas.statementImport } }, async (request, reply) => {
    const found = await statementImport(db, request.params.id);
    if (!found) return show(reply, sessionOf(request), 'Not found', html`<h1>Import not found</h1><p><a href="/ops/statements">Back to statements</a></p>`, null, 404);
    return show(reply, sessionOf(request), `Statement ${found.import.file_name}`, importView(found));
  });

  app.post('/ops/statements/import', { schema: { hide: true, ...opsSchemas.statementUpload } }, async (request, reply) => {
    const session = sessionOf(request);
    const bankCode = formValue(request, 'bank_code');
    const file = request.uploads?.find((upload) => upload.fieldname === 'file');
    if (!file || file.data.length === 0) return statementsPage(reply, session, { message: 'Choose the statement file (CSV) to import.', error: true }, 400, { bankCode });
    try {
      const result = await importStatement(db, {
        bankCode,
        fileName: file.filename,
        csv: file.data,
        columns: formValue(request, 'columns'),
        importedBy: actorOf(session),
        checkoutUrlHost: deps.config.checkoutUrlHost,
      });
      return statementsPage(reply, session, { message: importSummary(result) }, 200, { bankCode, result });
    } catch (error) {
      const { flash, status } = formRefusal(error);
      return statementsPage(reply, session, flash, status, { bankCode });
    }
  });

  app.post<{ Params: { id: string } }>('/ops/statements/lines/:id/assign', { schema: { hide: true, ...opsSchemas.statementAssign } }, async (request, reply) => {
    const session = sessionOf(request);
    try {
      const done = await assignCredit(db, actorOf(session), deps.config.checkoutUrlHost, request.params.id, formValue(request, 'reference'));
      const message =
        done.status === 'matched'
          ? `Applied to ${done.reference}: the payment is ${done.attempt.status} and its checkout ${done.session.status}.`
          : `Applied to ${done.reference}, whose amount is ${money(done.attempt.amount_charged_minor)}: the payment is held under Review for a decision.`;
      return statementsPage(reply, session, { message });
    } catch (error) {
      const { flash, status } = formRefusal(error);
      return statementsPage(reply, session, flash, status);
    }
  });

  app.post<{ Params: { id: string } }>('/ops/statements/lines/:id/resolve', { schema: { hide: true, ...opsSchemas.statementResolve } }, async (request, reply) => {
    const session = sessionOf(request);
    try {
      const line = await resolveCredit(db, actorOf(session), request.params.id, formValue(request, 'note'));
      return statementsPage(reply, session, { message: `The credit of ${money(line.amount_minor)} on ${line.value_date} is resolved.` });
    } catch (error) {
      const { flash, status } = formRefusal(error);
      return statementsPage(reply, session, flash, status);
    }
  });
}
