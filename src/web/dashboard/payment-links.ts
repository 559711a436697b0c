// Dashboard: Payment links (issue 35, item 5) in the session's environment: the list (search, status filter, keyset
// pages and CSV export, issue 36) with the New link form (its one-time form_key), a
// link's page with its payments and totals, its edit (name, description, expiry) and its deactivation. Owner, admin
// and developer change links; the other roles read them. A link of another merchant or environment is not found.
// HTML in payment-links-views.ts; the use cases in src/checkout/payment-links.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CustomFieldType } from '../../checkout/payment-link-model.ts';
import { paymentLinkSummary } from '../../checkout/payment-link-summary.ts';
import {
  createPaymentLink,
  getPaymentLink,
  linkListExport,
  linkListFilter,
  linkListPage,
  linkListPosition,
  updatePaymentLink,
  type CreatePaymentLinkInput,
  type LinkListQuery,
  type LinkListState,
} from '../../checkout/payment-links.ts';
import { sendCsv } from '../../http/csv.ts';
import { accraDay } from '../../lib/accra-calendar.ts';
import type { AppDeps } from '../../http/deps.ts';
import { errors, type FieldError, SikaError } from '../../lib/errors.ts';
import { parseCedis } from '../../lib/ghana.ts';
import type { WebSession } from '../auth.ts';
import { formValue, pageSender, postForm, postOnObject, refusedForm, sessionOf, type PageOutcome } from '../console.ts';
import { dashboardSchemas } from '../console-schemas.ts';
import { formRefusal } from '../error-pages.ts';
import {
  canEditLinks,
  CUSTOM_FIELD_ROWS,
  LINK_CSV_COLUMNS,
  LINK_EDITOR_REFUSAL,
  linksListView,
  linkView,
  type LinkFormValues,
} from './payment-links-views.ts';

/** The list's query string (console-schemas.ts `links`). */
type LinksPageQuery = { q?: string; status?: LinkListState; after?: string; format?: string };

/** The New link form's fields, kept to show the form again beside a refusal. */
const FORM_FIELDS = [
  'name',
  'description',
  'amount_type',
  'amount',
  'amount_min',
  'amount_max',
  'single_use',
  'max_payments',
  'expires',
  'redirect_url',
  'form_key',
  ...CUSTOM_FIELD_ROWS.flatMap((n) => ['key', 'label', 'type', 'required'].map((part) => `field_${n}_${part}`)),
];

/** A day from the form's date input as the moment the link expires: the end of that day in Accra (UTC). */
const endOfDay = (day: string) => `${day}T23:59:59.000Z`;

/** The form's cedis field as pesewas: undefined when left empty, else the amount or what to correct (by its label). */
function cedisField(value: string, label: string): number | undefined | FieldError {
  if (!value.trim()) return undefined;
  return parseCedis(value) ?? { field: label, message: 'write an amount in GHS, e.g. 25.00.' };
}
const isFieldError = (value: unknown): value is FieldError =>
  typeof value === 'object' && value !== null && 'field' in value;

/** The API's input from the New link form, or what to correct, each named by its label (blank custom field rows are left out). */
function linkInput(
  request: FastifyRequest,
): { input: CreatePaymentLinkInput; rows: number[] } | { refusal: FieldError[] } {
  const problems: FieldError[] = [];
  const input: CreatePaymentLinkInput = { name: formValue(request, 'name').trim() };
  const description = formValue(request, 'description').trim();
  if (description) input.description = description;
  if (formValue(request, 'amount_type') === 'open') {
    for (const [field, name, label] of [
      ['amount_min', 'amount_min_minor', 'At least'],
      ['amount_max', 'amount_max_minor', 'At most'],
    ] as const) {
      const minor = cedisField(formValue(request, field), label);
      if (isFieldError(minor)) problems.push(minor);
      else if (minor !== undefined) input[name] = minor;
    }
  } else {
    const minor = cedisField(formValue(request, 'amount'), 'Amount');
    if (minor === undefined)
      problems.push({ field: 'Amount', message: 'write the amount in GHS, or let the payer choose.' });
    else if (isFieldError(minor)) problems.push(minor);
    else input.amount_minor = minor;
  }
  const customFields: { key: string; label: string; type: CustomFieldType; required: boolean }[] = [];
  /** The form's row number of each custom field sent, to name a refused one as the form does. */
  const rows: number[] = [];
  for (const n of CUSTOM_FIELD_ROWS) {
    const key = formValue(request, `field_${n}_key`).trim();
    const label = formValue(request, `field_${n}_label`).trim();
    if (!key && !label) continue;
    if (!key || !label) {
      problems.push({ field: `Custom field ${n}`, message: 'give it both a key and a label.' });
      continue;
    }
    rows.push(n);
    customFields.push({
      key,
      label,
      type: (formValue(request, `field_${n}_type`) || 'text') as CustomFieldType,
      required: formValue(request, `field_${n}_required`) === 'on',
    });
  }
  if (customFields.length) input.custom_fields = customFields;
  if (formValue(request, 'single_use') === 'on') input.single_use = true;
  const maxPayments = formValue(request, 'max_payments').trim();
  if (maxPayments) input.max_payments = Number(maxPayments);
  const expires = formValue(request, 'expires');
  if (expires) input.expires_at = endOfDay(expires);
  const redirectUrl = formValue(request, 'redirect_url').trim();
  if (redirectUrl) input.redirect_url = redirectUrl;
  return problems.length ? { refusal: problems } : { input, rows };
}

