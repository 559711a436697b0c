// Dashboard: "Activate your account", the Go-Live application (issue 33). The owner or an admin fills it in
// as a draft, uploads the documents (one multipart form each: the parser takes one file per request) and
// submits it for review; the page then shows it read-only, the reviewer's requested changes, the rejection's
// reason or that Live is open. Routes parse and call src/accounts/activation-application.ts; the settlement
// account's name enquiry is the payouts module's (src/payouts/settlement-name-enquiry.ts), handed in.
import { Type, type TProperties } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  applicationOf,
  documentFile,
  documentTooLargeMessage,
  saveApplication,
  uploadDocument,
} from '../../accounts/activation-application.ts';
import {
  ADDRESS_LENGTH_MAX,
  BUSINESS_FIELDS,
  DIRECTORS_MAX,
  DOCUMENT_KINDS,
  NAME_LENGTH_MAX,
  PRODUCTS_LENGTH_MAX,
  SETTLEMENT_FIELDS,
  draftAsInput,
  settlementFieldName,
  type DraftInput,
} from '../../accounts/activation-fields.ts';
import type { AppDeps } from '../../http/deps.ts';
import { toSikaError } from '../../http/error-handler.ts';
import { SikaError } from '../../lib/errors.ts';
import { settlementBanks, settlementNameEnquiry } from '../../payouts/settlement-name-enquiry.ts';
import type { WebSession } from '../auth.ts';
import { formValue, pageSender, refusedForm, sessionOf, type PageOutcome } from '../console.ts';
import { formRefusal } from '../error-pages.ts';
import { html } from '../html.ts';
import { activationView, type FormState } from './activation-views.ts';

/** Who may fill in and submit the application: the people who answer for the business. */
const canApply = (session: WebSession) => session.role === 'owner' || session.role === 'admin';
const userActor = (session: WebSession) => ({ type: 'user' as const, id: session.userId!, email: session.email });

// ---- input schemas (the shape of console-schemas.ts: bounded strings, closed sets, unknown fields ignored) ----
const CSRF_TOKEN_LENGTH_MAX = 128;
const FIELD_LENGTH_MAX = Math.max(ADDRESS_LENGTH_MAX, PRODUCTS_LENGTH_MAX, NAME_LENGTH_MAX, 300);
const text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
const form = (properties: TProperties) =>
  Type.Object({ _csrf: text(CSRF_TOKEN_LENGTH_MAX), ...properties }, { additionalProperties: true });
