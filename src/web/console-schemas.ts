// Input schemas of the console routes (merchant dashboard and operator console): every query parameter,
// path parameter and form field a handler reads. A repeated parameter arrives as an array and fails
// `type: 'string'` (the query validator only unwraps one-element arrays), so it is a 400 page instead of a
// crash in the handler. Closed sets are enums read from their source (environments, bearers, roles,
// networks, statuses, decisions), amounts have a pattern and bounds, and the fields a form always sends are
// required: a value outside them is a 400 page naming the field and what it accepts (consoleInputError),
// never a "saved" that ignored it. Unknown fields are kept and ignored: handlers read only what they name.
// Handlers still judge what a schema cannot (an id of this merchant, a balance, a state).
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { INVITABLE_ROLES } from '../accounts/service.ts';
import { CODE_FIELD_LENGTH_MAX, ON_OFF } from './account-schemas.ts';
import { INVOICE_REF_LENGTH_MAX, SESSION_STATUSES } from '../checkout/model.ts';
import { ENVIRONMENTS } from '../lib/environment.ts';
import { errors, type SikaError } from '../lib/errors.ts';
import { MOMO_NETWORKS } from '../lib/ghana.ts';
import { ACCOUNT_NAME_LENGTH_MAX, ACCOUNT_TYPES, NOTES_LENGTH_MAX, RECONCILIATION_RESULTS } from '../payouts/model.ts';
import { OPERATOR_FAIL_REASON_LENGTH_MAX, PAYER_ACCOUNT_LENGTH_MAX, TRANSFER_REFERENCE_LENGTH_MAX } from '../ops/refunds.ts';
import { BEARERS, railIds } from '../rails/registry.ts';
import { REFUND_REASON_LENGTH_MAX, REFUND_REQUEST_KEY_LENGTH_MAX, REFUND_STATUSES } from '../refunds/model.ts';
import { COLUMN_MAPPING_LENGTH_MAX, RESOLUTION_NOTE_LENGTH_MAX } from '../statements/model.ts';
import { MERCHANT_NAV } from './layout.ts';

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

/** Longest amount a person types: 999,999,999.99 with its commas, and a little room for spaces. */
export const CEDIS_FIELD_LENGTH_MAX = 20;
/**
 * An amount in GHS as parseCedis (src/lib/ghana.ts) reads it, above zero: at most 9 whole digits (plain or in
 * thousands groups) and 2 decimals.
 */
export const CEDIS_PATTERN = String.raw`^(?!\s*[0,]*(?:\.0{0,2})?\s*$)\s*(?:\d{1,9}|\d{1,3}(?:,\d{3}){1,2})(?:\.\d{1,2})?\s*$`;
/** A calendar day, YYYY-MM-DD (the filters' date inputs send this, or nothing). */
const DAY_PATTERN = String.raw`^(?:\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]))?$`;

const text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
/** Text the form always sends and the handler needs: present and not empty. */
const needed = (maxLength: number) => Type.String({ minLength: 1, maxLength });
/** One of a closed set; `examples` gives the tests a valid value. */
const oneOf = (values: readonly string[]) => Type.Unsafe<string>({ type: 'string', enum: [...values], examples: [values[0]] });
/** A filter's choice: one of the set, or empty ("any"). */
const anyOrOneOf = (values: readonly string[]) => oneOf(['', ...values]);
const cedis = () =>
  Type.String({ maxLength: CEDIS_FIELD_LENGTH_MAX, pattern: CEDIS_PATTERN, description: 'an amount in GHS above zero with at most 2 decimals, e.g. 502.00', examples: ['502.00'] });
const Id = Type.String({ minLength: 1, maxLength: CONSOLE_ID_LENGTH_MAX });
/** Ids stored as uuid columns (API keys, webhook endpoints, integrations, banks, branches, merchants). */
const Uuid = Type.String({ format: 'uuid', maxLength: 36, description: 'an id like 123e4567-e89b-12d3-a456-426614174000' });

