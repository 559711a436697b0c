// The operator console's Statements pages (/ops/statements): import a bank statement of the bank transfer
// collection account (multipart upload), see each import, and work the queue of credits that matched no
// payment (apply one to a payment by its reference, or resolve it with a note), and void an import whose
// lines are all unmatched. Only the configured collection accounts are offered; a file imported before is
// refused unless forced with a reason; a file over the upload limit is refused naming the limit and the CLI.
// Every action is audited by the statements service.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { UPLOAD_BYTES_MAX } from '../../http/body.ts';
import type { AppDeps } from '../../http/deps.ts';
import { toSikaError } from '../../http/error-handler.ts';
import { SikaError } from '../../lib/errors.ts';
import { collectionAccounts } from '../../rails/bank-transfer/accounts.ts';
import { csvColumn } from '../../lib/csv-columns.ts';
import {
  assignCredit,
  importStatement,
  queuePage,
  resolveCredit,
  statementImport,
  statementsSummary,
  voidImport,
  type ImportResult,
  type QueueLineWithHints,
} from '../../statements/service.ts';
import type { WebSession } from '../auth.ts';
import { formValue, postOnObject, sessionOf, pageSender, type PageOutcome } from '../console.ts';
import { actorOf } from './common.ts';
import { opsSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import { html } from '../html.ts';
import { money } from '../layout.ts';
import { STATEMENT_BYTES_MAX } from '../../statements/model.ts';
import * as consoleList from './console-list.ts';
import { importSummary, importView, statementsView } from './statements-views.ts';
import { fieldColumns } from '../../lib/csv-field-columns.ts';

/** The unmatched queue's filters (console-list.ts): whether a payment reference was found, and the bank code. */
const QUEUE_FILTERS = ['reference', 'bank'] as const;

const QUEUE_CSV: consoleList.ListCsv<QueueLineWithHints> = {
  filename: 'sika-unmatched-statement-lines.csv',
  columns: [
    csvColumn.timestamp('recorded_at', (l) => l.created_at),
    ...fieldColumns<QueueLineWithHints>().textAs({ line_id: 'id', value_date: 'value_date', bank: 'bank_code' }),
    csvColumn.integer('line', (l) => l.line_number),
    csvColumn.ghs('amount_ghs', (l) => l.amount_minor),
    ...fieldColumns<QueueLineWithHints>().text('narration', 'bank_reference', 'payment_reference'),
    csvColumn.text('why', (l) => l.reason),
    csvColumn.text('suggestions', (l) => l.hints.nearMatches.map((m) => m.reference).join(' ')),
  ],
};

/**
 * How the statements page is shown: after a form (the import's bank, its result, whether to offer forcing it), or
 * with the GET's list query (`list`; else the queue's first page).
 */
type StatementsOutcome = PageOutcome & {
  bankCode?: string;
  result?: ImportResult;
  askForce?: boolean;
  list?: consoleList.ListQuery;
};

export async function statementPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  // Statements are imported for the configured collection accounts only; the first is the form's choice.
  const accounts = collectionAccounts(deps.config.providers.bankTransfer);
  const defaultBankCode = accounts[0]?.bankCode ?? '';
  const show = pageSender('operator', 'statements');

  const unmatchedLines: consoleList.ListSource<QueueLineWithHints> = {
    fetch: (list) => (cursor, limit) =>
      queuePage(db, {
        search: list.q,
        filters: { reference: list.filters.reference, bank: list.filters.bank },
        cursor,
        limit,
      }),
    key: (line) => ({ at: line.created_at, id: line.id }),
  };

  async function statementsPage(reply: FastifyReply, session: WebSession, outcome: StatementsOutcome = {}) {
    const list = outcome.list ?? consoleList.readListQuery({}, QUEUE_FILTERS);
    const [summary, queue] = await Promise.all([
      statementsSummary(db, { search: list.q, filters: list.filters, collectionAccounts: accounts }),
      consoleList.listRows(list, unmatchedLines),
    ]);
    const body = statementsView(
      session,
      { ...summary, queue: queue.rows },
      {
        bankCode: outcome.bankCode || defaultBankCode,
        result: outcome.result ?? null,
        askForce: outcome.askForce ?? false,
        list,
        next: queue.next,
      },
    );
    return show(reply, session, 'Statements', body, outcome.flash, outcome.status);
  }

  app.get('/ops/statements', { schema: { hide: true, ...opsSchemas.statements } }, async (request, reply) => {
    const list = consoleList.readListQuery(request.query as consoleList.QueryString, QUEUE_FILTERS);
    if (list.csv) return consoleList.sendListCsv(reply, list, unmatchedLines, QUEUE_CSV);
    return statementsPage(reply, sessionOf(request), { list });
  });

  const importNotFound = (reply: FastifyReply, session: WebSession) =>
    show(
      reply,
      session,
      'Not found',
      html`<h1>Import not found</h1><p><a href="/ops/statements">Back to statements</a></p>`,
      null,
      404,
    );

  app.get<{ Params: { id: string } }>(
    '/ops/statements/imports/:id',
    { schema: { hide: true, ...opsSchemas.statementImport } },
    async (request, reply) => {
      const found = await statementImport(db, request.params.id);
      if (!found) return importNotFound(reply, sessionOf(request));
      return show(
        reply,
        sessionOf(request),
        `Statement ${found.import.file_name}`,
        importView(sessionOf(request), found),
      );
    },
  );

  // A file over the console's upload limit is refused before the session is read (the body is never taken
  // in): the refusal names the limit and the CLI, which takes larger files. Other errors go to the console's handler.
  const uploadLimitMb = UPLOAD_BYTES_MAX / (1024 * 1024);
  const tooLarge = new SikaError(
    'PAYLOAD_TOO_LARGE',
    `The statement file is larger than ${uploadLimitMb} MB, the most the console takes. Import it with the command line instead: sika statements import FILE --bank CODE (up to ${STATEMENT_BYTES_MAX / (1024 * 1024)} MB), or split the statement by date.`,
  );
  const uploadErrors = (error: unknown) => {
    throw toSikaError(error).code === 'PAYLOAD_TOO_LARGE' ? tooLarge : error;
  };

  app.post(
    '/ops/statements/import',
    { schema: { hide: true, ...opsSchemas.statementUpload }, errorHandler: uploadErrors },
    async (request, reply) => {
      const session = sessionOf(request);
      const bankCode = formValue(request, 'bank_code') || defaultBankCode;
      const file = request.uploads?.find((upload) => upload.fieldname === 'file');
      if (!file || (file.data.length === 0 && !file.filename))
        return statementsPage(reply, session, {
          flash: { message: 'Choose the statement file (CSV) to import.', error: true },
          status: 400,
          bankCode,
        });
      try {
        const result = await importStatement(db, {
          bankCode,
          fileName: file.filename,
          csv: file.data,
          columns: formValue(request, 'columns'),
          importedBy: actorOf(session),
          checkoutUrlHost: deps.config.checkoutUrlHost,
          collectionAccounts: accounts,
          forceReason: formValue(request, 'force_reason') || null,
        });
        return statementsPage(reply, session, { flash: { message: importSummary(result) }, bankCode, result });
      } catch (error) {
        return statementsPage(reply, session, {
          ...formRefusal(error),
          bankCode,
          askForce: toSikaError(error).code === 'STATEMENT_ALREADY_IMPORTED',
        });
      }
    },
  );

  postOnObject(app, '/ops/statements/imports/:id/void', opsSchemas.statementVoid, async (request, reply, session) => {
    const found = await statementImport(db, request.params.id);
    if (!found) return importNotFound(reply, session);
    try {
      const done = await voidImport(db, actorOf(session), found.import.id, formValue(request, 'reason'));
      const again = (await statementImport(db, found.import.id))!;
      const message = `Import ${done.import.file_name} voided: ${done.linesVoided} unmatched line${done.linesVoided === 1 ? '' : 's'} (${money(done.amountMinor)}) left the queue and the totals.`;
      return show(reply, session, `Statement ${again.import.file_name}`, importView(session, again), { message });
    } catch (error) {
      const { flash, status } = formRefusal(error);
      return show(reply, session, `Statement ${found.import.file_name}`, importView(session, found), flash, status);
    }
  });

  postOnObject(app, '/ops/statements/lines/:id/assign', opsSchemas.statementAssign, async (request, reply, session) => {
    try {
      const done = await assignCredit(
        db,
        actorOf(session),
        deps.config.checkoutUrlHost,
        request.params.id,
        formValue(request, 'reference'),
      );
      const message =
        done.status === 'matched'
          ? `Applied to ${done.reference}: the payment is ${done.attempt.status} and its checkout ${done.session.status}.`
          : `Applied to ${done.reference}, whose amount is ${money(done.attempt.amount_charged_minor)}: the payment is held under Review for a decision.`;
      return statementsPage(reply, session, { flash: { message } });
    } catch (error) {
      return statementsPage(reply, session, formRefusal(error));
    }
  });

  postOnObject(
    app,
    '/ops/statements/lines/:id/resolve',
    opsSchemas.statementResolve,
    async (request, reply, session) => {
      try {
        const line = await resolveCredit(db, actorOf(session), request.params.id, formValue(request, 'note'));
        const message = `The credit of ${money(line.amount_minor)} on ${line.value_date} is resolved.`;
        return statementsPage(reply, session, { flash: { message } });
      } catch (error) {
        return statementsPage(reply, session, formRefusal(error));
      }
    },
  );
}