const DirectorRow = Type.Object(
  {
    full_name: text(NAME_LENGTH_MAX),
    ghana_card_pin: text(40),
    date_of_birth: text(20),
    phone: text(40),
  },
  { additionalProperties: true },
);
export const activationSchemas = {
  page: { querystring: Type.Object({}, { additionalProperties: true }) },
  save: {
    body: form({
      action: Type.Optional(
        Type.Unsafe<string>({ type: 'string', enum: ['save', 'submit', 'add_director'], examples: ['save'] }),
      ),
      remove_director: Type.Optional(
        Type.String({ maxLength: 2, pattern: '^[0-9]{1,2}$', description: 'a director row number from 0' }),
      ),
      ...Object.fromEntries(BUSINESS_FIELDS.map((field) => [field, text(FIELD_LENGTH_MAX)])),
      ...Object.fromEntries(SETTLEMENT_FIELDS.map((field) => [settlementFieldName(field), text(NAME_LENGTH_MAX)])),
      directors: Type.Optional(Type.Array(DirectorRow, { maxItems: DIRECTORS_MAX + 1 })),
    }),
  },
  upload: {
    body: form({
      kind: Type.Optional(
        Type.Unsafe<string>({ type: 'string', enum: [...DOCUMENT_KINDS], examples: [DOCUMENT_KINDS[0]] }),
      ),
      director_index: Type.Optional(
        Type.String({ maxLength: 2, pattern: '^[0-9]{1,2}$', description: 'a director row number from 0' }),
      ),
    }),
  },
  // The document's id is a query parameter, not a path id: documents belong to the merchant, not to an
  // environment (the dashboard's foreign-id walk pairs both); another merchant's id is a 404 all the same.
  document: {
    querystring: Type.Object(
      { id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
      { additionalProperties: true },
    ),
  },
};

export async function activationPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const show = pageSender('merchant', 'activation');
  const nameEnquiry = settlementNameEnquiry(deps.providers);

  async function activationPage(
    reply: FastifyReply,
    session: WebSession,
    outcome: PageOutcome & { state?: FormState } = {},
  ): Promise<FastifyReply> {
    const [view, banks] = await Promise.all([applicationOf(db, session.merchantId!), settlementBanks(db)]);
    // The header's status is the session's, read when the page began: show this page's own.
    const shown = { ...session, activationStatus: view.status };
    return show(
      reply,
      shown,
      'Activate your account',
      activationView(shown, view, banks, outcome.state ?? null),
      outcome.flash,
      outcome.status,
    );
  }

  const refuseOthers = (reply: FastifyReply, session: WebSession) =>
    show(
      reply,
      session,
      'Activate your account',
      html`<h1>Activate your account</h1><p>Ask your account owner or an admin: they fill in the Go-Live application.</p>`,
      { message: 'Only the owner or an admin can fill in the Go-Live application.', error: true },
      403,
    );

  app.get('/dashboard/activation', { schema: { hide: true, ...activationSchemas.page } }, async (request, reply) => {
    const session = sessionOf(request);
    if (!canApply(session)) return refuseOthers(reply, session);
    return activationPage(reply, session);
  });

  app.post('/dashboard/activation', { schema: { hide: true, ...activationSchemas.save } }, async (request, reply) => {
    const session = sessionOf(request);
    if (!canApply(session)) return refuseOthers(reply, session);
    const body = (request.body ?? {}) as DraftInput;
    const action = formValue(request, 'action') || 'save';
    const removing = formValue(request, 'remove_director');
    try {
      const saved = await saveApplication(db, {
        merchantId: session.merchantId!,
        form: body,
        submit: action === 'submit',
        actor: userActor(session),
        nameEnquiry,
        removeDirector: removing === '' ? null : Number(removing),
      });
      if (!saved.saved) {
        const count = saved.problems.length;
        return activationPage(reply, session, {
          ...refusedForm(
            `Nothing was saved: ${count === 1 ? 'one field needs' : `${count} fields need`} fixing. ${saved.problems.map((p) => p.message).join(' ')}`,
            400,
          ),
          state: { values: body, problems: saved.problems, extraDirectorRows: 0 },
        });
      }
      if (action === 'submit' && !saved.submitted)
        return activationPage(reply, session, {
          ...refusedForm(
            `Your draft is saved, but it cannot be submitted yet: ${saved.missing.length} ${saved.missing.length === 1 ? 'thing is' : 'things are'} missing (listed below).`,
            400,
          ),
        });
      if (saved.submitted)
        return activationPage(reply, session, {
          flash: { message: 'Submitted for review. We e-mail you when it is decided.' },
        });
      return activationPage(reply, session, {
        flash: { message: removing !== '' ? 'Director removed; draft saved.' : 'Draft saved.' },
        ...(action === 'add_director'
          ? { state: { values: await formValuesOf(session), problems: [], extraDirectorRows: 1 } }
          : {}),
      });
    } catch (error) {
      return activationPage(reply, session, formRefusal(error));
    }
  });

  /** The saved draft as the form shows it (after adding a row). */
  const formValuesOf = async (session: WebSession): Promise<DraftInput> =>
    draftAsInput((await applicationOf(db, session.merchantId!)).draft);

  // A file over the limit is refused by the upload parser before the handler runs: the page says so plainly.
  const uploadErrors = (error: unknown) => {
    throw toSikaError(error).code === 'PAYLOAD_TOO_LARGE'
      ? new SikaError('PAYLOAD_TOO_LARGE', documentTooLargeMessage)
      : error;
  };

  app.post(
    '/dashboard/activation/documents',
    { schema: { hide: true, ...activationSchemas.upload }, errorHandler: uploadErrors },
    async (request: FastifyRequest, reply) => {
      const session = sessionOf(request);
      if (!canApply(session)) return refuseOthers(reply, session);
      const file = request.uploads?.find((upload) => upload.fieldname === 'file');
      if (!file || (file.data.length === 0 && !file.filename))
        return activationPage(reply, session, refusedForm('Choose the file to upload.', 400));
      const index = formValue(request, 'director_index');
      try {
        await uploadDocument(db, {
          merchantId: session.merchantId!,
          kind: formValue(request, 'kind'),
          directorIndex: index === '' ? null : Number(index),
          data: file.data,
          filename: file.filename || null,
        });
        return activationPage(reply, session, { flash: { message: 'Document uploaded.' } });
      } catch (error) {
        return activationPage(reply, session, formRefusal(error));
      }
    },
  );

  app.get<{ Querystring: { id?: string } }>(
    '/dashboard/activation/document',
    { schema: { hide: true, ...activationSchemas.document } },
    async (request, reply) => {
      const session = sessionOf(request);
      const id = request.query.id ?? '';
      const document = canApply(session) && id ? await documentFile(db, id, session.merchantId!) : null;
      if (!document) throw new SikaError('NOT_FOUND', 'No such document.');
      return sendDocument(reply, document);
    },
  );
}

/**
 * A stored document, shown inline in the browser with the type read from its bytes at upload; nosniff, and a
 * policy that lets nothing in it run (a PDF may still be framed by our own review page).
 */
export function sendDocument(
  reply: FastifyReply,
  document: { content_type: string; data: Buffer; filename: string | null; id: string },
): FastifyReply {
  const extension =
    document.content_type === 'application/pdf' ? 'pdf' : document.content_type === 'image/png' ? 'png' : 'jpg';
  return reply
    .type(document.content_type)
    .header('content-disposition', `inline; filename="${document.id}.${extension}"`)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'private, no-store')
    .header('x-frame-options', 'SAMEORIGIN')
    .header('content-security-policy', "default-src 'none'; img-src 'self'; object-src 'self'; frame-ancestors 'self'")
    .send(document.data);
}