/** Query parameters of a page; others are ignored. */
const query = (properties: TProperties = {}) => Type.Object(properties, { additionalProperties: true });
/**
 * A form post: the CSRF token (checked by the console, so a missing one is a 403, not a 400) and the named
 * fields; `required` names those the form always sends (the others are optional whatever their schema).
 */
const form = (properties: TProperties = {}, required: string[] = []) => {
  const fields = Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, required.includes(name) ? schema : Type.Optional(schema)]));
  return Type.Object({ _csrf: text(CSRF_TOKEN_LENGTH_MAX), ...fields }, { additionalProperties: true });
};
const params = (properties: TProperties) => Type.Object(properties, { additionalProperties: false });

const IdParams = params({ id: Id });
/** A list's page number (the handlers clamp it to their last page). */
const PageNumber = Type.String({ maxLength: 6, pattern: '^[1-9][0-9]{0,5}$', description: 'a page number from 1', examples: ['1'] });
/** An approver's decision on a payout or refund (four eyes), and an operator's on a held attempt. */
const DECISIONS = ['approve', 'reject'] as const;

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
  environment: post(form({ environment: oneOf(ENVIRONMENTS), return_to: Type.Optional(oneOf([...new Set(['/dashboard', ...MERCHANT_NAV.map(([, href]) => href)])])) }, ['environment'])),
  // Checkout
  sessions: page(
    query({
      status: Type.Optional(anyOrOneOf(SESSION_STATUSES)),
      invoice_ref: text(INVOICE_REF_LENGTH_MAX),
      from: Type.Optional(Type.String({ maxLength: 10, pattern: DAY_PATTERN, description: 'a date written YYYY-MM-DD', examples: ['2026-03-02'] })),
      to: Type.Optional(Type.String({ maxLength: 10, pattern: DAY_PATTERN, description: 'a date written YYYY-MM-DD', examples: ['2026-03-02'] })),
      page: Type.Optional(PageNumber),
    }),
  ),
  // refund: a refund just asked for on this page (named in the flash).
  session: page(query({ refund: text(CONSOLE_ID_LENGTH_MAX) }), { params: IdParams }),
  revenueLines: page(),
  // Payouts
  payouts: page(query({ page: Type.Optional(PageNumber) })),
  payout: page(query(), { params: IdParams }),
  newPayout: page(),
  // code: the approver's TOTP code (account-schemas.ts bounds it the same way).
  payoutDecision: post(form({ decision: oneOf(DECISIONS), reason: text(NOTES_LENGTH_MAX), code: text(CODE_FIELD_LENGTH_MAX) }, ['decision']), { params: IdParams }),
  payoutCancel: post(form(), { params: IdParams }),
  payoutReceipt: page(query(), { params: IdParams }),
  payoutEvidence: post(form(), { params: IdParams }),
  payoutQuote: page(query({ recipient_id: text(CONSOLE_ID_LENGTH_MAX), amount: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  createPayout: post(
    form({
      recipient_id: Id,
      amount: cedis(),
      api_key_id: Uuid,
      notes: text(NOTES_LENGTH_MAX),
      client_reference: text(CONSOLE_ID_LENGTH_MAX),
    }, ['recipient_id', 'amount', 'api_key_id']),
  ),
  recipients: page(query({ replace: text(CONSOLE_ID_LENGTH_MAX) })),
  createRecipient: post(
    form({
      account_type: oneOf(ACCOUNT_TYPES),
      account_name: text(ACCOUNT_NAME_LENGTH_MAX),
      bank_id: text(CONSOLE_ID_LENGTH_MAX),
      account_number: text(CONSOLE_CHOICE_LENGTH_MAX * 2),
      network: Type.Optional(oneOf(MOMO_NETWORKS)),
      phone: text(CONSOLE_CHOICE_LENGTH_MAX),
      previous_version_id: text(CONSOLE_ID_LENGTH_MAX),
    }, ['account_type']),
  ),
  deactivateRecipient: post(form(), { params: IdParams }),
  // Exports (issue 17): a range of Accra days (judged by the books), and a file of it.
  exports: page(query({ from: text(CONSOLE_CHOICE_LENGTH_MAX), to: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  exportFile: page(query({ from: text(CONSOLE_CHOICE_LENGTH_MAX), to: text(CONSOLE_CHOICE_LENGTH_MAX) })),
  // Developers
  developers: page(),
  createKey: post(form({ integration_id: Uuid }, ['integration_id'])),
  revokeKey: post(form(), { params: UuidParams }),
  createWebhook: post(form({ url: needed(URL_FIELD_LENGTH_MAX), api_key_id: Uuid }, ['url', 'api_key_id'])),
  webhookAction: post(form(), { params: params({ id: Uuid, action: Type.String({ maxLength: CONSOLE_CHOICE_LENGTH_MAX }) }) }),
  webhook: page(query({ replayed: text(CONSOLE_CHOICE_LENGTH_MAX) }), { params: UuidParams }),
  replayEvent: post(form({ endpoint_id: Type.Optional(Uuid) }), { params: IdParams }),
  // Settings
  settings: page(),
  // A bearer per rail; a rail left out keeps its bearer, and the handler refuses a form that names none.
  feeSettings: post(form(Object.fromEntries(railIds().map((rail) => [`bearer_${rail}`, Type.Optional(oneOf(BEARERS))])))),
  approvalSetting: post(form({ required: oneOf(ON_OFF) }, ['required'])),
  inviteUser: post(form({ email: needed(EMAIL_LENGTH_MAX), role: oneOf(INVITABLE_ROLES) }, ['email', 'role'])),
  // Refunds: one of a session's payment (amount in GHS as typed), the list, and the approver's decision.
  refundSession: post(form({ amount: cedis(), reason: text(REFUND_REASON_LENGTH_MAX), request_key: text(REFUND_REQUEST_KEY_LENGTH_MAX) }, ['amount']), { params: IdParams }),
  refunds: page(query({ status: Type.Optional(anyOrOneOf(REFUND_STATUSES)) })),
  refundDecision: post(form({ decision: oneOf(DECISIONS), reason: text(REFUND_REASON_LENGTH_MAX), code: text(CODE_FIELD_LENGTH_MAX) }, ['decision']), { params: IdParams }),
};

export const opsSchemas = {
  merchants: page(),
  merchant: page(query(), { params: UuidParams }),
  payoutSettings: post(
    form({
      environment: oneOf(ENVIRONMENTS),
      access: oneOf(ON_OFF),
      paused: oneOf(ON_OFF),
      limit: cedis(),
      daily_limit: cedis(),
    }, ['environment', 'access', 'paused', 'limit', 'daily_limit']),
    { params: UuidParams },
  ),
  teller: page(query({ reference: text(CONSOLE_TEXT_LENGTH_MAX) })),
  tellerRecord: post(form({ reference: needed(CONSOLE_TEXT_LENGTH_MAX), amount: cedis(), branch_id: Uuid }, ['reference', 'amount', 'branch_id'])),
  review: page(),
  reviewDecision: post(form({ decision: oneOf(DECISIONS) }, ['decision']), { params: IdParams }),
  payouts: page(),
  reconcile: post(form({ result: oneOf(RECONCILIATION_RESULTS) }, ['result']), { params: IdParams }),
  payoutReturn: post(form({ return_reference: needed(CONSOLE_TEXT_LENGTH_MAX) }, ['return_reference']), { params: IdParams }),
  banks: page(),
  addBank: post(form({ name: needed(CONSOLE_TEXT_LENGTH_MAX), code: needed(CONSOLE_CHOICE_LENGTH_MAX) }, ['name', 'code'])),
  addBranch: post(form({ name: needed(CONSOLE_TEXT_LENGTH_MAX), code: needed(CONSOLE_CHOICE_LENGTH_MAX) }, ['name', 'code']), { params: UuidParams }),
  setActive: post(form(), { params: params({ table: Type.String({ maxLength: CONSOLE_CHOICE_LENGTH_MAX }), id: Uuid, action: Type.String({ maxLength: CONSOLE_CHOICE_LENGTH_MAX }) }) }),
  audit: page(),
  // Bank statements: the page, one import, the upload (its file is read apart from the fields) and the queue's two actions.
  statements: page(query({ q: text(CONSOLE_TEXT_LENGTH_MAX) })),
  statementImport: page(query(), { params: UuidParams }),
  statementUpload: post(form({ bank_code: text(CONSOLE_CHOICE_LENGTH_MAX), columns: text(COLUMN_MAPPING_LENGTH_MAX) })),
  statementAssign: post(form({ reference: needed(CONSOLE_TEXT_LENGTH_MAX) }, ['reference']), { params: UuidParams }),
  statementResolve: post(form({ note: needed(RESOLUTION_NOTE_LENGTH_MAX) }, ['note']), { params: UuidParams }),
  // The refunds queue: record an operator's transfer to the payer, or fail the refund with a reason.
  refunds: page(),
  refundComplete: post(form({ payer_account: needed(PAYER_ACCOUNT_LENGTH_MAX), transfer_reference: needed(TRANSFER_REFERENCE_LENGTH_MAX) }, ['payer_account', 'transfer_reference']), { params: IdParams }),
  refundFail: post(form({ reason: needed(OPERATOR_FAIL_REASON_LENGTH_MAX) }, ['reason']), { params: IdParams }),
  // The daily reconciliation: a provider and a YYYY-MM-DD day (judged by the page).
  reconciliation: page(query({ provider: text(CONSOLE_CHOICE_LENGTH_MAX), day: text(CONSOLE_CHOICE_LENGTH_MAX) })),
};

interface ValidationIssue {
  keyword?: string;
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}
interface FieldSchema {
  enum?: unknown[];
  description?: string;
}

/** What a field accepts, in words: its closed set, or its schema's description. */
function accepts(schema: FieldSchema | undefined): string | null {
  if (schema?.enum) {
    const values = schema.enum.filter((value) => value !== '').map(String);
    return `one of ${values.join(', ')}${schema.enum.includes('') ? ' (or empty for any)' : ''}`;
  }
  return schema?.description ?? null;
}

/**
 * A console request's validation error as the 400 its page shows: the field, and what it accepts (the
 * values of its set, or its description). The value sent is never repeated (the page escapes it anyway).
 */
export function consoleInputError(error: Error & { validation?: ValidationIssue[]; validationContext?: string }, routeSchema: FastifySchema | undefined): SikaError {
  const part = (routeSchema as Record<string, { properties?: Record<string, FieldSchema> }> | undefined)?.[error.validationContext ?? 'body'];
  const fields = (error.validation ?? []).slice(0, 20).map((issue) => {
    const missing = issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string' ? issue.params.missingProperty : null;
    const field = missing ?? ((issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.') || error.validationContext || 'body');
    const what = accepts(part?.properties?.[field]);
    const empty = issue.keyword === 'minLength' && issue.params?.limit === 1;
    let message: string;
    if (missing || empty) message = what ? `is required: ${what}` : 'is required';
    else if (what && ['enum', 'pattern', 'format', 'maxLength', 'minLength'].includes(issue.keyword ?? '')) message = `must be ${what}`;
    else message = issue.message ?? 'is invalid';
    return { field, message };
  });
  const first = fields[0];
  return errors.invalidArgument(first ? `${first.field} ${first.message}.` : 'The form is invalid.', fields);
}

/**
 * Bad input on a console route is refused only after the session check (registered before this), so an
 * anonymous request is sent to sign in (or refused as signed out) whatever it carries, and learns nothing
 * from a validation message. Routes registered after this call keep their validation error
 * (attachValidation) and it is thrown here, to the console's error handler: a 400 page naming the field.
 */
export function refuseBadInputAfterSessionCheck(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.attachValidation = true;
  });
  app.addHook('preHandler', async (request) => {
    if (request.validationError) throw consoleInputError(request.validationError, request.routeOptions.schema);
  });
}
