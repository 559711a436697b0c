// Input schemas of the console routes (merchant dashboard and operator console): every query parameter,
// path parameter and form field a handler reads, as a bounded string. A repeated parameter arrives as an
// array and fails `type: 'string'` (the query validator only unwraps one-element arrays), so it is a 400
// page instead of a crash in the handler. Unknown parameters and form fields are kept and ignored, never
// refused: handlers read only what they name. Handlers still judge the values (a wrong amount re-renders
// the form with a message); the schemas only keep the shape and the size in bounds.
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { INVITABLE_ROLES } from '../accounts/service.ts';
import { CODE_FIELD_LENGTH_MAX } from './account-schemas.ts';
import { INVOICE_REF_LENGTH_MAX } from '../checkout/model.ts';
import { ACCOUNT_NAME_LENGTH_MAX, NOTES_LENGTH_MAX } from '../payouts/model.ts';
import { OPERATOR_FAIL_REASON_LENGTH_MAX, PAYER_ACCOUNT_LENGTH_MAX, TRANSFER_REFERENCE_LENGTH_MAX } from '../ops/refunds.ts';
import { railIds } from '../rails/registry.ts';
import { REFUND_REASON_LENGTH_MAX, REFUND_REQUEST_KEY_LENGTH_MAX } from '../refunds/model.ts';
import { COLUMN_MAPPING_LENGTH_MAX, RESOLUTION_NOTE_LENGTH_MAX } from '../statements/model.ts';

/** Fastify's default maxParamLength: a longer path parameter is refused by the router (414) anyway. */
export const CONSOLE_ID_LENGTH_MAX = 100;
/** Short choice fields (environment, decision, role, account type, page number, ...). */
export const CONSOLE_CHOICE_LENGTH_MAX = 32;
/** Names, codes, references, amounts typed by a person. */
export const CONSOLE_TEXT_LENGTH_MAX = 200;
/** The CSRF tokens are 24-32 characters; anything far longer is not one. */
export const CSRF_TOKEN_LENGTH_MAX = 128;
export const EMAIL_LENGTH_MAX = 254;
/** Passwords longer than this are refused before argon2 spends time on them. */
export const PASSWORD_FIELD_LENGTH_MAX = 1_000;
/** Webhook URLs: the service checks the URL itself; this only bounds the field. */
export const URL_FIELD_LENGTH_MAX = 2_048;
/** A return_to path inside the console. */
export const PATH_FIELD_LENGTH_MAX = 200;

const text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
const Id = Type.String({ minLength: 1, maxLength: CONSOLE_ID_LENGTH_MAX });
/** Ids stored as uuid columns (API keys, webhook endpoints, banks, branches, merchants). */
const Uuid = Type.String({ format: 'uuid', maxLength: 36 });

/** Query parameters of a page; others are ignored. */
const query = (properties: TProperties = {}) => Type.Object(properties, { additionalProperties: true });
/** A form post: the CSRF token (checked by the console, so a missing one is a 403, not a 400) and the named fields. */
const form = (properties: TProperties = {}) =>
  Type.Object({ _csrf: text(CSRF_TOKEN_LENGTH_MAX), ...properties }, { additionalProperties: true });
const params = (properties: TProperties) => Type.Object(properties, { additionalProperties: false });

const IdParams = params({ id: Id });
const UuidParams = params({ id: Uuid });

type RouteSchema = { querystring?: TSchema; params?: TSchema; body?: TSchema };
const page = (querystring = query(), more: RouteSchema = {}): RouteSchema => ({ querystring, ...more });
const post = (body = form(), more: RouteSchema = {}): RouteSchema => ({ body, ...more });

/** Sign-in and sign-out, the same for both consoles. */
export const authSchemas = {
  loginPage: page(),
  login: post(form({ email: text(EMAIL_LENGTH_MAX), password: text(PASSWORD_FIELD_LENGTH_MAX) })),
  logout: post(),
};