/**
 * A refusal's field messages in the form's words: the API names `custom_fields.0.key` (the first row sent, `rows`
 * the form's row of each) and `amount_min_minor`.
 */
function formErrors(error: unknown, rows: readonly number[] = []): FieldError[] {
  if (!(error instanceof SikaError)) return [];
  const words: Record<string, string> = {
    amount_minor: 'Amount',
    amount_min_minor: 'At least',
    amount_max_minor: 'At most',
    max_payments: 'Most payments',
    expires_at: 'Expires on',
    redirect_url: 'After paying',
  };
  return (error.details.fields ?? []).map((f) => {
    const custom = /^custom_fields(?:\.(\d+))?(?:\.(\w+))?$/.exec(f.field);
    const row = custom?.[1] === undefined ? null : (rows[Number(custom[1])] ?? Number(custom[1]) + 1);
    const field = custom
      ? `Custom field${row === null ? 's' : ` ${row}`}${custom[2] ? ` ${custom[2]}` : ''}`
      : (words[f.field] ?? f.field.replace(/_/g, ' '));
    return { field, message: f.message };
  });
}

export async function paymentLinkPages(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const { checkoutUrlHost } = deps.config;
  const show = pageSender('merchant', 'links');
  const ownerOf = (session: WebSession) => ({
    merchantId: session.merchantId!,
    environment: session.environment,
    apiKeyId: null,
    userId: session.userId!,
  });

  /**
   * The list (issue 36): the search and status filter are the address, `after` the link the page starts after,
   * format=csv the export of exactly what they show. After a form, the newest page again beside its outcome.
   */
  async function listPage(
    reply: FastifyReply,
    session: WebSession,
    outcome: PageOutcome & { values?: LinkFormValues; errors?: FieldError[] } = {},
    given: LinksPageQuery = {},
  ) {
    const owner = { merchantId: session.merchantId!, environment: session.environment };
    const query: LinkListQuery = { q: given.q?.trim() || undefined, status: given.status || undefined };
    const filter = linkListFilter(owner, query, new Date());
    if (given.format === 'csv')
      return sendCsv(reply, {
        filename: `payment-links-${session.environment}-${accraDay(new Date())}.csv`,
        columns: LINK_CSV_COLUMNS,
        rows: linkListExport(db, filter, checkoutUrlHost),
      });
    let after: { createdAt: Date; id: string } | null = null;
    if (given.after) {
      // Another merchant's (or environment's) link as a cursor is not found, as anywhere in the dashboard.
      after = await linkListPosition(db, owner.merchantId, owner.environment, given.after);
      if (!after) throw errors.notFound('Payment link');
    }
    const { rows, next } = await linkListPage(db, filter, after, checkoutUrlHost);
    const body = linksListView(
      session,
      { query, rows, next, later: after !== null },
      {
        values: outcome.values ?? {},
        errors: outcome.errors ?? [],
      },
    );
    return show(reply, session, 'Payment links', body, outcome.flash, outcome.status);
  }

  /** The link's page; a link of another merchant or environment is not found. */
  async function linkPage(
    reply: FastifyReply,
    session: WebSession,
    id: string,
    outcome: PageOutcome & { errors?: FieldError[] } = {},
  ) {
    const [link, summary] = await Promise.all([
      getPaymentLink(db, session.merchantId!, session.environment, id, checkoutUrlHost),
      paymentLinkSummary(db, session.merchantId!, session.environment, id),
    ]);
    if (!link || !summary) throw errors.notFound('Payment link');
    // The QR code and the downloads are read from this host: the page's own images only (its CSP), and a
    // browser keeps a download's file name only for a file of the same origin. The app serves /l/ on every host.
    const slugPath = new URL(link.url).pathname;
    const body = linkView(session, link, slugPath, summary, new Date(), outcome.errors ?? []);
    return show(reply, session, link.name, body, outcome.flash, outcome.status);
  }

  app.get<{ Querystring: LinksPageQuery }>(
    '/dashboard/links',
    { schema: { hide: true, ...dashboardSchemas.links } },
    async (request, reply) => listPage(reply, sessionOf(request), {}, request.query),
  );

  postForm(app, '/dashboard/links', dashboardSchemas.createLink, async (request, reply, session) => {
    const values = Object.fromEntries(FORM_FIELDS.map((name) => [name, formValue(request, name)]));
    if (!canEditLinks(session)) return listPage(reply, session, { ...refusedForm(LINK_EDITOR_REFUSAL, 403), values });
    const parsed = linkInput(request);
    if ('refusal' in parsed)
      return listPage(reply, session, {
        ...refusedForm('The link was not created: correct the fields below.', 400),
        values,
        errors: parsed.refusal,
      });
    try {
      // The form's one-time key: a second press makes nothing and leads to the link the first one made.
      const formKey = formValue(request, 'form_key') || undefined;
      const link = await createPaymentLink(db, ownerOf(session), parsed.input, checkoutUrlHost, formKey);
      // To the new link's page: a reload there does not create it again.
      return reply.redirect(`/dashboard/links/${link.id}?created=1`, 303);
    } catch (error) {
      return listPage(reply, session, { ...formRefusal(error), values, errors: formErrors(error, parsed.rows) });
    }
  });

  app.get<{ Params: { id: string }; Querystring: { created?: string } }>(
    '/dashboard/links/:id',
    { schema: { hide: true, ...dashboardSchemas.link } },
    async (request, reply) =>
      linkPage(
        reply,
        sessionOf(request),
        request.params.id,
        request.query.created ? { flash: { message: 'Payment link created: share it or print its QR code.' } } : {},
      ),
  );

  postOnObject(app, '/dashboard/links/:id', dashboardSchemas.editLink, async (request, reply, session) => {
    const { id } = request.params;
    // Not found before refused: another merchant's id answers as an unknown one, whoever asks.
    if (!(await getPaymentLink(db, session.merchantId!, session.environment, id, checkoutUrlHost)))
      throw errors.notFound('Payment link');
    if (!canEditLinks(session)) return linkPage(reply, session, id, refusedForm(LINK_EDITOR_REFUSAL, 403));
    const expires = formValue(request, 'expires');
    try {
      await updatePaymentLink(
        db,
        ownerOf(session),
        id,
        {
          name: formValue(request, 'name').trim(),
          description: formValue(request, 'description').trim() || null,
          expires_at: expires ? endOfDay(expires) : null,
        },
        checkoutUrlHost,
      );
      return linkPage(reply, session, id, { flash: { message: 'Payment link saved.' } });
    } catch (error) {
      return linkPage(reply, session, id, { ...formRefusal(error), errors: formErrors(error) });
    }
  });

  postOnObject(app, '/dashboard/links/:id/active', dashboardSchemas.linkActive, async (request, reply, session) => {
    const { id } = request.params;
    if (!(await getPaymentLink(db, session.merchantId!, session.environment, id, checkoutUrlHost)))
      throw errors.notFound('Payment link');
    if (!canEditLinks(session)) return linkPage(reply, session, id, refusedForm(LINK_EDITOR_REFUSAL, 403));
    const active = formValue(request, 'active') === 'on';
    try {
      await updatePaymentLink(db, ownerOf(session), id, { active }, checkoutUrlHost);
      const message = active
        ? 'Payment link activated: payers can pay it again.'
        : 'Payment link deactivated: payers see that it no longer takes payments.';
      return linkPage(reply, session, id, { flash: { message } });
    } catch (error) {
      return linkPage(reply, session, id, formRefusal(error));
    }
  });
}