export const dashboardSchemas = {
  home: page(),
  environment: post(form({ environment: text(CONSOLE_CHOICE_LENGTH_MAX), return_to: text(PATH_FIELD_LENGTH_MAX) })),
  // Checkout
  sessions: page(
    query({
      status: text(CONSOLE_CHOICE_LENGTH_MAX),
      invoice_ref: text(INVOICE_REF_LENGTH_MAX),
      from: text(CONSOLE_CHOICE_LENGTH_MAX),
      to: text(CONSOLE_CHOICE_LENGTH_MAX),
      page: text(CONSOLE_CHOICE_LENGTH_MAX),
    }),
  ),
  // refund: a refund just asked for on this page (named in the flash).
  session: page(query({ refund: text(CONSOLE_ID_LENGTH_MAX) }), { params: IdParams }),
  revenueLines: page(),
  // Payouts
  payouts: page(query({ page: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  payout: page(query(), { params: IdParams }),
  newPayout: page(),
  // code: the approver's TOTP code (account-schemas.ts bounds it the same way).
  payoutDecision: post(form({ decision: text(CONSOLE_CHOICE_LENGTH_MAX), reason: text(NOTES_LENGTH_MAX), code: text(CODE_FIELD_LENGTH_MAX) }), { params: IdParams }),
  payoutCancel: post(form(), { params: IdParams }),
  payoutReceipt: page(query(), { params: IdParams }),
  payoutEvidence: post(form(), { params: IdParams }),
  payoutQuote: page(query({ recipient_id: text(CONSOLE_ID_LENGTH_MAX), amount: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  createPayout: post(
    form({
      recipient_id: text(CONSOLE_ID_LENGTH_MAX),
      amount: text(CONSOLE_CHOICE_LENGTH_MAX),
      api_key_id: text(CONSOLE_ID_LENGTH_MAX),
      notes: text(NOTES_LENGTH_MAX),
      client_reference: text(CONSOLE_ID_LENGTH_MAX),
    }),
  ),
  recipients: page(query({ replace: text(CONSOLE_ID_LENGTH_MAX) })),
  createRecipient: post(
    form({
      account_type: text(CONSOLE_CHOICE_LENGTH_MAX),
      account_name: text(ACCOUNT_NAME_LENGTH_MAX),
      bank_id: text(CONSOLE_ID_LENGTH_MAX),
      account_number: text(CONSOLE_CHOICE_LENGTH_MAX * 2),
      network: text(CONSOLE_CHOICE_LENGTH_MAX),
      phone: text(CONSOLE_CHOICE_LENGTH_MAX),
      previous_version_id: text(CONSOLE_ID_LENGTH_MAX),
    }),
  ),
  deactivateRecipient: post(form(), { params: IdParams }),
  // Exports (issue 17): a range of Accra days (judged by the books), and a file of it.
  exports: page(query({ from: text(CONSOLE_CHOICE_LENGTH_MAX), to: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  exportFile: page(query({ from: text(CONSOLE_CHOICE_LENGTH_MAX), to: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  // Developers
  developers: page(),
  createKey: post(form({ integration_id: text(CONSOLE_ID_LENGTH_MAX) })),
  revokeKey: post(form(), { params: UuidParams }),
  createWebhook: post(form({ url: text(URL_FIELD_LENGTH_MAX), api_key_id: text(CONSOLE_ID_LENGTH_MAX) })),
  webhookAction: post(form(), { params: params({ id: Uuid, action: Type.String({ maxLength: CONSOLE_CHOICE_LENGTH_MAX }) }) }),
  webhook: page(query({ replayed: text(CONSOLE_CHOICE_LENGTH_MAX) }), { params: UuidParams }),
  replayEvent: post(form({ endpoint_id: text(CONSOLE_ID_LENGTH_MAX) }), { params: IdParams }),
  // Settings
  settings: page(),
  feeSettings: post(form(Object.fromEntries(railIds().map((rail) => [`bearer_${rail}`, text(CONSOLE_CHOICE_LENGTH_MAX)])))),
  approvalSetting: post(form({ required: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  inviteUser: post(form({ email: text(EMAIL_LENGTH_MAX), role: text(Math.max(...INVITABLE_ROLES.map((role) => role.length))) })),
  // Refunds: one of a session's payment (amount in GHS as typed), the list, and the approver's decision.
  refundSession: post(form({ amount: text(CONSOLE_CHOICE_LENGTH_MAX), reason: text(REFUND_REASON_LENGTH_MAX), request_key: text(REFUND_REQUEST_KEY_LENGTH_MAX) }), { params: IdParams }),
  refunds: page(query({ status: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  refundDecision: post(form({ decision: text(CONSOLE_CHOICE_LENGTH_MAX), reason: text(REFUND_REASON_LENGTH_MAX), code: text(CODE_FIELD_LENGTH_MAX) }), { params: IdParams }),
};

export const opsSchemas = {
  merchants: page(),
  merchant: page(query(), { params: UuidParams }),
  payoutSettings: post(
    form({
      environment: text(CONSOLE_CHOICE_LENGTH_MAX),
      access: text(CONSOLE_CHOICE_LENGTH_MAX),
      paused: text(CONSOLE_CHOICE_LENGTH_MAX),
      limit: text(CONSOLE_CHOICE_LENGTH_MAX),
      daily_limit: text(CONSOLE_CHOICE_LENGTH_MAX),
    }),
    { params: UuidParams },
  ),
  teller: page(query({ reference: text(CONSOLE_TEXT_LENGTH_MAX) })),
  tellerRecord: post(form({ reference: text(CONSOLE_TEXT_LENGTH_MAX), amount: text(CONSOLE_CHOICE_LENGTH_MAX), branch_id: text(CONSOLE_ID_LENGTH_MAX) })),
  review: page(),
  reviewDecision: post(form({ decision: text(CONSOLE_CHOICE_LENGTH_MAX) }), { params: IdParams }),
  payouts: page(),
  reconcile: post(form({ result: text(CONSOLE_CHOICE_LENGTH_MAX) }), { params: IdParams }),
  payoutReturn: post(form({ return_reference: text(CONSOLE_TEXT_LENGTH_MAX) }), { params: IdParams }),
  banks: page(),
  addBank: post(form({ name: text(CONSOLE_TEXT_LENGTH_MAX), code: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  addBranch: post(form({ name: text(CONSOLE_TEXT_LENGTH_MAX), code: text(CONSOLE_CHOICE_LENGTH_MAX) }), { params: UuidParams }),
  setActive: post(form(), { params: params({ table: Type.String({ maxLength: CONSOLE_CHOICE_LENGTH_MAX }), id: Uuid, action: Type.String({ maxLength: CONSOLE_CHOICE_LENGTH_MAX }) }) }),
  audit: page(),
  // Bank statements: the page, one import, the upload (its file is read apart from the fields) and the queue's two actions.
  statements: page(query({ q: text(CONSOLE_TEXT_LENGTH_MAX) })),
  statementImport: page(query(), { params: UuidParams }),
  statementUpload: post(form({ bank_code: text(CONSOLE_CHOICE_LENGTH_MAX), columns: text(COLUMN_MAPPING_LENGTH_MAX) })),
  statementAssign: post(form({ reference: text(CONSOLE_TEXT_LENGTH_MAX) }), { params: UuidParams }),
  statementResolve: post(form({ note: text(RESOLUTION_NOTE_LENGTH_MAX) }), { params: UuidParams }),
  // The refunds queue: record an operator's transfer to the payer, or fail the refund with a reason.
  refunds: page(),
  refundComplete: post(form({ payer_account: text(PAYER_ACCOUNT_LENGTH_MAX), transfer_reference: text(TRANSFER_REFERENCE_LENGTH_MAX) }), { params: IdParams }),
  refundFail: post(form({ reason: text(OPERATOR_FAIL_REASON_LENGTH_MAX) }), { params: IdParams }),
  // The daily reconciliation: a provider and a YYYY-MM-DD day (judged by the page).
  reconciliation: page(query({ provider: text(CONSOLE_CHOICE_LENGTH_MAX), day: text(CONSOLE_CHOICE_LENGTH_MAX) })),
};

/**
 * Bad input on a console route is refused only after the session check (registered before this), so an
 * anonymous request is sent to sign in (or refused as signed out) whatever it carries, and learns nothing
 * from a validation message. Routes registered after this call keep their validation error
 * (attachValidation) and it is thrown here, to the console's error handler: a 400 page.
 */
export function refuseBadInputAfterSessionCheck(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.attachValidation = true;
  });
  app.addHook('preHandler', async (request) => {
    if (request.validationError) throw request.validationError;
  });
}
